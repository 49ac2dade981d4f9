// SPDX-License-Identifier: Apache-2.0
// One streaming pass: every event, with its slot, updates the Aggregates. Per-event work is a
// switch, a few flat-hash-map lookups keyed by ids and array additions; no strings.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "series/aggregates.h"
#include "series/borrowed_ranges.h"
#include "symbols/symbolizer.h"
#include "trace/reader.h"

namespace cuclimb::analysis {

// Maps string ids (dense from 1, below 2^24) to dense indexes of a table, with a plain vector.
class DenseIndex {
 public:
  // The dense index of id; a new id is appended to *ids and gets a new element of *series.
  // Inline: every launch, kernel and API call looks its name up here, and the answer is nearly
  // always an index that exists.
  template <class Series>
  uint32_t Get(uint32_t id, std::vector<uint32_t>* ids, std::vector<Series>* series) {
    if (id < direct_.size()) [[likely]] {
      if (const int32_t d = direct_[id]; d >= 0) [[likely]]
        return static_cast<uint32_t>(d);
    }
    const uint32_t d = Add(id, ids);
    if (d == series->size())
      series->emplace_back();
    return d;
  }
  // The dense index of id, or -1 when it has none yet or is 2^24 or above; adds nothing.
  int32_t Find(uint32_t id) const { return id < direct_.size() ? direct_[id] : -1; }

  static constexpr uint32_t kDirect = 1u << 24;  // ids below: in the vector; others hashed

 private:
  uint32_t Add(uint32_t id, std::vector<uint32_t>* ids);  // a new id, or one of 2^24 and above

  std::vector<int32_t> direct_;
  absl::flat_hash_map<uint32_t, uint32_t> other_;
};

class Aggregator {
 public:
  // Which handlers an aggregator runs. kAll: one aggregator per trace. With a thread for each,
  // the allocation family (allocations, frees, VMM, handles, gauges, NVTX heaps and regions, the
  // handlers of memory.cpp, which share no state with the others) runs on a kMemory aggregator
  // fed only those events, everything else on a kOthers aggregator fed every event; TakeMemory()
  // then joins the two into the kAll result.
  enum class Family : uint8_t { kAll, kMemory, kOthers };
  static bool IsMemoryEvent(format::EventType type) {
    switch (type) {
      case format::EventType::kAlloc:
      case format::EventType::kFree:
      case format::EventType::kVmm:
      case format::EventType::kCreate:
      case format::EventType::kDestroy:
      case format::EventType::kGauge:
      case format::EventType::kHeap:
      case format::EventType::kHeapDestroy:
      case format::EventType::kHeapReset:
      case format::EventType::kRegion:
      case format::EventType::kRegionFree:
        return true;
      default:
        return false;
    }
  }

  // `reader` resolves stacks and strings (host samples are symbolized as they come);
  // `slot_iteration` maps a slot to its iteration as far as it is known (for lifetimes).
  // iteration_tid: the boundary thread when iterations do not come from an NVTX range (its
  // CUDA time then feeds the "(iteration)" pseudo range); 0 otherwise.
  // boundary_tid: the thread whose ranges or marks delimit iterations, whatever the source (0
  // when there is none): the work of helper threads with no range of their own open counts for
  // the ranges open on it at the time (series/borrowed_ranges.h).
  Aggregator(const trace::TraceReader* reader, Symbolizer* symbolizer, uint32_t iteration_tid = 0,
             uint32_t boundary_tid = 0, Family family = Family::kAll);

  void Process(const trace::Event& ev, uint32_t slot);
  void Finish();
  // A kOthers aggregator takes the allocation family's results from a kMemory one that saw the
  // same trace; both Finish()ed. Afterwards this one holds what a kAll aggregator would.
  void TakeMemory(Aggregator* memory);

  Aggregates& data() { return a_; }
  const Aggregates& data() const { return a_; }

 private:
  struct OpenRange {
    uint32_t range = 0;
    uint32_t slot = 0;
    int64_t start = 0;
    uint32_t domain = 0;
    uint64_t id = ~uint64_t{0};  // start/end id; ~0 for push/pop
    bool dup = false;            // nested inside an instance of the same range: not counted
    uint32_t sig_after = 0;      // signature of the open ranges up to and including this one
  };
  // API time of a thread that forgot an open range (ThreadState::cut), per API, not yet added
  // to its open ranges: the first call of an API while the open ranges stay the same walks them
  // (creating the parts in the order a walk per call would), later ones only add here, and the
  // sums reach the ranges when the open ranges change (FlushApiTime). Other threads pend their
  // API time by signature (pending_apis_).
  struct PendingApiTime {
    uint32_t dense = 0, name = 0;
    double ns = 0;
  };
  static constexpr size_t kMaxPendingApis = 16;
  struct ThreadState {
    // The thread's events and CUDA calls, added to Aggregates::threads at Finish(): Process()
    // looks the state up once per event for its handlers, and a second lookup of the record
    // cost as much again. Apart: adjacent, GCC adds the two through a vector register, in
    // twice the instructions.
    uint64_t events = 0;
    std::vector<OpenRange> open;
    std::vector<PendingApiTime> pending_api;
    bool cut = false;       // an open range was forgotten (kMaxOpenRanges): pending_api, not by sig
    bool may_help = false;  // not the boundary thread, and there is one (Helper())
    uint64_t cuda_calls = 0;
  };
  struct PendingLaunch {
    uint64_t corr = 0;  // 0: empty
    int64_t ts = 0;
    uint32_t sig = 0, slot = 0, kernel = 0;  // sig kUnsettled: a helper's, looked up by ts
    bool on_iteration_thread = false;
    bool graph = false;
  };
  // Launches waiting for their GPU record, by correlation id modulo the window. CUPTI hands
  // records over in buffers flushed every ~250 ms, so a kernel record trails its launch by at
  // most a few hundred thousand launches; an older launch is overwritten and its kernel counted
  // as unmatched (its GPU time still counts, by the kernel's own timestamp).
  static constexpr size_t kLaunchWindow = 1u << 18;
  PendingLaunch* FindLaunch(uint64_t corr) {
    PendingLaunch& p = launches_[corr & (kLaunchWindow - 1)];
    return p.corr == corr ? &p : nullptr;
  }
  struct EarlyKernel {
    int64_t dur = 0;
    uint32_t kernel = 0;
  };

  ThreadState& Thread(uint32_t tid) {
    if (tid != last_tid_) [[unlikely]]
      return FindThread(tid);
    return *last_thread_;
  }
  ThreadState& FindThread(uint32_t tid);
  // The signature of a thread's open (range, slot) list, for attributing GPU time later.
  uint32_t Signature(const ThreadState& t) const {
    return t.open.empty() ? 0 : t.open.back().sig_after;
  }
  // The child of signature parent for open range o (parent itself when o is a duplicate). A
  // direct-mapped memo of the children asked last answers most pushes without hashing.
  uint32_t ChildSignature(uint32_t parent, const OpenRange& o) {
    if (o.dup)
      return parent;
    ChildMemo& m =
        child_memo_[((parent * 31 + o.range) * 31 + o.slot) * 0x9E3779B1u >> kChildMemoShift];
    if (m.sig != 0 && m.parent == parent && m.range == o.range && m.slot == o.slot) [[likely]]
      return m.sig;
    m = {parent, o.range, o.slot, NewChildSignature(parent, o)};
    return m.sig;
  }
  uint32_t NewChildSignature(uint32_t parent, const OpenRange& o);
  void Open(ThreadState& t, OpenRange o);
  // The range of (domain, name). Most names come with one domain: the range last found for a
  // name answers without hashing when its domain matches.
  uint32_t RangeIndex(uint32_t domain, uint32_t name) {
    if (name < range_by_name_.size()) [[likely]] {
      if (const int32_t r = range_by_name_[name];
          r >= 0 && a_.ranges[static_cast<size_t>(r)].domain == domain) [[likely]]
        return static_cast<uint32_t>(r);
    }
    return FindRangeIndex(domain, name);
  }
  uint32_t FindRangeIndex(uint32_t domain, uint32_t name);
  uint32_t KernelIndex(uint32_t name) {
    return kernel_index_.Get(name, &a_.kernel_names, &a_.kernels);
  }
  // The per-iteration part of a range for one API, sync API or kernel (dense index + string id).
  SlotVec& Part(std::vector<Aggregates::Part>& parts, std::vector<std::vector<int32_t>>& table,
                uint32_t range, uint32_t dense, uint32_t name) {
    if (range < table.size()) [[likely]] {
      if (const std::vector<int32_t>& row = table[range]; dense < row.size()) [[likely]] {
        if (const int32_t p = row[dense]; p >= 0) [[likely]]
          return parts[static_cast<size_t>(p)].ns;
      }
    }
    return NewPart(parts, table, range, dense, name);
  }
  SlotVec& NewPart(std::vector<Aggregates::Part>& parts, std::vector<std::vector<int32_t>>& table,
                   uint32_t range, uint32_t dense, uint32_t name);

  void ProcessAny(const trace::Event& ev, uint32_t slot);  // Process() off its common case
  // Counts the event on its thread (and notes the boundary thread's progress).
  [[gnu::always_inline]] inline void Count(const trace::Event& ev, ThreadState* t);
  // The handler of the event's type, called last (a jump). The handlers take the state of the
  // event's thread, which Process() looked up: nullptr for tid 0 (GPU-side records), whose state
  // none of them needs.
  [[gnu::always_inline]] inline void Dispatch(const trace::Event& ev, ThreadState* t,
                                              uint32_t slot);
  void OnAllocOrFree(const trace::Event& ev, ThreadState* t, uint32_t slot);  // Family::kAll
  void ProcessOther(const trace::Event& ev, ThreadState* t, uint32_t slot);   // rarer types
  // The hot handlers (ApiTime, OnLaunch, OnKernel) test for their common case before writing
  // anything and do it without a call, so without registers to save (a sixth of a handler);
  // their ...Any() version does the same and everything else.
  void ApiTime(const trace::Event& ev, ThreadState* t, uint32_t api, uint32_t slot);
  void ApiTimeAny(const trace::Event& ev, ThreadState* t, uint32_t api, uint32_t slot);
  // ApiTime() on the iteration thread of a pseudo range, or on a helper.
  void ApiTimeOffRanges(const trace::Event& ev, ThreadState& t, uint32_t i, uint32_t api,
                        uint32_t slot, double dur);
  // Adds dur of API `dense` to the pending API time of the thread's open ranges: by signature,
  // which names them (pending_apis_), unless the thread forgot a range it had open
  // (ThreadState::cut), whose signatures name more ranges than it has open.
  void PendApiTime(ThreadState& t, uint32_t dense, uint32_t name, double dur) {
    if (t.open.empty())
      return;
    if (t.cut) [[unlikely]] {
      PendThreadApiTime(t, dense, name, dur);
      return;
    }
    const uint32_t sig = Signature(t);
    if (sig == 0)
      return;
    PendingRangeTime& p = pending_apis_[PendingIndex(sig, dense)];
    if (Pendable(p, sig, dense, dur)) [[likely]] {
      p.ns += dur;
      return;
    }
    PendApiTimeMiss(p, sig, dense, name, dur);
  }
  void PendThreadApiTime(ThreadState& t, uint32_t dense, uint32_t name, double dur);
  // Adds dur of API `dense` (string id name) to every range open on the thread.
  void AddApiTime(const ThreadState& t, uint32_t dense, uint32_t name, double dur);
  // Adds the pending API time to the open ranges: before they change.
  void FlushApiTime(ThreadState& t) {
    if (!t.pending_api.empty()) [[unlikely]]
      FlushPendingApiTime(t);
  }
  void FlushPendingApiTime(ThreadState& t);
  void SyncTime(const trace::Event& ev, ThreadState* t, uint32_t slot);
  // Push and pop, then NoteBoundaryRanges().
  void OnPush(const trace::Event& ev, ThreadState* t, uint32_t slot);
  void OnPop(const trace::Event& ev, ThreadState* t);
  void OnRangeStart(const trace::Event& ev, uint32_t slot);
  void OnRangeEnd(const trace::Event& ev);
  void CloseRange(ThreadState& t, size_t index, int64_t end_ts, bool count = true);
  static constexpr size_t kMaxOpenRanges = 256;
  // A launch: the kernel's launch count, the launch waiting for its kernel's record, and the
  // API call (ApiTime()).
  void OnLaunch(const trace::Event& ev, ThreadState* t, uint32_t slot);
  void OnLaunchAny(const trace::Event& ev, ThreadState* t, uint32_t slot);
  void NoteLaunch(const trace::Event& ev, const ThreadState* t, uint32_t slot);  // but the call
  void OnKernel(const trace::Event& ev, uint32_t slot);
  void OnKernelAny(const trace::Event& ev, uint32_t slot);
  void AttributeKernel(uint32_t sig, uint32_t dense, uint32_t kernel, int64_t dur);
  // Adds dur to `total` of every range of signature sig and to its part for (dense, name) in
  // parts/table, outermost range first: the walk that kernel, API and sync time share.
  void AttributeToSignature(uint32_t sig, SlotVec RangeSeries::*total,
                            std::vector<Aggregates::Part>& parts,
                            std::vector<std::vector<int32_t>>& table, uint32_t dense, uint32_t name,
                            double dur);
  // Time under one signature, per kernel (GPU time) or per API (API time), not yet added to the
  // ranges: the first kernel or call of a (signature, kernel or API) pair walks the signature
  // (creating the parts in the order a walk per event would), later ones only add here, and the
  // sum reaches the ranges when another pair takes the entry or at Finish(). Durations are
  // whole ns, pended only below 2^32 ns, and a sum is kept below 2^52: sums are exact in any
  // order, the figures of a walk per event.
  struct PendingRangeTime {
    uint32_t sig = 0, dense = 0, name = 0;  // sig 0: empty (no range open: nothing to add)
    double ns = 0;
  };
  static constexpr size_t kPendingRangeTimes = 64;  // direct-mapped by (signature, name)
  static bool Pendable(const PendingRangeTime& p, uint32_t sig, uint32_t dense, double ns) {
    return p.sig == sig && p.dense == dense && ns < 4294967296.0 && p.ns < 4503599627370496.0;
  }
  static size_t PendingIndex(uint32_t sig, uint32_t dense) {
    return (sig * 31 + dense) & (kPendingRangeTimes - 1);
  }
  void PendKernelTime(uint32_t sig, uint32_t dense, uint32_t kernel, int64_t dur) {
    if (sig == 0)
      return;
    const double d = static_cast<double>(std::max<int64_t>(dur, 0));
    PendingRangeTime& p = pending_kernels_[PendingIndex(sig, dense)];
    if (Pendable(p, sig, dense, d)) [[likely]] {
      p.ns += d;
      return;
    }
    PendKernelTimeMiss(p, sig, dense, kernel, dur);
  }
  void PendKernelTimeMiss(PendingRangeTime& p, uint32_t sig, uint32_t dense, uint32_t kernel,
                          int64_t dur);
  // Adds dur of API `dense` to the ranges of signature sig.
  void AttributeApi(uint32_t sig, uint32_t dense, uint32_t name, double dur);
  // Adds dur of sync API `dense` to the ranges of signature sig.
  void AttributeSync(uint32_t sig, uint32_t dense, uint32_t name, double dur);
  void PendApiTimeMiss(PendingRangeTime& p, uint32_t sig, uint32_t dense, uint32_t name,
                       double dur);
  void FlushRangeTime();
  PendingRangeTime pending_kernels_[kPendingRangeTimes];
  PendingRangeTime pending_apis_[kPendingRangeTimes];
  PendingRangeTime pending_syncs_[kPendingRangeTimes];
  void AttributeIteration(uint32_t slot, uint32_t dense, uint32_t kernel, int64_t dur);
  // Helper threads' work (series/borrowed_ranges.h).
  static constexpr uint32_t kUnsettled = ~0u;
  static constexpr size_t kMaxBorrowed = 1u << 20;    // parked work; beyond, settled as known
  enum class BorrowKind : uint8_t { kApi, kKernel };  // API time, or a kernel's GPU time
  struct Borrowed {
    int64_t ts;
    double ns;
    uint32_t dense, name;
    BorrowKind kind;
  };
  // A helper: a thread other than the boundary thread with no range of its own open.
  static bool Helper(const ThreadState& t) { return t.may_help && t.open.empty(); }
  void Borrow(const Borrowed& b);
  void Settle(const Borrowed& b, uint32_t sig);
  void SettleBorrowed(bool all);
  // After an NVTX range event: records a change of the boundary thread's open ranges.
  void NoteBoundaryRanges(const trace::Event& ev);
  void OnSample(const trace::Event& ev, uint32_t slot);
  void OnIdentity(const trace::Event& ev);
  // memory.cpp
  void ProcessMemory(const trace::Event& ev, uint32_t slot);
  void OnAlloc(const trace::Event& ev, uint32_t slot);
  void OnFree(const trace::Event& ev, uint32_t slot);
  void OnVmm(const trace::Event& ev, uint32_t slot);
  void OnHandle(const trace::Event& ev, uint32_t slot);
  void OnGauge(const trace::Event& ev, uint32_t slot);
  void OnHeap(const trace::Event& ev, uint32_t slot);
  void OnRegion(const trace::Event& ev, uint32_t slot);
  void OnRegionFree(const trace::Event& ev, uint32_t slot);
  uint32_t AllocKeyIndex(uint8_t kind, uint64_t size, uint32_t api, uint32_t stack);
  void Retire(LiveAlloc& live, uint32_t slot, bool count_lifetime);
  // Remembers a free for the loop's survivors (Aggregates::recent_frees).
  // Inline when the free's slot is the latest and there is room: every free comes here.
  void NoteFree(uint64_t addr, const LiveAlloc& live, uint32_t slot, int handle_type = -1) {
    std::vector<Aggregates::FreedAlloc>& frees = a_.recent_frees;
    if (slot == a_.recent_free_slot && frees.size() < frees.capacity()) [[likely]] {
      frees.push_back({addr, live, slot, handle_type});
      return;
    }
    NoteFreeAny(addr, live, slot, handle_type);
  }
  void NoteFreeAny(uint64_t addr, const LiveAlloc& live, uint32_t slot, int handle_type);
  void DropRegion(HeapSeries& heap, const LiveAlloc& live, uint32_t slot);

  const trace::TraceReader* reader_;
  Symbolizer* symbolizer_;
  uint32_t iteration_tid_;
  uint32_t boundary_tid_;
  Family family_;
  Aggregates a_;
  HostFunctionCollector host_functions_{&a_.host_functions};
  RangeTimeline timeline_;
  uint32_t boundary_sig_ = 0;  // the boundary thread's signature last given to timeline_
  // The timestamp of the boundary thread's last event: timeline_'s horizon from the next event
  // on (Process() advances it then, so that its handler comes last; Advance is a maximum).
  int64_t boundary_ts_ = INT64_MIN;
  int64_t boundary_change_ts_ = INT64_MIN;
  std::deque<Borrowed> borrowed_;

  absl::flat_hash_map<uint32_t, ThreadState> threads_;
  // The thread last looked up. 64 bits: kNone, the start, equals no thread id (32 bits; every
  // value is one), so one comparison tells a hit.
  static constexpr uint64_t kNone = ~uint64_t{0};
  uint64_t last_tid_ = kNone;
  ThreadState* last_thread_ = nullptr;

  absl::flat_hash_map<uint64_t, uint32_t> range_index_;  // (domain << 32 | name) → ranges
  absl::flat_hash_map<uint64_t, uint32_t> start_end_;    // start/end id → tid (open instances)
  // Signatures form a tree: a signature is its parent's (range, slot) list plus one pair, so
  // each costs 12 bytes however deep the nesting (a copied list cost up to 256 pairs per push:
  // 2.6 GB for 5 000 ranges never popped, issue #14). Walks stop after kMaxOpenRanges nodes.
  struct SignatureNode {
    uint32_t parent = 0, range = 0, slot = 0;
  };
  std::vector<SignatureNode> sigs_;  // [0]: no open range
  absl::flat_hash_map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> sig_child_;
  struct ChildMemo {
    uint32_t parent = 0, range = 0, slot = 0, sig = 0;  // sig 0: empty
  };
  static constexpr uint32_t kChildMemoShift = 24;  // 256 entries
  ChildMemo child_memo_[1u << (32 - kChildMemoShift)];
  std::vector<int32_t> range_by_name_;  // name (below 2^24) → range last found for it, or −1
  // Instances of a range per thread (RangeSeries::instances_by_tid), counted here by (range,
  // thread), direct-mapped, and added to the map when another pair takes the entry or at
  // Finish(): a hash map increment per pop cost as much as the rest of it.
  struct PendingInstances {
    uint32_t range = 0, tid = 0;
    uint64_t n = 0;  // 0: empty
  };
  static constexpr size_t kPendingInstances = 16;
  PendingInstances pending_instances_[kPendingInstances];
  void CountInstance(uint32_t range, uint32_t tid) {
    PendingInstances& p = pending_instances_[(range * 31 + tid) & (kPendingInstances - 1)];
    if (p.range == range && p.tid == tid) [[likely]] {
      ++p.n;
      return;
    }
    FlushInstances(p);
    p = {range, tid, 1};
  }
  void FlushInstances(PendingInstances& p) {
    if (p.n != 0)
      a_.ranges[p.range].instances_by_tid[p.tid] += p.n;
    p.n = 0;
  }

  std::vector<PendingLaunch> launches_;  // kLaunchWindow entries
  // Correlation ids of allocation and free callbacks, by id modulo the window: a CUPTI MEMORY2
  // record (an alloc/free event with tid 0) with one of them describes the same call again.
  static constexpr size_t kCallbackWindow = 1u << 18;
  std::vector<uint64_t> callback_corr_;
  bool SeenCallback(uint64_t corr) const {
    return corr != 0 && callback_corr_[corr & (kCallbackWindow - 1)] == corr;
  }
  void NoteCallback(uint64_t corr) {
    if (corr != 0)
      callback_corr_[corr & (kCallbackWindow - 1)] = corr;
  }
  absl::flat_hash_map<uint64_t, EarlyKernel> early_kernels_;

  // Frees by iterations lived (Aggregates::lifetime_iterations), counted here for lives of
  // −1 (unknown) to kShortLives − 1 iterations, nearly all of them, and added to the map at
  // Finish(): a std::map insertion per free cost more than the rest of the free.
  static constexpr int64_t kShortLives = 64;
  uint64_t short_lives_[kShortLives + 1] = {};  // [lived + 1]
  // Events per slot, counted here while the slot stays the same (Aggregates::events_per_slot).
  // kNone (no slot) for the allocation family, which counts nothing: Process() then leaves its
  // common case on the slot test alone, without testing the family.
  uint64_t counted_slot_ = 0;
  uint64_t counted_events_ = 0;
  // Also Aggregates::events, here rather than per event.
  void CountEvents() {
    if (counted_events_ != 0)
      SlotAdd(a_.events_per_slot, static_cast<uint32_t>(counted_slot_),
              static_cast<double>(counted_events_));
    a_.events += counted_events_;
    counted_events_ = 0;
  }

  AddressMap<uint32_t> alloc_key_index_;  // packed AllocKey → alloc_keys
  absl::flat_hash_map<uint64_t, uint32_t> handle_key_index_;
  absl::flat_hash_map<std::tuple<uint32_t, uint64_t, int32_t>, uint32_t> gauge_index_;
  DenseIndex kernel_index_, api_index_, sync_index_;
  std::vector<std::vector<int32_t>> range_api_index_, range_sync_index_, range_kernel_index_;
  absl::flat_hash_map<uint64_t, uint32_t> function_by_frame_;
  absl::flat_hash_map<std::string, uint32_t> function_index_;
};

}  // namespace cuclimb::analysis
