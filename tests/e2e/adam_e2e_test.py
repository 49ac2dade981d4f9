#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End to end on a GPU: record cuclimb-adam under `cuclimb record`, analyze, check the verdicts.

The climbing run (cubecl model, an ephemeral network per iteration retaining two tiny tensors per
cycle) must be reported as climbing, with an allocation accumulator that explains the persistent
network's optimizer step; the flat run must not be. Exits 77 (skipped) without a GPU.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

CUCLIMB, ADAM = sys.argv[1], sys.argv[2]
del sys.argv[1:3]
ITERS = os.environ.get("CUCLIMB_E2E_ITERS", "400")
ALLOCATION_KINDS = {"device_allocations", "pinned_allocations", "managed_allocations",
                    "vmm_mappings", "pool_reserved", "nvtx_regions"}


def have_gpu():
    if os.path.exists("/dev/nvidia0"):
        return True
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def record_and_analyze(tmp, name, adam_args):
    trace = os.path.join(tmp, name + ".trace")
    rec = subprocess.run([CUCLIMB, "record", "--output", trace, "--", ADAM, *adam_args],
                         capture_output=True, text=True, timeout=600)
    if rec.returncode != 0:
        raise AssertionError(f"record {name} failed ({rec.returncode}):\n{rec.stderr[-3000:]}")
    report = os.path.join(tmp, name + ".json")
    ana = subprocess.run([CUCLIMB, "analyze", trace, "--json", report],
                         capture_output=True, text=True, timeout=600)
    if ana.returncode != 0:
        raise AssertionError(f"analyze {name} failed ({ana.returncode}):\n{ana.stderr[-3000:]}")
    print(ana.stdout)
    with open(report) as f:
        return json.load(f), rec.stdout


STEP = "p0/step"  # the persistent network's optimizer step; reported as "<domain>::p0/step"


def step_name(report):
    for r in report["ranges"]:
        if r["name"] == STEP or r["name"].endswith("::" + STEP):
            return r["name"]
    raise AssertionError("no p0/step range in " + str([r["name"] for r in report["ranges"]]))


def step_range(report):
    name = step_name(report)
    return next(r for r in report["ranges"] if r["name"] == name)


class AdamEndToEnd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_climbing_run_names_an_allocation_accumulator(self):
        report, _ = record_and_analyze(self.tmp.name, "climb", [
            "--allocator", "cubecl", "--mode", "climb", "--retain-tiny", "2", "--iters", ITERS])
        self.assertGreaterEqual(report["iterations"]["count"], int(ITERS) - 2)
        self.assertEqual(report["verdict"], "climbing")
        self.assertTrue(step_range(report)["climbing"], step_range(report))
        step = step_name(report)
        explaining = [a for a in report["accumulators"]
                      if a["kind"] in ALLOCATION_KINDS and step in a["explains"]]
        self.assertTrue(explaining, json.dumps(report["accumulators"], indent=1)[:4000])
        self.assertGreater(explaining[0]["growth_per_iter"], 0.5)

    def test_flat_run_has_no_accumulator_explaining_the_step(self):
        report, _ = record_and_analyze(self.tmp.name, "flat", [
            "--allocator", "cubecl", "--mode", "flat", "--iters", ITERS])
        self.assertGreaterEqual(report["iterations"]["count"], int(ITERS) - 2)
        self.assertEqual(report["verdict"], "flat")
        self.assertFalse(step_range(report)["climbing"], step_range(report))
        explaining = [a for a in report["accumulators"] if step_name(report) in a["explains"]]
        self.assertFalse(explaining, json.dumps(explaining, indent=1)[:4000])


if __name__ == "__main__":
    if not have_gpu():
        print("no GPU visible: skipped")
        sys.exit(77)
    unittest.main()
