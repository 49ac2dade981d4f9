// SPDX-License-Identifier: Apache-2.0
// Tracks and lanes of the protobuf Perfetto export (perfetto_tracks.h).
#include "report/perfetto_tracks.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cuclimb::analysis {

PerfettoTracks::PerfettoTracks(PerfettoPacketWriter* out, int64_t pid,
                               const std::string& process_name,
                               absl::flat_hash_map<uint32_t, std::string> thread_names)
    : out_(out), pid_(pid), thread_names_(std::move(thread_names)) {
  TrackSpec p;
  p.uuid = process_uuid_ = ++last_uuid_;
  p.name = process_name;
  p.is_process = true;
  p.pid = pid_;
  out_->Track(p);
}

uint64_t PerfettoTracks::Child(uint64_t parent, const std::string& name, int32_t rank) {
  TrackSpec t;
  t.uuid = ++last_uuid_;
  t.parent_uuid = parent;
  t.name = name;
  t.sibling_order_rank = rank;
  out_->Track(t);
  return t.uuid;
}

uint64_t PerfettoTracks::Counter(uint64_t parent, const std::string& name, CounterUnit unit,
                                 int32_t rank, const std::string& description) {
  TrackSpec t;
  t.uuid = ++last_uuid_;
  t.parent_uuid = parent;
  t.name = name;
  t.is_counter = true;
  t.unit = unit;
  t.sibling_order_rank = rank;
  t.description = description;
  out_->Track(t);
  return t.uuid;
}

uint64_t PerfettoTracks::Thread(uint32_t tid) {
  auto [it, fresh] = threads_.try_emplace(tid);
  if (fresh) {
    TrackSpec t;
    t.uuid = ++last_uuid_;
    t.is_thread = true;
    t.pid = pid_;
    t.tid = tid;
    auto name = thread_names_.find(tid);
    t.name = name != thread_names_.end() && !name->second.empty() ? name->second
                                                                  : absl::StrCat("thread ", tid);
    out_->Track(t);
    it->second.lanes.push_back({t.uuid, std::numeric_limits<int64_t>::min()});
  }
  return it->second.lanes[0].uuid;
}

uint64_t PerfettoTracks::Gpu(int64_t device, const std::string& device_name) {
  auto [it, fresh] = gpus_.try_emplace(device, 0);
  if (fresh) {
    TrackSpec p;
    p.uuid = it->second = ++last_uuid_;
    p.name = device_name.empty() ? absl::StrCat("GPU ", device)
                                 : absl::StrCat("GPU ", device, ": ", device_name);
    p.is_process = true;
    p.pid = kGpuPidBase + device;
    out_->Track(p);
  }
  return it->second;
}

uint64_t PerfettoTracks::CallLane(uint32_t tid, int64_t start_ns, int64_t end_ns) {
  const uint64_t thread = Thread(tid);
  return PickLane(&threads_[tid], start_ns, end_ns, thread, "CUDA calls");
}

uint64_t PerfettoTracks::StreamLane(int64_t device, uint64_t stream, int64_t start_ns,
                                    int64_t end_ns, const std::string& device_name) {
  const uint64_t gpu = Gpu(device, device_name);
  return PickLane(&streams_[{device, stream}], start_ns, end_ns, gpu,
                  absl::StrFormat("stream 0x%x", stream));
}

uint64_t PerfettoTracks::AsyncRangeLane(int64_t start_ns, int64_t end_ns) {
  return PickLane(&async_ranges_, start_ns, end_ns, process_uuid_, "NVTX start/end ranges");
}

uint64_t PerfettoTracks::PickLane(Lanes* lanes, int64_t start, int64_t end, uint64_t parent,
                                  const std::string& name) {
  for (Lanes::Lane& l : lanes->lanes) {
    if (l.last_end <= start) {
      l.last_end = end;
      return l.uuid;
    }
  }
  if (lanes->lanes.size() >= kMaxLanes) {
    ++dropped_;
    return 0;
  }
  lanes->lanes.push_back({Child(parent, name), end});
  return lanes->lanes.back().uuid;
}

}  // namespace cuclimb::analysis
