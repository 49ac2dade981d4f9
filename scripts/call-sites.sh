#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The call sites the analyzer names in recorded traces, one short table: per trace its top
# accumulators (kind and label), the first frames of the first one's evidence, and the notes
# that say which modules could not be symbolized and how to fix it. For the traces that
# scripts/gpu-stacks.sh brings back from the GPU machine (stacks-traces.tar.gz); it needs no GPU.
#
#   scripts/call-sites.sh [--cuclimb PATH] [--symbols DIR]... [--frames-internal PAT]... TRACE|TAR.GZ...
# --symbols DIR: where the recorded programs' files are here (the build directory that was
# carried, e.g. build-gpu/workloads and build-gpu/tests/rust).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
CUCLIMB=$root/build/analyzer/cuclimb
opts=()
traces=()
while [ $# -gt 0 ]; do
  case $1 in
    --cuclimb) CUCLIMB=$2; shift 2 ;;
    --symbols|--frames-internal) opts+=("$1" "$2"); shift 2 ;;
    *) traces+=("$1"); shift ;;
  esac
done
[ ${#traces[@]} -gt 0 ] || { sed -n '3,10p' "$0"; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
list=()
for t in "${traces[@]}"; do
  case $t in
    *.tar.gz|*.tgz)
      mkdir -p "$work/$(basename "$t")"
      tar -xzf "$t" -C "$work/$(basename "$t")"
      for f in "$work/$(basename "$t")"/*.trace; do [ -e "$f" ] && list+=("$f"); done ;;
    *) list+=("$t") ;;
  esac
done
rows=()
for t in "${list[@]}"; do
  name=$(basename "$t" .trace)
  "$CUCLIMB" analyze "$t" "${opts[@]}" --json "$work/$name.json" --quiet || true
  [ -s "$work/$name.json" ] || { rows+=("$name|(analysis failed)"); continue; }
  rows+=("$(python3 - "$work/$name.json" "$name" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
name = sys.argv[2]
accs = r.get("accumulators", [])
print(f"=== {name}: {len(accs)} accumulators", file=sys.stderr)
for a in accs[:3]:
    print(f"  {a['kind']:20} {a['key']}", file=sys.stderr)
site = accs[0].get("evidence", {}).get("call_site", {}) if accs else {}
if site.get("frames"):
    for f in site["frames"][:12]:
        print(f"      {f}", file=sys.stderr)
for n in r.get("notes", []):
    if "call sites in" in n:
        print(f"  note: {n}", file=sys.stderr)
top = accs[0] if accs else None
symbol_notes = sum("call sites in" in n for n in r.get("notes", []))
print(f"{name}|{top['kind'] if top else '-'}|{top['key'] if top else '(none)'}|{symbol_notes}")
PY
)")
done
echo
printf '%-30s %-20s %-5s %s\n' trace kind notes "top accumulator (its call site)"
for row in "${rows[@]}"; do
  IFS='|' read -r name kind key notes <<<"$row"
  printf '%-30s %-20s %-5s %s\n' "$name" "${kind:-}" "${notes:-}" "${key:0:110}"
done
