#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Peak memory and CPU time of the analyzer on the scale inputs of issue #14 (the shapes of
tests/hostile/data/make_scale_inputs.py), at two sizes each, so linearity shows in the table.
Prints figures, asserts nothing.

usage: scale_inputs_bench.py CUCLIMB [SCALE]   (SCALE 1.0 = the issue's sizes)"""
import os
import subprocess
import sys
import tempfile

CUCLIMB = sys.argv[1]
SCALE = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
HEADER = ('{"ev":"header","ts":0,"format":"1.0","producer":"t","clock":"synthetic",'
          '"base_clock_ns":0,"base_realtime_ns":0}\n')
SHAPES = {  # name: (events at scale 1, line generator)
    "threads": (200000, lambda i: '{"ev":"push","ts":%d,"tid":%d,"name":"r"}\n' % (2 * i, i + 1)),
    "open ranges": (10**6, lambda i: '{"ev":"push","ts":%d,"tid":1,"name":"n%d"}\n' % (i, i)),
    "domains": (10**5, lambda i: '{"ev":"push","ts":%d,"tid":1,"name":"r","domain":"d%d"}\n'
                % (i, i)),
    "kernels": (10**6, lambda i: '{"ev":"launch","ts":%d,"dur":5,"tid":1,"kernel":"k%d",'
                '"stream":"0x10"}\n' % (i * 10, i)),
}


def measure(args):
    p = subprocess.Popen([CUCLIMB, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    return os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def main():
    print(f"{'input':<12} {'events':>9} {'command':<8} {'exit':>4} {'cpu s':>7} {'peak MB':>8}")
    with tempfile.TemporaryDirectory() as d:
        for name, (full, line) in SHAPES.items():
            for fraction in (0.5, 1.0):
                n = max(1, int(full * SCALE * fraction))
                path = os.path.join(d, "input.jsonl")
                with open(path, "w") as f:
                    f.write(HEADER)
                    f.writelines(line(i) for i in range(n))
                for command in (["analyze", path, "--json", "/dev/null", "--quiet"],
                                ["check", path, "--quiet"]):
                    code, cpu, rss_kb = measure(command)
                    print(f"{name:<12} {n:>9} {command[0]:<8} {code:>4} {cpu:>7.2f} "
                          f"{rss_kb / 1024:>8.0f}", flush=True)


if __name__ == "__main__":
    main()
