// SPDX-License-Identifier: Apache-2.0
// Where CPython keeps what a Python stack is made of, per minor version (x86-64 and aarch64, LP64,
// release builds with the GIL): the thread's current frame, each frame's code object, previous
// frame and instruction, the code object's names and line table, and the string and bytes
// objects' payloads. libcuclimb.so never includes <Python.h> and never links libpython, so the
// offsets are data; tests/interposer/python/layout_test.py recompiles them from every installed
// interpreter's headers and fails on a difference. Layouts are stable within a minor version.
#pragma once

#include <cstdint>

namespace cuclimb::interposer {

struct PythonLayout {
  int minor;  // 3.minor
  // PyThreadState -> current _PyInterpreterFrame*: through tstate->cframe (3.11, 3.12) or
  // directly (3.13: cframe_current_frame < 0).
  int tstate_frame;
  int cframe_current_frame;
  // _PyInterpreterFrame
  int frame_code;      // f_code (3.11, 3.12) / f_executable (3.13: not always a code object)
  int frame_previous;  // previous
  int frame_instr;     // prev_instr (3.11, 3.12) / instr_ptr (3.13): the call being made
  int frame_owner;     // char: 0 thread, 1 generator, 2 frame object, 3 C stack (3.12+: a shim)
  int frame_is_entry;  // bool (3.11): the first frame of an eval loop invocation; -1 after 3.11
  // PyCodeObject
  int code_filename;
  int code_qualname;
  int code_firstlineno;  // int
  int code_linetable;    // bytes
  int code_code;         // co_code_adaptive: the instructions (2-byte units)
  // PyASCIIObject / PyCompactUnicodeObject
  int ascii_size;    // payload of a compact ASCII string follows the header
  int compact_size;  // payload of another compact string follows this header
};

inline constexpr int kFrameOwnedByCStack = 3;

inline constexpr PythonLayout kPythonLayouts[] = {
    {11, 56, 8, 32, 48, 56, 69, 68, 112, 128, 72, 136, 184, 48, 72},
    {12, 56, 0, 0, 8, 56, 70, -1, 112, 128, 68, 136, 192, 40, 56},
    {13, 72, -1, 0, 8, 56, 70, -1, 112, 128, 68, 136, 200, 40, 56},
};

// Shared by every supported version: PyObject.ob_type, PyVarObject.ob_size,
// PyBytesObject.ob_sval, PyASCIIObject.length and .state.
inline constexpr int kObjectType = 8;
inline constexpr int kVarObjectSize = 16;
inline constexpr int kBytesData = 32;
inline constexpr int kStringLength = 16;
inline constexpr int kStringState = 32;

// The layout of CPython 3.minor, or nullptr.
inline const PythonLayout* PythonLayoutFor(int major, int minor) {
  if (major != 3)
    return nullptr;
  for (const PythonLayout& layout : kPythonLayouts) {
    if (layout.minor == minor)
      return &layout;
  }
  return nullptr;
}

}  // namespace cuclimb::interposer
