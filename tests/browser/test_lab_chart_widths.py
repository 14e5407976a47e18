"""Lesson 04 run in JupyterLab (Run All, as a student does): no chart is wider than its output
area, in a narrow window (820 px) with the file browser open."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.conftest import RENDER_TIMEOUT_MS, _free_port, running_server
from tests.browser.test_chart_widths import OVERFLOW_JS

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "lab-chart-widths-test"
LESSON = "04_reliability.ipynb"


@pytest.fixture(scope="module")
def lab_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """JupyterLab with `make lab`'s options over a copy of the lesson; every cell rendered
    (no windowing), so each chart is in the page to be measured."""
    root = tmp_path_factory.mktemp("lab")
    shutil.copy(ROOT / "notebooks" / LESSON, root / LESSON)
    settings = root.parent / "settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    port = _free_port()
    argv = [str(Path(sys.executable).with_name("jupyter")), "lab",
            "--config=labkit/serve/config/jupyter_server_config.py",
            f"--ServerApp.root_dir={root}", "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}", "--ServerApp.open_browser=False",
            f"--IdentityProvider.token={TOKEN}"]
    if os.geteuid() == 0:
        argv.append("--allow-root")
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(root.parent / "runtime"),
           "JUPYTERLAB_SETTINGS_DIR": str(root.parent / "settings")}
    url = f"http://127.0.0.1:{port}/"
    with running_server(argv, cwd=ROOT, env=env, log_path=root.parent / "lab.log",
                        ready_url=f"{url}api/status?token={TOKEN}", what="jupyter lab",
                        timeout_s=90):
        yield url


def test_no_chart_is_wider_than_its_output_area_in_jupyterlab(browser: object,
                                                              lab_url: str) -> None:
    ctx = browser.new_context(viewport={"width": 820, "height": 800})  # type: ignore[attr-defined]
    try:
        page = ctx.new_page()
        page.goto(f"{lab_url}lab/tree/{LESSON}?token={TOKEN}", timeout=RENDER_TIMEOUT_MS)
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=RENDER_TIMEOUT_MS)
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']",
                               timeout=RENDER_TIMEOUT_MS)
        page.locator("#jp-MainMenu .lm-MenuBar-itemLabel", has_text="실행").first.click()
        # "모든 셀 실행" exactly: "위의 모든 셀 실행" (run all above) is in the same menu
        page.locator(".lm-Menu-itemLabel").get_by_text("모든 셀 실행", exact=True).click()
        page.wait_for_selector(".lk-eventlog-chart .js-plotly-plot .main-svg", state="attached",
                               timeout=RENDER_TIMEOUT_MS)
        page.wait_for_timeout(1_500)
        charts = page.evaluate(OVERFLOW_JS)
        assert len(charts) >= 5
        wide = [c for c in charts if c["over"] > 1]
        assert not wide, wide
    finally:
        ctx.close()
