// SPDX-License-Identifier: Apache-2.0
// The tracks of the protobuf Perfetto export (perfetto_proto_export.h): each gets a uuid and its
// TrackDescriptor packet the first time it is asked for, so descriptors precede their events.
//
// Records with a start and a duration (CUDA calls, kernels, NVTX start/end ranges) are laid on
// lanes: the first lane of a track whose last slice ended by the record's start, else a new lane
// (a child track of the same name, which Perfetto UI draws merged with its siblings). Nothing on
// a lane overlaps, so Perfetto, which keeps only slices that nest, keeps them all.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "report/perfetto_packets.h"

namespace cuclimb::analysis {

class PerfettoTracks {
 public:
  static constexpr int64_t kGpuPidBase = 1 << 30;  // device N's process id: kGpuPidBase + N
  static constexpr size_t kMaxLanes = 64;          // per track; a record beyond them is dropped

  // The program's process track; threads are named from `thread_names` (else "thread TID").
  PerfettoTracks(PerfettoPacketWriter* out, int64_t pid, const std::string& process_name,
                 absl::flat_hash_map<uint32_t, std::string> thread_names);

  uint64_t process() const { return process_uuid_; }
  // A plain child track; `rank` orders it among its siblings (written when not 0).
  uint64_t Child(uint64_t parent, const std::string& name, int32_t rank = 0);
  uint64_t Counter(uint64_t parent, const std::string& name, CounterUnit unit, int32_t rank = 0,
                   const std::string& description = "");
  uint64_t Thread(uint32_t tid);
  // The GPU's process track, named "GPU N" or "GPU N: NAME".
  uint64_t Gpu(int64_t device, const std::string& device_name);

  // Lanes for a record [start_ns, end_ns]; 0 when all kMaxLanes lanes are busy (counted).
  uint64_t CallLane(uint32_t tid, int64_t start_ns, int64_t end_ns);  // lane 0: the thread
  uint64_t StreamLane(int64_t device, uint64_t stream, int64_t start_ns, int64_t end_ns,
                      const std::string& device_name);
  uint64_t AsyncRangeLane(int64_t start_ns, int64_t end_ns);  // NVTX start/end ranges

  uint64_t dropped() const { return dropped_; }

 private:
  struct Lanes {
    struct Lane {
      uint64_t uuid;
      int64_t last_end;
    };
    std::vector<Lane> lanes;
  };
  uint64_t PickLane(Lanes* lanes, int64_t start, int64_t end, uint64_t parent,
                    const std::string& name);

  PerfettoPacketWriter* out_;
  int64_t pid_;
  uint64_t last_uuid_ = 0, process_uuid_ = 0;
  uint64_t dropped_ = 0;
  absl::flat_hash_map<uint32_t, std::string> thread_names_;
  absl::flat_hash_map<uint32_t, Lanes> threads_;  // lane 0: the thread track
  absl::flat_hash_map<int64_t, uint64_t> gpus_;
  absl::flat_hash_map<std::pair<int64_t, uint64_t>, Lanes> streams_;
  Lanes async_ranges_;
};

}  // namespace cuclimb::analysis
