// SPDX-License-Identifier: Apache-2.0
// The synthetic data-parallel job. Time runs on one job clock; each rank's trace writes it with
// its own clock offset, as separate processes do. An iteration is simulated in three phases:
// every rank up to its all-reduce launches (when each bucket's kernel is ready on its GPU), then
// the collectives (each finishes when the last rank's kernel has arrived), then every rank's
// optimizer step and the synchronization that reads the loss.
#include "ddp_sim.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "interposer/format/trace_format.h"
#include "sim_rng.h"
#include "trace_builder.h"

namespace cuclimb::testing {
namespace {

using format::Event;
using format::EventType;
using format::MemoryKind;

constexpr uint32_t kMain = 1, kLoader = 2, kAutograd = 3;
constexpr uint64_t kCompute = 0x10, kCopyStream = 0x20, kNcclStream = 0x30;
// CUPTI reports kernel names mangled; the analyzer demangles them.
constexpr char kAllReduce[] =
    "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE";
constexpr const char* kForward[] = {"ampere_sgemm_128x64_tn",
                                    "_ZN2at6native18elementwise_kernelILi128ELi2EEEviT1_",
                                    "ampere_sgemm_64x64_nn", "_ZN2at6native17nll_loss_forwardEv"};
constexpr double kForwardGpuNs[] = {14000, 4000, 12000, 3000};
constexpr const char* kBackward[] = {"ampere_sgemm_128x64_nt", "ampere_sgemm_64x64_tn",
                                     "_ZN2at6native26threshold_backward_kernelEv",
                                     "ampere_sgemm_128x128_nt"};
constexpr double kBackwardGpuNs[] = {30000, 26000, 6000, 32000};
constexpr char kAdam[] = "_ZN2at6native26multi_tensor_apply_kernelEv";

class RankSim {
 public:
  RankSim(const DdpOptions& job, int rank)
      : job_(job),
        o_(rank < static_cast<int>(job.rank.size()) ? job.rank[static_cast<size_t>(rank)]
                                                    : DdpRankOptions{}),
        rank_(rank),
        rng_(job.seed * 131 + static_cast<uint64_t>(rank) + 7),
        skew_(1'000'000 + static_cast<int64_t>(rank) * 7'000'003) {}

  // Phase 1: the iteration up to the all-reduce launches. Returns, per bucket, when its kernel
  // can start on this rank's GPU.
  const std::vector<int64_t>& Launches(int i);
  // Phase 3: the all-reduces finished at done[b]; the optimizer, the loss read, the rest.
  void Finish(int i, const std::vector<int64_t>& done);
  std::string Trace();

 private:
  bool Recording(int i) const {
    return i >= o_.first_iteration && (o_.last_iteration < 0 || i < o_.last_iteration);
  }
  bool Cut() const { return o_.last_iteration >= 0 && o_.last_iteration < job_.iterations; }
  bool Timed(int i) const {
    const int n = i - o_.first_iteration + 1;
    switch (job_.kernels) {
      case DdpOptions::KernelTiming::kAll:
        return true;
      case DdpOptions::KernelTiming::kOff:
        return false;
      case DdpOptions::KernelTiming::kSampled:
        return ((n & (n - 1)) == 0 && n <= job_.kernel_every) || n % job_.kernel_every == 0;
    }
    return false;
  }
  int64_t J(double ns) {
    return std::max<int64_t>(1, std::llround(ns * (1 + job_.noise * rng_.Normal())));
  }
  double HostScale(int i) const { return 1 + o_.host_drift_per_iter * i; }
  double GpuScale(int i) const { return 1 + o_.gpu_drift_per_iter * i; }

  // Events of the main thread are written as they happen; those of other threads are held and
  // written in a batch after them (the writer drains each thread's ring in turn), and GPU records
  // arrive an iteration late.
  Event& New(EventType type, int64_t t, uint32_t tid = kMain) {
    cur_ = format::MakeEvent(type);
    cur_.ts = t + skew_;
    cur_.tid = tid;
    return cur_;
  }
  void Emit() {
    if (on_)
      b_.AddEvent(cur_);
  }
  void Hold() {
    if (on_)
      side_.push_back(cur_);
  }
  void Push(std::string_view name, int64_t payload = 0) {
    New(EventType::kPush, host_).name = b_.Str(name);
    cur_.value = payload;
    Emit();
    host_ += 300;
  }
  void Pop() {
    New(EventType::kPop, host_);
    Emit();
    host_ += 300;
  }
  // A launch at `t` on thread `tid`; returns the GPU end of the kernel, which starts no earlier
  // than `after` on `stream`'s timeline `*stream_free`.
  int64_t Launch(int64_t* t, uint32_t tid, const char* kernel, double gpu_ns, uint64_t stream,
                 int64_t* stream_free, int64_t after, bool timed, bool hold) {
    Event& l = New(EventType::kLaunch, *t, tid);
    l.dur = J(4000);
    l.name = b_.Str(kernel);
    l.api = b_.Str("cuLaunchKernel");
    l.stream = stream;
    l.corr = ++corr_;
    l.grid[0] = 256;
    l.block[0] = 128;
    hold ? Hold() : Emit();
    const int64_t dur = l.dur;
    const uint64_t corr = l.corr;
    const int64_t start = std::max({*t + 3000, *stream_free, after});
    const int64_t end = start + J(gpu_ns);
    *stream_free = end;
    if (timed)
      Kernel(kernel, start, end, stream, corr);
    *t += dur + 200;
    return end;
  }
  void Kernel(const char* kernel, int64_t start, int64_t end, uint64_t stream, uint64_t corr) {
    Event& k = New(EventType::kKernel, start, 0);
    k.dur = end - start;
    k.name = b_.Str(kernel);
    k.stream = stream;
    k.corr = corr;
    k.device = rank_ % 8;
    if (on_)
      gpu_.push_back(cur_);
  }
  void Alloc(uint64_t addr, uint64_t size, uint32_t stack) {
    Event& e = New(EventType::kAlloc, host_);
    e.dur = J(9000);
    e.api = b_.Str("cuMemAlloc_v2");
    e.kind = static_cast<uint8_t>(MemoryKind::kDevice);
    e.addr = addr;
    e.size = size;
    e.device = rank_ % 8;
    e.stack = stack;
    Emit();
    host_ += e.dur + 200;
  }
  void Free(uint64_t addr) {
    Event& e = New(EventType::kFree, host_);
    e.dur = J(6000);
    e.api = b_.Str("cuMemFree_v2");
    e.kind = static_cast<uint8_t>(MemoryKind::kDevice);
    e.addr = addr;
    e.device = rank_ % 8;
    Emit();
    host_ += e.dur + 200;
  }
  void Sync(int64_t gpu_done) {
    Event& s = New(EventType::kSync, host_);
    s.dur = std::max<int64_t>(500, gpu_done - host_);
    s.kind = static_cast<uint8_t>(format::SyncKind::kStream);
    s.api = b_.Str("cuStreamSynchronize");
    s.stream = kCompute;
    Emit();
    host_ += s.dur + 200;
  }
  void Copy(format::CopyKind kind, uint64_t bytes, double ns, uint32_t tid = kMain) {
    Event& c = New(EventType::kCopy, tid == kMain ? host_ : loader_, tid);
    c.dur = J(ns);
    c.kind = static_cast<uint8_t>(kind);
    c.api =
        b_.Str(kind == format::CopyKind::kHtoD ? "cuMemcpyHtoDAsync_v2" : "cuMemcpyDtoHAsync_v2");
    c.size = bytes;
    c.stream = tid == kMain ? kCompute : kCopyStream;
    if (tid == kMain) {
      Emit();
      host_ += c.dur + 200;
    } else {
      Hold();
    }
  }
  void Prologue();
  void Epilogue();
  void Flush() {
    if (!on_) {  // not recording (yet, or any more): nothing reaches the trace
      side_.clear();
      gpu_.clear();
      late_.clear();
      return;
    }
    for (const Event& e : side_) b_.AddEvent(e);
    side_.clear();
    for (const Event& e : late_) b_.AddEvent(e);
    late_ = std::move(gpu_);
    gpu_.clear();
  }

  const DdpOptions& job_;
  const DdpRankOptions o_;
  const int rank_;
  SimRng rng_;
  const int64_t skew_;
  TraceBuilder b_;
  Event cur_{};
  bool on_ = false, started_ = false;
  int64_t host_ = 0, loader_ = 0;             // main and loader thread clocks (job time)
  int64_t compute_free_ = 0, nccl_free_ = 0;  // GPU stream timelines
  uint64_t corr_ = 0;
  int64_t kept_ = 0;
  std::vector<int64_t> ready_;
  std::vector<uint64_t> nccl_corr_;
  std::vector<Event> side_, gpu_, late_;
};

void RankSim::Prologue() {
  started_ = true;
  Event& p = New(EventType::kProcess, host_, 0);
  p.value = 31000 + rank_;
  p.corr = o_.records_rank ? static_cast<uint64_t>(rank_) + 1 : 0;
  p.name = b_.Str("python train.py --ddp");
  p.text = b_.Str("node0");
  p.api = b_.Str("/usr/bin/python3.11");
  p.size = 13000;
  Emit();
  Event& d = New(EventType::kDevice, host_, 0);
  d.device = rank_ % 8;
  d.name = b_.Str("NVIDIA H200 (simulated)");
  d.text = b_.Str("GPU-00000000-0000-0000-0000-00000000000" + std::to_string(rank_ % 8));
  d.size = 150ull << 30;
  d.value = 90;
  Emit();
  for (auto [tid, name] : {std::pair<uint32_t, const char*>{kMain, "python3"},
                           {kLoader, "pt_data_pin"},
                           {kAutograd, "pt_autograd_0"}}) {
    New(EventType::kThread, host_, tid).name = b_.Str(name);
    Emit();
  }
  if (o_.first_iteration > 0)
    return;  // recording began after set-up
  // The model's parameters and NCCL's buffers and stream, for the whole run.
  const uint32_t params = b_.Stack({"cuMemAlloc_v2", "c10::cuda::CUDACachingAllocator::malloc",
                                    "py:Module.to@torch/nn/modules/module.py:1160"});
  const uint32_t nccl = b_.Stack({"cuMemAlloc_v2", "ncclCommInitRank", "py:init_process_group"});
  for (int k = 0; k < 3; ++k)
    Alloc(0x7f0000000000 + (static_cast<uint64_t>(k) << 26), 20 << 20, params);
  for (int k = 0; k < 2; ++k)
    Alloc(0x7f1000000000 + (static_cast<uint64_t>(k) << 24), 4 << 20, nccl);
  Event& s = New(EventType::kCreate, host_);
  s.dur = J(20000);
  s.kind = static_cast<uint8_t>(format::HandleType::kStream);
  s.handle = kNcclStream;
  s.api = b_.Str("cuStreamCreateWithPriority");
  Emit();
  host_ += s.dur;
}

void RankSim::Epilogue() {
  Flush();
  on_ = true;
  for (int k = 0; k < 3; ++k) Free(0x7f0000000000 + (static_cast<uint64_t>(k) << 26));
  for (int k = 0; k < 2; ++k) Free(0x7f1000000000 + (static_cast<uint64_t>(k) << 24));
  Event& s = New(EventType::kDestroy, host_);
  s.dur = J(8000);
  s.kind = static_cast<uint8_t>(format::HandleType::kStream);
  s.handle = kNcclStream;
  s.api = b_.Str("cuStreamDestroy_v2");
  Emit();
  Flush();
}

const std::vector<int64_t>& RankSim::Launches(int i) {
  on_ = Recording(i);
  if (on_ && !started_)
    Prologue();
  const bool timed = Timed(i);
  const double hs = HostScale(i), gs = GpuScale(i);
  Push("train_step", i);
  // The loader thread copied this batch while the previous step ran.
  loader_ = host_ - J(40000);
  Copy(format::CopyKind::kHtoD, 1 << 20, 5000, kLoader);
  Push("forward");
  const double extra = o_.host_ns_per_kept * static_cast<double>(kept_);
  const double gc = rng_.Uniform() < job_.gc_rate ? static_cast<double>(J(60000)) : 0;
  for (int k = 0; k < 4; ++k) {
    host_ += J(20000 * hs + extra / 4) + (k == 0 ? static_cast<int64_t>(gc) : 0);
    Launch(&host_, kMain, kForward[k], kForwardGpuNs[k] * gs, kCompute, &compute_free_, 0, timed,
           false);
  }
  if (o_.keep_per_iter > 0) {
    // losses.append(loss): the loss keeps its graph, and the caching allocator needs new segments.
    const uint32_t keep = b_.Stack({"cuMemAlloc_v2", "c10::cuda::CUDACachingAllocator::malloc",
                                    "py:train_step@train.py:88", "py:main@train.py:131"});
    for (int k = 0; k < o_.keep_per_iter; ++k) {
      Alloc(0x7f4000000000 + (static_cast<uint64_t>(rank_) << 36) +
                static_cast<uint64_t>(kept_) * (2 << 20),
            2 << 20, keep);
      ++kept_;
    }
  }
  Pop();
  // backward(): the autograd thread launches the gradient kernels and, as each bucket of
  // gradients is ready, DDP's reducer launches its all-reduce on the NCCL stream.
  Push("backward");
  int64_t a = host_ + J(2000);
  ready_.assign(static_cast<size_t>(job_.buckets), 0);
  nccl_corr_.assign(static_cast<size_t>(job_.buckets), 0);
  int bucket = 0;
  for (int k = 0; k < 4; ++k) {
    a += J(12000 * hs);
    const int64_t grads = Launch(&a, kAutograd, kBackward[k], kBackwardGpuNs[k] * gs, kCompute,
                                 &compute_free_, 0, timed, true);
    while (bucket < job_.buckets && (k + 1) * job_.buckets >= 4 * (bucket + 1)) {
      a += J(3000);
      if (job_.backend == DdpOptions::Backend::kGloo) {
        // The bucket goes to the host once its gradients are computed; then the CPU all-reduces.
        Event& c = New(EventType::kCopy, a, kAutograd);
        c.dur = std::max<int64_t>(J(5000), grads - a + 2000);
        c.kind = static_cast<uint8_t>(format::CopyKind::kDtoH);
        c.api = b_.Str("cuMemcpyDtoH_v2");
        c.size = 4 << 20;
        Hold();
        a += c.dur + 200;
        ready_[static_cast<size_t>(bucket)] = a;
        ++bucket;
        continue;
      }
      Event& l = New(EventType::kLaunch, a, kAutograd);
      l.dur = J(7000);
      l.name = b_.Str(kAllReduce);
      l.api = b_.Str("cuLaunchKernelEx");
      l.stream = kNcclStream;
      l.corr = ++corr_;
      l.grid[0] = 2;
      l.block[0] = 640;
      Hold();
      // The NCCL stream waits for the bucket's gradients (an event recorded on the compute stream).
      ready_[static_cast<size_t>(bucket)] = std::max({a + 3000, grads, nccl_free_});
      nccl_corr_[static_cast<size_t>(bucket)] = l.corr;
      a += l.dur + 200;
      ++bucket;
    }
  }
  host_ = a + J(4000);  // the engine signals the main thread
  if (job_.backend == DdpOptions::Backend::kNccl)
    Pop();  // with gloo, backward returns once the CPU all-reduces are done (Finish)
  return ready_;
}

void RankSim::Finish(int i, const std::vector<int64_t>& done) {
  const bool timed = Timed(i);
  const double hs = HostScale(i), gs = GpuScale(i);
  int64_t prev = 0;
  if (job_.backend == DdpOptions::Backend::kGloo) {
    for (size_t b = 0; b < done.size(); ++b) {
      Event& c = New(EventType::kCopy, done[b] + J(800), kAutograd);
      c.dur = J(6000);
      c.kind = static_cast<uint8_t>(format::CopyKind::kHtoD);
      c.api = b_.Str("cuMemcpyHtoD_v2");
      c.size = 4 << 20;
      Hold();
      prev = cur_.ts - skew_ + c.dur;
    }
    nccl_free_ = prev;
    host_ = std::max(host_, prev + J(4000));
    Pop();  // backward
  }
  for (size_t b = 0; b < done.size() && job_.backend == DdpOptions::Backend::kNccl; ++b) {
    // The kernel starts when this rank's bucket is ready and spins until every rank's has arrived.
    const int64_t start = std::max(ready_[b], prev);
    const int64_t end = done[b] + J(800);
    if (timed)
      Kernel(kAllReduce, start, end, kNcclStream, nccl_corr_[b]);
    prev = end;
    nccl_free_ = prev;
  }
  Push("optimizer");
  host_ += J(3000 * hs);
  for (int k = 0; k < 2; ++k) {
    host_ += J(8000 * hs);
    // The compute stream waits for the all-reduce before the update reads the gradients.
    Launch(&host_, kMain, kAdam, 9000 * gs, kCompute, &compute_free_, nccl_free_, timed, false);
  }
  Pop();
  // loss.item(): a copy to the host and a wait for everything queued.
  host_ += J(2000 * hs);
  Copy(format::CopyKind::kDtoH, 4, 3000);
  Sync(compute_free_);
  Pop();  // train_step
  if (job_.eval_every > 0 && i % job_.eval_every == job_.eval_every - 1) {
    Push("evaluate");
    for (int k = 0; k < 6; ++k) {
      host_ += J(15000 * hs);
      Launch(&host_, kMain, kForward[k % 4], kForwardGpuNs[k % 4] * gs, kCompute, &compute_free_, 0,
             timed, false);
    }
    Copy(format::CopyKind::kDtoH, 4, 3000);
    Sync(compute_free_);
    Pop();
  }
  if (job_.checkpoint_every > 0 && rank_ == 0 &&
      i % job_.checkpoint_every == job_.checkpoint_every - 1) {
    Push("checkpoint");  // torch.save on rank 0: parameters copied out and written
    for (int k = 0; k < 3; ++k) Copy(format::CopyKind::kDtoH, 20 << 20, 90000);
    host_ += J(250000);
    Pop();
  }
  Event& g = New(EventType::kGauge, host_, 0);
  g.name = b_.Str("device.free");
  g.value = (140ll << 30) - (kept_ << 21);
  g.device = rank_ % 8;
  Emit();
  Event& oh = New(EventType::kOverhead, host_);
  oh.dur = J(12000);
  oh.value = 60 * 150;
  oh.size = 60;
  Emit();
  Flush();
  host_ += J(15000 * hs);  // the data loader's next() and Python between steps
}

std::string RankSim::Trace() {
  if (!Cut())
    Epilogue();
  return b_.ToBinary(!Cut());
}

}  // namespace

std::vector<std::string> SimulateDdp(const DdpOptions& options) {
  std::vector<std::unique_ptr<RankSim>> ranks;
  for (int r = 0; r < options.ranks; ++r) ranks.push_back(std::make_unique<RankSim>(options, r));
  SimRng job(options.seed);
  std::vector<std::vector<int64_t>> ready(static_cast<size_t>(options.ranks));
  std::vector<int64_t> done(static_cast<size_t>(options.buckets));
  for (int i = 0; i < options.iterations; ++i) {
    for (int r = 0; r < options.ranks; ++r)
      ready[static_cast<size_t>(r)] = ranks[static_cast<size_t>(r)]->Launches(i);
    int64_t prev = 0;
    for (size_t b = 0; b < done.size(); ++b) {
      int64_t last = prev;
      for (const auto& rr : ready) last = std::max(last, rr[b]);
      // The ring's own transfer time once everyone is there.
      done[b] =
          last + std::max<int64_t>(1, std::llround(15000 * (1 + options.noise * job.Normal())));
      prev = done[b];
    }
    for (const auto& r : ranks) r->Finish(i, done);
  }
  std::vector<std::string> traces;
  for (const auto& r : ranks) traces.push_back(r->Trace());
  return traces;
}

}  // namespace cuclimb::testing
