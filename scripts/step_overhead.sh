#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Step-time overhead of libcuclimb.so per recording mode, on the H200 (called by
# scripts/gpu-interposer.sh; usable alone).
#
#   scripts/step_overhead.sh BUILD_DIR OUT_DIR [WORK_DIR]
#
# Method: in-process A/B. Each mode runs in its own process whose loop alternates blocks of
# iterations with recording paused (cuclimb_pause) and resumed; the figure is the median over
# block pairs of median(resumed block) / median(preceding paused block) - 1, with its quartiles.
# Separate processes of the same loop differ by up to ±15 % on the H200, far more than the
# effect. Two loops: bench/interposer_step_bench.cu (native, launch-bound MLP-like step) and
# bench/interposer_torch_bench.py (PyTorch MLP + Adam). Raw JSON lines go to OUT/overhead.jsonl,
# traces and stderr to WORK_DIR (default /tmp/cuclimb-overhead); each trace's summary (our own
# time per event from its overhead events, drops, sizes) is in the JSON line.
# Plus a cross-process check: untraced and default-traced native runs, interleaved.
set -u
BUILD=${1:?build dir}
OUT=${2:?out dir}
WORK=${3:-/tmp/cuclimb-overhead}
mkdir -p "$OUT" "$WORK"
LIB=$(realpath "$BUILD/interposer/libcuclimb.so")
BENCH=$BUILD/bench/interposer_step_bench
STATS=$BUILD/tests/interposer/interposer_trace_stats
TORCH_BENCH=bench/interposer_torch_bench.py
RESULTS=$OUT/overhead.jsonl

# mode name → CUCLIMB_* settings
declare -A MODES=(
  [default]=""
  [alloc_only]="CUCLIMB_API=off CUCLIMB_KERNELS=off"
  [api_times]="CUCLIMB_KERNELS=off"
  [kernels_all]="CUCLIMB_KERNELS=all"
  [stacks_fp]="CUCLIMB_STACKS=fp"
  [stacks_unwind]="CUCLIMB_STACKS=unwind"
  [host_sampling]="CUCLIMB_SAMPLE_HZ=1000"
  [callbacks_only]="CUCLIMB_MEMORY_ACTIVITY=off CUCLIMB_KERNELS=off"
  [bare_cupti]="CUCLIMB_MEMORY_ACTIVITY=off CUCLIMB_KERNELS=off CUCLIMB_DEBUG_BARE_CALLBACKS=1"
)
ORDER="default alloc_only api_times kernels_all stacks_fp stacks_unwind host_sampling callbacks_only bare_cupti"

run_mode() {  # kind mode command...
  local kind=$1 mode=$2
  shift 2
  local trace="$WORK/$kind-$mode-%p.trace"
  local line
  line=$(env CUDA_INJECTION64_PATH="$LIB" NVTX_INJECTION64_PATH="$LIB" CUCLIMB_OUTPUT="$trace" \
    ${MODES[$mode]} timeout 150 "$@" 2>"$WORK/$kind-$mode.stderr" | tail -1)
  local file
  file=$(ls "$WORK/$kind-$mode-"*.trace 2>/dev/null | head -1)
  local stats="null"
  if [ -n "$file" ] && [ -x "$STATS" ]; then stats=$("$STATS" "$file" || echo null); fi
  echo "{\"kind\": \"$kind\", \"mode\": \"$mode\", \"result\": ${line:-null}, \"trace\": $stats}" >>"$RESULTS"
  echo "$kind $mode: ${line:0:200}"
}

if [ -x "$BENCH" ]; then
  for mode in $ORDER; do
    run_mode native "$mode" "$BENCH" --iters 3000 --block 100 --label "$mode"
  done
  # Cross-process, interleaved: untraced vs default, whole runs.
  for i in 1 2 3 4; do
    line=$(timeout 120 "$BENCH" --iters 1500 --block 1500 --no-pause --label untraced | tail -1)
    echo "{\"kind\": \"native_process\", \"mode\": \"untraced\", \"result\": ${line:-null}}" >>"$RESULTS"
    line=$(env CUDA_INJECTION64_PATH="$LIB" NVTX_INJECTION64_PATH="$LIB" \
      CUCLIMB_OUTPUT="$WORK/process-$i-%p.trace" \
      timeout 120 "$BENCH" --iters 1500 --block 1500 --no-pause --label traced | tail -1)
    echo "{\"kind\": \"native_process\", \"mode\": \"default\", \"result\": ${line:-null}}" >>"$RESULTS"
  done
fi

# cuclimb-adam (workloads/): no pause hook, so whole processes, untraced and default-traced
# interleaved; the figure is the median optimizer-step time (st) after 20 warm-up iterations.
ADAM=$BUILD/workloads/cuclimb-adam
if [ -x "$ADAM" ]; then
  adam_st() {
    python3 -c '
import re, statistics, sys
st = [float(m.group(2)) for m in (re.match(r"iter=(\d+) st=([\d.]+)ms", l) for l in sys.stdin) if m]
print(statistics.median(st[20:]) if len(st) > 20 else "null")'
  }
  for i in 1 2 3; do
    v=$(timeout 120 "$ADAM" --mode flat --iters 150 --allocator async 2>/dev/null | adam_st)
    echo "{\"kind\": \"adam_process\", \"mode\": \"untraced\", \"st_ms\": ${v:-null}}" >>"$RESULTS"
    v=$(env CUDA_INJECTION64_PATH="$LIB" NVTX_INJECTION64_PATH="$LIB" \
      CUCLIMB_OUTPUT="$WORK/adam-$i-%p.trace" \
      timeout 120 "$ADAM" --mode flat --iters 150 --allocator async 2>/dev/null | adam_st)
    echo "{\"kind\": \"adam_process\", \"mode\": \"default\", \"st_ms\": ${v:-null}}" >>"$RESULTS"
    echo "adam round $i done"
  done
fi

if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  for mode in default alloc_only api_times kernels_all stacks_fp host_sampling; do
    run_mode torch "$mode" python3 "$TORCH_BENCH" --mode overhead --iters 600 --block 50 --label "$mode"
  done
fi
