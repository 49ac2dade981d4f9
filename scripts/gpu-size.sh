#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Bytes per event of fresh recordings with `cuclimb record`'s defaults (format 1.2, Python stacks
# for Python programs): the PyTorch training loop with the caching allocator and with
# cudaMallocAsync (the recordings docs/performance.md measured), and cuclimb-adam. Prints a
# short table last; the traces stay in $OUT.
#
#   OUT=dir scripts/gpu-size.sh BUILD_DIR
# BUILD_DIR holds a packed build (scripts/gpu-check.sh --pack).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(realpath "${1:?build dir}")
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
CUCLIMB=$BUILD/analyzer/cuclimb
export CUCLIMB_LIB=$BUILD/interposer/libcuclimb.so
. "$root/scripts/lib-cupti.sh"
find_cupti "$CUCLIMB_LIB"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
P=$root/tests/programs
# name | environment | program and arguments
runs=(
  "torch-default||python3 $P/torch_train.py --iters 300 --keep-losses"
  "torch-async|PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync|python3 $P/torch_train.py --iters 300 --keep-losses"
  "adam-climb||$BUILD/workloads/cuclimb-adam --allocator cubecl --mode climb --iters 500"
)
table=$(printf '%-14s %10s %10s %8s %7s %s\n' name events bytes B/event format status)
for run in "${runs[@]}"; do
  IFS='|' read -r name envs cmd <<<"$run"
  trace=$OUT/$name.trace
  rm -f "$trace"
  env $envs timeout 300 "$CUCLIMB" record --output "$trace" -- $cmd >"$OUT/$name.log" 2>&1
  "$CUCLIMB" info "$trace" --json "$OUT/$name.info.json" --quiet
  table+=$'\n'$(python3 - "$OUT/$name.info.json" "$trace" "$name" <<'PY'
import json, os, sys
j = json.load(open(sys.argv[1]))
size = os.path.getsize(sys.argv[2])
print("%-14s %10d %10d %8.3f %7s %s" % (sys.argv[3], j["events"], size,
      size / max(j["events"], 1), j["format"], j["status"]))
PY
)
done
echo "$table"
