// SPDX-License-Identifier: Apache-2.0
// A progress bar on stderr for the report subcommands (diff, export, check): drawn only when
// stderr is a terminal, at most ten times a second, and erased before anything else prints.
// Same look as `cuclimb analyze`'s.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include <unistd.h>

#include "analysis/analyze.h"

namespace cuclimb::commands {

class ProgressBar {
 public:
  ProgressBar(const char* command, bool enabled)
      : command_(command), enabled_(enabled && isatty(STDERR_FILENO) == 1) {}
  ~ProgressBar() { Clear(); }
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // `label` says which step ("base", "other", "export"); bytes_total 0 = unknown.
  void Update(const std::string& label, uint64_t bytes_done, uint64_t bytes_total,
              uint64_t events) {
    if (!enabled_)
      return;
    const auto now = std::chrono::steady_clock::now();
    if (shown_ && now - last_ < std::chrono::milliseconds(100) && bytes_done < bytes_total)
      return;
    last_ = now;
    shown_ = true;
    const double frac =
        bytes_total > 0 ? static_cast<double>(bytes_done) / static_cast<double>(bytes_total) : 0;
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(frac * kWidth);
    std::string bar(static_cast<size_t>(filled), '#');
    bar.append(static_cast<size_t>(kWidth - filled), '.');
    std::fprintf(stderr, "\rcuclimb %s: %s [%s] %3.0f%% %.1f M events ", command_, label.c_str(),
                 bar.c_str(), 100 * frac, static_cast<double>(events) / 1e6);
    std::fflush(stderr);
  }
  // For AnalyzeOptions::progress.
  void Update(const std::string& label, const analysis::Progress& p) {
    Update(p.pass == 2 ? label + " (second pass)" : label, p.bytes_done, p.bytes_total, p.events);
  }
  void Clear() {
    if (!shown_)
      return;
    std::fprintf(stderr, "\r%90s\r", "");
    std::fflush(stderr);
    shown_ = false;
  }

 private:
  const char* command_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace cuclimb::commands
