// SPDX-License-Identifier: Apache-2.0
// TracePacket encoding for the Perfetto export (perfetto_packets.h). Field numbers are those of
// google/perfetto's protos/perfetto/trace schema, named here once.
#include "report/perfetto_packets.h"

#include <memory>

#include <zlib.h>

#include "report/perfetto_export.h"  // ValidUtf8

namespace cuclimb::analysis {
namespace {

constexpr size_t kFlushBytes = 1u << 20;
// Packets per compressed bundle, before compression. trace_processor wants a compressed_packets
// packet under 512 KiB; deflate's worst case adds 0.1 % to incompressible input.
constexpr size_t kBundleBytes = 256u << 10;
constexpr uint32_t kPacketCompressedPackets = 50;
constexpr uint32_t kSequenceId = 1;

// Trace
constexpr uint32_t kTracePacket = 1;
// TracePacket
constexpr uint32_t kPacketTimestamp = 8;
constexpr uint32_t kPacketTimestampClockId = 58;
constexpr uint32_t kPacketClockSnapshot = 6;
constexpr uint32_t kPacketDefaults = 59;  // TracePacketDefaults
constexpr uint32_t kDefaultsTimestampClockId = 58;
// ClockSnapshot, ClockSnapshot.Clock; the clocks
constexpr uint32_t kSnapshotClocks = 1;
constexpr uint32_t kSnapshotPrimaryClock = 2;
constexpr uint32_t kClockId = 1;
constexpr uint32_t kClockTimestamp = 2;
constexpr uint32_t kClockIsIncremental = 3;
constexpr uint64_t kBootTimeClock = 6;      // BuiltinClocks.BOOTTIME, the trace clock
constexpr uint64_t kIncrementalClock = 64;  // the first sequence-scoped clock id
constexpr uint32_t kPacketSequenceId = 10;  // trusted_packet_sequence_id
constexpr uint32_t kPacketTrackEvent = 11;
constexpr uint32_t kPacketInternedData = 12;
constexpr uint32_t kPacketSequenceFlags = 13;
constexpr uint32_t kPacketTrackDescriptor = 60;
constexpr uint64_t kSeqIncrementalStateCleared = 1;
constexpr uint64_t kSeqNeedsIncrementalState = 2;
// TrackDescriptor
constexpr uint32_t kTrackUuid = 1;
constexpr uint32_t kTrackName = 2;
constexpr uint32_t kTrackProcess = 3;
constexpr uint32_t kTrackThread = 4;
constexpr uint32_t kTrackParentUuid = 5;
constexpr uint32_t kTrackCounter = 8;
constexpr uint32_t kTrackSiblingOrderRank = 12;
constexpr uint32_t kTrackDescription = 14;
// ProcessDescriptor / ThreadDescriptor / CounterDescriptor
constexpr uint32_t kProcessPid = 1;
constexpr uint32_t kProcessName = 6;
constexpr uint32_t kThreadPid = 1;
constexpr uint32_t kThreadTid = 2;
constexpr uint32_t kThreadName = 5;
constexpr uint32_t kCounterUnit = 3;
// TrackEvent
constexpr uint32_t kEventDebugAnnotations = 4;
constexpr uint32_t kEventType = 9;
constexpr uint32_t kEventNameIid = 10;
constexpr uint32_t kEventTrackUuid = 11;
constexpr uint32_t kEventExtraCounterValues = 12;
constexpr uint32_t kEventName = 23;
constexpr uint32_t kEventCounterValue = 30;
constexpr uint32_t kEventExtraCounterTrackUuids = 31;
constexpr uint32_t kEventFlowIds = 47;
constexpr uint32_t kEventTerminatingFlowIds = 48;
// DebugAnnotation
constexpr uint32_t kArgNameIid = 1;
constexpr uint32_t kArgBool = 2;
constexpr uint32_t kArgUInt = 3;
constexpr uint32_t kArgInt = 4;
constexpr uint32_t kArgPointer = 7;
constexpr uint32_t kArgStringIid = 17;
// InternedData, and its entries (EventName, DebugAnnotationName, InternedString: iid 1, text 2)
constexpr uint32_t kInternedEventNames = 2;
constexpr uint32_t kInternedAnnotationNames = 3;
constexpr uint32_t kInternedAnnotationStrings = 29;
constexpr uint32_t kEntryIid = 1;
constexpr uint32_t kEntryText = 2;

}  // namespace

void PerfettoPacketWriter::StartSequence() {
  // One packet: the delta clock (0 on it is 0 on BOOTTIME) and the default that makes every
  // later packet's timestamp a delta on it.
  packet_mark_ = out_.BeginMessage(kTracePacket);
  const size_t snapshot = out_.BeginMessage(kPacketClockSnapshot);
  for (const uint64_t clock : {kBootTimeClock, kIncrementalClock}) {
    const size_t c = out_.BeginMessage(kSnapshotClocks);
    out_.UInt64(kClockId, clock);
    out_.UInt64(kClockTimestamp, 0);
    if (clock == kIncrementalClock)
      out_.Bool(kClockIsIncremental, true);
    out_.EndMessage(c);
  }
  out_.UInt64(kSnapshotPrimaryClock, kBootTimeClock);
  out_.EndMessage(snapshot);
  const size_t defaults = out_.BeginMessage(kPacketDefaults);
  out_.UInt64(kDefaultsTimestampClockId, kIncrementalClock);
  out_.EndMessage(defaults);
  EndPacket(0);
}

void PerfettoPacketWriter::Track(const TrackSpec& t) {
  if (first_packet_)
    StartSequence();
  packet_mark_ = out_.BeginMessage(kTracePacket);
  const size_t d = out_.BeginMessage(kPacketTrackDescriptor);
  out_.UInt64(kTrackUuid, t.uuid);
  if (t.parent_uuid != 0)
    out_.UInt64(kTrackParentUuid, t.parent_uuid);
  const std::string name = ValidUtf8(t.name);
  if (!name.empty() && !t.is_thread && !t.is_process)
    out_.Bytes(kTrackName, name);
  if (t.is_process) {
    const size_t p = out_.BeginMessage(kTrackProcess);
    out_.Int64(kProcessPid, t.pid);
    out_.Bytes(kProcessName, name);
    out_.EndMessage(p);
  }
  if (t.is_thread) {
    const size_t p = out_.BeginMessage(kTrackThread);
    out_.Int64(kThreadPid, t.pid);
    out_.Int64(kThreadTid, t.tid);
    out_.Bytes(kThreadName, name);
    out_.EndMessage(p);
  }
  if (t.is_counter) {
    const size_t c = out_.BeginMessage(kTrackCounter);
    if (t.unit != CounterUnit::kUnspecified)
      out_.UInt64(kCounterUnit, static_cast<uint64_t>(t.unit));
    out_.EndMessage(c);
  }
  if (t.sibling_order_rank != 0)
    out_.Int64(kTrackSiblingOrderRank, t.sibling_order_rank);
  if (!t.description.empty())
    out_.Bytes(kTrackDescription, ValidUtf8(t.description));
  out_.EndMessage(d);
  EndPacket(0);
}

void PerfettoPacketWriter::BeginEvent(uint64_t ts_ns, uint64_t track_uuid, SliceType type,
                                      uint64_t name_iid) {
  if (first_packet_)
    StartSequence();
  event_.clear();
  event_ts_ = ts_ns;
  event_absolute_ = false;
  event_.UInt64(kEventTrackUuid, track_uuid);
  event_.UInt64(kEventType, static_cast<uint64_t>(type));
  if (name_iid != 0)
    event_.UInt64(kEventNameIid, name_iid);
}

void PerfettoPacketWriter::Name(std::string_view name) {
  event_.Bytes(kEventName, name);
}
void PerfettoPacketWriter::CounterValue(int64_t v) {
  event_.Int64(kEventCounterValue, v);
}
void PerfettoPacketWriter::ExtraCounter(uint64_t track_uuid, int64_t v) {
  event_.UInt64(kEventExtraCounterTrackUuids, track_uuid);
  event_.Int64(kEventExtraCounterValues, v);
}
void PerfettoPacketWriter::FlowOut(uint64_t flow_id) {
  event_.Fixed64(kEventFlowIds, flow_id);
}
void PerfettoPacketWriter::FlowEnd(uint64_t flow_id) {
  event_.Fixed64(kEventTerminatingFlowIds, flow_id);
}

void PerfettoPacketWriter::ArgName(std::string_view name) {
  annotation_mark_ = event_.BeginMessage(kEventDebugAnnotations);
  event_.UInt64(kArgNameIid, Intern(&annotation_names_, kInternedAnnotationNames, name));
}
void PerfettoPacketWriter::ArgUInt(std::string_view name, uint64_t v) {
  ArgName(name);
  event_.UInt64(kArgUInt, v);
  event_.EndMessage(annotation_mark_);
}
void PerfettoPacketWriter::ArgInt(std::string_view name, int64_t v) {
  ArgName(name);
  event_.Int64(kArgInt, v);
  event_.EndMessage(annotation_mark_);
}
void PerfettoPacketWriter::ArgPointer(std::string_view name, uint64_t v) {
  ArgName(name);
  event_.UInt64(kArgPointer, v);
  event_.EndMessage(annotation_mark_);
}
void PerfettoPacketWriter::ArgBool(std::string_view name, bool v) {
  ArgName(name);
  event_.Bool(kArgBool, v);
  event_.EndMessage(annotation_mark_);
}
void PerfettoPacketWriter::ArgString(std::string_view name, std::string_view v) {
  ArgStringIid(name, StringIid(v));
}
uint64_t PerfettoPacketWriter::StringIid(std::string_view v) {
  return Intern(&string_values_, kInternedAnnotationStrings, v);
}
void PerfettoPacketWriter::ArgStringIid(std::string_view name, uint64_t iid) {
  ArgName(name);
  event_.UInt64(kArgStringIid, iid);
  event_.EndMessage(annotation_mark_);
}

void PerfettoPacketWriter::EndEvent() {
  packet_mark_ = out_.BeginMessage(kTracePacket);
  if (event_absolute_ || event_ts_ < clock_ns_) {
    out_.UInt64(kPacketTimestamp, event_ts_);
    out_.UInt64(kPacketTimestampClockId, kBootTimeClock);
  } else {
    out_.UInt64(kPacketTimestamp, event_ts_ - clock_ns_);
    clock_ns_ = event_ts_;
  }
  // New interned entries go before the event that uses them (a reader may parse in order).
  if (!interned_.empty()) {
    out_.Bytes(kPacketInternedData, interned_.bytes());
    interned_.clear();
  }
  out_.Bytes(kPacketTrackEvent, event_.bytes());
  EndPacket(kSeqNeedsIncrementalState);
}

uint64_t PerfettoPacketWriter::NameIid(std::string_view name) {
  return Intern(&event_names_, kInternedEventNames, name);
}

uint64_t PerfettoPacketWriter::Intern(absl::flat_hash_map<std::string, uint64_t>* table,
                                      uint32_t interned_field, std::string_view text) {
  auto [it, fresh] = table->try_emplace(std::string(text), table->size() + 1);
  if (fresh) {
    // Names are string fields (UTF-8 only); a kernel or range name from the trace may not be.
    const size_t m = interned_.BeginMessage(interned_field);
    interned_.UInt64(kEntryIid, it->second);
    interned_.Bytes(kEntryText, ValidUtf8(text));
    interned_.EndMessage(m);
  }
  return it->second;
}

void PerfettoPacketWriter::EndPacket(uint64_t sequence_flags) {
  out_.UInt64(kPacketSequenceId, kSequenceId);
  if (first_packet_) {
    // The sequence starts with empty incremental state: no interned name exists before this.
    sequence_flags |= kSeqIncrementalStateCleared;
    first_packet_ = false;
  }
  if (sequence_flags != 0)
    out_.UInt64(kPacketSequenceFlags, sequence_flags);
  out_.EndMessage(packet_mark_);
  ++packets_;
  if (compress_ && out_.size() >= kBundleBytes)
    CompressBundle();
  if (out_.size() + compressed_.size() >= kFlushBytes)
    Flush().IgnoreError();  // kept in status_
}

void PerfettoPacketWriter::CompressBundle() {
  if (out_.empty())
    return;
  // The bundle is the packets as they would stand in the file (Trace.packet fields), deflated
  // in zlib's format, as Perfetto's tracing service writes them.
  uLongf size = compressBound(static_cast<uLong>(out_.size()));
  auto deflated = std::make_unique<Bytef[]>(size);
  const int rc =
      compress2(deflated.get(), &size, reinterpret_cast<const Bytef*>(out_.bytes().data()),
                static_cast<uLong>(out_.size()), Z_DEFAULT_COMPRESSION);
  ProtoWriter bundle;
  if (rc == Z_OK) {
    const size_t m = bundle.BeginMessage(kTracePacket);
    bundle.Bytes(kPacketCompressedPackets,
                 std::string_view(reinterpret_cast<const char*>(deflated.get()), size));
    bundle.EndMessage(m);
    compressed_.append(bundle.bytes());
  } else {
    compressed_.append(out_.bytes());  // out of memory in zlib: the packets as they are
  }
  out_.clear();
}

absl::Status PerfettoPacketWriter::Flush() {
  if (compress_)
    CompressBundle();
  else
    compressed_.append(out_.bytes());
  out_.clear();
  if (!compressed_.empty() && status_.ok()) {
    bytes_written_ += compressed_.size();
    status_ = sink_(std::string_view(compressed_));
  }
  compressed_.clear();
  return status_;
}

}  // namespace cuclimb::analysis
