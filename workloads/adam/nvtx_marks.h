// SPDX-License-Identifier: Apache-2.0
// NVTX ranges of cuclimb-adam (domain "cuclimb-adam"): `iter` per outer iteration with the
// iteration number as payload, and `<net>/step|fwd|bwd|opt` per training step.
#pragma once

#include <cstdint>
#include <string>

#include <nvtx3/nvToolsExt.h>

namespace cuclimb::workloads {

// Header-only NVTX3: a no-op unless a tool (cuclimb, Nsight) is injected, so the workload runs
// unchanged with or without cuclimb. Strings are registered once; pushes are allocation-free.
class NvtxDomain {
 public:
  NvtxDomain() : domain_(nvtxDomainCreateA("cuclimb-adam")) {}
  ~NvtxDomain() { nvtxDomainDestroy(domain_); }
  NvtxDomain(const NvtxDomain&) = delete;
  NvtxDomain& operator=(const NvtxDomain&) = delete;

  nvtxStringHandle_t Register(const std::string& text) const {
    return nvtxDomainRegisterStringA(domain_, text.c_str());
  }
  nvtxDomainHandle_t handle() const { return domain_; }

 private:
  nvtxDomainHandle_t domain_;
};

// Pushes a range on construction, pops it on destruction.
class ScopedRange {
 public:
  ScopedRange(const NvtxDomain& domain, nvtxStringHandle_t name) : domain_(domain.handle()) {
    nvtxEventAttributes_t attributes{};
    attributes.version = NVTX_VERSION;
    attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attributes.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    attributes.message.registered = name;
    nvtxDomainRangePushEx(domain_, &attributes);
  }
  ScopedRange(const NvtxDomain& domain, nvtxStringHandle_t name, uint64_t payload)
      : domain_(domain.handle()) {
    nvtxEventAttributes_t attributes{};
    attributes.version = NVTX_VERSION;
    attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attributes.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    attributes.message.registered = name;
    attributes.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    attributes.payload.ullValue = payload;
    nvtxDomainRangePushEx(domain_, &attributes);
  }
  ~ScopedRange() { nvtxDomainRangePop(domain_); }
  ScopedRange(const ScopedRange&) = delete;
  ScopedRange& operator=(const ScopedRange&) = delete;

 private:
  nvtxDomainHandle_t domain_;
};

}  // namespace cuclimb::workloads
