#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Reproducers of damaged and hostile traces (tests/hostile/data): each must give a clear message and
exit 3, or convert without losing anything, within bounded memory."""
import os
import resource
import subprocess
import sys
import tempfile
import unittest

CUCLIMB = sys.argv.pop(1)
# The reproducers are those of the hostile-input suite (tests/hostile/data).
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "hostile", "data")
H200 = sys.argv.pop(1)  # a recording (format 1.0) to convert and damage


def sanitized(path):
    """AddressSanitizer reserves terabytes of shadow address space at start: an address-space
    limit would kill it before main. The unsanitized build asserts the memory bound."""
    with open(path, "rb") as f:
        return b"__asan_init" in f.read()


SANITIZED = sanitized(CUCLIMB)


def run(*args, check_memory_mib=None):
    """Runs cuclimb; with check_memory_mib, in a child limited to that much address space."""
    def limit():
        if check_memory_mib and not SANITIZED:
            size = check_memory_mib << 20
            resource.setrlimit(resource.RLIMIT_AS, (size, size))
    return subprocess.run([CUCLIMB, *args], capture_output=True, text=True, timeout=120,
                          preexec_fn=limit)


class BadInputsTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def test_swapped_chunks_are_damage(self):
        # A 1.1 trace (the recording converted), chunks 2 and 3 swapped: intact CRCs, wrong order.
        current = self.path("current.trace")
        r = run("convert", H200, current, "--to", "binary")
        self.assertEqual(r.returncode, 0, r.stderr)
        # Small chunks are what the recorder writes; convert writes 1 MiB ones, so re-split by
        # converting through JSON Lines is not needed: the converted file has several chunks.
        swapped = self.path("swapped.trace")
        subprocess.run([sys.executable, os.path.join(HERE, "swap_chunks.py"), current, swapped,
                        "1", "2"], check=True)
        r = run("info", swapped)
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertIn("sequence number 2, expected 1", r.stdout + r.stderr)
        r = run("analyze", swapped, "--quiet", "--json", self.path("r.json"))
        self.assertEqual(r.returncode, 3, r.stderr)

    def test_string_bomb_is_refused_within_bounded_memory(self):
        # 392 KB of zstd that unpacks to 40 chunks of 64 KiB strings: 2.7 GB before the cap.
        r = run("info", os.path.join(HERE, "string-bomb-40x64MiB.trace"), check_memory_mib=1024)
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertIn("64 MiB cap", r.stdout + r.stderr)

    def test_stack_bomb_is_refused_within_bounded_memory(self):
        bomb = self.path("stack-bomb.trace")
        subprocess.run([sys.executable, os.path.join(HERE, "make_stack_bomb.py"), bomb, "1"],
                       check=True)
        r = run("info", bomb, check_memory_mib=1024)
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertIn("Mi frames", r.stdout + r.stderr)

    def test_long_names_convert_without_loss(self):
        # Two kernels whose 70 KB names differ only at the end: a 64 KiB cut merged them.
        src = os.path.join(HERE, "long-name-70KB.jsonl")
        binary, back = self.path("long.trace"), self.path("long.jsonl")
        r = run("convert", src, binary)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = run("convert", binary, back)
        self.assertEqual(r.returncode, 0, r.stderr)
        import json
        with open(src) as f:
            want = [json.loads(line)["kernel"] for line in f if line.strip()]
        with open(back) as f:
            got = [json.loads(line).get("kernel") for line in f if '"launch"' in line]
        self.assertEqual(got, want)
        self.assertNotEqual(got[0], got[1])


if __name__ == "__main__":
    unittest.main(verbosity=2)
