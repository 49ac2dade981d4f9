#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# libcuclimb.so exports exactly the symbols of libcuclimb.map (the injection entry points and the
# cuclimb_* C API): a hidden entry point is skipped silently by the driver and NVTX, and any
# other export could collide with the host program's symbols.
#   exports_test.sh LIB MAP
LIB=$1
MAP=$2
command -v nm >/dev/null 2>&1 || { echo "nm not found"; exit 77; }
expected=$(sed -n '/global:/,/local:/p' "$MAP" | grep -o '^ *[A-Za-z_][A-Za-z0-9_]*;' | tr -d ' ;' | sort)
actual=$(nm -D --defined-only "$LIB" | awk '$2 ~ /^[TtWwDdBbVvIi]$/ {print $3}' | sed 's/@.*//' | sort)
if [ "$expected" != "$actual" ]; then
  echo "exported symbols differ from $MAP:"
  echo "expected:"; echo "$expected"
  echo "actual:"; echo "$actual"
  exit 1
fi
echo "exports ok: $(echo "$actual" | tr '\n' ' ')"
