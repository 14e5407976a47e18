"""Lesson 05 as a voila app in a browser: move utilization and the API price, the charts follow."""

from __future__ import annotations

import json

import pytest

from tests.browser.conftest import (
    assert_no_traceback,
    open_lesson,
    plot_json,
    screenshot,
    wait_for_plot_change,
)

pytestmark = pytest.mark.browser

CROSS = "손익분기점"


def _trace_x(plot: str | None, name_prefix: str) -> float:
    data = json.loads(plot or "[]")
    trace = next(t for t in data if str(t.get("name", "")).startswith(name_prefix))
    return float(trace["x"][0])


def _set_readout(page, css: str, value: str) -> None:  # type: ignore[no-untyped-def]
    readout = page.locator(f".{css} .widget-readout")
    readout.click()
    page.keyboard.press("Control+A")
    page.keyboard.type(value)
    page.keyboard.press("Enter")


def test_break_even_app_utilization_moves_the_point_api_price_moves_the_crossover(  # type: ignore[no-untyped-def]
    page, voila_url
):
    open_lesson(page, voila_url, "05_break_even.ipynb")
    page.wait_for_selector(".lk-curves-chart .js-plotly-plot .main-svg")
    summary = page.locator(".lk-curves-summary")
    assert "149.5억" in summary.inner_text() and "18.3 %" in summary.inner_text()
    before = plot_json(page, "lk-curves-chart")
    cross = _trace_x(before, CROSS)
    point = _trace_x(before, "가동률 40")
    assert cross == pytest.approx(149.54, abs=0.01) and point > cross

    # utilization 40 % -> 10 %: the operating point moves left of the crossover, the API wins
    _set_readout(page, "lk-curves-utilization", "10")
    after = wait_for_plot_change(page, "lk-curves-chart", before)
    assert _trace_x(after, "가동률 10") < cross
    assert _trace_x(after, CROSS) == pytest.approx(cross)  # the crossover itself stays
    page.wait_for_function(
        "() => document.querySelector('.lk-curves-summary').innerText.includes('API가')")

    # API price 0.60 -> 0.30 USD per 1M tokens: the crossover moves right
    _set_readout(page, "lk-curves-api_price_usd_per_m", "0.30")
    moved = wait_for_plot_change(page, "lk-curves-chart", after)
    assert _trace_x(moved, CROSS) > 2 * cross
    # the tornado chart follows the curves (its base line moved with the new break-even)
    page.wait_for_function(
        "() => !document.querySelector('.lk-tornado-summary').innerText.includes('149.5억')")

    # 500 typed into the 5-100 % readout: the browser clamps it to 100 before sending it (issue
    # 17's trial: the readout showed 100 without a word); the bound note sits beside the slider
    _set_readout(page, "lk-curves-utilization", "500")
    note = page.locator(".lk-curves-utilization").locator("xpath=..").locator(".lk-error")
    note.filter(has_text="최댓값(100)").wait_for(timeout=30_000)
    assert "100보다 큰 값을 받지 않고" in note.inner_text()
    assert_no_traceback(page)
    screenshot(page, "05_break_even")
