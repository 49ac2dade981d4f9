# SPDX-License-Identifier: Apache-2.0
"""--stacks python against real CPython interpreters (each 3.11+ one found on PATH and Debian's):
runs python_stacks_program.py under libcuclimb.so (its NVTX injection; no GPU), converts the
trace to JSON Lines and checks each case's stack: native frames first, then the Python frames
with the right function, file and line, innermost first. Exit 77 when no interpreter is found.

    python_stacks_test.py LIBCUCLIMB PROBE_LIB CUCLIMB PROGRAM
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

LIB, PROBE, CUCLIMB, PROGRAM = (os.path.abspath(a) for a in sys.argv[1:5])
CANDIDATES = (["python3.11", "python3.12", "python3.13", "/usr/bin/python3", sys.executable] +
              sorted(glob.glob(os.path.join(os.environ.get("PYENV_ROOT", "/root/.pyenv"),
                                            "versions", "3.1*", "bin", "python3"))))


def interpreters():
    """(version, executable) of each distinct 3.11+ interpreter."""
    found = {}
    for name in CANDIDATES:
        exe = shutil.which(name) if not os.path.isabs(name) else name
        if exe is None or not os.path.exists(exe):
            continue
        probe = subprocess.run(
            [exe, "-c", "import sys, sysconfig; print(sys.version_info[0], sys.version_info[1],"
             " sys.executable, sysconfig.get_config_var('Py_GIL_DISABLED') or 0)"],
            capture_output=True, text=True, check=False)
        if probe.returncode != 0:
            continue
        major, minor, real, no_gil = probe.stdout.split()
        if (int(major), int(minor)) < (3, 11) or no_gil != "0":
            continue
        found.setdefault(os.path.realpath(real), (f"{major}.{minor}", exe))
    return sorted(found.values())


def sites():
    """'# site:NAME' marker -> line number in the program."""
    out = {}
    with open(PROGRAM, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            m = re.search(r"# site:(\w+)", line)
            if m:
                out[m.group(1)] = number
    return out


def record(exe, stacks, workdir):
    trace = os.path.join(workdir, "run.trace")
    env = dict(os.environ, NVTX_INJECTION64_PATH=LIB, CUCLIMB_STACKS=stacks,
               CUCLIMB_OUTPUT=trace, CUCLIMB_STACK_DEPTH="32")
    env.pop("CUDA_INJECTION64_PATH", None)
    run = subprocess.run([exe, PROGRAM, PROBE], env=env, capture_output=True, text=True,
                         timeout=120, check=False)
    if run.returncode != 0:
        raise AssertionError(f"{exe} failed ({run.returncode}): {run.stderr}")
    jsonl = os.path.join(workdir, "run.jsonl")
    subprocess.run([CUCLIMB, "convert", trace, jsonl], check=True, capture_output=True)
    stacks_by_size = {}
    with open(jsonl, encoding="utf-8") as f:
        for line in f:
            ev = json.loads(line)
            if ev.get("ev") == "region" and 1000 < ev.get("size", 0) < 1100:
                stacks_by_size[ev["size"]] = ev.get("stack", [])
    return stacks_by_size, run.stderr


class PythonStacks(unittest.TestCase):
    maxDiff = None

    def check(self, version, exe, stacks):
        lines = sites()
        where = f"@{PROGRAM}:"
        with tempfile.TemporaryDirectory() as workdir:
            by_size, stderr = record(exe, stacks, workdir)
        self.assertNotIn("not supported", stderr)

        def frames(size):
            self.assertIn(size, by_size, f"{version} {stacks}: no region {size}")
            return by_size[size]

        def python_part(stack):
            first = next((i for i, f in enumerate(stack) if f.startswith("py:")), None)
            self.assertIsNotNone(first, f"{version} {stacks}: no Python frame in {stack}")
            self.assertGreater(first, 0, f"native frames come first: {stack}")
            for f in stack[:first]:
                self.assertRegex(f, r"^0x[0-9a-f]+$")
            return stack[first:]

        cases = {1001: ("allocate_plain", "plain"), 1002: ("allocate_with_gil", "gil"),
                 1003: ("Worker.run", "thread"), 1004: ("produce", "generator"),
                 1005: ("fetch", "async"), 1008: ("Model.forward", "method")}
        for size, (function, site) in cases.items():
            py = python_part(frames(size))
            with self.subTest(version=version, stacks=stacks, case=site):
                self.assertEqual(py[0], f"py:{function}{where}{lines[site]}", py)
        # Whole stacks of the simple case: every Python frame up to the module, then nothing.
        py = python_part(frames(1001))
        self.assertTrue(py[-1].startswith(f"py:<module>{where}"), py)
        self.assertTrue(all(f.startswith("py:") for f in py), py)
        self.assertTrue(py[1].startswith(f"py:main{where}"), py)
        # A thread's stack ends in threading's bootstrap.
        py = python_part(frames(1003))
        self.assertTrue(any(re.match(r"py:Thread\._bootstrap_inner@.*threading\.py:\d+$", f)
                            for f in py), py)
        # Deep recursion: the depth bound holds, and Python frames keep at least half of it.
        deep = frames(1006)
        self.assertLessEqual(len(deep), 32)
        self.assertGreaterEqual(sum(f.startswith("py:recurse@") for f in deep), 16, deep)
        self.assertEqual(python_part(deep)[0], f"py:recurse{where}{lines['deep']}")
        # A callback from native code into Python: the inner hook's frame, then the outer one's.
        nested = python_part(frames(1007))
        self.assertEqual(nested[0], f"py:inner_hook{where}{lines['inner']}")
        outer = f"py:outer_hook{where}{lines['outer']}"
        self.assertIn(outer, nested)
        if "unwind" in stacks:
            # CFI crosses the interpreter: the native frames of py_probe_call (and ctypes) sit
            # between the two runs of the eval loop.
            between = nested[1:nested.index(outer)]
            self.assertTrue(any(re.match(r"^0x", f) for f in between), nested)

    def test_interpreters(self):
        found = interpreters()
        if not found:
            raise unittest.SkipTest("no CPython 3.11+ interpreter")
        for version, exe in found:
            for stacks in ("python", "python,unwind"):
                with self.subTest(version=version, exe=exe, stacks=stacks):
                    self.check(version, exe, stacks)


if __name__ == "__main__":
    if not interpreters():
        print("SKIP: no CPython 3.11+ interpreter")
        sys.exit(77)
    unittest.main(argv=sys.argv[:1], verbosity=2)
