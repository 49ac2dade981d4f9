#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Outputs never destroy what they do not own (issue #14): an output equal to an input is
refused, a final symbolic link to a file is not followed, files are replaced by rename (never
truncated in place), devices and pipes are written directly, new traces are 0600.

usage: output_safety_test.py CUCLIMB TRACE
"""
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

CUCLIMB = os.path.abspath(sys.argv.pop(1))
TRACE = os.path.abspath(sys.argv.pop(1))


def run(*args, **kw):
    return subprocess.run([CUCLIMB, *args], capture_output=True, text=True, timeout=120, **kw)


class OutputSafety(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.trace = self.path("run.trace")
        shutil.copy(TRACE, self.trace)
        os.chmod(self.trace, 0o600)
        with open(self.trace, "rb") as f:
            self.trace_bytes = f.read()

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def assertTraceIntact(self):
        with open(self.trace, "rb") as f:
            self.assertEqual(f.read(), self.trace_bytes, "the input trace was changed")

    def assertNoTemporaries(self):
        left = [n for n in os.listdir(self.dir.name) if ".cuclimb-" in n]
        self.assertEqual(left, [], "temporary files left behind")

    def test_output_equal_to_input_is_refused(self):
        os.link(self.trace, self.path("hard.trace"))
        for args in (["convert", self.trace, self.trace],
                     ["convert", self.trace, self.path("hard.trace")],
                     ["convert", self.trace, os.path.join(self.dir.name, ".", "run.trace")],
                     ["export", self.trace, "--perfetto", self.trace],
                     ["analyze", self.trace, "--json", self.trace],
                     ["analyze", self.trace, "--html", self.trace],
                     ["diff", self.trace, self.trace, "--json", self.trace]):
            r = run(*args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn("is the input", r.stderr)
            self.assertTraceIntact()
        self.assertNoTemporaries()

    def test_final_symbolic_link_to_a_file_is_not_followed(self):
        victim = self.path("victim.txt")
        with open(victim, "w") as f:
            f.write("keep me\n")
        os.symlink(victim, self.path("link.json"))
        os.symlink(self.path("missing"), self.path("dangling.json"))
        for out in ("link.json", "dangling.json"):
            for args in (["analyze", self.trace, "--json", self.path(out), "--quiet"],
                         ["convert", self.trace, self.path(out)],
                         ["export", self.trace, "--perfetto", self.path(out), "--quiet"]):
                r = run(*args)
                self.assertEqual(r.returncode, 4, (args, r.stderr))
                self.assertIn("symbolic link", r.stderr)
        with open(victim) as f:
            self.assertEqual(f.read(), "keep me\n")
        self.assertFalse(os.path.exists(self.path("missing")))
        self.assertTrue(os.path.islink(self.path("link.json")))
        # Naming the target writes there.
        r = run("analyze", self.trace, "--json", victim, "--quiet")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(victim) as f:
            self.assertIn('"schema"', f.read())
        self.assertNoTemporaries()

    def test_devices_and_pipes_are_written_directly(self):
        r = run("analyze", self.trace, "--json", "/dev/null", "--quiet")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(stat.S_ISCHR(os.stat("/dev/null").st_mode))
        r = run("analyze", self.trace, "--json", "/dev/stdout", "--quiet")  # a link to a pipe
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('"schema"', r.stdout)
        fifo = self.path("fifo")
        os.mkfifo(fifo)
        with open(self.path("from_fifo"), "wb") as sink:
            reader = subprocess.Popen(["cat", fifo], stdout=sink)
            r = run("convert", self.trace, fifo, "--to", "jsonl")
            reader.wait(timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.path("from_fifo"), "rb") as f:
            self.assertTrue(f.read().startswith(b'{"ev":"header"'))
        if os.path.exists("/dev/full"):
            r = run("convert", self.trace, "/dev/full", "--to", "jsonl")
            self.assertEqual(r.returncode, 4, r.stderr)

    def test_modes_new_traces_0600_replaced_files_keep_theirs(self):
        out = self.path("out.jsonl")
        self.assertEqual(run("convert", self.trace, out).returncode, 0)
        self.assertEqual(stat.S_IMODE(os.stat(out).st_mode), 0o600)
        back = self.path("back.trace")
        self.assertEqual(run("convert", out, back).returncode, 0)
        self.assertEqual(stat.S_IMODE(os.stat(back).st_mode), 0o600)
        perfetto = self.path("p.json")
        self.assertEqual(run("export", self.trace, "--perfetto", perfetto, "--quiet").returncode, 0)
        self.assertEqual(stat.S_IMODE(os.stat(perfetto).st_mode), 0o600)
        report = self.path("r.json")
        old = os.umask(0o022)
        try:
            self.assertEqual(run("analyze", self.trace, "--json", report, "--quiet").returncode, 0)
        finally:
            os.umask(old)
        self.assertEqual(stat.S_IMODE(os.stat(report).st_mode), 0o644)
        os.chmod(report, 0o640)
        self.assertEqual(run("analyze", self.trace, "--json", report, "--quiet").returncode, 0)
        self.assertEqual(stat.S_IMODE(os.stat(report).st_mode), 0o640)
        self.assertNoTemporaries()

    def test_a_file_is_replaced_never_truncated_in_place(self):
        report = self.path("r.json")
        with open(report, "w") as f:
            f.write("old report\n")
        held = open(report)  # a reader of the old file keeps reading it
        self.assertEqual(run("analyze", self.trace, "--json", report, "--quiet").returncode, 0)
        self.assertEqual(held.read(), "old report\n")
        held.close()
        # A failing command leaves the old output as it was.
        with open(report, "w") as f:
            f.write("old report\n")
        bad = self.path("bad.trace")
        with open(bad, "wb") as f:
            f.write(b"not a trace at all")
        r = run("analyze", bad, "--json", report, "--quiet")
        self.assertEqual(r.returncode, 3, r.stderr)
        with open(report) as f:
            self.assertEqual(f.read(), "old report\n")
        self.assertNoTemporaries()

    def test_unwritable_or_missing_directory_fails_before_the_analysis(self):
        for out in (self.path("no/such/dir/r.json"), self.dir.name):
            r = run("analyze", self.trace, "--json", out, "--quiet")
            self.assertEqual(r.returncode, 4, r.stderr)
        self.assertTraceIntact()


if __name__ == "__main__":
    unittest.main(verbosity=2)
