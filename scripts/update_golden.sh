#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Regenerates the golden traces and reports in tests/golden from the current build:
#   scripts/update_golden.sh [BUILD_DIR]        (default: build)
# Then review `git diff tests/golden` and commit the reports together with the change that
# moved them. Traces change only when tests/golden/make_golden.cpp or the simulator does.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
case $build in /*) ;; *) build=$root/$build ;; esac
ninja -C "$build" analyzer/cuclimb tests/golden/make_golden >/dev/null
cd "$root/tests/golden"
# An empty root for recorded paths, as golden_test uses: files on this machine never leak in.
empty_root=$(mktemp -d)
trap 'rmdir "$empty_root"' EXIT
"$build/tests/golden/make_golden" .
grep -v '^#' golden.txt | while read -r name rest; do
  [ -n "$name" ] || continue
  rest=" $rest"
  opts=${rest%% -- *}
  traces=${rest#* -- }
  # A partial trace exits 3 after writing its report.
  # shellcheck disable=SC2086
  "$build/analyzer/cuclimb" analyze $traces $opts --symfs "$empty_root" --json "$name.expected.json" --quiet || [ $? -eq 3 ]
  echo "$name.expected.json"
done
