// SPDX-License-Identifier: Apache-2.0
// The synthetic training loop.
#include "training_sim.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace cuclimb::testing {
namespace {

using format::Event;
using format::EventType;
using format::HandleType;
using format::MemoryKind;

constexpr uint32_t kMain = 1, kLoader = 2;
constexpr uint64_t kStream = 0x10;
constexpr uint64_t kPool = 0x5000;
constexpr uint64_t kHeap = 0x9000;
constexpr uint64_t kDeviceBase = 0x7f0000000000;

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t Next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  double Normal() {
    const double u1 = std::max(Uniform(), 1e-300), u2 = Uniform();
    return std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  uint64_t s_;
};

class Sim {
 public:
  Sim(const SimOptions& o, const SimSink& sink) : o_(o), sink_(sink), rng_(o.seed) {}

  uint64_t Run();

 private:
  int64_t J(double ns) {  // jittered duration on the machine's current speed
    return std::max<int64_t>(1, std::llround(ns * speed_ * (1 + o_.noise * rng_.Normal())));
  }
  double Speed(int i) const {
    double f = 1 + o_.drift_pct / 100 * i / std::max(o_.iterations - 1, 1);
    if (i >= o_.shift_from && i < o_.shift_until)
      f *= 1 + o_.shift_pct / 100;
    return f;
  }
  Event& New(EventType type, int64_t ts, uint32_t tid = kMain) {
    cur_ = format::MakeEvent(type);
    cur_.ts = ts;
    cur_.tid = tid;
    return cur_;
  }
  void Emit() {
    sink_.add(cur_);
    ++events_;
  }
  void Push(std::string_view name, int64_t payload = 0) {
    if (!o_.nvtx)
      return;
    New(EventType::kPush, t_).name = sink_.str(name);
    cur_.value = payload;
    Emit();
    t_ += 300;
  }
  void Pop() {
    if (!o_.nvtx)
      return;
    New(EventType::kPop, t_);
    Emit();
    t_ += 300;
  }
  uint32_t Site(std::initializer_list<std::string_view> frames) {
    return o_.stacks ? sink_.stack(frames) : 0;
  }
  void Alloc(uint64_t addr, uint64_t size, MemoryKind kind, std::string_view api, uint32_t stack) {
    Event& e = New(EventType::kAlloc, t_);
    e.dur = J(2000);
    e.api = sink_.str(api);
    e.kind = static_cast<uint8_t>(kind);
    e.addr = addr;
    e.size = size;
    e.stream = kStream;
    e.device = 0;
    e.aux = kind == MemoryKind::kPool ? kPool : 0;
    e.stack = stack;
    Emit();
    t_ += e.dur + 200;
  }
  void Free(uint64_t addr, MemoryKind kind, std::string_view api) {
    Event& e = New(EventType::kFree, t_);
    e.dur = J(1000);
    e.api = sink_.str(api);
    e.kind = static_cast<uint8_t>(kind);
    e.addr = addr;
    e.stream = kStream;
    e.device = 0;
    Emit();
    t_ += e.dur + 200;
  }
  void Handle(bool create, HandleType type, uint64_t handle, std::string_view api) {
    Event& e = New(create ? EventType::kCreate : EventType::kDestroy, t_);
    e.dur = J(3000);
    e.kind = static_cast<uint8_t>(type);
    e.handle = handle;
    e.api = sink_.str(api);
    e.device = 0;
    if (create)
      e.stack = Site({api, "cubecl_cuda::compute::server::CudaServer::create", "adam_sim::E::new"});
    Emit();
    t_ += e.dur + 200;
  }
  void Vmm(format::VmmOp op, uint64_t addr, uint64_t size, uint64_t handle, std::string_view api) {
    Event& e = New(EventType::kVmm, t_);
    e.dur = J(4000);
    e.kind = static_cast<uint8_t>(op);
    e.api = sink_.str(api);
    e.addr = addr;
    e.size = size;
    e.handle = handle;
    e.device = 0;
    if (op == format::VmmOp::kMap)
      e.stack = Site({api, "vmm_arena::grow", "adam_sim::E::new"});
    Emit();
    t_ += e.dur + 200;
  }
  void Region(bool add, uint64_t addr, uint64_t size) {
    Event& e = New(add ? EventType::kRegion : EventType::kRegionFree, t_);
    e.aux = kHeap;
    e.addr = addr;
    e.size = add ? size : 0;
    Emit();
    t_ += 500;
  }
  void Launch(std::string_view kernel, double gpu_ns) {
    Event& l = New(EventType::kLaunch, t_);
    l.dur = J(4000);
    l.name = sink_.str(kernel);
    l.stream = kStream;
    l.corr = ++corr_;
    l.api = sink_.str("cuLaunchKernel");
    Emit();
    const int64_t launch_ts = t_;
    t_ += l.dur;
    Event g = format::MakeEvent(EventType::kKernel);
    g.tid = 0;
    g.ts = std::max(launch_ts + 3000, gpu_free_);
    g.dur = J(gpu_ns);
    g.name = l.name;
    g.stream = kStream;
    g.corr = l.corr;
    g.device = 0;
    gpu_free_ = g.ts + g.dur;
    if (!GpuTimed(iteration_))
      return;  // the kernel ran, but kernel timing was off in this iteration
    if (o_.late_kernels) {
      late_.push_back(g);
    } else {
      sink_.add(g);
      ++events_;
    }
  }
  void Copy(format::CopyKind kind, uint64_t bytes) {
    Event& c = New(EventType::kCopy, t_);
    c.dur = J(5000 + static_cast<double>(bytes) / 20);
    c.kind = static_cast<uint8_t>(kind);
    c.api = sink_.str("cuMemcpyDtoH_v2");
    c.size = bytes;
    c.stream = kStream;
    Emit();
    t_ += c.dur + 200;
  }
  // CUCLIMB_KERNELS=sampled: iterations 1, 2, 4, ... below N, then every Nth.
  bool GpuTimed(int i) const {
    const int n = o_.sampled_kernels_every;
    if (n <= 1)
      return true;
    return (i > 0 && i < n && (i & (i - 1)) == 0) || i % n == 0;
  }
  int GrowSamples(int i) const { return o_.host_fn_growth * i / 10; }
  bool Leaking(int i) const {
    return i >= o_.leak_from && (o_.leak_until < 0 || i < o_.leak_until);
  }
  void Step(const char* range, int i, int kernels, double extra_host_ns);
  void Iteration(int i);
  void FlushKernels() {
    for (const Event& k : late_) {
      sink_.add(k);
      ++events_;
    }
    late_.clear();
  }

  const SimOptions& o_;
  const SimSink& sink_;
  Rng rng_;
  Event cur_{};
  uint64_t events_ = 0;
  int64_t t_ = 1'000'000;
  int64_t gpu_free_ = 0;
  uint64_t corr_ = 0;
  int iteration_ = 0;
  uint64_t next_leak_addr_ = kDeviceBase + (1ull << 36);
  uint64_t next_handle_ = 0x1000;
  int64_t live_leaked_ = 0, live_regions_ = 0;
  double speed_ = 1;
  std::vector<Event> late_, loader_;
};

void Sim::Step(const char* range, int i, int kernels, double extra_host_ns) {
  static constexpr const char* kKernels[] = {"gemm_kernel", "bias_relu_kernel",
                                             "adam_update_kernel", "loss_kernel"};
  static constexpr double kGpuNs[] = {30000, 5000, 20000, 5000};
  Push(range);
  const bool jit = i < o_.jit_warmup_iterations;
  const bool spike = o_.spike_rate > 0 && rng_.Uniform() < o_.spike_rate;
  const uint32_t temp_site =
      Site({"cuMemAllocAsync", "cubecl_runtime::memory_management::MemoryManagement::reserve",
            "adam_sim::Net::step"});
  for (int k = 0; k < kernels; ++k) {
    double gap = 15000 + extra_host_ns / kernels;
    if (jit)
      gap *= 5;
    if (spike && k == 0)
      gap *= 5;
    t_ += J(gap);
    if (k == 1) {  // a temporary, allocated and freed inside the step
      Alloc(kDeviceBase + 0x8000000, 4096, MemoryKind::kPool, "cuMemAllocAsync", temp_site);
    }
    double gpu = kGpuNs[k % 4];
    if (k % 4 == 2)
      gpu += o_.gpu_slowdown_ns * i;
    Launch(kKernels[k % 4], gpu);
    if (k == 1)
      Free(kDeviceBase + 0x8000000, MemoryKind::kPool, "cuMemFreeAsync");
  }
  // The step ends by waiting for its kernels (as an optimizer step that reads a loss would).
  Event& s = New(EventType::kSync, t_);
  s.dur = std::max<int64_t>(500, gpu_free_ - t_);
  s.kind = static_cast<uint8_t>(format::SyncKind::kStream);
  s.api = sink_.str("cuStreamSynchronize");
  s.stream = kStream;
  Emit();
  t_ += s.dur + 200;
  Pop();
}

void Sim::Iteration(int i) {
  iteration_ = i;
  speed_ = Speed(i);
  const int64_t start = t_;
  const uint64_t events_before = events_;
  if (o_.boundaries == SimOptions::Boundaries::kRange) {
    Push("iteration", i);
  } else if (o_.boundaries == SimOptions::Boundaries::kMark) {
    New(EventType::kMark, t_).name = sink_.str("iteration");
    cur_.value = i;
    Emit();
    t_ += 300;
  }
  // The ephemeral network: parameters at the same addresses every iteration (a pool reuses them).
  Push("E/init");
  const uint32_t init_site =
      Site({"cuMemAllocAsync", "cubecl_cuda::compute::storage::gpu::GpuStorage::alloc",
            "burn_core::module::Param::init", "adam_sim::E::new"});
  for (int p = 0; p < 6; ++p) {
    Alloc(kDeviceBase + 0x1000000 + p * 0x100000, 65536u << (p % 3), MemoryKind::kPool,
          "cuMemAllocAsync", init_site);
    Launch("init_uniform_kernel", 3000);
  }
  const bool leak = Leaking(i);
  int device_leaks = leak ? o_.leak_device : 0;
  if (o_.burst_every > 0 && Leaking(i))
    device_leaks = (i % o_.burst_every == 0) ? o_.burst_size : 0;
  const uint32_t retain_site =
      Site({"cuMemAllocAsync", "cubecl_runtime::memory_management::MemoryManagement::reserve",
            "burn_optim::adam::Adam::step_retain"});
  for (int k = 0; k < device_leaks; ++k) {
    Alloc(next_leak_addr_, 512, MemoryKind::kPool, "cuMemAllocAsync", retain_site);
    next_leak_addr_ += 512;
    ++live_leaked_;
  }
  const uint32_t host_site =
      Site({"cuMemAllocHost_v2", "cubecl_cuda::compute::storage::cpu::PinnedStorage::alloc",
            "adam_sim::E::new"});
  const uint32_t managed_site = Site({"cuMemAllocManaged", "adam_sim::E::managed_buffer"});
  for (int k = 0; k < (leak ? o_.leak_pinned : 0); ++k) {
    Alloc(0x500000000000 + next_handle_ * 4096, 4096, MemoryKind::kPinned, "cuMemAllocHost_v2",
          host_site);
    ++next_handle_;
  }
  for (int k = 0; k < (leak ? o_.leak_managed : 0); ++k) {
    Alloc(0x600000000000 + next_handle_ * 0x100000, 1 << 20, MemoryKind::kManaged,
          "cuMemAllocManaged", managed_site);
    ++next_handle_;
  }
  for (int k = 0; k < (leak ? o_.leak_vmm : 0); ++k) {
    const uint64_t h = ++next_handle_;
    Vmm(format::VmmOp::kCreate, 0, 2 << 20, h, "cuMemCreate");
    Vmm(format::VmmOp::kMap, 0x700000000000 + h * (2 << 20), 2 << 20, h, "cuMemMap");
  }
  for (int k = 0; k < (leak ? o_.leak_streams : 0); ++k)
    Handle(true, HandleType::kStream, ++next_handle_, "cuStreamCreate");
  for (int k = 0; k < (leak ? o_.leak_events : 0); ++k)
    Handle(true, HandleType::kEvent, ++next_handle_, "cuEventCreate");
  for (int k = 0; k < (leak ? o_.leak_modules : 0); ++k)
    Handle(true, HandleType::kModule, ++next_handle_, "cuModuleLoadData");
  for (int k = 0; k < (leak ? o_.leak_graphs : 0); ++k)
    Handle(true, HandleType::kGraph, ++next_handle_, "cuGraphCreate");
  for (int k = 0; k < (leak ? o_.leak_regions : 0); ++k) {
    Region(true, 0x800000000000 + static_cast<uint64_t>(live_regions_) * 512, 512);
    ++live_regions_;
  }
  if (o_.churn) {  // one of everything, returned within the iteration
    Alloc(0x500000000000, 8192, MemoryKind::kPinned, "cuMemAllocHost_v2", host_site);
    Alloc(0x600000000000, 1 << 20, MemoryKind::kManaged, "cuMemAllocManaged", managed_site);
    Vmm(format::VmmOp::kCreate, 0, 2 << 20, 0xC0DE, "cuMemCreate");
    Vmm(format::VmmOp::kMap, 0x7f8000000000, 2 << 20, 0xC0DE, "cuMemMap");
    for (HandleType h :
         {HandleType::kStream, HandleType::kEvent, HandleType::kModule, HandleType::kGraph}) {
      Handle(true, h, 0xAA00 + static_cast<uint64_t>(h), "cuChurnCreate");
    }
    Region(true, 0x8f0000000000, 4096);
  }
  Pop();
  FlushKernels();  // the previous iteration's GPU records arrive now
  const double extra = o_.host_ns_per_leaked * static_cast<double>(live_leaked_) +
                       o_.host_ns_per_region * static_cast<double>(live_regions_) +
                       o_.host_ns_per_fn_sample * GrowSamples(i);
  const int more = o_.work_growth > 0 ? i / o_.work_growth : 0;
  for (int s = 0; s < o_.steps; ++s) {
    Step("P/step", i, o_.kernels_per_step + more, extra);
    Step("E/step", i, 2, 0);
  }
  if (o_.accumulate > 1 && i % o_.accumulate == o_.accumulate - 1) {
    Push("P/opt");  // the optimizer, once per accumulation window
    t_ += J(o_.opt_ns);
    Launch("adam_update_kernel", 20000);
    Launch("zero_grad_kernel", 5000);
    Pop();
  }
  if (o_.eval_every > 0 && i % o_.eval_every == o_.eval_every - 1) {
    Push("eval");  // an evaluation pass: forward only, then a loss read back
    for (int k = 0; k < 8; ++k) {
      t_ += J(15000);
      Launch(k % 2 ? "bias_relu_kernel" : "gemm_kernel", k % 2 ? 5000 : 30000);
    }
    Copy(format::CopyKind::kDtoH, 4);
    Pop();
  }
  if (o_.checkpoint_every > 0 && i % o_.checkpoint_every == o_.checkpoint_every - 1) {
    Push("checkpoint");  // parameters copied out and serialised on the host
    for (int k = 0; k < 6; ++k) Copy(format::CopyKind::kDtoH, 1 << 20);
    t_ += J(o_.checkpoint_ns);
    Pop();
  }
  if (o_.gc_every > 0 && i % o_.gc_every == o_.gc_every / 2)
    t_ += J(o_.gc_ns);  // the interpreter stops the world: no CUDA call, no range
  // Drop the ephemeral network.
  for (int p = 0; p < 6; ++p)
    Free(kDeviceBase + 0x1000000 + p * 0x100000, MemoryKind::kPool, "cuMemFreeAsync");
  if (o_.churn) {
    Free(0x500000000000, MemoryKind::kPinned, "cuMemFreeHost");
    Free(0x600000000000, MemoryKind::kManaged, "cuMemFree_v2");
    Vmm(format::VmmOp::kUnmap, 0x7f8000000000, 2 << 20, 0, "cuMemUnmap");
    Vmm(format::VmmOp::kRelease, 0, 0, 0xC0DE, "cuMemRelease");
    for (HandleType h :
         {HandleType::kStream, HandleType::kEvent, HandleType::kModule, HandleType::kGraph}) {
      Handle(false, h, 0xAA00 + static_cast<uint64_t>(h), "cuChurnDestroy");
    }
    Region(false, 0x8f0000000000, 0);
  }
  if (o_.samples) {
    const int base = 5;
    const int grow = o_.host_fn_growth > 0 ? GrowSamples(i) : 2;
    const uint32_t loop_stack = sink_.stack({"train_loop", "main"});
    const uint32_t grow_stack = sink_.stack({"grow_fn", "train_loop", "main"});
    const int64_t span = std::max<int64_t>(t_ - start, 1);
    for (int k = 0; k < base + grow; ++k) {
      Event& e = New(EventType::kSample, start + span * k / (base + grow));
      e.stack = k < base ? loop_stack : grow_stack;
      Emit();
    }
  }
  if (o_.gauges) {
    const int64_t reserved = (64ll << 20) + o_.pool_growth_bytes * (i + 1);
    for (auto [name, value] :
         {std::pair<const char*, int64_t>{"pool.reserved", reserved}, {"pool.used", 40ll << 20}}) {
      Event& g = New(EventType::kGauge, t_, 0);
      g.name = sink_.str(name);
      g.value = value;
      g.handle = kPool;
      g.device = 0;
      Emit();
    }
    Event& f = New(EventType::kGauge, t_, 0);
    f.name = sink_.str("device.free");
    f.value = (140ll << 30) - reserved;
    f.device = 0;
    Emit();
  }
  if (o_.overhead) {
    Event& e = New(EventType::kOverhead, t_);
    e.dur = t_ - start;
    const double cost = o_.profiler_ns_per_event *
                        (1 + o_.profiler_growth_pct / 100 * i / std::max(o_.iterations - 1, 1));
    e.value = std::llround(static_cast<double>(events_ - events_before) * cost);
    e.size = events_ - events_before;
    Emit();
  }
  if (o_.loader_thread) {  // a data loader copying the next batch, written out a batch later
    Event c = format::MakeEvent(EventType::kCopy);
    c.tid = kLoader;
    c.ts = start + (t_ - start) / 2;
    c.dur = J(3000);
    c.kind = static_cast<uint8_t>(format::CopyKind::kHtoD);
    c.api = sink_.str("cuMemcpyHtoDAsync_v2");
    c.size = 1 << 16;
    c.stream = 0x20;
    loader_.push_back(c);
  }
  if (o_.boundaries == SimOptions::Boundaries::kRange)
    Pop();
  for (const Event& e : loader_) {
    sink_.add(e);
    ++events_;
  }
  loader_.clear();
  t_ += J(50000);
}

uint64_t Sim::Run() {
  Event& p = New(EventType::kProcess, 0, 0);
  p.value = 4242;
  p.name = sink_.str("adam_sim --mode climb");
  p.text = sink_.str("simhost");
  p.size = 13000;
  Emit();
  Event& d = New(EventType::kDevice, 0, 0);
  d.device = 0;
  d.name = sink_.str("NVIDIA H200 (simulated)");
  d.text = sink_.str("GPU-00000000-0000-0000-0000-000000000000");
  d.size = 150ull << 30;
  d.value = 90;
  Emit();
  for (auto [tid, name] : {std::pair<uint32_t, const char*>{kMain, "main"}, {kLoader, "loader"}}) {
    New(EventType::kThread, 0, tid).name = sink_.str(name);
    Emit();
  }
  // The persistent network and its stream live for the whole run.
  Handle(true, HandleType::kStream, kStream, "cuStreamCreate");
  Push("P/init");
  const uint32_t p_site =
      Site({"cuMemAllocAsync", "burn_core::module::Param::init", "adam_sim::P::new"});
  for (int k = 0; k < 6; ++k)
    Alloc(kDeviceBase + k * 0x100000, 65536u << (k % 3), MemoryKind::kPool, "cuMemAllocAsync",
          p_site);
  Pop();
  if (o_.nested_in_train)
    Push("train");
  for (int i = 0; i < o_.iterations; ++i) Iteration(i);
  if (o_.nested_in_train)
    Pop();
  FlushKernels();
  for (int k = 0; k < 6; ++k) Free(kDeviceBase + k * 0x100000, MemoryKind::kPool, "cuMemFreeAsync");
  Handle(false, HandleType::kStream, kStream, "cuStreamDestroy");
  if (o_.dropped > 0) {
    Event& e = New(EventType::kDrops, t_, 0);
    e.value = o_.dropped;
    e.text = sink_.str("ring_full");
    Emit();
  }
  return events_;
}

}  // namespace

uint64_t Simulate(const SimOptions& options, const SimSink& sink) {
  if (options.pc_stacks) {
    // PC stacks need a mapping; the module is not on this machine, so frames stay module+offset.
    Event m = format::MakeEvent(EventType::kMapping);
    m.text = sink.str("/opt/sim/libadam_sim.so");
    m.addr = 0x400000;
    m.size = 0x100000;
    sink.add(m);
    SimSink pc = sink;
    pc.stack = [&sink](std::initializer_list<std::string_view> frames) {
      // Frame i of a symbolic stack becomes 0x401000 + hash(name) % 0xf000.
      std::vector<std::string> hex;
      for (std::string_view f : frames) {
        uint64_t h = 1469598103934665603ull;
        for (char c : f) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
        char buf[32];
        std::snprintf(buf, sizeof(buf), "0x%llx",
                      static_cast<unsigned long long>(0x401000 + h % 0xf000));
        hex.emplace_back(buf);
      }
      switch (hex.size()) {
        case 2:
          return sink.stack({hex[0], hex[1]});
        case 3:
          return sink.stack({hex[0], hex[1], hex[2]});
        case 4:
          return sink.stack({hex[0], hex[1], hex[2], hex[3]});
        default:
          return sink.stack({hex[0]});
      }
    };
    Sim sim(options, pc);
    return sim.Run() + 1;
  }
  Sim sim(options, sink);
  return sim.Run();
}

void Simulate(const SimOptions& options, TraceBuilder* builder) {
  SimSink sink{[builder](std::string_view s) { return builder->Str(s); },
               [builder](std::initializer_list<std::string_view> f) { return builder->Stack(f); },
               [builder](const format::Event& e) { builder->AddEvent(e); }};
  Simulate(options, sink);
  builder->set_dropped(options.dropped);
}

std::string SimulateBinary(const SimOptions& options, bool trailer) {
  TraceBuilder b;
  Simulate(options, &b);
  return b.ToBinary(trailer);
}

}  // namespace cuclimb::testing
