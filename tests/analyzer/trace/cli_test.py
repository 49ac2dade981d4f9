#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`cuclimb info` and `cuclimb convert` as a user runs them: exit codes, messages, round trips."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

CUCLIMB = sys.argv.pop(1)

EXAMPLE = """{"ev":"process","ts":0,"pid":4242,"cmd":"train --mode climb"}
{"ev":"push","ts":50,"tid":1,"name":"iter"}
{"ev":"alloc","ts":60,"tid":1,"api":"cuMemAllocAsync","kind":"pool","addr":"0x7f0000000000","size":512,"stream":"0x10","device":0,"stack":["0x401000","main"]}
{"ev":"pop","ts":70,"tid":1}
{"ev":"drops","ts":80,"count":3,"reason":"ring_full"}
{"ev":"trailer","ts":90,"events":5,"dropped":3}
"""


def run(*args):
    return subprocess.run([CUCLIMB, *args], capture_output=True, text=True, timeout=60)


class CliTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.jsonl = os.path.join(self.dir.name, "in.jsonl")
        with open(self.jsonl, "w") as f:
            f.write(EXAMPLE)

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def test_convert_both_ways_is_lossless(self):
        binary = self.path("a.trace")
        back = self.path("b.jsonl")
        self.assertEqual(run("convert", self.jsonl, binary).returncode, 0)
        with open(binary, "rb") as f:
            self.assertEqual(f.read(8), b"CUCLIMB\0")
        self.assertEqual(run("convert", binary, back).returncode, 0)
        with open(back) as f:
            lines = f.read().splitlines()
        self.assertEqual(json.loads(lines[0])["ev"], "header")
        self.assertEqual("\n".join(lines[1:]) + "\n", EXAMPLE)

    def test_form_is_decided_by_content_not_name(self):
        misnamed = self.path("actually-binary.jsonl")
        self.assertEqual(run("convert", self.jsonl, misnamed, "--to", "binary").returncode, 0)
        r = run("info", misnamed, "--json", "-")
        self.assertEqual(r.returncode, 0, r.stderr)
        info = json.loads(r.stdout)
        self.assertEqual(info["form"], "binary")
        self.assertEqual(info["status"], "complete")
        self.assertEqual(info["counts"], {"process": 1, "push": 1, "alloc": 1, "pop": 1, "drops": 1})
        self.assertEqual(info["events"], 5)
        self.assertEqual(info["dropped"], 3)
        self.assertEqual(info["drops_by_reason"], {"ring_full": 3})
        self.assertEqual(info["process"]["pid"], 4242)

    def test_info_text_names_truncation(self):
        binary = self.path("a.trace")
        run("convert", self.jsonl, binary)
        with open(binary, "rb") as f:
            data = f.read()
        cut = self.path("cut.trace")
        with open(cut, "wb") as f:
            f.write(data[: len(data) - 10])
        r = run("info", cut)
        self.assertEqual(r.returncode, 3)
        self.assertIn("truncated", r.stdout)
        self.assertIn("byte offset", r.stdout)

    def test_convert_of_damaged_input_keeps_what_it_can_and_says_so(self):
        broken = self.path("broken.jsonl")
        with open(broken, "w") as f:
            f.write(EXAMPLE.splitlines()[0] + "\n" + '{"ev":"push","ts":1,"tid":1,"name":"x","oops":1}\n')
        out = self.path("out.trace")
        r = run("convert", broken, out)
        self.assertEqual(r.returncode, 3)
        self.assertIn("line 2", r.stderr)
        self.assertIn("unknown field 'oops'", r.stderr)
        r = run("info", out, "--json", "-")
        self.assertEqual(json.loads(r.stdout)["events"], 1)

    def test_bad_usage_exits_2_with_one_line(self):
        for args in (["info"], ["info", "--bogus", "x"], ["convert", "only-one"],
                     ["convert", "a", "b", "--to", "yaml"], ["convert", "a", "b", "--level", "99"],
                     ["frobnicate"], []):
            r = run(*args)
            self.assertEqual(r.returncode, 2, args)
            self.assertTrue(r.stderr.strip(), args)

    def test_missing_and_non_trace_inputs_exit_3(self):
        r = run("info", self.path("nope.trace"))
        self.assertEqual(r.returncode, 3)
        self.assertIn("No such file", r.stderr)
        garbage = self.path("garbage.bin")
        with open(garbage, "wb") as f:
            f.write(b"\x7fELF\x02\x01\x01\x00rest")
        r = run("info", garbage)
        self.assertEqual(r.returncode, 3)
        self.assertIn("not a cuclimb trace", r.stderr)
        r = run("info", self.dir.name)
        self.assertEqual(r.returncode, 3)
        self.assertIn("directory", r.stderr)

    def test_unwritable_output_exits_4(self):
        r = run("convert", self.jsonl, "/nonexistent-dir/out.trace")
        self.assertEqual(r.returncode, 4)
        self.assertIn("/nonexistent-dir/out.trace", r.stderr)

    def test_help_for_every_command(self):
        self.assertEqual(run("--help").returncode, 0)
        for cmd in ("info", "convert"):
            r = run(cmd, "--help")
            self.assertEqual(r.returncode, 0)
            self.assertIn("usage: cuclimb " + cmd, r.stdout)


if __name__ == "__main__":
    unittest.main()
