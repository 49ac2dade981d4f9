// SPDX-License-Identifier: Apache-2.0
// Draining, renumbering and encoding events into chunks on the writer thread.
#include "interposer/writer/trace_writer.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>
#include <tuple>

#include <fcntl.h>
#include <unistd.h>

#include "interposer/format/event_accessors.h"

namespace cuclimb::interposer {
namespace {

using format::Event;
using format::EventType;

// A process killed with SIGKILL loses at most this much: a chunk is sealed at least this often.
constexpr int64_t kMaxChunkAgeNs = 1'000'000'000;

}  // namespace

bool TraceWriter::Begin(FileSink* sink, const format::FileHeader& header) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  sink_ = sink;
  try {
    batch_.reserve(1 << 14);
    out_.reserve(1u << 20);
  } catch (const std::bad_alloc&) {
  }
  failed_ = !sink_->WriteAll(&header, sizeof(header));
  if (!failed_)
    bytes_written_ += sizeof(header);
  return !failed_;
}

uint64_t TraceWriter::dropped_total() const {
  uint64_t total = in_.strings->failures() + in_.stacks->failures() +
                   in_.ringless_drops->load(std::memory_order_relaxed) + encode_failures_;
  const size_t n = in_.rings->count();
  for (size_t i = 0; i < n; ++i) {
    if (ThreadRing* r = in_.rings->at(i))
      total += r->dropped();
  }
  return total;
}

void InternerTables::Stack(uint32_t id, std::vector<uint64_t>* frames) const {
  const std::string_view bytes = stacks_->Get(id);
  frames->resize(bytes.size() / sizeof(uint64_t));
  std::memcpy(frames->data(), bytes.data(), frames->size() * sizeof(uint64_t));
}

void TraceWriter::Encode(const Event& ev) noexcept {
  const uint64_t failures = encoder_.definition_failures();
  if (!encoder_.Add(ev, tables_, &out_)) {
    ++encode_failures_;
    return;
  }
  // A name or stack that could not be defined is recorded as none, and counted as a drop.
  encode_failures_ += encoder_.definition_failures() - failures;
  events_written_.store(encoder_.events(), std::memory_order_relaxed);
  if (!out_.empty())
    Flush();
}

bool TraceWriter::Flush() noexcept {
  if (failed_ || out_.empty())
    return !failed_;
  failed_ = !sink_->WriteAll(out_.data(), out_.size());
  if (!failed_)
    bytes_written_ += out_.size();
  out_.clear();
  return !failed_;
}

void TraceWriter::AddThreadName(uint32_t tid, int64_t now_ns) {
  // /proc read on the writer thread: the name the program gave the thread, if any.
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/self/task/%u/comm", tid);
  char name[32] = {};
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    const ssize_t n = ::read(fd, name, sizeof(name) - 1);
    ::close(fd);
    if (n > 0)
      name[n - (name[n - 1] == '\n' ? 1 : 0)] = '\0';
  }
  Event ev = format::MakeEvent(EventType::kThread);
  ev.ts = now_ns;
  ev.tid = tid;
  ev.name = in_.strings->Intern(name, std::strlen(name));
  batch_.push_back(ev);
}

void TraceWriter::Collect(int64_t now_ns) {
  const size_t n = in_.rings->count();
  if (cursors_.size() < n)
    cursors_.resize(n);
  const int64_t period = last_drain_ns_ == 0 ? 0 : now_ns - last_drain_ns_;
  for (size_t i = 0; i < n; ++i) {
    ThreadRing* r = in_.rings->at(i);
    if (r == nullptr)
      continue;
    RingCursor& c = cursors_[i];
    const uint32_t tid = r->tid.load(std::memory_order_relaxed);
    if (tid != c.tid && tid != 0) {
      c.tid = tid;
      AddThreadName(tid, now_ns);
    }
    r->Drain([this](const Event& ev) { batch_.push_back(ev); });
    const uint64_t pushed = r->pushed();
    const int64_t self_ns = r->self_ns();
    if (pushed != c.pushed || self_ns != c.self_ns) {
      Event ev = format::MakeEvent(EventType::kOverhead);
      ev.ts = now_ns;
      ev.dur = period;
      ev.tid = tid;
      format::SetOverheadSelfNs(&ev, self_ns - c.self_ns);
      format::SetOverheadEvents(&ev, pushed - c.pushed);
      batch_.push_back(ev);
      c.pushed = pushed;
      c.self_ns = self_ns;
    }
    const uint64_t dropped = r->dropped();
    if (dropped != c.dropped) {
      Event ev = format::MakeEvent(EventType::kDrops);
      ev.ts = now_ns;
      ev.tid = tid;
      format::SetDropCount(&ev, static_cast<int64_t>(dropped - c.dropped));
      format::SetDropReason(&ev, in_.strings->Intern("ring_full", 9));
      batch_.push_back(ev);
      c.dropped = dropped;
    }
  }
  const uint64_t intern_failures = in_.strings->failures() + in_.stacks->failures();
  const uint64_t ringless = in_.ringless_drops->load(std::memory_order_relaxed);
  for (auto [count, reported, reason] :
       {std::tuple{intern_failures, &reported_intern_failures_, "intern_full"},
        std::tuple{ringless, &reported_ringless_, "no_ring"}}) {
    if (count != *reported) {
      Event ev = format::MakeEvent(EventType::kDrops);
      ev.ts = now_ns;
      format::SetDropCount(&ev, static_cast<int64_t>(count - *reported));
      format::SetDropReason(&ev, in_.strings->Intern(reason, std::strlen(reason)));
      batch_.push_back(ev);
      *reported = count;
    }
  }
  last_drain_ns_ = now_ns;
}

void TraceWriter::EncodeBatch() {
  // Rings are drained in turn, so a batch interleaves threads: order it by time, which is what
  // readers expect and what makes deltas small. Sort 16-byte keys, not 128-byte events, and skip
  // the sort when the batch is already in order (one busy thread, the common case).
  order_.clear();
  order_.reserve(batch_.size());
  bool sorted = true;
  for (uint32_t i = 0; i < batch_.size(); ++i) {
    sorted = sorted && (i == 0 || batch_[i - 1].ts <= batch_[i].ts);
    order_.push_back({batch_[i].ts, i});
  }
  if (!sorted)
    std::sort(order_.begin(), order_.end());
  for (const auto& [ts, index] : order_) Encode(batch_[index]);
  batch_.clear();
}

void TraceWriter::Drain(int64_t now_ns, bool seal) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failed_)
    return;
  try {
    Collect(now_ns);
    EncodeBatch();
    in_.rings->Recycle();
  } catch (const std::bad_alloc&) {
    // The batch could not grow: what was collected is lost; count it and carry on.
    encode_failures_ += batch_.size();
    batch_.clear();
  }
  const bool paced = now_ns - last_seal_ns_ >= kMaxChunkAgeNs;
  if (seal || paced) {
    // A flush within the second (at exit, one per drain of CUPTI's buffers) seals early.
    if (!failed_ &&
        !encoder_.SealEvents(&out_, paced ? format::SealPace::kPaced : format::SealPace::kEarly))
      ++encode_failures_;
    Flush();
    last_seal_ns_ = now_ns;
  }
}

void TraceWriter::Finish(int64_t now_ns, const char* status) noexcept {
  Drain(now_ns, /*seal=*/true);
  std::lock_guard<std::mutex> lock(mutex_);
  if (failed_)
    return;
  const std::string_view text = status != nullptr ? status : "";
  if (!encoder_.Finish(now_ns, static_cast<int64_t>(dropped_total()), text, &out_))
    return;
  Flush();
}

}  // namespace cuclimb::interposer
