"""Lesson 03 as a voila app in a real browser: render, edit a loss, the charts follow."""

from __future__ import annotations

import pytest

from tests.browser.conftest import (
    assert_no_traceback,
    open_lesson,
    plot_json,
    screenshot,
    wait_for_plot_change,
)

pytestmark = pytest.mark.browser


def test_goodput_app_loss_edit_updates_goodput_and_waterfall(page, voila_url):  # type: ignore[no-untyped-def]
    open_lesson(page, voila_url, "03_goodput.ipynb")
    page.wait_for_selector(".lk-waterfall .js-plotly-plot .main-svg")
    big = page.locator(".lk-goodput-value")
    page.wait_for_function(
        "() => document.querySelector('.lk-goodput-value')?.innerText.includes('88.9 %')")
    before = plot_json(page, "lk-waterfall")
    assert before is not None and "-22" in before

    box = page.locator(".lk-worksheet-failure_stops input")
    box.fill("100")
    box.press("Enter")
    # (720 - 8 - 100 - 6 - 14 - 30) / 720 = 78.1 %
    page.wait_for_function(
        "() => document.querySelector('.lk-goodput-value')?.innerText.includes('78.1 %')")
    after = wait_for_plot_change(page, "lk-waterfall", before)
    assert "-100" in after
    # the comparison follows the ledger: our goodput is now the reference
    page.wait_for_function(
        "() => document.querySelector('.lk-compare-summary')?.innerText.includes('78.1 %')")

    # bad input: a Korean message beside the control, the last good chart kept
    box.fill("-5")
    box.press("Enter")
    error = page.locator(".lk-worksheet-failure_stops").locator("xpath=..").locator(".lk-error")
    error.wait_for()
    page.wait_for_function(
        "() => [...document.querySelectorAll('.lk-error')]"
        ".some(e => e.innerText.includes('0 이상'))")
    assert plot_json(page, "lk-waterfall") == after
    assert "78.1 %" in big.inner_text()
    assert_no_traceback(page)
    screenshot(page, "03_goodput")
