"""JupyterLab's own load with and without the extensions the course never uses (A/B).

Two JupyterLab servers as ``make lab`` starts them (:func:`bench_lessons_browser.jupyter_lab`),
one with JupyterLab's defaults, one with :data:`labkit.serve.labconfig.DISABLED_EXTENSIONS`
disabled (its own ``JUPYTER_CONFIG_DIR``'s ``labconfig/page_config.json``, the file
``jupyter labextension disable`` writes). A lesson is opened on each in turn (A, B, A, B, ...:
the shared machine's load drifts alike for both) in a fresh browser context and kernel, and
the phases of :func:`bench_lessons_browser.open_lesson` are recorded (JupyterLab's shell drawn,
notebook shown, kernel idle, first chart, kernel CPU at the first chart), with the load average.

Run: ``.venv/bin/python benchmarks/bench_lab_load.py [--lesson 03] [--repeat 3]``; writes
``benchmarks/results/lab_load.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_lessons_browser import jupyter_lab, open_lesson, shutdown_kernels
from benchmarks.harness import ROOT, save
from labkit.serve.labconfig import page_config
from labkit.serve.lessons import discover
from tests.browser.conftest import CHROMIUM, FLAGS


def main() -> None:
    """Open one lesson ``--repeat`` times on each server, alternating; print and save medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lesson", default="03")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    lesson = next(le for le in discover() if le.number == args.lesson)
    from playwright.sync_api import sync_playwright

    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "labkit")], check=True,
                   stdout=subprocess.DEVNULL)
    opens: dict[str, list[dict[str, Any]]] = {"defaults": [], "disabled": []}
    with tempfile.TemporaryDirectory(prefix="bench-lab-load-") as tmp, \
            contextlib.ExitStack() as stack:
        servers = {}
        for variant in opens:
            base = Path(tmp) / variant
            root = base / "notebooks"
            shutil.copytree(ROOT / "notebooks", root)
            config = base / "config"
            (config / "labconfig").mkdir(parents=True)
            if variant == "disabled":
                (config / "labconfig" / "page_config.json").write_text(
                    json.dumps(page_config()))
            os.environ["JUPYTER_CONFIG_DIR"] = str(config)
            servers[variant] = stack.enter_context(jupyter_lab(root, base / "lab.log"))
        p = stack.enter_context(sync_playwright())
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        stack.callback(browser.close)
        for _ in range(args.repeat):
            for variant, (url, pid) in servers.items():
                ctx = browser.new_context(viewport={"width": 1280, "height": 900},
                                          locale="ko-KR")
                try:
                    load = round(os.getloadavg()[0], 2)
                    marks = open_lesson(ctx.new_page(), url, lesson, pid)
                    opens[variant].append({**marks, "loadavg": load})
                finally:
                    ctx.close()
                    shutdown_kernels(url)
    medians = {v: {k: round(statistics.median(o[k] for o in runs), 2) for k in runs[0]}
               for v, runs in opens.items()}
    for variant, m in medians.items():
        print(f"{variant:<10}", "  ".join(f"{k}={v}" for k, v in m.items()))
    save("lab_load", {"lesson": lesson.stem, "repeat": args.repeat,
                      "disabled_extensions": sorted(page_config()["disabledExtensions"]),
                      "medians": medians, "opens": opens})


if __name__ == "__main__":
    main()
