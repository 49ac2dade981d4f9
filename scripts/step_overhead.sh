#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Step-time overhead of libcuclimb.so per recording mode, on the H200 (called by
# scripts/gpu-interposer.sh; usable alone).
#
#   [LOOPS="native torch adam"] [NATIVE_MODES=...] [TORCH_MODES=...] [ADAM_MODES=...] \
#   scripts/step_overhead.sh BUILD_DIR OUT_DIR [WORK_DIR]
#
# Method. native and torch: in-process A/B. Each mode runs in its own process whose loop
# alternates blocks of iterations with recording paused (cuclimb_pause: callbacks and activity
# kinds off) and resumed; the figure is the median over block pairs of
# median(resumed block) / median(preceding paused block) - 1, with its quartiles. Separate
# processes of the same loop differ by up to ±15 % on the H200, more than the effect.
#   native: bench/interposer_step_bench.cu, a launch-bound MLP-like step (60 launches,
#           8 stream-ordered allocation pairs, one NVTX range), plus per-call micro-benchmarks.
#   torch:  bench/interposer_torch_bench.py, a PyTorch MLP + Adam step.
# adam: cuclimb-adam (workloads/) has no pause hook: whole processes, untraced and traced runs
# interleaved, figure = median optimizer-step time (st) after 20 warm-up iterations.
# Raw JSON lines go to OUT/overhead.jsonl, traces and stderr to WORK_DIR; each line carries the
# trace's summary (our own time per event from its overhead events, event counts, drops).
set -u
BUILD=${1:?build dir}
OUT=${2:?out dir}
WORK=${3:-/tmp/cuclimb-overhead}
mkdir -p "$OUT" "$WORK"
LIB=$(realpath "$BUILD/interposer/libcuclimb.so")
BENCH=$BUILD/bench/interposer_step_bench
ADAM=$BUILD/workloads/cuclimb-adam
STATS=$BUILD/tests/interposer/interposer_trace_stats
TORCH_BENCH=bench/interposer_torch_bench.py
RESULTS=$OUT/overhead.jsonl
LOOPS=${LOOPS:-native torch adam}

# mode name → CUCLIMB_* settings
declare -A MODES=(
  [default]=""
  [alloc_only]="CUCLIMB_API=off CUCLIMB_KERNELS=off"
  [api_times]="CUCLIMB_KERNELS=off"
  [kernels_all]="CUCLIMB_KERNELS=all"
  [stacks_fp]="CUCLIMB_STACKS=fp"
  [stacks_unwind]="CUCLIMB_STACKS=unwind"
  [stacks_python]="CUCLIMB_STACKS=python"
  [stacks_python_unwind]="CUCLIMB_STACKS=python,unwind"
  [host_sampling]="CUCLIMB_SAMPLE_HZ=1000"
  [no_memory_activity]="CUCLIMB_MEMORY_ACTIVITY=off"
  [no_gauges]="CUCLIMB_GAUGE_MS=off"
  [callbacks_only]="CUCLIMB_MEMORY_ACTIVITY=off CUCLIMB_KERNELS=off CUCLIMB_GAUGE_MS=off"
  [bare_cupti]="CUCLIMB_MEMORY_ACTIVITY=off CUCLIMB_KERNELS=off CUCLIMB_GAUGE_MS=off CUCLIMB_DEBUG_BARE_CALLBACKS=1"
)
NATIVE_MODES=${NATIVE_MODES:-default alloc_only api_times kernels_all stacks_fp stacks_unwind host_sampling no_memory_activity callbacks_only bare_cupti}
TORCH_MODES=${TORCH_MODES:-default alloc_only api_times kernels_all stacks_fp stacks_unwind stacks_python stacks_python_unwind host_sampling}
ADAM_MODES=${ADAM_MODES:-default no_memory_activity no_gauges callbacks_only bare_cupti stacks_fp stacks_unwind}

stats_of() {  # trace files... → JSON summary of the first, or null
  local file=${1:-}
  if [ -n "$file" ] && [ -e "$file" ] && [ -x "$STATS" ]; then "$STATS" "$file" || echo null; else echo null; fi
}

run_mode() {  # kind mode command...
  local kind=$1 mode=$2
  shift 2
  local line
  line=$(env CUDA_INJECTION64_PATH="$LIB" NVTX_INJECTION64_PATH="$LIB" \
    CUCLIMB_OUTPUT="$WORK/$kind-$mode-%p.trace" \
    ${MODES[$mode]} timeout 150 "$@" 2>"$WORK/$kind-$mode.stderr" | tail -1)
  local stats
  stats=$(stats_of $(ls "$WORK/$kind-$mode-"*.trace 2>/dev/null | head -1))
  echo "{\"kind\": \"$kind\", \"mode\": \"$mode\", \"result\": ${line:-null}, \"trace\": $stats}" >>"$RESULTS"
  echo "$kind $mode: ${line:0:160}"
}

if [[ " $LOOPS " == *" native "* ]] && [ -x "$BENCH" ]; then
  for mode in $NATIVE_MODES; do
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

if [[ " $LOOPS " == *" adam "* ]] && [ -x "$ADAM" ]; then
  adam_st() {
    python3 -c '
import re, statistics, sys
st = [float(m.group(2)) for m in (re.match(r"iter=(\d+) st=([\d.]+)ms", l) for l in sys.stdin) if m]
print(statistics.median(st[20:]) if len(st) > 20 else "null")'
  }
  ADAM_ARGS=${ADAM_ARGS:---mode flat --iters 150}
  for round in 1 2; do
    for mode in untraced $ADAM_MODES; do
      if [ "$mode" = untraced ]; then
        v=$(timeout 120 "$ADAM" $ADAM_ARGS 2>/dev/null | adam_st)
        stats=null
      else
        rm -f "$WORK/adam-$mode-"*.trace
        v=$(env CUDA_INJECTION64_PATH="$LIB" NVTX_INJECTION64_PATH="$LIB" \
          CUCLIMB_OUTPUT="$WORK/adam-$mode-%p.trace" ${MODES[$mode]} \
          timeout 120 "$ADAM" $ADAM_ARGS 2>"$WORK/adam-$mode.stderr" | adam_st)
        stats=$(stats_of $(ls "$WORK/adam-$mode-"*.trace 2>/dev/null | head -1))
      fi
      echo "{\"kind\": \"adam_process\", \"mode\": \"$mode\", \"round\": $round, \"args\": \"$ADAM_ARGS\", \"st_ms\": ${v:-null}, \"trace\": $stats}" >>"$RESULTS"
      echo "adam $mode round $round: st ${v}"
    done
  done
fi

if [[ " $LOOPS " == *" torch "* ]] && python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  for mode in $TORCH_MODES; do
    run_mode torch "$mode" python3 "$TORCH_BENCH" --mode overhead --iters 600 --block 50 --label "$mode"
  done
  # Stacks where every tensor is a CUDA allocation (cudaMallocAsync backend) and every loss is
  # kept, against PyTorch's own memory history with Python stacks on the same loop (untraced,
  # history switched on and off per block like cuclimb_pause/resume).
  for mode in ${TORCH_ASYNC_MODES:-default stacks_fp stacks_python stacks_python_unwind}; do
    PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync run_mode torch_async "$mode" \
      python3 "$TORCH_BENCH" --mode overhead --iters 600 --block 50 --keep-losses --label "$mode"
  done
  for alloc in native cudaMallocAsync; do
    for stacks in python all; do
      line=$(PYTORCH_CUDA_ALLOC_CONF=backend:$alloc timeout 150 python3 "$TORCH_BENCH" \
        --mode overhead --iters 600 --block 50 --keep-losses --memory-history "$stacks" \
        --label "history_$stacks" 2>"$WORK/history-$alloc-$stacks.stderr" | tail -1)
      echo "{\"kind\": \"torch_history_$alloc\", \"mode\": \"history_$stacks\", \"result\": ${line:-null}}" >>"$RESULTS"
      echo "torch_history_$alloc $stacks: ${line:0:160}"
    done
  done
fi
