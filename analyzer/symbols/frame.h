// SPDX-License-Identifier: Apache-2.0
// One symbolized stack frame and the class of code it belongs to: what call-site labels, the
// host-function accumulator and the reports build on.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cuclimb::analysis {

// Whose code a frame is. Every class but kUser is "internal": a call site is labelled by its
// first user frame. The rules that assign classes are data (symbols/frame_classes.txt).
enum class FrameClass : uint8_t {
  kUser,       // the program's own code: native, Rust or Python
  kCuda,       // CUDA runtime and driver, CUPTI, NVTX, NVIDIA libraries, cuclimb itself
  kFramework,  // allocator and framework internals: PyTorch/c10, CuPy, XLA, cubecl, cuBLAS, ...
  kSystem,     // libc, the C++ and Rust runtimes, the dynamic loader
  kPython,     // the Python interpreter and the standard library
  kUnknown,    // an address in no recorded module (JIT code, a lost mapping)
};
inline constexpr int kFrameClassCount = 6;

// "user", "cuda", "framework", "system", "python", "unknown".
std::string_view FrameClassName(FrameClass c);
// The inverse of FrameClassName; false for an unknown name.
bool ParseFrameClass(std::string_view name, FrameClass* c);

struct Frame {
  // Demangled function ("ns::C::f(int)"), Python function ("Trainer.step"), or, unsymbolized,
  // "module+0x1234" (file offset) or "0x7f..." (no module).
  std::string function;
  std::string module;       // base name of the mapped file; "" for string and Python frames
  std::string module_path;  // as recorded
  std::string file;         // source file (DWARF or Python), "" when unknown
  int line = 0;             // 0 when unknown
  bool python = false;      // a Python frame, "py:<function>@<file>:<line>" in the trace
  bool inlined = false;     // inlined into the next (outer) frame: same return address
  bool symbolized = false;  // function is a name, not module+offset
  // Why function is module+offset, or why a named frame has no line ("" when nothing is
  // missing), in words a user can act on; see Symbolizer::Notes for the fix.
  std::string missing;
  FrameClass frame_class = FrameClass::kUser;
};

// True for every class but kUser: the frames a call site's label skips.
inline bool IsInternalFrame(const Frame& f) {
  return f.frame_class != FrameClass::kUser;
}

// Python frames arrive as string frames "py:<function>@<file>:<line>" (the function's qualified
// name, the code object's file name, the line being executed). False when text is not one;
// a missing or malformed line leaves line 0.
bool ParsePythonFrame(std::string_view text, Frame* out);

// The evidence form: "ns::C::f(int) (src/c.cpp:42)", "step (/home/u/train.py:17)",
// "libfoo.so+0x3234 [file missing]".
std::string FormatFrame(const Frame& f);
// The label form, short and stable across runs of one build: "C::f (c.cpp:42)",
// "step (train.py:17)", "libfoo.so+0x3234".
std::string FrameLabel(const Frame& f);

// "a::b::C<T>::f(int) const" → "C<T>::f"; "pkg.mod.Class.method" is left as it is.
std::string ShortFunctionName(const std::string& function);

}  // namespace cuclimb::analysis
