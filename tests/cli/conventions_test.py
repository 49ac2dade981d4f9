#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The conventions users of nsys, heaptrack and memray expect from `cuclimb`, command by command:
options up to the program word, no stale trace, every trace named, help/version/"did you mean",
one error line per failure, --json FILE and --quiet alike everywhere, --iteration that matches
nothing is an error, and man pages and completion generated from the same tables as --help.

Usage: conventions_test.py CUCLIMB GOLDEN_DIR [LIBCUCLIMB NVTX_PROGRAM]
(the record tests need the library and the GPU-less NVTX program; they skip without them)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

CUCLIMB = os.path.abspath(sys.argv.pop(1))
GOLDEN = os.path.abspath(sys.argv.pop(1))
LIB = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else None
NVTX_PROGRAM = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else None
TRACE = os.path.join(GOLDEN, "climb_cubecl.trace")
COMMANDS = ["record", "analyze", "diff", "check", "export", "info", "convert"]


def run(*args, cwd=None, env=None):
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([CUCLIMB, *args], capture_output=True, text=True, timeout=120, cwd=cwd,
                          env=full_env)


class Base(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="cuclimb-conv-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def one_error_line(self, r, code, *fragments):
        self.assertEqual(r.returncode, code, r.stderr)
        lines = r.stderr.splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        for f in fragments:
            self.assertIn(f, lines[0])
        return lines[0]


class HelpAndVersion(Base):
    def test_version(self):
        for flag in ("--version", "-V"):
            r = run(flag)
            self.assertEqual(r.returncode, 0)
            self.assertRegex(r.stdout, r"^cuclimb \d+\.\d+\.\d+\n$")

    def test_help_lists_every_command(self):
        r = run("--help")
        self.assertEqual(r.returncode, 0)
        for c in COMMANDS:
            self.assertRegex(r.stdout, rf"\n  {c} +\S")
        self.assertEqual(run("help").stdout, r.stdout)

    def test_help_cmd_is_cmd_help(self):
        for c in COMMANDS:
            a, b = run("help", c), run(c, "--help")
            self.assertEqual(a.returncode, 0, c)
            self.assertEqual(a.stdout, b.stdout, c)
            self.assertTrue(a.stdout.startswith(f"usage: cuclimb {c}"), c)
            self.assertIn("-h, --help", a.stdout)

    def test_help_lines_fit_100_columns(self):
        for c in [None, *COMMANDS]:
            text = run("help", *([c] if c else [])).stdout
            for line in text.splitlines():
                # Option help is one long sentence after the column; the rest is wrapped by hand.
                if not line.startswith("  -"):
                    self.assertLessEqual(len(line), 100, (c, line))


class DidYouMean(Base):
    def test_commands(self):
        line = self.one_error_line(run("anlyze", TRACE), 2, "unknown command 'anlyze'")
        self.assertIn("did you mean 'analyze'?", line)
        self.one_error_line(run("exprot"), 2, "did you mean 'export'?")
        line = self.one_error_line(run("frobnicate"), 2, "unknown command 'frobnicate'")
        self.assertNotIn("did you mean", line)
        self.one_error_line(run("help", "chek"), 2, "did you mean 'check'?")

    def test_options(self):
        self.one_error_line(run("analyze", TRACE, "--jsn", "x"), 2, "cuclimb analyze:",
                            "unknown option '--jsn'", "did you mean '--json'?")
        self.one_error_line(run("check", TRACE, "--max-clim", "5"), 2, "did you mean '--max-climb'?")
        self.one_error_line(run("diff", TRACE, TRACE, "--persits", "3"), 2, "did you mean '--persist'?")
        # A unique prefix is suggested too.
        self.one_error_line(run("check", TRACE, "--allow"), 2, "did you mean '--allow-partial'?")
        line = self.one_error_line(run("info", TRACE, "--zzzzzz"), 2, "unknown option '--zzzzzz'")
        self.assertNotIn("did you mean", line)


class OneErrorLine(Base):
    def test_missing_trace_names_the_path_once(self):
        missing = self.path("missing.trace")
        for args in (["analyze", missing], ["info", missing], ["check", missing],
                     ["export", missing, "--perfetto", self.path("o.json")],
                     ["diff", missing, TRACE], ["convert", missing, self.path("o.jsonl")]):
            r = run(*args)
            line = self.one_error_line(r, 3, missing)
            self.assertEqual(line.count(missing), 1, line)

    def test_not_a_trace(self):
        junk = self.path("junk.trace")
        with open(junk, "w") as f:
            f.write("hello\n")
        line = self.one_error_line(run("analyze", junk), 3, "not a cuclimb trace")
        self.assertEqual(line.count(junk), 1, line)

    def test_usage_errors(self):
        self.one_error_line(run("analyze"), 2, "cuclimb analyze:")
        self.one_error_line(run("diff", TRACE), 2, "cuclimb diff:")
        self.one_error_line(run("--frob"), 2, "cuclimb:")
        self.one_error_line(run("analyze", TRACE, "--json"), 2, "needs a value")


class JsonAndQuiet(Base):
    """--json FILE ('-' = stdout) and --quiet mean the same in every command that has them."""

    def cases(self):
        flat = os.path.join(GOLDEN, "flat_control.trace")
        return {
            "analyze": ["analyze", TRACE],
            "diff": ["diff", flat, TRACE],
            "check": ["check", TRACE, "--max-climb", "1000"],
            "info": ["info", TRACE],
        }

    def test_every_command_with_json_has_both(self):
        for c in COMMANDS:
            text = run("help", c).stdout
            if "--json" in text:
                self.assertIn("--json FILE", text, c)
                self.assertIn("--quiet", text, c)

    def test_json_file_stdout_and_quiet(self):
        for name, args in self.cases().items():
            out = self.path(name + ".json")
            r = run(*args, "--json", out)
            self.assertIn(r.returncode, (0, 1), (name, r.stderr))
            self.assertNotEqual(r.stdout, "", name)  # the terminal form still shows
            with open(out) as f:
                written = json.load(f)
            r = run(*args, "--json", "-")
            self.assertEqual(json.loads(r.stdout), written, name)  # stdout: the JSON alone
            r = run(*args, "--json", out, "--quiet")
            self.assertEqual(r.stdout, "", name)
            r = run(*args, "--quiet")
            self.assertEqual(r.stdout, "", name)


class IterationName(Base):
    def test_a_name_that_matches_nothing_is_an_error(self):
        for args in (["analyze", TRACE], ["check", TRACE], ["diff", TRACE, TRACE],
                     ["export", TRACE, "--perfetto", self.path("p.json")]):
            r = run(*args, "--iteration", "no-such-range")
            self.one_error_line(r, 2, "--iteration no-such-range", TRACE)

    def test_a_near_name_is_suggested_and_a_real_one_works(self):
        report = json.loads(run("analyze", TRACE, "--json", "-").stdout)
        name = report["iterations"]["name"]
        r = run("analyze", TRACE, "--iteration", name[:-1] + "x", "--quiet")
        self.one_error_line(r, 2, f"did you mean '{name}'?")
        r = run("analyze", TRACE, "--iteration", name, "--json", "-")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(json.loads(r.stdout)["iterations"]["user_chosen"])


class GeneratedDocs(Base):
    def test_man_pages_carry_every_option(self):
        page = run("help", "--man").stdout
        self.assertTrue(page.startswith(".TH CUCLIMB 1"), page[:80])
        for c in COMMANDS:
            self.assertIn(f"cuclimb\\-{c}", page)
            man = run("help", "--man", c)
            self.assertEqual(man.returncode, 0)
            self.assertTrue(man.stdout.startswith(f".TH CUCLIMB-{c.upper()} 1"), c)
            for opt in re.findall(r"^  (?:-\w, )?--([a-z-]+)", run(c, "--help").stdout, re.M):
                self.assertIn("\\-\\-" + opt.replace("-", "\\-"), man.stdout, (c, opt))
            # No line may start a roff request by accident.
            for line in man.stdout.splitlines():
                if line.startswith(".") or line.startswith("'"):
                    self.assertRegex(line, r"^\.(TH|SH|TP|B|BR|PP|nf|fi|br)\b", (c, line))
        if shutil.which("groff") or shutil.which("man"):
            tool = shutil.which("groff")
            if tool:
                r = subprocess.run([tool, "-man", "-Tutf8", "-ww"], input=run("help", "--man", "record").stdout,
                                   capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(r.stderr, "")

    def test_bash_completion(self):
        script = run("help", "--completion", "bash").stdout
        r = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)

        def complete(line):
            words = line.split(" ")
            prog = (script + "\nCOMP_WORDS=(" + " ".join(f"'{w}'" for w in words) + ")\n"
                    f"COMP_CWORD={len(words) - 1}\n_cuclimb\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n")
            return subprocess.run(["bash", "-c", prog], capture_output=True, text=True, cwd=self.dir).stdout.split()

        self.assertIn("analyze", complete("cuclimb an"))
        self.assertIn("--json", complete("cuclimb analyze --js"))
        self.assertEqual(sorted(complete("cuclimb record --kernels ")), ["all", "off", "sampled"])
        self.assertIn("--stacks", complete("cuclimb record --st"))
        self.assertEqual(run("help", "--completion", "zsh").returncode, 2)


@unittest.skipIf(LIB is None or NVTX_PROGRAM is None, "needs libcuclimb.so and the NVTX program")
class Record(Base):
    def record(self, *args, env=None):
        full = {"CUDA_INJECTION64_PATH": "", "NVTX_INJECTION64_PATH": "", "CUCLIMB_OUTPUT": ""}
        full.update(env or {})
        return run("record", "--lib", LIB, *args, cwd=self.dir, env=full)

    def traces(self):
        return sorted(f for f in os.listdir(self.dir) if f.endswith(".trace"))

    def test_options_end_at_the_program_word(self):
        r = self.record("-o", "x.trace", "/bin/sh", "-c", 'echo "$@"', "sh", "--kernels", "all", "-o", "y")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "--kernels all -o y\n")
        r = self.record("--output", "x.trace", "--", "/bin/sh", "-c", "echo ok")
        self.assertEqual(r.stdout, "ok\n")

    def test_no_stale_trace_next_free_name(self):
        for expected in ("run.trace", "run-1.trace", "run-2.trace"):
            r = self.record("-o", "run.trace", NVTX_PROGRAM, "basic")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn(f"cuclimb record: trace {self.path(expected)}\n", r.stderr)
        self.assertEqual(self.traces(), ["run-1.trace", "run-2.trace", "run.trace"])
        self.assertIn("run.trace exists; writing", r.stderr)

    def test_an_old_trace_is_never_announced(self):
        old = self.path("run.trace")
        with open(old, "w") as f:
            f.write("old\n")
        r = self.record("-o", "run.trace", "/bin/true")  # never uses CUDA: writes nothing
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("trace " + old, r.stderr)
        self.assertIn("no trace written: /bin/true never used CUDA or NVTX", r.stderr)

    def test_every_trace_children_included(self):
        script = f"{NVTX_PROGRAM} basic && {NVTX_PROGRAM} basic"
        r = self.record("-o", "job-%p.trace", "/bin/sh", "-c", script)
        self.assertEqual(r.returncode, 0, r.stderr)
        named = re.findall(r"cuclimb record: trace (\S+)", r.stderr)
        self.assertEqual(len(named), 2, r.stderr)
        self.assertEqual(sorted(os.path.basename(p) for p in named), self.traces())

    def test_unwritable_output_is_exit_4_before_the_program_runs(self):
        marker = self.path("ran")
        r = self.record("-o", self.path("no-dir/run.trace"), "/bin/sh", "-c", f"touch {marker}")
        self.one_error_line(r, 4, "cannot write traces into")
        self.assertFalse(os.path.exists(marker))

    def test_quiet(self):
        r = self.record("--quiet", "-o", "q.trace", NVTX_PROGRAM, "basic")
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.stderr, "")
        self.assertEqual(self.traces(), ["q.trace"])

    def test_python_programs_get_python_stacks_unless_told(self):
        show = 'import os; print(os.environ.get("CUCLIMB_STACKS"))'
        script = self.path("train.py")
        with open(script, "w") as f:
            f.write(f"#!/usr/bin/env {os.path.basename(sys.executable)}\n{show}\n")
        os.chmod(script, 0o755)
        for program in ([sys.executable, "-c", show], [script]):
            r = self.record("-o", "p.trace", *program)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, "python\n", program)
            self.assertIn("recording Python call stacks", r.stderr)
            r = self.record("-o", "p.trace", "--stacks", "fp", *program)  # the user's choice wins
            self.assertEqual(r.stdout, "fp\n")
            r = self.record("-o", "p.trace", *program, env={"CUCLIMB_STACKS": "off"})
            self.assertEqual(r.stdout, "off\n")
        # Not Python: a shell, and a script whose #! names another interpreter.
        r = self.record("-o", "p.trace", "/bin/sh", "-c", 'echo "${CUCLIMB_STACKS-unset}"')
        self.assertEqual(r.stdout, "unset\n")
        self.assertNotIn("Python", r.stderr)

    def test_mistyped_option_before_the_program(self):
        r = self.record("--stack", "fp", "/bin/true")
        self.one_error_line(r, 2, "did you mean '--stacks'?")


if __name__ == "__main__":
    unittest.main(verbosity=2)
