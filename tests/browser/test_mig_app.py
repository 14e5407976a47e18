"""Lesson 02 as a voila app in a real browser: place a profile, Free/Total and the workload chart
follow, an illegal placement shows its reason, and the page offers no way to change the GPU."""

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

FREE_TOTAL = (
    "(p) => { const rows = [...document.querySelectorAll('.lk-board-capacity tr')];"
    " const row = rows.find(r => r.cells.length > 2 && r.cells[0].innerText.trim() === p);"
    " return row ? row.cells[2].innerText.trim() : null; }")


def test_mig_board_place_free_total_and_reason(page, voila_url):  # type: ignore[no-untyped-def]
    open_lesson(page, voila_url, "02_mig.ipynb")
    page.wait_for_selector(".lk-board-grid div")
    assert page.evaluate(FREE_TOTAL, "3g.40gb") == "2/2"
    assert page.evaluate(FREE_TOTAL, "7g.80gb") == "1/1"
    chart_before = plot_json(page, "lk-workload-chart")
    assert chart_before is not None

    page.select_option(".lk-board-profile select", label="3g.40gb")
    page.wait_for_function(
        "() => document.querySelector('.lk-board-message').innerText.includes('3g.40gb')")
    page.locator("button.lk-board-start-4").click()
    page.wait_for_function(
        "() => document.querySelector('.lk-board-message').innerText.includes('놓았습니다')")
    page.wait_for_function(f"() => ({FREE_TOTAL})('3g.40gb') === '1/2'")
    assert page.evaluate(FREE_TOTAL, "7g.80gb") == "0/1"
    assert "3g.40gb" in page.locator(".lk-board-grid").inner_text()
    # the class-workload chart follows the board: MIG now has one 3g.40gb device
    wait_for_plot_change(page, "lk-workload-chart", chart_before)

    # an illegal placement: 3g.40gb cannot start at unit 2
    page.locator("button.lk-board-start-2").click()
    page.wait_for_function(
        "() => document.querySelector('.lk-board-message').innerText"
        ".includes('시작할 수 없습니다')")
    assert "0, 4" in page.locator(".lk-board-message").inner_text()
    assert page.evaluate(FREE_TOTAL, "3g.40gb") == "1/2"

    # the export follows the board
    page.wait_for_function(
        "() => document.querySelector('.lk-export-text textarea').value.includes('-cgi 9:4 -C')")

    # voila: no button that could change the GPU exists, only the commands to copy
    assert page.locator(".lk-live-apply").count() == 0
    assert page.locator(".lk-live-dry-run").count() == 0
    assert "voila" in page.locator(".lk-live-notice").inner_text()
    assert "-cgi 9:4 -C" in page.locator(".lk-live-commands textarea").input_value()
    assert_no_traceback(page)
    screenshot(page, "02_mig")
