#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`cuclimb analyze` as a user runs it: exit codes, terminal output, --json, flags, damage."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

CUCLIMB = os.path.abspath(sys.argv.pop(1))
GOLDEN = os.path.abspath(sys.argv.pop(1))


def run(*args, cwd=None):
    return subprocess.run([CUCLIMB, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


class AnalyzeCliTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def golden(self, name):
        return os.path.join(GOLDEN, name)

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def test_terminal_report(self):
        r = run("analyze", self.golden("climb_cubecl.trace"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("range", r.stdout)
        self.assertIn("P/step", r.stdout)
        self.assertIn("climbing", r.stdout)
        self.assertIn("accumulators (state that grows every iteration):", r.stdout)
        self.assertIn("1. device_allocations", r.stdout)
        self.assertIn("verdict: climbing", r.stdout)
        self.assertEqual(r.stderr, "")  # no progress bar when stderr is not a terminal

    def test_json_file_and_stdout(self):
        out = self.path("r.json")
        r = run("analyze", self.golden("flat_control.trace"), "--json", out, "--quiet")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "")
        with open(out) as f:
            report = json.load(f)
        self.assertEqual(report["schema"], "cuclimb.report/1")
        self.assertEqual(report["verdict"], "flat")
        self.assertEqual(report["accumulators"], [])
        r = run("analyze", self.golden("flat_control.trace"), "--json", "-")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["verdict"], "flat")  # JSON only on stdout

    def test_same_trace_same_bytes(self):
        a, b = self.path("a.json"), self.path("b.json")
        for out in (a, b):
            self.assertEqual(run("analyze", self.golden("climb_cubecl.trace"), "--json", out, "--quiet").returncode, 0)
        with open(a, "rb") as fa, open(b, "rb") as fb:
            self.assertEqual(fa.read(), fb.read())

    def test_cli_matches_golden(self):
        shutil.copy(self.golden("climb_cubecl.trace"), self.path("climb_cubecl.trace"))
        r = run("analyze", "climb_cubecl.trace", "--json", "out.json", "--quiet", cwd=self.dir.name)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.path("out.json")) as f, open(self.golden("climb_cubecl.expected.json")) as g:
            self.assertEqual(json.load(f), json.load(g))

    def test_flags_change_thresholds(self):
        out = self.path("r.json")
        r = run("analyze", self.golden("climb_cubecl.trace"), "--json", out, "--quiet", "--alpha", "0.001",
                "--min-climb-pct", "50", "--warmup", "3", "--top", "1", "--iteration", "P/step")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            report = json.load(f)
        self.assertEqual(report["thresholds"]["alpha"], 0.001)
        self.assertEqual(report["thresholds"]["min_climb_pct"], 50)
        self.assertEqual(report["thresholds"]["warmup"], 3)
        self.assertEqual(report["iterations"]["name"], "P/step")
        self.assertTrue(report["iterations"]["user_chosen"])
        self.assertEqual(report["verdict"], "flat")  # nothing climbs 50 %
        self.assertLessEqual(len(report["accumulators"]), 1)

    def test_iteration_name_that_matches_nothing_is_a_usage_error(self):
        out = self.path("r.json")
        r = run("analyze", self.golden("climb_cubecl.trace"), "--json", out, "--iteration", "P/stpe")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--iteration P/stpe: no NVTX range or mark has that name; did you mean 'P/step'?", r.stderr)
        self.assertIn('"P/step" (', r.stderr)  # what the trace has instead
        self.assertFalse(os.path.exists(out))

    def test_several_ranks(self):
        r = run("analyze", self.golden("rank0.trace"), self.golden("rank1.trace"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("2 traces", r.stdout)
        self.assertIn("per rank:", r.stdout)

    def test_truncated_trace_is_reported_and_exits_3(self):
        out = self.path("r.json")
        r = run("analyze", self.golden("truncated.trace"), "--json", out)
        self.assertEqual(r.returncode, 3)
        self.assertIn("[partial]", r.stdout)
        self.assertIn("cut or damaged", r.stderr)
        with open(out) as f:
            self.assertTrue(json.load(f)["partial"])

    def test_usage_errors_exit_2(self):
        for args in (["analyze"], ["analyze", "x.trace", "--alpha", "2"], ["analyze", "x.trace", "--warmup", "soon"],
                     ["analyze", "x.trace", "--no-such-flag"], ["analyze", "x.trace", "--top", "-1"]):
            r = run(*args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertTrue(r.stderr.startswith("cuclimb analyze: "), r.stderr)

    def test_frames_internal_moves_call_site_labels(self):
        def ids(*extra):
            r = run("analyze", self.golden("every_kind.trace"), "--json", "-", *extra)
            self.assertEqual(r.returncode, 0, r.stderr)
            return {a["id"] for a in json.loads(r.stdout)["accumulators"]}
        plain = ids()
        self.assertIn("pinned_allocations:E::new", plain)
        moved = ids("--frames-internal", "adam_sim::E::*", "--frames-internal", "symbol:nothing")
        self.assertNotIn("pinned_allocations:E::new", moved)
        self.assertIn("pinned_allocations:PinnedStorage::alloc <- E::new", moved)
        self.assertEqual(len(plain), len(moved))
        for cmd in (["analyze", self.golden("every_kind.trace")],
                    ["diff", self.golden("flat_control.trace"), self.golden("climb_cubecl.trace")],
                    ["check", self.golden("climb_cubecl.trace")]):
            r = run(*cmd, "--frames-internal", "module:")
            self.assertEqual(r.returncode, 2, cmd)
            self.assertIn("--frames-internal: empty glob", r.stderr)

    def test_symfs_roots_the_recorded_paths(self):
        # The H200 recording names its program by the path it ran from; --symfs looks that path
        # up under a root of our choosing: nothing there, or another build put there.
        trace = self.golden("h200-cubecl-climb-noretain.trace")
        recorded = "/work/main/build-gpu/workloads/cuclimb-adam"

        def notes(root):
            r = run("analyze", trace, "--symfs", root, "--json", "-")
            self.assertEqual(r.returncode, 0, r.stderr)
            return " ".join(json.loads(r.stdout)["notes"])
        empty = self.path("empty-root")
        os.makedirs(empty)
        self.assertIn("is not on this machine", notes(empty))
        other = self.path("other-root")
        os.makedirs(os.path.dirname(other + recorded))
        shutil.copy(CUCLIMB, other + recorded)  # an ELF file, but not the recorded build
        self.assertIn("is another build than the recorded one", notes(other + "/"))
        for cmd in (["analyze", trace],
                    ["diff", self.golden("flat_control.trace"), self.golden("climb_cubecl.trace")],
                    ["check", self.golden("climb_cubecl.trace")]):
            r = run(*cmd, "--symfs", self.path("no-such-dir"))
            self.assertEqual(r.returncode, 2, cmd)
            self.assertIn("--symfs:", r.stderr)

    def test_bad_input_exits_3(self):
        r = run("analyze", self.path("missing.trace"))
        self.assertEqual(r.returncode, 3)
        self.assertIn("missing.trace", r.stderr)
        junk = self.path("junk.trace")
        with open(junk, "wb") as f:
            f.write(b"\x00\x01not a trace at all")
        self.assertEqual(run("analyze", junk).returncode, 3)

    def test_unwritable_output_exits_4(self):
        r = run("analyze", self.golden("flat_control.trace"), "--json", "/nonexistent-dir/r.json")
        self.assertEqual(r.returncode, 4, r.stderr)

    def test_reports_match_the_json_schema(self):
        try:
            import jsonschema
        except ImportError:
            self.skipTest("python3-jsonschema is not installed")
        schema_path = os.path.join(GOLDEN, "..", "..", "docs", "report.schema.json")
        with open(schema_path) as f:
            schema = json.load(f)
        for name in sorted(os.listdir(GOLDEN)):
            if name.endswith(".expected.json"):
                with open(os.path.join(GOLDEN, name)) as f:
                    jsonschema.validate(json.load(f), schema)

    def test_jobs_do_not_change_the_report(self):
        traces = [self.golden(n) for n in ("ddp_rank0.trace", "ddp_rank1.trace", "h200-cubecl-climb.trace")]
        reports = []
        for jobs in ("1", "2", "5"):
            out = self.path("jobs%s.json" % jobs)
            r = run("analyze", *traces, "--jobs", jobs, "--json", out, "--quiet")
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out, "rb") as f:
                reports.append(f.read())
        self.assertEqual(reports[1], reports[0])
        self.assertEqual(reports[2], reports[0])
        for bad in ("0", "-3", "many"):
            r = run("analyze", traces[0], "--jobs", bad)
            self.assertEqual(r.returncode, 2, bad)
            self.assertIn("--jobs", r.stderr)

    def test_help(self):
        r = run("analyze", "--help")
        self.assertEqual(r.returncode, 0)
        for flag in ("--iteration", "--json", "--warmup", "--alpha", "--min-climb-pct", "--top", "--jobs", "--quiet"):
            self.assertIn(flag, r.stdout)
        self.assertIn("analyze", run("--help").stdout)


if __name__ == "__main__":
    unittest.main()
