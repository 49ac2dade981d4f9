#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""cuclimb-adam's command line: bad flags fail with exit 2 and a message before any CUDA call."""
import subprocess
import sys

BINARY = sys.argv[1]

BAD = [
    (["--mode", "sideways"], "--mode expects flat or climb"),
    (["--iters", "0"], "--iters must be"),
    (["--frobnicate"], "unknown flag --frobnicate"),
    (["--dims", "64"], "--dims: needs 2"),
    (["--retain-tiny", "2"], "need --mode climb"),
    (["--allocator", "direct", "--no-size-match"], "knobs of --allocator=cubecl"),
    (["--dims", "32768,32768,32768,32768,32768,32768"], "GiB of device memory"),
]

failures = 0
for args, fragment in BAD:
    run = subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=60)
    problems = []
    if run.returncode != 2:
        problems.append(f"exit {run.returncode}, expected 2")
    if fragment not in run.stderr:
        problems.append(f"stderr {run.stderr!r} lacks {fragment!r}")
    if run.stdout:
        problems.append(f"printed {run.stdout!r} before failing")
    if "cuda" in run.stderr.lower():
        problems.append("touched CUDA before validating")
    if problems:
        failures += 1
        print(f"FAIL {args}: {'; '.join(problems)}")

run = subprocess.run([BINARY, "--help"], capture_output=True, text=True, timeout=60)
if run.returncode != 0 or "--mode flat|climb" not in run.stdout:
    failures += 1
    print(f"FAIL --help: exit {run.returncode}, stdout {run.stdout[:200]!r}")

print(f"{len(BAD) + 1 - failures} passed, {failures} failed")
sys.exit(1 if failures else 0)
