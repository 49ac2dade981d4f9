#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# libcuclimb.so lives in someone else's process: it may need only libc, libstdc++, libgcc_s, libm,
# libdl, pthread, libcupti and libzstd.so.1, never Abseil (Debian's archives are not PIC, and a host
# such as PyTorch carries its own), Google Benchmark, or libcuda (the driver is dlsym'd, so the
# library also loads where there is no driver).
#   foreign_deps_test.sh LIB
LIB=$1
command -v readelf >/dev/null 2>&1 || { echo "readelf not found"; exit 77; }
needed=$(readelf -d "$LIB" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
status=0
for lib in $needed; do
  case $lib in
    libc.so.*|libstdc++.so.*|libgcc_s.so.*|libm.so.*|libdl.so.*|libpthread.so.*|libcupti.so.13|libzstd.so.1) ;;
    *) echo "unexpected dependency: $lib"; status=1 ;;
  esac
done
readelf -d "$LIB" | grep -q 'RUNPATH\|RPATH' || { echo "no RUNPATH to find libcupti.so.13"; status=1; }
[ $status -eq 0 ] && echo "dependencies ok: $(echo $needed)"
exit $status
