// SPDX-License-Identifier: Apache-2.0
// Status propagation macros: Abseil 20220623 has none of its own.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define CUCLIMB_CONCAT_INNER_(a, b) a##b
#define CUCLIMB_CONCAT_(a, b) CUCLIMB_CONCAT_INNER_(a, b)

// Returns the status of `expr` from the enclosing function when it is not OK.
#define CUCLIMB_RETURN_IF_ERROR(expr)                                     \
  do {                                                                    \
    if (::absl::Status cuclimb_status_ = (expr); !cuclimb_status_.ok()) { \
      return cuclimb_status_;                                             \
    }                                                                     \
  } while (false)

// `lhs = value of expr`, or returns its status from the enclosing function.
#define CUCLIMB_ASSIGN_OR_RETURN(lhs, expr) \
  CUCLIMB_ASSIGN_OR_RETURN_IMPL_(CUCLIMB_CONCAT_(cuclimb_statusor_, __LINE__), lhs, expr)
#define CUCLIMB_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok())                                       \
    return std::move(tmp).status();                    \
  lhs = std::move(tmp).value()
