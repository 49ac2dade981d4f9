// SPDX-License-Identifier: Apache-2.0
// The cuclimb trace format v1.2: file framing, the event model and the per-event field schema.
//
// This header is the single definition of the format. It depends on <cstdint>/<cstddef> only so
// that the interposer (inside someone else's process), the analyzer and the tests share it.
// docs/trace-format.md explains framing and versioning in prose and links back here; the
// `format_doc_sync` test fails when the two disagree.
//
// Layout of a binary trace (all integers little-endian):
//   FileHeader (64 bytes)
//   Chunk*            ChunkHeader (24 bytes) + payload
//   Chunk(kTrailer)   optional: its presence says the producer finished cleanly
// Two chunk layouts carry events:
//   kEvents (v1.0, rows): the payload, once decompressed, is a sequence of records
//     u8 record type | varint body length | body
//   The body of an event record is the event's fields in schema order (kEventSchema below), each
//   encoded as its Coding says.
//   kColumns (v1.1): the definitions made by the chunk, then one stream per event field and byte
//   of its value (a "plane"), compressed in blocks; column_layout.h says how.
//   kColumnsV2 (v1.2): kColumns whose alloc and free addresses are coded by an address history
//   (address_history.h).
// Delta state (previous ts, previous address, ...) starts at zero in every chunk, so each chunk
// decodes on its own given the string and stack definitions made by earlier chunks.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cuclimb::format {

// ---------------------------------------------------------------------------------------------
// Versions and framing
// ---------------------------------------------------------------------------------------------

inline constexpr char kMagic[8] = {'C', 'U', 'C', 'L', 'I', 'M', 'B', '\0'};
// Major: readers refuse other majors. Minor: new record types or fields appended to a type's
// schema, which older readers skip by the record's length; 1.1 added the column chunk layout
// (older readers stop at it: unknown chunk type) and chunk sequence numbers; 1.2 the kColumnsV2
// chunk (the same, with alloc/free addresses coded by an address history).
inline constexpr uint16_t kFormatMajor = 1;
inline constexpr uint16_t kFormatMinor = 2;
// The first minor whose chunks carry sequence numbers.
inline constexpr uint16_t kSequencedMinor = 1;

enum class ClockId : uint32_t {
  kUnknown = 0,
  kMonotonic = 1,     // CLOCK_MONOTONIC; also the clock CUPTI is told to use
  kMonotonicRaw = 2,  // CLOCK_MONOTONIC_RAW
  kSynthetic = 3,     // made-up times (tests, converted or generated traces)
};

// Fixed 64-byte file header. `ts` values in events are nanoseconds since base_clock_ns.
struct FileHeader {
  char magic[8];             // kMagic
  uint16_t format_major;     // kFormatMajor
  uint16_t format_minor;     // kFormatMinor
  uint32_t header_bytes;     // sizeof(FileHeader); lets a later minor grow the header
  uint32_t clock_id;         // ClockId
  uint32_t flags;            // reserved, 0
  int64_t base_clock_ns;     // reading of clock_id that event ts 0 stands for
  int64_t base_realtime_ns;  // CLOCK_REALTIME (Unix epoch ns) at the same instant, 0 if unknown
  char producer[20];         // NUL-padded, e.g. "cuclimb 0.1.0"
  uint32_t header_crc;       // CRC-32C of bytes [0, 60)
};
static_assert(sizeof(FileHeader) == 64);
static_assert(offsetof(FileHeader, base_clock_ns) == 24);
static_assert(offsetof(FileHeader, header_crc) == 60);

inline constexpr uint32_t kChunkMagic = 0x4B48'4343;  // "CCHK" as little-endian bytes

enum class ChunkType : uint8_t {
  kEvents = 1,     // string/stack definitions and events, as records (v1.0 layout)
  kTrailer = 2,    // one kTrailer event (records); written once, last
  kColumns = 3,    // string/stack definitions and events, column-wise (v1.1; column_layout.h)
  kColumnsV2 = 4,  // kColumns with alloc/free addresses from an address history (v1.2)
};

enum class Codec : uint8_t {
  kRaw = 0,
  kZstd = 1,
};

// Fixed 24-byte chunk header followed by stored_bytes of payload.
struct ChunkHeader {
  uint32_t magic;         // kChunkMagic
  uint8_t type;           // ChunkType
  uint8_t codec;          // Codec
  uint16_t sequence;      // index of the chunk in the file, modulo 2^16 (v1.1; 0 in v1.0 files)
  uint32_t stored_bytes;  // payload bytes in the file
  uint32_t raw_bytes;     // payload bytes after decompression (== stored_bytes for kRaw); for
                          // kColumns, the total of its decompressed blocks
  uint32_t record_count;  // records (definitions + events) in the payload
  uint32_t crc;           // CRC-32C over header bytes [0, 20) followed by the stored payload
};
static_assert(sizeof(ChunkHeader) == 24);
static_assert(offsetof(ChunkHeader, crc) == 20);

// Caps every reader enforces before allocating; a writer never exceeds them (and says so rather
// than cut anything). The table totals bound what a small, highly compressible file can make a
// reader hold (a "decompression bomb"): they are twice what the recorder's intern arenas can
// ever hold (32 MiB of strings, 64 MiB = 8 Mi frames of stacks).
inline constexpr uint32_t kMaxChunkBytes = 64u << 20;          // stored or raw payload
inline constexpr uint32_t kMaxStringBytes = 4u << 20;          // one string (v1.0: 64 KiB)
inline constexpr uint32_t kMaxStackFrames = 256;               // one stack
inline constexpr uint32_t kMaxStrings = 1u << 24;              // distinct strings per file
inline constexpr uint32_t kMaxStacks = 1u << 24;               // distinct stacks per file
inline constexpr uint64_t kMaxStringTableBytes = 64ull << 20;  // all strings of a file
inline constexpr uint64_t kMaxStackTableFrames = 16ull << 20;  // all stack frames of a file

// ---------------------------------------------------------------------------------------------
// Records
// ---------------------------------------------------------------------------------------------

// Record types 1..0x6f are events (EventType); 0x70..0x7f are binary-only definitions.
inline constexpr uint8_t kDefString = 0x70;  // body: varint id, bytes (the rest of the body)
inline constexpr uint8_t kDefStack = 0x71;   // body: varint id, varint count, count × frame
// A stack frame is varint((value << 1) | is_string): a return address, or a string id
// (already symbolized frames, e.g. from a converted JSON Lines trace). Innermost first.

constexpr uint64_t PcFrame(uint64_t return_address) {
  return return_address << 1;
}
constexpr uint64_t StringFrame(uint32_t string_id) {
  return (uint64_t{string_id} << 1) | 1;
}
constexpr bool IsStringFrame(uint64_t frame) {
  return (frame & 1) != 0;
}
constexpr uint64_t FrameValue(uint64_t frame) {
  return frame >> 1;
}

// String id 0 and stack id 0 mean "none". Ids are assigned by the producer, dense from 1, and
// defined before first use.
inline constexpr uint32_t kNoString = 0;
inline constexpr uint32_t kNoStack = 0;
inline constexpr int32_t kNoDevice = -1;

// The event model: one POD value, 128 bytes, used by the interposer's rings, the encoder and the
// reader. Each EventType uses a subset of the slots; kEventSchema says which, under what JSON
// name and with what encoding. Unused slots stay zero (device: kNoDevice).
enum class EventType : uint8_t {
  kProcess = 1,       // session: pid, command line, host, versions
  kDevice = 2,        // a GPU: name, UUID, memory
  kThread = 3,        // a thread's OS id and name
  kMapping = 4,       // a loaded module (path, base, size) for offline symbolization
  kAlloc = 5,         // an allocation that succeeded
  kFree = 6,          // a free that succeeded
  kVmm = 7,           // virtual memory management operation (op says which)
  kPoolTrim = 8,      // cuMemPoolTrimTo
  kPoolAttr = 9,      // cuMemPoolSetAttribute
  kGauge = 10,        // a sampled quantity (pool.reserved, pool.used, device.free, ...)
  kCreate = 11,       // a handle created (stream, event, module, graph, pool, ...)
  kDestroy = 12,      // a handle destroyed
  kApi = 13,          // a CUDA API call with its host duration
  kLaunch = 14,       // a kernel launch call (host side)
  kKernel = 15,       // a kernel execution on the GPU (same clock as host events)
  kSync = 16,         // a synchronization and how long the host waited
  kCopy = 17,         // a memcpy/memset call
  kPush = 18,         // NVTX range push
  kPop = 19,          // NVTX range pop
  kRangeStart = 20,   // NVTX range start (may end on another thread)
  kRangeEnd = 21,     // NVTX range end
  kMark = 22,         // NVTX mark
  kHeap = 23,         // NVTX memory heap registered (a pool or arena)
  kHeapDestroy = 24,  // NVTX memory heap unregistered
  kHeapReset = 25,    // NVTX memory heap reset: all its regions dropped
  kRegion = 26,       // NVTX memory region registered inside a heap
  kRegionFree = 27,   // NVTX memory region unregistered
  kSample = 28,       // a host stack sample
  kOverhead = 29,     // the profiler's own time and event count on one thread
  kDrops = 30,        // events lost, with the reason
  kRecording = 31,    // recording paused (value 0) or resumed (value 1)
  kTrailer = 32,      // totals; the only event of the trailer chunk
  kCount,             // number of event types + 1; not a type
};

// Memory kinds for alloc/free (slot `kind`).
enum class MemoryKind : uint8_t {
  kUnknown = 0,
  kDevice = 1,          // cuMemAlloc, cuMemAllocPitch
  kPool = 2,            // stream-ordered: cuMemAllocAsync, cuMemAllocFromPoolAsync
  kManaged = 3,         // cuMemAllocManaged
  kPinned = 4,          // cuMemAllocHost, cuMemHostAlloc
  kHostRegistered = 5,  // cuMemHostRegister
  kVmm = 6,             // physical memory from cuMemCreate
  kGraph = 7,           // allocated by a graph memory node / during stream capture
  kForeign = 8,         // IPC or imported memory: seen, not owned
  kCount,
};

// Handle types for create/destroy (slot `kind`).
enum class HandleType : uint8_t {
  kUnknown = 0,
  kStream = 1,
  kEvent = 2,
  kModule = 3,
  kLibrary = 4,
  kGraph = 5,
  kGraphExec = 6,
  kPool = 7,
  kContext = 8,
  kCount,
};

// VMM operations (slot `kind` of kVmm).
enum class VmmOp : uint8_t {
  kUnknown = 0,
  kReserve = 1,    // cuMemAddressReserve: addr, size
  kFreeVa = 2,     // cuMemAddressFree: addr, size
  kCreate = 3,     // cuMemCreate: handle, size, device
  kRelease = 4,    // cuMemRelease: handle
  kMap = 5,        // cuMemMap: addr, size, handle
  kUnmap = 6,      // cuMemUnmap: addr, size
  kSetAccess = 7,  // cuMemSetAccess: addr, size, device
  kCount,
};

// What a kSync waited for (slot `kind`).
enum class SyncKind : uint8_t {
  kUnknown = 0,
  kStream = 1,
  kEvent = 2,
  kContext = 3,
  kStreamWait = 4,  // cuStreamWaitEvent: no host wait, a GPU-side dependency
  kCount,
};

// Direction of a kCopy (slot `kind`).
enum class CopyKind : uint8_t {
  kUnknown = 0,
  kHtoD = 1,
  kDtoH = 2,
  kDtoD = 3,
  kHtoH = 4,
  kMemset = 5,
  kCount,
};

struct Event {
  EventType type;
  uint8_t kind;       // MemoryKind | HandleType | VmmOp | SyncKind | CopyKind, per type
  uint16_t reserved;  // 0
  uint32_t tid;       // OS thread id of the calling thread; 0 for GPU-side events
  int64_t ts;         // ns since FileHeader::base_clock_ns
  int64_t dur;        // ns
  uint64_t addr;      // device or host address; range id for start/end
  uint64_t size;      // bytes
  uint64_t stream;    // CUstream handle value
  uint64_t handle;    // pool, VMM handle, stream/event/module/graph handle, heap
  uint64_t corr;      // CUPTI correlation id
  uint64_t aux;       // per type: second handle (pool of an alloc, heap of a region, ...)
  int64_t value;      // per type: gauge value, pid, CUresult, counts
  uint32_t name;      // string id: kernel, range, gauge, handle or thread name
  uint32_t api;       // string id: CUDA API name
  uint32_t domain;    // string id: NVTX domain (kNoString = default domain)
  uint32_t text;      // string id: second text (host name, UUID, module path, drop reason)
  uint32_t stack;     // stack id
  int32_t device;     // device ordinal or kNoDevice
  uint32_t grid[3];
  uint32_t block[3];
};
static_assert(sizeof(Event) == 128);

// Every slot at its "absent" value.
inline constexpr Event kBlankEvent = [] {
  Event ev{};
  ev.device = kNoDevice;
  return ev;
}();

// Returns an Event of `type` with every slot at its "absent" value. Copies kBlankEvent rather
// than zero-filling, which GCC turns into `rep stos` (tens of cycles to start) on a hot path.
constexpr Event MakeEvent(EventType type) {
  Event ev = kBlankEvent;
  ev.type = type;
  return ev;
}

// ---------------------------------------------------------------------------------------------
// The field schema
// ---------------------------------------------------------------------------------------------

enum class Slot : uint8_t {
  kTs,
  kDur,
  kTid,
  kAddr,
  kSize,
  kStream,
  kHandle,
  kCorr,
  kAux,
  kValue,
  kName,
  kApi,
  kDomain,
  kText,
  kStack,
  kDevice,
  kKind,
  kGrid,
  kBlock,
};

// How a field is encoded in binary and in JSON.
enum class Coding : uint8_t {
  kTime,    // zigzag varint delta from the previous event's ts in the chunk; JSON integer
  kUInt,    // varint; JSON integer
  kSInt,    // zigzag varint; JSON integer
  kHex,     // zigzag varint delta from the previous value of the same slot; JSON "0x..." string
  kDelta,   // zigzag varint delta from the previous value of the same slot; JSON integer
  kString,  // varint string id; JSON string
  kStack,   // varint stack id; JSON array of frame strings, innermost first
  kEnum,    // one byte; JSON name from the slot's enum (see EnumFor)
  kDims,    // three varints; JSON [x, y, z]
  kDevice,  // zigzag varint (kNoDevice = -1); JSON integer
};

struct FieldSpec {
  const char* json;  // key in the JSON Lines form
  Slot slot;
  Coding coding;
  bool always;  // written to JSON even when absent (zero)
};

struct EventSpec {
  EventType type;
  const char* json;         // value of "ev"
  const FieldSpec* fields;  // in binary order; ts is always first
  uint8_t field_count;
  uint8_t enum_kind;  // which enum names `kind`: see EnumKind
};

enum class EnumKind : uint8_t { kNone, kMemory, kHandle, kVmm, kSync, kCopy };

inline constexpr FieldSpec kTsField = {"ts", Slot::kTs, Coding::kTime, true};

#define CUCLIMB_F(json, slot, coding, always) \
  FieldSpec {                                 \
    json, Slot::slot, Coding::coding, always  \
  }

inline constexpr FieldSpec kProcessFields[] = {
    kTsField,
    CUCLIMB_F("pid", kValue, kSInt, true),
    CUCLIMB_F("cmd", kName, kString, true),
    CUCLIMB_F("host", kText, kString, false),
    CUCLIMB_F("exe", kApi, kString, false),
    CUCLIMB_F("driver", kSize, kUInt, false),  // cuDriverGetVersion, e.g. 13000
    CUCLIMB_F("cupti", kAux, kUInt, false),    // cuptiGetVersion, e.g. 130001
    CUCLIMB_F("rank", kCorr, kUInt, false),    // rank + 1; 0 = not part of a job
    CUCLIMB_F("ppid", kHandle, kUInt, false),
};
inline constexpr FieldSpec kDeviceFields[] = {
    kTsField,
    CUCLIMB_F("device", kDevice, kDevice, true),
    CUCLIMB_F("name", kName, kString, true),
    CUCLIMB_F("uuid", kText, kString, false),
    CUCLIMB_F("total", kSize, kUInt, false),  // bytes of device memory
    CUCLIMB_F("cc", kValue, kSInt, false),    // compute capability major*10+minor
};
inline constexpr FieldSpec kThreadFields[] = {
    kTsField,
    CUCLIMB_F("tid", kTid, kUInt, true),
    CUCLIMB_F("name", kName, kString, false),
};
inline constexpr FieldSpec kMappingFields[] = {
    kTsField,
    CUCLIMB_F("path", kText, kString, true),
    CUCLIMB_F("base", kAddr, kHex, true),
    CUCLIMB_F("size", kSize, kUInt, true),
    CUCLIMB_F("offset", kAux, kUInt, false),  // file offset of the mapping
    CUCLIMB_F("build_id", kName, kString, false),
};
inline constexpr FieldSpec kAllocFields[] = {
    kTsField,
    CUCLIMB_F("dur", kDur, kUInt, false),
    CUCLIMB_F("tid", kTid, kUInt, true),
    CUCLIMB_F("api", kApi, kString, true),
    CUCLIMB_F("kind", kKind, kEnum, true),
    CUCLIMB_F("addr", kAddr, kHex, true),
    CUCLIMB_F("size", kSize, kUInt, true),
    CUCLIMB_F("stream", kStream, kHex, false),
    CUCLIMB_F("device", kDevice, kDevice, false),
    CUCLIMB_F("pool", kAux, kHex, false),
    CUCLIMB_F("corr", kCorr, kDelta, false),
    CUCLIMB_F("stack", kStack, kStack, false),
};
inline constexpr FieldSpec kFreeFields[] = {
    kTsField,
    CUCLIMB_F("dur", kDur, kUInt, false),
    CUCLIMB_F("tid", kTid, kUInt, true),
    CUCLIMB_F("api", kApi, kString, true),
    CUCLIMB_F("kind", kKind, kEnum, false),
    CUCLIMB_F("addr", kAddr, kHex, true),
    CUCLIMB_F("size", kSize, kUInt, false),  // 0 when the API does not say
    CUCLIMB_F("stream", kStream, kHex, false),
    CUCLIMB_F("device", kDevice, kDevice, false),
    CUCLIMB_F("corr", kCorr, kDelta, false),
    CUCLIMB_F("stack", kStack, kStack, false),
};
inline constexpr FieldSpec kVmmFields[] = {
    kTsField,
    CUCLIMB_F("dur", kDur, kUInt, false),
    CUCLIMB_F("tid", kTid, kUInt, true),
    CUCLIMB_F("op", kKind, kEnum, true),
    CUCLIMB_F("api", kApi, kString, false),
    CUCLIMB_F("addr", kAddr, kHex, false),
    CUCLIMB_F("size", kSize, kUInt, false),
    CUCLIMB_F("handle", kHandle, kHex, false),
    CUCLIMB_F("device", kDevice, kDevice, false),
    CUCLIMB_F("corr", kCorr, kDelta, false),
    CUCLIMB_F("stack", kStack, kStack, false),
};
inline constexpr FieldSpec kPoolTrimFields[] = {
    kTsField, CUCLIMB_F("tid", kTid, kUInt, true), CUCLIMB_F("pool", kHandle, kHex, true),
    CUCLIMB_F("keep", kSize, kUInt, true),  // minBytesToKeep
};
inline constexpr FieldSpec kPoolAttrFields[] = {
    kTsField,
    CUCLIMB_F("tid", kTid, kUInt, true),
    CUCLIMB_F("pool", kHandle, kHex, true),
    CUCLIMB_F("name", kName, kString, true),  // attribute, e.g. "release_threshold"
    CUCLIMB_F("value", kValue, kSInt, true),
};
inline constexpr FieldSpec kGaugeFields[] = {
    kTsField,
    CUCLIMB_F("device", kDevice, kDevice, false),
    CUCLIMB_F("name", kName, kString, true),  // pool.reserved, pool.used, device.free, ...
    CUCLIMB_F("value", kValue, kSInt, true),
    CUCLIMB_F("pool", kHandle, kHex, false),
};
inline constexpr FieldSpec kHandleFields[] = {
    kTsField,
    CUCLIMB_F("dur", kDur, kUInt, false),
    CUCLIMB_F("tid", kTid, kUInt, false),
    CUCLIMB_F("type", kKind, kEnum, true),
    CUCLIMB_F("handle", kHandle, kHex, true),
    CUCLIMB_F("api", kApi, kString, false),
    CUCLIMB_F("device", kDevice, kDevice, false),
    CUCLIMB_F("name", kName, kString, false),  // module path or kernel count, when known
    CUCLIMB_F("stack", kStack, kStack, false),
};
inline constexpr FieldSpec kApiFields[] = {
    kTsField,
    CUCLIMB_F("dur", kDur, kUInt, true),
    CUCLIMB_F("tid", kTid, kUInt, true),
    CUCLIMB_F("name", kApi, kString, true),
    CUCLIMB_F("corr", kCorr, kDelta, false),
    CUCLIMB_F("result", kValue, kSInt, false),  // CUresult when not CUDA_SUCCESS
    CUCLIMB_F("stream", kStream, kHex, false),
};
inline constexpr FieldSpec kLaunchFields[] = {
    kTsField,
    CUCLIMB_F("dur", kDur, kUInt, true),
    CUCLIMB_F("tid", kTid, kUInt, true),
    CUCLIMB_F("kernel", kName, kString, true),
    CUCLIMB_F("stream", kStream, kHex, true),
    CUCLIMB_F("corr", kCorr, kDelta, false),
    CUCLIMB_F("api", kApi, kString, false),
    CUCLIMB_F("grid", kGrid, kDims, false),
    CUCLIMB_F("block", kBlock, kDims, false),
    CUCLIMB_F("smem", kSize, kUInt, false),
    CUCLIMB_F("device", kDevice, kDevice, false),
    CUCLIMB_F("graph", kHandle, kHex, false),  // graph exec for cuGraphLaunch
    CUCLIMB_F("stack", kStack, kStack, false),
};
inline constexpr FieldSpec kKernelFields[] = {
    kTsField,
    CUCLIMB_F("dur", kDur, kUInt, true),
    CUCLIMB_F("kernel", kName, kString, true),
    CUCLIMB_F("stream", kStream, kHex, true),
    CUCLIMB_F("corr", kCorr, kDelta, true),
    CUCLIMB_F("device", kDevice, kDevice, true),
    CUCLIMB_F("grid", kGrid, kDims, false),
    CUCLIMB_F("block", kBlock, kDims, false),
    CUCLIMB_F("graph", kHandle, kUInt, false),  // CUPTI graph id
};
inline constexpr FieldSpec kSyncFields[] = {
    kTsField,
    CUCLIMB_F("dur", kDur, kUInt, true),
    CUCLIMB_F("tid", kTid, kUInt, true),
    CUCLIMB_F("kind", kKind, kEnum, true),
    CUCLIMB_F("api", kApi, kString, true),
    CUCLIMB_F("stream", kStream, kHex, false),
    CUCLIMB_F("handle", kHandle, kHex, false),  // the event waited for
    CUCLIMB_F("corr", kCorr, kDelta, false),
};
inline constexpr FieldSpec kCopyFields[] = {
    kTsField,
    CUCLIMB_F("dur", kDur, kUInt, true),
    CUCLIMB_F("tid", kTid, kUInt, true),
    CUCLIMB_F("kind", kKind, kEnum, true),
    CUCLIMB_F("api", kApi, kString, true),
    CUCLIMB_F("dst", kAddr, kHex, false),
    CUCLIMB_F("src", kAux, kHex, false),
    CUCLIMB_F("size", kSize, kUInt, true),
    CUCLIMB_F("stream", kStream, kHex, false),
    CUCLIMB_F("corr", kCorr, kDelta, false),
};
inline constexpr FieldSpec kPushFields[] = {
    kTsField,
    CUCLIMB_F("tid", kTid, kUInt, true),
    CUCLIMB_F("name", kName, kString, true),
    CUCLIMB_F("domain", kDomain, kString, false),
    CUCLIMB_F("payload", kValue, kSInt, false),  // NVTX integer payload (e.g. iteration)
};
inline constexpr FieldSpec kPopFields[] = {
    kTsField,
    CUCLIMB_F("tid", kTid, kUInt, true),
    CUCLIMB_F("domain", kDomain, kString, false),
};
inline constexpr FieldSpec kRangeStartFields[] = {
    kTsField,
    CUCLIMB_F("tid", kTid, kUInt, true),
    CUCLIMB_F("id", kAddr, kDelta, true),
    CUCLIMB_F("name", kName, kString, true),
    CUCLIMB_F("domain", kDomain, kString, false),
    CUCLIMB_F("payload", kValue, kSInt, false),
};
inline constexpr FieldSpec kRangeEndFields[] = {
    kTsField,
    CUCLIMB_F("tid", kTid, kUInt, true),
    CUCLIMB_F("id", kAddr, kDelta, true),
    CUCLIMB_F("domain", kDomain, kString, false),
};
inline constexpr FieldSpec kMarkFields[] = {
    kTsField,
    CUCLIMB_F("tid", kTid, kUInt, true),
    CUCLIMB_F("name", kName, kString, true),
    CUCLIMB_F("domain", kDomain, kString, false),
    CUCLIMB_F("payload", kValue, kSInt, false),
};
inline constexpr FieldSpec kHeapFields[] = {
    kTsField,
    CUCLIMB_F("tid", kTid, kUInt, true),
    CUCLIMB_F("heap", kHandle, kHex, true),
    CUCLIMB_F("addr", kAddr, kHex, false),
    CUCLIMB_F("size", kSize, kUInt, false),
    CUCLIMB_F("domain", kDomain, kString, false),
    CUCLIMB_F("name", kName, kString, false),
};
inline constexpr FieldSpec kHeapOnlyFields[] = {
    kTsField,
    CUCLIMB_F("tid", kTid, kUInt, true),
    CUCLIMB_F("heap", kHandle, kHex, true),
    CUCLIMB_F("domain", kDomain, kString, false),
};
inline constexpr FieldSpec kRegionFields[] = {
    kTsField,
    CUCLIMB_F("tid", kTid, kUInt, true),
    CUCLIMB_F("heap", kAux, kHex, true),
    CUCLIMB_F("addr", kAddr, kHex, true),
    CUCLIMB_F("size", kSize, kUInt, true),
    CUCLIMB_F("handle", kHandle, kUInt, false),  // NVTX region handle, when one was returned
    CUCLIMB_F("domain", kDomain, kString, false),
    CUCLIMB_F("name", kName, kString, false),
    CUCLIMB_F("stack", kStack, kStack, false),
};
inline constexpr FieldSpec kRegionFreeFields[] = {
    kTsField,
    CUCLIMB_F("tid", kTid, kUInt, true),
    CUCLIMB_F("heap", kAux, kHex, false),
    CUCLIMB_F("addr", kAddr, kHex, false),
    CUCLIMB_F("handle", kHandle, kUInt, false),
    CUCLIMB_F("domain", kDomain, kString, false),
};
inline constexpr FieldSpec kSampleFields[] = {
    kTsField,
    CUCLIMB_F("tid", kTid, kUInt, true),
    CUCLIMB_F("stack", kStack, kStack, true),
};
inline constexpr FieldSpec kOverheadFields[] = {
    kTsField,
    CUCLIMB_F("dur", kDur, kUInt, true),        // period covered
    CUCLIMB_F("tid", kTid, kUInt, true),        // thread, or 0 for the writer thread
    CUCLIMB_F("self_ns", kValue, kSInt, true),  // time spent inside cuclimb in the period
    CUCLIMB_F("events", kSize, kUInt, true),    // events recorded in the period
};
inline constexpr FieldSpec kDropsFields[] = {
    kTsField, CUCLIMB_F("tid", kTid, kUInt, false), CUCLIMB_F("count", kValue, kSInt, true),
    CUCLIMB_F("reason", kText, kString, true),  // "ring_full", "cupti_records", ...
};
inline constexpr FieldSpec kRecordingFields[] = {
    kTsField,
    CUCLIMB_F("on", kValue, kSInt, true),
    CUCLIMB_F("reason", kText, kString, false),
};
inline constexpr FieldSpec kTrailerFields[] = {
    kTsField, CUCLIMB_F("events", kSize, kUInt, true),  // events written before the trailer
    CUCLIMB_F("dropped", kValue, kSInt, true),          // events lost in total
    CUCLIMB_F("status", kText, kString, false),         // why recording was partial, if it was
};

#undef CUCLIMB_F

#define CUCLIMB_SPEC(type, json, fields, enum_kind)                                          \
  EventSpec {                                                                                \
    EventType::type, json, fields, static_cast<uint8_t>(sizeof(fields) / sizeof(FieldSpec)), \
        static_cast<uint8_t>(EnumKind::enum_kind)                                            \
  }

// Indexed by EventType value; entry 0 is unused.
inline constexpr EventSpec kEventSchema[] = {
    EventSpec{static_cast<EventType>(0), "", nullptr, 0, 0},
    CUCLIMB_SPEC(kProcess, "process", kProcessFields, kNone),
    CUCLIMB_SPEC(kDevice, "device", kDeviceFields, kNone),
    CUCLIMB_SPEC(kThread, "thread", kThreadFields, kNone),
    CUCLIMB_SPEC(kMapping, "mapping", kMappingFields, kNone),
    CUCLIMB_SPEC(kAlloc, "alloc", kAllocFields, kMemory),
    CUCLIMB_SPEC(kFree, "free", kFreeFields, kMemory),
    CUCLIMB_SPEC(kVmm, "vmm", kVmmFields, kVmm),
    CUCLIMB_SPEC(kPoolTrim, "pool_trim", kPoolTrimFields, kNone),
    CUCLIMB_SPEC(kPoolAttr, "pool_attr", kPoolAttrFields, kNone),
    CUCLIMB_SPEC(kGauge, "gauge", kGaugeFields, kNone),
    CUCLIMB_SPEC(kCreate, "create", kHandleFields, kHandle),
    CUCLIMB_SPEC(kDestroy, "destroy", kHandleFields, kHandle),
    CUCLIMB_SPEC(kApi, "api", kApiFields, kNone),
    CUCLIMB_SPEC(kLaunch, "launch", kLaunchFields, kNone),
    CUCLIMB_SPEC(kKernel, "kernel", kKernelFields, kNone),
    CUCLIMB_SPEC(kSync, "sync", kSyncFields, kSync),
    CUCLIMB_SPEC(kCopy, "copy", kCopyFields, kCopy),
    CUCLIMB_SPEC(kPush, "push", kPushFields, kNone),
    CUCLIMB_SPEC(kPop, "pop", kPopFields, kNone),
    CUCLIMB_SPEC(kRangeStart, "start", kRangeStartFields, kNone),
    CUCLIMB_SPEC(kRangeEnd, "end", kRangeEndFields, kNone),
    CUCLIMB_SPEC(kMark, "mark", kMarkFields, kNone),
    CUCLIMB_SPEC(kHeap, "heap", kHeapFields, kNone),
    CUCLIMB_SPEC(kHeapDestroy, "heap_destroy", kHeapOnlyFields, kNone),
    CUCLIMB_SPEC(kHeapReset, "heap_reset", kHeapOnlyFields, kNone),
    CUCLIMB_SPEC(kRegion, "region", kRegionFields, kNone),
    CUCLIMB_SPEC(kRegionFree, "region_free", kRegionFreeFields, kNone),
    CUCLIMB_SPEC(kSample, "sample", kSampleFields, kNone),
    CUCLIMB_SPEC(kOverhead, "overhead", kOverheadFields, kNone),
    CUCLIMB_SPEC(kDrops, "drops", kDropsFields, kNone),
    CUCLIMB_SPEC(kRecording, "recording", kRecordingFields, kNone),
    CUCLIMB_SPEC(kTrailer, "trailer", kTrailerFields, kNone),
};
#undef CUCLIMB_SPEC

static_assert(sizeof(kEventSchema) / sizeof(EventSpec) == static_cast<size_t>(EventType::kCount));

constexpr bool IsEventType(uint8_t raw) {
  return raw >= 1 && raw < static_cast<uint8_t>(EventType::kCount);
}

constexpr const EventSpec& SpecOf(EventType type) {
  return kEventSchema[static_cast<uint8_t>(type)];
}

// Names of the enums that fill `kind`, as written in JSON. Index = enum value.
inline constexpr const char* kMemoryKindNames[] = {
    "unknown", "device", "pool", "managed", "pinned", "host_registered", "vmm", "graph", "foreign"};
inline constexpr const char* kHandleTypeNames[] = {
    "unknown", "stream", "event", "module", "library", "graph", "graph_exec", "pool", "context"};
inline constexpr const char* kVmmOpNames[] = {"unknown", "reserve", "free_va", "create",
                                              "release", "map",     "unmap",   "set_access"};
inline constexpr const char* kSyncKindNames[] = {"unknown", "stream", "event", "context",
                                                 "stream_wait"};
inline constexpr const char* kCopyKindNames[] = {"unknown", "htod", "dtoh",
                                                 "dtod",    "htoh", "memset"};

static_assert(sizeof(kMemoryKindNames) / sizeof(char*) == size_t(MemoryKind::kCount));
static_assert(sizeof(kHandleTypeNames) / sizeof(char*) == size_t(HandleType::kCount));
static_assert(sizeof(kVmmOpNames) / sizeof(char*) == size_t(VmmOp::kCount));
static_assert(sizeof(kSyncKindNames) / sizeof(char*) == size_t(SyncKind::kCount));
static_assert(sizeof(kCopyKindNames) / sizeof(char*) == size_t(CopyKind::kCount));

struct EnumNames {
  const char* const* names;
  uint8_t count;
};

constexpr EnumNames NamesOf(EnumKind kind) {
  switch (kind) {
    case EnumKind::kMemory:
      return {kMemoryKindNames, uint8_t(MemoryKind::kCount)};
    case EnumKind::kHandle:
      return {kHandleTypeNames, uint8_t(HandleType::kCount)};
    case EnumKind::kVmm:
      return {kVmmOpNames, uint8_t(VmmOp::kCount)};
    case EnumKind::kSync:
      return {kSyncKindNames, uint8_t(SyncKind::kCount)};
    case EnumKind::kCopy:
      return {kCopyKindNames, uint8_t(CopyKind::kCount)};
    case EnumKind::kNone:
      break;
  }
  return {nullptr, 0};
}

}  // namespace cuclimb::format
