#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Medians of cuclimb-adam's per-iteration figures over each tenth of a run.

Usage: scripts/adam_tenths.py RUN.txt [RUN.txt ...]   (cuclimb-adam's text output)

One row per figure (st, gpu_st, ref, st/ref, wall): a level shift shows as a step between
tenths, a climb as a slope; with --reference, whether st/ref keeps a step tells a machine's
drift (shared by the twin) from the allocator's own growth.
"""
import re
import statistics
import sys

FIELDS = {
    "st": re.compile(r" st=([\d.]+)ms"),
    "gpu_st": re.compile(r" gpu_st=([\d.]+)ms"),
    "ref": re.compile(r" ref=([\d.]+)ms"),
    "wall": re.compile(r" wall=([\d.]+)ms"),
}


def read(path):
    series = {name: [] for name in FIELDS}
    with open(path, encoding="utf-8", errors="replace") as text:
        for line in text:
            if not line.startswith("iter="):
                continue
            for name, pattern in FIELDS.items():
                match = pattern.search(line)
                if match:
                    series[name].append(float(match.group(1)))
    if series["ref"] and len(series["ref"]) == len(series["st"]):
        series["st/ref"] = [s / r if r > 0 else 0.0 for s, r in zip(series["st"], series["ref"])]
    return {name: values for name, values in series.items() if values}


def tenths(values):
    size = max(1, len(values) // 10)
    return [statistics.median(values[i * size:(i + 1) * size]) for i in range(len(values) // size)][:10]


def main(paths):
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    status = 0
    for path in paths:
        try:
            series = read(path)
        except OSError as error:
            print(f"{path}: {error.strerror}", file=sys.stderr)
            status = 1
            continue
        if not series:
            print(f"{path}: no iter= lines", file=sys.stderr)
            status = 1
            continue
        print(f"{path} ({len(series['st'])} iterations)")
        for name, values in series.items():
            print(f"  {name:7s}" + " ".join(f"{v:7.3f}" for v in tenths(values)))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
