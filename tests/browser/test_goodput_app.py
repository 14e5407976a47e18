"""Lesson 03 as a voila app in a real browser: render, edit a loss, the charts follow."""

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


def test_goodput_app_loss_edit_updates_goodput_and_waterfall(page, voila_url):  # type: ignore[no-untyped-def]
    open_lesson(page, voila_url, "03_goodput.ipynb", "lk-waterfall")
    big = page.locator(".lk-goodput-value")
    wait_for_text(page, "lk-goodput-value", "88.9 %")
    before = plot_json(page, "lk-waterfall")
    assert before is not None and "-22" in before

    enter_value(page, "lk-worksheet-failure_stops", "100")
    # (720 - 8 - 100 - 6 - 14 - 30) / 720 = 78.1 %
    wait_for_text(page, "lk-goodput-value", "78.1 %")
    after = wait_for_plot_change(page, "lk-waterfall", before)
    assert "-100" in after
    # the comparison follows the ledger: our goodput is now the reference
    wait_for_text(page, "lk-compare-summary", "78.1 %")

    # bad input: a Korean message beside the control, the last good chart kept
    enter_value(page, "lk-worksheet-failure_stops", "-5")
    error = page.locator(".lk-worksheet-failure_stops").locator("xpath=..").locator(".lk-error")
    error.wait_for()
    page.wait_for_function(
        "() => [...document.querySelectorAll('.lk-error')]"
        ".some(e => e.innerText.includes('0 이상'))")
    assert plot_json(page, "lk-waterfall") == after
    assert "78.1 %" in big.inner_text()
    assert_no_traceback(page)
    screenshot(page, "03_goodput")
