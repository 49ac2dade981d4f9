#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A program started with stderr (or stdout) closed must not get its trace as fd 2: its own
# stderr output and cuclimb's warnings would be written into the trace, leaving 0 readable
# events. Ported from /work/shared/bad-inputs/stderr-closed-corrupts-trace.sh, with the NVTX test
# program (mode errlog: 20 iterations, one line on stderr in the middle) instead of a compiled
# snippet.
# usage: stderr_closed_test.sh LIBCUCLIMB CUCLIMB NVTX_PROGRAM
set -u
LIB=$(realpath "$1") C=$(realpath "$2") P=$(realpath "$3")
D=$(mktemp -d) || exit 1
trap 'rm -rf "$D"' EXIT
cd "$D" || exit 1
fail=0

check() {  # check NAME TRACE
  local out
  out=$("$C" info "$2")
  local rc=$?
  if [ $rc -ne 0 ] || ! grep -q '^status    complete' <<<"$out" ||
     ! grep -Eq '^  push +20$' <<<"$out" || grep -q 'disk almost full' "$2"; then
    echo "FAIL $1: info exit $rc"; echo "$out"; fail=1
  else
    echo "ok   $1"
  fi
}

CUCLIMB_OUTPUT=$D/preload-stderr.trace LD_PRELOAD=$LIB "$P" errlog 2>&-
check "LD_PRELOAD, stderr closed" preload-stderr.trace
CUCLIMB_OUTPUT=$D/preload-stdout.trace LD_PRELOAD=$LIB "$P" errlog >&-
check "LD_PRELOAD, stdout closed" preload-stdout.trace
"$C" record --lib "$LIB" --output "$D/record.trace" -- "$P" errlog 2>&-
check "cuclimb record, stderr closed" record.trace
# cuclimb's own warning while stderr is closed (an unknown option value) must not reach the trace
CUCLIMB_KERNELS=sometimes CUCLIMB_OUTPUT=$D/warning.trace LD_PRELOAD=$LIB "$P" errlog 2>&-
check "own warning, stderr closed" warning.trace
exit $fail
