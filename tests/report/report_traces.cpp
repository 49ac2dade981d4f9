// SPDX-License-Identifier: Apache-2.0
// The report tests' traces (report_traces.h).
#include "report_traces.h"

#include <vector>

#include "absl/strings/str_cat.h"

namespace cuclimb::testing {

using format::EventType;
using format::HandleType;
using format::MemoryKind;
using format::SyncKind;

TraceBuilder HostileTrace(const HostileShape& shape) {
  TraceBuilder b;
  b.Process(0, 4242, kHostileCmd).text = b.Str("host<b>name</b>");
  Event& dev = b.Add(EventType::kDevice, 0);
  dev.device = 0;
  dev.name = b.Str("NVIDIA H200 <b onmouseover=alert(1)>");
  dev.size = 150ull << 30;
  dev.value = 90;
  for (auto [tid, name] : {std::pair<uint32_t, const char*>{1, "main"}, {2, kHostileThread}}) {
    Event& th = b.Add(EventType::kThread, 0);
    th.tid = tid;
    th.name = b.Str(name);
  }
  b.Create(10, HandleType::kStream, 0x10);
  const uint32_t leak_site = b.Stack({"cuMemAllocAsync", kHostileFrame, "trainer::step"});
  const uint32_t temp_site = b.Stack({"cuMemAllocAsync", "allocator::temp", "trainer::step"});
  const uint32_t loader_site = b.Stack({"cuMemAllocHost_v2", "loader::stage", "loader::run"});
  std::vector<std::string> names, kernels;
  for (int j = 0; j < shape.ranges; ++j) {
    names.push_back(j == 0   ? kHostileRange
                    : j == 1 ? kEntityRange
                    : j == 2 ? kSeparatorRange
                             : absl::StrCat("phase/", j));
    kernels.push_back(j % 3 == 0 ? absl::StrCat(kHostileKernel, j) : absl::StrCat("kernel_", j));
  }
  kernels[0] = kHostileKernel;
  int64_t t = 1000;
  uint64_t corr = 1, leaked = 0;
  const uint64_t temp_base = 0x7f0000000000, leak_base = 0x7e0000000000;
  for (int i = 0; i < shape.iterations; ++i) {
    b.Push(t, "step").value = i;
    t += 1000;
    for (int j = 0; j < shape.ranges; ++j) {
      b.Push(t, names[static_cast<size_t>(j)]);
      b.Alloc(t + 100, temp_base + static_cast<uint64_t>(j) * 0x10000, 4096u << (j % 4),
              MemoryKind::kPool, "cuMemAllocAsync", temp_site)
          .dur = 800;
      b.Launch(t + 1000, 3000, kernels[static_cast<size_t>(j)], corr);
      b.Kernel(t + 5000, 4000 + j * 10 + (i % 7), kernels[static_cast<size_t>(j)], corr);
      ++corr;
      b.Free(t + 4100, temp_base + static_cast<uint64_t>(j) * 0x10000).dur = 300;
      const int64_t extra =
          j == 0 ? static_cast<int64_t>(leaked) * shape.host_ns_per_leaked : (i * 7 + j * 13) % 900;
      b.Pop(t + 6000 + extra);
      t += 7000 + extra;
    }
    b.Alloc(t, leak_base + leaked * 0x1000, 512, MemoryKind::kPool, "cuMemAllocAsync", leak_site)
        .dur = 900;
    ++leaked;
    b.Sync(t + 100, 20000, SyncKind::kStream, "cuStreamSynchronize");
    // A loader thread stages pinned buffers (freed again) a little behind the main thread.
    b.Alloc(t + 200, 0x500000000000 + static_cast<uint64_t>(i % 4) * 0x1000, 8192,
            MemoryKind::kPinned, "cuMemAllocHost_v2", loader_site, 2);
    b.Free(t + 300, 0x500000000000 + static_cast<uint64_t>(i % 4) * 0x1000, MemoryKind::kPinned,
           "cuMemFreeHost", 2);
    b.Gauge(t + 400, "pool.reserved", static_cast<int64_t>((64ull << 20) + leaked * 512), 0xabc);
    Event& o = b.Add(EventType::kOverhead, t + 500);
    o.dur = 30000;
    o.tid = 1;
    o.value = 9000 + (i % 5) * 100;
    o.size = 220;
    if (shape.drops_every > 0 && i % shape.drops_every == shape.drops_every - 1) {
      Event& d = b.Add(EventType::kDrops, t + 600);
      d.value = 3;
      d.text = b.Str("ring_full <script>window.__pwned=1</script>");
    }
    b.Pop(t + 30000);
    t += 31000;
  }
  if (shape.drops_every > 0)
    b.set_dropped(3 * (shape.iterations / shape.drops_every));
  return b;
}

SimOptions ClimbSim(int iterations, uint64_t seed) {
  SimOptions o;
  o.iterations = iterations;
  o.steps = 2;
  o.seed = seed;
  o.leak_device = 2;
  o.host_ns_per_leaked = 300;
  return o;
}

SimOptions FlatSim(int iterations, uint64_t seed) {
  SimOptions o;
  o.iterations = iterations;
  o.steps = 2;
  o.seed = seed;
  return o;
}

}  // namespace cuclimb::testing

namespace cuclimb::testing {

TraceBuilder CreepTrace(int iterations, int sampled_every) {
  TraceBuilder b;
  b.Process(0, 777, "python creep.py");
  const uint32_t cache = b.Stack({"cuMemAllocAsync", "KVCache::grow", "Server::step", "main"});
  const uint32_t temp = b.Stack({"cuMemAllocAsync", "Workspace::take", "Server::step", "main"});
  const uint64_t base = 0x7f0000000000;
  b.Alloc(500, base, (123ull << 20) / 10, MemoryKind::kPool, "cuMemAllocAsync", temp);  // 12.3 MiB
  uint64_t corr = 0, next = base + (64ull << 20);
  int64_t t = 10'000;
  for (int i = 0; i < iterations; ++i) {
    b.Push(t, "step");
    // Jitter (deterministic), a slow host climb with the cache, a GC pause every 40 iterations.
    const int64_t jitter = ((i * 7919) % 13) * 150;
    int64_t host = 80'000 + jitter + 60 * i + (i % 40 == 39 ? 2'000'000 : 0);
    const uint64_t scratch = next += 0x100000;
    b.Alloc(t + 100, scratch, 1 << 20, MemoryKind::kPool, "cuMemAllocAsync", temp);
    for (int k = 0; k < 3; ++k) {
      b.Launch(t + 200 + k * 100, 4'000, k == 0 ? "attention" : "mlp", ++corr);
      const bool timed =
          (i > 0 && i < sampled_every && (i & (i - 1)) == 0) || i % sampled_every == 0;
      if (timed)
        b.Kernel(t + 5'000 + k * 20'000, 15'000 + 10 * i, k == 0 ? "attention" : "mlp", corr);
    }
    b.Alloc(t + 600, next += 0x1000, 4096, MemoryKind::kPool, "cuMemAllocAsync", cache);
    b.Free(t + 700, scratch);
    t += host;
    b.Pop(t);
    t += 2'000;
  }
  return b;
}

TraceBuilder TangledTrace(int iterations) {
  TraceBuilder b;
  b.Process(0, 4242, "python train.py --tangled");
  const uint32_t torch = b.Str("torch"), loader_domain = b.Str("loader");
  struct LateKernel {
    int64_t ts, dur;
    const char* name;
    uint64_t corr;
  };
  std::vector<LateKernel> late;  // the previous iteration's kernels, delivered now
  uint64_t corr = 1;
  int64_t t = 1000;
  for (int i = 0; i < iterations; ++i) {
    const int64_t step = 20000 + (i * 7919) % 3000 + (i % 50 == 49 ? 40000 : 0);
    b.Push(t, "step");
    b.Push(t + 10, "forward").domain = torch;  // torch::forward ...
    b.Push(t + 20, "prefetch");                // ... and a default-domain range inside it
    b.Pop(t + 30).domain = torch;              // torch::forward ends first: no nesting
    b.Pop(t + 40);
    // cudaLaunchKernel wraps cuLaunchKernel from the same nanosecond; the inner call ends, and
    // is recorded, first.
    const uint64_t c = corr++;
    b.Launch(t + 50, 40, "gemm", c);
    b.Api(t + 50, 100, "cudaLaunchKernel");
    b.Api(t + 150, 0, "cudaGetLastError");
    b.Alloc(t + 160, 0x7f0000000000 + 512 * static_cast<uint64_t>(i), 512);
    const uint64_t c2 = corr++;
    b.Launch(t + 200, 30, "relu", c2);
    b.Free(t + 300, 0x7f0000000000 + 512 * static_cast<uint64_t>(i));
    if (i % 10 == 0)
      b.Mark(t + 310, "checkpoint?");
    // The loader thread's own calls and a start/end range that outlives the step.
    b.Push(t + 100, "load", 2).domain = loader_domain;
    b.Sync(t + 120, 500, format::SyncKind::kStream, "cuStreamSynchronize", 2);
    Event& start = b.Add(EventType::kRangeStart, t + 630);
    start.tid = 2;
    start.addr = 1000 + static_cast<uint64_t>(i);
    start.name = b.Str("prefetch batch");
    b.Pop(t + 700, 2).domain = loader_domain;
    if (i > 0) {
      Event& end = b.Add(EventType::kRangeEnd, t + 640);  // the previous one: they overlap
      end.tid = 1;
      end.addr = 1000 + static_cast<uint64_t>(i - 1);
    }
    // Kernels of the previous iteration arrive now, the second before the first, back to back.
    for (auto it = late.rbegin(); it != late.rend(); ++it)
      b.Kernel(it->ts, it->dur, it->name, it->corr);
    late = {{t + 1000, 4000, "gemm", c}, {t + 5000, 2000, "relu", c2}};
    b.Pop(t + step);
    t += step;
  }
  b.Pop(t + 10);               // nothing open: ignored
  b.Push(t + 20, "teardown");  // never popped
  b.Api(t + 30, 50, "cuCtxSynchronize");
  return b;
}

}  // namespace cuclimb::testing
