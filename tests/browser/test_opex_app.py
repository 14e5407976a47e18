"""Lesson 07 as a voila app in a real browser: PUE moves the 12 bills; export downloads files."""

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


def _totals(data: str | None) -> list[float]:
    assert data is not None
    traces = json.loads(data)
    return [float(v) for v in traces[-1]["y"]]  # the last trace carries each month's total


def test_opex_app_pue_changes_bills_and_export_downloads(page, voila_url):  # type: ignore[no-untyped-def]
    open_lesson(page, voila_url, "07_opex_lab.ipynb")
    page.wait_for_selector(".lk-exercises")  # the last builder: every cell has run
    for css in ("lk-bills-chart", "lk-cost-chart", "lk-sens-chart", "lk-classhours-chart"):
        page.wait_for_function(
            "(css) => { const g = document.querySelector('.' + css + ' .js-plotly-plot');"
            " return g && g.data && g.data.length > 0; }", arg=css)
    note = page.locator(".lk-room-tariff-note").inner_text()
    assert "한전 공식 요금표와 아직 대조하지 않았습니다" in note
    before = plot_json(page, "lk-bills-chart")
    totals_before = _totals(before)
    assert len(totals_before) == 12

    # PUE 1.5 -> 2.0 through the slider's readout, as a teacher would type it
    readout = page.locator(".lk-room-pue .widget-readout")
    readout.click()
    page.keyboard.press("Control+A")
    page.keyboard.type("2")
    page.keyboard.press("Enter")
    totals_after = _totals(wait_for_plot_change(page, "lk-bills-chart", before))
    assert all(a > b for a, b in zip(totals_after, totals_before, strict=True))

    # bad input: a Korean message beside the control, the last good bills kept
    box = page.locator(".lk-room-server_price_usd input")
    box.fill("-1")
    box.press("Enter")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.lk-error')]"
        ".some(e => e.innerText.includes('0 이상'))")
    assert _totals(plot_json(page, "lk-bills-chart")) == totals_after
    box.fill("300000")
    box.press("Enter")
    page.wait_for_function(
        "() => ![...document.querySelectorAll('.lk-error')]"
        ".some(e => e.innerText.includes('0 이상'))")

    # export: the button writes the files, the links download them
    page.locator(".lk-export-button").click()
    page.wait_for_selector(".lk-export-html")
    with page.expect_download() as info:
        page.locator(".lk-export-html").click()
    download = info.value
    assert download.suggested_filename == "opex_summary.html"
    html = open(download.path(), encoding="utf-8").read()
    assert "연간 운영비 요약" in html and "PUE 2" in html
    with page.expect_download() as info:
        page.locator(".lk-export-csv").click()
    text = open(info.value.path(), encoding="utf-8-sig").read()
    assert text.startswith("section,key,value,unit") and "input,pue,2" in text
    assert_no_traceback(page)
    screenshot(page, "07_opex_lab")
