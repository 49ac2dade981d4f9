// SPDX-License-Identifier: Apache-2.0
// `--iteration NAME` that matches nothing is a usage error in every command that takes it, never
// a silent fall-back to automatic iterations.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "report/report.h"

namespace cuclimb::commands {

// OK when `name` is empty or chose the iterations of every trace of the report; otherwise a
// usage error naming the trace, the ranges it has, and the closest one.
absl::Status CheckIterationChoice(const analysis::Report& report, const std::string& name);

}  // namespace cuclimb::commands
