#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The HTML reports in a real browser (Debian's headless chromium through chromedriver).

For each page (a long hostile analyze report, a realistic one, the bundled H200 trace, a memory
creep with sampled GPU records, a diff): no console errors, the charts and tables are in the
DOM, sorting and hover work, every injection attempt planted in the trace shows as text, and the
1500-iteration page is interactive within 2 s. The first screen (1280 x 1000) of every report
holds the verdict, the cause and the accumulator table; charts label their x axis "iteration",
use binary byte ticks, show a 12.3 -> 12.7 MiB growth across their height, draw iterations
without GPU records as gaps and turn an all-zero chart into a sentence. Screenshots (first screen
and whole page of each, and the terminal reports) go to ARTIFACT_DIR; a PyTorch recording
(tests/report/traces) is one of the pages. With CUCLIMB_EXTRA_TRACES=DIR
every *.trace there (real recordings, e.g. PyTorch on the H200) is rendered and photographed too.
Exit 77 (skipped) only when chromium or chromedriver is not installed.

The golden traces (tests/golden: marks, launch-period iterations, ranks, a cut trace, JSON Lines)
are rendered too, each checked for console errors.

Usage: browser_test.py CUCLIMB MAKE_REPORT_TRACES ARTIFACT_DIR GOLDEN_DIR
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

SKIP = 77


def find(*names):
    for n in names:
        p = shutil.which(n) or (n if os.path.isabs(n) and os.access(n, os.X_OK) else None)
        if p:
            return p
    return None


CHROMIUM = find("chromium", "chromium-browser", "/usr/lib/chromium/chromium")
DRIVER = find("chromedriver", "/usr/lib/chromium/chromedriver")
if CHROMIUM is None or DRIVER is None:
    print(f"SKIP: chromium ({CHROMIUM}) or chromedriver ({DRIVER}) is not installed "
          "(apt-get install chromium chromium-driver python3-selenium)")
    sys.exit(SKIP)

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
except ImportError:
    # Debian's python3-selenium is in the system interpreter; a virtualenv or pyenv python on
    # PATH does not see it.
    system = "/usr/bin/python3"
    if os.path.realpath(sys.executable) != os.path.realpath(system) and os.path.exists(system):
        os.execv(system, [system, *sys.argv])
    print("FAIL: chromium is installed but python3-selenium is not (apt-get install python3-selenium)")
    sys.exit(1)

CUCLIMB, MAKE_TRACES, ARTIFACTS, GOLDEN = sys.argv[1:5]
del sys.argv[1:5]
WORK = tempfile.TemporaryDirectory(prefix="cuclimb-browser-")

# Planted by tests/report/report_traces.h: each must appear as text, none may run.
HOSTILE_KERNEL = "</script><script>window.__pwned=1</script>"
HOSTILE_RANGE = '<img src=x onerror="window.__pwned=1">'
HOSTILE_FRAME = '<svg onload="window.__pwned=1">::alloc'
HOSTILE_CMD = "train.py --tag '\"><script>window.__pwned=1</script><!--"
HOSTILE_THREAD = '<iframe srcdoc="<script>parent.__pwned=1</script>">'
ENTITY_RANGE = "a &lt;b&gt; &amp; c"
LOAD_BUDGET_MS = 2000
SIZE_BUDGET = 10 << 20

# A PyTorch recording on the H200 (tests/programs/torch_train.py --keep-losses, caching allocator,
# --stacks python): the kept losses make the pool grow by a 2 MiB segment every 2 iterations.
TORCH_TRACE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "traces", "torch-keep-losses.trace")
PAGES = {}
EXTRA = []
DRIVER_INSTANCE = None


def w(name):
    return os.path.join(WORK.name, name)


def setUpModule():
    global DRIVER_INSTANCE
    subprocess.run([MAKE_TRACES, WORK.name], check=True, timeout=300)
    for name, trace in (("hostile", w("hostile.trace")), ("climb", w("climb.trace")),
                        ("creep", w("creep.trace")), ("bundled", os.path.join(GOLDEN, "h200-cubecl-climb.trace")),
                        ("torch", TORCH_TRACE)):
        subprocess.run([CUCLIMB, "analyze", trace, "--html", w(name + ".html"), "--quiet"], check=True, timeout=300)
        PAGES[name] = w(name + ".html")
    extra = os.environ.get("CUCLIMB_EXTRA_TRACES")
    if extra and os.path.isdir(extra):
        for f in sorted(os.listdir(extra)):
            if f.endswith(".trace"):
                name = "extra-" + f[:-6]
                r = subprocess.run([CUCLIMB, "analyze", os.path.join(extra, f), "--html", w(name + ".html"), "--quiet"],
                                   timeout=300)
                if r.returncode in (0, 3):
                    EXTRA.append(name)
                    PAGES[name] = w(name + ".html")
    subprocess.run([CUCLIMB, "diff", w("flat.trace"), w("climb.trace"), "--html", w("diff.html"), "--quiet"],
                   check=True, timeout=300)
    PAGES["diff"] = w("diff.html")
    os.makedirs(ARTIFACTS, exist_ok=True)
    o = Options()
    o.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1280,1000", "--user-data-dir=" + w("profile"), "--no-first-run"):
        o.add_argument(a)
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    DRIVER_INSTANCE = webdriver.Chrome(service=Service(DRIVER), options=o)


def tearDownModule():
    if DRIVER_INSTANCE is not None:
        DRIVER_INSTANCE.quit()
    WORK.cleanup()


class Page:
    """Checks for every page; mixed into one TestCase per page."""
    name = None

    @classmethod
    def setUpClass(cls):
        cls.d = DRIVER_INSTANCE
        cls.d.get_log("browser")  # drop messages of earlier pages
        cls.d.get("file://" + PAGES[cls.name])
        deadline = time.time() + 30
        while cls.d.execute_script("return document.body.getAttribute('data-ready')") != "1":
            if time.time() > deadline:
                raise AssertionError(f"{cls.name}: the page never finished rendering")
            time.sleep(0.02)
        cls.ready_ms = int(cls.d.execute_script("return document.body.getAttribute('data-ready-ms')"))
        cls.size = os.path.getsize(PAGES[cls.name])
        print(f"\n{cls.name}.html: {cls.size / 1e6:.2f} MB, interactive after {cls.ready_ms} ms", flush=True)

    @classmethod
    def tearDownClass(cls):
        cls.d.execute_script("window.scrollTo(0, 0)")
        cls.d.save_screenshot(os.path.join(ARTIFACTS, cls.name + "-first-screen.png"))
        height = cls.d.execute_script("return document.documentElement.scrollHeight")
        cls.d.set_window_size(1280, min(int(height) + 40, 16000))
        path = os.path.join(ARTIFACTS, cls.name + ".png")
        cls.d.save_screenshot(path)
        cls.d.set_window_size(1280, 1000)
        print(f"screenshot: {path}", flush=True)

    def js(self, script, *args):
        return self.d.execute_script(script, *args)

    def test_no_console_errors(self):
        # After interacting (the other tests) as well: checked again at the end of each class.
        errors = [e for e in self.d.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
        self.assertEqual(errors, [])

    def test_nothing_injected_ran_or_rendered(self):
        self.assertIsNone(self.js("return window.__pwned"))
        self.assertEqual(self.js("return document.querySelectorAll('img, iframe, object, embed, foreignObject').length"), 0)
        self.assertEqual(self.js("return document.scripts.length"), 2)
        self.assertEqual(self.js("return document.querySelectorAll('[onerror], [onload], [onmouseover]').length"), 0)

    def test_size(self):
        self.assertLess(self.size, SIZE_BUDGET)

    def tearDown(self):
        errors = [e for e in self.d.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
        self.assertEqual(errors, [], "console errors while testing")


def load(d, path):
    d.get_log("browser")
    d.get("file://" + path)
    deadline = time.time() + 30
    while d.execute_script("return document.body.getAttribute('data-ready')") != "1":
        if time.time() > deadline:
            raise AssertionError(f"{path}: the page never finished rendering")
        time.sleep(0.02)


class FirstScreen:
    """What a report's first screen (1280 x 1000, not scrolled) must hold."""

    def on_first_screen(self, selector):
        return self.js("""
            const e = document.querySelector(arguments[0]);
            if (!e) return false;
            const r = e.getBoundingClientRect();
            return r.height > 0 && r.top >= 0 && r.top < window.innerHeight;""", selector)

    def test_first_screen_holds_verdict_cause_and_accumulators(self):
        self.js("window.scrollTo(0, 0)")
        self.assertTrue(self.on_first_screen("#verdict"))
        self.assertTrue(self.on_first_screen("#what"))
        if self.js("return document.getElementById('verdict').textContent") == "climbing":
            self.assertTrue(self.on_first_screen("#cause"))
        self.assertTrue(self.on_first_screen("#accumulators table, #no-accumulators"))
        if self.js("return !!document.querySelector('#accumulators details.evidence')"):
            # The first accumulator's evidence is open, not behind a click.
            self.assertTrue(self.js("return document.querySelector('#accumulators details.evidence').open"))

    def test_every_chart_labels_its_x_axis(self):
        charts = self.js("return Array.from(document.querySelectorAll('svg.chart')).filter(s => s.querySelector('rect.overlay')).length")
        labels = self.js("return Array.from(document.querySelectorAll('svg.chart text.axis-label')).filter(t => t.textContent === 'iteration').length")
        self.assertGreater(charts, 0)
        self.assertEqual(labels, charts)


class HostileReport(Page, FirstScreen, unittest.TestCase):
    name = "hostile"

    def test_loads_within_budget(self):
        self.assertLess(self.ready_ms, LOAD_BUDGET_MS)

    def test_injections_show_as_text(self):
        text = self.js("return document.body.innerText")
        for s in (HOSTILE_KERNEL, HOSTILE_RANGE, ENTITY_RANGE, HOSTILE_FRAME.split("::")[0]):
            self.assertIn(s, text)
        self.assertEqual(self.js("return document.getElementById('program').textContent"), HOSTILE_CMD)
        self.assertTrue(self.js("return document.title").startswith("cuclimb: " + HOSTILE_CMD[:20]))
        # Chart legends (SVG) and the range selector carry the names as text too.
        options = self.js("return Array.from(document.querySelectorAll('#range-select option')).map(o => o.textContent)")
        self.assertIn(HOSTILE_RANGE + " (climbing)", options)
        # The frame list is built when the evidence opens.
        self.js("document.querySelector('details.evidence').open = true")
        time.sleep(0.2)
        frames = self.js("return Array.from(document.querySelectorAll('ol.frames li')).map(li => li.textContent)")
        self.assertIn(HOSTILE_FRAME, frames)
        self.assertIsNone(self.js("return window.__pwned"))

    def test_every_part_is_there(self):
        for sid in ("ranges", "decomposition", "accumulators", "state", "lifetimes", "kernels", "overhead"):
            self.assertTrue(self.js(f"return !!document.getElementById('{sid}')"), sid)
        self.assertGreaterEqual(self.js("return document.querySelectorAll('svg.chart').length"), 7)
        self.assertGreaterEqual(self.js("return document.querySelectorAll('table.sortable-table').length"), 6)
        self.assertGreaterEqual(self.js("return document.querySelectorAll('#ranges tbody tr').length"), 37)
        self.assertEqual(self.js("return document.getElementById('verdict').textContent"), "climbing")
        self.assertIn("dropped 45 events", self.js("return document.getElementById('drops-banner').textContent"))

    def test_sorting(self):
        headers = self.d.find_elements(By.CSS_SELECTOR, "#ranges th")
        climb = next(h for h in headers if h.text.startswith("climb"))
        climb.click()
        self.assertEqual(climb.get_attribute("aria-sort"), "descending")
        first = self.js("return document.querySelector('#ranges tbody tr td').textContent")
        self.assertEqual(first, HOSTILE_RANGE)  # the range that climbs most
        climb.click()
        self.assertEqual(climb.get_attribute("aria-sort"), "ascending")
        self.assertNotEqual(self.js("return document.querySelector('#ranges tbody tr td').textContent"), HOSTILE_RANGE)

    def test_hover_shows_exact_values(self):
        overlay = self.d.find_element(By.CSS_SELECTOR, "#ranges svg.chart rect.overlay")
        ActionChains(self.d).move_to_element(overlay).perform()
        tip = self.d.find_element(By.ID, "tooltip")
        self.assertTrue(tip.is_displayed())
        self.assertRegex(tip.text, r"iteration \d+")
        self.assertIn("step:", tip.text)
        ActionChains(self.d).move_to_element(self.d.find_element(By.TAG_NAME, "h1")).perform()
        self.assertFalse(tip.is_displayed())

    def test_controls_redraw(self):
        self.js("const s = document.getElementById('state-metric'); s.value = 'live_handles'; s.dispatchEvent(new Event('change'))")
        self.assertGreater(self.js("return document.querySelectorAll('#state svg.chart path').length"), 1)
        self.js("const s = document.getElementById('range-select'); s.value = s.options[1].value; s.dispatchEvent(new Event('change'))")
        self.assertGreater(self.js("return document.querySelectorAll('#decomposition svg.chart').length"), 0)


class ClimbReport(Page, FirstScreen, unittest.TestCase):
    name = "climb"

    def test_verdict_and_accumulator(self):
        self.assertEqual(self.js("return document.getElementById('verdict').textContent"), "climbing")
        self.assertIn("Adam::step_retain", self.js("return document.getElementById('accumulators').innerText"))
        self.assertIn("NVIDIA H200", self.js("return document.getElementById('gpu').textContent"))


MIB = 1 << 20


def tick_bytes(text):
    num, unit = text.split(" ")
    return float(num) * {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[unit]


class BundledReport(Page, FirstScreen, unittest.TestCase):
    """The bundled H200 trace (recorded with or without call stacks)."""
    name = "bundled"

    def stacks_recorded(self):
        return "no call stack was recorded" not in self.js("return document.getElementById('where').textContent")

    def test_headline(self):
        self.assertEqual(self.js("return document.getElementById('verdict').textContent"), "climbing")
        self.assertIn("climbs", self.js("return document.getElementById('what').textContent"))
        cause = self.js("return document.getElementById('cause').textContent")
        # Two 512-byte allocations a cycle are kept; the call site's older survivors (the
        # persistent network's buffers, 1 KiB to 256 KiB) must not set the size.
        self.assertRegex(cause, r"2 cuMemAllocAsync allocations of (about )?512 B per iteration")
        self.assertIn("host code between CUDA calls", cause)
        advice = "cuclimb record --stacks fp --" in self.js("return document.getElementById('next').textContent")
        self.assertEqual(advice, not self.stacks_recorded())

    def test_evidence_has_a_call_stack_or_says_how_to_get_one(self):
        if self.stacks_recorded():
            frames = self.js("return Array.from(document.querySelectorAll('#accumulators details.evidence ol.frames li')).map(li => li.textContent)")
            self.assertGreater(len(frames), 0)
            return
        howto = self.js("return document.querySelector('#accumulators details.evidence .howto').textContent")
        self.assertIn("No call stack was recorded", howto)
        self.assertIn("cuclimb record --stacks fp -- cuclimb-adam", howto)

    def test_survivors_of_the_loop_are_drawn(self):
        # The retained allocations are freed at tear-down: they are survivors of the loop.
        self.assertTrue(self.js("return !!document.querySelector('#lifetimes svg[aria-label=\"survivors by allocation iteration\"]')"))
        rows = self.js("return Array.from(document.querySelectorAll('#accumulators details.evidence tbody tr')).map(r => r.textContent)")
        self.assertTrue(any("at tear-down, after the loop" in row for row in rows), rows)

    def test_gpu_gaps_break_the_line(self):
        # Kernel timing was sampled: the GPU line of the decomposition has many pieces, no zeros.
        d = self.js("""return Array.from(document.querySelectorAll('#decomposition svg.chart path'))
                         .map(p => p.getAttribute('d') || '').filter(d => d.indexOf('M') >= 0)
                         .find(d => (d.match(/M/g) || []).length > 5) || ''""")
        self.assertGreater(d.count("M"), 5)


class TorchReport(Page, FirstScreen, unittest.TestCase):
    """A PyTorch program recorded with Python stacks: the first screen names the user's line."""
    name = "torch"

    def test_headline_names_the_python_line(self):
        self.assertEqual(self.js("return document.getElementById('verdict').textContent"), "climbing")
        self.assertIn("cuMemAlloc_v2 allocation of 2 MiB", self.js("return document.getElementById('cause').textContent"))
        self.assertTrue(self.on_first_screen("#where"))
        self.assertRegex(self.js("return document.getElementById('where').textContent"), r"\(torch_train\.py:\d+\)")
        # Stacks were recorded: no advice to record them, and the evidence lists the frames.
        self.assertNotIn("--stacks", self.js("return document.getElementById('next').textContent"))
        frames = self.js("return Array.from(document.querySelectorAll('#accumulators details.evidence ol.frames li')).map(li => li.textContent)")
        self.assertTrue(any("torch_train.py" in f for f in frames), frames)


class CreepReport(Page, FirstScreen, unittest.TestCase):
    """12.3 -> 12.7 MiB of kept memory; sampled GPU records; no drops."""
    name = "creep"

    def test_byte_axis_is_binary_and_shows_the_growth(self):
        # Live bytes by memory kind (the state section's default): 12.3 MiB from the prologue plus
        # 4 KiB kept per iteration.
        self.assertEqual(self.js("return document.getElementById('state-metric').value"), "live_bytes")
        ticks = self.js("""const c = document.querySelector('#state svg.chart');
                           return Array.from(c.querySelectorAll('.axis text[text-anchor="end"]')).map(t => t.textContent)""")
        values = [tick_bytes(t) for t in ticks]
        self.assertGreaterEqual(len(values), 3, ticks)
        self.assertGreater(min(values), 12 * MIB, ticks)  # not from zero: the growth fills the chart
        self.assertLess(max(values), 13 * MIB, ticks)
        steps = {round(b - a) for a, b in zip(values, values[1:])}
        self.assertEqual(len(steps), 1, ticks)
        step = steps.pop()
        self.assertEqual(step & (step - 1), 0, f"{step} is not a power of two bytes: {ticks}")

    def test_all_zero_chart_is_a_sentence(self):
        zero = self.js("return Array.from(document.querySelectorAll('#overhead .chart-zero')).map(p => p.textContent)")
        self.assertIn("No events were dropped in any iteration.", zero)
        self.assertIsNone(self.js("return document.querySelector('#overhead svg[aria-label=\"drops\"]')"))


class DiffPage(Page, unittest.TestCase):
    name = "diff"

    def test_divergence(self):
        self.assertEqual(self.js("return document.getElementById('verdict').textContent"), "diverged")
        self.assertIn("iteration 0", self.js("return document.getElementById('first-divergence').textContent"))
        self.assertGreaterEqual(self.js("return document.querySelectorAll('table.sortable-table').length"), 5)
        self.assertGreaterEqual(self.js("return document.querySelectorAll('svg.chart').length"), 3)
        row = self.d.find_element(By.CSS_SELECTOR, "#ranges tbody tr")
        row.click()
        self.assertTrue(self.js("return document.querySelector('#ranges tbody tr').classList.contains('selected')"))


class GoldenPages(unittest.TestCase):
    """Every golden trace's report renders without a console error (ranks, marks, launch period,
    a cut trace, JSON Lines, no NVTX)."""

    def test_all(self):
        d = DRIVER_INSTANCE
        groups = {"ranks": ["rank0.trace", "rank1.trace"],
                  "ddp_straggler": ["ddp_rank1.trace", "ddp_rank0.trace"]}
        for name in sorted(os.listdir(GOLDEN)):
            if name.endswith((".trace", ".jsonl")) and not name.startswith(("rank", "ddp_rank")):
                groups[name] = [name]
        self.assertGreater(len(groups), 5)
        for label, traces in groups.items():
            with self.subTest(label):
                out = w("golden-" + label + ".html")
                r = subprocess.run([CUCLIMB, "analyze", *[os.path.join(GOLDEN, t) for t in traces], "--html", out, "--quiet"],
                                   capture_output=True, text=True, timeout=120)
                self.assertIn(r.returncode, (0, 3), r.stderr)  # 3: the cut trace
                d.get_log("browser")
                d.get("file://" + out)
                deadline = time.time() + 20
                while d.execute_script("return document.body.getAttribute('data-ready')") != "1":
                    self.assertLess(time.time(), deadline, label + ": never finished rendering")
                    time.sleep(0.02)
                if label == "ddp_straggler":  # the job's straggler, named by its recorded rank
                    banner = d.execute_script("const b = document.getElementById('straggler'); return b && b.textContent")
                    self.assertIn("rank 1 keeps", banner or "")
                    self.assertIn("rank 1: ", d.execute_script("return document.getElementById('rank-select').options[0].textContent"))
                if len(traces) > 1:  # switch to the second rank
                    d.execute_script("const s = document.getElementById('rank-select'); s.value = '1'; s.dispatchEvent(new Event('change'))")
                errors = [e for e in d.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
                self.assertEqual(errors, [], label)


class TerminalReport(unittest.TestCase):
    """The terminal reports of the bundled trace and the PyTorch one, photographed as a terminal
    shows them: what, cause, where and next first, every line within 100 columns."""

    def photograph(self, label, trace, shown):
        r = subprocess.run([CUCLIMB, "analyze", trace], capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertTrue(lines[2].startswith("what:"), lines[:4])
        self.assertTrue(any(line.startswith("cause:") for line in lines[:6]))
        self.assertTrue(any(line.startswith("where:") for line in lines[:8]))
        self.assertIn("next:", lines[:10])
        for line in lines:
            self.assertLessEqual(len(line), 100, line)
        page = w("terminal-" + label + ".html")
        escaped = r.stdout.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        with open(page, "w") as f:
            f.write("<!DOCTYPE html><meta charset=utf-8><body style='margin:0;background:#1e1e1e'>"
                    "<pre style='margin:0;padding:12px;color:#ddd;font:13px/1.35 monospace'>"
                    "$ cuclimb analyze " + shown + "\n" + escaped + "</pre>")
        d = DRIVER_INSTANCE
        d.get("file://" + page)
        d.set_window_size(1000, 900)
        d.save_screenshot(os.path.join(ARTIFACTS, "terminal-" + label + ".png"))
        d.set_window_size(1280, 1000)
        return r.stdout

    def test_bundled(self):
        self.photograph("bundled", os.path.join(GOLDEN, "h200-cubecl-climb.trace"),
                        "tests/golden/h200-cubecl-climb.trace")

    def test_torch(self):
        out = self.photograph("torch", TORCH_TRACE, "torch-keep-losses.trace")
        self.assertRegex(out, r"\nwhere: .*\(torch_train\.py:\d+\)")


class ExtraTraces(unittest.TestCase):
    """Real recordings (CUCLIMB_EXTRA_TRACES): render without errors; screenshots."""

    def test_all(self):
        d = DRIVER_INSTANCE
        for name in EXTRA:
            with self.subTest(name):
                load(d, PAGES[name])
                errors = [e for e in d.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
                self.assertEqual(errors, [], name)
                self.assertTrue(d.execute_script("return !!document.getElementById('what')"))
                d.save_screenshot(os.path.join(ARTIFACTS, name + "-first-screen.png"))


if __name__ == "__main__":
    result = unittest.main(verbosity=2, exit=False).result
    sys.exit(0 if result.wasSuccessful() else 1)
