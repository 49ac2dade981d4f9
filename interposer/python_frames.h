// SPDX-License-Identifier: Apache-2.0
// Python frames in stacks (--stacks python): the calling thread's Python stack (file, line,
// function) merged with its native frames where the interpreter was entered, as py-spy and
// memray show them.
//
// Read in-process from CPython's own structures (python_layout.h), for 3.11, 3.12 and 3.13; found
// with dlsym, never linked, never calling Python code: the thread state from
// PyGILState_GetThisThreadState (a thread-local lookup), then the frame chain. The calling thread
// is inside a C call (a CUDA or NVTX call made from an extension), so its frame chain is not
// changing and every code object on it is kept alive by its frame; that holds with or without
// the GIL (PyTorch releases it around its operators), and no other thread's state is read.
// A host sample interrupts the thread anywhere, possibly while the interpreter links a frame: it
// gets Python frames only when interrupted outside the interpreter's code.
//
// Each Python frame is a string frame "py:<qualname>@<file>:<line>", interned once per distinct
// (code object, instruction) through a small lock-free cache. Bounded: at most the stack depth,
// and 4096 frame links per stack.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cuclimb::interposer {

// Cold (dlsym, dl_iterate_phdr): looks for a supported interpreter in the process; call at start
// and when objects were loaded. An unsupported version is reported once, and stacks stay native.
// One caller at a time.
void RefreshPythonSupport() noexcept;

// True once a supported interpreter was found.
bool PythonFramesAvailable() noexcept;

// Hot path (lock-free, no allocation): merges the calling thread's Python frames into frames[0,
// n), its native stack innermost first, keeping at most max words; returns the new count. Native
// frames of the interpreter are replaced by the Python frames they were running; native frames
// above the outermost Python frame are dropped. interrupted_pc: for a host sample, the pc the
// signal interrupted (0 otherwise).
size_t MergePythonFrames(uint64_t* frames, size_t n, size_t max, uintptr_t interrupted_pc) noexcept;

// The line of the instruction at code unit `unit` of a CPython 3.11+ line table (co_linetable),
// or -1 when the table says it has none. Exposed for tests.
int PythonLineAt(const uint8_t* table, size_t size, int first_line, int unit) noexcept;

}  // namespace cuclimb::interposer
