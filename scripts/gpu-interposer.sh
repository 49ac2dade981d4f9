#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The one batched H200 run for libcuclimb.so and `cuclimb record`: the GPU test scenarios, the
# PyTorch checks (default caching allocator, expandable segments, cudaMallocAsync, torch.profiler
# interplay) and the overhead measurements. Raw outputs go to $OUT (at most 8 files: the device
# tool's limit), a short table is printed last.
#
#   OUT=/some/dir scripts/gpu-interposer.sh [BUILD_DIR] [PART...]
# PART: tests torch overhead (default: all three). BUILD_DIR defaults to build-ip and must hold a
# build of the whole tree (interposer, analyzer, tests, bench). TORCH_CHECKS, and LOOPS and
# *_MODES of scripts/step_overhead.sh, narrow a run down.
#   scripts/gpu-interposer.sh --pack BUILD_DIR DEST_DIR
# copies the binaries the run needs, stripped of debug info, into DEST_DIR with the build tree's
# layout (the device tool carries at most 64 MiB), e.g. --pack build-ip build-ip-gpu; then run
# with DEST_DIR as BUILD_DIR.
set -u
if [ "${1:-}" = --pack ]; then
  src=${2:?build dir}
  dst=${3:?dest dir}
  for f in interposer/libcuclimb.so analyzer/cuclimb tests/interposer/interposer_gpu_test \
           tests/interposer/interposer_gpu_program tests/interposer/interposer_trace_stats \
           bench/interposer_step_bench workloads/cuclimb-adam tests/rust/scratch_leak; do
    [ -e "$src/$f" ] || continue
    mkdir -p "$dst/$(dirname "$f")"
    strip --strip-debug -o "$dst/$f" "$src/$f"
  done
  du -sh "$dst"
  exit 0
fi
BUILD=${1:-build-ip}
shift || true
PARTS=${*:-tests torch overhead}
OUT=${OUT:-$PWD/gpu-out}
WORK=/tmp/cuclimb-gpu
rm -rf "$WORK"
mkdir -p "$OUT" "$WORK"
exec > >(tee -a "$OUT/log.txt") 2>&1
export PYTHONUNBUFFERED=1
LIB=$(realpath "$BUILD/interposer/libcuclimb.so")
STATS=$BUILD/tests/interposer/interposer_trace_stats
CUCLIMB=$BUILD/analyzer/cuclimb
START=$(date +%s)

echo "== environment"
nvidia-smi -L 2>&1 | head -2
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1
find /usr/local /opt -name 'libcupti.so.13*' 2>/dev/null | head -5
. "$(dirname "$0")/lib-cupti.sh"
find_cupti "$LIB"
ldd "$LIB" | grep -E 'cupti|zstd|stdc|not found'
git log -1 --format='commit %h %s' 2>/dev/null

if [[ " $PARTS " == *" tests "* ]]; then
  echo "== GPU tests"
  CUCLIMB_LIB=$LIB CUCLIMB_TEST_GPU_PROGRAM=$BUILD/tests/interposer/interposer_gpu_program \
    timeout 240 "$BUILD/tests/interposer/interposer_gpu_test" --out "$WORK/gpu" >"$WORK/gpu-test.log" 2>&1
  echo "gpu test exit status $?"
  grep -E '^(FAIL|INFO)|gpu checks' "$WORK/gpu-test.log"
  cp "$WORK/gpu-test.log" "$OUT/gpu-test.log"
  cat "$WORK/gpu/gpu-summary.jsonl" >>"$OUT/results.jsonl" 2>/dev/null
  cp "$WORK/gpu/families-cbids.txt" "$OUT/families-cbids.txt" 2>/dev/null
  # Small H200 traces for golden tests and manual inspection.
  tar -C "$WORK/gpu" -czf "$OUT/traces.tgz" families dlopen capture fork 2>/dev/null
fi

if [[ " $PARTS " == *" torch "* ]] && python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  echo "== PyTorch under cuclimb record"
  for conf in ${TORCH_CHECKS:-default expandable_segments:True backend:cudaMallocAsync profiler}; do
    name=${conf%%:*}
    extra=()
    env_conf=()
    case $conf in
      default) ;;
      profiler) extra=(--profiler 10); env_conf=(CUCLIMB_KERNELS=all PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync) ;;
      *) env_conf=(PYTORCH_CUDA_ALLOC_CONF=$conf) ;;
    esac
    line=$(env "${env_conf[@]}" timeout 150 "$CUCLIMB" record --output "$WORK/torch-$name-%p.trace" -- \
      python3 bench/interposer_torch_bench.py --mode check --iters 400 --label "$name" "${extra[@]}" \
      2>"$WORK/torch-$name.stderr" | tail -1)
    echo "torch $name: status $? $line"
    grep -v '^\s*$' "$WORK/torch-$name.stderr" | tail -3
    trace=$(ls "$WORK"/torch-$name-*.trace 2>/dev/null | head -1)
    stats=null
    [ -n "$trace" ] && stats=$("$STATS" "$trace" || echo null)
    after=null
    if [ "$name" = profiler ] && [ -n "$trace" ]; then
      # Records after the profiler ran: kernels and MEMORY2 allocations past the "profiler-end" mark.
      after=$("$CUCLIMB" convert "$trace" - --to jsonl 2>/dev/null | python3 -c '
import json, sys
end = None; kernels = 0; m2 = 0; launches = 0
for line in sys.stdin:
    e = json.loads(line)
    if e.get("ev") == "mark" and e.get("name") == "profiler-end": end = e["ts"]
    elif end is not None and e.get("ts", 0) > end:
        kernels += e.get("ev") == "kernel"
        launches += e.get("ev") == "launch"
        m2 += e.get("ev") in ("alloc", "free") and e.get("api") == "MEMORY2"
print(json.dumps({"mark_seen": end is not None, "kernels_after": kernels, "launches_after": launches, "memory2_after": m2}))')
    fi
    echo "{\"torch_check\": \"$name\", \"torch\": ${line:-null}, \"trace\": $stats, \"after_profiler\": ${after:-null}}" >>"$OUT/results.jsonl"
  done
fi

if [[ " $PARTS " == *" overhead "* ]]; then
  echo "== overhead"
  scripts/step_overhead.sh "$BUILD" "$WORK/overhead" "$WORK/overhead-traces"
  cat "$WORK/overhead/overhead.jsonl" >>"$OUT/results.jsonl" 2>/dev/null
fi

echo "== summary ($(($(date +%s) - START)) s)"
python3 - "$OUT/results.jsonl" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
for r in rows:
    if "scenario" in r:
        s = r["stats"]
        print(f"gpu {r['scenario']:<13} {r['seconds']:6.1f}s events={sum(s['by_type'].values()):>7} "
              f"drops={s['trailer_dropped']} launches={s['launches']} kernels={s['kernels']} "
              f"joined={s['kernels_joined']} self_ns/event="
              f"{s['self_ns'] / max(1, s['overhead_events']):.0f}")
for r in rows:
    if "torch_check" in r:
        t, s = r["torch"] or {}, r["trace"] or {}
        live = s.get("live_api_bytes", {})
        print(f"torch {r['torch_check']:<20} reserved={t.get('reserved', 0) / 2**20:8.1f}MiB "
              f"device_live={live.get('device', 0) / 2**20:8.1f}MiB pool_live={live.get('pool', 0) / 2**20:7.1f}MiB "
              f"vmm_mapped={s.get('vmm_mapped_bytes', 0) / 2**20:8.1f}MiB allocated={t.get('allocated', 0) / 2**20:7.1f}MiB "
              f"launches={s.get('launches')} iters={s.get('nvtx_top', {}).get('iteration')} "
              f"drops={s.get('trailer_dropped')} after={r.get('after_profiler')}")
print(f"{'overhead':<8} {'loop':<6} {'mode':<15} {'median':>8} {'p25':>8} {'p75':>8} {'step_us':>9} {'self_ns/ev':>10}")
by = {}
for r in rows:
    if r.get("kind") in ("native", "torch") and r.get("result"):
        res, tr = r["result"], r.get("trace") or {}
        br = res.get("block_ratio") or {}
        step = (res.get("paused") or res.get("recording") or {}).get("median_us", 0)
        spe = tr.get("self_ns", 0) / max(1, tr.get("overhead_events", 0)) if tr else 0
        print(f"{'':<8} {r['kind']:<6} {r['mode']:<15} {100 * (br.get('median', 1) - 1):7.2f}% "
              f"{100 * (br.get('p25', 1) - 1):7.2f}% {100 * (br.get('p75', 1) - 1):7.2f}% {step:9.1f} {spe:10.0f}")
        if r["kind"] == "native" and "alloc_pair_recording" in res:
            by[r["mode"]] = res
for mode, res in by.items():
    a = res["alloc_pair_recording"]["median_us"] - res["alloc_pair_paused"]["median_us"]
    l = res["launch_recording"]["median_us"] - res["launch_paused"]["median_us"]
    print(f"micro {mode:<15} alloc+free pair +{a:.3f} us  launch +{l:.3f} us")
proc = {}
for r in rows:
    if r.get("kind") == "native_process" and r.get("result"):
        proc.setdefault(r["mode"], []).append(r["result"]["recording"]["median_us"])
adam, adam_trace = {}, {}
for r in rows:
    if r.get("kind") == "adam_process" and r.get("st_ms") is not None:
        adam.setdefault(r["mode"], []).append(r["st_ms"])
        if r.get("trace"):
            adam_trace[r["mode"]] = r["trace"]
if adam.get("untraced"):
    base = statistics.median(adam["untraced"])
    for mode, v in adam.items():
        tr = adam_trace.get(mode, {})
        ev = sum(tr.get("by_type", {}).values()) if tr else 0
        spe = tr.get("self_ns", 0) / max(1, tr.get("overhead_events", 0)) if tr else 0
        print(f"adam {mode:<20} st {[round(x, 3) for x in v]} ms  median {statistics.median(v) / base - 1:+.1%} "
              f"events={ev} self_ns/event={spe:.0f} drops={tr.get('trailer_dropped') if tr else None}")
if proc:
    u, d = proc.get("untraced", []), proc.get("default", [])
    print(f"process-level native: untraced {[round(x, 1) for x in u]} us, default {[round(x, 1) for x in d]} us, "
          f"median ratio {statistics.median(d) / statistics.median(u) - 1:+.2%}" if u and d else "")
EOF
