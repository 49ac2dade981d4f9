# SPDX-License-Identifier: Apache-2.0
"""`python -m cuclimb ARGS` and the `cuclimb` console script: replace this process with the
bundled cuclimb executable, so exit status, signals and the terminal are the command's own."""
import os
import sys

from cuclimb import binary


def main():
    exe = binary()
    if not os.access(exe, os.X_OK):
        sys.stderr.write(f"cuclimb: the bundled executable {exe} is missing or not executable; "
                         "reinstall the cuclimb package\n")
        return 127
    os.execv(exe, [exe, *sys.argv[1:]])
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main())
