// SPDX-License-Identifier: Apache-2.0
// Call sites end to end: a PyTorch-shaped training run whose allocations reach cudaMallocAsync
// through several allocator paths is analysed into one accumulator at the user's Python line,
// and --frames-internal moves that label out to the caller.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/analyze.h"
#include "report/text_report.h"
#include "symbols/debug_files.h"
#include "trace_builder.h"

namespace cuclimb::testing {
namespace {

using format::Event;
using format::EventType;
using format::MemoryKind;

constexpr uint64_t kDevice = 0x7f0000000000;
constexpr uint64_t kPinned = 0x200000000;

// One run: 160 iterations of forward + backward + optimizer on the main thread, a data loader
// thread staging batches in pinned memory, an evaluation every 20 iterations, a checkpoint every
// 50 (its buffers freed two iterations later), GC pauses, jitter, and the leak: the loss tensor
// of every step is kept alive by `losses.append(loss)` in train_step (train.py:31); its
// allocation goes through one of three allocator paths, as the H200 run showed.
std::string PyTorchLikeRun(uint64_t seed) {
  TraceBuilder b;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> jitter(1.0, 0.05);
  auto J = [&](double ns) { return static_cast<int64_t>(std::max(1.0, ns * jitter(rng))); };
  b.Process(0, 4242, "python train.py");

  // The loss: three cudaMallocAsync paths inside c10 and ATen, one user line.
  const uint32_t loss_paths[3] = {
      b.Stack({"cudaMallocAsync",
               "c10::cuda::CUDACachingAllocator::CudaMallocAsync::(anonymous "
               "namespace)::mallocAsync",
               "c10::cuda::CUDACachingAllocator::CudaMallocAsync::CudaMallocAsyncAllocator::"
               "allocate",
               "at::native::empty_cuda", "_PyEval_EvalFrameDefault",
               "py:CrossEntropyLoss.forward@/venv/lib/python3.11/site-packages/torch/nn/"
               "modules/loss.py:1179",
               "py:Module._call_impl@/venv/lib/python3.11/site-packages/torch/nn/modules/"
               "module.py:1527",
               "py:train_step@/home/u/train.py:31", "py:main@/home/u/train.py:60",
               "py:<module>@/home/u/train.py:64", "Py_RunMain", "__libc_start_call_main"}),
      b.Stack({"cudaMallocAsync",
               "c10::cuda::CUDACachingAllocator::CudaMallocAsync::(anonymous "
               "namespace)::mallocAsync",
               "c10::cuda::CUDACachingAllocator::CudaMallocAsync::CudaMallocAsyncAllocator::"
               "raw_alloc",
               "at::native::(anonymous namespace)::nll_loss_forward_out_cuda_template",
               "torch::autograd::VariableType::(anonymous namespace)::nll_loss_forward",
               "py:cross_entropy@/venv/lib/python3.11/site-packages/torch/nn/functional.py:3053",
               "py:train_step@/home/u/train.py:31", "py:main@/home/u/train.py:60",
               "py:<module>@/home/u/train.py:64"}),
      b.Stack({"cuMemAllocAsync", "cudart::cudaApiMallocAsync", "cudaMallocAsync",
               "c10::cuda::CUDACachingAllocator::CudaMallocAsync::(anonymous "
               "namespace)::mallocAsync",
               "py:train_step@/home/u/train.py:31", "py:main@/home/u/train.py:60",
               "py:<module>@/home/u/train.py:64"}),
  };
  // Activations of the model's forward: freed by the end of the step.
  const uint32_t forward_sites[2] = {
      b.Stack(
          {"cudaMallocAsync",
           "c10::cuda::CUDACachingAllocator::CudaMallocAsync::(anonymous "
           "namespace)::mallocAsync",
           "at::native::addmm_out_cuda_impl",
           "py:Linear.forward@/venv/lib/python3.11/site-packages/torch/nn/modules/linear.py:116",
           "py:Mlp.forward@/home/u/model.py:12", "py:train_step@/home/u/train.py:29",
           "py:main@/home/u/train.py:60"}),
      b.Stack({"cudaMallocAsync",
               "c10::cuda::CUDACachingAllocator::CudaMallocAsync::(anonymous "
               "namespace)::mallocAsync",
               "at::native::relu_cuda",
               "py:relu@/venv/lib/python3.11/site-packages/torch/nn/functional.py:1469",
               "py:Mlp.forward@/home/u/model.py:13", "py:train_step@/home/u/train.py:29",
               "py:main@/home/u/train.py:60"}),
  };
  const uint32_t grad_site = b.Stack(
      {"cudaMallocAsync",
       "c10::cuda::CUDACachingAllocator::CudaMallocAsync::(anonymous namespace)::mallocAsync",
       "torch::autograd::Engine::thread_main", "start_thread", "clone3"});
  const uint32_t eval_site =
      b.Stack({"cudaMallocAsync",
               "c10::cuda::CUDACachingAllocator::CudaMallocAsync::(anonymous "
               "namespace)::mallocAsync",
               "py:Mlp.forward@/home/u/model.py:12", "py:evaluate@/home/u/train.py:45",
               "py:main@/home/u/train.py:62"});
  const uint32_t ckpt_site =
      b.Stack({"cudaMallocAsync",
               "c10::cuda::CUDACachingAllocator::CudaMallocAsync::(anonymous "
               "namespace)::mallocAsync",
               "py:clone@/venv/lib/python3.11/site-packages/torch/_tensor.py:80",
               "py:save_checkpoint@/home/u/train.py:50", "py:main@/home/u/train.py:63"});
  const uint32_t pinned_site =
      b.Stack({"cudaHostAlloc", "at::cuda::CachingHostAllocator::allocate",
               "py:pin_memory@/venv/lib/python3.11/site-packages/torch/utils/data/_utils/"
               "pin_memory.py:18",
               "py:_pin_memory_loop@/venv/lib/python3.11/site-packages/torch/utils/data/_utils/"
               "pin_memory.py:55",
               "py:run@/usr/lib/python3.11/threading.py:982"});

  int64_t t = 1'000'000;
  uint64_t leak_addr = kDevice + 0x40000000;
  std::vector<uint64_t> checkpoint_buffers;
  int checkpoint_free_at = -1;
  for (int i = 0; i < 160; ++i) {
    b.Push(t, "iteration");
    t += 500;
    // The loader stages the next batch on its own thread.
    const uint64_t pin = kPinned + static_cast<uint64_t>(i % 4) * 0x100000;
    b.Alloc(t + J(3000), pin, 1 << 20, MemoryKind::kPinned, "cudaHostAlloc", pinned_site, 2);
    // Forward: activations through two user lines.
    for (int k = 0; k < 6; ++k) {
      t += J(20'000);
      b.Alloc(t, kDevice + static_cast<uint64_t>(k) * 0x100000, 262144, MemoryKind::kPool,
              "cudaMallocAsync", forward_sites[k % 2]);
      b.Launch(t + 100, J(4000), "ampere_sgemm_128x64_tn", static_cast<uint64_t>(i * 100 + k));
    }
    // The loss, kept alive by losses.append(loss).
    t += J(15'000);
    b.Alloc(t, leak_addr, 512, MemoryKind::kPool, "cudaMallocAsync",
            loss_paths[static_cast<size_t>(rng() % 3)]);
    leak_addr += 512;
    // Backward on autograd's thread: gradients, freed after the optimizer step.
    for (int k = 0; k < 4; ++k) {
      b.Alloc(t + J(5000) + k * 1000, kDevice + 0x10000000 + static_cast<uint64_t>(k) * 0x100000,
              131072, MemoryKind::kPool, "cudaMallocAsync", grad_site, 3);
    }
    t += J(60'000);
    for (int k = 0; k < 6; ++k)
      b.Free(t + k * 200, kDevice + static_cast<uint64_t>(k) * 0x100000, MemoryKind::kPool,
             "cudaFreeAsync");
    for (int k = 0; k < 4; ++k)
      b.Free(t + 2000 + k * 200, kDevice + 0x10000000 + static_cast<uint64_t>(k) * 0x100000,
             MemoryKind::kPool, "cudaFreeAsync");
    b.Free(t + 3000, pin, MemoryKind::kPinned, "cudaFreeHost", 2);
    t += 4000;
    if (i % 20 == 19) {  // evaluation: temporaries only
      for (int k = 0; k < 3; ++k) {
        b.Alloc(t, kDevice + 0x20000000 + static_cast<uint64_t>(k) * 0x100000, 262144,
                MemoryKind::kPool, "cudaMallocAsync", eval_site);
        t += J(30'000);
      }
      for (int k = 0; k < 3; ++k)
        b.Free(t + k * 100, kDevice + 0x20000000 + static_cast<uint64_t>(k) * 0x100000,
               MemoryKind::kPool, "cudaFreeAsync");
      t += 1000;
    }
    if (i % 50 == 49) {  // checkpoint: copies held until it is written out
      for (int k = 0; k < 4; ++k) {
        const uint64_t a = kDevice + 0x30000000 + static_cast<uint64_t>(k) * 0x400000;
        b.Alloc(t, a, 4 << 20, MemoryKind::kPool, "cudaMallocAsync", ckpt_site);
        checkpoint_buffers.push_back(a);
        t += J(8000);
      }
      checkpoint_free_at = i + 2;
    }
    if (i == checkpoint_free_at) {
      for (uint64_t a : checkpoint_buffers) b.Free(t, a, MemoryKind::kPool, "cudaFreeAsync");
      checkpoint_buffers.clear();
    }
    if (i % 37 == 36)
      t += J(25'000'000);  // a GC pause
    b.Pop(t);
    t += J(2000);
  }
  return b.ToBinary();
}

analysis::Report Analyze(const std::string& bytes, const analysis::AnalyzeOptions& options = {}) {
  auto r = analysis::AnalyzeBuffers({bytes}, {"torch.trace"}, options);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *std::move(r) : analysis::Report{};
}

std::string Keys(const analysis::Report& r) {
  std::string s;
  for (const auto& a : r.accumulators) s += a.id + "\n";
  return s;
}

TEST(CallSites, AllocatorPathsMergeIntoOneAccumulatorAtTheUsersLine) {
  for (uint64_t seed : {1, 2, 3}) {
    const analysis::Report r = Analyze(PyTorchLikeRun(seed));
    ASSERT_EQ(r.accumulators.size(), 1u) << Keys(r) << analysis::ToText(r);
    const analysis::Accumulator& a = r.accumulators[0];
    EXPECT_EQ(a.kind, "device_allocations");
    EXPECT_EQ(a.key, "train_step (train.py:31) <- main (train.py:60)");
    EXPECT_NEAR(a.growth_per_iter, 1.0, 0.02);
    EXPECT_EQ(a.site.label, a.key);
    ASSERT_FALSE(a.site.frames.empty());
    EXPECT_EQ(a.site.frames[0], "cudaMallocAsync");
    bool user_line = false;
    for (const std::string& f : a.site.frames) user_line |= f == "train_step (/home/u/train.py:31)";
    EXPECT_TRUE(user_line) << "the full stack is kept as evidence";
    EXPECT_NE(a.evidence.find("+1 handles/iter"), std::string::npos) << a.evidence;
  }
}

TEST(CallSites, OtherSitesKeepTheirOwnLines) {
  const analysis::Report r = Analyze(PyTorchLikeRun(4));
  std::vector<std::string> sites;
  for (const auto& s : r.ranks[0].state) {
    if (s.metric == "allocs" && s.dimension == "call_site")
      sites.push_back(s.key);
  }
  const std::vector<std::string> want = {
      "device_allocations: Mlp.forward (model.py:12) <- train_step (train.py:29)",
      "device_allocations: Mlp.forward (model.py:12) <- evaluate (train.py:45)",
      "device_allocations: Mlp.forward (model.py:13) <- train_step (train.py:29)",
      "device_allocations: train_step (train.py:31) <- main (train.py:60)",
      "device_allocations: save_checkpoint (train.py:50) <- main (train.py:63)",
      // Autograd's thread has no user frame: its outermost framework frames.
      "device_allocations: (anonymous namespace)::mallocAsync <- Engine::thread_main",
      // The pin-memory thread runs only torch and the standard library.
      "pinned_allocations: pin_memory (pin_memory.py:18) <- _pin_memory_loop (pin_memory.py:55)",
  };
  for (const std::string& w : want) {
    EXPECT_NE(std::find(sites.begin(), sites.end(), w), sites.end()) << w;
  }
  EXPECT_EQ(sites.size(), want.size()) << ::testing::PrintToString(sites);
}

TEST(CallSites, FramesInternalLabelsByTheCaller) {
  analysis::AnalyzeOptions o;
  o.frames_internal = {"function:train_step"};
  const analysis::Report r = Analyze(PyTorchLikeRun(5), o);
  ASSERT_EQ(r.accumulators.size(), 1u) << Keys(r);
  EXPECT_EQ(r.accumulators[0].key, "main (train.py:60) <- <module> (train.py:64)");
  o.frames_internal = {"module:"};
  EXPECT_FALSE(analysis::AnalyzeBuffers({PyTorchLikeRun(5)}, {"x"}, o).ok());
}

// Return addresses end to end: a real program's mapping event (with its build id) reaches the
// symbolizer through the analysis, the accumulator is keyed by the inlined call's lines, and a
// module that is not on this machine gets a note that says how to fix it.
TEST(CallSites, ReturnAddressesThroughMappingEvents) {
  const char* fixture = std::getenv("SYMBOLS_FIXTURE");
  const char* source = std::getenv("SYMBOLS_FIXTURE_SOURCE");
  ASSERT_TRUE(fixture != nullptr && source != nullptr) << "run through meson test";
  FILE* p = popen(fixture, "r");
  ASSERT_NE(p, nullptr);
  unsigned long long pc = 0, base = 0, size = 0, offset = 0;
  char line[512];
  while (std::fgets(line, sizeof(line), p) != nullptr) {
    std::sscanf(line, "pc %llx", &pc);
    std::sscanf(line, "event %llx %llx %llx", &base, &size, &offset);
  }
  pclose(p);
  ASSERT_TRUE(pc != 0 && base != 0);
  const analysis::ElfIds ids = analysis::ReadElfIds(fixture);
  TraceBuilder b;
  b.Process(0, 77, "symbols_fixture");
  Event& m = b.Add(EventType::kMapping, 1);
  m.text = b.Str(fixture);
  m.addr = base;
  m.size = size;
  m.aux = offset;
  m.name = b.Str(ids.build_id);
  Event& gone = b.Add(EventType::kMapping, 2);
  gone.text = b.Str("/opt/gone/libpool.so");
  gone.addr = 0x7f0000000000;
  gone.size = 0x100000;
  gone.name = b.Str("00112233445566778899aabbccddeeff00112233");
  char hex[32];
  std::snprintf(hex, sizeof(hex), "0x%llx", pc);
  const uint32_t fixture_stack = b.Stack({"cuMemAllocAsync", hex});
  const uint32_t gone_stack = b.Stack({"cuMemAllocAsync", "0x7f0000001234"});
  std::mt19937_64 rng(7);
  int64_t t = 1000;
  uint64_t addr = kDevice;
  for (int i = 0; i < 120; ++i) {
    b.Push(t, "iteration");
    t += 1000 + static_cast<int64_t>(rng() % 500);
    b.Alloc(t, addr, 512, MemoryKind::kPool, "cuMemAllocAsync", fixture_stack);
    addr += 512;
    if (i % 2 == 0) {
      b.Alloc(t + 100, addr, 4096, MemoryKind::kPool, "cuMemAllocAsync", gone_stack);
      addr += 4096;
    }
    t += 5000 + static_cast<int64_t>(rng() % 1000);
    b.Pop(t);
    t += 500;
  }
  const analysis::Report r = Analyze(b.ToBinary());
  ASSERT_EQ(r.accumulators.size(), 2u) << Keys(r);
  int inner = 0, outer = 0, n = 0;
  std::ifstream in(source);
  for (std::string text; std::getline(in, text);) {
    ++n;
    if (text.find("MARK:inner-call") != std::string::npos)
      inner = n;
    if (text.find("MARK:outer-call") != std::string::npos)
      outer = n;
  }
  std::vector<std::string> keys;
  for (const auto& a : r.accumulators) keys.push_back(a.key);
  const std::string want = "fixture::Inner (symbols_fixture.cpp:" + std::to_string(inner) +
                           ") <- fixture::Outer (symbols_fixture.cpp:" + std::to_string(outer) +
                           ")";
  EXPECT_NE(std::find(keys.begin(), keys.end(), want), keys.end()) << Keys(r);
  EXPECT_NE(std::find(keys.begin(), keys.end(), "libpool.so+0x1234"), keys.end()) << Keys(r);
  bool noted = false;
  for (const std::string& note : r.notes) {
    noted |=
        note.find("call sites in libpool.so are shown as module+offset") != std::string::npos &&
        note.find("--symbols DIR") != std::string::npos;
  }
  EXPECT_TRUE(noted) << ::testing::PrintToString(r.notes);
}

}  // namespace
}  // namespace cuclimb::testing
