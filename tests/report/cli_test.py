#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`cuclimb analyze --html`, `diff`, `export` and `check` as a user runs them: files, exit codes,
JSON verdicts, the page's self-containment, and the progress bar only on a terminal.

Usage: cli_test.py CUCLIMB MAKE_REPORT_TRACES
"""
import base64
import gzip
import hashlib
import json
import os
import pty
import re
import subprocess
import sys
import tempfile
import unittest

CUCLIMB = sys.argv.pop(1)
MAKE_TRACES = sys.argv.pop(1)
TRACES = tempfile.TemporaryDirectory(prefix="cuclimb-cli-")


def setUpModule():
    subprocess.run([MAKE_TRACES, TRACES.name, "--iterations", "200"], check=True, timeout=120)


def tearDownModule():
    TRACES.cleanup()


def trace(name):
    return os.path.join(TRACES.name, name)


def slurp(path, mode="r"):
    with open(path, mode) as f:
        return f.read()


def run(*args, **kw):
    return subprocess.run([CUCLIMB, *args], capture_output=True, text=True, timeout=120, **kw)


class Base(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir.name, name)


class HtmlTest(Base):
    def test_page_is_self_contained_and_deterministic(self):
        a, b = self.path("a.html"), self.path("b.html")
        for out in (a, b):
            r = run("analyze", trace("hostile.trace"), "--html", out, "--quiet")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, "")
        page = slurp(a, "rb")
        self.assertEqual(page, slurp(b, "rb"))
        text = page.decode("utf-8")
        # No network: nothing is loaded from anywhere.
        self.assertIsNone(re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text))
        self.assertNotIn("@import", text)
        self.assertIn("default-src 'none'", text)
        # The script's hash in the Content-Security-Policy is the script's.
        scripts = re.findall(r"<script>(.*?)</script>", text, re.S)
        self.assertEqual(len(scripts), 1)
        digest = base64.b64encode(hashlib.sha256(scripts[0].encode("utf-8")).digest()).decode()
        self.assertIn(f"script-src 'sha256-{digest}'", text)
        self.assertEqual(text.count("<script"), 2)

    def test_html_and_json_together_and_text_on_stdout(self):
        r = run("analyze", trace("climb.trace"), "--html", self.path("r.html"), "--json", self.path("r.json"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("verdict: climbing", r.stdout)
        self.assertEqual(json.loads(slurp(self.path("r.json")))["verdict"], "climbing")
        self.assertIn('"schema":"cuclimb.report/1"', slurp(self.path("r.html")))
        self.assertIn("--html FILE", run("analyze", "--help").stdout)

    def test_unwritable_output_is_exit_4(self):
        r = run("analyze", trace("flat.trace"), "--html", "/nonexistent-dir/r.html", "--quiet")
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertIn("/nonexistent-dir/r.html", r.stderr)


class ExportTest(Base):
    def load(self, out):
        with open(out) as f:
            return json.load(f)

    def test_whole_trace(self):
        out = self.path("t.json")
        r = run("export", trace("climb.trace"), "--perfetto", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("ui.perfetto.dev", r.stdout)
        events = self.load(out)["traceEvents"]
        phases = {e["ph"] for e in events}
        self.assertTrue({"X", "M", "C"} <= phases, phases)
        self.assertEqual(sum(1 for e in events if e.get("cat") == "iteration"), 200)

    def test_gzip_output_is_the_same_json(self):
        plain, packed = self.path("t.json"), self.path("t.json.gz")
        for out in (plain, packed):
            r = run("export", trace("climb.trace"), "--perfetto", out, "--quiet")
            self.assertEqual(r.returncode, 0, r.stderr)
        with open(plain, "rb") as f:
            text = f.read()
        with gzip.open(packed, "rb") as f:
            self.assertEqual(f.read(), text)
        self.assertLess(os.path.getsize(packed) * 5, len(text))

    def test_iteration_window(self):
        out = self.path("w.json")
        r = run("export", trace("climb.trace"), "--perfetto", out, "--iterations", "10:20")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = self.load(out)
        self.assertEqual(doc["otherData"]["iterations"], "10:20")
        names = sorted(e["name"] for e in doc["traceEvents"] if e.get("cat") == "iteration")
        self.assertEqual(names, sorted(f"iteration {i}" for i in range(10, 20)))
        r = run("export", trace("climb.trace"), "--perfetto", out, "--iterations", "195:")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.load(out)["otherData"]["iterations"], "195:200")
        r = run("export", trace("climb.trace"), "--perfetto", out, "--iterations", "7")
        self.assertEqual(self.load(out)["otherData"]["iterations"], "7:8")

    def test_errors(self):
        out = self.path("e.json")
        for bad in ("20:10", "abc", "1:2:3", "-1:4"):
            r = run("export", trace("climb.trace"), "--perfetto", out, "--iterations", bad)
            self.assertEqual(r.returncode, 2, (bad, r.stderr))
        r = run("export", trace("climb.trace"), "--perfetto", out, "--iterations", "150:900")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("200 iterations", r.stderr)
        self.assertEqual(run("export", trace("climb.trace")).returncode, 2)
        self.assertEqual(run("export", self.path("missing.trace"), "--perfetto", out).returncode, 3)

    def test_stdout(self):
        r = run("export", trace("flat.trace"), "--perfetto", "-", "--iterations", "0:2",
                "--format", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("traceEvents", json.loads(r.stdout))


class DiffTest(Base):
    def test_flat_vs_climb(self):
        r = run("diff", trace("flat.trace"), trace("climb.trace"), "--json", self.path("d.json"),
                "--html", self.path("d.html"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("The runs diverge at iteration", r.stdout)
        self.assertIn("verdict: diverged", r.stdout)
        d = json.loads(slurp(self.path("d.json")))
        self.assertEqual(d["schema"], "cuclimb.diff/1")
        self.assertEqual(d["verdict"], "diverged")
        self.assertEqual(d["first_divergence"]["iteration"], 0)
        self.assertTrue(any(a["status"] == "only_other" for a in d["accumulators"]))
        self.assertIn('"page":"diff"', slurp(self.path("d.html")))
        r = run("diff", trace("flat.trace"), trace("climb.trace"), "--fail-on-divergence", "--quiet")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout, "")

    def test_two_flat_runs_are_the_same(self):
        r = run("diff", trace("flat.trace"), trace("flat2.trace"), "--json", "-", "--fail-on-divergence")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(json.loads(r.stdout)["verdict"], "same")

    def test_usage(self):
        self.assertEqual(run("diff", trace("flat.trace")).returncode, 2)
        self.assertEqual(run("diff", trace("flat.trace"), trace("flat.trace"), "--persist", "x").returncode, 2)
        self.assertEqual(run("diff", "--help").returncode, 0)


class CheckTest(Base):
    def check(self, *args):
        r = run("check", *args, "--json", "-")
        return r, json.loads(r.stdout) if r.stdout else None

    def test_verdicts_and_exit_codes(self):
        r, v = self.check(trace("climb.trace"))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertFalse(v["pass"])
        self.assertIn("exceeded", r.stderr)
        r, v = self.check(trace("flat.trace"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(v["pass"])
        r, v = self.check(trace("climb.trace"), "--max-growth", "device_allocations=3", "--max-growth", "live_bytes=2KiB")
        self.assertEqual(r.returncode, 0, r.stdout)
        r, v = self.check(trace("climb.trace"), "--max-growth", "device_allocations=1")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(v["checks"][0]["subject"].split(":")[0], "device_allocations")
        r, v = self.check(trace("climb.trace"), "--max-climb", "5", "--range", "E/step")
        self.assertEqual(r.returncode, 0, r.stdout)

    def test_usage_and_bad_traces(self):
        self.assertEqual(run("check", trace("flat.trace"), "--max-growth", "nonsense=1").returncode, 2)
        self.assertEqual(run("check", trace("flat.trace"), "--max-climb", "x").returncode, 2)
        self.assertEqual(run("check").returncode, 2)
        self.assertEqual(run("check", self.path("missing.trace")).returncode, 3)
        data = slurp(trace("flat.trace"), "rb")
        cut = self.path("cut.trace")
        with open(cut, "wb") as f:
            f.write(data[: len(data) * 2 // 3])
        r, v = self.check(cut)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertTrue(v["partial"])
        r, v = self.check(cut, "--allow-partial")
        self.assertEqual(r.returncode, 0, r.stderr)


class ProgressTest(Base):
    def test_only_on_a_terminal(self):
        r = run("check", trace("flat.trace"))
        self.assertEqual(r.stderr, "")
        primary, secondary = pty.openpty()
        try:
            p = subprocess.run([CUCLIMB, "check", trace("flat.trace"), "--json", "-"], stdout=subprocess.PIPE,
                               stderr=secondary, timeout=120)
            os.close(secondary)
            secondary = -1
            err = b""
            while True:
                try:
                    chunk = os.read(primary, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                err += chunk
        finally:
            if secondary >= 0:
                os.close(secondary)
            os.close(primary)
        self.assertEqual(p.returncode, 0)
        self.assertIn(b"cuclimb check: trace 1/1 [", err)
        self.assertIn(b"\r", err)
        json.loads(p.stdout)  # stdout stays clean JSON


if __name__ == "__main__":
    unittest.main(verbosity=2)
