#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The HTML reports in a real browser (Debian's headless chromium through chromedriver).

For each page (a long hostile analyze report, a realistic one, a diff): no console errors, the
charts and tables are in the DOM, sorting and hover work, every injection attempt planted in the
trace shows as text, and the 1500-iteration page is interactive within 2 s. Screenshots go to
ARTIFACT_DIR. Exit 77 (skipped) only when chromium or chromedriver is not installed.

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

PAGES = {}
DRIVER_INSTANCE = None


def w(name):
    return os.path.join(WORK.name, name)


def setUpModule():
    global DRIVER_INSTANCE
    subprocess.run([MAKE_TRACES, WORK.name], check=True, timeout=300)
    for name, trace in (("hostile", "hostile.trace"), ("climb", "climb.trace")):
        subprocess.run([CUCLIMB, "analyze", w(trace), "--html", w(name + ".html"), "--quiet"], check=True, timeout=300)
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


class HostileReport(Page, unittest.TestCase):
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


class ClimbReport(Page, unittest.TestCase):
    name = "climb"

    def test_verdict_and_accumulator(self):
        self.assertEqual(self.js("return document.getElementById('verdict').textContent"), "climbing")
        self.assertIn("Adam::step_retain", self.js("return document.getElementById('accumulators').innerText"))
        self.assertIn("NVIDIA H200", self.js("return document.getElementById('gpu').textContent"))


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


if __name__ == "__main__":
    result = unittest.main(verbosity=2, exit=False).result
    sys.exit(0 if result.wasSuccessful() else 1)
