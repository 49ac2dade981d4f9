#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Sets up everything on a fresh Debian 12 machine and runs the whole CPU test suite.
# GPU tests exit 77 (reported as skipped) when no GPU is visible; on a GPU machine they run.
# Usage: scripts/test.sh [BUILD_DIR]      (default: build-test)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-test}
cd "$root"

missing=()
while read -r pkg; do
  [ -n "$pkg" ] || continue
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done < scripts/deps.txt
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "missing packages: ${missing[*]} (run as root, or: sudo apt-get install -y ${missing[*]})" >&2
    exit 1
  fi
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi

if [ ! -f "$build/build.ninja" ]; then
  # The project's own tests keep assertions and debug info; users get the release default.
  meson setup "$build" --buildtype=debugoptimized -Dwerror=true
fi
meson compile -C "$build"
# Test helpers from PyPI, best effort (their tests skip without them): Perfetto's own schema
# for the export's check. A venv of the build, so nothing is installed system-wide.
venv=$(cd "$build" && pwd)/test-venv  # absolute: tests run in their own directories
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import perfetto, google.protobuf' 2>/dev/null; then
  { python3 -m venv "$venv" && "$venv/bin/pip" install -q perfetto protobuf; } >/dev/null 2>&1 ||
    echo "test.sh: PyPI test helpers (perfetto, protobuf) not installed; their checks skip" >&2
fi
export CUCLIMB_TEST_PYTHON=$venv/bin/python
status=0
meson test -C "$build" --print-errorlogs --num-processes "$(nproc)" || status=$?

python3 - "$build/meson-logs/testlog.json" <<'PY'
import json, sys
counts = {}
for line in open(sys.argv[1]):
    r = json.loads(line)["result"]
    counts[r] = counts.get(r, 0) + 1
ok = counts.get("OK", 0) + counts.get("EXPECTEDFAIL", 0)
failed = sum(v for k, v in counts.items() if k in ("FAIL", "TIMEOUT", "ERROR", "UNEXPECTEDPASS"))
print(f"{ok} passed, {failed} failed, {counts.get('SKIP', 0)} skipped")
PY
exit $status
