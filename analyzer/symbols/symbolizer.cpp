// SPDX-License-Identifier: Apache-2.0
// Offline symbolization of recorded stacks.
#include "symbols/symbolizer.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "interposer/format/trace_format.h"
#include "symbols/demangle.h"

namespace cuclimb::analysis {
namespace {

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

Symbolizer::Symbolizer(std::vector<std::string> search_dirs)
    : search_dirs_(std::move(search_dirs)) {}

void Symbolizer::AddMapping(std::string path, uint64_t base, uint64_t size, uint64_t file_offset) {
  if (size == 0)
    return;
  auto [it, inserted] = file_index_.try_emplace(path, static_cast<uint32_t>(files_.size()));
  if (inserted) {
    File f;
    f.base_name = BaseName(path);
    f.path = std::move(path);
    files_.push_back(std::move(f));
  }
  mappings_.push_back({base, size, file_offset, it->second});
  sorted_ = false;
  cache_.clear();  // a new mapping may cover addresses resolved before
}

const ElfSymbols* Symbolizer::SymbolsOf(File& file) {
  if (!file.tried) {
    file.tried = true;
    for (const std::string& dir : search_dirs_) {
      auto s = ElfSymbols::Load(dir + "/" + file.base_name);
      if (s.ok()) {
        file.symbols = std::move(*s);
        break;
      }
    }
    if (!file.symbols) {
      auto s = ElfSymbols::Load(file.path);
      if (s.ok())
        file.symbols = std::move(*s);
    }
  }
  return file.symbols.get();
}

Symbolizer::Frame Symbolizer::Resolve(uint64_t word, const trace::StringTable& strings) {
  if (format::IsStringFrame(word)) {
    Frame f;
    f.function = Demangle(strings.Get(static_cast<uint32_t>(format::FrameValue(word))));
    f.symbolized = true;
    return f;
  }
  if (auto it = cache_.find(word); it != cache_.end())
    return it->second;
  const uint64_t pc = format::FrameValue(word);
  Frame f;
  if (!sorted_) {
    std::sort(mappings_.begin(), mappings_.end(),
              [](const Mapping& a, const Mapping& b) { return a.base < b.base; });
    sorted_ = true;
  }
  auto it = std::upper_bound(mappings_.begin(), mappings_.end(), pc,
                             [](uint64_t v, const Mapping& m) { return v < m.base; });
  const Mapping* m = nullptr;
  if (it != mappings_.begin()) {
    --it;
    if (pc < it->base + it->size)
      m = &*it;
  }
  if (m == nullptr) {
    f.function = absl::StrFormat("0x%x", pc);
  } else {
    File& file = files_[m->file];
    f.module = file.base_name;
    const uint64_t file_off = pc - m->base + m->offset;
    f.function = absl::StrFormat("%s+0x%x", file.base_name, file_off);
    if (const ElfSymbols* syms = SymbolsOf(file)) {
      uint64_t vaddr = 0, off = 0;
      std::string_view name;
      if (syms->FileOffsetToVaddr(file_off - (file_off > 0 ? 1 : 0), &vaddr) &&
          syms->Lookup(vaddr, &name, &off)) {
        f.function = Demangle(name);
        f.symbolized = true;
      }
    }
  }
  cache_.emplace(word, f);
  return f;
}

std::vector<std::string> Symbolizer::Frames(absl::Span<const uint64_t> stack,
                                            const trace::StringTable& strings, size_t max_frames) {
  std::vector<std::string> out;
  for (size_t i = 0; i < stack.size() && i < max_frames; ++i) {
    out.push_back(Resolve(stack[i], strings).function);
  }
  return out;
}

bool Symbolizer::IsRuntimeFrame(const Frame& f) {
  static constexpr absl::string_view kModules[] = {
      "libcuda.", "libcudart", "libcupti", "libcuclimb", "libnvidia", "libnvToolsExt", "libnvrtc"};
  for (absl::string_view m : kModules) {
    if (absl::StartsWith(f.module, m))
      return true;
  }
  const std::string& fn = f.function;
  if (absl::StartsWith(fn, "cuclimb") || absl::StartsWith(fn, "nvtx") ||
      absl::StartsWith(fn, "cudaGetDriverEntryPoint")) {
    return true;
  }
  // Driver and runtime API entry points: cuMemAlloc..., cudaMalloc..., with a capital after.
  if (fn.size() > 3 && fn[0] == 'c' && fn[1] == 'u') {
    const size_t k = (fn.size() > 5 && fn.compare(0, 4, "cuda") == 0) ? 4 : 2;
    if (fn[k] >= 'A' && fn[k] <= 'Z')
      return true;
  }
  return false;
}

std::string ShortFunctionName(const std::string& fn) {
  std::string s = fn;
  // Drop a trailing parameter list "(...)" (and cv-qualifiers after it).
  for (std::string_view q : {" const", " volatile", " &&", " &"}) {
    if (s.size() > q.size() && s.compare(s.size() - q.size(), q.size(), q) == 0)
      s.resize(s.size() - q.size());
  }
  if (!s.empty() && s.back() == ')') {
    int depth = 0;
    for (size_t i = s.size(); i-- > 0;) {
      if (s[i] == ')')
        ++depth;
      if (s[i] == '(' && --depth == 0) {
        if (i > 0)
          s.resize(i);
        break;
      }
    }
  }
  // Keep the last two "::" components, ignoring separators inside <...>.
  std::vector<size_t> seps;
  int angle = 0;
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i] == '<')
      ++angle;
    if (s[i] == '>' && angle > 0)
      --angle;
    if (angle == 0 && s[i] == ':' && s[i + 1] == ':')
      seps.push_back(i);
  }
  if (seps.size() >= 2)
    s = s.substr(seps[seps.size() - 2] + 2);
  return s;
}

std::string Symbolizer::SiteLabel(absl::Span<const uint64_t> stack,
                                  const trace::StringTable& strings) {
  if (stack.empty())
    return "";
  std::vector<std::string> parts;
  for (uint64_t w : stack) {
    const Frame f = Resolve(w, strings);
    if (IsRuntimeFrame(f))
      continue;
    parts.push_back(ShortFunctionName(f.function));
    if (parts.size() == 2)
      break;
  }
  if (parts.empty())
    return ShortFunctionName(Resolve(stack[0], strings).function);
  return parts.size() == 1 ? parts[0] : parts[0] + " <- " + parts[1];
}

}  // namespace cuclimb::analysis
