// SPDX-License-Identifier: Apache-2.0
// CUPTI for libcuclimb.so: the version gate, the subscription, and which callbacks are enabled.
//
// Every CUPTI result is checked (CUCLIMB_CUPTI_TRY): a refusal is logged once and switches off
// only what depends on it. An unsupported major or another subscriber leaves NVTX only; a refused
// driver id leaves that call unrecorded (named in the trailer); a refused capture-tracking or
// teardown id stops the writer's CUDA queries and sampling windows, since it could no longer
// know they are safe. Cold paths, under the session's control lock.
#pragma once

#include <cstdint>

#include "interposer/session.h"

namespace cuclimb::interposer {

// Version gate and subscription. kActive when subscribed (the resource, synchronize and state
// callbacks are then on, paused or not, and the capture core's hooks set); kPassive otherwise,
// with the reason given to session.SetStatus. count_all_callbacks (CUCLIMB_DEBUG_CBIDS) enables
// the whole driver and runtime domains to count them.
CuptiState SubscribeCupti(Session& session, bool count_all_callbacks) noexcept;

// The driver ids of cbid_table.h in the configured groups (CUCLIMB_API): all of them (`full`,
// recording), or only those with a keeper (paused). Refusals go to session.SetStatus.
void EnableDriverCallbacks(Session& session, bool full) noexcept;

// cuptiGetVersion's answer (0 before SubscribeCupti), and whether this CUPTI's activity record
// layouts are validated (13.0, API >= 130001: the H200's); others get callbacks only.
uint32_t CuptiVersion() noexcept;
bool ActivityLayoutsValidated() noexcept;

// False when CUPTI refused an id that capture tracking or a teardown handshake needs.
bool CaptureTrackingComplete() noexcept;

// CUCLIMB_DEBUG_CBIDS: writes "domain cbid name count" lines to path (exit path).
void DumpDebugCounts(const char* path) noexcept;

}  // namespace cuclimb::interposer
