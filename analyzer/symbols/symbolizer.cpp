// SPDX-License-Identifier: Apache-2.0
// Offline symbolization of recorded stacks.
#include "symbols/symbolizer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
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

Symbolizer::Symbolizer(std::vector<std::string> search_dirs, FrameClassifier classifier)
    : search_dirs_(std::move(search_dirs)), classifier_(std::move(classifier)) {}

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

Frame Symbolizer::ResolveString(std::string_view text) const {
  Frame f;
  if (!ParsePythonFrame(text, &f)) {
    f.function = Demangle(text);
    f.symbolized = true;
  }
  return f;
}

Frame Symbolizer::ResolvePc(uint64_t pc) {
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
    f.missing = "no module recorded at this address";
    return f;
  }
  File& file = files_[m->file];
  f.module = file.base_name;
  f.module_path = file.path;
  const uint64_t file_off = pc - m->base + m->offset;
  f.function = absl::StrFormat("%s+0x%x", file.base_name, file_off);
  if (const ElfSymbols* syms = SymbolsOf(file)) {
    uint64_t vaddr = 0, off = 0;
    std::string_view name;
    if (syms->FileOffsetToVaddr(file_off - (file_off > 0 ? 1 : 0), &vaddr) &&
        syms->Lookup(vaddr, &name, &off)) {
      f.function = Demangle(name);
      f.symbolized = true;
    } else {
      f.missing = "no symbol";
    }
  } else {
    f.missing = "file missing";
  }
  return f;
}

const std::vector<Frame>& Symbolizer::ResolveAll(uint64_t word, const trace::StringTable& strings) {
  if (auto it = cache_.find(word); it != cache_.end())
    return it->second;
  std::vector<Frame> frames;
  if (format::IsStringFrame(word)) {
    frames.push_back(ResolveString(strings.Get(static_cast<uint32_t>(format::FrameValue(word)))));
  } else {
    frames.push_back(ResolvePc(format::FrameValue(word)));
  }
  for (Frame& f : frames) f.frame_class = classifier_.Classify(f);
  return cache_.emplace(word, std::move(frames)).first->second;
}

std::vector<std::string> Symbolizer::Frames(absl::Span<const uint64_t> stack,
                                            const trace::StringTable& strings, size_t max_frames) {
  std::vector<std::string> out;
  for (uint64_t word : stack) {
    for (const Frame& f : ResolveAll(word, strings)) {
      if (out.size() == max_frames)
        return out;
      out.push_back(FormatFrame(f));
    }
  }
  return out;
}

std::string Symbolizer::SiteLabel(absl::Span<const uint64_t> stack,
                                  const trace::StringTable& strings) {
  if (stack.empty())
    return "";
  // The first user frame and its nearest user caller; failing that, the first two frames
  // outside CUDA (an allocator's own frames are better than none).
  // Copies: resolving later words may rehash the cache.
  std::vector<Frame> user, outside_cuda;
  for (uint64_t word : stack) {
    for (const Frame& f : ResolveAll(word, strings)) {
      if (f.frame_class == FrameClass::kUser && user.size() < 2)
        user.push_back(f);
      if (f.frame_class != FrameClass::kCuda && f.frame_class != FrameClass::kUnknown &&
          outside_cuda.size() < 2) {
        outside_cuda.push_back(f);
      }
    }
    if (user.size() == 2)
      break;
  }
  const std::vector<Frame>& pick = !user.empty() ? user : outside_cuda;
  if (pick.empty())
    return FrameLabel(Resolve(stack[0], strings));
  std::string label = FrameLabel(pick[0]);
  if (pick.size() > 1)
    absl::StrAppend(&label, " <- ", FrameLabel(pick[1]));
  return label;
}

}  // namespace cuclimb::analysis
