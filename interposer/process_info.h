// SPDX-License-Identifier: Apache-2.0
// The `process` event: who ran (pid, parent, command line, executable, host), with which driver
// and CUPTI, and as which rank of a multi-process job. Written once per trace.
//
// Cold path (writer thread or the exit path). No allocation: the facts live in a caller's buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "interposer/config.h"
#include "interposer/format/trace_format.h"

namespace cuclimb::interposer {

struct ProcessFacts {
  int64_t pid = 0;
  int64_t ppid = 0;
  char cmdline[4096] = {};  // arguments joined by single spaces
  char host[256] = {};
  char exe[kMaxPathBytes] = {};
  uint32_t driver_version = 0;  // cuDriverGetVersion; 0 when unknown
  uint32_t cupti_version = 0;   // cuptiGetVersion; 0 when CUPTI was not attached
  const char* rank = nullptr;   // RankFromEnv: the rank's digits, or nullptr
};

// Fills pid, ppid, cmdline, host, exe and rank from the running process (reads /proc/self).
void ReadProcessFacts(ProcessFacts* facts) noexcept;

// Turns the NUL-separated arguments of /proc/self/cmdline (length bytes in buf, buf_size >
// length) into one line: NULs become spaces, trailing spaces go.
void JoinCommandLine(char* buf, size_t length) noexcept;

// The `process` event at trace time ts; strings through intern (InternString in the library).
format::Event ProcessEvent(const ProcessFacts& facts, int64_t ts,
                           uint32_t (*intern)(std::string_view)) noexcept;

}  // namespace cuclimb::interposer
