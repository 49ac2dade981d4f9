// SPDX-License-Identifier: Apache-2.0
// Host functions that can be acted on: a PyTorch-like loop that registers one more gradient hook
// per iteration, sampled at 1 kHz. The leaf of the growing samples is the C library (unsymbolized,
// as on the H200 where the recorded libc is not on the analysis machine); the accumulator must be
// the autograd hook dispatch, or the hook's Python line when that carries the growth; a loop
// with a constant number of hooks is the control.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "scenario_util.h"
#include "writer_order.h"

// Native frames of the "framework", symbolized from this test's own binary.
namespace torch::autograd {
int call_tensor_pre_hooks(int x);
int evaluate_function(int x);
int thread_main(int x);
__attribute__((noinline)) int call_tensor_pre_hooks(int x) {
  asm volatile("" ::: "memory");
  return x + 1;
}
__attribute__((noinline)) int evaluate_function(int x) {
  asm volatile("" ::: "memory");
  return x + 2;
}
__attribute__((noinline)) int thread_main(int x) {
  asm volatile("" ::: "memory");
  return x + 3;
}
}  // namespace torch::autograd

namespace cuclimb::testing {
namespace {

using analysis::Accumulator;
using analysis::Report;

constexpr uint32_t kMain = 1, kAutograd = 3;
constexpr uint64_t kLibc = 0x7f3a00000000, kPython = 0x400000;

struct HookLoop {
  int iterations = 300;
  bool hook_per_iteration = true;  // false: one hook all along (the control)
  double lambda_share = 0.3;       // of the hooks' samples, those inside the hook's Python code
  uint64_t seed = 7;
};

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed * 0x9E3779B97F4A7C15ull + 3) {}
  double Uniform() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  }

 private:
  uint64_t s_;
};

std::string Hex(uint64_t pc) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(pc));
  return buf;
}

std::string Pc(int (*fn)(int)) {
  return Hex(reinterpret_cast<uint64_t>(fn) + 4);
}

std::string Build(const HookLoop& h) {
  TraceBuilder b;
  std::vector<format::Event> events;
  auto map = [&](const std::string& path, uint64_t base, uint64_t size, uint64_t offset) {
    format::Event m = format::MakeEvent(format::EventType::kMapping);
    m.text = b.Str(path);
    m.addr = base;
    m.size = size;
    m.aux = offset;
    events.push_back(m);
  };
  map("/opt/h200/lib/x86_64-linux-gnu/libc.so.6", kLibc, 0x200000, 0);  // not on this machine
  map("/opt/h200/usr/bin/python3.12", kPython, 0x800000, 0);
  char exe[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (n > 0 && std::getline(maps, line)) {
    unsigned long lo = 0, hi = 0, off = 0;
    if (line.find(exe) != std::string::npos &&
        std::sscanf(line.c_str(), "%lx-%lx %*s %lx", &lo, &hi, &off) == 3)
      map(exe, lo, hi - lo, off);
  }
  const std::string py_eval = Hex(kPython + 0x1725b2), py_call = Hex(kPython + 0x15ef9),
                    py_gc = Hex(kPython + 0x19e0ff), py_main = Hex(kPython + 0x2b4e3a);
  const std::string libc_leaf = Hex(kLibc + 0x98e50), libc_malloc = Hex(kLibc + 0xabb19),
                    libc_thread = Hex(kLibc + 0x94ac3);
  const std::string dispatch = Pc(&torch::autograd::call_tensor_pre_hooks),
                    engine = Pc(&torch::autograd::evaluate_function),
                    engine_main = Pc(&torch::autograd::thread_main);
  const uint32_t forward_stack = b.Stack({libc_malloc, py_eval, "py:forward@model.py:31", py_eval,
                                          "py:main@torch_train.py:88", py_main});
  const uint32_t backward_stack = b.Stack({libc_malloc, engine, engine_main, libc_thread});
  const uint32_t hook_stack =
      b.Stack({libc_leaf, py_call, dispatch, engine, engine_main, libc_thread});
  const uint32_t lambda_stack = b.Stack({libc_leaf, py_eval, "py:<lambda>@torch_train.py:104",
                                         py_call, dispatch, engine, engine_main, libc_thread});
  const uint32_t gc_stack = b.Stack({libc_malloc, py_gc, "py:main@torch_train.py:88", py_main});

  Rng rng(h.seed);
  int64_t t = 5'000'000;
  uint64_t corr = 0;
  auto add = [&](format::EventType type, int64_t ts, uint32_t tid) -> format::Event& {
    events.push_back(format::MakeEvent(type));
    events.back().ts = ts;
    events.back().tid = tid;
    return events.back();
  };
  auto push = [&](const char* name, int64_t ts) {
    add(format::EventType::kPush, ts, kMain).name = b.Str(name);
  };
  auto pop = [&](int64_t ts) { add(format::EventType::kPop, ts, kMain); };
  auto launch = [&](int64_t ts, uint32_t tid, const char* kernel) {
    format::Event& l = add(format::EventType::kLaunch, ts, tid);
    l.dur = 3000 + static_cast<int64_t>(2000 * rng.Uniform());
    l.name = b.Str(kernel);
    l.api = b.Str("cuLaunchKernel");
    l.corr = ++corr;
  };
  // Samples at 1 kHz with jitter, over [from, to), of `stack` on `tid`.
  auto sample = [&](int64_t from, int64_t to, uint32_t tid, auto pick) {
    for (int64_t s = from + static_cast<int64_t>(1'000'000 * rng.Uniform()); s < to;
         s += 800'000 + static_cast<int64_t>(400'000 * rng.Uniform())) {
      add(format::EventType::kSample, s, tid).stack = pick();
    }
  };
  for (int i = 0; i < h.iterations; ++i) {
    const int hooks = h.hook_per_iteration ? i + 1 : 1;
    const bool gc = i % 50 == 49;  // a collection every 50 iterations
    push("iteration", t);
    const int64_t fwd_end = t + 6'000'000 + static_cast<int64_t>(600'000 * rng.Uniform());
    push("A/fwd", t + 10'000);
    for (int k = 0; k < 8; ++k) launch(t + 20'000 + k * 500'000, kMain, "gemm_kernel");
    sample(t, fwd_end, kMain, [&] { return forward_stack; });
    pop(fwd_end);
    // Backward on the autograd thread while the main thread waits in A/bwd; each hook costs
    // about 12 µs of interpreter and allocator work.
    push("A/bwd", fwd_end + 10'000);
    const int64_t bwd_start = fwd_end + 40'000;
    const int64_t grads_end = bwd_start + 3'000'000 + static_cast<int64_t>(300'000 * rng.Uniform());
    for (int k = 0; k < 8; ++k) launch(bwd_start + k * 350'000, kAutograd, "gemm_grad_kernel");
    sample(bwd_start, grads_end, kAutograd, [&] { return backward_stack; });
    const int64_t hooks_end =
        grads_end + hooks * (12'000 + static_cast<int64_t>(1000 * rng.Uniform()));
    sample(grads_end, hooks_end, kAutograd,
           [&] { return rng.Uniform() < h.lambda_share ? lambda_stack : hook_stack; });
    pop(hooks_end + 30'000);
    int64_t end = hooks_end + 1'000'000;
    if (gc) {
      sample(end, end + 20'000'000, kMain, [&] { return gc_stack; });
      end += 20'000'000;
    }
    pop(end);
    t = end + 200'000;
  }
  // The writer hands the threads' events over in batches.
  WriterOrder order(4'000'000, h.seed, [&b](const format::Event& e) { b.AddEvent(e); });
  for (const format::Event& e : events) order.Add(e);
  order.Flush();
  return b.ToBinary();
}

Report Analyze(const HookLoop& h) {
  const std::string bytes = Build(h);
  auto r = analysis::AnalyzeBuffers({bytes}, {"hooks.trace"}, {});
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *std::move(r) : Report{};
}

TEST(HostFunctions, TheHookDispatchNotTheLibcLeaf) {
  const Report r = Analyze(HookLoop{});
  const Accumulator* a = FindKind(r, "host_function");
  ASSERT_NE(a, nullptr) << Text(r);
  EXPECT_EQ(a->key, "torch::autograd::call_tensor_pre_hooks(int)") << Text(r);
  for (const Accumulator& other : r.accumulators)  // one name for the chain, never the leaf
    EXPECT_TRUE(other.kind != "host_function" || &other == a) << other.key;
  EXPECT_GT(a->growth_per_iter, 0.005);
  ASSERT_FALSE(a->site.frames.empty());
  // The evidence keeps the whole stack, the leaf included.
  EXPECT_EQ(a->site.frames[0].rfind("libc.so.6+0x98e50", 0), 0u) << a->site.frames[0];
  EXPECT_EQ(a->site.label, a->key);
  const auto* leaf = FindState(r.ranks[0], "samples", "function", "libc.so.6+0x98e50");
  ASSERT_NE(leaf, nullptr);  // the leaf's own series is still there
  const auto* inclusive = FindState(r.ranks[0], "inclusive_samples", "function", a->key);
  ASSERT_NE(inclusive, nullptr);
  EXPECT_TRUE(inclusive->trend.rising);
}

TEST(HostFunctions, TheHooksPythonLineWhenItCarriesTheGrowth) {
  HookLoop h;
  h.lambda_share = 0.8;
  const Report r = Analyze(h);
  const Accumulator* a = FindKind(r, "host_function");
  ASSERT_NE(a, nullptr) << Text(r);
  EXPECT_EQ(a->key, "<lambda> (torch_train.py:104)") << Text(r);
}

TEST(HostFunctions, ConstantHooksAreTheControl) {
  HookLoop h;
  h.hook_per_iteration = false;
  const Report r = Analyze(h);
  EXPECT_EQ(FindKind(r, "host_function"), nullptr) << Text(r);
  EXPECT_EQ(r.verdict, "flat") << Text(r);
}

}  // namespace
}  // namespace cuclimb::testing
