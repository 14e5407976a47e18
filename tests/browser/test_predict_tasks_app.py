"""Predict → try → check and a widget-state task in a real browser (lesson 07 as a voila app)."""

from __future__ import annotations

import pytest

from tests.browser.conftest import assert_no_traceback, open_lesson

pytestmark = pytest.mark.browser


def test_prediction_locks_and_compares_then_task_checks(page, voila_url):  # type: ignore[no-untyped-def]
    open_lesson(page, voila_url, "07_opex_lab.ipynb", confirm=False)
    page.wait_for_selector(".lk-school-card")
    # the room app shows the July bill: hidden until the prediction is confirmed (issue 25)
    assert not page.locator(".lk-bills-chart").first.is_visible()
    assert not page.locator(".lk-task-07-contract-check").is_visible()
    assert "우리 학교" in page.inner_text(".lk-school-card")
    answer = page.locator(".lk-predict-07-july_bill-answer input")
    # a negative bill is refused beside the box, in Korean, and the box stays open
    answer.fill("-10만 원")
    page.locator(".lk-predict-07-july_bill-lock").click()
    page.wait_for_function(
        "() => document.querySelector('.lk-predict-07-july_bill-error')"
        "?.innerText.includes('0원에서 100억 원 사이')")
    assert not answer.is_disabled()
    answer.fill("약 80만 원")
    page.locator(".lk-predict-07-july_bill-lock").click()
    page.wait_for_function(
        "() => document.querySelector('.lk-predict-07-july_bill-compare')"
        "?.innerText.includes('800,000원')")
    assert "내 예측" in page.inner_text(".lk-predict-07-july_bill-compare")
    assert answer.is_disabled()
    page.wait_for_selector(".lk-bills-chart .js-plotly-plot .main-svg")  # now shown

    # the tasks waited for the prediction too (task 1 names a July bill near the answer)
    page.wait_for_selector(".lk-task-07-contract-check", state="visible")
    # the contract task, untouched: the school's 20 kW contract is not the answer
    page.locator(".lk-task-07-contract-check").click()
    page.wait_for_function(
        "() => document.querySelector('.lk-task-07-contract-feedback')"
        "?.innerText.includes('지금 계약인 20 kW')")
    assert_no_traceback(page)
