"""`make lab` opens JupyterLab in Korean: the language pack and the venv's settings override."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.conftest import ARTIFACTS, RENDER_TIMEOUT_MS, running_lab

pytestmark = pytest.mark.browser

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
    with running_lab(root, TOKEN) as url:
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
