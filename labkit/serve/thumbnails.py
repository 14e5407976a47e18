"""``python -m labkit.serve.thumbnails [NN ...]`` (``make thumbnails``): gallery pictures.

Serves the lessons with voila as ``make present`` does, opens each in Debian's chromium
(``/usr/bin/chromium`` or ``$LABKIT_CHROMIUM``, driven by Playwright; nothing is downloaded) and
saves a small PNG of its main chart (``MAIN_INTERACTIONS``; the first chart when the lesson has
no entry yet) as ``labkit/serve/jupyter/nbconvert/templates/labkit/static/thumbnails/<stem>.png``.
Commit the PNGs: the gallery shows the lesson number where a lesson has none.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from labkit.serve import CONFIG_DIR, notebooks_dir, voila_command
from labkit.serve.lessons import Lesson, MainInteraction, discover, main_interaction
from labkit.serve.processes import stop_process, wait_until_answers
from labkit.serve.server import THUMBNAILS

if TYPE_CHECKING:  # playwright is a test extra; imported only when the tool runs
    from playwright.sync_api import ViewportSize

CHROMIUM = os.environ.get("LABKIT_CHROMIUM", "/usr/bin/chromium")
# An offline browser: every host but this machine fails at once (as in the browser tests).
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage",
         "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost"]
# charts about as wide as a gallery card allows
VIEWPORT: ViewportSize = {"width": 760, "height": 900}
SCALE = 0.6  # device scale factor: ~450 px wide PNGs, small enough to commit
TIMEOUT_MS = 180_000
#: How long voila may take to answer after it starts. [s]
START_TIMEOUT_S = 120


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# A chart with something to see: some trace has a positive number (an idle chart is all zeros).
_HAS_DATA = ("(g) => (g._fullData || g.data || []).some(d =>"
             " [d.orientation === 'h' ? 'x' : 'y', 'values'].some(k =>"
             " (Array.isArray(d[k]) || ArrayBuffer.isView(d[k]))"
             " && Array.from(d[k]).some(v => typeof v === 'number' && v > 0)))")


def _chart_selector(lesson: Lesson) -> str:
    try:
        return f".{main_interaction(lesson).chart} .js-plotly-plot"
    except LookupError:
        print(f"labkit: {lesson.stem} has no MAIN_INTERACTIONS entry; using its first chart",
              flush=True)
        return ".js-plotly-plot"


def _value_text(value: float | str | bool) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def perform(page: object, interaction: MainInteraction) -> None:
    """Do a lesson's main interaction in a Playwright page, the way a student would.

    Used by the thumbnails (a chart that starts empty) and the generic browser tests.
    """
    widget = f".{interaction.widget}"
    how, text = interaction.how, _value_text(interaction.value)
    if how == "fill":
        box = page.locator(f"{widget} input").first  # type: ignore[attr-defined]
        box.fill(text)
        box.press("Enter")
    elif how == "slider":
        readout = page.locator(f"{widget} .widget-readout").first  # type: ignore[attr-defined]
        readout.click()
        readout.press("Control+A")
        readout.type(text)
        readout.press("Enter")
    elif how == "select":
        page.locator(f"{widget} select").first.select_option(label=text)  # type: ignore[attr-defined]
    elif how == "toggle":
        checkbox = page.locator(f"{widget} input[type=checkbox]")  # type: ignore[attr-defined]
        (checkbox.first if checkbox.count() else page.locator(widget).first).click()  # type: ignore[attr-defined]
    else:
        page.locator(widget).first.click()  # type: ignore[attr-defined]


def capture(lessons: list[Lesson], out_dir: Path = THUMBNAILS) -> list[Path]:
    """Screenshot each lesson's main chart into ``out_dir``; return the files written.

    Raises
    ------
    FileNotFoundError
        If chromium is missing.
    RuntimeError
        If voila does not start.
    """
    if not Path(CHROMIUM).exists():
        raise FileNotFoundError(f"{CHROMIUM} not found: `make system-deps` installs chromium")
    from playwright.sync_api import sync_playwright

    port = _free_port()
    argv = voila_command(port=port)
    env = {**os.environ, "LABKIT_GPU": os.environ.get("LABKIT_GPU", "sim:H100-80GB")}
    proc = subprocess.Popen(argv, cwd=CONFIG_DIR, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env)
    url = f"http://127.0.0.1:{port}/"
    written = []
    try:
        wait_until_answers(url + "voila/api/contents", proc, timeout_s=START_TIMEOUT_S,
                           what="voila")
        out_dir.mkdir(parents=True, exist_ok=True)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
            for lesson in lessons:
                ctx = browser.new_context(viewport=VIEWPORT, device_scale_factor=SCALE,
                                          locale="ko-KR")
                page = ctx.new_page()
                page.goto(f"{url}voila/render/{lesson.name}", wait_until="commit",
                          timeout=TIMEOUT_MS)
                chart = page.locator(_chart_selector(lesson)).first
                chart.locator(".main-svg").first.wait_for(timeout=TIMEOUT_MS)
                if not chart.evaluate(_HAS_DATA):  # e.g. lesson 01: idle until a scenario runs
                    perform(page, main_interaction(lesson))
                    page.wait_for_timeout(8000)
                    chart = page.locator(_chart_selector(lesson)).last
                page.wait_for_timeout(800)  # plotly's transitions
                path = out_dir / f"{lesson.stem}.png"
                chart.screenshot(path=str(path))
                written.append(path)
                print(f"labkit: {path} ({path.stat().st_size // 1024} KB)", flush=True)
                ctx.close()
            browser.close()
    finally:
        stop_process(proc, timeout_s=20)
    return written


def main(argv: list[str] | None = None) -> None:
    """Capture thumbnails for the lessons named (numbers or stems), or all of them."""
    parser = argparse.ArgumentParser(prog="python -m labkit.serve.thumbnails", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("lessons", nargs="*", help="lesson numbers or names (default: all)")
    args = parser.parse_args(argv)
    lessons = discover(notebooks_dir())
    if args.lessons:
        wanted = {x.removesuffix(".ipynb") for x in args.lessons}
        lessons = [le for le in lessons if le.number in wanted or le.stem in wanted]
        if not lessons:
            sys.exit(f"labkit: no lesson matches {args.lessons}")
    capture(lessons)


if __name__ == "__main__":
    main()
