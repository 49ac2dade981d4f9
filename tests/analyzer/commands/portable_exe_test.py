#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`cuclimb` is carried to machines without Debian's libraries (the GPU machine runs Ubuntu):
it may need only the C and C++ runtimes. Abseil, zstd, elfutils' libdw/libelf with their
compression libraries and libiberty are linked statically (meson.build)."""
import shutil
import subprocess
import sys

ALLOWED = {"libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2"}


def main(exe):
    readelf = shutil.which("readelf")
    if readelf is None:
        print("readelf not found")
        return 77
    out = subprocess.run([readelf, "-d", exe], capture_output=True, text=True, check=True).stdout
    needed = {line.split("[", 1)[1].split("]", 1)[0] for line in out.splitlines() if "(NEEDED)" in line}
    extra = sorted(needed - ALLOWED)
    if extra:
        print(f"{exe} needs {', '.join(extra)}; link them statically")
        return 1
    print("NEEDED:", ", ".join(sorted(needed)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
