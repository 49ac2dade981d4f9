// SPDX-License-Identifier: Apache-2.0
// Status → exit code mapping and whole-file output for the subcommands.
#include "util/cli.h"

#include <cstdio>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "util/output_file.h"

namespace cuclimb::util {
namespace {

constexpr char kKindPayload[] = "cuclimb.dev/kind";

absl::Status WithKind(const absl::Status& status, const char* kind) {
  absl::Status out = status;
  out.SetPayload(kKindPayload, absl::Cord(kind));
  return out;
}

}  // namespace

absl::Status OutputError(const absl::Status& status) {
  return WithKind(status, "output");
}

absl::Status UsageError(std::string message) {
  return WithKind(absl::InvalidArgumentError(std::move(message)), "usage");
}

int ExitCodeFor(const absl::Status& status) {
  if (status.ok())
    return kExitOk;
  if (auto kind = status.GetPayload(kKindPayload)) {
    if (*kind == "output")
      return kExitOutput;
    if (*kind == "usage")
      return kExitUsage;
  }
  return kExitBadTrace;
}

int ReportError(const std::string& command, const absl::Status& status) {
  std::fprintf(stderr, "cuclimb %s: %s\n", command.c_str(), std::string(status.message()).c_str());
  return ExitCodeFor(status);
}

absl::Status WriteFile(const std::string& path, std::string_view bytes) {
  auto file = OutputFile::Open(path);
  if (!file.ok())
    return file.status();
  if (absl::Status s = (*file)->Write(bytes); !s.ok())
    return s;
  return (*file)->Close();
}

}  // namespace cuclimb::util
