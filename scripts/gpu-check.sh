#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The one batched H200 run of the whole project: cuclimb-adam recorded under cuclimb (the bundled
# traces), the end-to-end verdict test, step-time overhead and run-to-run spread of cuclimb-adam,
# and the interposer's GPU scenarios. Raw outputs go to $OUT; a short table is printed last.
#
#   scripts/gpu-check.sh --pack BUILD_DIR DEST_DIR   strip the binaries the run needs into DEST_DIR
#   OUT=dir scripts/gpu-check.sh DEST_DIR            run it (on the GPU machine)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = --pack ]; then
  "$root/scripts/gpu-interposer.sh" --pack "$2" "$3"
  exit $?
fi
BUILD=$(realpath "${1:-build-gpu}")
OUT=${OUT:-$PWD/gpu-out}
WORK=/tmp/cuclimb-check
rm -rf "$WORK"
mkdir -p "$OUT" "$WORK"
exec > >(tee -a "$OUT/check-log.txt") 2>&1
CUCLIMB=$BUILD/analyzer/cuclimb
ADAM=$BUILD/workloads/cuclimb-adam
export CUCLIMB_LIB=$BUILD/interposer/libcuclimb.so
START=$(date +%s)

# libcupti.so.13: the toolkit's, else the one PyTorch ships.
. "$root/scripts/lib-cupti.sh"
find_cupti "$CUCLIMB_LIB"
nvidia-smi -L; nproc; git -C "$root" log -1 --format='commit %h %s' 2>/dev/null

summary() {  # the adam summary line of a run's stdout
  grep -E '^summary\[p0\]' "$1" | head -1
}
# Pin to one CPU for the overhead and spread runs: the VM's vCPUs are not equal.
PIN="taskset -c 3"

ITERS=${ITERS:-1500}          # iterations of the recorded runs (the bundled traces)
REPEATS=${REPEATS:-3}         # interleaved untraced/recorded pairs for the overhead figure

echo "== cuclimb-adam flat: untraced and recorded, interleaved, pinned; once unpinned"
for i in $(seq 1 "$REPEATS"); do
  timeout 120 $PIN "$ADAM" --allocator cubecl --mode flat --iters "$ITERS" > "$WORK/flat-untraced-$i.txt" 2>&1
  timeout 120 $PIN "$CUCLIMB" record --output "$WORK/flat-$i.trace" -- \
    "$ADAM" --allocator cubecl --mode flat --iters "$ITERS" > "$WORK/flat-traced-$i.txt" 2>&1
done
cp "$WORK/flat-1.trace" "$OUT/h200-cubecl-flat.trace"
rm -f "$WORK"/flat-*.trace
timeout 120 "$ADAM" --allocator cubecl --mode flat --iters "$ITERS" > "$WORK/flat-unpinned.txt" 2>&1
for f in "$WORK"/flat-*.txt; do echo "$(basename "$f" .txt): $(summary "$f")"; done

echo "== cuclimb-adam climb with retention: recorded (the bundled trace) and untraced, pinned"
timeout 200 $PIN "$CUCLIMB" record --output "$OUT/h200-cubecl-climb.trace" -- \
  "$ADAM" --allocator cubecl --mode climb --retain-tiny 2 --iters "$ITERS" > "$WORK/climb-traced.txt" 2>&1
timeout 200 $PIN "$ADAM" --allocator cubecl --mode climb --retain-tiny 2 --iters "$ITERS" > "$WORK/climb-untraced.txt" 2>&1
for f in climb-traced climb-untraced; do echo "$f: $(summary "$WORK/$f.txt")"; done
for t in "$OUT"/h200-cubecl-*.trace; do
  echo "-- $t ($(stat -c %s "$t") bytes)"
  "$CUCLIMB" info "$t" | head -8
  timeout 200 "$CUCLIMB" analyze "$t" --json "$WORK/$(basename "$t" .trace).json" | head -30
done

echo "== end-to-end verdict test"
timeout 400 python3 "$root/tests/e2e/adam_e2e_test.py" "$CUCLIMB" "$ADAM" > "$WORK/e2e.txt" 2>&1
echo "e2e exit status $?"; tail -5 "$WORK/e2e.txt"

echo "== interposer GPU scenarios"
OUT=$WORK/interposer timeout 300 "$root/scripts/gpu-interposer.sh" "$BUILD" tests > "$WORK/interposer.txt" 2>&1
echo "interposer exit status $?"; tail -25 "$WORK/interposer.txt"

tar -C "$WORK" -czf "$OUT/check-work.tgz" . 2>/dev/null

echo "== table ($(($(date +%s) - START)) s)"
python3 - "$WORK" <<'PY'
import json, os, re, sys
work = sys.argv[1]
def st(name):
    try:
        line = next(l for l in open(os.path.join(work, name + ".txt")) if l.startswith("summary[p0]"))
    except (OSError, StopIteration):
        return "n/a"
    return line.split(":", 1)[1].strip()[:70]
names = sorted(f[:-4] for f in os.listdir(work) if f.startswith(("flat-", "climb-")) and f.endswith(".txt"))
for name in names:
    print(f"{name:22s} {st(name)}")
def st_first_last(name):
    m = re.search(r"st ([0-9.]+) -> ([0-9.]+) ms", st(name))
    return (float(m.group(1)), float(m.group(2))) if m else None
import statistics
pairs = [(st_first_last(f"flat-untraced-{i}"), st_first_last(f"flat-traced-{i}")) for i in range(1, 20)
         if os.path.exists(os.path.join(work, f"flat-traced-{i}.txt"))]
ratios = [100 * (t[1] / u[1] - 1) for u, t in pairs if u and t]
if ratios:
    print(f"recording overhead on flat st (last window, pinned, {len(ratios)} interleaved pairs): "
          f"median {statistics.median(ratios):+.1f}% range [{min(ratios):+.1f}, {max(ratios):+.1f}]")
for name in ["h200-cubecl-flat", "h200-cubecl-climb"]:
    p = os.path.join(work, name + ".json")
    if not os.path.exists(p):
        print(f"{name:22s} no report"); continue
    r = json.load(open(p))
    step = next((x for x in r["ranges"] if x["name"].endswith("p0/step")), None)
    acc = r["accumulators"][0] if r["accumulators"] else None
    print(f"{name:22s} verdict={r['verdict']} iters={r['iterations']['count']} "
          f"p0/step={step['first_ms']:.3f}->{step['last_ms']:.3f}ms {step['climb_pct']:+.1f}% " if step else "",
          f"top={acc['kind']}:{acc['key']} {acc['growth_per_iter']:.2f}/{acc['unit']} explains={acc['explains']}" if acc else "top=none")
PY
