// SPDX-License-Identifier: Apache-2.0
// Exit code that Meson reports as SKIP; GPU tests return it when no device is visible.
#pragma once

namespace cuclimb::testing {

inline constexpr int kExitSkip = 77;

}  // namespace cuclimb::testing
