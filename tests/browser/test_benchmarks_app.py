"""Lesson 06 as a voila app in a real browser: pick a baseline row, move the demand slider."""

from __future__ import annotations

import pytest

from tests.browser.conftest import (
    assert_no_traceback,
    open_lesson,
    plot_json,
    screenshot,
    wait_for_plot_change,
    wait_for_text,
)

pytestmark = pytest.mark.browser


def test_benchmarks_app_baseline_pick_and_rack_check(page, voila_url):  # type: ignore[no-untyped-def]
    open_lesson(page, voila_url, "06_benchmarks.ipynb", "lk-racks-chart", "lk-claim-chart")
    steps = page.locator(".lk-claim-steps")
    assert "3.98배" in steps.inner_text() and "1.39배" in steps.inner_text()

    # a same-date baseline (v5.0 DGX-H100, Server): the per-chip headline falls to 2.77x
    before = plot_json(page, "lk-claim-chart")
    select = page.locator(".lk-claim-baseline select")
    options = select.locator("option").evaluate_all("os => os.map(o => o.textContent)")
    # the browser shows a dropdown option's spaces as no-break spaces
    label = next(o for o in options
                 if "v5.0" in o and "DGX H100" in o.replace("\xa0", " ") and "서버" in o)
    select.select_option(label=label)
    after = wait_for_plot_change(page, "lk-claim-chart", before)
    assert "2.77배" in after and "2.77배" in steps.inner_text()
    assert "다른 라운드" in page.locator(".lk-claim-checklist").inner_text()

    # the rack check: default "partly"; a school-sized demand makes it fail (1 box either way)
    verdict = page.locator(".lk-racks-verdict")
    assert "부분적으로만" in verdict.inner_text()
    before = plot_json(page, "lk-racks-chart")
    readout = page.locator(".lk-racks-demand_tokens_per_s .widget-readout")
    readout.click()
    page.keyboard.press("Control+A")
    page.keyboard.type("752")
    page.keyboard.press("Enter")
    wait_for_text(page, "lk-racks-verdict", "성립하지 않음")
    racks = wait_for_plot_change(page, "lk-racks-chart", before)
    assert '"y":[1,1,1]' in racks  # one rack now, one rack new, one rack promised
    assert_no_traceback(page)
    screenshot(page, "06_benchmarks")
