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

Symbolizer::Symbolizer(std::vector<std::string> search_dirs, FrameClassifier classifier,
                       std::string debug_root, std::string host_root)
    : search_dirs_(std::move(search_dirs)),
      classifier_(std::move(classifier)),
      debug_root_(std::move(debug_root)),
      host_root_(std::move(host_root)) {}

Symbolizer::~Symbolizer() = default;

void Symbolizer::AddMapping(std::string path, uint64_t base, uint64_t size, uint64_t file_offset,
                            std::string build_id) {
  if (size == 0)
    return;
  auto [it, inserted] = file_index_.try_emplace(path, static_cast<uint32_t>(files_.size()));
  if (inserted) {
    File f;
    f.base_name = BaseName(path);
    f.path = std::move(path);
    f.build_id = std::move(build_id);
    files_.push_back(std::move(f));
  }
  mappings_.push_back({base, size, file_offset, it->second});
  sorted_ = false;
  cache_.clear();  // a new mapping may cover addresses resolved before
}

ModuleSymbols* Symbolizer::SymbolsOf(File& file) {
  if (!file.tried) {
    file.tried = true;
    file.located =
        LocateModuleFiles(host_root_ + file.path, file.build_id, search_dirs_, debug_root_);
    if (file.located.elf.empty()) {
      file.problem = file.located.problem;
    } else {
      auto s = ModuleSymbols::Open(file.located.elf, file.located.debug);
      if (s.ok())
        file.symbols = std::move(*s);
      else
        file.problem = "unreadable";
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

std::vector<Frame> Symbolizer::ResolvePc(uint64_t pc) {
  Frame f;
  if (!sorted_) {
    std::sort(mappings_.begin(), mappings_.end(),
              [](const Mapping& a, const Mapping& b) { return a.base < b.base; });
    sorted_ = true;
  }
  auto it = std::upper_bound(mappings_.begin(), mappings_.end(), pc,
                             [](uint64_t v, const Mapping& m) { return v < m.base; });
  Mapping* m = nullptr;
  if (it != mappings_.begin()) {
    --it;
    if (pc < it->base + it->size)
      m = &*it;
  }
  if (m == nullptr) {
    f.function = absl::StrFormat("0x%x", pc);
    f.missing = "in no recorded module";
    return {f};
  }
  File& file = files_[m->file];
  f.module = file.base_name;
  f.module_path = file.path;
  const uint64_t file_off = pc - m->base + m->offset;
  f.function = absl::StrFormat("%s+0x%x", file.base_name, file_off);
  ModuleSymbols* syms = SymbolsOf(file);
  if (syms == nullptr) {
    f.missing = file.problem;
    return {f};
  }
  if (!m->delta_known) {
    m->delta_known = true;
    m->delta_ok = syms->SegmentDelta(m->offset, &m->delta);
    if (!m->delta_ok && syms->IsLowestLoadAddress(m->offset)) {
      // Older recorders wrote a non-PIE executable's lowest load address where the file offset
      // belongs, with base the load bias: link-time address = pc − base.
      m->delta = -static_cast<int64_t>(m->offset);
      m->delta_ok = true;
    }
  }
  if (!m->delta_ok) {
    f.missing = "offset outside the file's segments";
    return {f};
  }
  // A return address: the call is the instruction before it.
  const uint64_t vaddr = file_off - (file_off > 0 ? 1 : 0) + static_cast<uint64_t>(m->delta);
  std::vector<Frame> frames = syms->Symbolize(vaddr);
  if (frames.empty()) {
    f.missing = file.located.elf_ids.has_symtab || file.located.debug_ids.has_symtab ? "no symbol"
                                                                                     : "stripped";
    return {f};
  }
  for (Frame& x : frames) {
    x.module = f.module;
    x.module_path = f.module_path;
  }
  return frames;
}

const std::vector<Frame>& Symbolizer::ResolveAll(uint64_t word, const trace::StringTable& strings) {
  if (auto it = cache_.find(word); it != cache_.end())
    return it->second;
  std::vector<Frame> frames = format::IsStringFrame(word)
                                  ? std::vector<Frame>{ResolveString(strings.Get(
                                        static_cast<uint32_t>(format::FrameValue(word))))}
                                  : ResolvePc(format::FrameValue(word));
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
  // The first user frame and its nearest user caller. Failing that (a framework's own thread,
  // or a stack cut by --stack-depth inside the framework), the two outermost framework frames:
  // the nearest to the user's code that were recorded, say the operator rather than the
  // allocator every operator goes through. Failing that, the first two frames outside CUDA.
  // Copies: resolving later words may rehash the cache.
  std::vector<Frame> user, framework, outside_cuda;
  for (uint64_t word : stack) {
    for (const Frame& f : ResolveAll(word, strings)) {
      if (f.frame_class == FrameClass::kUser && user.size() < 2)
        user.push_back(f);
      if (f.frame_class == FrameClass::kFramework && user.empty()) {
        if (framework.size() == 2)
          framework.erase(framework.begin());
        framework.push_back(f);
      }
      if (f.frame_class != FrameClass::kCuda && f.frame_class != FrameClass::kUnknown &&
          outside_cuda.size() < 2) {
        outside_cuda.push_back(f);
      }
    }
    if (user.size() == 2)
      break;
  }
  const std::vector<Frame>& pick =
      !user.empty() ? user : (!framework.empty() ? framework : outside_cuda);
  if (pick.empty())
    return FrameLabel(Resolve(stack[0], strings));
  std::string label = FrameLabel(pick[0]);
  NoteLabelFrame(pick[0]);
  if (pick.size() > 1) {
    absl::StrAppend(&label, " <- ", FrameLabel(pick[1]));
    NoteLabelFrame(pick[1]);
  }
  return label;
}

void Symbolizer::NoteLabelFrame(const Frame& f) {
  if (f.python || f.module_path.empty())
    return;
  auto it = file_index_.find(f.module_path);
  if (it == file_index_.end())
    return;
  File& file = files_[it->second];
  if (!f.symbolized)
    file.noted_unnamed = true;
  else if (f.line == 0)
    file.noted_no_lines = true;
}

std::vector<std::string> Symbolizer::Notes() const {
  std::vector<std::string> notes;
  for (const File& file : files_) {
    const std::string id =
        file.build_id.empty() ? "" : absl::StrCat(" (build id ", file.build_id, ")");
    const std::string by_id =
        file.build_id.size() > 2
            ? absl::StrCat(", or its debug file as DIR/.build-id/", file.build_id.substr(0, 2), "/",
                           file.build_id.substr(2), ".debug")
            : "";
    if (file.noted_unnamed) {
      std::string why;
      if (file.problem == "file missing") {
        why = absl::StrCat(file.path, id, " is not on this machine: copy it into a directory DIR",
                           by_id, ", and pass --symbols DIR");
      } else if (file.problem == "different build") {
        why = absl::StrCat("the file at ", file.path, " is another build than the recorded one", id,
                           ": put the recorded build in a directory DIR", by_id,
                           ", and pass --symbols DIR");
      } else if (file.problem == "unreadable") {
        why = absl::StrCat(file.located.elf, " is not a readable ELF file");
      } else {
        why = absl::StrCat(file.located.elf,
                           " has no symbol for them (stripped): install its debug package "
                           "(-dbg or -dbgsym) or pass --symbols DIR with its debug file",
                           by_id);
      }
      notes.push_back(
          absl::StrCat("call sites in ", file.base_name, " are shown as module+offset: ", why));
    }
    if (file.noted_no_lines && file.symbols != nullptr) {
      notes.push_back(absl::StrCat(
          "call sites in ", file.base_name, " have no file:line: ", file.located.elf,
          file.located.debug.empty() ? "" : absl::StrCat(" and ", file.located.debug),
          " carry no DWARF line information for them; rebuild with -g, install the debug package "
          "(-dbg or -dbgsym) or pass --symbols DIR with its debug file",
          by_id));
    }
  }
  return notes;
}

}  // namespace cuclimb::analysis
