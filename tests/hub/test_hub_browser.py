"""A student in a real browser on the class hub: Korean login, first-use password, JupyterLab,
lesson 03 as an app, a control that changes the chart (Debian's chromium, Playwright)."""

from __future__ import annotations

import os

import pytest

from tests.browser.conftest import (
    RENDER_TIMEOUT_MS,
    plot_json,
    screenshot,
    wait_for_plot_change,
)
from tests.hub.conftest import BROWSER_STUDENT, PASSWORDS, ROOT_REASON, Hub

pytestmark = [pytest.mark.hub, pytest.mark.browser,
              pytest.mark.skipif(os.geteuid() != 0, reason=ROOT_REASON)]


def test_student_logs_in_opens_lesson_in_lab_and_as_app(hub: Hub, page) -> None:  # type: ignore[no-untyped-def]
    page.goto(hub.base + "hub/login")
    assert page.locator("h1").inner_text() == "수업 허브(class hub) 로그인"
    page.fill("#username_input", BROWSER_STUDENT)
    page.fill("#password_input", PASSWORDS[BROWSER_STUDENT])  # first use: sets it
    page.click("#login_submit")
    # the hub spawns the server and lands in JupyterLab on ~/labkit
    page.wait_for_url(f"**/user/{BROWSER_STUDENT}/lab**", timeout=RENDER_TIMEOUT_MS)
    page.wait_for_selector(".jp-DirListing-item[title*='03_goodput.ipynb'], "
                           ".jp-DirListing-itemName:has-text('03_goodput')",
                           timeout=RENDER_TIMEOUT_MS)
    page.goto(f"{hub.base}user/{BROWSER_STUDENT}/lab/tree/03_goodput.ipynb")
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=RENDER_TIMEOUT_MS)
    screenshot(page, "hub_lab_03")

    page.goto(f"{hub.base}user/{BROWSER_STUDENT}/voila/render/03_goodput.ipynb",
              wait_until="commit")
    page.wait_for_selector(".lk-waterfall .js-plotly-plot .main-svg", timeout=RENDER_TIMEOUT_MS)
    before = plot_json(page, "lk-waterfall")
    box = page.locator(".lk-worksheet-failure_stops input")
    box.fill("100")
    box.press("Enter")
    after = wait_for_plot_change(page, "lk-waterfall", before)
    assert "-100" in after
    screenshot(page, "hub_voila_03")
