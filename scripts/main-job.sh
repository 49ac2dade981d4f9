#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job, on any machine: sets up, then shows why cuclimb-adam's step time climbs.
#
#  - With an NVIDIA GPU (nvidia-smi -L works, or /dev/nvidia0 exists): builds everything, records
#    `cuclimb-adam --allocator cubecl --mode climb --retain-tiny 2 --iters 1500` under
#    `cuclimb record`, and analyzes that trace.
#  - Without one: builds the analyzer only and analyzes the bundled trace of the same run,
#    recorded on an H200 (tests/golden/h200-cubecl-climb.trace).
# Either way it writes cuclimb-report.html (open it in any browser, offline) and
# cuclimb-report.json into the output directory and prints the terminal report.
#
# Usage: scripts/main-job.sh [--trace FILE] [--out DIR] [--build DIR] [--iters N] [--cpu]
#   --trace FILE  analyze FILE instead of recording or using the bundled trace
#   --out DIR     where the reports go (default: the current directory)
#   --build DIR   build directory (default: build-main in the repository)
#   --iters N     iterations to record on a GPU (default 1500)
#   --cpu         do not use a GPU even if there is one
# Environment: CUCLIMB_SKIP_SETUP=1 skips installing Debian packages; CUCLIMB=PATH uses that
# cuclimb binary instead of building (CPU path only).
# Exit status: that of `cuclimb analyze` (0; 3 for a cut trace), 1 when set-up, build or
# recording fails, 2 for bad usage.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
trace=""
out=$PWD
build=$root/build-main
iters=1500
force_cpu=0
bundled=$root/tests/golden/h200-cubecl-climb.trace

while [ $# -gt 0 ]; do
  case $1 in
    --trace) trace=${2:?--trace needs a FILE}; shift 2 ;;
    --out) out=${2:?--out needs a DIR}; shift 2 ;;
    --build) build=${2:?--build needs a DIR}; shift 2 ;;
    --iters) iters=${2:?--iters needs N}; shift 2 ;;
    --cpu) force_cpu=1; shift ;;
    -h|--help) sed -n '3,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "main-job.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ $iters =~ ^[0-9]+$ ]] || { echo "main-job.sh: --iters wants a number" >&2; exit 2; }
[ -n "$trace" ] && trace=$(cd "$(dirname "$trace")" && pwd)/$(basename "$trace")
mkdir -p "$out"
out=$(cd "$out" && pwd)

gpu=0
if [ $force_cpu -eq 0 ] && [ -z "$trace" ]; then
  if nvidia-smi -L >/dev/null 2>&1 || [ -e /dev/nvidia0 ]; then gpu=1; fi
fi
step() { printf '\n== %s\n' "$*" >&2; }

# 1. Debian packages (scripts/deps.txt, as scripts/test.sh does; the browser-test packages are
#    left out: the main job does not need a browser).
if [ "${CUCLIMB_SKIP_SETUP:-0}" != 1 ]; then
  missing=()
  while read -r pkg; do
    case $pkg in ''|'#'*|chromium|chromium-driver|python3-selenium) continue ;; esac
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done < "$root/scripts/deps.txt"
  if [ ${#missing[@]} -gt 0 ]; then
    step "installing ${missing[*]}"
    if [ "$(id -u)" -ne 0 ]; then
      echo "missing packages: ${missing[*]} (run as root, or: sudo apt-get install -y ${missing[*]})" >&2
      exit 1
    fi
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
  fi
fi

# 2. Build: everything on a GPU machine, the analyzer alone otherwise.
if [ $gpu -eq 0 ] && [ -n "${CUCLIMB:-}" ]; then
  cuclimb=$CUCLIMB
else
  if [ $gpu -eq 1 ]; then
    opts=(-Dtests=disabled -Dbenchmarks=disabled)
  else
    opts=(-Dtests=disabled -Dbenchmarks=disabled -Dinterposer=disabled -Dkernels=disabled -Dworkloads=disabled)
  fi
  step "building in $build (${opts[*]})"
  if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" --buildtype=release "${opts[@]}" >&2
  else
    meson configure "$build" "${opts[@]}" >&2
  fi
  meson compile -C "$build" >&2
  cuclimb=$build/analyzer/cuclimb
fi

# 3. The trace: recorded here on a GPU, else the one given, else the bundled one.
if [ $gpu -eq 1 ]; then
  adam=$build/workloads/cuclimb-adam
  [ -x "$adam" ] || { echo "main-job.sh: $adam was not built (is the CUDA toolkit in /usr/local/cuda?)" >&2; exit 1; }
  rm -f "$out"/cuclimb-adam-*.trace
  step "recording cuclimb-adam --allocator cubecl --mode climb --retain-tiny 2 --iters $iters"
  "$cuclimb" record --output "$out/cuclimb-adam-%p.trace" -- \
    "$adam" --allocator cubecl --mode climb --retain-tiny 2 --iters "$iters" | tail -n 5 >&2
  trace=$(ls -t "$out"/cuclimb-adam-*.trace 2>/dev/null | head -n 1)
  [ -n "$trace" ] || { echo "main-job.sh: cuclimb record wrote no trace" >&2; exit 1; }
elif [ -z "$trace" ]; then
  trace=$bundled
  if [ ! -f "$trace" ]; then
    echo "main-job.sh: no GPU here and the bundled trace $trace is missing; pass --trace FILE" >&2
    exit 1
  fi
  step "no GPU here: analyzing the bundled trace recorded on an H200 ($(basename "$trace"))"
fi

# 4. The reports.
step "analyzing $trace"
status=0
"$cuclimb" analyze "$trace" --json "$out/cuclimb-report.json" --html "$out/cuclimb-report.html" || status=$?
if [ $status -eq 0 ] || [ $status -eq 3 ]; then
  printf '\nwrote %s\n  and %s\n' "$out/cuclimb-report.html" "$out/cuclimb-report.json"
fi
exit $status
