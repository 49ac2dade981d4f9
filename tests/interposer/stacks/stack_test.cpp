// SPDX-License-Identifier: Apache-2.0
// Stacks begin at the caller: a fake CUDA library (with and without frame pointers, the latter
// keeping garbage in the frame-pointer register) calls back into a probe that plays
// libcuclimb.so and takes the stack; fake static cudart lives in this program. Every walker must
// start at the application function that made the call.
#include <atomic>
#include <csignal>
#include <cstring>
#include <string>
#include <sys/syscall.h>
#include <thread>
#include <vector>

#include <dlfcn.h>
#include <pthread.h>
#include <ucontext.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "fake_cuda.h"
#include "interposer/cuda_code.h"
#include "interposer/static_cudart.h"
#include "stack_probe.h"

using Callback = FakeCallback;

// The application: frame pointers on (meson.build), exported names (dladdr finds them).
extern "C" {
void stack_test_app_caller(void (*call)(int, Callback, void*), ProbeRequest* request);
void stack_test_app_outer(void (*call)(int, Callback, void*), ProbeRequest* request);
void stack_test_static_caller(ProbeRequest* request);
void stack_test_spinner(void (*spin)(const volatile int*), const volatile int* stop);
void stack_test_direct_caller(ProbeRequest* request);

__attribute__((noinline, visibility("default"))) void stack_test_app_caller(
    void (*call)(int, Callback, void*), ProbeRequest* request) {
  call(3, probe_callback, request);
  asm volatile("" ::: "memory");
}
__attribute__((noinline, visibility("default"))) void stack_test_app_outer(
    void (*call)(int, Callback, void*), ProbeRequest* request) {
  stack_test_app_caller(call, request);
  asm volatile("" ::: "memory");
}
__attribute__((noinline, visibility("default"))) void stack_test_static_caller(
    ProbeRequest* request) {
  cudaFakeMalloc(probe_callback, request);
  asm volatile("" ::: "memory");
}
__attribute__((noinline, visibility("default"))) void stack_test_direct_caller(
    ProbeRequest* request) {
  probe_callback(request);
  asm volatile("" ::: "memory");
}
__attribute__((noinline, visibility("default"))) void stack_test_spinner(
    void (*spin)(const volatile int*), const volatile int* stop) {
  spin(stop);
  asm volatile("" ::: "memory");
}
}

namespace {

constexpr int kModeFp = 1;
constexpr int kModeUnwind = 2;

std::string FunctionOf(uint64_t frame) {
  Dl_info info{};
  const auto pc = reinterpret_cast<void*>((frame >> 1) - 1);  // return address - 1: the call
  if (dladdr(pc, &info) == 0)
    return "?";
  if (info.dli_sname == nullptr)
    return std::string("?@") + (info.dli_fname != nullptr ? info.dli_fname : "");
  return info.dli_sname;
}

std::vector<std::string> Functions(const ProbeRequest& r) {
  std::vector<std::string> out;
  for (size_t i = 0; i < r.count; ++i) out.push_back(FunctionOf(r.frames[i]));
  return out;
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& f : v) s += f + " ";
  return s;
}

class StackTest : public ::testing::Test {
 protected:
  void SetUp() override { probe_refresh(); }
};

TEST(CudaCodeTable, MatchesTheCudaLibrariesByFileName) {
  using cuclimb::interposer::IsCudaRuntimeModule;
  EXPECT_TRUE(IsCudaRuntimeModule("/usr/lib/x86_64-linux-gnu/libcuda.so.1"));
  EXPECT_TRUE(IsCudaRuntimeModule("/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13"));
  EXPECT_TRUE(IsCudaRuntimeModule("/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12"));
  EXPECT_TRUE(IsCudaRuntimeModule("libnvToolsExt.so.1"));
  EXPECT_FALSE(IsCudaRuntimeModule("/usr/lib/libcudnn.so.9"));
  EXPECT_FALSE(IsCudaRuntimeModule("/opt/libcuda_helpers.so"));
  EXPECT_FALSE(IsCudaRuntimeModule("/opt/app/libcuda.so.1/libtorch_cuda.so"));
  EXPECT_FALSE(IsCudaRuntimeModule(""));
}

TEST(StaticCudart, NamesItsFunctions) {
  using cuclimb::interposer::IsStaticCudartSymbol;
  for (const char* name :
       {"cudaMalloc", "cudaLaunchKernel", "__cudaRegisterFatBinary", "__cudart1234",
        "_ZN6cudart5apiFnEv", "libcudart_static_0123456789abcdef"}) {
    EXPECT_TRUE(IsStaticCudartSymbol(name)) << name;
  }
  for (const char* name : {"cuda", "cudaify", "main", "_Z4cudav", "mycudaMalloc", "cuMemAlloc"}) {
    EXPECT_FALSE(IsStaticCudartSymbol(name)) << name;
  }
}

TEST(StaticCudart, FindsTheRunsInThisProgram) {
  cuclimb::interposer::CodeRange ranges[16];
  const size_t n = cuclimb::interposer::FindStaticCudart("/proc/self/exe", ranges, 16);
  ASSERT_GE(n, 1u);
  Dl_info self{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&stack_test_app_caller), &self), 0);
  const auto bias = reinterpret_cast<uint64_t>(self.dli_fbase);
  auto covered = [&](const void* fn) {
    const uint64_t at = reinterpret_cast<uint64_t>(fn) - bias;
    for (size_t i = 0; i < n; ++i) {
      if (at >= ranges[i].begin && at < ranges[i].end)
        return true;
    }
    return false;
  };
  EXPECT_TRUE(covered(reinterpret_cast<const void*>(&cudaFakeMalloc)));
  EXPECT_FALSE(covered(reinterpret_cast<const void*>(&stack_test_app_caller)));
  EXPECT_FALSE(covered(reinterpret_cast<const void*>(&stack_test_static_caller)));
  EXPECT_EQ(cuclimb::interposer::FindStaticCudart("/nonexistent", ranges, 16), 0u);
  EXPECT_EQ(cuclimb::interposer::FindStaticCudart("/proc/self/maps", ranges, 16), 0u);
}

TEST_F(StackTest, CudaCodeIsTheFakeLibrariesTheProbeAndStaticCudart) {
  EXPECT_TRUE(probe_is_cuda_code(reinterpret_cast<uintptr_t>(&fake_nofp_call) + 1));
  EXPECT_TRUE(probe_is_cuda_code(reinterpret_cast<uintptr_t>(&fake_fp_call) + 1));
  EXPECT_TRUE(probe_is_cuda_code(reinterpret_cast<uintptr_t>(&probe_callback) + 1));
  EXPECT_TRUE(probe_is_cuda_code(reinterpret_cast<uintptr_t>(&cudaFakeMalloc) + 1));
  EXPECT_FALSE(probe_is_cuda_code(reinterpret_cast<uintptr_t>(&stack_test_app_caller) + 1));
  EXPECT_FALSE(probe_is_cuda_code(reinterpret_cast<uintptr_t>(&memcpy)));
}

struct Chain {
  const char* name;
  void (*call)(int, Callback, void*);
};

class StackChainTest : public StackTest,
                       public ::testing::WithParamInterface<std::tuple<int, Chain>> {};

TEST_P(StackChainTest, BeginsAtTheApplicationCaller) {
  const auto [mode, chain] = GetParam();
  ProbeRequest request;
  request.mode = mode;
  stack_test_app_outer(chain.call, &request);
  const auto functions = Functions(request);
  ASSERT_GE(functions.size(), 3u) << Join(functions);
  EXPECT_EQ(functions[0], "stack_test_app_caller") << Join(functions);
  EXPECT_EQ(functions[1], "stack_test_app_outer") << Join(functions);
  for (const auto& f : functions) {
    EXPECT_EQ(f.find("fake_"), std::string::npos) << Join(functions);
    EXPECT_EQ(f.find("probe"), std::string::npos) << Join(functions);
  }
}

TEST_P(StackChainTest, DepthBoundsTheFrames) {
  const auto [mode, chain] = GetParam();
  ProbeRequest request;
  request.mode = mode;
  request.depth = 1;
  stack_test_app_outer(chain.call, &request);
  ASSERT_EQ(request.count, 1u);
  EXPECT_EQ(FunctionOf(request.frames[0]), "stack_test_app_caller");
}

INSTANTIATE_TEST_SUITE_P(
    Walkers, StackChainTest,
    ::testing::Combine(::testing::Values(kModeFp, kModeUnwind),
                       ::testing::Values(Chain{"without_frame_pointers", fake_nofp_call},
                                         Chain{"with_frame_pointers", fake_fp_call})),
    [](const ::testing::TestParamInfo<std::tuple<int, Chain>>& param) {
      return std::string(std::get<0>(param.param) == kModeFp ? "fp_" : "unwind_") +
             std::get<1>(param.param).name;
    });

TEST_F(StackTest, StaticCudartFramesInTheProgramAreDropped) {
  for (int mode : {kModeFp, kModeUnwind}) {
    ProbeRequest request;
    request.mode = mode;
    stack_test_static_caller(&request);
    const auto functions = Functions(request);
    ASSERT_GE(functions.size(), 2u) << Join(functions);
    EXPECT_EQ(functions[0], "stack_test_static_caller") << mode << ": " << Join(functions);
  }
}

// The application calls the probe directly (as an NVTX hook is called): no CFI needed.
TEST_F(StackTest, DirectCallsWalkFramePointersOnly) {
  ProbeRequest request;
  request.mode = kModeFp;
  stack_test_direct_caller(&request);
  const auto functions = Functions(request);
  ASSERT_GE(functions.size(), 1u);
  EXPECT_EQ(functions[0], "stack_test_direct_caller") << Join(functions);
}

// ---- host samples: SIGPROF while the thread spins inside the fake library -------------------

std::atomic<ProbeRequest*> g_sample_request{nullptr};

void OnSample(int, siginfo_t*, void* context) {
  ProbeRequest* request = g_sample_request.load();
  if (request == nullptr || request->count != 0)
    return;
  const auto* uc = static_cast<const ucontext_t*>(context);
  request->from_context = true;
#if defined(__x86_64__)
  request->pc = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
  request->sp = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]);
  request->fp = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RBP]);
#endif
  probe_callback(request);
  request->depth = 0;  // done marker (count may legitimately be 0)
}

ProbeRequest SampleWhileSpinning(void (*spin)(const volatile int*)) {
  ProbeRequest request;
  uintptr_t low = 0;
  uintptr_t high = 0;
  EXPECT_TRUE(probe_stack_bounds(&low, &high));
  struct sigaction sa {};
  struct sigaction old {};
  sa.sa_sigaction = OnSample;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGPROF, &sa, &old);
  g_sample_request.store(&request);
  volatile int stop = 0;
  const pid_t tid = static_cast<pid_t>(syscall(SYS_gettid));
  std::thread sender([&] {
    while (request.depth != 0 && stop == 0) {
      syscall(SYS_tgkill, getpid(), tid, SIGPROF);
      usleep(2000);
      // Only samples that hit the spin loop count: earlier ones landed elsewhere and are undone.
      if (request.depth == 0 && !probe_is_cuda_code(request.pc)) {
        request.count = 0;
        request.depth = 32;
      }
    }
    stop = 1;
  });
  stack_test_spinner(spin, &stop);
  sender.join();
  g_sample_request.store(nullptr);
  sigaction(SIGPROF, &old, nullptr);
  return request;
}

TEST_F(StackTest, HostSampleInsideCudaBeginsAtTheCaller) {
  const ProbeRequest request = SampleWhileSpinning(fake_fp_spin);
  const auto functions = Functions(request);
  ASSERT_GE(functions.size(), 2u) << Join(functions);
  EXPECT_EQ(functions[0], "stack_test_spinner") << Join(functions);
}

TEST_F(StackTest, HostSampleInsideCudaWithoutFramePointersKeepsNoCudaFrame) {
  // The register holds garbage, so the walk cannot go on; what it keeps must not be CUDA code.
  const ProbeRequest request = SampleWhileSpinning(fake_nofp_spin);
  for (size_t i = 0; i < request.count; ++i) {
    EXPECT_FALSE(probe_is_cuda_code(static_cast<uintptr_t>(request.frames[i] >> 1)))
        << FunctionOf(request.frames[i]);
  }
}

}  // namespace
