# SPDX-License-Identifier: Apache-2.0
"""cuclimb: finds the state that makes a CUDA program slower, or fatter, the longer it runs.

The wheel carries the `cuclimb` command and `libcuclimb.so` in this package's directory; the
`cuclimb` console script and `python -m cuclimb` run that command (see `cuclimb --help`).
"""
import os

__all__ = ["binary", "library"]


def binary():
    """Path of the bundled `cuclimb` executable."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "cuclimb")


def library():
    """Path of the bundled libcuclimb.so (what `cuclimb record` injects)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "libcuclimb.so")
