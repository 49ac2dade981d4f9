#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/main-job.sh on a machine without a GPU: it analyzes the trace it is given (a synthetic
stand-in for the bundled H200 trace) and writes the HTML and JSON reports; it analyzes the
bundled trace by default once that exists; it refuses bad usage.

Set-up and build are skipped here (CUCLIMB_SKIP_SETUP=1, CUCLIMB=the built binary): the test
suite itself runs on a machine that scripts/test.sh set up.

Usage: main_job_test.py SCRIPT CUCLIMB MAKE_REPORT_TRACES
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT, CUCLIMB, MAKE_TRACES = (os.path.abspath(p) for p in sys.argv[1:4])
del sys.argv[1:4]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(SCRIPT)))
BUNDLED = os.path.join(ROOT, "tests", "golden", "h200-cubecl-climb.trace")
TRACES = tempfile.TemporaryDirectory(prefix="cuclimb-main-job-")


def setUpModule():
    subprocess.run([MAKE_TRACES, TRACES.name, "--iterations", "300"], check=True, timeout=120)


def tearDownModule():
    TRACES.cleanup()


def main_job(*args, cwd=None):
    env = dict(os.environ, CUCLIMB_SKIP_SETUP="1", CUCLIMB=CUCLIMB)
    return subprocess.run(["bash", SCRIPT, *args], capture_output=True, text=True, timeout=300, env=env, cwd=cwd)


class MainJobTest(unittest.TestCase):
    def setUp(self):
        self.out = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.out.cleanup()

    def check_reports(self, r, verdict):
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        html = os.path.join(self.out.name, "cuclimb-report.html")
        report = os.path.join(self.out.name, "cuclimb-report.json")
        with open(report) as f:
            self.assertEqual(json.load(f)["verdict"], verdict)
        with open(html) as f:
            page = f.read()
        self.assertIn('"schema":"cuclimb.report/1"', page)
        self.assertLess(len(page), 10 << 20)
        self.assertIn(f"verdict: {verdict}", r.stdout)  # the terminal report
        self.assertIn("cuclimb-report.html", r.stdout)

    def test_given_trace_without_gpu(self):
        r = main_job("--cpu", "--trace", os.path.join(TRACES.name, "climb.trace"), "--out", self.out.name)
        self.check_reports(r, "climbing")
        self.assertIn("analyzing", r.stderr)

    def test_default_output_directory_is_the_current_one(self):
        r = main_job("--cpu", "--trace", os.path.join(TRACES.name, "flat.trace"), cwd=self.out.name)
        self.check_reports(r, "flat")

    @unittest.skipUnless(os.path.exists(BUNDLED), "the bundled H200 trace is not checked in yet")
    def test_bundled_trace_by_default(self):
        r = main_job("--cpu", "--out", self.out.name)
        self.assertIn("bundled trace recorded on an H200", r.stderr)
        self.check_reports(r, "climbing")
        self.assertLess(os.path.getsize(BUNDLED), 8 << 20, "the bundled trace must stay small")

    def test_usage(self):
        self.assertEqual(main_job("--bogus").returncode, 2)
        self.assertEqual(main_job("--iters", "x").returncode, 2)
        r = main_job("--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("main job", r.stdout)

    def test_missing_trace(self):
        r = main_job("--cpu", "--trace", os.path.join(TRACES.name, "missing.trace"), "--out", self.out.name)
        self.assertEqual(r.returncode, 3, r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
