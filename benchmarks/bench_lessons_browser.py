"""Lessons in JupyterLab, in a real browser: open -> first chart, control -> chart, arrow keys.

Issue 17's targets, measured the way a student meets them (Debian's ``/usr/bin/chromium`` driven
by Playwright, a JupyterLab started with ``make lab``'s options on loopback with a token):

- **open -> first chart**: from navigating to ``lab/tree/NN.ipynb`` (a fresh browser context,
  a fresh kernel) until the first plotly chart of the notebook is drawn (a ``.js-plotly-plot``
  with its ``.main-svg``), after *Run All* (``notebook:run-all-cells``, what the first cell tells
  the student to press) is given as soon as the notebook's kernel is ready. Goal < 5 s, kernel
  start included. The phases are saved too: JupyterLab's shell drawn, notebook shown, kernel
  idle, first chart, every cell run.
- **control -> chart**: the lesson's main control (``labkit/serve/lessons.py``
  MAIN_INTERACTIONS) changed N times, alternating between its new value and its default, the
  way a student does it (type + Enter, pick an option, click; a slider: one arrow-key step
  right, then one back, so the debounce wait is in the figure). Timed in the page: from the
  input event's ``timeStamp`` (the Enter key, the ``change`` of a dropdown, the click) to the
  ``MutationObserver`` callback that sees the new plot drawn under the main chart. Goal p95 <
  300 ms.
- **ten ArrowRight presses** on a slider (the main control when it is one; :data:`ARROW_SLIDERS`
  otherwise), 33 ms apart (keyboard auto-repeat): how many times the app recomputed
  (``LiveApp.computes``, read back from the kernel) and how many times the chart was redrawn.
  Goal: one.

The notebooks are served from a temporary copy (the checkout is not touched). The machine is
shared: the JSON records ``os.getloadavg()`` before and after each lesson, and the figures are
medians over ``--repeat`` opens.

Run: ``.venv/bin/python benchmarks/bench_lessons_browser.py [--lessons 03,05] [--quick]
[--repeat 3] [--changes 10]``; writes ``benchmarks/results/lessons_browser.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import ROOT, percentiles, save
from labkit.serve.lessons import Lesson, MainInteraction, discover, main_interaction
from labkit.serve.processes import stop_process, wait_until_answers
from tests.browser.conftest import CHROMIUM, FLAGS, _free_port

TOKEN = "bench-lessons-browser"
#: Issue 17's targets.
GOALS = {"first_chart_s": 5, "control_to_chart_p95_ms": 300, "arrow_recomputes": 1}
TIMEOUT_MS = 180_000
#: Lesson stem -> (slider control class, chart class) for the arrow-key test where the main
#: control is not a slider.
ARROW_SLIDERS: dict[str, tuple[str, str]] = {
    "03_goodput": ("lk-compare-goodput", "lk-compare-chart"),
}
#: Lesson stem -> the button that undoes a main "click" interaction (clicked on every other
#: change: a MIG start unit clicked twice is refused the second time and draws nothing).
UNDO_CLICKS: dict[str, str] = {"02_mig": "lk-board-clear"}
#: Pause after a change before the next one, so changes never overlap. [ms]
SETTLE_MS = 400

# Helpers installed in every page: the app, the notebook's kernel, and the timing probes.
PAGE_JS = r"""
(() => {
  const lk = window.__lk = {armed: false, t0: null, t1: null, tLast: null, updates: 0, keys: []};
  const stamp = (e) => { if (lk.armed && lk.t0 === null) lk.t0 = e.timeStamp;
    if (lk.armed && e.type === "keydown") lk.keys.push(e.timeStamp); };
  for (const kind of ["keydown", "pointerdown", "change"])
    document.addEventListener(kind, stamp, true);
  lk.panel = () => window.jupyterapp && window.jupyterapp.shell.currentWidget;
  lk.kernelIdle = () => { const p = lk.panel(); const s = p && p.sessionContext;
    return !!(s && s.isReady && s.session && s.session.kernel
              && s.session.kernel.status === "idle"); };
  lk.allRun = () => { const p = lk.panel(); if (!p || !p.content) return false;
    const prompts = [...p.node.querySelectorAll(".jp-CodeCell .jp-InputPrompt")];
    return prompts.length > 0 && prompts.every(e => /\[\d+\]/.test(e.textContent))
      && lk.kernelIdle(); };
  lk.exec = (code) => new Promise((resolve, reject) => {
    const future = lk.panel().sessionContext.session.kernel.requestExecute(
      {code, silent: false, store_history: false});
    let out = "";
    future.onIOPub = (msg) => {
      if (msg.header.msg_type === "stream") out += msg.content.text;
      if (msg.header.msg_type === "error") reject(new Error(msg.content.evalue));
    };
    future.done.then(() => resolve(out), reject);
  });
  lk.root = (css) => lk.panel().node.querySelector("." + css);
  // Watch the chart under `.css`: every newly drawn plot counts as one update; the first one
  // after arming stamps t1.
  lk.watch = (css) => {
    if (lk.observer) lk.observer.disconnect();
    const root = lk.root(css);
    const seen = new WeakSet();
    for (const g of root.querySelectorAll(".js-plotly-plot")) seen.add(g);
    lk.updates = 0;
    lk.observer = new MutationObserver(() => {
      for (const g of root.querySelectorAll(".js-plotly-plot")) {
        if (seen.has(g) || !g.querySelector(".main-svg")) continue;
        seen.add(g);
        lk.updates += 1;
        lk.tLast = performance.now();
        if (lk.armed && lk.t0 !== null && lk.t1 === null) lk.t1 = lk.tLast;
      }
    });
    lk.observer.observe(root, {childList: true, subtree: true});
  };
  lk.arm = () => { lk.t0 = null; lk.t1 = null; lk.tLast = null; lk.keys = []; lk.armed = true; };
})()
"""

COMPUTES_PY = """
import gc as _gc, json as _json
from labkit.ui.components import LiveApp as _LiveApp
print(_json.dumps({o.app_name: o.computes for o in _gc.get_objects()
                   if isinstance(o, _LiveApp)}))
"""


@contextlib.contextmanager
def jupyter_lab(root: Path, log_path: Path) -> Iterator[tuple[str, int]]:
    """JupyterLab as ``make lab`` starts it (its config, loopback, a token) over ``root``;
    yields its URL and process id.

    ``expose_app_in_browser`` lets the benchmark give JupyterLab's own commands (Run All).
    """
    port = _free_port()
    argv = [str(Path(sys.executable).with_name("jupyter")), "lab",
            "--config=labkit/serve/config/jupyter_server_config.py",
            f"--ServerApp.root_dir={root}", "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}", "--ServerApp.open_browser=False",
            f"--IdentityProvider.token={TOKEN}", "--LabApp.expose_app_in_browser=True"]
    if os.geteuid() == 0:
        argv.append("--allow-root")
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(root.parent / "runtime"),
           "LABKIT_GPU": os.environ.get("LABKIT_GPU", "sim:H100-80GB")}
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}/"
    try:
        wait_until_answers(f"{url}api/status?token={TOKEN}", proc, timeout_s=120,
                           what="jupyter lab", log_path=log_path, ok_status=200)
        yield url, proc.pid
    finally:
        stop_process(proc, timeout_s=15)


def kernel_cpu_s(server_pid: int, *, precise: bool = False) -> float | None:
    """CPU seconds (user + system) used so far by the server's kernels: the kernel's own work
    to first chart, which the machine's load does not stretch as it stretches wall time."""
    import psutil

    total, found = 0.0, False
    for child in psutil.Process(server_pid).children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if any("ipykernel" in part for part in child.cmdline()):
                times = child.cpu_times()
                total, found = total + times.user + times.system, True
    return (total if precise else round(total, 2)) if found else None


def _api(url: str, path: str, method: str = "GET") -> Any:
    req = urllib.request.Request(f"{url}api/{path}", method=method,
                                 headers={"Authorization": f"token {TOKEN}"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        body = resp.read()
    return json.loads(body) if body else None


def shutdown_kernels(url: str) -> None:
    """Stop every kernel of the server (each open starts from a fresh one)."""
    for kernel in _api(url, "kernels"):
        _api(url, f"kernels/{kernel['id']}", "DELETE")


def open_lesson(page: Any, url: str, lesson: Lesson, server_pid: int) -> dict[str, float]:
    """Open ``lesson`` in JupyterLab, Run All once its kernel is ready; return the phases [s]."""
    start = time.perf_counter()
    marks: dict[str, float] = {}

    def mark(name: str) -> None:
        marks[name] = round(time.perf_counter() - start, 3)

    # ?reset: an empty workspace, so a tab left open by the previous run is not restored
    page.goto(f"{url}lab/tree/{lesson.name}?reset&token={TOKEN}", wait_until="commit",
              timeout=TIMEOUT_MS)
    page.wait_for_selector("#jp-main-dock-panel", timeout=TIMEOUT_MS)
    mark("lab_shell_s")
    page.wait_for_function("() => !!window.jupyterapp", timeout=TIMEOUT_MS)
    page.evaluate(PAGE_JS)
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=TIMEOUT_MS)
    mark("notebook_shown_s")
    page.wait_for_function("() => window.__lk.kernelIdle()", timeout=TIMEOUT_MS, polling=50)
    mark("kernel_idle_s")
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.locator(".jp-NotebookPanel .js-plotly-plot .main-svg").first.wait_for(
        state="visible", timeout=TIMEOUT_MS)
    mark("first_chart_s")
    cpu = kernel_cpu_s(server_pid)
    if cpu is not None:
        marks["kernel_cpu_at_first_chart_s"] = cpu
    page.wait_for_function("() => window.__lk.allRun()", timeout=TIMEOUT_MS, polling=100)
    mark("all_cells_run_s")
    return marks


def _computes(page: Any) -> dict[str, int]:
    return dict(json.loads(page.evaluate("(c) => window.__lk.exec(c)", COMPUTES_PY)))


def _commit_change(page: Any, interaction: MainInteraction, text: str) -> None:
    """Prepare the change (type the text), arm the probe, then commit it (Enter, pick, click)."""
    widget = f".jp-NotebookPanel .{interaction.widget}"
    how = interaction.how
    if how == "fill":
        box = page.locator(f"{widget} input").first
        box.fill(text)
        page.evaluate("() => window.__lk.arm()")
        box.press("Enter")
    elif how == "slider":  # one arrow-key step on the focused handle: right, then back left
        handle = page.locator(f"{widget} .noUi-handle").first
        handle.focus()
        page.evaluate("() => window.__lk.arm()")
        handle.press("ArrowLeft" if text == "back" else "ArrowRight")
    elif how == "select":
        select = page.locator(f"{widget} select").first
        page.evaluate("() => window.__lk.arm()")
        select.select_option(label=text)
    else:
        target = page.locator(f"{widget} input[type=checkbox]")
        target = target.first if how == "toggle" and target.count() else page.locator(widget).first
        page.evaluate("() => window.__lk.arm()")
        target.click()


def _current_text(page: Any, interaction: MainInteraction) -> str:
    widget = f".jp-NotebookPanel .{interaction.widget}"
    if interaction.how == "fill":
        return str(page.locator(f"{widget} input").first.input_value())
    if interaction.how == "slider":
        return "back"
    if interaction.how == "select":
        return str(page.evaluate(
            "(w) => { const s = document.querySelector(w + ' select');"
            " return s.options[s.selectedIndex].text; }", widget))
    return ""


def control_to_chart(page: Any, interaction: MainInteraction, n: int,
                     undo: str | None = None, server_pid: int | None = None) -> dict[str, Any]:
    """Change the main control ``n`` times; return the percentiles of input -> chart [ms].

    Every other change puts the default back (``undo``: the button that does it for a click).
    With ``server_pid``, also the kernel's CPU time per change (``kernel_cpu_ms``: what the
    change costs the kernel, however loaded the machine is).
    """
    value = interaction.value
    new = f"{value:g}" if isinstance(value, float) else str(value)
    old = _current_text(page, interaction)
    page.locator(f".jp-NotebookPanel .{interaction.chart}").first.scroll_into_view_if_needed()
    page.evaluate("(c) => window.__lk.watch(c)", interaction.chart)
    samples: list[float] = []
    cpu_ms: list[float] = []
    missed = 0
    for i in range(n):
        cpu_before = kernel_cpu_s(server_pid, precise=True) if server_pid else None
        if undo and i % 2:
            page.evaluate("() => window.__lk.arm()")
            page.locator(f".jp-NotebookPanel .{undo}").first.click()
        else:
            _commit_change(page, interaction, new if i % 2 == 0 or not old else old)
        try:
            page.wait_for_function("() => window.__lk.t1 !== null && window.__lk.t0 !== null",
                                   timeout=10_000, polling="raf")
        except Exception:  # a change that drew nothing is counted, not fatal
            missed += 1
            continue
        samples.append(float(page.evaluate("() => window.__lk.t1 - window.__lk.t0")))
        page.wait_for_timeout(SETTLE_MS)
        cpu_after = kernel_cpu_s(server_pid, precise=True) if server_pid else None
        if cpu_before is not None and cpu_after is not None:
            cpu_ms.append((cpu_after - cpu_before) * 1000)
    page.evaluate("() => { window.__lk.armed = false; }")
    size = page.evaluate(  # what each change ships and plotly redraws: the chart's JSON
        "(c) => { const all = window.__lk.root(c).querySelectorAll('.js-plotly-plot');"
        " const g = all[all.length - 1];"
        " return g ? JSON.stringify({data: g.data, layout: g.layout}).length : null; }",
        interaction.chart)
    return {**(percentiles(samples) if samples else {"n": 0}), "no_redraw": missed,
            "chart_json_bytes": size,
            "kernel_cpu_ms": round(statistics.median(cpu_ms), 1) if cpu_ms else None,
            "samples_ms": [round(s, 1) for s in samples]}


def arrow_steps(page: Any, slider: str, chart: str, presses: int = 10) -> dict[str, Any]:
    """Hold ArrowRight on ``slider`` for ``presses`` key events (auto-repeat, 33 ms apart, as
    a keyboard sends them); count the app's recomputes and the chart's redraws.

    The key events' spacing as the page saw them is saved (``key_gap_ms``): on a loaded
    machine the browser may deliver them further apart than 33 ms.
    """
    app = slider.removeprefix("lk-").split("-", 1)[0]
    handle = page.locator(f".jp-NotebookPanel .{slider} .noUi-handle").first
    handle.scroll_into_view_if_needed()
    page.evaluate("(c) => window.__lk.watch(c)", chart)
    before = _computes(page).get(app, 0)
    handle.focus()
    page.evaluate("() => window.__lk.arm()")
    for _ in range(presses):
        page.keyboard.down("ArrowRight")  # a second down while held is an auto-repeat
        page.wait_for_timeout(33)
    page.keyboard.up("ArrowRight")
    page.wait_for_timeout(1500)
    after = _computes(page).get(app, 0)
    probe = page.evaluate("() => ({keys: window.__lk.keys, last: window.__lk.tLast,"
                          " updates: window.__lk.updates})")
    keys = probe["keys"]
    gaps = [b - a for a, b in itertools.pairwise(keys)]
    return {"slider": slider, "presses": presses, "key_events": len(keys),
            "key_gap_ms": {"median": round(statistics.median(gaps), 1),
                           "max": round(max(gaps), 1)} if gaps else None,
            "recomputes": after - before, "chart_redraws": int(probe["updates"]),
            "last_key_to_chart_ms": round(probe["last"] - keys[-1], 1)
            if keys and probe["last"] is not None else None}


def _slider_for(lesson: Lesson, interaction: MainInteraction) -> tuple[str, str] | None:
    if interaction.how == "slider":
        return interaction.widget, interaction.chart
    return ARROW_SLIDERS.get(lesson.stem)


def bench_lesson(browser: Any, url: str, server_pid: int, lesson: Lesson, repeat: int,
                 changes: int) -> dict[str, Any]:
    """Open ``lesson`` ``repeat`` times (fresh context and kernel); drive it on the last open."""
    interaction = main_interaction(lesson)
    opens: list[dict[str, float]] = []
    result: dict[str, Any] = {"loadavg_before": [round(x, 2) for x in os.getloadavg()]}
    for i in range(repeat):
        ctx = browser.new_context(viewport={"width": 1280, "height": 900}, locale="ko-KR")
        try:
            page = ctx.new_page()
            opens.append(open_lesson(page, url, lesson, server_pid))
            if i == repeat - 1:
                result["control_to_chart"] = control_to_chart(page, interaction, changes,
                                                              UNDO_CLICKS.get(lesson.stem),
                                                              server_pid)
                slider = _slider_for(lesson, interaction)
                result["arrow_keys"] = arrow_steps(page, *slider) if slider else None
        finally:
            ctx.close()
            shutdown_kernels(url)
    result["opens"] = opens
    result["median"] = {k: round(statistics.median(o[k] for o in opens if k in o), 2)
                        for k in opens[0]}
    result["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    return result


def _table(results: dict[str, dict[str, Any]]) -> str:
    rows = [f"{'lesson':<18}{'shell':>7}{'kernel':>8}{'chart':>8}{'k.cpu':>7}{'all':>8}"
            f"{'ctl n':>6}{'ctl p50':>9}{'ctl p95':>9}{'k.ms':>7}{'arrows':>8}"]
    for stem, r in results.items():
        m, c, a = r["median"], r.get("control_to_chart") or {}, r.get("arrow_keys")
        rows.append(f"{stem:<18}{m['lab_shell_s']:>7.1f}{m['kernel_idle_s']:>8.1f}"
                    f"{m['first_chart_s']:>8.1f}"
                    f"{m.get('kernel_cpu_at_first_chart_s', float('nan')):>7.1f}"
                    f"{m['all_cells_run_s']:>8.1f}"
                    f"{c.get('n', 0):>6}{c.get('p50_ms', float('nan')):>9.0f}"
                    f"{c.get('p95_ms', float('nan')):>9.0f}"
                    f"{c.get('kernel_cpu_ms') or float('nan'):>7.0f}"
                    f"{(str(a['recomputes']) if a else '-'):>8}")
    return "\n".join(rows)


def main() -> None:
    """Measure the lessons (``--lessons`` to pick) and save ``lessons_browser.json``."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--lessons", default="", help="comma-separated numbers or stems")
    parser.add_argument("--quick", action="store_true", help="one open, four changes")
    parser.add_argument("--repeat", type=int, default=3, help="opens per lesson")
    parser.add_argument("--changes", type=int, default=10, help="main-control changes")
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        sys.exit(f"{CHROMIUM} not found: `make system-deps` installs chromium")
    wanted = {w.strip() for w in args.lessons.split(",") if w.strip()}
    lessons = [le for le in discover()
               if not wanted or le.number in wanted or le.stem in wanted or le.name in wanted]
    repeat, changes = (1, 4) if args.quick else (args.repeat, args.changes)
    from playwright.sync_api import sync_playwright

    # as `make lab` does: labkit's bytecode written ahead (see the Makefile's PYC)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "labkit")], check=True,
                   stdout=subprocess.DEVNULL)
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-lessons-") as tmp:
        root = Path(tmp) / "notebooks"
        shutil.copytree(ROOT / "notebooks", root)
        with jupyter_lab(root, Path(tmp) / "lab.log") as (url, pid), sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
            try:
                for lesson in lessons:
                    results[lesson.stem] = bench_lesson(browser, url, pid, lesson, repeat, changes)
                    save("lessons_browser", {  # after each lesson: a long run keeps its part
                        "repeat": repeat, "changes": changes, "cpu_count": os.cpu_count(),
                        "goals": GOALS, "results": results})
                    print(_table({lesson.stem: results[lesson.stem]}).splitlines()[-1],
                          flush=True)
            finally:
                browser.close()
    print(_table(results))


if __name__ == "__main__":
    main()
