// SPDX-License-Identifier: Apache-2.0
// The streaming pass: dispatch, NVTX ranges and their decomposition, launches and kernels, API
// and synchronization time, host samples, overhead and identity. Memory is in memory.cpp.
#include "series/aggregator.h"

#include <algorithm>
#include <array>

#include "interposer/format/event_accessors.h"
#include "interposer/format/trace_format.h"
#include "trace/event_kinds.h"
#include "util/saturating.h"

namespace cuclimb::analysis {

using format::EventType;
using trace::Event;

namespace {

uint64_t Pair(uint32_t a, uint32_t b) {
  return (uint64_t{a} << 32) | b;
}

}  // namespace

Aggregator::Aggregator(const trace::TraceReader* reader, Symbolizer* symbolizer,
                       uint32_t iteration_tid, uint32_t boundary_tid, Family family)
    : reader_(reader),
      symbolizer_(symbolizer),
      iteration_tid_(iteration_tid),
      boundary_tid_(boundary_tid),
      family_(family) {
  if (family != Family::kMemory)
    launches_.resize(kLaunchWindow);
  if (family != Family::kOthers)
    callback_corr_.resize(kCallbackWindow);
  if (family == Family::kMemory)
    counted_slot_ = kNone;
  sigs_.emplace_back();  // signature 0: no open range
  if (iteration_tid != 0) {
    a_.iteration_range = static_cast<int32_t>(a_.ranges.size());
    a_.ranges.emplace_back();  // name 0: the "(iteration)" pseudo range
  }
}

uint32_t DenseIndex::Add(uint32_t id, std::vector<uint32_t>* ids) {
  if (id < kDirect) {
    if (id >= direct_.size())
      direct_.resize(std::max<size_t>(id + 1, direct_.size() * 2), -1);
    int32_t& d = direct_[id];
    if (d < 0) {
      d = static_cast<int32_t>(ids->size());
      ids->push_back(id);
    }
    return static_cast<uint32_t>(d);
  }
  auto [it, inserted] = other_.try_emplace(id, static_cast<uint32_t>(ids->size()));
  if (inserted)
    ids->push_back(id);
  return it->second;
}

Aggregator::ThreadState& Aggregator::FindThread(uint32_t tid) {
  auto [it, inserted] = threads_.try_emplace(tid);
  if (inserted)
    it->second.may_help = boundary_tid_ != 0 && tid != boundary_tid_;
  last_thread_ = &it->second;  // flat_hash_map: pointers change on rehash, so re-fetch
  last_tid_ = tid;
  return *last_thread_;
}

SlotVec& Aggregator::NewPart(std::vector<Aggregates::Part>& parts,
                             std::vector<std::vector<int32_t>>& table, uint32_t range,
                             uint32_t dense, uint32_t name) {
  if (range >= table.size())
    table.resize(range + 1);
  std::vector<int32_t>& row = table[range];
  if (dense >= row.size())
    row.resize(dense + 1, -1);
  if (row[dense] < 0) {
    row[dense] = static_cast<int32_t>(parts.size());
    parts.push_back({range, name, {}});
  }
  return parts[static_cast<size_t>(row[dense])].ns;
}

uint32_t Aggregator::FindRangeIndex(uint32_t domain, uint32_t name) {
  auto [it, inserted] =
      range_index_.try_emplace(Pair(domain, name), static_cast<uint32_t>(a_.ranges.size()));
  if (inserted) {
    RangeSeries r;
    r.name = name;
    r.domain = domain;
    a_.ranges.push_back(std::move(r));
  }
  if (name < DenseIndex::kDirect) {
    if (name >= range_by_name_.size())
      range_by_name_.resize(std::max<size_t>(name + 1, range_by_name_.size() * 2), -1);
    range_by_name_[name] = static_cast<int32_t>(it->second);
  }
  return it->second;
}

uint32_t Aggregator::NewChildSignature(uint32_t parent, const OpenRange& o) {
  auto [it, inserted] = sig_child_.try_emplace(std::make_tuple(parent, o.range, o.slot),
                                               static_cast<uint32_t>(sigs_.size()));
  if (inserted)
    sigs_.push_back({parent, o.range, o.slot});
  return it->second;
}

void Aggregator::Open(ThreadState& t, OpenRange o) {
  FlushApiTime(t);
  if (t.open.size() >= kMaxOpenRanges) {
    // Pops were lost (dropped events), or the program nests without end: forget the oldest open
    // range rather than grow forever. The signatures above it keep it (re-signing all of them
    // on every push made each push cost kMaxOpenRanges new signatures); AttributeKernel() walks
    // no further than kMaxOpenRanges, so they do not grow longer either.
    ++a_.unmatched_pops;
    t.open.erase(t.open.begin());
    t.cut = true;
  }
  for (const OpenRange& p : t.open) o.dup |= p.range == o.range;
  o.sig_after = ChildSignature(Signature(t), o);
  t.open.push_back(o);
}

namespace {

// Host calls into CUDA by event type (trace::IsCudaCall), for a thread's count of them.
constexpr std::array<uint8_t, 256> kCudaCalls = [] {
  std::array<uint8_t, 256> calls{};
  for (size_t type = 0; type < calls.size(); ++type)
    calls[type] = trace::IsCudaCall(static_cast<EventType>(type)) ? 1 : 0;
  return calls;
}();

}  // namespace

void Aggregator::Process(const Event& ev, uint32_t slot) {
  // The common case calls nothing but its handler, last (a jump): no registers to save, a fifth
  // of the dispatch. Off it: a new slot (always, for the allocation family: counted_slot_ is
  // kNone), parked helper work to settle, a thread other than the last one.
  if (slot == counted_slot_ && borrowed_.empty() && (ev.tid == 0 || ev.tid == last_tid_))
      [[likely]] {
    timeline_.Advance(boundary_ts_);
    ++counted_events_;
    a_.first_ts = std::min(a_.first_ts, ev.ts);
    a_.last_ts = std::max(a_.last_ts, ev.ts);
    ThreadState* t = nullptr;
    if (ev.tid != 0) {
      t = last_thread_;
      Count(ev, t);
    }
    Dispatch(ev, t, slot);
    return;
  }
  ProcessAny(ev, slot);
}

void Aggregator::ProcessAny(const Event& ev, uint32_t slot) {
  if (family_ == Family::kMemory) {
    ProcessMemory(ev, slot);
    return;
  }
  // The previous event, if it was the boundary thread's (Count() noted its time), advances the
  // timeline now: after its handler, before this one's. Helpers' work parked until then may
  // settle.
  timeline_.Advance(boundary_ts_);
  if (!borrowed_.empty()) [[unlikely]]
    SettleBorrowed(false);
  if (slot != counted_slot_) [[unlikely]] {
    CountEvents();
    counted_slot_ = slot;
  }
  ++counted_events_;
  a_.first_ts = std::min(a_.first_ts, ev.ts);
  a_.last_ts = std::max(a_.last_ts, ev.ts);
  // The state of the event's thread, for the handlers; valid until one looks up another thread.
  ThreadState* t = nullptr;
  if (ev.tid != 0) {
    t = &Thread(ev.tid);
    Count(ev, t);
  }
  Dispatch(ev, t, slot);
}

void Aggregator::Count(const Event& ev, ThreadState* t) {
  ++t->events;
  t->cuda_calls += kCudaCalls[static_cast<uint8_t>(ev.type)];
  if (ev.tid == boundary_tid_)
    boundary_ts_ = ev.ts;  // the timeline's horizon once the handler is done (ProcessAny())
}

void Aggregator::Dispatch(const Event& ev, ThreadState* t, uint32_t slot) {
  switch (ev.type) {
    case EventType::kAlloc:
    case EventType::kFree:
      if (family_ == Family::kAll) {
        OnAllocOrFree(ev, t, slot);
      } else if (t != nullptr) {
        ApiTime(ev, t, ev.api, slot);  // tid 0: a CUPTI record, not a call
      }
      break;
    case EventType::kApi:
      ApiTime(ev, t, ev.api, slot);
      break;
    case EventType::kLaunch:
      OnLaunch(ev, t, slot);
      break;
    case EventType::kKernel:
      OnKernel(ev, slot);
      break;
    case EventType::kSync:
      SyncTime(ev, t, slot);
      break;
    case EventType::kPush:
      OnPush(ev, t, slot);
      break;
    case EventType::kPop:
      OnPop(ev, t);
      break;
    default:
      ProcessOther(ev, t, slot);
      break;
  }
}

void Aggregator::OnAllocOrFree(const Event& ev, ThreadState* t, uint32_t slot) {
  ProcessMemory(ev, slot);
  if (t != nullptr)
    ApiTime(ev, t, ev.api, slot);  // tid 0: a CUPTI record, not a call
}

void Aggregator::ProcessOther(const Event& ev, ThreadState* t, uint32_t slot) {
  switch (ev.type) {
    case EventType::kVmm:
    case EventType::kCreate:
    case EventType::kDestroy:
      if (family_ == Family::kAll)
        ProcessMemory(ev, slot);
      ApiTime(ev, t, ev.api, slot);
      break;
    case EventType::kGauge:
    case EventType::kHeap:
    case EventType::kHeapDestroy:
    case EventType::kHeapReset:
    case EventType::kRegion:
    case EventType::kRegionFree:
      if (family_ == Family::kAll)
        ProcessMemory(ev, slot);
      break;
    case EventType::kCopy:
      SlotAdd(a_.copies, slot, 1);
      SlotAdd(a_.copy_bytes, slot, static_cast<double>(ev.size));
      ApiTime(ev, t, ev.api, slot);
      break;
    case EventType::kRangeStart:
      OnRangeStart(ev, slot);
      NoteBoundaryRanges(ev);
      break;
    case EventType::kRangeEnd:
      OnRangeEnd(ev);
      NoteBoundaryRanges(ev);
      break;
    case EventType::kSample:
      OnSample(ev, slot);
      break;
    case EventType::kOverhead:
      SlotAdd(a_.overhead_ns, slot, static_cast<double>(ev.value));
      SlotAdd(a_.overhead_events, slot, static_cast<double>(ev.size));
      break;
    case EventType::kDrops:
      SlotAdd(a_.drops, slot, static_cast<double>(ev.value));
      a_.drops_by_reason[ev.text] = util::SaturatingAdd(a_.drops_by_reason[ev.text], ev.value);
      break;
    case EventType::kRecording:
      if (ev.value == 0)
        ++a_.recording_pauses;
      break;
    case EventType::kProcess:
    case EventType::kDevice:
    case EventType::kThread:
    case EventType::kMapping:
      OnIdentity(ev);
      break;
    default:
      break;
  }
}

void Aggregator::NoteBoundaryRanges(const Event& ev) {
  // Only NVTX range events change a thread's open ranges (a start/end range of the boundary
  // thread may end on another thread).
  if (boundary_tid_ == 0 || (ev.tid != boundary_tid_ && ev.type != EventType::kRangeEnd))
    return;
  const uint32_t sig = Signature(Thread(boundary_tid_));
  if (sig != boundary_sig_) {
    // That other thread's timestamps can trail the boundary thread's: keep changes in order.
    boundary_change_ts_ = std::max(boundary_change_ts_, ev.ts);
    timeline_.Change(boundary_change_ts_, sig);
    boundary_sig_ = sig;
  }
}

void Aggregator::Borrow(const Borrowed& b) {
  if (timeline_.Known(b.ts)) {
    Settle(b, timeline_.At(b.ts));
    return;
  }
  borrowed_.push_back(b);
  if (borrowed_.size() > kMaxBorrowed)
    SettleBorrowed(false);
}

void Aggregator::SettleBorrowed(bool all) {
  while (!borrowed_.empty() &&
         (all || timeline_.Known(borrowed_.front().ts) || borrowed_.size() > kMaxBorrowed)) {
    Settle(borrowed_.front(), timeline_.At(borrowed_.front().ts));
    borrowed_.pop_front();
  }
}

void Aggregator::Settle(const Borrowed& b, uint32_t sig) {
  if (b.kind == BorrowKind::kKernel) {
    AttributeKernel(sig, b.dense, b.name, static_cast<int64_t>(b.ns));
    return;
  }
  AttributeApi(sig, b.dense, b.name, b.ns);
}

void Aggregator::AttributeToSignature(uint32_t sig, SlotVec RangeSeries::*total,
                                      std::vector<Aggregates::Part>& parts,
                                      std::vector<std::vector<int32_t>>& table, uint32_t dense,
                                      uint32_t name, double dur) {
  // Outermost first, as the ranges were opened (the order parts are created in).
  uint32_t chain[kMaxOpenRanges];
  size_t n = 0;
  for (uint32_t s = sig; s != 0 && n < kMaxOpenRanges; s = sigs_[s].parent) chain[n++] = s;
  while (n > 0) {
    const SignatureNode& node = sigs_[chain[--n]];
    SlotAdd(a_.ranges[node.range].*total, node.slot, dur);
    SlotAdd(Part(parts, table, node.range, dense, name), node.slot, dur);
  }
}

void Aggregator::AttributeApi(uint32_t sig, uint32_t dense, uint32_t name, double dur) {
  AttributeToSignature(sig, &RangeSeries::api_ns, a_.range_apis, range_api_index_, dense, name,
                       dur);
}

void Aggregator::PendApiTimeMiss(PendingRangeTime& p, uint32_t sig, uint32_t dense, uint32_t name,
                                 double dur) {
  if (p.ns != 0)
    AttributeApi(p.sig, p.dense, p.name, p.ns);
  p = {sig, dense, name, 0};
  AttributeApi(sig, dense, name, dur);  // creates the parts now, in the order of a walk per call
}

void Aggregator::ApiTime(const Event& ev, ThreadState* t, uint32_t api, uint32_t slot) {
  // A known API with its series' cells hot, and its time pended by signature or going nowhere.
  if (const int32_t i = api_index_.Find(api); i >= 0) [[likely]] {
    ApiSeries& s = a_.apis[static_cast<size_t>(i)];
    double *calls, *ns;
    const double dur = static_cast<double>(std::max<int64_t>(ev.dur, 0));
    if (s.calls.HotCell(slot, &calls) && s.ns.HotCell(slot, &ns)) [[likely]] {
      // No thread's time (a GPU-side record, or no time), or that of a thread with no range
      // open that is not a helper: only the API's series.
      const bool nowhere = t == nullptr || ev.dur <= 0;
      if (nowhere || (iteration_tid_ == 0 && !Helper(*t))) [[likely]] {
        if (nowhere || t->open.empty()) {
          *calls += 1;
          *ns += dur;
          return;
        }
        const uint32_t sig = Signature(*t);
        PendingRangeTime& p = pending_apis_[PendingIndex(sig, static_cast<uint32_t>(i))];
        if (!t->cut && sig != 0 && Pendable(p, sig, static_cast<uint32_t>(i), dur)) [[likely]] {
          *calls += 1;
          *ns += dur;
          p.ns += dur;
          return;
        }
      }
    }
  }
  ApiTimeAny(ev, t, api, slot);
}

void Aggregator::ApiTimeAny(const Event& ev, ThreadState* t, uint32_t api, uint32_t slot) {
  const uint32_t i = api_index_.Get(api, &a_.api_names, &a_.apis);
  ApiSeries& s = a_.apis[i];
  SlotAdd(s.calls, slot, 1);
  const double dur = static_cast<double>(std::max<int64_t>(ev.dur, 0));
  SlotAdd(s.ns, slot, dur);
  if (t == nullptr || dur == 0)
    return;
  if (iteration_tid_ != 0 || Helper(*t)) [[unlikely]] {
    ApiTimeOffRanges(ev, *t, i, api, slot, dur);
    return;
  }
  PendApiTime(*t, i, api, dur);
}

void Aggregator::ApiTimeOffRanges(const Event& ev, ThreadState& t, uint32_t i, uint32_t api,
                                  uint32_t slot, double dur) {
  const bool helper = Helper(t);
  if (iteration_tid_ != 0 && (ev.tid == iteration_tid_ || helper)) {
    const auto r = static_cast<uint32_t>(a_.iteration_range);
    SlotAdd(a_.ranges[r].api_ns, slot, dur);
    SlotAdd(Part(a_.range_apis, range_api_index_, r, i, api), slot, dur);
  }
  if (helper) {
    Borrow({ev.ts, dur, i, api, BorrowKind::kApi});
    return;
  }
  PendApiTime(t, i, api, dur);
}

void Aggregator::PendThreadApiTime(ThreadState& t, uint32_t dense, uint32_t name, double dur) {
  for (PendingApiTime& p : t.pending_api) {
    if (p.dense == dense) {
      p.ns += dur;
      return;
    }
  }
  if (t.pending_api.size() >= kMaxPendingApis)
    FlushApiTime(t);
  AddApiTime(t, dense, name, dur);  // creates the parts now, in the order of a walk per call
  t.pending_api.push_back({dense, name, 0});
}

void Aggregator::AddApiTime(const ThreadState& t, uint32_t dense, uint32_t name, double dur) {
  for (const OpenRange& o : t.open) {
    if (o.dup)
      continue;
    SlotAdd(a_.ranges[o.range].api_ns, o.slot, dur);
    SlotAdd(Part(a_.range_apis, range_api_index_, o.range, dense, name), o.slot, dur);
  }
}

void Aggregator::FlushPendingApiTime(ThreadState& t) {
  for (const PendingApiTime& p : t.pending_api) {
    if (p.ns != 0)
      AddApiTime(t, p.dense, p.name, p.ns);
  }
  t.pending_api.clear();
}

void Aggregator::SyncTime(const Event& ev, ThreadState* t, uint32_t slot) {
  const uint32_t i = sync_index_.Get(ev.api, &a_.sync_names, &a_.syncs);
  const double dur = static_cast<double>(std::max<int64_t>(ev.dur, 0));
  SlotAdd(a_.syncs[i].calls, slot, 1);
  SlotAdd(a_.syncs[i].ns, slot, dur);
  if (t == nullptr || dur == 0)
    return;
  // Waits count only on their own thread: a helper waiting for its own stream (a loader's copy)
  // while the iteration thread works would read as the iteration thread's wait.
  if (ev.tid == iteration_tid_) {
    const auto r = static_cast<uint32_t>(a_.iteration_range);
    SlotAdd(a_.ranges[r].sync_ns, slot, dur);
    SlotAdd(Part(a_.range_syncs, range_sync_index_, r, i, ev.api), slot, dur);
  }
  if (t->open.empty())
    return;
  // By signature, as API time (PendApiTime()): the signature's ranges are the thread's open ones
  // but the duplicates, unless it forgot one.
  if (!t->cut) [[likely]] {
    const uint32_t sig = Signature(*t);
    if (sig == 0)
      return;
    PendingRangeTime& p = pending_syncs_[PendingIndex(sig, i)];
    if (Pendable(p, sig, i, dur)) [[likely]] {
      p.ns += dur;
      return;
    }
    if (p.ns != 0)
      AttributeSync(p.sig, p.dense, p.name, p.ns);
    p = {sig, i, ev.api, 0};
    AttributeSync(sig, i, ev.api, dur);  // creates the parts now, in the order of a walk per call
    return;
  }
  for (const OpenRange& o : t->open) {
    if (o.dup)
      continue;
    SlotAdd(a_.ranges[o.range].sync_ns, o.slot, dur);
    SlotAdd(Part(a_.range_syncs, range_sync_index_, o.range, i, ev.api), o.slot, dur);
  }
}

void Aggregator::AttributeSync(uint32_t sig, uint32_t dense, uint32_t name, double dur) {
  AttributeToSignature(sig, &RangeSeries::sync_ns, a_.range_syncs, range_sync_index_, dense, name,
                       dur);
}

void Aggregator::OnPush(const Event& ev, ThreadState* thread, uint32_t slot) {
  ThreadState& t = thread != nullptr ? *thread : Thread(0);
  OpenRange o;
  o.range = RangeIndex(ev.domain, ev.name);
  // The same range still open from an earlier iteration: its pop was lost (dropped events), as
  // ranges do not recurse across iterations. End it, and what was opened inside it, here.
  for (size_t i = 0; i < t.open.size(); ++i) {
    const OpenRange& p = t.open[i];
    if (p.range == o.range && !p.dup && p.id == ~uint64_t{0} && p.slot != 0 &&
        (p.slot - 1) / 2 != (slot - 1) / 2) {
      while (t.open.size() > i) {
        ++a_.unmatched_pops;
        CloseRange(t, t.open.size() - 1, ev.ts);
      }
      break;
    }
  }
  o.slot = slot;
  o.start = ev.ts;
  o.domain = ev.domain;
  Open(t, o);
  NoteBoundaryRanges(ev);
}

void Aggregator::CloseRange(ThreadState& t, size_t index, int64_t end_ts, bool count) {
  FlushApiTime(t);
  const OpenRange o = t.open[index];
  if (index + 1 == t.open.size()) [[likely]] {
    t.open.pop_back();  // the top one: no signature above it to change
  } else {
    t.open.erase(t.open.begin() + static_cast<std::ptrdiff_t>(index));
    // Closing a range below the top (start/end ranges do that) changes the signatures above it.
    for (size_t j = index; j < t.open.size(); ++j) {
      t.open[j].sig_after = ChildSignature(j == 0 ? 0 : t.open[j - 1].sig_after, t.open[j]);
    }
  }
  if (o.dup || !count)
    return;
  RangeSeries& r = a_.ranges[o.range];
  SlotAdd(r.total_ns, o.slot,
          static_cast<double>(std::max<int64_t>(util::SaturatingSub(end_ts, o.start), 0)));
  SlotAdd(r.count, o.slot, 1);
}

void Aggregator::OnPop(const Event& ev, ThreadState* thread) {
  ThreadState& t = thread != nullptr ? *thread : Thread(0);
  bool matched = false;
  for (size_t i = t.open.size(); i-- > 0;) {
    if (t.open[i].id == ~uint64_t{0} && t.open[i].domain == ev.domain) {
      CountInstance(t.open[i].range, ev.tid);
      CloseRange(t, i, ev.ts);
      matched = true;
      break;
    }
  }
  if (!matched)
    ++a_.unmatched_pops;
  NoteBoundaryRanges(ev);
}

void Aggregator::OnRangeStart(const Event& ev, uint32_t slot) {
  ThreadState& t = Thread(ev.tid);
  OpenRange o;
  o.range = RangeIndex(ev.domain, ev.name);
  o.slot = slot;
  o.start = ev.ts;
  o.domain = ev.domain;
  o.id = ev.addr;
  Open(t, o);
  start_end_[ev.addr] = ev.tid;
}

void Aggregator::OnRangeEnd(const Event& ev) {
  auto it = start_end_.find(ev.addr);
  if (it == start_end_.end()) {
    ++a_.unmatched_pops;
    return;
  }
  const uint32_t tid = it->second;
  start_end_.erase(it);
  ThreadState& t = Thread(tid);
  for (size_t i = t.open.size(); i-- > 0;) {
    if (t.open[i].id == ev.addr) {
      CountInstance(t.open[i].range, tid);
      CloseRange(t, i, ev.ts);
      return;
    }
  }
}

void Aggregator::OnLaunch(const Event& ev, ThreadState* t, uint32_t slot) {
  // A known kernel with its cell hot, launched off a helper thread, no kernel record waiting;
  // then the API call (ApiTime() last: a jump).
  if (const int32_t k = kernel_index_.Find(ev.name); k >= 0) [[likely]] {
    double* launches;
    if (a_.kernels[static_cast<size_t>(k)].launches.HotCell(slot, &launches) &&
        early_kernels_.empty() && (t == nullptr || !Helper(*t))) [[likely]] {
      *launches += 1;
      if (ev.corr != 0) {
        PendingLaunch& p = launches_[ev.corr & (kLaunchWindow - 1)];
        p.corr = ev.corr;
        p.ts = ev.ts;
        p.sig = t != nullptr ? Signature(*t) : 0;
        p.slot = slot;
        p.kernel = ev.name;
        p.graph = ev.handle != 0;
        p.on_iteration_thread = t != nullptr && iteration_tid_ != 0 && ev.tid == iteration_tid_;
      }
      ApiTime(ev, t, ev.api != 0 ? ev.api : kLaunchApiId, slot);
      return;
    }
  }
  OnLaunchAny(ev, t, slot);
}

void Aggregator::OnLaunchAny(const Event& ev, ThreadState* t, uint32_t slot) {
  NoteLaunch(ev, t, slot);
  ApiTime(ev, t, ev.api != 0 ? ev.api : kLaunchApiId, slot);
}

void Aggregator::NoteLaunch(const Event& ev, const ThreadState* t, uint32_t slot) {
  const uint32_t k = KernelIndex(ev.name);
  SlotAdd(a_.kernels[k].launches, slot, 1);
  if (ev.corr == 0)
    return;
  uint32_t sig = 0;
  bool helper = false;
  if (t != nullptr) {
    helper = Helper(*t);
    sig = helper ? (timeline_.Known(ev.ts) ? timeline_.At(ev.ts) : kUnsettled) : Signature(*t);
  }
  const bool on_iteration_thread =
      ev.tid != 0 && iteration_tid_ != 0 && (ev.tid == iteration_tid_ || helper);
  if (!early_kernels_.empty()) {
    if (auto early = early_kernels_.find(ev.corr); early != early_kernels_.end()) {
      const uint32_t ek = KernelIndex(early->second.kernel);
      if (sig == kUnsettled) {
        Borrow({ev.ts, static_cast<double>(early->second.dur), ek, early->second.kernel,
                BorrowKind::kKernel});
      } else {
        AttributeKernel(sig, ek, early->second.kernel, early->second.dur);
      }
      if (on_iteration_thread)
        AttributeIteration(slot, ek, early->second.kernel, early->second.dur);
      early_kernels_.erase(early);
      if (ev.handle == 0)
        return;
    }
  }
  PendingLaunch& p = launches_[ev.corr & (kLaunchWindow - 1)];
  p.corr = ev.corr;
  p.ts = ev.ts;
  p.sig = sig;
  p.slot = slot;
  p.kernel = ev.name;
  p.graph = ev.handle != 0;
  p.on_iteration_thread = on_iteration_thread;
}

void Aggregator::AttributeKernel(uint32_t sig, uint32_t dense, uint32_t kernel, int64_t dur) {
  AttributeToSignature(sig, &RangeSeries::gpu_ns, a_.range_kernels, range_kernel_index_, dense,
                       kernel, static_cast<double>(std::max<int64_t>(dur, 0)));
}

void Aggregator::PendKernelTimeMiss(PendingRangeTime& p, uint32_t sig, uint32_t dense,
                                    uint32_t kernel, int64_t dur) {
  if (p.ns != 0)
    AttributeKernel(p.sig, p.dense, p.name, static_cast<int64_t>(p.ns));
  p = {sig, dense, kernel, 0};
  AttributeKernel(sig, dense, kernel, dur);  // creates the parts now, in the order of a walk
}

void Aggregator::FlushRangeTime() {
  for (PendingRangeTime& p : pending_kernels_) {
    if (p.ns != 0)
      AttributeKernel(p.sig, p.dense, p.name, static_cast<int64_t>(p.ns));
    p = {};
  }
  for (PendingRangeTime& p : pending_apis_) {
    if (p.ns != 0)
      AttributeApi(p.sig, p.dense, p.name, p.ns);
    p = {};
  }
  for (PendingRangeTime& p : pending_syncs_) {
    if (p.ns != 0)
      AttributeSync(p.sig, p.dense, p.name, p.ns);
    p = {};
  }
}

void Aggregator::AttributeIteration(uint32_t slot, uint32_t dense, uint32_t kernel, int64_t dur) {
  const auto r = static_cast<uint32_t>(a_.iteration_range);
  const double d = static_cast<double>(std::max<int64_t>(dur, 0));
  SlotAdd(a_.ranges[r].gpu_ns, slot, d);
  SlotAdd(Part(a_.range_kernels, range_kernel_index_, r, dense, kernel), slot, d);
}

void Aggregator::OnKernel(const Event& ev, uint32_t slot) {
  // The common case, tested before anything is written and done without a call (so without
  // registers to save, a sixth of the handler): a known kernel whose launch waits, settled and
  // off the iteration thread, with its (signature, kernel) pair pending and its series' cells on
  // their hot pages. The effects are those of OnKernelAny(), which does everything else.
  const int32_t k = kernel_index_.Find(ev.name);
  PendingLaunch& launch = launches_[ev.corr & (kLaunchWindow - 1)];
  if (k >= 0 && ev.corr != 0 && launch.corr == ev.corr && launch.sig != kUnsettled &&
      !launch.on_iteration_thread) [[likely]] {
    KernelSeries& s = a_.kernels[static_cast<size_t>(k)];
    double *executions, *gpu_ns;
    const double d = static_cast<double>(std::max<int64_t>(ev.dur, 0));
    PendingRangeTime& p = pending_kernels_[PendingIndex(launch.sig, static_cast<uint32_t>(k))];
    if (s.executions.HotCell(launch.slot, &executions) && s.gpu_ns.HotCell(launch.slot, &gpu_ns) &&
        (launch.sig == 0 || Pendable(p, launch.sig, static_cast<uint32_t>(k), d))) [[likely]] {
      if (launch.sig != 0)
        p.ns += d;
      if (!launch.graph)
        launch.corr = 0;
      *executions += 1;
      *gpu_ns += d;
      return;
    }
  }
  OnKernelAny(ev, slot);
}

void Aggregator::OnKernelAny(const Event& ev, uint32_t slot) {
  const uint32_t k = KernelIndex(ev.name);
  uint32_t kslot = slot;
  PendingLaunch* launch = ev.corr != 0 ? FindLaunch(ev.corr) : nullptr;
  if (launch != nullptr) {
    kslot = launch->slot;             // GPU time belongs to the iteration that launched the kernel
    if (launch->sig == kUnsettled) {  // a helper's launch whose ranges were not known yet
      Borrow({launch->ts, static_cast<double>(std::max<int64_t>(ev.dur, 0)), k, ev.name,
              BorrowKind::kKernel});
    } else {
      PendKernelTime(launch->sig, k, ev.name, ev.dur);
    }
    if (launch->on_iteration_thread)
      AttributeIteration(launch->slot, k, ev.name, ev.dur);
    if (!launch->graph)
      launch->corr = 0;
  } else if (ev.corr != 0 && early_kernels_.size() < (1u << 20)) {
    early_kernels_[ev.corr] = {ev.dur, ev.name};
  } else {
    ++a_.unmatched_kernels;
  }
  KernelSeries& s = a_.kernels[k];
  SlotAdd(s.executions, kslot, 1);
  SlotAdd(s.gpu_ns, kslot, static_cast<double>(std::max<int64_t>(ev.dur, 0)));
}

void Aggregator::OnSample(const Event& ev, uint32_t slot) {
  SlotAdd(a_.samples, slot, 1);
  const auto frames = reader_->stacks().Get(ev.stack);
  if (frames.empty())
    return;
  host_functions_.Observe(ev.stack, frames, slot, *symbolizer_, reader_->strings());
  auto [it, inserted] = function_by_frame_.try_emplace(frames[0], 0);
  if (inserted) {
    const std::string fn = symbolizer_->Resolve(frames[0], reader_->strings()).function;
    auto [fit, fnew] = function_index_.try_emplace(fn, static_cast<uint32_t>(a_.functions.size()));
    if (fnew) {
      a_.functions.push_back(fn);
      a_.function_samples.emplace_back();
    }
    it->second = fit->second;
  }
  SlotAdd(a_.function_samples[it->second], slot, 1);
}

void Aggregator::OnIdentity(const Event& ev) {
  switch (ev.type) {
    case EventType::kProcess:
      if (!a_.process.seen) {
        a_.process.seen = true;
        a_.process.pid = format::ProcessPid(ev);
        a_.process.rank = format::ProcessRank(ev);
        a_.process.cmd = ev.name;
        a_.process.host = ev.text;
        a_.process.exe = ev.api;
        a_.process.driver = format::ProcessDriverVersion(ev);
        a_.process.cupti = format::ProcessCuptiVersion(ev);
      }
      break;
    case EventType::kDevice: {
      DeviceRecord d{ev.device, ev.name, ev.text, ev.size, ev.value};
      bool known = false;
      for (const DeviceRecord& e : a_.devices) known |= e.ordinal == d.ordinal;
      if (!known)
        a_.devices.push_back(d);
      break;
    }
    case EventType::kThread:
      a_.threads[ev.tid].name = ev.name;
      break;
    case EventType::kMapping:
      a_.mappings.push_back({ev.text, ev.addr, ev.size, ev.aux});
      symbolizer_->AddMapping(std::string(reader_->Str(ev.text)), ev.addr, ev.size, ev.aux,
                              std::string(reader_->Str(ev.name)));
      break;
    default:
      break;
  }
}

void Aggregator::Finish() {
  // What ProcessAny() would have done after the last event.
  timeline_.Advance(boundary_ts_);
  if (!borrowed_.empty())
    SettleBorrowed(false);
  CountEvents();
  FlushRangeTime();
  for (PendingInstances& p : pending_instances_) FlushInstances(p);
  for (int64_t i = 0; i <= kShortLives; ++i) {
    if (short_lives_[i] != 0)
      a_.lifetime_iterations[static_cast<int>(i - 1)] += short_lives_[i];
    short_lives_[i] = 0;
  }
  SettleBorrowed(true);
  // Ranges still open at the end are cut by the end of the trace: not counted.
  for (auto& [tid, t] : threads_) {
    FlushApiTime(t);
    t.open.clear();
    if (t.events != 0) {
      ThreadRecord& r = a_.threads[tid];
      r.events += t.events;
      r.cuda_calls += t.cuda_calls;
      t.events = t.cuda_calls = 0;
    }
  }
  launches_ = std::vector<PendingLaunch>();
  early_kernels_.clear();
}

}  // namespace cuclimb::analysis
