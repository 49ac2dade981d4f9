// SPDX-License-Identifier: Apache-2.0
// Parsing of CUCLIMB_* values and of the output pattern (see config.h).
#include "interposer/config.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace cuclimb::interposer {
namespace {

bool Equals(const char* a, const char* b) {
  return std::strcmp(a, b) == 0;
}

// Accepts on/off, 1/0, true/false, yes/no.
bool ParseBool(const char* value, bool* out) {
  if (Equals(value, "1") || Equals(value, "on") || Equals(value, "true") || Equals(value, "yes")) {
    *out = true;
    return true;
  }
  if (Equals(value, "0") || Equals(value, "off") || Equals(value, "false") || Equals(value, "no")) {
    *out = false;
    return true;
  }
  return false;
}

bool ParseUint(const char* value, uint32_t min, uint32_t max, uint32_t* out) {
  if (value[0] < '0' || value[0] > '9')
    return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(value, &end, 10);
  if (errno != 0 || end == value || *end != '\0' || v < min || v > max)
    return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

bool Fail(char* error, size_t error_size, OptionKey key, const char* value, const char* expected) {
  if (error != nullptr && error_size > 0) {
    std::snprintf(error, error_size, "%s=%s is not valid (expected %s)", InfoOf(key).env, value,
                  expected);
  }
  return false;
}

bool ParseIterationNames(const char* value, Config* config) {
  Config tmp = *config;
  tmp.iteration_count = 0;
  const char* p = value;
  while (*p != '\0') {
    const char* comma = std::strchr(p, ',');
    const size_t len = comma != nullptr ? static_cast<size_t>(comma - p) : std::strlen(p);
    if (len > 0) {
      if (len >= kMaxIterationNameBytes || tmp.iteration_count == kMaxIterationNames)
        return false;
      std::memcpy(tmp.iteration[tmp.iteration_count], p, len);
      tmp.iteration[tmp.iteration_count][len] = '\0';
      ++tmp.iteration_count;
    }
    if (comma == nullptr)
      break;
    p = comma + 1;
  }
  std::memcpy(config->iteration, tmp.iteration, sizeof(tmp.iteration));
  config->iteration_count = tmp.iteration_count;
  return true;
}

}  // namespace

const OptionInfo& InfoOf(OptionKey key) noexcept {
  return kOptionTable[static_cast<int>(key)];
}

bool ApplyOption(Config* config, OptionKey key, const char* value, char* error,
                 size_t error_size) noexcept {
  if (value == nullptr)
    return true;
  switch (key) {
    case OptionKey::kOutput: {
      const size_t len = std::strlen(value);
      if (len == 0 || len >= sizeof(config->output)) {
        return Fail(error, error_size, key, value, "a path of 1 to 1023 bytes");
      }
      char expanded[kMaxPathBytes];
      char why[128];
      PatternValues probe;
      if (!ExpandOutputPattern(value, probe, expanded, sizeof(expanded), why, sizeof(why))) {
        if (error != nullptr && error_size > 0) {
          std::snprintf(error, error_size, "%s=%s is not valid: %s", InfoOf(key).env, value, why);
        }
        return false;
      }
      std::memcpy(config->output, value, len + 1);
      return true;
    }
    case OptionKey::kKernels:
      if (Equals(value, "off")) {
        config->kernels = KernelMode::kOff;
      } else if (Equals(value, "sampled")) {
        config->kernels = KernelMode::kSampled;
      } else if (Equals(value, "all")) {
        config->kernels = KernelMode::kAll;
      } else {
        return Fail(error, error_size, key, value, "off, sampled or all");
      }
      return true;
    case OptionKey::kKernelEvery:
      return ParseUint(value, 1, 1u << 20, &config->kernel_every) ||
             Fail(error, error_size, key, value, "an integer from 1 to 1048576");
    case OptionKey::kApi:
      return ParseBool(value, &config->api) || Fail(error, error_size, key, value, "on or off");
    case OptionKey::kMemoryActivity: {
      bool on = false;
      if (Equals(value, "sampled")) {
        config->memory_activity = MemoryActivity::kSampled;
      } else if (ParseBool(value, &on)) {
        config->memory_activity = on ? MemoryActivity::kOn : MemoryActivity::kOff;
      } else {
        return Fail(error, error_size, key, value, "off, sampled or on");
      }
      return true;
    }
    case OptionKey::kStacks:
      if (Equals(value, "off")) {
        config->stacks = StackMode::kOff;
        config->python_stacks = false;
      } else if (Equals(value, "fp")) {
        config->stacks = StackMode::kFramePointer;
        config->python_stacks = false;
      } else if (Equals(value, "unwind")) {
        config->stacks = StackMode::kUnwind;
        config->python_stacks = false;
      } else if (Equals(value, "python") || Equals(value, "python,fp") ||
                 Equals(value, "fp,python")) {
        config->stacks = StackMode::kFramePointer;
        config->python_stacks = true;
      } else if (Equals(value, "python,unwind") || Equals(value, "unwind,python")) {
        config->stacks = StackMode::kUnwind;
        config->python_stacks = true;
      } else {
        return Fail(error, error_size, key, value, "off, fp, unwind, python or python,unwind");
      }
      return true;
    case OptionKey::kStackDepth:
      return ParseUint(value, 1, 256, &config->stack_depth) ||
             Fail(error, error_size, key, value, "an integer from 1 to 256");
    case OptionKey::kSampleHz:
      return ParseUint(value, 0, 10000, &config->sample_hz) ||
             Fail(error, error_size, key, value, "an integer from 0 to 10000");
    case OptionKey::kGaugeMs:
      if (Equals(value, "off")) {
        config->gauges = false;
        return true;
      }
      if (ParseUint(value, 0, 3600u * 1000, &config->gauge_ms)) {
        config->gauges = true;
        return true;
      }
      return Fail(error, error_size, key, value, "milliseconds from 0 to 3600000, or off");
    case OptionKey::kIteration:
      return ParseIterationNames(value, config) ||
             Fail(error, error_size, key, value, "at most 8 comma-separated names of < 48 bytes");
    case OptionKey::kFollowChildren:
      return ParseBool(value, &config->follow_children) ||
             Fail(error, error_size, key, value, "on or off");
    case OptionKey::kPaused:
      return ParseBool(value, &config->paused) || Fail(error, error_size, key, value, "0 or 1");
    case OptionKey::kRingKib:
      return ParseUint(value, 64, 1u << 20, &config->ring_kib) ||
             Fail(error, error_size, key, value, "KiB from 64 to 1048576");
    case OptionKey::kFlushMs:
      return ParseUint(value, 5, 10000, &config->flush_ms) ||
             Fail(error, error_size, key, value, "milliseconds from 5 to 10000");
    case OptionKey::kLog:
      if (Equals(value, "warn")) {
        config->quiet = false;
      } else if (Equals(value, "quiet")) {
        config->quiet = true;
      } else {
        return Fail(error, error_size, key, value, "warn or quiet");
      }
      return true;
    case OptionKey::kCount:
      break;
  }
  return false;
}

bool QuietFromEnv(GetenvFn getenv_fn) noexcept {
  const char* value = getenv_fn(InfoOf(OptionKey::kLog).env);
  return value != nullptr && Equals(value, "quiet");
}

Config LoadConfig(GetenvFn getenv_fn, WarnFn warn) noexcept {
  Config config;
  if (QuietFromEnv(getenv_fn))
    warn = nullptr;  // CUCLIMB_LOG=quiet silences the other options' warnings too
  for (const OptionInfo& info : kOptionTable) {
    const char* value = getenv_fn(info.env);
    if (value == nullptr)
      continue;
    char error[256];
    if (!ApplyOption(&config, info.key, value, error, sizeof(error)) && warn != nullptr) {
      char message[320];
      std::snprintf(message, sizeof(message), "%s; using the default %s", error,
                    info.default_value);
      warn(message);
    }
  }
  return config;
}

bool IsIterationName(const Config& config, const char* name) noexcept {
  if (name == nullptr || name[0] == '\0')
    return false;
  for (size_t i = 0; i < config.iteration_count; ++i) {
    const char* pattern = config.iteration[i];
    const size_t len = std::strlen(pattern);
    if (len > 0 && pattern[len - 1] == '*') {
      if (std::strncmp(name, pattern, len - 1) == 0)
        return true;
    } else if (std::strcmp(name, pattern) == 0) {
      return true;
    }
  }
  return false;
}

bool ExpandOutputPattern(const char* pattern, const PatternValues& values, char* out,
                         size_t out_size, char* error, size_t error_size) noexcept {
  size_t n = 0;
  auto put = [&](const char* s, size_t len) {
    if (n + len >= out_size)
      return false;
    std::memcpy(out + n, s, len);
    n += len;
    return true;
  };
  for (const char* p = pattern; *p != '\0'; ++p) {
    bool ok = true;
    if (*p != '%') {
      ok = put(p, 1);
    } else {
      ++p;
      char num[24];
      switch (*p) {
        case 'p':
          ok = put(num, static_cast<size_t>(std::snprintf(num, sizeof(num), "%ld", values.pid)));
          break;
        case 'h':
          ok = put(values.host, std::strlen(values.host));
          break;
        case 'r': {
          const char* rank = values.rank[0] != '\0' ? values.rank : "0";
          ok = put(rank, std::strlen(rank));
          break;
        }
        case 'e':
          ok = put(values.program, std::strlen(values.program));
          break;
        case '%':
          ok = put("%", 1);
          break;
        default:
          if (error != nullptr && error_size > 0) {
            const char seq[2] = {*p, '\0'};
            std::snprintf(error, error_size,
                          "unknown %%-sequence '%%%s' (known: %%p %%h %%r %%e %%%%)", seq);
          }
          return false;
      }
      if (*p == '\0')
        break;
    }
    if (!ok) {
      if (error != nullptr && error_size > 0) {
        std::snprintf(error, error_size, "the expanded path is longer than %zu bytes",
                      out_size - 1);
      }
      return false;
    }
  }
  if (n >= out_size)
    return false;
  out[n] = '\0';
  return true;
}

bool PreloadWithoutCuclimb(const char* preload, char* out, size_t out_size) noexcept {
  if (out_size == 0)
    return false;
  size_t n = 0;
  const char* p = preload;
  while (*p != '\0') {
    const char* start = p;
    while (*p == ' ' || *p == ':') ++p;
    const char separator = p > start ? p[-1] : ' ';
    const char* entry = p;
    while (*p != '\0' && *p != ' ' && *p != ':') ++p;
    const size_t len = static_cast<size_t>(p - entry);
    if (len == 0)
      break;
    const char* base = entry;
    for (const char* q = entry; q < p; ++q) {
      if (*q == '/')
        base = q + 1;
    }
    constexpr char kOurs[] = "libcuclimb";
    const bool ours = static_cast<size_t>(p - base) >= sizeof(kOurs) - 1 &&
                      std::strncmp(base, kOurs, sizeof(kOurs) - 1) == 0;
    if (ours)
      continue;
    const size_t need = (n > 0 ? 1 : 0) + len;
    if (n + need >= out_size) {
      out[0] = '\0';
      return false;
    }
    if (n > 0)
      out[n++] = separator;
    std::memcpy(out + n, entry, len);
    n += len;
  }
  out[n] = '\0';
  return true;
}

const char* RankFromEnv(GetenvFn getenv_fn) noexcept {
  for (const char* name : kRankVariables) {
    const char* v = getenv_fn(name);
    if (v == nullptr || v[0] == '\0' || std::strlen(v) > 9)
      continue;
    bool digits = true;
    for (const char* c = v; *c != '\0'; ++c) digits = digits && *c >= '0' && *c <= '9';
    if (digits)
      return v;
  }
  return nullptr;
}

}  // namespace cuclimb::interposer
