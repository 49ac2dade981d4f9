#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Where allocations come from, on a GPU machine: records programs with --stacks fp, unwind and
# python (and a hook loop with host sampling) and prints, per recording, the most frequent first
# frames of allocation stacks and of host samples (Python frames as they are; native ones as
# module+offset, from the trace's mappings), then the analyzer's accumulators. A short table is
# printed last: the top first frame per run must lie in the program (workloads/, the Rust
# program's keep_scratch_buffer, the Python line), never in libcupti/libcuda.
#
#   OUT=dir scripts/gpu-stacks.sh BUILD_DIR     (BUILD_DIR packed by scripts/gpu-check.sh --pack)
# On the development machine, symbolize a native module+offset with
#   addr2line -f -C -e build/tests/rust/scratch_leak 0xOFFSET
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(realpath "${1:?build dir}")
OUT=${OUT:-$PWD/gpu-out}
WORK=/tmp/cuclimb-stacks
rm -rf "$WORK"
mkdir -p "$OUT" "$WORK"
exec > >(tee -a "$OUT/stacks-log.txt") 2>&1
export PYTHONUNBUFFERED=1
CUCLIMB=$BUILD/analyzer/cuclimb
export CUCLIMB_LIB=$BUILD/interposer/libcuclimb.so
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
P=$root/tests/programs
cat >"$WORK/hooks.py" <<'PY'
# One more gradient hook per iteration: the step time climbs in autograd's hook dispatch.
import sys, torch
x = torch.randn(256, 256, device="cuda", requires_grad=True)
w = torch.randn(256, 256, device="cuda", requires_grad=True)
for i in range(int(sys.argv[1])):
    torch.cuda.nvtx.range_push("iteration")
    w.register_hook(lambda g: g * 1.0)  # the line that accumulates
    (x @ w).sum().backward()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
PY

# name | environment | record flags | program and arguments
RUNS=(
  "adam-fp||--stacks fp|$BUILD/workloads/cuclimb-adam --allocator cubecl --mode climb --retain-tiny 2 --iters 200"
  "adam-unwind||--stacks unwind|$BUILD/workloads/cuclimb-adam --allocator cubecl --mode climb --retain-tiny 2 --iters 200"
  "rust-fp||--stacks fp|$BUILD/tests/rust/scratch_leak 300"
  "rust-unwind||--stacks unwind|$BUILD/tests/rust/scratch_leak 300"
  "torch-async-python|PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync|--stacks python|python3 $P/torch_train.py --iters 300 --keep-losses"
  "torch-async-python-unwind|PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync|--stacks python,unwind|python3 $P/torch_train.py --iters 300 --keep-losses"
  "torch-caching-python||--stacks python|python3 $P/torch_train.py --iters 300 --keep-losses"
  "torch-hooks-sampled||--stacks python --sample-hz 1000|python3 $WORK/hooks.py 400"
)

summarize() {  # trace → first-frame counts
  "$CUCLIMB" convert "$1" "$1.jsonl" >/dev/null 2>&1 || { echo "  (convert failed)"; return; }
  python3 - "$1.jsonl" <<'PY'
import collections, json, sys
maps, firsts = [], {k: collections.Counter() for k in ("alloc", "alloc-py", "sample", "sample-py")}
events = [json.loads(l) for l in open(sys.argv[1])]
for e in events:
    if e.get("ev") == "mapping":
        base = int(e["base"], 16)
        maps.append((base, base + int(e.get("size", 0)), e.get("path", "?")))
def name(f):
    if not f.startswith("0x"):
        return f
    pc = int(f, 16)
    for lo, hi, path in maps:
        if lo <= pc < hi:
            return "%s+0x%x" % (path.rsplit("/", 1)[-1], pc - lo)
    return f
for e in events:
    kind = e.get("ev")
    if kind in firsts and e.get("stack"):
        firsts[kind][name(e["stack"][0])] += 1
        py = next((f for f in e["stack"] if f.startswith("py:")), None)
        if py is not None:
            firsts[kind + "-py"][py] += 1  # the first Python frame: the user's line
        if kind == "alloc" and len(firsts[kind]) == 1 and sum(firsts[kind].values()) == 1:
            print("  first alloc stack:", [name(f) for f in e["stack"][:8]])
for kind, c in firsts.items():
    total = sum(c.values())
    for frame, n in c.most_common(3):
        print("  %-9s %5.1f%% %s" % (kind, 100.0 * n / total, frame))
    if total:
        top, n = c.most_common(1)[0]
        open(sys.argv[1] + ".top", "a").write("%s|%.0f%%|%s\n" % (kind, 100.0 * n / total, top))
PY
}

for run in "${RUNS[@]}"; do
  IFS='|' read -r name envs flags cmd <<<"$run"
  echo "=== $name: $flags $cmd"
  rm -f "$WORK/$name"*
  # shellcheck disable=SC2086
  env $envs timeout 300 "$CUCLIMB" record --output "$WORK/$name.trace" $flags -- $cmd \
    >"$WORK/$name.out" 2>"$WORK/$name.err"
  echo "  exit $? ($(tail -1 "$WORK/$name.err" | cut -c1-120))"
  [ -e "$WORK/$name.trace" ] || continue
  summarize "$WORK/$name.trace"
  "$CUCLIMB" analyze "$WORK/$name.trace" >"$WORK/$name.report" 2>&1
  sed -n '/^accumulators:/,/^$/p' "$WORK/$name.report" | head -8
done
tar -czf "$OUT/stacks-traces.tar.gz" -C "$WORK" $(cd "$WORK" && ls *.trace 2>/dev/null) 2>/dev/null

echo
printf '%-28s %-9s %-6s %s\n' run kind share "top first frame"
for run in "${RUNS[@]}"; do
  name=${run%%|*}
  if [ -e "$WORK/$name.trace.jsonl.top" ]; then
    while IFS='|' read -r kind share frame; do
      printf '%-28s %-9s %-6s %s\n' "$name" "$kind" "$share" "${frame:0:100}"
    done <"$WORK/$name.trace.jsonl.top"
  else
    printf '%-28s %s\n' "$name" "no trace"
  fi
done
