// SPDX-License-Identifier: Apache-2.0
#include "detect/accumulator_kind.h"

namespace cuclimb::analysis {

static_assert(
    [] {
      for (size_t i = 0; i < kAccumulatorKinds.size(); ++i) {
        if (static_cast<size_t>(kAccumulatorKinds[i].kind) != i)
          return false;
      }
      return true;
    }(),
    "kAccumulatorKinds is indexed by AccumulatorKind");

std::optional<AccumulatorKind> AccumulatorKindNamed(std::string_view name) {
  for (const AccumulatorKindInfo& info : kAccumulatorKinds) {
    if (info.name == name)
      return info.kind;
  }
  return std::nullopt;
}

bool InApiFamily(const AccumulatorKindInfo& info, std::string_view api) {
  if (info.apis.front().empty())
    return true;
  for (std::string_view part : info.apis) {
    if (!part.empty() && api.find(part) != std::string_view::npos)
      return true;
  }
  return false;
}

}  // namespace cuclimb::analysis
