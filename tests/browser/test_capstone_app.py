"""Lesson 09 as a voila app in a real browser: move a control, the decision changes, the report
downloads."""

from __future__ import annotations

import pytest

from tests.browser.conftest import (
    assert_no_traceback,
    enter_value,
    open_lesson,
    plot_json,
    screenshot,
    wait_for_plot_change,
    wait_for_text,
)

pytestmark = pytest.mark.browser


def test_capstone_decision_follows_usage_and_report_downloads(page, voila_url):  # type: ignore[no-untyped-def]
    open_lesson(page, voila_url, "09_capstone.ipynb", "lk-capstone-chart")
    rec = page.locator(".lk-capstone-recommendation")
    # the default case (19 % utilization): renting the GPU-hours is the cheapest
    wait_for_text(page, "lk-capstone-recommendation", "클라우드 GPU 임대입니다")
    before = plot_json(page, "lk-capstone-chart")
    assert page.title().startswith("09.")  # the Korean lesson title in the tab

    for key in ("class_frac", "after_school_frac", "vacation_frac", "always_on_frac"):
        enter_value(page, f"lk-capstone-{key}", "100")
    # used around the clock: owning the server is the cheapest
    wait_for_text(page, "lk-capstone-recommendation", "서버 구입 (자체 운영)입니다")
    wait_for_plot_change(page, "lk-capstone-chart", before)
    assert "전체로 100 %입니다" in rec.inner_text()

    # issue 25: the report is found by its name, a button 보고서 내려받기
    button = page.get_by_role("button", name="보고서 내려받기")
    assert button.is_visible()
    with page.expect_download() as info:
        button.click()
    download = info.value
    assert download.suggested_filename == "우리학교_AI서버_결정.html"
    html = open(download.path(), encoding="utf-8").read()
    assert "AI 서버 결정 보고서" in html and "행정실" in html and "서버 구입" in html

    # issue 17's trial: the school case saved in the editor above did not reach the decision
    # until a restart; it follows at once (saved, or where voila cannot write, this page's case)
    # issue 25's trial: 서버의 GPU 수 changed, not saved: the card and the chart stayed as they
    # were; they follow the editor within 10 s (저장 is for the other lessons)
    chart = plot_json(page, "lk-capstone-chart")
    enter_value(page, "lk-school-n_gpus", "2")
    page.wait_for_function(
        "() => document.querySelector('.lk-school-card')?.innerText.includes('GPU 2장')",
        timeout=10_000)
    wait_for_plot_change(page, "lk-capstone-chart", chart)
    wait_for_text(page, "lk-capstone-recommendation", "GPU 2장을 쓰므로")
    page.locator(".lk-school-save").click()  # saved, or where voila cannot write, said so
    wait_for_text(page, "lk-school-card", "GPU 2장")
    assert_no_traceback(page)
    screenshot(page, "09_capstone")
