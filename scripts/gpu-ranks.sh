#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A multi-rank PyTorch DDP job recorded under cuclimb on a GPU machine (issue #15, recording
# side): tests/programs/ddp_keep_losses.py under `cuclimb record -- torchrun --nproc-per-node N`,
# once flat and once with one rank keeping every loss tensor, each also run untraced for the
# per-rank overhead; every rank's trace analysed alone and all of a run's together. Traces and
# reports go to $OUT; a short table is printed last.
#
#   OUT=dir scripts/gpu-ranks.sh BUILD_DIR
# BUILD_DIR holds a packed build (scripts/gpu-check.sh --pack). N is the number of GPUs, at least
# 2: with one GPU two ranks share it (the program then uses gloo: NCCL refuses two ranks on one
# device). NPROC=N overrides; ITERS (default 400) sets the iterations; KEEP_RANK (default 1) the
# rank that keeps its losses.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(realpath "${1:?build dir}")
OUT=${OUT:-$PWD/gpu-out}
WORK=${WORK:-/tmp/cuclimb-ranks}
rm -rf "$WORK"
mkdir -p "$OUT" "$WORK"
exec > >(tee -a "$OUT/ranks-log.txt") 2>&1
export PYTHONUNBUFFERED=1
CUCLIMB=$BUILD/analyzer/cuclimb
export CUCLIMB_LIB=$BUILD/interposer/libcuclimb.so
. "$root/scripts/lib-cupti.sh"
find_cupti "$CUCLIMB_LIB"
# NVLink multicast stays off (the device's rule), whatever a program starts.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
N=${NPROC:-$(( GPUS >= 2 ? GPUS : 2 ))}
ITERS=${ITERS:-400}
KEEP_RANK=${KEEP_RANK:-1}
PROGRAM=$root/tests/programs/ddp_keep_losses.py
if command -v torchrun > /dev/null; then LAUNCH=(torchrun); else LAUNCH=(python3 -m torch.distributed.run); fi
LAUNCH+=(--standalone --nproc-per-node "$N")
START=$(date +%s)
echo "$(date -u +%FT%TZ) GPUs $GPUS, ranks $N, iterations $ITERS, keep rank $KEEP_RANK"
nvidia-smi -L
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1 | tail -1

# name | program arguments
RUNS=(
  "ddp-flat|--iters $ITERS"
  "ddp-keep-r$KEEP_RANK|--iters $ITERS --keep-losses-rank $KEEP_RANK"
)
for spec in "${RUNS[@]}"; do
  IFS='|' read -r name args <<<"$spec"
  mkdir -p "$WORK/$name"
  echo "== $name: untraced"
  # shellcheck disable=SC2086
  timeout 240 "${LAUNCH[@]}" "$PROGRAM" $args > "$WORK/$name/untraced.stdout" 2> "$WORK/$name/untraced.stderr"
  echo "exit $?"; grep '"program"' "$WORK/$name/untraced.stdout"
  echo "== $name: recorded"
  t0=$(date +%s%N)
  # shellcheck disable=SC2086
  timeout 300 "$CUCLIMB" record --output "$WORK/$name/rank%r-%p.trace" -- \
    "${LAUNCH[@]}" "$PROGRAM" $args > "$WORK/$name/traced.stdout" 2> "$WORK/$name/traced.stderr"
  echo "exit $?, $(( ($(date +%s%N) - t0) / 1000000000 )) s"
  grep '"program"' "$WORK/$name/traced.stdout"
  grep -i 'cuclimb\|error' "$WORK/$name/traced.stderr" | grep -v '^\s*$' | tail -5
  for t in "$WORK/$name"/rank*.trace; do
    [ -e "$t" ] || continue
    r=$(basename "$t" .trace)
    r=${r%%-*}
    mv "$t" "$WORK/$name/$r.trace"
    "$CUCLIMB" info "$WORK/$name/$r.trace" > "$WORK/$name/$r.info" 2>&1
    timeout 200 "$CUCLIMB" analyze "$WORK/$name/$r.trace" --json "$WORK/$name/$r.json" \
      > "$WORK/$name/$r.report" 2>&1
  done
  if ls "$WORK/$name"/rank*.trace > /dev/null 2>&1; then
    timeout 300 "$CUCLIMB" analyze "$WORK/$name"/rank*.trace --json "$WORK/$name/merged.json" \
      --html "$WORK/$name/merged.html" > "$WORK/$name/merged.report" 2>&1
    echo "-- merged report"; head -40 "$WORK/$name/merged.report"
  fi
done

tar -C "$WORK" -czf "$OUT/ranks-reports.tgz" --exclude '*.trace' . 2>/dev/null
( cd "$WORK" && tar -cf "$OUT/ranks-traces.tar" ./*/rank*.trace 2>/dev/null )
ls -la "$OUT"

echo "== table ($(($(date +%s) - START)) s)"
python3 - "$WORK" "$KEEP_RANK" <<'PY'
import glob, json, os, sys
work, keep_rank = sys.argv[1], int(sys.argv[2])

def summaries(path):
    out = {}
    try:
        # The ranks print at the same time: two summaries can share a line.
        text, decoder, at = open(path).read(), json.JSONDecoder(), 0
        while (at := text.find("{", at)) >= 0:
            try:
                s, end = decoder.raw_decode(text, at)
            except json.JSONDecodeError:
                at += 1
                continue
            if isinstance(s, dict) and s.get("program"):
                out[s["rank"]] = s
            at = end
    except OSError:
        pass
    return out

print(f"{'run':14s} {'rank':>4s} {'backend':7s} {'trace MB':>8s} {'events':>9s} "
      f"{'untraced ms':>16s} {'recorded ms':>16s} {'kept':>5s}  verdict / top accumulator")
for run in sorted(os.listdir(work)):
    d = os.path.join(work, run)
    if not os.path.isdir(d):
        continue
    plain, traced = summaries(os.path.join(d, "untraced.stdout")), summaries(os.path.join(d, "traced.stdout"))
    ranks = sorted(set(plain) | set(traced))
    for rank in ranks:
        p, t = plain.get(rank, {}), traced.get(rank, {})
        trace = os.path.join(d, f"rank{rank}.trace")
        mb = os.path.getsize(trace) / 2**20 if os.path.exists(trace) else float("nan")
        verdict, events, top = "no trace", 0, ""
        try:
            r = json.load(open(os.path.join(d, f"rank{rank}.json")))
            verdict = r["verdict"]
            events = r["ranks"][0]["trace"]["events"]
            got = r["ranks"][0]["process"]["rank"]
            if got != rank:
                verdict += f" (trace says rank {got})"
            acc = r["accumulators"][0] if r["accumulators"] else None
            top = f"{acc['kind']}:{acc['key'][:48]}" if acc else "none"
        except Exception as e:  # a missing or unreadable report is a finding too
            top = f"({type(e).__name__})"
        fmt = lambda s: f"{s.get('first_ms', float('nan')):6.2f}→{s.get('last_ms', float('nan')):6.2f}"
        print(f"{run:14s} {rank:4d} {t.get('backend', p.get('backend', '?')):7s} {mb:8.1f} {events:9d} "
              f"{fmt(p):>16s} {fmt(t):>16s} {t.get('kept', 0):5d}  {verdict} / {top}")
    try:
        m = json.load(open(os.path.join(d, "merged.json")))
        accs = "; ".join(f"{a['kind']}:{a['key'][:40]} on ranks {a.get('ranks')}"
                         for a in m["accumulators"][:3]) or "none"
        print(f"{run:14s} {'all':>4s} merged: {m['verdict']}, {m['iterations']['count']} iterations; {accs}")
    except Exception as e:
        print(f"{run:14s} {'all':>4s} merged: ({type(e).__name__})")
print(f"expected: ddp-flat flat on every rank; ddp-keep-r{keep_rank} an allocation accumulator on "
      f"rank {keep_rank} only (merged: on ranks [{keep_rank}] by index), the other ranks flat or "
      f"waiting for it inside bwd (the all-reduce)")
PY
