#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every C, C++ and CUDA source of the project is as clang-format (v14, .clang-format) writes it.
# Without a check, formatting drifts unnoticed: 49 files had drifted before this test existed.
# Usage: clang_format_check.sh SOURCE_ROOT. Exits 77 (skipped) when clang-format is missing.
set -euo pipefail
root=${1:?usage: clang_format_check.sh SOURCE_ROOT}
tool=$(command -v clang-format-14 || command -v clang-format || true)
if [[ -z "$tool" ]]; then
  echo "clang-format not found: skipped" >&2
  exit 77
fi
cd "$root"
mapfile -t files < <(find analyzer interposer kernels workloads tests bench \
  -type f \( -name '*.cpp' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' -o -name '*.c' \) \
  -not -path '*/build*' | sort)
if [[ ${#files[@]} -eq 0 ]]; then
  echo "no sources found under $root" >&2
  exit 1
fi
# One call for all files (a process per file costs most of the time); -Werror reports each file
# that would change as "FILE:LINE:COL: error: code should be clang-formatted".
status=0
report=$("$tool" --dry-run -Werror --style=file "${files[@]}" 2>&1) || status=$?
mapfile -t bad < <(printf '%s\n' "$report" |
  sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u)
if [[ $status -ne 0 && ${#bad[@]} -eq 0 ]]; then
  echo "clang-format failed (exit $status):" >&2
  printf '%s\n' "$report" | head -20 >&2
  exit 1
fi
if [[ ${#bad[@]} -gt 0 ]]; then
  echo "${#bad[@]} of ${#files[@]} files differ from $("$tool" --version | head -1):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "fix with: clang-format -i FILE..." >&2
  exit 1
fi
echo "${#files[@]} files formatted"
