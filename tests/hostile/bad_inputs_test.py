#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Hostile and damaged input (issue #14): every reproducer in data/ run through the commands a
user runs. Nothing may crash, hang, change data silently or pass a gate it cannot judge.

usage: bad_inputs_test.py CUCLIMB DATA_DIR [SANITIZER]

CUCLIMB_LIB names libcuclimb.so for the one recording test (skipped without it).
"""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import unittest

CUCLIMB = os.path.abspath(sys.argv.pop(1))
DATA = os.path.abspath(sys.argv.pop(1))
SANITIZED = len(sys.argv) > 1 and not sys.argv[1].startswith("-") and sys.argv.pop(1) not in ("", "none")

GIB = 1 << 30


class Result:
    def __init__(self, returncode, stdout, stderr, max_rss_bytes, seconds, cpu_seconds):
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.max_rss_bytes = max_rss_bytes
        self.seconds = seconds
        self.cpu_seconds = cpu_seconds


def run(*args, cwd=None, timeout=300, env=None):
    """Runs cuclimb; returns its output, exit status (−N for signal N), its own peak RSS (from
    wait4, so per command) and its wall time."""
    start = time.monotonic()
    p = subprocess.Popen([CUCLIMB, *map(str, args)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, cwd=cwd, env=env)
    chunks = {}

    def drain(key, f):
        chunks[key] = f.read()

    readers = [threading.Thread(target=drain, args=(k, f)) for k, f in (("out", p.stdout),
                                                                        ("err", p.stderr))]
    for t in readers:
        t.start()
    while True:
        pid, status, usage = os.wait4(p.pid, os.WNOHANG)
        if pid != 0:
            break
        if time.monotonic() - start > timeout:
            p.kill()
            os.wait4(p.pid, 0)
            raise AssertionError(f"cuclimb {' '.join(map(str, args))} ran over {timeout} s")
        time.sleep(0.005)
    for t in readers:
        t.join()
    p.returncode = os.waitstatus_to_exitcode(status)
    return Result(p.returncode, chunks["out"].decode("utf-8", "replace"),
                  chunks["err"].decode("utf-8", "replace"), usage.ru_maxrss * 1024,
                  time.monotonic() - start, usage.ru_utime + usage.ru_stime)


def data(name):
    return os.path.join(DATA, name)


class Base(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def assertNoSanitizerReport(self, r):
        for marker in ("AddressSanitizer", "runtime error:", "LeakSanitizer"):
            self.assertNotIn(marker, r.stderr)

    def assertExit(self, r, code):
        self.assertNoSanitizerReport(r)
        self.assertEqual(r.returncode, code, f"stdout:\n{r.stdout[-2000:]}\nstderr:\n{r.stderr[-2000:]}")


class EmptyTraces(Base):
    """A program that dies in its first second leaves a header-only trace."""

    def test_header_only_trace_analyses_as_one_iteration(self):
        for name in ("asan-spans-oob-header-only.trace", "asan-spans-oob-one-event.jsonl"):
            r = run("analyze", data(name), "--json", "-")
            self.assertExit(r, 0)
            report = json.loads(r.stdout)
            self.assertEqual(report["iterations"]["source"], "none")
            self.assertEqual(report["verdict"], "flat")

    def test_check_never_passes_an_empty_or_untestable_trace(self):
        for name in ("asan-spans-oob-header-only.trace", "asan-spans-oob-one-event.jsonl"):
            for limits in ([], ["--max-climb", "5"], ["--max-growth", "any=0"]):
                r = run("check", data(name), *limits, "--json", "-")
                self.assertExit(r, 3)
                verdict = json.loads(r.stdout)
                self.assertFalse(verdict["pass"])
                self.assertEqual(verdict["verdict"], "inconclusive")
                self.assertIn("never passes", r.stderr)

    def test_diff_gate_never_passes_an_empty_trace(self):
        empty = data("asan-spans-oob-header-only.trace")
        r = run("diff", empty, empty, "--fail-on-divergence", "--quiet")
        self.assertExit(r, 3)
        self.assertIn("no events", r.stderr)
        r = run("diff", empty, empty, "--quiet")  # a report, not a gate
        self.assertExit(r, 0)


class Gauges(Base):
    def test_gauge_sampled_only_after_the_last_iteration_is_not_heap_bytes(self):
        r = run("analyze", data("asan-fold-gauge-oob.jsonl"), "--json", "-")
        self.assertExit(r, 0)
        pools = json.loads(r.stdout)["ranks"][0]["fragmentation"]["pools"]
        self.assertEqual(len(pools), 1)
        for v in pools[0]["reserved_bytes"] + pools[0]["used_bytes"]:
            self.assertIn(v, (0, 1), "a gauge value that was never recorded")


class Thresholds(Base):
    CLIMB = None

    def climb(self):
        golden = os.path.join(os.path.dirname(DATA), "..", "golden", "h200-cubecl-climb.trace")
        return os.path.abspath(golden)

    def test_non_finite_thresholds_are_usage_errors(self):
        for value in ("nan", "NaN", "inf", "-inf", "infinity"):
            for args in (["check", self.climb(), "--max-climb", value],
                         ["analyze", self.climb(), "--min-climb-pct", value],
                         ["analyze", self.climb(), "--alpha", value],
                         ["analyze", self.climb(), "--min-share", value],
                         ["diff", self.climb(), self.climb(), "--time-tolerance-pct", value],
                         ["diff", self.climb(), self.climb(), "--count-tolerance-pct", value]):
                r = run(*args)
                self.assertExit(r, 2)
                self.assertIn("finite", r.stderr)

    def test_a_climbing_trace_fails_the_gate(self):
        r = run("check", self.climb(), "--max-climb", "5", "--quiet")
        self.assertExit(r, 1)


class TerminalEscapes(Base):
    """A command line and kernel names full of ESC/OSC/BEL: printed as text, never raw."""

    RAW = ("\x1b", "\x07", "\x9b")

    def assertPrintable(self, text):
        for c in self.RAW:
            self.assertNotIn(c, text)

    def test_info_analyze_and_diff_print_no_control_sequences(self):
        trace = data("terminal-escapes-and-int-wrap.jsonl")
        # The file also holds out-of-range integers; its first 37 lines do not.
        clean = self.path("escapes.jsonl")
        with open(trace) as f, open(clean, "w") as out:
            out.writelines(f.readlines()[:37])
        r = run("info", clean)
        self.assertExit(r, 0)
        self.assertPrintable(r.stdout)
        self.assertIn("\\x1b]52;c;", r.stdout)  # shown as text
        r = run("analyze", clean)
        self.assertExit(r, 0)
        self.assertPrintable(r.stdout)
        r = run("diff", clean, clean)
        self.assertExit(r, 0)
        self.assertPrintable(r.stdout)
        self.assertIn("k\\x1b[2J", r.stdout)
        # JSON keeps the strings exactly (escaped the JSON way).
        r = run("info", clean, "--json", "-")
        self.assertExit(r, 0)
        self.assertIn("\x1b]52;c;", json.loads(r.stdout)["process"]["cmd"])


class JsonLinesStrictness(Base):
    def test_integers_that_would_wrap_stop_the_read(self):
        trace = data("terminal-escapes-and-int-wrap.jsonl")
        out = self.path("x.trace")
        r = run("convert", trace, out)
        self.assertExit(r, 3)
        self.assertIn("line 39", r.stderr)
        self.assertRegex(r.stderr, "field '(tid|grid)'")
        r = run("convert", out, "-", "--to", "jsonl")
        self.assertExit(r, 0)
        self.assertNotIn("tid_wraps_to_1", r.stdout)  # converted up to the damage, no further
        self.assertEqual(len(r.stdout.splitlines()), 1 + 37)
        r = run("info", trace)
        self.assertExit(r, 3)

    def test_push_without_name_is_corrupt_not_a_flat_run(self):
        src = self.path("climb.jsonl")
        r = run("convert", os.path.join(os.path.dirname(DATA), "..", "golden", "climb_cubecl.trace"),
                src, "--to", "jsonl")
        self.assertExit(r, 0)
        with open(src) as f:
            lines = f.readlines()
        nameless = [l.replace(',"name":"P/step"', "") for l in lines]
        self.assertGreater(sum(a != b for a, b in zip(nameless, lines)), 10)
        bad = self.path("nameless.jsonl")
        with open(bad, "w") as f:
            f.writelines(nameless)
        r = run("analyze", bad, "--quiet")
        self.assertExit(r, 3)
        r = run("check", bad, "--quiet")
        self.assertExit(r, 3)
        r = run("info", bad)
        self.assertExit(r, 3)
        self.assertIn("required field 'name'", r.stdout)


HEADER = ('{"ev":"header","ts":0,"format":"1.0","producer":"t","clock":"synthetic",'
          '"base_clock_ns":0,"base_realtime_ns":0}\n')

# The shapes of data/make_scale_inputs.py, at any size n.
SHAPES = {
    "threads": lambda n: ('{"ev":"push","ts":%d,"tid":%d,"name":"r"}\n' % (2 * i, i + 1)
                          for i in range(n)),
    "unclosed": lambda n: ('{"ev":"push","ts":%d,"tid":1,"name":"n%d"}\n' % (i, i)
                           for i in range(n)),
    "domains": lambda n: ('{"ev":"push","ts":%d,"tid":1,"name":"r","domain":"d%d"}\n' % (i, i)
                          for i in range(n)),
    "kernels": lambda n: ('{"ev":"launch","ts":%d,"dur":5,"tid":1,"kernel":"k%d","stream":"0x10"}\n'
                          % (i * 10, i) for i in range(n)),
}


def write_shape(path, shape, n):
    with open(path, "w") as f:
        f.write(HEADER)
        f.writelines(SHAPES[shape](n))


class Scale(Base):
    """Memory per open range, domain, thread and kernel name; time linear in each (issue #14:
    ~512 KB per open range, quadratic time in threads)."""

    def test_open_ranges_and_domains_cost_little_memory(self):
        for name in ("mem-5000-open-ranges.jsonl", "mem-5000-domains.jsonl"):
            r = run("analyze", data(name), "--json", "/dev/null", "--quiet")
            self.assertExit(r, 0)
            if not SANITIZED:  # was 2.6 GB each
                self.assertLess(r.max_rss_bytes, 256 << 20, name)

    def cpu_seconds(self, shape, n, command="analyze"):
        path = self.path(f"{shape}-{n}.jsonl")
        write_shape(path, shape, n)
        args = [command, path, "--quiet"] + (["--json", "/dev/null"] if command == "analyze" else [])
        r = run(*args)
        self.assertExit(r, 0 if command == "analyze" else 3)  # too short a trace for a gate
        if not SANITIZED:
            self.assertLess(r.max_rss_bytes, 1 * GIB, (shape, n))
        return r.cpu_seconds

    def test_time_is_linear_in_threads_ranges_domains_and_kernels(self):
        # Doubling the input must not come near quadrupling the time. CPU time, not wall time,
        # and the better of two tries, so a busy machine does not fail the test.
        sizes = {"threads": 40000, "unclosed": 60000, "domains": 60000, "kernels": 40000}
        for shape, n in sizes.items():
            for command in (("analyze", "check") if shape == "threads" else ("analyze",)):
                ratios = []
                for _ in range(2):
                    small = self.cpu_seconds(shape, n, command)
                    large = self.cpu_seconds(shape, 2 * n, command)
                    ratios.append(large / max(small, 0.05))
                self.assertLess(min(ratios), 3.0, f"{command} {shape}: {ratios}")


I64MAX, I64MIN, U64MAX, U32MAX = 2**63 - 1, -2**63, 2**64 - 1, 2**32 - 1


def extreme_events():
    """Every kind of event with its fields at their limits, at timestamps from INT64_MIN to
    INT64_MAX and back: sums, differences and conversions of these overflow unless guarded."""
    yield {"ev": "header", "ts": 0, "format": "1.0", "producer": "x", "clock": "synthetic",
           "base_clock_ns": I64MAX, "base_realtime_ns": I64MIN}
    for rep in range(12):
        for ts in (I64MIN, -1, 0, 1, I64MAX // 2, I64MAX - 10, I64MAX):
            big = I64MAX if rep % 2 else I64MIN
            yield {"ev": "push", "ts": ts, "tid": U32MAX, "name": "iteration", "payload": big}
            yield {"ev": "alloc", "ts": ts, "dur": U64MAX, "tid": U32MAX, "api": "a",
                   "kind": "device", "addr": "0xffffffffffffffff", "size": U64MAX,
                   "stream": "0x1", "device": 2**31 - 1, "pool": "0xffffffffffffffff",
                   "corr": U64MAX}
            yield {"ev": "alloc", "ts": ts, "dur": 1, "tid": 1, "api": "a", "kind": "pool",
                   "addr": "0x%x" % (rep + 1), "size": 2**63, "stream": "0x1", "device": 0,
                   "pool": "0x5"}
            yield {"ev": "launch", "ts": ts, "dur": U64MAX, "tid": U32MAX, "kernel": "k",
                   "stream": "0x1", "corr": rep + 1, "grid": [U32MAX] * 3,
                   "block": [U32MAX, 1, 1], "smem": U64MAX}
            yield {"ev": "kernel", "ts": ts, "dur": 2**63, "kernel": "k", "stream": "0x1",
                   "corr": rep + 1, "device": 0, "grid": [U32MAX] * 3}
            yield {"ev": "gauge", "ts": ts, "device": 0, "name": "pool.reserved", "value": big,
                   "pool": "0x5"}
            yield {"ev": "gauge", "ts": ts, "device": 0, "name": "pool.used", "value": I64MIN,
                   "pool": "0x5"}
            yield {"ev": "gauge", "ts": ts, "device": 0, "name": "device.free", "value": I64MAX}
            yield {"ev": "api", "ts": ts, "dur": U64MAX, "tid": U32MAX,
                   "name": "cuStreamSynchronize", "result": I64MIN}
            yield {"ev": "sync", "ts": ts, "dur": 2**63, "tid": U32MAX, "kind": "stream",
                   "api": "cuStreamSynchronize"}
            yield {"ev": "copy", "ts": ts, "dur": U64MAX, "tid": 1, "kind": "htod",
                   "api": "cuMemcpy", "size": U64MAX}
            yield {"ev": "overhead", "ts": ts, "dur": U64MAX, "tid": 0, "self_ns": big,
                   "events": U64MAX}
            yield {"ev": "drops", "ts": ts, "count": big, "reason": "ring_full"}
            yield {"ev": "create", "ts": ts, "dur": U64MAX, "tid": 1, "type": "stream",
                   "handle": "0xffffffffffffffff"}
            yield {"ev": "vmm", "ts": ts, "dur": U64MAX, "tid": 1, "op": "create",
                   "size": U64MAX, "handle": "0x%x" % (rep + 7)}
            yield {"ev": "vmm", "ts": ts, "dur": U64MAX, "tid": 1, "op": "map",
                   "addr": "0xffffffffffffff00", "size": U64MAX, "handle": "0x%x" % (rep + 7)}
            yield {"ev": "free", "ts": ts, "dur": U64MAX, "tid": 1, "api": "f",
                   "addr": "0x%x" % (rep + 1), "size": U64MAX}
            yield {"ev": "pop", "ts": ts, "tid": U32MAX}
            yield {"ev": "process", "ts": ts, "pid": big, "cmd": "x", "driver": U64MAX,
                   "cupti": U64MAX, "rank": U64MAX, "ppid": U64MAX}
            yield {"ev": "device", "ts": ts, "device": 2**31 - 1, "name": "d", "total": U64MAX,
                   "cc": big}
            yield {"ev": "sample", "ts": ts, "tid": 1, "stack": ["0xffffffffffffffff", "f"]}


class ExtremeValues(Base):
    """Every field at its limits through every command: no crash, no sanitizer report (the
    sanitizer build runs this), no wrapped value on the way (issue #14's UBSan findings)."""

    def test_every_command_on_extreme_values(self):
        jsonl = self.path("extremes.jsonl")
        with open(jsonl, "w") as f:
            for e in extreme_events():
                f.write(json.dumps(e, separators=(",", ":")) + "\n")
        binary = self.path("extremes.trace")
        self.assertExit(run("convert", jsonl, binary), 0)
        back = self.path("back.jsonl")
        self.assertExit(run("convert", binary, back), 0)
        with open(jsonl) as a, open(back) as b:
            self.assertEqual(a.read().splitlines()[1:], b.read().splitlines()[1:],
                             "binary conversion changed a value")
        for trace in (jsonl, binary):
            self.assertExit(run("info", trace), 0)
            self.assertExit(run("info", trace, "--json", "-"), 0)
            self.assertExit(run("analyze", trace, "--json", self.path("r.json"),
                                "--html", self.path("r.html")), 0)
            self.assertExit(run("export", trace, "--perfetto", self.path("p.json"), "--quiet"), 0)
            self.assertExit(run("export", trace, "--perfetto", self.path("p.json"),
                                "--iterations", "1:3", "--quiet"), 0)
            self.assertExit(run("diff", trace, jsonl, "--json", self.path("d.json"),
                                "--html", self.path("d.html")), 0)
            r = run("check", trace, "--max-growth", "any=0", "--max-growth", "live_bytes=0")
            self.assertNoSanitizerReport(r)
            self.assertIn(r.returncode, (0, 1, 3))
            with open(self.path("r.json")) as f:
                json.load(f)
            with open(self.path("p.json")) as f:
                json.load(f)


class CutTraces(Base):
    def cut(self):
        golden = os.path.join(os.path.dirname(DATA), "..", "golden", "h200-cubecl-climb.trace")
        with open(golden, "rb") as f:
            b = f.read()
        out = self.path("cut.trace")
        with open(out, "wb") as f:
            f.write(b[: len(b) // 2])
        return out, os.path.abspath(golden)

    def test_gates_exit_3_on_a_cut_trace_even_when_a_limit_is_exceeded(self):
        cut, whole = self.cut()
        r = run("check", cut, "--max-climb", "0", "--json", "-", "--quiet")
        self.assertExit(r, 3)
        self.assertEqual(json.loads(r.stdout)["verdict"], "inconclusive")
        r = run("check", cut, "--max-climb", "0", "--allow-partial", "--quiet")
        self.assertIn(r.returncode, (0, 1))
        flat = os.path.join(os.path.dirname(whole), "h200-cubecl-flat.trace")
        r = run("diff", flat, cut, "--fail-on-divergence", "--quiet")
        self.assertExit(r, 3)

    def test_export_of_iterations_beyond_the_readable_part_is_a_damaged_trace(self):
        cut, whole = self.cut()
        out = self.path("p.json")
        r = run("export", cut, "--perfetto", out, "--iterations", "400:450", "--quiet")
        self.assertExit(r, 3)
        self.assertIn("not readable", r.stderr)
        self.assertFalse(os.path.exists(out))
        r = run("export", whole, "--perfetto", out, "--iterations", "600:650", "--quiet")
        self.assertExit(r, 2)  # the whole trace has 500: asking for more is a usage error
        r = run("export", cut, "--perfetto", out, "--iterations", "10:20", "--quiet")
        self.assertExit(r, 3)  # exported what was readable, and says the trace is cut
        self.assertTrue(os.path.exists(out))


class FormatBounds(Base):
    """Format items of issue #14, fixed with format v1.1: byte caps on the string and stack
    tables, chunk sequence numbers, strings over 64 KiB."""

    def test_string_bomb_is_refused_within_bounded_memory(self):
        r = run("info", data("string-bomb-40x64MiB.trace"))
        self.assertExit(r, 3)  # 392 KB that decode to 2.7 GB of strings
        if not SANITIZED:
            self.assertLess(r.max_rss_bytes, 512 << 20)
        self.assertRegex(r.stdout + r.stderr, "(limit|cap|exceed)")

    def test_stack_bomb_is_refused_within_bounded_memory(self):
        bomb = self.path("stack-bomb.trace")
        subprocess.run([sys.executable, data("make_stack_bomb.py"), bomb], check=True, timeout=300)
        r = run("info", bomb)
        self.assertExit(r, 3)  # 3 MB that decode to 2.9 GiB of frames
        if not SANITIZED:
            self.assertLess(r.max_rss_bytes, 1 * GIB)
        self.assertRegex(r.stdout + r.stderr, "(limit|cap|exceed)")

    def test_reordered_chunks_are_detected(self):
        # The bundled H200 trace is format 1.0, whose chunks carry no sequence number: rewrite it
        # in the current format (through JSON Lines, as convert never writes its input's form).
        golden = os.path.join(os.path.dirname(DATA), "..", "golden", "h200-cubecl-climb.trace")
        jsonl, current, swapped = (self.path(n) for n in ("h.jsonl", "h.trace", "swapped.trace"))
        self.assertExit(run("convert", golden, jsonl), 0)
        self.assertExit(run("convert", jsonl, current), 0)
        subprocess.run([sys.executable, data("swap_chunks.py"), current, swapped, "2", "3"],
                       check=True, timeout=120)
        r = run("info", swapped, "--json", "-")
        self.assertExit(r, 3)
        self.assertNotEqual(json.loads(r.stdout)["status"], "complete")
        self.assertExit(run("analyze", swapped, "--quiet"), 3)

    def test_convert_never_truncates_a_long_string(self):
        src = data("long-name-70KB.jsonl")
        binary = self.path("long.trace")
        r = run("convert", src, binary)
        self.assertNoSanitizerReport(r)
        if r.returncode != 0:
            self.assertIn("64", r.stderr)  # refused, saying why
            return
        r = run("convert", binary, "-", "--to", "jsonl")
        self.assertExit(r, 0)
        with open(src) as f:
            original = [json.loads(l) for l in f if l.strip()]
        back = [json.loads(l) for l in r.stdout.splitlines() if l.strip()]
        names = lambda evs: sorted(e["kernel"] for e in evs if "kernel" in e)
        self.assertEqual(names(back), names(original))


class Recording(Base):
    """The recorder's item of issue #14: a program started with stderr closed."""

    def test_program_started_with_stderr_closed_keeps_its_trace(self):
        lib = os.environ.get("CUCLIMB_LIB", "")
        nvtx = "/usr/local/cuda/include/nvtx3/nvToolsExt.h"
        if not os.path.exists(lib) or not os.path.exists(nvtx):
            self.skipTest("needs libcuclimb.so (CUCLIMB_LIB) and the CUDA toolkit's NVTX headers")
        src = self.path("errlog.cpp")
        with open(src, "w") as f:
            f.write("""#include <nvtx3/nvToolsExt.h>
#include <cstdio>
int main() {
  for (int i = 0; i < 10; ++i) { nvtxRangePushA("iteration"); nvtxRangePop(); }
  std::fprintf(stderr, "app: warning: disk almost full\\n");
  for (int i = 0; i < 10; ++i) { nvtxRangePushA("iteration"); nvtxRangePop(); }
}
""")
        exe = self.path("errlog")
        subprocess.run(["g++", "-I/usr/local/cuda/include", src, "-o", exe, "-ldl"], check=True,
                       timeout=300)
        out = self.path("t.trace")
        env = dict(os.environ, LD_PRELOAD=lib, CUCLIMB_OUTPUT=out)
        subprocess.run(["sh", "-c", f"exec {exe} 2>&-"], env=env, timeout=120)
        r = run("info", out, "--json", "-")
        self.assertExit(r, 0)
        self.assertEqual(json.loads(r.stdout)["counts"].get("push"), 20)


def main():
    suite = unittest.TestLoader().loadTestsFromModule(sys.modules[__name__])
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    sys.exit(0 if result.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
