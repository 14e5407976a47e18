"""Voila time to first render per lesson, cold and with a preheated kernel.

"First render" = from navigation to the first plotly plot drawn in Debian's chromium (the app is
usable then). Cold: a fresh kernel per page. Preheated: voila's kernel pool
(``--preheat_kernel=True``) with one warm kernel for the lesson, after the pool has finished
executing the notebook.

Run: ``.venv/bin/python benchmarks/bench_voila.py [notebook ...]``
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import ROOT, save
from labkit.serve import CONFIG_DIR, voila_command
from tests.browser.conftest import CHROMIUM, FLAGS, _free_port

REPEAT = 3


def _start(warm: dict[str, int] | None) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    argv = voila_command(port=port, warm=warm)
    proc = subprocess.Popen(argv, cwd=CONFIG_DIR, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ})
    url = f"http://127.0.0.1:{port}/"
    for _ in range(200):
        try:
            urllib.request.urlopen(url + "voila/api/contents", timeout=2).close()
            return proc, url
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise RuntimeError("voila did not start")


def _first_render_s(browser: object, url: str) -> float:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
    page = ctx.new_page()
    start = time.perf_counter()
    page.goto(url, wait_until="commit", timeout=180_000)
    page.wait_for_selector(".js-plotly-plot .main-svg", timeout=180_000)
    elapsed = time.perf_counter() - start
    ctx.close()
    return elapsed


def main() -> None:
    """Measure each notebook (or those named on the command line)."""
    from playwright.sync_api import sync_playwright

    names = sys.argv[1:] or sorted(p.name for p in (ROOT / "notebooks").glob("[0-9]*.ipynb"))
    results: dict[str, dict[str, float]] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        for name in names:
            proc, url = _start(None)
            try:
                cold = [_first_render_s(browser, f"{url}voila/render/{name}")
                        for _ in range(REPEAT)]
            finally:
                proc.terminate()
                proc.wait()
            proc, url = _start({name: 1})
            try:
                warm = []
                for _ in range(REPEAT):
                    # "pool filled" is logged before the notebook has run; a used kernel's
                    # replacement starts 20 s later (labkit.serve.server.POOL_REFILL_DELAY_S)
                    time.sleep(45)
                    warm.append(_first_render_s(browser, f"{url}voila/render/{name}"))
            finally:
                proc.terminate()
                proc.wait()
            results[name] = {
                "cold_median_s": round(statistics.median(cold), 2),
                "cold_max_s": round(max(cold), 2),
                "preheated_median_s": round(statistics.median(warm), 2),
                "preheated_max_s": round(max(warm), 2),
            }
            # saved after each lesson: the whole run takes ~3 min per lesson (pool refills)
            save("voila_first_render", {"repeat": REPEAT, "results": results})
        browser.close()


if __name__ == "__main__":
    main()
