"""`make lab` opens JupyterLab in Korean: the language pack and the venv's settings override."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.conftest import ARTIFACTS, RENDER_TIMEOUT_MS, _free_port, running_server

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
OVERRIDES = Path(sys.prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
TOKEN = "lab-korean-test"


def test_the_venv_selects_korean_for_jupyterlab() -> None:
    """`make` writes the override next to JupyterLab in the venv (see the Makefile)."""
    overrides = json.loads(OVERRIDES.read_text(encoding="utf-8"))
    assert overrides["@jupyterlab/translation-extension:plugin"] == {"locale": "ko_KR"}


@pytest.fixture(scope="module")
def lab_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """JupyterLab started with `make lab`'s options, over an empty folder."""
    root = tmp_path_factory.mktemp("lab")
    port = _free_port()
    argv = [str(Path(sys.executable).with_name("jupyter")), "lab",
            "--config=labkit/serve/config/jupyter_server_config.py",
            f"--ServerApp.root_dir={root}", "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}", "--ServerApp.open_browser=False",
            f"--IdentityProvider.token={TOKEN}"]
    if os.geteuid() == 0:
        argv.append("--allow-root")
    log_path = root.parent / "lab.log"
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(root.parent / "runtime")}
    url = f"http://127.0.0.1:{port}/"
    with running_server(argv, cwd=ROOT, env=env, log_path=log_path,
                        ready_url=f"{url}api/status?token={TOKEN}", what="jupyter lab",
                        timeout_s=90):
        yield url


def test_jupyterlab_menus_are_korean(browser: object, lab_url: str) -> None:
    # an English browser: the Korean comes from the override, not from the browser's language
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-US")  # type: ignore[attr-defined]
    try:
        page = ctx.new_page()
        page.goto(f"{lab_url}lab?token={TOKEN}", timeout=RENDER_TIMEOUT_MS)
        labels = page.locator("#jp-MainMenu .lm-MenuBar-itemLabel")
        labels.first.wait_for(timeout=RENDER_TIMEOUT_MS)
        page.wait_for_function(
            "() => [...document.querySelectorAll('#jp-MainMenu .lm-MenuBar-itemLabel')]"
            ".some(e => e.textContent === '파일')", timeout=RENDER_TIMEOUT_MS)
        menus = labels.all_inner_texts()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "lab_korean.png"))
        assert menus[:3] == ["파일", "편집", "보기"], menus
        assert "File" not in menus and "Help" not in menus
    finally:
        ctx.close()
