// SPDX-License-Identifier: Apache-2.0
// The CUDA runtime code ranges of cuda_code.h.
#include "interposer/cuda_code.h"

#include <atomic>
#include <cstddef>

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include "interposer/stack.h"
#include "interposer/static_cudart.h"

namespace cuclimb::interposer {
namespace {

// File-name prefixes of the libraries a CUDA call crosses before it reaches our callback. The
// driver's helpers (libnvidia-*) are not on that path.
constexpr std::string_view kCudaModulePrefixes[] = {
    "libcuda.so", "libcupti.so", "libcudart.so", "libnvToolsExt.so", "libcudadebugger.so",
};

constexpr size_t kMaxRanges = 64;
constexpr size_t kMaxStaticCudartRanges = 16;

struct AtomicRange {
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
};

// Sequence lock: odd while the single writer publishes.
std::atomic<uint32_t> g_sequence{0};
std::atomic<size_t> g_count{0};
AtomicRange g_ranges[kMaxRanges];

// Static cudart in the program, as ELF addresses: the program never changes, so it is read once.
CodeRange g_static_cudart[kMaxStaticCudartRanges];
size_t g_static_cudart_count = 0;
bool g_static_cudart_read = false;

struct Collected {
  CodeRange ranges[kMaxRanges];
  size_t count = 0;
  uintptr_t own_base = 0;
  void Add(uintptr_t begin, uintptr_t end) {
    if (count < kMaxRanges && end > begin)
      ranges[count++] = {begin, end};
  }
};

std::string_view FileName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

void AddExecutableSegments(const dl_phdr_info* info, Collected* out) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) != 0) {
      const uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
      out->Add(begin, begin + ph.p_memsz);
    }
  }
}

int VisitObject(dl_phdr_info* info, size_t, void* arg) {
  auto* out = static_cast<Collected*>(arg);
  const std::string_view name = info->dlpi_name != nullptr ? info->dlpi_name : "";
  if (info->dlpi_addr == out->own_base && out->own_base != 0) {
    AddExecutableSegments(info, out);
    for (int i = 0; i < info->dlpi_phnum; ++i) {
      const ElfW(Phdr)& ph = info->dlpi_phdr[i];
      if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) != 0) {
        SetOwnCodeRange(info->dlpi_addr + ph.p_vaddr, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
        break;
      }
    }
  } else if (IsCudaRuntimeModule(name)) {
    AddExecutableSegments(info, out);
  } else if (name.empty()) {
    // The program (the first object, with no name): static cudart may live in it.
    if (!g_static_cudart_read) {
      g_static_cudart_read = true;
      g_static_cudart_count =
          FindStaticCudart("/proc/self/exe", g_static_cudart, kMaxStaticCudartRanges);
    }
    for (size_t i = 0; i < g_static_cudart_count; ++i) {
      out->Add(info->dlpi_addr + g_static_cudart[i].begin,
               info->dlpi_addr + g_static_cudart[i].end);
    }
  }
  return 0;
}

void Publish(const Collected& c) {
  bool same = g_count.load(std::memory_order_relaxed) == c.count;
  for (size_t i = 0; same && i < c.count; ++i) {
    same = g_ranges[i].begin.load(std::memory_order_relaxed) == c.ranges[i].begin &&
           g_ranges[i].end.load(std::memory_order_relaxed) == c.ranges[i].end;
  }
  if (same)
    return;
  const uint32_t s = g_sequence.load(std::memory_order_relaxed);
  g_sequence.store(s + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  for (size_t i = 0; i < c.count; ++i) {
    g_ranges[i].begin.store(c.ranges[i].begin, std::memory_order_relaxed);
    g_ranges[i].end.store(c.ranges[i].end, std::memory_order_relaxed);
  }
  g_count.store(c.count, std::memory_order_relaxed);
  g_sequence.store(s + 2, std::memory_order_release);
}

}  // namespace

bool IsCudaRuntimeModule(std::string_view path) noexcept {
  const std::string_view name = FileName(path);
  for (std::string_view prefix : kCudaModulePrefixes) {
    if (name.substr(0, prefix.size()) == prefix)
      return true;
  }
  return false;
}

bool IsCudaRuntimeCode(uintptr_t pc) noexcept {
  for (int attempt = 0; attempt < 4; ++attempt) {
    const uint32_t before = g_sequence.load(std::memory_order_acquire);
    if ((before & 1) != 0)
      continue;
    bool hit = false;
    const size_t n = g_count.load(std::memory_order_relaxed);
    for (size_t i = 0; i < n && i < kMaxRanges; ++i) {
      if (pc >= g_ranges[i].begin.load(std::memory_order_relaxed) &&
          pc < g_ranges[i].end.load(std::memory_order_relaxed)) {
        hit = true;
        break;
      }
    }
    std::atomic_thread_fence(std::memory_order_acquire);
    if (g_sequence.load(std::memory_order_relaxed) == before)
      return hit;
  }
  return false;  // a refresh is being published (perhaps by this thread, interrupted)
}

void RefreshCudaRuntimeCode() noexcept {
  Collected collected;
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&RefreshCudaRuntimeCode), &self) != 0) {
    // dli_fbase is the object's load address: its load bias, since a shared object's first
    // PT_LOAD starts at virtual address 0.
    collected.own_base = reinterpret_cast<uintptr_t>(self.dli_fbase);
  }
  dl_iterate_phdr(VisitObject, &collected);
  Publish(collected);
}

}  // namespace cuclimb::interposer
