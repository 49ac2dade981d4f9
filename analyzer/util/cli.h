// SPDX-License-Identifier: Apache-2.0
// Exit codes and error reporting shared by the cuclimb subcommands.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace cuclimb::util {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFindings = 1;  // a gate the user asked for failed (cuclimb check)
inline constexpr int kExitUsage = 2;     // bad flags or arguments
inline constexpr int kExitBadTrace = 3;  // unreadable, corrupt or truncated input
inline constexpr int kExitOutput = 4;    // an output could not be written

// Marks a status as an output failure, so ExitCodeFor maps it to kExitOutput.
absl::Status OutputError(const absl::Status& status);
// Marks a status as a usage failure.
absl::Status UsageError(std::string message);

// Maps a status to the exit code: usage → 2, output → 4, everything else about input → 3.
int ExitCodeFor(const absl::Status& status);

// Prints "cuclimb <command>: <message>" on stderr and returns ExitCodeFor(status).
int ReportError(const std::string& command, const absl::Status& status);

// Writes bytes to path ("-" = stdout) entirely; errors name the path.
absl::Status WriteFile(const std::string& path, std::string_view bytes);

}  // namespace cuclimb::util
