"""A class on one machine: N students open the same lesson at once and move its main control.

The server runs as ``make present HOST=... LESSON=NN WARM=N`` would (labkit's voila config, a
warm pool of preheated kernels). Students arrive together, as at the start of a lesson:

- ``--students`` scripted students (websocket clients, no browser): GET the page (the notebook
  has already run in a warm kernel), connect the kernel websocket, fetch every widget's state the
  way the page's widget manager does (``jupyter.widget.control`` ``request_states``), then set
  the lesson's main control (``labkit/serve/lessons.py`` MAIN_INTERACTIONS) and wait for the new
  chart. "First render (server side)" is navigation -> widget state in hand: all the server does
  before a browser can draw; what is left is the browser parsing ~10 MB of JavaScript on the
  student's own PC.
- ``--browsers`` of them (default 3) are real headless chromium pages instead (on this machine,
  so they compete with the server for the same cores): navigation -> main chart drawn, and
  keypress -> chart changed.

Memory: resident memory of each kernel and of the server once every student is in.

Run: ``.venv/bin/python benchmarks/bench_classroom.py [--students 30] [--browsers 3]
[--lesson 03_goodput.ipynb] [--warm N] [--cold]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psutil

from benchmarks.harness import percentiles, save
from labkit.serve import CONFIG_DIR, serve_environment, voila_command
from labkit.serve.lessons import MAIN_INTERACTIONS, discover, main_interaction
from labkit.serve.processes import stop_process, wait_until_answers
from tests.browser.conftest import CHROMIUM, FLAGS, _free_port
from tests.browser.voila_client import (
    KernelClient,
    displayed_plots,
    fetch_page,
    find_widget,
    interaction_state,
    request_states,
)

TIMEOUT_S = 300


def _kernels(server: psutil.Process) -> list[psutil.Process]:
    out = []
    for child in server.children(recursive=True):
        try:
            if any("ipykernel" in part for part in child.cmdline()):
                out.append(child)
        except psutil.Error:
            continue
    return out


def _wait_pool_warm(server: psutil.Process, warm: int, timeout: float = 600) -> float:
    """Wait until ``warm`` kernels exist and have finished running the notebook; return s."""
    start = time.monotonic()
    last, still = -1.0, 0
    while time.monotonic() - start < timeout:
        kernels = _kernels(server)
        cpu = 0.0
        for k in kernels:
            try:
                cpu += sum(k.cpu_times()[:2])
            except psutil.Error:
                pass
        if len(kernels) >= warm and abs(cpu - last) < 0.05:
            still += 1
            if still >= 3:
                return time.monotonic() - start
        else:
            still = 0
        last = cpu
        time.sleep(1.0)
    raise TimeoutError("the warm pool did not settle")


def ws_student(base: str, notebook: str, go: threading.Event) -> dict[str, Any]:
    """One scripted student; returns timings (s) or the error."""
    interaction = main_interaction(notebook)
    go.wait()
    t0 = time.perf_counter()
    try:
        page = fetch_page(base, notebook, timeout=TIMEOUT_S)
        client = KernelClient(base, page.kernel_id, timeout=TIMEOUT_S)
        states = request_states(client)
        first_render = time.perf_counter() - t0
        widget = find_widget(states, interaction.widget)
        update = interaction_state(states[widget], interaction.how, interaction.value)
        t1 = time.perf_counter()
        if update is None:
            answers = client.iopub_only(client.comm_msg(
                widget, {"method": "custom", "content": {"event": "click"}}))
        else:
            answers = client.set_state(widget, update)
        if not displayed_plots(answers):
            raise RuntimeError("the control changed no chart")
        change = time.perf_counter() - t1
        client.close()
        return {"html_s": page.complete_s, "first_render_s": first_render, "change_s": change}
    except Exception as err:  # a failed page is a result, not a crash of the benchmark
        return {"error": f"{type(err).__name__}: {err}"}


async def _browser_students(base: str, notebook: str, n: int, go: threading.Event) -> list[dict]:  # type: ignore[type-arg]
    from playwright.async_api import async_playwright

    interaction = main_interaction(notebook)
    chart = f".{interaction.chart} .js-plotly-plot"
    results: list[dict] = []  # type: ignore[type-arg]
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)

        async def one() -> dict:  # type: ignore[type-arg]
            ctx = await browser.new_context(viewport={"width": 1280, "height": 900})
            page = await ctx.new_page()
            t0 = time.perf_counter()
            try:
                await page.goto(f"{base}voila/render/{notebook}", wait_until="commit",
                                timeout=TIMEOUT_S * 1000)
                await page.wait_for_selector(f"{chart} .main-svg", timeout=TIMEOUT_S * 1000)
                first = time.perf_counter() - t0
                before = await page.evaluate(
                    "(c) => JSON.stringify(document.querySelector(c).data)", chart)
                box = page.locator(f".{interaction.widget} input").first
                t1 = time.perf_counter()
                await box.fill(f"{interaction.value:g}" if isinstance(interaction.value, float)
                               else str(interaction.value))
                await box.press("Enter")
                await page.wait_for_function(
                    "([c, b]) => JSON.stringify(document.querySelector(c).data) !== b",
                    arg=[chart, before], timeout=TIMEOUT_S * 1000)
                change = time.perf_counter() - t1
                text = await page.inner_text("body")
                if "Error displaying widget" in text or "Traceback" in text:
                    return {"error": "error text on the page"}
                return {"browser_first_render_s": first, "browser_change_s": change}
            except Exception as err:
                return {"error": f"{type(err).__name__}: {err}"}
            finally:
                await ctx.close()

        await asyncio.get_running_loop().run_in_executor(None, go.wait)
        results = list(await asyncio.gather(*(one() for _ in range(n))))
        await browser.close()
    return results


def main() -> None:
    """Run one class and save ``benchmarks/results/classroom.json``."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--browsers", type=int, default=3)
    first = next(le.name for le in discover() if le.stem in MAIN_INTERACTIONS)
    parser.add_argument("--lesson", default=first)
    parser.add_argument("--warm", type=int, default=None, help="warm kernels (default: class size)")
    parser.add_argument("--cold", action="store_true", help="no preheating")
    args = parser.parse_args()
    if args.browsers and not Path(CHROMIUM).exists():
        sys.exit(f"{CHROMIUM} not found")
    n_ws = args.students - args.browsers
    warm = 0 if args.cold else (args.students if args.warm is None else args.warm)
    port = _free_port()
    argv = voila_command(port=port, warm={args.lesson: warm} if warm else None)
    env = {**os.environ, "LABKIT_GPU": os.environ.get("LABKIT_GPU", "sim:H100-80GB"),
           **serve_environment(max_kernels=args.students + warm + 5)}
    log_path = Path("/tmp") / f"bench-classroom-{port}.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, cwd=CONFIG_DIR, stdout=log, stderr=subprocess.STDOUT,
                                env=env)
    base = f"http://127.0.0.1:{port}/"
    server = psutil.Process(proc.pid)
    try:
        wait_until_answers(base + "voila/api/contents", proc, timeout_s=120, what="voila",
                           log_path=log_path)
        warm_s = _wait_pool_warm(server, warm) if warm else 0.0
        idle_kernels_mib = [k.memory_info().rss / 2**20 for k in _kernels(server)]
        go = threading.Event()
        with ThreadPoolExecutor(max_workers=max(n_ws, 1) + 1) as pool:
            browser_future = pool.submit(asyncio.run, _browser_students(
                base, args.lesson, args.browsers, go)) if args.browsers else None
            futures = [pool.submit(ws_student, base, args.lesson, go) for _ in range(n_ws)]
            time.sleep(1.0)
            start = time.perf_counter()
            go.set()
            ws_results = [f.result() for f in futures]
            browser_results = browser_future.result() if browser_future else []
            wall = time.perf_counter() - start
        kernels = _kernels(server)
        kernel_mib = sorted(k.memory_info().rss / 2**20 for k in kernels)
        server_mib = server.memory_info().rss / 2**20
        total_mib = server_mib + sum(kernel_mib)
    finally:
        stop_process(proc, timeout_s=30)

    def ms(rows: list[dict], key: str) -> dict[str, float] | None:  # type: ignore[type-arg]
        values = [r[key] * 1000 for r in rows if key in r]
        return percentiles(values) if values else None

    errors = [r["error"] for r in ws_results + browser_results if "error" in r]
    load = os.getloadavg()
    save("classroom" + ("_cold" if args.cold else ""), {
        "lesson": args.lesson, "students": args.students, "browser_students": args.browsers,
        "warm_kernels": warm, "pool_warm_after_s": round(warm_s, 1),
        "cpu_count": os.cpu_count(), "loadavg_after": [round(x, 2) for x in load],
        "wall_s": round(wall, 1),
        "ws_html_complete": ms(ws_results, "html_s"),
        "ws_first_render_server_side": ms(ws_results, "first_render_s"),
        "ws_control_to_chart": ms(ws_results, "change_s"),
        "browser_first_render": ms(browser_results, "browser_first_render_s"),
        "browser_control_to_chart": ms(browser_results, "browser_change_s"),
        "failed_pages": len(errors), "errors": errors[:10],
        "kernels": len(kernel_mib),
        "kernel_rss_mib": {"median": round(statistics.median(kernel_mib), 1),
                           "max": round(max(kernel_mib), 1)} if kernel_mib else None,
        "idle_warm_kernel_rss_mib": round(statistics.median(idle_kernels_mib), 1)
        if idle_kernels_mib else None,
        "server_rss_mib": round(server_mib, 1),
        "total_rss_mib": round(total_mib, 1),
        "server_log": str(log_path),
    })


if __name__ == "__main__":
    main()
