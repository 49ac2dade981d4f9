// SPDX-License-Identifier: Apache-2.0
// Python frames read from CPython's structures (see python_frames.h).
#include "interposer/python_frames.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include "interposer/format/trace_format.h"
#include "interposer/log.h"
#include "interposer/python_layout.h"
#include "interposer/writer/recorder.h"

namespace cuclimb::interposer {
namespace {

using GetThreadState = void* (*)();

constexpr size_t kMaxLinks = 4096;  // frame links followed per stack (shims included)
constexpr size_t kMaxInterpreterRanges = 4;
constexpr size_t kCacheSlots = 8192;  // (code, instruction) -> string id, direct-mapped
constexpr size_t kMaxNameBytes = 256;
constexpr size_t kMaxFileBytes = 512;

// Written once by RefreshPythonSupport before g_ready is set (release); read after it (acquire).
std::atomic<bool> g_ready{false};
bool g_given_up = false;  // an unsupported interpreter was reported
const PythonLayout* g_layout = nullptr;
GetThreadState g_thread_state = nullptr;
uintptr_t g_code_type = 0;
uintptr_t g_unicode_type = 0;
uintptr_t g_bytes_type = 0;
uintptr_t g_eval_begin = 0;
uintptr_t g_eval_end = 0;
uintptr_t g_interpreter[kMaxInterpreterRanges][2] = {};
size_t g_interpreter_count = 0;

// Entries are (40-bit tag << 24) | string id; 0 is empty.
std::atomic<uint64_t> g_cache[kCacheSlots];
static_assert(format::kMaxStrings <= (1u << 24));

template <typename T>
T Load(uintptr_t address, int offset) {
  T value;
  std::memcpy(&value, reinterpret_cast<const void*>(address + offset), sizeof(T));
  return value;
}

bool InEval(uintptr_t pc) {
  return pc >= g_eval_begin && pc < g_eval_end;
}

bool InInterpreter(uintptr_t pc) {
  for (size_t i = 0; i < g_interpreter_count; ++i) {
    if (pc >= g_interpreter[i][0] && pc < g_interpreter[i][1])
      return true;
  }
  return false;
}

struct PyFrame {
  uintptr_t code;
  int unit;           // instruction index in code units
  bool ends_segment;  // the outermost frame of one run of the eval loop
};

// The calling thread's Python frames, innermost first.
size_t CollectPyFrames(uintptr_t tstate, PyFrame* out, size_t max) {
  const PythonLayout& l = *g_layout;
  uintptr_t frame = Load<uintptr_t>(tstate, l.tstate_frame);
  if (l.cframe_current_frame >= 0 && frame != 0)
    frame = Load<uintptr_t>(frame, l.cframe_current_frame);
  size_t n = 0;
  for (size_t links = 0; frame != 0 && links < kMaxLinks; ++links) {
    const auto owner = Load<char>(frame, l.frame_owner);
    const uintptr_t previous = Load<uintptr_t>(frame, l.frame_previous);
    if (owner == kFrameOwnedByCStack) {
      // 3.12+: the shim an eval-loop run starts with; what follows belongs to an outer run.
      if (n > 0)
        out[n - 1].ends_segment = true;
      frame = previous;
      continue;
    }
    const uintptr_t code = Load<uintptr_t>(frame, l.frame_code);
    if (code != 0 && Load<uintptr_t>(code, kObjectType) == g_code_type) {
      const uintptr_t first = code + l.code_code;
      const uintptr_t instr = Load<uintptr_t>(frame, l.frame_instr);
      // A frame whose first instruction has not started yet (prev_instr is one before it).
      if (instr >= first) {
        if (n >= max)
          break;
        out[n++] = {code, static_cast<int>((instr - first) / 2), false};
      }
    }
    if (l.frame_is_entry >= 0 && Load<bool>(frame, l.frame_is_entry) && n > 0)
      out[n - 1].ends_segment = true;  // 3.11: this frame started an eval-loop run
    frame = previous;
  }
  if (n > 0)
    out[n - 1].ends_segment = true;
  return n;
}

// Appends the UTF-8 text of a str object (compact strings only: code objects' names are).
size_t AppendString(uintptr_t str, char* out, size_t cap) {
  if (str == 0 || Load<uintptr_t>(str, kObjectType) != g_unicode_type)
    return 0;
  const auto state = Load<uint32_t>(str, kStringState);
  const unsigned kind = (state >> 2) & 7;
  const bool compact = ((state >> 5) & 1) != 0;
  const bool ascii = ((state >> 6) & 1) != 0;
  const auto length = Load<int64_t>(str, kStringLength);
  if (!compact || length < 0)
    return 0;
  const uintptr_t data = str + (ascii ? g_layout->ascii_size : g_layout->compact_size);
  size_t n = 0;
  for (int64_t i = 0; i < length; ++i) {
    uint32_t c = 0;
    if (kind == 1) {
      c = Load<uint8_t>(data, static_cast<int>(i));
    } else if (kind == 2) {
      c = Load<uint16_t>(data, static_cast<int>(2 * i));
    } else if (kind == 4) {
      c = Load<uint32_t>(data, static_cast<int>(4 * i));
    } else {
      return n;
    }
    char bytes[4];
    size_t len = 0;
    if (c < 0x80) {
      bytes[len++] = static_cast<char>(c);
    } else if (c < 0x800) {
      bytes[len++] = static_cast<char>(0xc0 | (c >> 6));
      bytes[len++] = static_cast<char>(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
      bytes[len++] = static_cast<char>(0xe0 | (c >> 12));
      bytes[len++] = static_cast<char>(0x80 | ((c >> 6) & 0x3f));
      bytes[len++] = static_cast<char>(0x80 | (c & 0x3f));
    } else {
      bytes[len++] = static_cast<char>(0xf0 | (c >> 18));
      bytes[len++] = static_cast<char>(0x80 | ((c >> 12) & 0x3f));
      bytes[len++] = static_cast<char>(0x80 | ((c >> 6) & 0x3f));
      bytes[len++] = static_cast<char>(0x80 | (c & 0x3f));
    }
    if (n + len > cap)
      break;
    std::memcpy(out + n, bytes, len);
    n += len;
  }
  return n;
}

size_t AppendText(const char* s, char* out, size_t cap) {
  const size_t len = std::min(std::strlen(s), cap);
  std::memcpy(out, s, len);
  return len;
}

size_t AppendInt(int value, char* out, size_t cap) {
  char digits[16];
  size_t len = 0;
  unsigned v = value < 0 ? 0u - static_cast<unsigned>(value) : static_cast<unsigned>(value);
  do {
    digits[len++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  if (value < 0)
    digits[len++] = '-';
  size_t n = 0;
  while (len > 0 && n < cap) out[n++] = digits[--len];
  return n;
}

// "py:<qualname>@<file>:<line>", interned.
uint32_t InternFrame(const PyFrame& f) {
  const PythonLayout& l = *g_layout;
  int line = -1;
  const uintptr_t table = Load<uintptr_t>(f.code, l.code_linetable);
  const int first_line = Load<int>(f.code, l.code_firstlineno);
  if (table != 0 && Load<uintptr_t>(table, kObjectType) == g_bytes_type) {
    const auto size = Load<int64_t>(table, kVarObjectSize);
    if (size > 0) {
      line = PythonLineAt(reinterpret_cast<const uint8_t*>(table + kBytesData),
                          static_cast<size_t>(size), first_line, f.unit);
    }
  }
  if (line < 0)
    line = first_line;  // an instruction without a location: the function's line
  char text[kMaxNameBytes + kMaxFileBytes + 32];
  size_t n = AppendText("py:", text, sizeof(text));
  const size_t name =
      AppendString(Load<uintptr_t>(f.code, l.code_qualname), text + n, kMaxNameBytes);
  n += name != 0 ? name : AppendText("?", text + n, 1);
  n += AppendText("@", text + n, 1);
  const size_t file =
      AppendString(Load<uintptr_t>(f.code, l.code_filename), text + n, kMaxFileBytes);
  n += file != 0 ? file : AppendText("?", text + n, 1);
  n += AppendText(":", text + n, 1);
  n += AppendInt(line, text + n, sizeof(text) - n);
  return InternString(std::string_view(text, n));
}

uint64_t Mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

// The string id of a frame: from the cache, or built and interned on a miss. The key includes the
// code object's name and file objects, so a code object freed and another allocated at its
// address is a miss, not a wrong name.
uint32_t FrameString(const PyFrame& f) {
  const PythonLayout& l = *g_layout;
  const uint64_t key = Mix(f.code * 0x9e3779b97f4a7c15ull ^ static_cast<uint64_t>(f.unit) ^
                           Load<uintptr_t>(f.code, l.code_qualname) * 0xc2b2ae3d27d4eb4full ^
                           Mix(Load<uintptr_t>(f.code, l.code_filename)));
  const uint64_t tag = (key >> 24) | 1;  // 40 bits, never 0
  std::atomic<uint64_t>& slot = g_cache[key & (kCacheSlots - 1)];
  const uint64_t entry = slot.load(std::memory_order_relaxed);
  if ((entry >> 24) == tag)
    return static_cast<uint32_t>(entry & 0xffffff);
  const uint32_t id = InternFrame(f);
  if (id != format::kNoString)
    slot.store((tag << 24) | id, std::memory_order_relaxed);
  return id;
}

// Appends Python frames [from, end of from's segment) to out; returns where the next segment
// starts.
size_t EmitSegment(const PyFrame* py, size_t count, size_t from, uint64_t* out, size_t* n,
                   size_t max) {
  size_t i = from;
  for (; i < count; ++i) {
    if (*n < max) {
      const uint32_t id = FrameString(py[i]);
      if (id != format::kNoString)
        out[(*n)++] = format::StringFrame(id);
    }
    if (py[i].ends_segment)
      return i + 1;
  }
  return i;
}

// Adds the executable segments of the object that contains the eval loop (*arg). Matched by
// address: a program that is not position-independent has load bias 0 but is not mapped at 0.
int AddInterpreterRanges(dl_phdr_info* info, size_t, void* arg) {
  const auto eval = *static_cast<uintptr_t*>(arg);
  bool contains = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    contains = contains || (ph.p_type == PT_LOAD && eval >= begin && eval < begin + ph.p_memsz);
  }
  if (!contains)
    return 0;
  for (int i = 0; i < info->dlpi_phnum && g_interpreter_count < kMaxInterpreterRanges; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) != 0) {
      g_interpreter[g_interpreter_count][0] = info->dlpi_addr + ph.p_vaddr;
      g_interpreter[g_interpreter_count][1] = info->dlpi_addr + ph.p_vaddr + ph.p_memsz;
      ++g_interpreter_count;
    }
  }
  return 1;
}

uintptr_t Symbol(const char* name) {
  return reinterpret_cast<uintptr_t>(dlsym(RTLD_DEFAULT, name));
}

}  // namespace

int PythonLineAt(const uint8_t* table, size_t size, int first_line, int unit) noexcept {
  // Entries: a first byte 1CCCCLLL (code C, L + 1 code units) and, by code, varints of 6-bit
  // groups (0x40: more follows): 15 no location; 14 signed line delta + 3 varints; 13 signed line
  // delta; 10-12 line delta C - 10 + 2 bytes; 0-9 same line + 1 byte.
  const uint8_t* p = table;
  const uint8_t* end = table + size;
  auto varint = [&]() -> uint32_t {
    uint32_t value = 0;
    for (int shift = 0; p < end && shift < 32; shift += 6) {
      const uint8_t b = *p++;
      value |= static_cast<uint32_t>(b & 0x3f) << shift;
      if ((b & 0x40) == 0)
        break;
    }
    return value;
  };
  int line = first_line;
  int start = 0;
  while (p < end) {
    const uint8_t head = *p++;
    if ((head & 0x80) == 0)
      return -1;  // not at an entry: corrupt
    const int code = (head >> 3) & 15;
    const int length = (head & 7) + 1;
    bool none = false;
    if (code == 15) {
      none = true;
    } else if (code == 14 || code == 13) {
      const uint32_t v = varint();
      line += (v & 1) != 0 ? -static_cast<int>(v >> 1) : static_cast<int>(v >> 1);
      if (code == 14) {
        varint();
        varint();
        varint();
      }
    } else if (code >= 10) {
      line += code - 10;
      p += 2;
    } else {
      p += 1;
    }
    if (unit < start + length)
      return none ? -1 : line;
    start += length;
  }
  return -1;
}

void RefreshPythonSupport() noexcept {
  if (g_ready.load(std::memory_order_acquire) || g_given_up)
    return;
  const auto* version = reinterpret_cast<const unsigned long*>(Symbol("Py_Version"));
  if (version == nullptr)
    return;  // no interpreter (yet), or older than 3.11 (Py_Version is new in 3.11)
  const int major = static_cast<int>((*version >> 24) & 0xff);
  const int minor = static_cast<int>((*version >> 16) & 0xff);
  g_layout = PythonLayoutFor(major, minor);
  g_thread_state = reinterpret_cast<GetThreadState>(Symbol("PyGILState_GetThisThreadState"));
  g_code_type = Symbol("PyCode_Type");
  g_unicode_type = Symbol("PyUnicode_Type");
  g_bytes_type = Symbol("PyBytes_Type");
  const uintptr_t type_type = Symbol("PyType_Type");
  const uintptr_t eval = Symbol("_PyEval_EvalFrameDefault");
  // A free-threaded build moves ob_type (its objects' header is larger): PyCode_Type's own type
  // must be where the layout expects it.
  const bool standard_objects =
      g_code_type != 0 && type_type != 0 && Load<uintptr_t>(g_code_type, kObjectType) == type_type;
  if (g_layout == nullptr || g_thread_state == nullptr || g_unicode_type == 0 ||
      g_bytes_type == 0 || eval == 0 || !standard_objects) {
    g_given_up = true;
    LogWarning(
        "--stacks python: Python %d.%d%s is not supported (3.11 to 3.13 with the GIL); "
        "stacks stay native",
        major, minor, standard_objects ? "" : " (free-threaded)");
    return;
  }
  Dl_info info{};
  void* symbol = nullptr;
  if (dladdr1(reinterpret_cast<void*>(eval), &info, &symbol, RTLD_DL_SYMENT) != 0 &&
      symbol != nullptr) {
    g_eval_begin = eval;
    g_eval_end = eval + static_cast<const ElfW(Sym)*>(symbol)->st_size;
  }
  // The interpreter's code, whose native frames the Python frames replace: libpython, or the
  // python program itself when it is linked statically.
  const char* path = info.dli_fname != nullptr ? info.dli_fname : "";
  const char* name = std::strrchr(path, '/') != nullptr ? std::strrchr(path, '/') + 1 : path;
  if (std::strncmp(name, "libpython", 9) == 0 || std::strncmp(name, "python", 6) == 0) {
    uintptr_t at = eval;
    dl_iterate_phdr(AddInterpreterRanges, &at);
  }
  g_ready.store(true, std::memory_order_release);
}

bool PythonFramesAvailable() noexcept {
  return g_ready.load(std::memory_order_acquire);
}

size_t MergePythonFrames(uint64_t* frames, size_t n, size_t max,
                         uintptr_t interrupted_pc) noexcept {
  if (!g_ready.load(std::memory_order_acquire) || max == 0)
    return n;
  if (interrupted_pc != 0 && (InInterpreter(interrupted_pc) || g_interpreter_count == 0))
    return n;  // the interpreter may be linking a frame right now
  const auto tstate = reinterpret_cast<uintptr_t>(g_thread_state());
  if (tstate == 0)
    return n;  // not a Python thread
  PyFrame py[format::kMaxStackFrames];
  const size_t py_count =
      CollectPyFrames(tstate, py, std::min<size_t>(max, format::kMaxStackFrames));
  if (py_count == 0)
    return n;
  uint64_t native[format::kMaxStackFrames];
  n = std::min<size_t>(n, format::kMaxStackFrames);
  std::memcpy(native, frames, n * sizeof(uint64_t));
  // Python frames are what the user wrote: they keep at least half of the depth.
  const size_t native_budget = max - std::min(py_count, max / 2);
  size_t out = 0;
  size_t next = 0;
  size_t native_kept = 0;
  bool seen_eval = false;
  for (size_t i = 0; i < n; ++i) {
    const uintptr_t pc = static_cast<uintptr_t>(native[i] >> 1) - 1;  // the call instruction
    if (InEval(pc)) {
      seen_eval = true;
      next = EmitSegment(py, py_count, next, frames, &out, max);
      continue;
    }
    if (InInterpreter(pc))
      continue;  // the interpreter's own C frames
    if (seen_eval && next >= py_count)
      break;  // above the outermost Python frame: interpreter start-up, thread bootstrap
    if (native_kept < native_budget && out < max) {
      frames[out++] = native[i];
      ++native_kept;
    }
  }
  // Python frames above where the native walk ended (it stops at code without frame pointers).
  while (next < py_count) next = EmitSegment(py, py_count, next, frames, &out, max);
  return out;
}

}  // namespace cuclimb::interposer
