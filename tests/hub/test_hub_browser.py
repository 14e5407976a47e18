"""A student in a real browser on the class hub: Korean login with the slip's first-login code,
then their own password, JupyterLab,
lesson 03 as an app, a control that changes the chart (Debian's chromium, Playwright). Every hub
page the student meets on the way (login, the "server is starting" page, home, 404, the stopped
server's page) shows no English UI words."""

from __future__ import annotations

import os

import pytest

from labkit.hub.state import HubState
from tests.browser.conftest import (
    RENDER_TIMEOUT_MS,
    open_lesson,
    plot_json,
    screenshot,
    wait_for_plot_change,
)
from tests.browser.test_offline_pages import outside, record_requests
from tests.hub.conftest import BROWSER_STUDENT, PASSWORDS, ROOT_REASON, Hub, roster_command
from tests.test_hub_templates import ENGLISH

pytestmark = [pytest.mark.hub, pytest.mark.browser,
              pytest.mark.skipif(os.geteuid() != 0, reason=ROOT_REASON)]


def english_ui_words(page) -> list[str]:  # type: ignore[no-untyped-def]
    """English UI words in what the page shows (English terms in parentheses are allowed)."""
    import re

    text = page.evaluate("document.body.innerText")
    return list(ENGLISH.findall(re.sub(r"\([^)]*\)", "", text.replace(BROWSER_STUDENT, ""))))


def test_student_logs_in_opens_lesson_in_lab_and_as_app(hub: Hub, page) -> None:  # type: ignore[no-untyped-def]
    urls, _ = record_requests(page)  # a school network may have no internet (issue 23)
    page.goto(hub.base + "hub/login")
    assert page.locator("h1").inner_text() == "수업 허브(class hub) 로그인"
    assert english_ui_words(page) == []
    assert page.evaluate("document.documentElement.lang") == "ko"
    page.fill("#username_input", BROWSER_STUDENT)
    # a fresh slip from the teacher (another test may have set this student's password already)
    roster_command(hub.state_dir, "reset", BROWSER_STUDENT)
    code = HubState(hub.state_dir).accounts.codes()[BROWSER_STUDENT]  # from the teacher's slip
    page.fill("#password_input", code)
    page.click("#login_submit")
    # the first login: the code was right, now the student's own password (Korean page)
    page.wait_for_selector("#new_password_input", timeout=RENDER_TIMEOUT_MS)
    assert page.locator("h1").inner_text() == "처음 로그인: 비밀번호 정하기"
    assert english_ui_words(page) == []
    page.fill("#new_password_input", PASSWORDS[BROWSER_STUDENT])
    page.fill("#new_password2_input", PASSWORDS[BROWSER_STUDENT])
    page.click("#first_login_submit")
    # the hub's "server is starting" page comes at once (slow_spawn_timeout 0), in Korean
    page.wait_for_url("**/hub/spawn-pending/**", timeout=RENDER_TIMEOUT_MS)
    page.wait_for_selector("#progress-message", state="attached")
    assert "내 실습 서버를 시작하고 있습니다" in page.evaluate("document.body.innerText")
    assert english_ui_words(page) == []
    assert page.locator("#error-label").inner_text() == "오류"  # the hidden error dialog too
    # the hub spawns the server and lands in JupyterLab on ~/labkit
    page.wait_for_url(f"**/user/{BROWSER_STUDENT}/lab**", timeout=RENDER_TIMEOUT_MS)
    page.wait_for_selector(".jp-DirListing-item[title*='03_goodput.ipynb'], "
                           ".jp-DirListing-itemName:has-text('03_goodput')",
                           timeout=RENDER_TIMEOUT_MS)
    page.goto(f"{hub.base}user/{BROWSER_STUDENT}/lab/tree/03_goodput.ipynb")
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=RENDER_TIMEOUT_MS)
    screenshot(page, "hub_lab_03")

    # as an app: the waterfall shows once the student's goodput prediction is confirmed
    open_lesson(page, f"{hub.base}user/{BROWSER_STUDENT}/", "03_goodput.ipynb", "lk-waterfall")
    before = plot_json(page, "lk-waterfall")
    box = page.locator(".lk-worksheet-failure_stops input")
    box.fill("100")
    box.press("Enter")
    after = wait_for_plot_change(page, "lk-waterfall", before)
    assert "-100" in after
    screenshot(page, "hub_voila_03")

    # the hub's own pages around the lab
    page.goto(hub.base + "hub/home")
    assert "내 서버 열기" in page.evaluate("document.body.innerText")
    assert english_ui_words(page) == []
    page.goto(hub.base + "hub/no-such-page")
    assert "없는 페이지입니다" in page.evaluate("document.body.innerText")
    assert english_ui_words(page) == []
    page.goto(hub.base + "hub/home")
    page.click("#stop")  # the student stops their server, then opens their lab again
    page.wait_for_function("document.body.innerText.includes('내 서버 시작')",
                           timeout=RENDER_TIMEOUT_MS)
    assert english_ui_words(page) == []
    page.goto(f"{hub.base}user/{BROWSER_STUDENT}/lab", wait_until="commit")
    page.wait_for_selector("#start", timeout=RENDER_TIMEOUT_MS)
    assert "서버가 꺼져 있습니다" in page.evaluate("document.body.innerText")
    assert english_ui_words(page) == []
    screenshot(page, "hub_not_running")
    assert urls and outside(urls) == [], outside(urls)  # login, lab, voila app: all local
