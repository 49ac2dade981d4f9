#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/adam_tenths.py: tenths' medians of a synthetic run, st/ref, and its errors."""
import os
import subprocess
import sys
import tempfile

SCRIPT = sys.argv[1]
failures = 0


def check(condition, message):
    global failures
    if not condition:
        failures += 1
        print(f"FAIL {message}")


with tempfile.TemporaryDirectory() as tmp:
    run_path = os.path.join(tmp, "run.txt")
    with open(run_path, "w", encoding="utf-8") as out:
        out.write("# cuclimb-adam mode=flat\n")
        for i in range(200):
            slow = 1.5 if i >= 100 else 1.0  # the machine slows both networks for the second half
            out.write(f"iter={i} st={2.0 * slow:.3f}ms gpu_st=0.500ms loss=0.1 "
                      f"ref={1.0 * slow:.3f}ms wall={5.0 * slow:.2f}ms\n")
        out.write("summary[p0]: st 2.000 -> 3.000 ms (+50.0%)\n")
    run = subprocess.run([sys.executable, SCRIPT, run_path], capture_output=True, text=True,
                         timeout=60)
    check(run.returncode == 0, f"exit {run.returncode}: {run.stderr}")
    rows = {line.split()[0]: [float(v) for v in line.split()[1:]]
            for line in run.stdout.splitlines()[1:]}
    check(rows.get("st") == [2.0] * 5 + [3.0] * 5, f"st row {rows.get('st')}")
    check(rows.get("st/ref") == [2.0] * 10, f"st/ref row {rows.get('st/ref')}")
    check("(200 iterations)" in run.stdout, f"header {run.stdout.splitlines()[:1]}")

    empty = os.path.join(tmp, "empty.txt")
    open(empty, "w", encoding="utf-8").close()
    for args, fragment in (([empty], "no iter= lines"),
                           ([os.path.join(tmp, "missing.txt")], "No such file"),
                           ([], "Usage")):
        run = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True,
                             timeout=60)
        check(run.returncode != 0 and fragment in run.stderr,
              f"{args}: exit {run.returncode}, stderr {run.stderr!r}")

print("ok" if failures == 0 else f"{failures} failed")
sys.exit(1 if failures else 0)
