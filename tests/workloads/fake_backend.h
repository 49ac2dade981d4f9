// SPDX-License-Identifier: Apache-2.0
// A fake MemoryBackend for CPU tests: device addresses from a bump allocator, real host memory
// for staging, and a log of every call so tests can count driver traffic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <vector>

#include "workloads/allocators/memory_backend.h"

namespace cuclimb::workloads::testing {

class FakeBackend final : public MemoryBackend {
 public:
  // The H200 of the lent machine: 143771 MiB.
  static constexpr std::size_t kH200Bytes = std::size_t{143771} << 20;

  explicit FakeBackend(std::size_t total_bytes = kH200Bytes) : total_bytes_(total_bytes) {}
  ~FakeBackend() override {
    for (void* pointer : host_live_) std::free(pointer);
  }

  uint64_t DeviceAlloc(std::size_t size_bytes, StreamHandle /*stream*/) override {
    const uint64_t address = next_address_;
    // Keep fake buffers 512-aligned and apart, like real ones.
    next_address_ += (size_bytes + 4095) / 4096 * 4096 + 4096;
    device_alloc_sizes.push_back(size_bytes);
    device_live[address] = size_bytes;
    return address;
  }
  void DeviceFree(uint64_t address, StreamHandle /*stream*/) override {
    ++device_frees;
    if (device_live.erase(address) == 0)
      ++bad_frees;
  }
  void* HostAlloc(std::size_t size_bytes) override {
    void* pointer = std::calloc(1, size_bytes);
    host_alloc_sizes.push_back(size_bytes);
    host_live_.insert(pointer);
    return pointer;
  }
  void HostFree(void* pointer) override {
    ++host_frees;
    if (host_live_.erase(pointer) == 0)
      ++bad_frees;
    std::free(pointer);
  }
  void CopyHostToDeviceAsync(uint64_t dst, const void* /*src*/, std::size_t size_bytes,
                             StreamHandle /*stream*/) override {
    copies.push_back({dst, size_bytes});
  }
  EventHandle EventCreate() override {
    ++events_created;
    return reinterpret_cast<EventHandle>(++next_event_);
  }
  void EventRecord(EventHandle /*event*/, StreamHandle /*stream*/) override { ++events_recorded; }
  void EventSynchronize(EventHandle /*event*/) override { ++events_synchronized; }
  void EventDestroy(EventHandle /*event*/) override { ++events_destroyed; }
  std::size_t TotalDeviceMemory() override { return total_bytes_; }

  struct Copy {
    uint64_t dst;
    std::size_t size_bytes;
  };
  std::vector<std::size_t> device_alloc_sizes;
  std::map<uint64_t, std::size_t> device_live;
  std::size_t device_frees = 0;
  std::vector<std::size_t> host_alloc_sizes;
  std::size_t host_frees = 0;
  std::size_t bad_frees = 0;
  std::vector<Copy> copies;
  std::size_t events_created = 0;
  std::size_t events_recorded = 0;
  std::size_t events_synchronized = 0;
  std::size_t events_destroyed = 0;

 private:
  std::size_t total_bytes_;
  uint64_t next_address_ = 0x7f0000000000ull;
  uintptr_t next_event_ = 0;
  std::set<void*> host_live_;
};

}  // namespace cuclimb::workloads::testing
