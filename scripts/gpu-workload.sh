#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One batched H200 call for cuclimb-adam: the gpu test suites, then the reproduction runs of
# docs/workload.md (allocator x mode at 1500 iterations, the report's isolation table, the cubecl
# model's knobs), a short table printed last.
#
# Usage (repository root, binaries built here and carried):
#   scripts/gpu-workload.sh [--stage DIR] [PHASE...]
#     PHASE: repro isolation retained-others knobs tests (the default list), drift
#   scripts/gpu-workload.sh --stage build-wl/gpu          copy stripped binaries to carry, exit
# Environment: BIN (binaries, default build-wl/gpu), OUT (results, default build-wl/gpu-out),
#              ITERS (default 1500), ISO_ITERS (default 500), OTHER_ITERS (direct/async/caching,
#              default 1500), RUN_TIMEOUT (s per run, default 120), DEADLINE (s; later runs are
#              skipped, not started, default 400), EXTRA (flags added to every run),
#              PIN (a command prefix such as "taskset -c 3": the H200 VM's vCPUs are not equal,
#              and an unpinned run can shift between two speed levels for hundreds of iterations),
#              ROUNDS and DRIFT_ALLOCATORS (drift phase: repeats, allocators).
set -uo pipefail

BUILD=${BUILD:-build-wl}
if [[ ${1:-} == --stage ]]; then
  dest=${2:?--stage needs a directory}
  mkdir -p "$dest"
  for exe in workloads/cuclimb-adam tests/kernels/kernels_gpu_test \
             tests/workloads/allocators_gpu_test tests/workloads/trainer_gpu_test; do
    strip -o "$dest/$(basename "$exe")" "$BUILD/$exe"
  done
  ls -la "$dest"
  exit 0
fi

BIN=${BIN:-build-wl/gpu}
OUT=${OUT:-$BUILD/gpu-out}  # inside the (git-ignored) build directory
ITERS=${ITERS:-1500}
ISO_ITERS=${ISO_ITERS:-500}
OTHER_ITERS=${OTHER_ITERS:-1500}
read -r -a EXTRA_ARGS <<<"${EXTRA:-}"
read -r -a PIN_CMD <<<"${PIN:-}"
RUN_TIMEOUT=${RUN_TIMEOUT:-120}
DEADLINE=${DEADLINE:-400}
PHASES=("$@")
[[ ${#PHASES[@]} -eq 0 ]] && PHASES=(repro isolation retained-others knobs tests)
RUNS=$(mktemp -d)
TABLE=$OUT/table.txt  # written as runs finish: comes back even if the call is cut short
START=$SECONDS
mkdir -p "$OUT"
: >"$TABLE"

# Time the hypervisor gave this VM's vCPUs to others (all CPUs, USER_HZ ticks): a run whose
# level shifts come with steal is being slowed by its neighbours.
steal_ticks() { awk '$1 == "cpu" { print $9; exit }' /proc/stat; }

want() { local p; for p in "${PHASES[@]}"; do [[ $p == "$1" ]] && return 0; done; return 1; }

# run LABEL ARGS...: one cuclimb-adam run; output kept, its summary lines appended to the table.
run() {
  local label=$1
  shift
  if ((SECONDS - START > DEADLINE)); then
    echo "$label SKIPPED (deadline ${DEADLINE}s)" | tee -a "$RUNS/commands.txt" >>"$TABLE"
    return
  fi
  local t0=$SECONDS
  local steal0
  steal0=$(steal_ticks)
  timeout "$RUN_TIMEOUT" "${PIN_CMD[@]}" "$BIN/cuclimb-adam" "$@" "${EXTRA_ARGS[@]}" >"$RUNS/$label.txt" \
    2>"$RUNS/$label.err"
  local rc=$?
  local clock
  clock=$(nvidia-smi --query-gpu=clocks.sm --format=csv,noheader 2>/dev/null)
  echo "$label rc=$rc ${SECONDS}s(+$((SECONDS - t0))s) sm_clock_after=$clock" \
    "steal_ticks=$(($(steal_ticks) - steal0)): $* ${EXTRA_ARGS[*]}" | tee -a "$RUNS/commands.txt"
  grep '^summary' "$RUNS/$label.txt" | sed "s/^/$label /" >>"$TABLE"
  [[ $rc -ne 0 ]] && echo "$label FAILED rc=$rc" >>"$TABLE" && tail -3 "$RUNS/$label.err"
}

{
  echo "== machine"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv
  nproc
  uname -r
} 2>&1 | tee "$RUNS/machine.txt"

R=(--iters "$ITERS")
O=(--iters "$OTHER_ITERS")
I=(--allocator cubecl --iters "$ISO_ITERS")
if want repro; then
  echo "== reproduction: cubecl at $ITERS iterations, others at $OTHER_ITERS"
  run cubecl-flat --allocator cubecl --mode flat "${R[@]}"
  run cubecl-climb --allocator cubecl --mode climb "${R[@]}"
  for a in caching async direct; do
    run $a-flat --allocator $a --mode flat "${O[@]}"
    run $a-climb --allocator $a --mode climb "${O[@]}"
  done
  run cubecl-climb-retain2 --allocator cubecl --mode climb --retain-tiny 2 "${R[@]}" --stats
fi
if want drift; then
  # The flatness criterion under machine drift: every allocator x mode with the reference twin
  # (st/ref divides out what slows the twin alike), in ABAB order so both modes see the same
  # stretch of machine time.
  echo "== drift: allocator x mode with --reference, $ITERS iterations, ${ROUNDS:-1} round(s)"
  for round in $(seq "${ROUNDS:-1}"); do
    for a in ${DRIFT_ALLOCATORS:-cubecl caching async direct}; do
      run r$round-$a-flat --allocator $a --mode flat "${R[@]}" --reference
      run r$round-$a-climb --allocator $a --mode climb "${R[@]}" --reference
    done
    run r$round-cubecl-climb-retain2 --allocator cubecl --mode climb --retain-tiny 2 "${R[@]}" \
      --reference
  done
fi
if want isolation; then
  echo "== isolation table (cubecl, $ISO_ITERS iterations, retention 2 where reallocating)"
  run iso4-persistent+realloc "${I[@]}" --mode climb --retain-tiny 2
  run iso5-half-ephemeral-steps "${I[@]}" --mode climb --retain-tiny 2 --ephemeral-steps 5
  run iso6-separate-pools "${I[@]}" --mode climb --retain-tiny 2 --separate-pools
  run iso1-3nets-1realloc "${I[@]}" --nets 2 --mode climb --retain-tiny 2
  run iso3-2nets-no-realloc "${I[@]}" --nets 2 --mode flat
  run iso2-only-persistent "${I[@]}" --mode flat
fi
if want retained-others; then
  for a in caching async direct; do
    run $a-climb-retain2 --allocator $a --mode climb --retain-tiny 2 "${O[@]}"
  done
fi
if want knobs; then
  echo "== cubecl knobs ($ISO_ITERS iterations, climb)"
  run knob-retain1 "${I[@]}" --mode climb --retain-tiny 1
  run knob-wgpu-like "${I[@]}" --mode climb --retain-tiny 2 --align 64 --meta-pool separate
  run knob-cleanup "${I[@]}" --mode climb --retain-tiny 2 --cleanup-each-cycle --stats
  run knob-no-window "${I[@]}" --mode climb --retain-tiny 2 --no-window
  run knob-retain-params "${I[@]}" --mode climb --retain-params --no-window --stats
  run knob-inplace "${I[@]}" --mode climb --retain-tiny 2 --inplace-adam
  run knob-nvtx-mem "${I[@]}" --mode climb --retain-tiny 2 --nvtx-mem
fi

if want tests; then
  echo "== gpu tests"
  for t in kernels_gpu_test allocators_gpu_test trainer_gpu_test; do
    t0=$SECONDS
    timeout 300 "$BIN/$t" --gtest_brief=0 >"$RUNS/$t.log" 2>&1
    rc=$?
    echo "$t rc=$rc ($((SECONDS - t0))s) $(grep -E '^\[  (PASSED|FAILED)' "$RUNS/$t.log" | tr '\n' ' ')" |
      tee -a "$RUNS/tests.txt"
    grep -E '^\[  FAILED|Failure|error' "$RUNS/$t.log" | head -20
  done
fi

tar -C "$RUNS" -czf "$OUT/runs.tar.gz" .
echo "== elapsed $((SECONDS - START))s"
[[ -f $RUNS/tests.txt ]] && cat "$RUNS/tests.txt"
echo "== table: run, net, st first -> last (change), gpu_st change, loss first -> last"
awk '$2 ~ /^summary/ {
       net = $2; gsub(/^summary\[|\]:$/, "", net)
       rel = NF >= 32 ? sprintf("  st/ref %9s  ref %s", $30, $32) : ""
       printf "%-28s %-4s %8s -> %8s ms %9s  gpu %9s  loss %s -> %s%s\n", $1, net, $4, $6, $8, $14, $16, $18, rel
       next
     }
     { print }' "$TABLE"
