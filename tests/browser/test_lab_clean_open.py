"""A lesson opened in JupyterLab is not "modified" (no dirty dot on its tab) until the student
changes something: the committed notebook already holds what JupyterLab writes into it when the
kernel starts (``metadata.kernelspec`` as the installed kernel names itself)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.conftest import RENDER_TIMEOUT_MS, running_lab

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "lab-clean-open-test"
LESSONS = ["01_observe.ipynb", "09_capstone.ipynb"]


@pytest.fixture(scope="module")
def lab_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """JupyterLab with `make lab`'s options over a copy of the lessons."""
    root = tmp_path_factory.mktemp("lab")
    for name in LESSONS:
        shutil.copy(ROOT / "notebooks" / name, root / name)
    with running_lab(root, TOKEN) as url:
        yield url


@pytest.mark.parametrize("name", LESSONS)
def test_an_opened_lesson_is_not_modified(browser: object, lab_url: str, name: str) -> None:
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})  # type: ignore[attr-defined]
    try:
        page = ctx.new_page()
        # a workspace of its own, reset: JupyterLab restores the server-side workspace, so the
        # previous test's notebook would come back as the current tab over this one
        workspace = f"clean-{name.split('_')[0]}"
        page.goto(f"{lab_url}lab/workspaces/{workspace}/tree/{name}?token={TOKEN}&reset",
                  timeout=RENDER_TIMEOUT_MS)
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=RENDER_TIMEOUT_MS)
        # the kernel started and answered (JupyterLab writes the kernelspec then)
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']",
                               timeout=RENDER_TIMEOUT_MS)
        page.wait_for_timeout(2_000)
        tab = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.jp-mod-current")
        assert "jp-mod-dirty" not in (tab.get_attribute("class") or ""), name
    finally:
        ctx.close()
