#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A CPU rehearsal of scripts/gpu-ranks.sh, so that GPU time is never spent on a broken script: a
# fake nvidia-smi (one GPU) and a fake torchrun that starts one NVTX test program per rank with
# RANK, LOCAL_RANK and WORLD_SIZE set (as torchrun does) and prints the DDP program's summary
# line. Checks that every rank's trace is found, knows its rank and is analysed alone and merged.
# usage: gpu_ranks_rehearsal_test.sh SOURCE_ROOT BUILD_DIR NVTX_PROGRAM
set -u
ROOT=$(realpath "$1") BUILD=$(realpath "$2") P=$(realpath "$3")
D=$(mktemp -d) || exit 1
trap 'rm -rf "$D"' EXIT
mkdir -p "$D/bin"
cat > "$D/bin/nvidia-smi" <<'X'
#!/bin/sh
echo "GPU 0: Fake GPU (UUID: GPU-00000000)"
X
cat > "$D/bin/torchrun" <<X
#!/bin/bash
n=1
while [ \$# -gt 0 ]; do
  case "\$1" in --nproc-per-node) n=\$2; shift 2 ;; --standalone) shift ;; *) break ;; esac
done
keep=-1
args=("\$@")
for i in "\${!args[@]}"; do
  [ "\${args[\$i]}" = --keep-losses-rank ] && keep=\${args[\$((i + 1))]}
done
for r in \$(seq 0 \$((n - 1))); do
  ( RANK=\$r LOCAL_RANK=\$r WORLD_SIZE=\$n "$P" basic > /dev/null
    echo "{\"program\": \"ddp_keep_losses\", \"rank\": \$r, \"backend\": \"gloo\", \"first_ms\": 1.0, \"last_ms\": 1.1, \"kept\": \$([ "\$r" = "\$keep" ] && echo 400 || echo 0)}" ) &
done
wait
X
chmod +x "$D/bin/nvidia-smi" "$D/bin/torchrun"
out=$(PATH="$D/bin:$PATH" OUT="$D/out" WORK="$D/work" CUDA_INJECTION64_PATH='' NVTX_INJECTION64_PATH='' LD_PRELOAD='' \
      ITERS=400 bash "$ROOT/scripts/gpu-ranks.sh" "$BUILD" 2>&1)
table=$(sed -n '/^== table/,$p' <<<"$out")
echo "$table"
fail=0
for run in ddp-flat ddp-keep-r1; do
  for rank in 0 1; do
    line=$(grep -E "^$run +$rank " <<<"$table")
    if [ -z "$line" ] || grep -q 'no trace\|trace says\|(' <<<"$line"; then
      echo "FAIL: $run rank $rank: ${line:-no row}"; fail=1
    fi
  done
  grep -Eq "^$run +all merged: (flat|climbing), [0-9]+ iterations" <<<"$table" ||
    { echo "FAIL: $run: no merged report"; fail=1; }
done
grep -Eq '^ddp-keep-r1 +1 .* 400 ' <<<"$table" || { echo "FAIL: rank 1 kept no losses"; fail=1; }
for f in ranks-log.txt ranks-reports.tgz ranks-traces.tar; do
  [ -s "$D/out/$f" ] || { echo "FAIL: $f not in OUT"; fail=1; }
done
[ $fail -eq 0 ] || echo "$out" | tail -60
exit $fail
