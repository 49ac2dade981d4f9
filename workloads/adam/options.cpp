// SPDX-License-Identifier: Apache-2.0
// Table-driven flag parsing and validation for cuclimb-adam.
#include "workloads/adam/options.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <limits>
#include <string_view>

namespace cuclimb::workloads {
namespace {

constexpr int kMaxIters = 10'000'000;
constexpr int kMaxInnerSteps = 100'000;
constexpr int kMaxNets = 16;
constexpr int kMaxLayers = 16;
constexpr int kMaxWidth = 1 << 16;
constexpr int kMaxBatch = 1 << 16;
// Refuse runs that cannot fit any GPU we target (the H200 has 141 GB); a clear error beats an
// out-of-memory abort half-way through.
constexpr uint64_t kMaxDeviceBytes = uint64_t{100} << 30;

template <typename T>
bool ParseInteger(std::string_view text, T* out) {
  if (text.empty())
    return false;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

bool ParseFloat(std::string_view text, float* out) {
  if (text.empty())
    return false;
  // from_chars for float is in GCC 12's libstdc++.
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

bool ParseDims(std::string_view text, std::vector<int>* out) {
  out->clear();
  while (true) {
    const std::size_t comma = text.find(',');
    int width = 0;
    if (!ParseInteger(text.substr(0, comma), &width))
      return false;
    out->push_back(width);
    if (comma == std::string_view::npos)
      return true;
    text.remove_prefix(comma + 1);
  }
}

using Setter = std::function<std::string(Options&, std::string_view)>;

struct Flag {
  const char* name;
  bool takes_value;
  Setter set;
};

Setter IntFlag(int Options::*field) {
  return [field](Options& options, std::string_view value) -> std::string {
    if (!ParseInteger(value, &(options.*field)))
      return "expects an integer";
    return "";
  };
}

Setter FloatFlag(float Options::*field) {
  return [field](Options& options, std::string_view value) -> std::string {
    if (!ParseFloat(value, &(options.*field)))
      return "expects a number";
    return "";
  };
}

Setter BoolFlag(bool Options::*field, bool value) {
  return [field, value](Options& options, std::string_view) -> std::string {
    options.*field = value;
    return "";
  };
}

std::string SetMode(Options& options, std::string_view value) {
  if (value == "flat") {
    options.mode = Mode::kFlat;
  } else if (value == "climb") {
    options.mode = Mode::kClimb;
  } else {
    return "expects flat or climb";
  }
  return "";
}

std::string SetAllocator(Options& options, std::string_view value) {
  if (value == "direct") {
    options.allocator = AllocatorKind::kDirect;
  } else if (value == "async") {
    options.allocator = AllocatorKind::kAsync;
  } else if (value == "caching") {
    options.allocator = AllocatorKind::kCaching;
  } else if (value == "cubecl") {
    options.allocator = AllocatorKind::kCubecl;
  } else {
    return "expects direct, async, caching or cubecl";
  }
  return "";
}

std::string SetTask(Options& options, std::string_view value) {
  if (value == "regression") {
    options.task = Task::kRegression;
  } else if (value == "classification") {
    options.task = Task::kClassification;
  } else {
    return "expects regression or classification";
  }
  return "";
}

std::string SetActivation(Options& options, std::string_view value) {
  if (value == "relu") {
    options.activation = ActivationKind::kRelu;
  } else if (value == "gelu") {
    options.activation = ActivationKind::kGelu;
  } else {
    return "expects relu or gelu";
  }
  return "";
}

std::string SetTiming(Options& options, std::string_view value) {
  if (value == "isolated") {
    options.timing = Timing::kIsolated;
  } else if (value == "overlapped") {
    options.timing = Timing::kOverlapped;
  } else {
    return "expects isolated or overlapped";
  }
  return "";
}

std::string SetMetaPool(Options& options, std::string_view value) {
  if (value == "shared") {
    options.separate_meta_pool = false;
  } else if (value == "separate") {
    options.separate_meta_pool = true;
  } else {
    return "expects shared or separate";
  }
  return "";
}

const std::vector<Flag>& Flags() {
  static const std::vector<Flag> flags = {
      {"mode", true, SetMode},
      {"iters", true, IntFlag(&Options::iters)},
      {"outer", true, IntFlag(&Options::iters)},
      {"inner-steps", true, IntFlag(&Options::inner_steps)},
      {"inner", true, IntFlag(&Options::inner_steps)},
      {"ephemeral-steps", true, IntFlag(&Options::ephemeral_steps)},
      {"inner-e", true, IntFlag(&Options::ephemeral_steps)},
      {"nets", true, IntFlag(&Options::nets)},
      {"dims", true,
       [](Options& o, std::string_view v) -> std::string {
         return ParseDims(v, &o.dims) ? "" : "expects comma-separated integers, e.g. 64,256,256,8";
       }},
      {"pdims", true,
       [](Options& o, std::string_view v) -> std::string {
         return ParseDims(v, &o.dims) ? "" : "expects comma-separated integers, e.g. 64,256,256,8";
       }},
      {"edims", true,
       [](Options& o, std::string_view v) -> std::string {
         return ParseDims(v, &o.ephemeral_dims) ? "" : "expects comma-separated integers";
       }},
      {"batch", true, IntFlag(&Options::batch)},
      {"seed", true,
       [](Options& o, std::string_view v) -> std::string {
         return ParseInteger(v, &o.seed) ? "" : "expects a non-negative integer";
       }},
      {"task", true, SetTask},
      {"activation", true, SetActivation},
      {"lr", true, FloatFlag(&Options::lr)},
      {"weight-decay", true, FloatFlag(&Options::weight_decay)},
      {"adamw", false, BoolFlag(&Options::adamw, true)},
      {"inplace-adam", false, BoolFlag(&Options::inplace_adam, true)},
      {"allocator", true, SetAllocator},
      {"release-threshold", true,
       [](Options& o, std::string_view v) -> std::string {
         if (v == "max") {
           o.release_threshold_bytes = std::numeric_limits<uint64_t>::max();
           return "";
         }
         return ParseInteger(v, &o.release_threshold_bytes) ? "" : "expects bytes or 'max'";
       }},
      {"nvtx-mem", false, BoolFlag(&Options::nvtx_mem, true)},
      {"retain-tiny", true, IntFlag(&Options::retain_tiny)},
      {"retain-params", false, BoolFlag(&Options::retain_params, true)},
      {"separate-pools", false, BoolFlag(&Options::separate_pools, true)},
      {"cleanup-each-cycle", false, BoolFlag(&Options::cleanup_each_cycle, true)},
      {"no-window", false, BoolFlag(&Options::persistent_window, false)},
      {"no-size-match", false, BoolFlag(&Options::size_match, false)},
      {"no-persistent", false, BoolFlag(&Options::persistent_pool, false)},
      {"align", true,
       [](Options& o, std::string_view v) -> std::string {
         return ParseInteger(v, &o.align) ? "" : "expects an integer";
       }},
      {"meta-pool", true, SetMetaPool},
      {"rounded-meta", false, BoolFlag(&Options::rounded_meta, true)},
      {"unrounded-meta", false, BoolFlag(&Options::rounded_meta, false)},
      {"stats", false, BoolFlag(&Options::stats, true)},
      {"json", false, BoolFlag(&Options::json, true)},
      {"timing", true, SetTiming},
      {"gpu-warmup-ms", true, IntFlag(&Options::gpu_warmup_ms)},
      {"reference", false, BoolFlag(&Options::reference, true)},
      {"warmup", true, IntFlag(&Options::warmup)},
      {"summary-window", true, IntFlag(&Options::summary_window)},
      {"device", true, IntFlag(&Options::device)},
  };
  return flags;
}

bool IsPowerOfTwo(uint64_t value) {
  return value != 0 && (value & (value - 1)) == 0;
}

std::string ValidateDims(const char* flag, const std::vector<int>& dims) {
  if (dims.size() < 2 || dims.size() > kMaxLayers + 1) {
    return std::string("--") + flag + ": needs 2 to " + std::to_string(kMaxLayers + 1) +
           " widths (input, hidden..., output)";
  }
  for (const int width : dims) {
    if (width < 1 || width > kMaxWidth) {
      return std::string("--") + flag + ": width " + std::to_string(width) + " is outside 1.." +
             std::to_string(kMaxWidth);
    }
  }
  return "";
}

uint64_t NetworkBytes(const std::vector<int>& dims, int batch) {
  uint64_t params = 0;
  uint64_t activations = 0;
  for (std::size_t i = 0; i + 1 < dims.size(); ++i) {
    params += static_cast<uint64_t>(dims[i]) * dims[i + 1] + dims[i + 1];
    activations += static_cast<uint64_t>(batch) * dims[i + 1];
  }
  activations += static_cast<uint64_t>(batch) * dims.front();
  // Parameter, gradient, two moments, their replacements and Adam's temporary: 8 copies at the
  // peak of an out-of-place step; pre- and post-activation plus a gradient per layer.
  return 4 * (8 * params + 3 * activations);
}

}  // namespace

const char* ModeName(Mode mode) {
  return mode == Mode::kFlat ? "flat" : "climb";
}

const char* TaskName(Task task) {
  return task == Task::kRegression ? "regression" : "classification";
}

const char* ActivationName(ActivationKind activation) {
  return activation == ActivationKind::kRelu ? "relu" : "gelu";
}

const char* TimingName(Timing timing) {
  return timing == Timing::kIsolated ? "isolated" : "overlapped";
}

AllocatorConfig MakeAllocatorConfig(const Options& options) {
  AllocatorConfig config;
  config.kind = options.allocator;
  config.release_threshold_bytes = options.release_threshold_bytes;
  config.nvtx_mem = options.nvtx_mem;
  config.cubecl.alignment = options.align;
  config.cubecl.persistent_pool = options.persistent_pool;
  config.cubecl.persistent_window = options.persistent_window;
  config.cubecl.size_match = options.size_match;
  config.cubecl.separate_meta_pool = options.separate_meta_pool;
  config.cubecl.round_metadata = options.rounded_meta;
  config.cubecl.nvtx_mem = options.nvtx_mem;
  return config;
}

int Options::EffectiveWarmup() const {
  if (warmup >= 0)
    return std::min(warmup, iters - 1);
  return std::min(50, iters / 10);
}

int Options::EffectiveSummaryWindow() const {
  const int available = iters - EffectiveWarmup();
  const int window = summary_window > 0 ? summary_window : std::max(1, iters / 20);
  return std::max(1, std::min(window, available / 2 > 0 ? available / 2 : 1));
}

uint64_t EstimateDeviceBytes(const Options& options) {
  uint64_t total = static_cast<uint64_t>(options.nets) * NetworkBytes(options.dims, options.batch);
  if (options.mode == Mode::kClimb) {
    total += NetworkBytes(options.EffectiveEphemeralDims(), options.batch);
    if (options.retain_params) {
      // Retained parameters of every cycle stay resident.
      total += static_cast<uint64_t>(options.iters) *
               NetworkBytes(options.EffectiveEphemeralDims(), 0) / 8;
    }
  }
  return total;
}

ParseResult ParseOptions(int argc, const char* const* argv) {
  ParseResult result;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      result.help = true;
      result.ok = true;
      return result;
    }
    if (arg.substr(0, 2) != "--") {
      result.error = "unexpected argument '" + std::string(arg) + "' (flags start with --)";
      return result;
    }
    arg.remove_prefix(2);
    std::string_view name = arg;
    std::string_view value;
    bool has_inline_value = false;
    if (const std::size_t eq = arg.find('='); eq != std::string_view::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_inline_value = true;
    }
    const auto& flags = Flags();
    const auto flag =
        std::find_if(flags.begin(), flags.end(), [&](const Flag& f) { return name == f.name; });
    if (flag == flags.end()) {
      result.error = "unknown flag --" + std::string(name) + " (see --help)";
      return result;
    }
    if (flag->takes_value && !has_inline_value) {
      if (i + 1 >= argc) {
        result.error = "--" + std::string(name) + " needs a value";
        return result;
      }
      value = argv[++i];
    } else if (!flag->takes_value && has_inline_value) {
      result.error = "--" + std::string(name) + " takes no value";
      return result;
    }
    if (std::string error = flag->set(result.options, value); !error.empty()) {
      result.error = "--" + std::string(name) + " " + error + ", got '" + std::string(value) + "'";
      return result;
    }
  }
  result.error = ValidateOptions(result.options);
  result.ok = result.error.empty();
  return result;
}

std::string ValidateOptions(const Options& o) {
  if (o.iters < 1 || o.iters > kMaxIters) {
    return "--iters must be in 1.." + std::to_string(kMaxIters);
  }
  if (o.inner_steps < 1 || o.inner_steps > kMaxInnerSteps) {
    return "--inner-steps must be in 1.." + std::to_string(kMaxInnerSteps);
  }
  if (o.ephemeral_steps < 0 || o.ephemeral_steps > o.inner_steps) {
    return "--ephemeral-steps must be in 1..--inner-steps (" + std::to_string(o.inner_steps) +
           "); the ephemeral network trains inside the same inner loop";
  }
  if (o.nets < 1 || o.nets > kMaxNets)
    return "--nets must be in 1.." + std::to_string(kMaxNets);
  if (std::string error = ValidateDims("dims", o.dims); !error.empty())
    return error;
  if (!o.ephemeral_dims.empty()) {
    if (std::string error = ValidateDims("edims", o.ephemeral_dims); !error.empty())
      return error;
  }
  if (o.batch < 1 || o.batch > kMaxBatch)
    return "--batch must be in 1.." + std::to_string(kMaxBatch);
  if (o.task == Task::kClassification &&
      (o.dims.back() < 2 || o.EffectiveEphemeralDims().back() < 2)) {
    return "--task classification needs an output width of at least 2";
  }
  if (!(o.lr > 0.0f) || o.lr > 1.0f)
    return "--lr must be in (0, 1]";
  if (!(o.weight_decay >= 0.0f) || o.weight_decay > 1.0f)
    return "--weight-decay must be in [0, 1]";
  if (o.retain_tiny < 0)
    return "--retain-tiny must be >= 0";
  if (o.mode == Mode::kFlat && (o.retain_tiny > 0 || o.retain_params)) {
    return "--retain-tiny/--retain-params retain the ephemeral network's tensors: they need "
           "--mode climb";
  }
  if (o.retain_tiny > o.EffectiveEphemeralSteps()) {
    return "--retain-tiny keeps that many of the ephemeral network's per-step loss scalars per "
           "cycle, so it can be at most --ephemeral-steps (" +
           std::to_string(o.EffectiveEphemeralSteps()) + ")";
  }
  const bool cubecl = o.allocator == AllocatorKind::kCubecl;
  const Options defaults;
  if (!cubecl &&
      (o.persistent_window != defaults.persistent_window || o.size_match != defaults.size_match ||
       o.persistent_pool != defaults.persistent_pool || o.align != defaults.align ||
       o.separate_meta_pool != defaults.separate_meta_pool ||
       o.rounded_meta != defaults.rounded_meta)) {
    return "--no-window, --no-size-match, --no-persistent, --align, --meta-pool and "
           "--rounded-meta are knobs of --allocator=cubecl";
  }
  if (!IsPowerOfTwo(o.align) || o.align < 16 || o.align > 4096) {
    return "--align must be a power of two in 16..4096";
  }
  if (o.nvtx_mem && !(cubecl || o.allocator == AllocatorKind::kCaching)) {
    return "--nvtx-mem describes pools: it applies to --allocator=caching or cubecl";
  }
  if (o.release_threshold_bytes != 0 && o.allocator != AllocatorKind::kAsync) {
    return "--release-threshold applies to --allocator=async";
  }
  if (o.warmup < -1 || o.summary_window < -1 || o.summary_window == 0) {
    return "--warmup must be >= 0 and --summary-window >= 1";
  }
  if (o.device < 0)
    return "--device must be >= 0";
  if (o.gpu_warmup_ms < 0 || o.gpu_warmup_ms > 60000) {
    return "--gpu-warmup-ms must be in 0..60000";
  }
  // Element counts must fit the kernels' 32-bit row/column arithmetic.
  const auto too_big = [&](const std::vector<int>& dims) {
    for (const int width : dims) {
      if (static_cast<uint64_t>(width) * o.batch > (uint64_t{1} << 31) - 1)
        return true;
    }
    for (std::size_t i = 0; i + 1 < dims.size(); ++i) {
      if (static_cast<uint64_t>(dims[i]) * dims[i + 1] > (uint64_t{1} << 31) - 1)
        return true;
    }
    return false;
  };
  if (too_big(o.dims) || too_big(o.EffectiveEphemeralDims())) {
    return "a layer or activation has more than 2^31-1 elements";
  }
  const uint64_t bytes = EstimateDeviceBytes(o);
  if (bytes > kMaxDeviceBytes) {
    return "these sizes need about " + std::to_string(bytes >> 30) +
           " GiB of device memory, more than the " + std::to_string(kMaxDeviceBytes >> 30) +
           " GiB this workload allows";
  }
  return "";
}

std::string Usage() {
  return R"(usage: cuclimb-adam [flags]

Trains MLPs with Adam on synthetic data and prints the persistent network's optimizer-step
wall-clock per outer iteration (iter=<N> st=<X>ms), like the cubecl issue-1406 reproducer.

reproducer
  --mode flat|climb        climb: a fresh network + Adam per outer iteration, dropped after (flat)
  --iters N                outer iterations (1500); alias --outer
  --inner-steps N          training steps per network per outer iteration (10); alias --inner
  --ephemeral-steps N      steps of the ephemeral network (= --inner-steps); alias --inner-e
  --nets N                 persistent networks p0..p{N-1} (1)
  --dims W0,W1,...         layer widths of persistent networks (64,256,256,8); alias --pdims
  --edims W0,W1,...        layer widths of the ephemeral network (= --dims)
  --batch N                batch size (64)
  --seed N                 seed for weights and data (42)
  --task regression|classification   MSE on a tanh teacher, or softmax CE on argmax labels
  --activation relu|gelu   hidden activation (relu)
  --lr X --weight-decay X --adamw --inplace-adam     optimizer (1e-3, 0, Adam, out-of-place)

allocators
  --allocator direct|async|caching|cubecl            (cubecl)
  --release-threshold BYTES|max                      async: default pool release threshold (0)
  --nvtx-mem               caching/cubecl: describe pools with the NVTX memory API
  --retain-tiny N          keep N of the ephemeral net's loss scalars alive per cycle (0)
  --retain-params          keep the ephemeral net's parameters alive per cycle
  --separate-pools         the ephemeral net gets its own allocator instance
  --cleanup-each-cycle     explicit allocator cleanup after each drop
  cubecl only: --no-window --no-size-match --no-persistent --align N (512)
               --meta-pool shared|separate --rounded-meta

measurement
  --timing isolated|overlapped   st per step with the stream synchronised around it (isolated)
                           or the calls alone, queue back-pressure included (overlapped)
  --gpu-warmup-ms N        untimed GPU work before iteration 0 (300)
  --reference              also step "ref", p0's twin on a private instance of the allocator,
                           and report st/ref: the climb with the machine's own drift divided out

output
  --stats                  allocator counters per iteration
  --json                   JSON Lines instead of text
  --warmup N --summary-window N   summary: median of the first window after warm-up vs last
  --device N               CUDA device ordinal (0)
)";
}

}  // namespace cuclimb::workloads
