// SPDX-License-Identifier: Apache-2.0
// Step-time overhead of libcuclimb.so on a launch-bound MLP-like loop, measured in-process.
//
// Each iteration is what a small MLP + Adam step asks of the driver: an NVTX "iteration" range,
// a few stream-ordered allocations and frees, ~60 small kernel launches (forward, backward,
// optimizer) and a stream synchronization. Under cuclimb the loop alternates blocks of
// iterations with recording paused (cuclimb_pause: callbacks and activity kinds off) and resumed,
// so both sides share the process, the GPU clocks and the allocator state; separate processes of
// the same loop differ far more than the effect being measured. Without cuclimb every block is
// "untraced". Then two micro-benchmarks: a cudaMallocAsync/cudaFreeAsync pair and an empty
// launch, paused against resumed. Prints one JSON line.
//
//   interposer_step_bench [--iters N] [--block K] [--launches L] [--allocs A] [--label TEXT]
//                         [--no-pause]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <dlfcn.h>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

namespace {

#define CHECK(call)                                                                               \
  do {                                                                                            \
    const cudaError_t e_ = (call);                                                                \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(3);                                                                               \
    }                                                                                             \
  } while (0)

__global__ void axpy(float* y, const float* x, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}

__global__ void empty_kernel() {}

using Fn = void (*)();

struct CApi {
  Fn pause = nullptr;
  Fn resume = nullptr;
};

CApi FindCApi() {
  CApi api;
  const char* lib = std::getenv("CUDA_INJECTION64_PATH");
  if (lib == nullptr)
    return api;
  void* handle = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr)
    return api;
  api.pause = reinterpret_cast<Fn>(dlsym(handle, "cuclimb_pause"));
  api.resume = reinterpret_cast<Fn>(dlsym(handle, "cuclimb_resume"));
  return api;
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Stats {
  double median = 0, p25 = 0, p75 = 0, mean = 0;
  size_t n = 0;
};

Stats Of(std::vector<double> v) {
  Stats s;
  s.n = v.size();
  if (v.empty())
    return s;
  std::sort(v.begin(), v.end());
  auto q = [&](double f) { return v[static_cast<size_t>(f * (v.size() - 1))]; };
  s.median = q(0.5);
  s.p25 = q(0.25);
  s.p75 = q(0.75);
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / v.size();
  return s;
}

std::string Json(const char* name, const Stats& s) {
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "\"%s\": {\"median_us\": %.3f, \"p25_us\": %.3f, \"p75_us\": %.3f, \"mean_us\": "
                "%.3f, \"n\": %zu}",
                name, s.median * 1e6, s.p25 * 1e6, s.p75 * 1e6, s.mean * 1e6, s.n);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 3000, block = 100, launches = 60, allocs = 8;
  std::string label = "run";
  bool no_pause = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--no-pause") == 0)
      no_pause = true;
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--no-pause") {
      --i;
      continue;
    }
    if (k == "--iters")
      iters = std::atoi(argv[i + 1]);
    if (k == "--block")
      block = std::atoi(argv[i + 1]);
    if (k == "--launches")
      launches = std::atoi(argv[i + 1]);
    if (k == "--allocs")
      allocs = std::atoi(argv[i + 1]);
    if (k == "--label")
      label = argv[i + 1];
  }
  const int n = 1 << 16;
  cudaStream_t s = nullptr;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float* x = nullptr;
  float* y = nullptr;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&y, n * sizeof(float)));
  CHECK(cudaMemset(x, 0, n * sizeof(float)));
  CHECK(cudaMemset(y, 0, n * sizeof(float)));
  nvtxDomainHandle_t domain = nvtxDomainCreateA("bench");
  nvtxStringHandle_t iteration = nvtxDomainRegisterStringA(domain, "iteration");
  // --no-pause: record (or not) the whole run, for comparisons across processes.
  const CApi api = no_pause ? CApi{} : FindCApi();
  const bool traced = api.pause != nullptr && api.resume != nullptr;
  std::vector<float*> scratch(allocs);

  unsigned long long step = 0;
  auto run_step = [&]() {
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = iteration;
    a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    a.payload.ullValue = ++step;
    nvtxDomainRangePushEx(domain, &a);
    for (int k = 0; k < allocs; ++k) {
      CHECK(cudaMallocAsync(&scratch[k], (64 << 10) * (1 + k % 4), s));
    }
    for (int k = 0; k < launches; ++k) axpy<<<n / 256, 256, 0, s>>>(y, x, 0.5f, n);
    for (int k = 0; k < allocs; ++k) CHECK(cudaFreeAsync(scratch[k], s));
    CHECK(cudaStreamSynchronize(s));
    nvtxDomainRangePop(domain);
  };

  for (int i = 0; i < 200; ++i) run_step();  // warm-up: pools, lazy module loading, clocks
  std::vector<double> on, off;
  std::vector<double> block_ratio;  // median(resumed block) / median(preceding paused block)
  std::vector<double> current;
  double last_off_median = 0;
  const int blocks = std::max(2, iters / block);
  for (int b = 0; b < blocks; ++b) {
    const bool recording = traced && (b % 2 == 1);
    if (traced)
      recording ? api.resume() : api.pause();
    current.clear();
    for (int i = 0; i < block; ++i) {
      const double t0 = Now();
      run_step();
      current.push_back(Now() - t0);
    }
    std::vector<double>& samples = (recording || !traced) ? on : off;
    samples.insert(samples.end(), current.begin(), current.end());
    const double m = Of(current).median;
    if (traced && !recording)
      last_off_median = m;
    if (traced && recording && last_off_median > 0)
      block_ratio.push_back(m / last_off_median);
  }

  // Micro-benchmarks: per-call cost, paused against resumed.
  auto micro = [&](bool recording, bool launch) {
    if (traced)
      recording ? api.resume() : api.pause();
    const int reps = 20000;
    CHECK(cudaStreamSynchronize(s));
    const double t0 = Now();
    for (int i = 0; i < reps; ++i) {
      if (launch) {
        empty_kernel<<<1, 1, 0, s>>>();
      } else {
        float* p = nullptr;
        CHECK(cudaMallocAsync(&p, 4096, s));
        CHECK(cudaFreeAsync(p, s));
      }
    }
    CHECK(cudaStreamSynchronize(s));
    return (Now() - t0) / reps;
  };
  std::vector<double> alloc_on, alloc_off, launch_on, launch_off;
  for (int r = 0; r < 5; ++r) {
    alloc_off.push_back(micro(false, false));
    alloc_on.push_back(micro(true, false));
    launch_off.push_back(micro(false, true));
    launch_on.push_back(micro(true, true));
  }
  if (traced)
    api.resume();

  const Stats s_on = Of(on), s_off = Of(off), s_ratio = Of(block_ratio);
  std::printf(
      "{\"label\": \"%s\", \"traced\": %s, \"launches\": %d, \"allocs\": %d, %s, %s, "
      "\"block_ratio\": {\"median\": %.4f, \"p25\": %.4f, \"p75\": %.4f, \"n\": %zu}, "
      "%s, %s, %s, %s}\n",
      label.c_str(), traced ? "true" : "false", launches, allocs, Json("recording", s_on).c_str(),
      Json("paused", s_off).c_str(), s_ratio.median, s_ratio.p25, s_ratio.p75, s_ratio.n,
      Json("alloc_pair_recording", Of(alloc_on)).c_str(),
      Json("alloc_pair_paused", Of(alloc_off)).c_str(),
      Json("launch_recording", Of(launch_on)).c_str(),
      Json("launch_paused", Of(launch_off)).c_str());
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  CHECK(cudaStreamDestroy(s));
  return 0;
}
