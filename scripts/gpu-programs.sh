#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Records real programs under `cuclimb record` on a GPU machine and analyzes each recording:
# PyTorch (default caching allocator and cudaMallocAsync), CuPy, JAX and cuclimb-adam, flat and
# with growth (tests/programs/*.py). The traces go to $OUT as tarballs (the device tool brings
# back at most 8 files of 16 MiB), a short table is printed last.
#
#   OUT=dir scripts/gpu-programs.sh BUILD_DIR [NAME...]
# BUILD_DIR holds a packed build (scripts/gpu-check.sh --pack). NAME picks recordings from the
# list below (default: all). RECORD_FLAGS adds flags to every `cuclimb record`; runs that would
# start after BUDGET_S seconds (default 480) are skipped so that the traces still come back.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(realpath "${1:?build dir}")
shift
OUT=${OUT:-$PWD/gpu-out}
WORK=/tmp/cuclimb-programs
rm -rf "$WORK"
mkdir -p "$OUT" "$WORK/traces"
exec > >(tee -a "$OUT/programs-log.txt") 2>&1
export PYTHONUNBUFFERED=1
CUCLIMB=$BUILD/analyzer/cuclimb
ADAM=$BUILD/workloads/cuclimb-adam
export CUCLIMB_LIB=$BUILD/interposer/libcuclimb.so
. "$root/scripts/lib-cupti.sh"
find_cupti "$CUCLIMB_LIB"
# NVLink multicast stays off (the device's rule), whatever a program starts.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
P=$root/tests/programs
START=$(date +%s)

# name | environment | record flags | program and arguments | what it is
RUNS=(
  "torch-flat-1||--stacks unwind|python3 $P/torch_train.py --iters 600|PyTorch seed pattern, caching allocator: flat by design"
  "torch-flat-2||--stacks unwind|python3 $P/torch_train.py --iters 600|the same program again: machine drift differs"
  "torch-keep-losses||--stacks unwind|python3 $P/torch_train.py --iters 600 --keep-losses|PyTorch keeps every loss tensor, caching allocator"
  "torch-keep-losses-async|PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync|--stacks unwind|python3 $P/torch_train.py --iters 600 --keep-losses|keeps every loss, cudaMallocAsync backend"
  "torch-noisy-late-leak||--stacks unwind|python3 $P/torch_train.py --iters 800 --keep-losses --leak-from-iter 300 --eval-every 50 --checkpoint-every 250 --gc-every 100 --grad-accum 4|leak from iteration 300, eval every 50, checkpoint every 250, gc every 100, optimizer every 4th"
  "torch-hooks||--sample-hz 1000|python3 $P/torch_train.py --iters 800 --no-ephemeral --width 128 --hook-per-iter|one more gradient hook per iteration (host-only growth)"
  "cupy-flat|||python3 $P/cupy_loop.py --iters 600|CuPy loop without NVTX, flat"
  "cupy-leak||--stacks unwind|python3 $P/cupy_loop.py --iters 600 --leak --leak-from 150|CuPy keeps one array per iteration from iteration 150"
  "jax-step|||python3 $P/jax_step.py --iters 600|JAX jitted step, flat"
  "adam-flat||--stacks fp|$ADAM --allocator cubecl --mode flat --iters 500 --reference|cuclimb-adam flat"
  "adam-climb||--stacks fp|$ADAM --allocator cubecl --mode climb --retain-tiny 2 --iters 500 --reference|cuclimb-adam climb with retention"
  "adam-climb-noretain||--stacks fp|$ADAM --allocator cubecl --mode climb --iters 500 --reference|cuclimb-adam climb mode without retention (diff base)"
)
want=" ${*:-} "
echo "$(date -u +%FT%TZ) $(nvidia-smi -L 2>&1 | head -1)" > "$WORK/traces/MANIFEST.txt"
for spec in "${RUNS[@]}"; do
  IFS='|' read -r name envs flags cmd what <<<"$spec"
  [ "$want" = "  " ] || [[ "$want" == *" $name "* ]] || continue
  if [ $(($(date +%s) - START)) -gt "${BUDGET_S:-480}" ]; then
    echo "== $name: skipped, past the ${BUDGET_S:-480} s budget"; continue
  fi
  echo "== $name: $what"
  t0=$(date +%s%N)
  # shellcheck disable=SC2086
  env $envs timeout 300 "$CUCLIMB" record ${RECORD_FLAGS:-} $flags --output "$WORK/traces/$name-%p.trace" -- $cmd \
    > "$WORK/$name.stdout" 2> "$WORK/$name.stderr"
  rc=$?
  secs=$(( ($(date +%s%N) - t0) / 1000000000 ))
  trace=$(ls "$WORK/traces/$name"-*.trace 2>/dev/null | head -1)
  echo "exit $rc, ${secs}s, $(tail -1 "$WORK/$name.stdout")"
  grep -v '^\s*$' "$WORK/$name.stderr" | grep -vi 'warning: .*deprecated' | tail -3
  echo "$name: $what; env [$envs] flags [${RECORD_FLAGS:-} $flags]; $(tail -1 "$WORK/$name.stdout")" >> "$WORK/traces/MANIFEST.txt"
  if [ -n "$trace" ]; then
    mv "$trace" "$WORK/traces/$name.trace"
    timeout 200 "$CUCLIMB" analyze "$WORK/traces/$name.trace" --json "$WORK/$name.json" > "$WORK/$name.report" 2>&1
    head -25 "$WORK/$name.report"
  fi
done

# Tarballs of at most ~15 MiB each.
( cd "$WORK/traces" && n=0 && size=0 && list=() &&
  for f in MANIFEST.txt $(ls -S *.trace 2>/dev/null | tac); do
    s=$(stat -c %s "$f")
    if [ $((size + s)) -gt 15000000 ] && [ ${#list[@]} -gt 0 ]; then
      tar -cf "$OUT/traces-$n.tar" "${list[@]}"; n=$((n + 1)); size=0; list=()
    fi
    list+=("$f"); size=$((size + s))
  done
  [ ${#list[@]} -gt 0 ] && tar -cf "$OUT/traces-$n.tar" "${list[@]}" )
tar -C "$WORK" -czf "$OUT/programs-reports.tgz" --exclude traces . 2>/dev/null

echo "== table ($(($(date +%s) - START)) s)"
python3 - "$WORK" <<'PY'
import json, os, sys
work = sys.argv[1]
print(f"{'run':26s} {'prog Δ':>8s} {'events':>9s} {'B/ev':>5s} {'iters (source)':28s} verdict / top accumulator")
for f in sorted(os.listdir(work)):
    if not f.endswith(".json"):
        continue
    name = f[:-5]
    try:
        r = json.load(open(os.path.join(work, f)))
    except Exception as e:
        print(f"{name:26s} bad report: {e}"); continue
    prog = "n/a"
    try:
        prog = f"{json.loads(open(os.path.join(work, name + '.stdout')).read().strip().splitlines()[-1])['change_pct']:+.1f}%"
    except Exception:
        pass
    rk = r["ranks"][0]
    ev = rk["trace"]["events"]
    size = os.path.getsize(os.path.join(work, "traces", name + ".trace"))
    it = r["iterations"]
    acc = r["accumulators"][0] if r["accumulators"] else None
    top = f"{acc['kind']}:{acc['key'][:60]}" if acc else "none"
    print(f"{name:26s} {prog:>8s} {ev:9d} {size / max(1, ev):5.2f} {str(it['count']) + ' (' + it['source'] + ':' + it['name'][:14] + ')':28s} {r['verdict']} / {top}")
PY
