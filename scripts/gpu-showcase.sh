#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Records the bundled H200 traces of tests/golden on a GPU machine: cuclimb-adam's climb with
# retention (the main job's trace), the same climb mode without retention (the controlled diff
# base: same program, same allocator, nothing kept) and the flat mode, all with call-site stacks
# (--stacks fp) so that the report names the line that keeps the state alive. Each trace is then
# analyzed; a short table is printed last.
#
#   OUT=dir scripts/gpu-showcase.sh BUILD_DIR        (BUILD_DIR from scripts/gpu-check.sh --pack)
# Then copy OUT/h200-cubecl-*.trace into tests/golden and run scripts/update_golden.sh.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(realpath "${1:-build-gpu}")
OUT=${OUT:-$PWD/showcase-out}
ITERS=${ITERS:-1500}
mkdir -p "$OUT"
CUCLIMB=$BUILD/analyzer/cuclimb
ADAM=$BUILD/workloads/cuclimb-adam
export CUCLIMB_LIB=$BUILD/interposer/libcuclimb.so
. "$root/scripts/lib-cupti.sh"
find_cupti "$CUCLIMB_LIB"
# name | adam arguments
runs=(
  "h200-cubecl-climb|--mode climb --retain-tiny 2"
  "h200-cubecl-climb-noretain|--mode climb"
  "h200-cubecl-flat|--mode flat"
)
for run in "${runs[@]}"; do
  name=${run%%|*}
  args=${run#*|}
  rm -f "$OUT/$name.trace"
  # shellcheck disable=SC2086
  timeout 240 taskset -c 3 "$CUCLIMB" record --stacks fp --output "$OUT/$name.trace" -- \
    "$ADAM" --allocator cubecl $args --iters "$ITERS" --reference > "$OUT/$name.stdout" 2>&1
  echo "$name: exit $? $(grep -E '^summary\[p0\]' "$OUT/$name.stdout" | head -1)"
  timeout 120 "$CUCLIMB" analyze "$OUT/$name.trace" --json "$OUT/$name.json" > "$OUT/$name.report" 2>&1
done
echo "== table"
python3 - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
for name in ("h200-cubecl-climb", "h200-cubecl-climb-noretain", "h200-cubecl-flat"):
    p = os.path.join(out, name + ".json")
    if not os.path.exists(p):
        print(f"{name:28s} no report"); continue
    r = json.load(open(p))
    size = os.path.getsize(os.path.join(out, name + ".trace"))
    events = sum(t["events"] for t in r.get("ranks", [{}])[0:1] for t in [t.get("trace", {})]) if r.get("ranks") else 0
    acc = r["accumulators"][0] if r.get("accumulators") else None
    print(f"{name:28s} {size / 1e6:5.2f} MB {size / max(1, events):4.2f} B/ev verdict={r['verdict']} "
          + (f"top={acc['kind']}:{acc.get('label', acc['key'])}" if acc else "top=none"))
PY
