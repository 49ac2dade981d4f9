// SPDX-License-Identifier: Apache-2.0
// Train(): outer loop, interleaved inner loop, ephemeral network lifecycle, timing and retention.
#include "workloads/adam/trainer.h"

#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <utility>

#include <cuda_runtime_api.h>

#include "kernels/kernels.h"
#include "workloads/adam/adam_optimizer.h"
#include "workloads/adam/mlp.h"
#include "workloads/adam/nvtx_marks.h"
#include "workloads/adam/tensor.h"
#include "workloads/allocators/registry.h"

namespace cuclimb::workloads {
namespace {

using Clock = std::chrono::steady_clock;

double MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

uint64_t MixSeed(uint64_t a, uint64_t b) {
  uint64_t z = a * 0x9e3779b97f4a7c15ull + b + 0x632be59bd9b4e019ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

kernels::Activation ToKernel(ActivationKind activation) {
  return activation == ActivationKind::kGelu ? kernels::Activation::kGelu
                                             : kernels::Activation::kRelu;
}

// A network's synthetic data: x ~ U(-1, 1) fresh every step, targets from a fixed random
// "teacher" T (in x out): tanh(x T) for regression, argmax(x T) for classification. The teacher
// is data, not a parameter, so it is allocated outside any persistent window and lives for the
// whole run, even for the ephemeral network.
struct DataSource {
  Tensor teacher;
  uint64_t seed = 0;
  uint64_t counter = 0;
};

DataSource MakeData(const Device& device, int in, int out, uint64_t seed) {
  DataSource data;
  data.seed = seed;
  data.teacher = Tensor::Empty(device, in, out);
  // Var(x T) ~ 1 for x ~ U(-1, 1): Var(t) = 3 / in.
  const float bound = 3.0f / std::sqrt(static_cast<float>(in));
  LaunchKernel(device, kKernelFillUniform, {&data.teacher}, [&] {
    kernels::FillUniform(data.teacher.f32(), data.teacher.numel(), -bound, bound, seed,
                         device.stream);
  });
  return data;
}

struct RangeNames {
  nvtxStringHandle_t step;
  nvtxStringHandle_t fwd;
  nvtxStringHandle_t bwd;
  nvtxStringHandle_t opt;
};

RangeNames RegisterNames(const NvtxDomain& domain, const std::string& net) {
  return {domain.Register(net + "/step"), domain.Register(net + "/fwd"),
          domain.Register(net + "/bwd"), domain.Register(net + "/opt")};
}

struct Network {
  std::string name;
  Device device;
  RangeNames ranges{};
  std::unique_ptr<Mlp> mlp;
  std::unique_ptr<AdamOptimizer> optimizer;
};

struct StepTiming {
  double host_ms = 0.0;
  cudaEvent_t start = nullptr;  // optional GPU timing of the optimizer step
  cudaEvent_t stop = nullptr;
};

// One training step: data, forward, loss, backward, optimizer. Returns the 1 x 1 loss tensor.
Tensor TrainStep(const Options& options, const NvtxDomain& domain, Network& net, DataSource& data,
                 StepTiming* timing) {
  ScopedRange step_range(domain, net.ranges.step);
  const Device& device = net.device;
  const int batch = options.batch;
  const int in = net.mlp->dims().front();
  const int out = net.mlp->dims().back();
  Tensor x = Tensor::Empty(device, batch, in);
  Tensor loss = Tensor::Empty(device, 1, 1);
  ForwardCache cache;
  Tensor output_grad;
  {
    ScopedRange fwd_range(domain, net.ranges.fwd);
    const uint64_t data_seed = MixSeed(data.seed, data.counter++);
    LaunchKernel(device, kKernelFillUniform, {&x}, [&] {
      kernels::FillUniform(x.f32(), x.numel(), -1.0f, 1.0f, data_seed, device.stream);
    });
    Tensor logits = Tensor::Empty(device, batch, out);
    LaunchKernel(device, kKernelGemm, {&x, &data.teacher, &logits}, [&] {
      kernels::Gemm(kernels::Transpose::kNo, kernels::Transpose::kNo, batch, out, in, 1.0f, x.f32(),
                    in, data.teacher.f32(), out, 0.0f, logits.f32(), out, device.stream);
    });
    cache = net.mlp->Forward(x);
    output_grad = Tensor::Empty(device, batch, out);
    if (options.task == Task::kRegression) {
      Tensor target = Tensor::Empty(device, batch, out);
      LaunchKernel(device, kKernelActivation, {&logits, &target}, [&] {
        kernels::ActivationForward(kernels::Activation::kTanh, logits.f32(), target.f32(),
                                   target.numel(), device.stream);
      });
      LaunchKernel(device, kKernelMseLoss, {&cache.output, &target, &loss, &output_grad}, [&] {
        kernels::MseLoss(cache.output.f32(), target.f32(), batch, out, loss.f32(),
                         output_grad.f32(), device.stream);
      });
    } else {
      Tensor labels = Tensor::Empty(device, batch, 1, DType::kI32);
      LaunchKernel(device, kKernelArgmax, {&logits, &labels}, [&] {
        kernels::ArgmaxRows(logits.f32(), batch, out, labels.i32(), device.stream);
      });
      LaunchKernel(device, kKernelCrossEntropy, {&cache.output, &labels, &loss, &output_grad}, [&] {
        kernels::SoftmaxCrossEntropy(cache.output.f32(), labels.i32(), batch, out, loss.f32(),
                                     output_grad.f32(), device.stream);
      });
    }
  }
  std::vector<Tensor> grads;
  {
    ScopedRange bwd_range(domain, net.ranges.bwd);
    cache.output.Reset();
    grads = net.mlp->Backward(x, std::move(cache), std::move(output_grad));
  }
  x.Reset();
  {
    ScopedRange opt_range(domain, net.ranges.opt);
    const bool isolated = timing != nullptr && options.timing == Timing::kIsolated;
    // Isolated timing drains the queue first, so the step is not charged for earlier work.
    if (isolated)
      CUCLIMB_CUDA_CHECK(cudaStreamSynchronize(device.stream));
    if (timing != nullptr && timing->start != nullptr) {
      CUCLIMB_CUDA_CHECK(cudaEventRecord(timing->start, device.stream));
    }
    const Clock::time_point start = Clock::now();
    net.optimizer->Step(net.mlp->Parameters(), std::move(grads));
    if (timing != nullptr && timing->stop != nullptr) {
      CUCLIMB_CUDA_CHECK(cudaEventRecord(timing->stop, device.stream));
    }
    if (isolated)
      CUCLIMB_CUDA_CHECK(cudaStreamSynchronize(device.stream));
    if (timing != nullptr)
      timing->host_ms += MillisecondsSince(start);
  }
  return loss;
}

AdamConfig MakeAdamConfig(const Options& options) {
  AdamConfig config;
  config.lr = options.lr;
  config.weight_decay = options.weight_decay;
  config.decoupled = options.adamw;
  config.in_place = options.inplace_adam;
  return config;
}

AllocatorStats SumStats(const std::vector<DeviceAllocator*>& allocators) {
  AllocatorStats total;
  for (const DeviceAllocator* allocator : allocators) {
    const AllocatorStats s = allocator->Stats();
    total.device_allocs += s.device_allocs;
    total.device_frees += s.device_frees;
    total.host_allocs += s.host_allocs;
    total.host_frees += s.host_frees;
    total.event_waits += s.event_waits;
    total.reserves += s.reserves;
    total.slots_scanned += s.slots_scanned;
    total.slices_scanned += s.slices_scanned;
    total.coalesce_touched += s.coalesce_touched;
    total.pages_visited += s.pages_visited;
    total.metadata_launches += s.metadata_launches;
    total.persistent_slots += s.persistent_slots;
    total.largest_bucket_slots = std::max(total.largest_bucket_slots, s.largest_bucket_slots);
    total.pages += s.pages;
    total.slices += s.slices;
    total.dead_bytes += s.dead_bytes;
    total.reserved_bytes += s.reserved_bytes;
    total.live_handles += s.live_handles;
  }
  return total;
}

// Per-step GPU timing events of one persistent network (runtime events: the workload's own
// measurement, not part of any allocator model).
class StepEvents {
 public:
  explicit StepEvents(int steps) : start_(steps), stop_(steps) {
    for (int i = 0; i < steps; ++i) {
      CUCLIMB_CUDA_CHECK(cudaEventCreate(&start_[i]));
      CUCLIMB_CUDA_CHECK(cudaEventCreate(&stop_[i]));
    }
  }
  ~StepEvents() {
    for (std::size_t i = 0; i < start_.size(); ++i) {
      cudaEventDestroy(start_[i]);
      cudaEventDestroy(stop_[i]);
    }
  }
  StepEvents(const StepEvents&) = delete;
  StepEvents& operator=(const StepEvents&) = delete;
  cudaEvent_t start(int step) const { return start_[step]; }
  cudaEvent_t stop(int step) const { return stop_[step]; }
  // Sum of the recorded pairs; call after the stream has synchronised.
  double TotalMs() const {
    double total = 0.0;
    for (std::size_t i = 0; i < start_.size(); ++i) {
      float ms = 0.0f;
      CUCLIMB_CUDA_CHECK(cudaEventElapsedTime(&ms, start_[i], stop_[i]));
      total += ms;
    }
    return total;
  }

 private:
  std::vector<cudaEvent_t> start_;
  std::vector<cudaEvent_t> stop_;
};

Network MakeNetwork(std::string name, const Device& device, const RangeNames& ranges,
                    const std::vector<int>& dims, kernels::Activation activation, uint64_t seed,
                    const AdamConfig& adam) {
  Network net;
  net.name = std::move(name);
  net.device = device;
  net.ranges = ranges;
  net.mlp = std::make_unique<Mlp>(device, dims, activation, seed);
  net.optimizer = std::make_unique<AdamOptimizer>(device, adam);
  return net;
}

// A network whose optimizer steps are timed: a persistent one, or the reference twin.
struct TimedNetwork {
  Network net;
  DataSource data;
  std::unique_ptr<StepEvents> events;
};

// Seeds come from `index` alone, so the twin built with p0's index does p0's exact work.
TimedNetwork MakeTimedNetwork(const Options& options, const NvtxDomain& domain,
                              const Device& device, std::string name, int index,
                              kernels::Activation activation, const AdamConfig& adam) {
  TimedNetwork timed;
  const RangeNames ranges = RegisterNames(domain, name);
  timed.net = MakeNetwork(std::move(name), device, ranges, options.dims, activation,
                          MixSeed(options.seed, 1 + index), adam);
  timed.data = MakeData(device, options.dims.front(), options.dims.back(),
                        MixSeed(options.seed, 1000 + index));
  timed.events = std::make_unique<StepEvents>(options.inner_steps);
  return timed;
}

// Inner step `step` of a timed network; adds its optimizer step's host time to *host_ms.
Tensor TimedStep(const Options& options, const NvtxDomain& domain, TimedNetwork& timed, int step,
                 double* host_ms) {
  StepTiming timing{0.0, timed.events->start(step), timed.events->stop(step)};
  Tensor loss = TrainStep(options, domain, timed.net, timed.data, &timing);
  *host_ms += timing.host_ms;
  return loss;
}

// Untimed GEMMs on plain cudaMalloc memory (before any allocator exists) until `ms` have
// passed: an idle H200 sits at a low SM clock, and the first run of a batch measured its first
// ~300 iterations 30 % slower than the rest without this.
void WarmUpGpu(cudaStream_t stream, int ms) {
  if (ms <= 0)
    return;
  constexpr int kSide = 1024;
  constexpr std::size_t kElems = std::size_t{kSide} * kSide;
  float* buffers[3] = {};
  for (float*& buffer : buffers) {
    CUCLIMB_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&buffer), kElems * sizeof(float)));
    kernels::FillUniform(buffer, kElems, -1.0f, 1.0f, 7, stream);
  }
  const Clock::time_point start = Clock::now();
  while (MillisecondsSince(start) < ms) {
    for (int i = 0; i < 8; ++i) {
      kernels::Gemm(kernels::Transpose::kNo, kernels::Transpose::kNo, kSide, kSide, kSide, 1.0f,
                    buffers[0], kSide, buffers[1], kSide, 0.0f, buffers[2], kSide, stream);
    }
    CUCLIMB_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  for (float* buffer : buffers) CUCLIMB_CUDA_CHECK(cudaFree(buffer));
}

}  // namespace

std::vector<std::string> PersistentNames(const Options& options) {
  std::vector<std::string> names;
  for (int k = 0; k < options.nets; ++k) names.push_back("p" + std::to_string(k));
  return names;
}

TrainResult Train(const Options& options,
                  const std::function<void(const IterationRecord&)>& on_iteration) {
  CUCLIMB_CUDA_CHECK(cudaSetDevice(options.device));
  CUCLIMB_CUDA_CHECK(cudaFree(nullptr));  // create the primary context for the driver calls
  cudaStream_t stream = nullptr;
  CUCLIMB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  float* host_losses = nullptr;  // pinned, so the per-iteration loss copies stay asynchronous
  CUCLIMB_CUDA_CHECK(
      cudaMallocHost(reinterpret_cast<void**>(&host_losses), sizeof(float) * (options.nets + 2)));

  WarmUpGpu(stream, options.gpu_warmup_ms);

  TrainResult result;
  {
    const NvtxDomain domain;
    const nvtxStringHandle_t iter_name = domain.Register("iter");
    const bool climb = options.mode == Mode::kClimb;
    const int ephemeral_steps = options.EffectiveEphemeralSteps();
    const kernels::Activation activation = ToKernel(options.activation);
    const AdamConfig adam = MakeAdamConfig(options);

    AllocatorFactory factory(MakeAllocatorConfig(options));
    std::unique_ptr<DeviceAllocator> shared = factory.Create(stream, "shared");
    std::unique_ptr<DeviceAllocator> separate;
    if (climb && options.separate_pools)
      separate = factory.Create(stream, "ephemeral");
    std::vector<DeviceAllocator*> allocators = {shared.get()};
    if (separate)
      allocators.push_back(separate.get());
    const Device shared_device{shared.get(), stream};
    const Device ephemeral_device{separate ? separate.get() : shared.get(), stream};
    // The reference twin gets an instance of the allocator that shares nothing (async: a pool of
    // its own): the same calls per step as p0. It stays out of `allocators`: its counters would
    // blur the measured allocator's in --stats.
    std::unique_ptr<DeviceAllocator> reference_allocator;
    if (options.reference)
      reference_allocator = factory.CreatePrivate(stream, "reference");
    const Device reference_device{reference_allocator.get(), stream};

    {
      std::vector<TimedNetwork> nets;
      for (int k = 0; k < options.nets; ++k) {
        nets.push_back(MakeTimedNetwork(options, domain, shared_device, PersistentNames(options)[k],
                                        k, activation, adam));
        result.names.push_back(nets.back().net.name);
      }
      std::optional<TimedNetwork> reference;
      if (options.reference) {
        reference = MakeTimedNetwork(options, domain, reference_device, "ref", /*index=*/0,
                                     activation, adam);
      }
      const std::vector<int>& edims = options.EffectiveEphemeralDims();
      std::optional<DataSource> ephemeral_data;
      if (climb) {
        ephemeral_data =
            MakeData(ephemeral_device, edims.front(), edims.back(), MixSeed(options.seed, 2000));
      }
      const RangeNames ephemeral_ranges = RegisterNames(domain, "eph");
      // Tensors kept alive across cycles by the retention knobs: above the allocator, like a
      // loss history kept as tensors or parameters held by a stale reference.
      std::vector<Tensor> retained;

      for (int it = 0; it < options.iters; ++it) {
        ScopedRange iter_range(domain, iter_name, static_cast<uint64_t>(it));
        const Clock::time_point iter_start = Clock::now();
        IterationRecord record;
        record.iter = it;
        std::vector<double> st_ms(options.nets, 0.0);
        std::vector<Tensor> last_loss(options.nets);

        std::optional<Network> ephemeral;
        if (climb) {
          ephemeral = MakeNetwork("eph", ephemeral_device, ephemeral_ranges, edims, activation,
                                  MixSeed(options.seed, 100000 + it), adam);
        }

        for (int s = 0; s < options.inner_steps; ++s) {
          for (int k = 0; k < options.nets; ++k) {
            last_loss[k] = TimedStep(options, domain, nets[k], s, &st_ms[k]);
          }
          if (reference) {
            Tensor loss = TimedStep(options, domain, *reference, s, &record.ref_st_ms);
            if (s == options.inner_steps - 1) {
              CUCLIMB_CUDA_CHECK(cudaMemcpyAsync(host_losses + options.nets + 1, loss.f32(),
                                                 sizeof(float), cudaMemcpyDeviceToHost, stream));
            }
          }
          if (ephemeral && s < ephemeral_steps) {
            Tensor loss = TrainStep(options, domain, *ephemeral, *ephemeral_data, nullptr);
            if (s == ephemeral_steps - 1) {
              CUCLIMB_CUDA_CHECK(cudaMemcpyAsync(host_losses + options.nets, loss.f32(),
                                                 sizeof(float), cudaMemcpyDeviceToHost, stream));
            }
            if (s >= ephemeral_steps - options.retain_tiny)
              retained.push_back(std::move(loss));
          }
        }
        for (int k = 0; k < options.nets; ++k) {
          CUCLIMB_CUDA_CHECK(cudaMemcpyAsync(host_losses + k, last_loss[k].f32(), sizeof(float),
                                             cudaMemcpyDeviceToHost, stream));
        }
        if (ephemeral) {
          if (options.retain_params) {
            for (Tensor& param : ephemeral->mlp->TakeParameters()) {
              retained.push_back(std::move(param));
            }
          }
          ephemeral.reset();  // the drop: optimizer state and parameters go back
          if (options.cleanup_each_cycle)
            ephemeral_device.allocator->Cleanup();
        }
        CUCLIMB_CUDA_CHECK(cudaStreamSynchronize(stream));
        record.wall_ms = MillisecondsSince(iter_start);
        record.st_ms = st_ms;
        for (int k = 0; k < options.nets; ++k) {
          record.gpu_st_ms.push_back(nets[k].events->TotalMs());
          record.loss.push_back(host_losses[k]);
        }
        record.ephemeral_loss = climb ? host_losses[options.nets] : 0.0f;
        if (reference) {
          record.ref_gpu_st_ms = reference->events->TotalMs();
          record.ref_loss = host_losses[options.nets + 1];
        }
        record.stats = SumStats(allocators);
        if (on_iteration)
          on_iteration(record);
        result.iterations.push_back(std::move(record));
      }
      CUCLIMB_CUDA_CHECK(cudaStreamSynchronize(stream));
      // Tensors go back before their allocators are destroyed (end of this scope).
    }
  }
  CUCLIMB_CUDA_CHECK(cudaFreeHost(host_losses));
  CUCLIMB_CUDA_CHECK(cudaStreamDestroy(stream));
  return result;
}

}  // namespace cuclimb::workloads
