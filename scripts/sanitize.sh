#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The analyzer under AddressSanitizer + UndefinedBehaviorSanitizer (clang 14): builds it in its
# own directory and runs the unit, golden and fuzz-replay suites; any sanitizer report fails the
# run (UBSan halts on its first finding). CI runs it after scripts/test.sh.
# Usage: scripts/sanitize.sh [BUILD_DIR]      (default: build-asan)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-asan}
cd "$root"
if ! command -v clang++ >/dev/null; then
  echo "sanitize.sh: clang++ not found (apt-get install clang)" >&2
  exit 1
fi
start=$(date +%s)
if [ ! -f "$build/build.ninja" ]; then
  CC=clang CXX=clang++ meson setup "$build" -Dwerror=true \
    -Db_sanitize=address,undefined -Db_lundef=false \
    -Dinterposer=disabled -Dkernels=disabled -Dworkloads=disabled -Dbenchmarks=disabled
fi
meson compile -C "$build"
built=$(date +%s)
# halt_on_error: UBSan findings are otherwise printed and the test passes. The CLI tests also
# look for sanitizer reports on the stderr of every command they run.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
status=0
# symbol_fixture: those tests check the line tables and inlined frames GCC writes for a fixture
# program built with the project's flags; clang -O3 with sanitizers inlines it differently. They
# run in the main (GCC) suite.
meson test -C "$build" --suite unit --suite golden --suite fuzz --no-suite symbol_fixture \
  --print-errorlogs \
  --num-processes "$(nproc)" --timeout-multiplier 4 || status=$?
end=$(date +%s)
python3 - "$build/meson-logs/testlog.json" "$((built - start))" "$((end - built))" <<'PY'
import json, sys
counts = {}
for line in open(sys.argv[1]):
    r = json.loads(line)["result"]
    counts[r] = counts.get(r, 0) + 1
ok = counts.get("OK", 0) + counts.get("EXPECTEDFAIL", 0)
failed = sum(v for k, v in counts.items() if k in ("FAIL", "TIMEOUT", "ERROR", "UNEXPECTEDPASS"))
print(f"asan+ubsan: {ok} passed, {failed} failed, {counts.get('SKIP', 0)} skipped "
      f"(build {sys.argv[2]} s, tests {sys.argv[3]} s)")
PY
exit $status
