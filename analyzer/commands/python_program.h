// SPDX-License-Identifier: Apache-2.0
// Whether `cuclimb record` runs a Python program: then Python call stacks are on by default
// (docs/performance.md measured their cost against PyTorch's own memory history).
#pragma once

#include <string>

namespace cuclimb::commands {

// True for a Python interpreter (python, python3, python3.12, ...) and for a script whose
// "#!" line runs one (torchrun, accelerate, a user's executable train.py), found through PATH
// as execvp would.
bool IsPythonProgram(const std::string& program);

}  // namespace cuclimb::commands
