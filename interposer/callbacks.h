// SPDX-License-Identifier: Apache-2.0
// The CUPTI callback switchboard: turns driver-API, resource, synchronize and state callbacks
// into trace events (cbid_table.h says which ids and how).
//
// Runs on the application thread that made the CUDA call, inside CUPTI. Hot path: no lock, no
// allocation, no system call, no CUDA call, never throws. The callback data is only valid during
// the call. CUDA-free (CUPTI headers for the structures only), so unit tests drive it with
// synthesized callback data.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cupti.h>

namespace cuclimb::interposer {

// The CUPTI subscriber callback (pass to cuptiSubscribe_v2).
void CUPTIAPI OnCuptiCallback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                              const void* data) noexcept;

// Interns the API names of every table entry (cold; after the recorder started).
void InternApiNames() noexcept;

enum class CbidGroup : uint8_t { kAlways, kApi };

struct CbidEntry {
  CUpti_CallbackId cbid;
  CbidGroup group;
  bool kept_while_paused;  // has a keeper (cbid_table.h): stays enabled while paused
  const char* name;
};

// The driver ids of cbid_table.h, in table order.
const CbidEntry* DriverCbids(size_t* count) noexcept;
// The resource ids of cbid_table.h.
const CUpti_CallbackId* ResourceCbids(size_t* count) noexcept;

// Optional per-callback counting for diagnostics (CUCLIMB_DEBUG_CBIDS): counts[domain][cbid].
inline constexpr size_t kDebugDomains = 7;
inline constexpr size_t kDebugCbids = 1024;
void EnableCallbackCounting() noexcept;
uint64_t CallbackCount(size_t domain, size_t cbid) noexcept;

}  // namespace cuclimb::interposer
