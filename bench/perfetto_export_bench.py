#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Size and CPU time of `cuclimb export` in its three outputs (Perfetto protobuf, gzipped Chrome
JSON, plain Chrome JSON) on the bundled 1500-iteration H200 recordings, against `cuclimb analyze`
on the same trace (the export runs the analyzer's segmentation first). CPU is user + system of
the child, the median of REPEAT runs. Prints figures, asserts nothing.

usage: perfetto_export_bench.py CUCLIMB GOLDEN_DIR [REPEAT]"""
import os
import statistics
import subprocess
import sys
import tempfile

CUCLIMB, GOLDEN = sys.argv[1], sys.argv[2]
REPEAT = int(sys.argv[3]) if len(sys.argv) > 3 else 3
TRACES = ["h200-cubecl-climb.trace", "h200-cubecl-climb-noretain.trace", "h200-cubecl-flat.trace"]
OUTPUTS = [("protobuf", "out.pftrace"), ("JSON gzip", "out.json.gz"), ("JSON", "out.json")]


def measure(args):
    p = subprocess.Popen([CUCLIMB, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"cuclimb {' '.join(args)} failed")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def median_of(args):
    runs = [measure(args) for _ in range(REPEAT)]
    return statistics.median(r[0] for r in runs), max(r[1] for r in runs)


def events_in(trace):
    out = subprocess.run([CUCLIMB, "info", trace], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("events"):
            return int(line.split()[1])
    return 0


def main():
    print(f"load average {os.getloadavg()[0]:.2f}, median of {REPEAT}")
    print(f"{'trace':<34} {'output':<10} {'MB':>8} {'B/event':>8} {'cpu s':>7} "
          f"{'export s':>8} {'peak MB':>8}")
    with tempfile.TemporaryDirectory() as d:
        for name in TRACES:
            trace = os.path.join(GOLDEN, name)
            events = events_in(trace)
            analyze_cpu, analyze_peak = median_of(["analyze", trace, "--quiet"])
            print(f"{name:<34} {'(analyze)':<10} {os.path.getsize(trace) / 1e6:8.1f} "
                  f"{os.path.getsize(trace) / events:8.1f} {analyze_cpu:7.2f} {'':>8} "
                  f"{analyze_peak:8.0f}")
            for label, out_name in OUTPUTS:
                out = os.path.join(d, out_name)
                cpu, peak = median_of(["export", trace, "--perfetto", out, "--quiet"])
                size = os.path.getsize(out)
                print(f"{'':<34} {label:<10} {size / 1e6:8.1f} {size / events:8.1f} {cpu:7.2f} "
                      f"{cpu - analyze_cpu:8.2f} {peak:8.0f}")
                os.unlink(out)


if __name__ == "__main__":
    main()
