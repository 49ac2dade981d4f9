// SPDX-License-Identifier: Apache-2.0
// CUCLIMB_CUPTI_TRY: every CUPTI call whose failure matters goes through it, so none is ignored.
//
// Evaluates the call; on failure logs once per call site "cuclimb: <call> failed: <CUPTI's name
// for the result>; <what is lost>" and returns the result, so the caller switches off only the
// feature that depends on it (shared/notes/style.md §6). Cold paths only (it may format a line).
// Only in libcuclimb.so's own files: the capture core makes no CUPTI call.
#pragma once

#include <cupti.h>

#include "interposer/log.h"

#define CUCLIMB_CUPTI_TRY(expr, consequence)                                         \
  ([&]() noexcept -> CUptiResult {                                                   \
    const CUptiResult cuclimb_r = (expr);                                            \
    if (cuclimb_r != CUPTI_SUCCESS) {                                                \
      const char* cuclimb_why = nullptr;                                             \
      if (cuptiGetResultString(cuclimb_r, &cuclimb_why) != CUPTI_SUCCESS)            \
        cuclimb_why = nullptr;                                                       \
      CUCLIMB_LOG_ONCE(cuclimb_cupti_once, "%s failed: %s (%d); %s", #expr,          \
                       cuclimb_why != nullptr ? cuclimb_why : "unknown CUPTI error", \
                       static_cast<int>(cuclimb_r), consequence);                    \
    }                                                                                \
    return cuclimb_r;                                                                \
  }())
