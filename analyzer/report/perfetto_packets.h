// SPDX-License-Identifier: Apache-2.0
// Perfetto's native trace format, one packet at a time: a `Trace` is a stream of `TracePacket`s
// (field 1), each written here as it is made and handed to a byte sink in pieces of about 1 MiB.
// Field numbers and types follow the public schema in google/perfetto `protos/perfetto/trace/`
// (trace_packet.proto, track_event/*.proto, interned_data/interned_data.proto); the decode test
// (tests/report/perfetto_proto_test.py) checks what we write against a subset of it.
//
// All packets share one sequence (trusted_packet_sequence_id 1). The first packet clears the
// sequence's incremental state; every event packet needs it, for two reasons:
//  - names are interned: a name is written once, in the interned_data of the first packet that
//    uses it, and referred to by its iid afterwards (EventName, DebugAnnotationName, and interned
//    debug-annotation string values);
//  - timestamps are deltas: the first packet defines a sequence-scoped incremental clock (id 64,
//    a ClockSnapshot tying it to BOOTTIME, the trace clock) and makes it the sequence's default
//    (TracePacketDefaults), so a packet's timestamp is the time since the previous such packet,
//    1-3 bytes instead of 5-8. A packet earlier than that (records arrive roughly, not exactly,
//    in time order) carries its absolute time on the BOOTTIME clock instead.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "report/proto_writer.h"

namespace cuclimb::analysis {

// TrackEvent.Type.
enum class SliceType : uint32_t { kBegin = 1, kEnd = 2, kInstant = 3, kCounter = 4 };

// CounterDescriptor.Unit.
enum class CounterUnit : uint32_t { kUnspecified = 0, kTimeNs = 1, kCount = 2, kBytes = 3 };

// What a TrackDescriptor says about its track; uuid 0 is Perfetto's implicit global track.
struct TrackSpec {
  uint64_t uuid = 0;
  uint64_t parent_uuid = 0;  // 0: none
  std::string name;
  // A process track (pid set, tid 0) or a thread track (pid and tid set); neither: a plain track.
  bool is_process = false, is_thread = false;
  int64_t pid = 0, tid = 0;
  bool is_counter = false;
  CounterUnit unit = CounterUnit::kUnspecified;
  int32_t sibling_order_rank = 0;  // written when not 0
  std::string description;
};

class PerfettoPacketWriter {
 public:
  using Sink = std::function<absl::Status(std::string_view)>;
  // `compress`: packets go out in deflate-compressed bundles (TracePacket.compressed_packets, each
  // bundle about 256 KiB of packets before compression), which Perfetto's trace processor
  // inflates on load; about 5x smaller. Off when the caller compresses the whole stream itself.
  PerfettoPacketWriter(const Sink& sink, bool compress) : sink_(sink), compress_(compress) {}

  // One TrackDescriptor packet.
  void Track(const TrackSpec& track);

  // A TrackEvent is built in three steps: BeginEvent, any of the field writers below, EndEvent
  // (which writes the packet). `ts_ns` ≥ 0 on the trace clock; name_iid 0 = no name.
  void BeginEvent(uint64_t ts_ns, uint64_t track_uuid, SliceType type, uint64_t name_iid);
  // This event's timestamp is written absolute and leaves the delta clock where it is: for
  // events written far ahead of the stream's time (the iterations, written first).
  void AbsoluteTime() { event_absolute_ = true; }
  void Name(std::string_view name);  // a name that is not interned (unique per event)
  void CounterValue(int64_t v);
  void ExtraCounter(uint64_t track_uuid, int64_t v);  // call once per counter, in pairs
  void FlowOut(uint64_t flow_id);                     // a flow starts (or passes) here
  void FlowEnd(uint64_t flow_id);                     // a flow ends here
  // Debug annotations ("args" in the UI); `name` is interned.
  void ArgUInt(std::string_view name, uint64_t v);
  void ArgInt(std::string_view name, int64_t v);
  void ArgPointer(std::string_view name, uint64_t v);
  void ArgBool(std::string_view name, bool v);
  // An interned string value: for the few values that repeat (kinds, dims). StringIid interns a
  // value for ArgStringIid, for callers that cache the iid under a key of their own.
  void ArgString(std::string_view name, std::string_view v);
  uint64_t StringIid(std::string_view v);
  void ArgStringIid(std::string_view name, uint64_t iid);
  void EndEvent();

  // Interned event names. The cached variant skips building the name when the caller has a key
  // for it (a string id of the trace with a tag): NameIid(key, [&] { return ...; }).
  uint64_t NameIid(std::string_view name);
  template <typename MakeName>
  uint64_t NameIid(uint64_t key, const MakeName& make_name) {
    auto it = name_by_key_.find(key);
    if (it != name_by_key_.end())
      return it->second;
    const uint64_t iid = NameIid(std::string_view(make_name()));
    name_by_key_.emplace(key, iid);
    return iid;
  }

  // The first error of the sink; after one, nothing more is handed to it. Writers check it after
  // each event they turn into packets.
  const absl::Status& status() const { return status_; }
  // Writes what is buffered and returns status(); call once at the end.
  absl::Status Flush();
  uint64_t packets() const { return packets_; }
  uint64_t bytes_written() const { return bytes_written_; }

 private:
  uint64_t Intern(absl::flat_hash_map<std::string, uint64_t>* table, uint32_t interned_field,
                  std::string_view text);
  void ArgName(std::string_view name);
  void EndPacket(uint64_t sequence_flags);
  void StartSequence();
  void CompressBundle();

  const Sink& sink_;
  const bool compress_;
  ProtoWriter out_;         // packets not yet handed to the sink (not yet compressed)
  std::string compressed_;  // compressed bundles not yet handed to the sink
  ProtoWriter event_;       // the TrackEvent being built
  ProtoWriter interned_;    // InternedData entries new in the packet being built
  size_t packet_mark_ = 0, annotation_mark_ = 0;
  uint64_t event_ts_ = 0;
  bool event_absolute_ = false;
  uint64_t clock_ns_ = 0;  // the delta clock's time: the last delta-encoded packet's
  bool first_packet_ = true;
  absl::Status status_;
  uint64_t packets_ = 0, bytes_written_ = 0;
  absl::flat_hash_map<std::string, uint64_t> event_names_, annotation_names_, string_values_;
  absl::flat_hash_map<uint64_t, uint64_t> name_by_key_;
};

}  // namespace cuclimb::analysis
