#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Analyzer speed on a many-core machine (no GPU needed): events/s on one core for both benchmark
# mixes, `--jobs` scaling on a job of 8 ranks and on one trace, and optionally the memory bound
# on 10^9 events. Raw outputs go to $OUT; a short table is printed last.
#
#   OUT=dir scripts/analyze-scaling.sh BUILD_DIR        (BUILD_DIR has bench/analyze_bench;
#                                                        a release build gives the real figures)
# Knobs: EVENTS (per trace, default 20000000), THREADS (most threads, default 8), RANKS (traces
# of the job, default 8), REPEATS (runs per thread count, interleaved; the table gives medians;
# default 3), BIG=1 adds the 10^9-event memory run (about 3 GiB of trace in $TMPDIR).
set -u
BUILD=$(realpath "${1:-build-rel}")
OUT=${OUT:-$PWD/scaling-out}
EVENTS=${EVENTS:-20000000}
THREADS=${THREADS:-8}
RANKS=${RANKS:-8}
REPEATS=${REPEATS:-3}
BENCH=$BUILD/bench/analyze_bench
TMP=${TMPDIR:-/tmp}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/scaling-log.txt") 2>&1
echo "cores: $(nproc); $(grep -m1 'model name' /proc/cpuinfo); $(date -u)"
git -C "$(dirname "$0")/.." log -1 --format='commit %h %s' 2>/dev/null

for mix in training alloc; do
  echo "== one core, $mix mix"
  taskset -c 1 "$BENCH" --events "$EVENTS" --mix "$mix" --trace "$TMP/scaling-$mix.trace" --keep \
    | tee "$OUT/core-$mix.txt"
done
echo "== --jobs scaling ($RANKS ranks and one trace, training mix)"
"$BENCH" --trace "$TMP/scaling-training.trace" --scaling "$THREADS" --ranks "$RANKS" \
  --repeats "$REPEATS" | tee "$OUT/jobs.txt"
# One trace with N threads: the reading thread assigns slots, one thread aggregates, a second the
# allocation family, the rest decompress and decode chunks ahead (docs/performance.md, "One trace
# on threads").
echo "== --jobs scaling (one trace, allocation-heavy mix)"
"$BENCH" --trace "$TMP/scaling-alloc.trace" --scaling "$THREADS" --ranks 1 --repeats "$REPEATS" \
  | tee "$OUT/jobs-alloc.txt"
# The machine's own ceiling for this work: RANKS separate processes, each analysing the trace on
# one thread, against one such process alone, interleaved REPEATS times. The processes share
# nothing in user space, so what they lose together is the machine's (all-core clock, L3, memory
# bandwidth, the neighbours of a shared host); the job's "per thread" above is to be read
# against this one. Wall time in milliseconds of running "$@" $1 times at once:
at_once() {
  local n=$1
  shift
  local t0 t1
  t0=$(date +%s%N)
  for _ in $(seq "$n"); do "$@" >/dev/null 2>&1 & done
  wait
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000000))
}
echo "== the machine: $RANKS separate processes of one thread each, against one alone"
for r in $(seq "$REPEATS"); do
  alone=$(at_once 1 "$BENCH" --trace "$TMP/scaling-training.trace" --no-decode --jobs 1)
  together=$(at_once "$RANKS" "$BENCH" --trace "$TMP/scaling-training.trace" --no-decode --jobs 1)
  echo "run $r: alone $alone ms, $RANKS at once $together ms"
done | tee "$OUT/machine.txt"
rm -f "$TMP"/scaling-*.trace
if [ "${BIG:-0}" = 1 ]; then
  echo "== 10^9 events, memory"
  "$BENCH" --events 1000000000 --trace "$TMP/scaling-big.trace" | tee "$OUT/big.txt"
fi

echo "== table"
for mix in training alloc; do
  printf '%-9s %s\n' "$mix" "$(grep -E '^analyze CPU time' "$OUT/core-$mix.txt")"
done
grep -E '^(scaling|\|)' "$OUT/jobs.txt"
echo "one trace, allocation-heavy mix:"
grep -E '^\|' "$OUT/jobs-alloc.txt"
median() { sort -n | awk '{ v[NR] = $1 } END { print (v[int((NR + 1) / 2)] + v[int(NR / 2) + 1]) / 2 }'; }
alone=$(awk '{ print $4 }' "$OUT/machine.txt" | median)
together=$(awk '{ print $9 }' "$OUT/machine.txt" | median)
awk -v a="$alone" -v t="$together" -v ranks="$RANKS" 'BEGIN {
  printf "the machine: one process alone %.2f s, %d at once %.2f s: %.2f per thread\n",
         a / 1000, ranks, t / 1000, a / t }'
[ -f "$OUT/big.txt" ] && grep -E '^(generated|analyze)' "$OUT/big.txt"
exit 0
