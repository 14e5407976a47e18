"""Lesson 04 as a voila app in a real browser: move the checkpoint interval, the chart follows."""

from __future__ import annotations

import json

import pytest

from tests.browser.conftest import assert_no_traceback, open_lesson, plot_json, screenshot

pytestmark = pytest.mark.browser


def _chosen_x(plot: str) -> float:
    data = json.loads(plot)
    chosen = next(tr for tr in data if tr.get("name") == "지금 고른 간격")
    return float(chosen["x"][0])


def test_reliability_app_interval_slider_moves_the_chosen_point(page, voila_url):  # type: ignore[no-untyped-def]
    open_lesson(page, voila_url, "04_reliability.ipynb")
    for css in ("lk-scaling-chart", "lk-interval-chart", "lk-month-histogram",
                "lk-month-waterfall", "lk-llama3-chart", "lk-eventlog-chart"):
        page.wait_for_selector(f".{css} .js-plotly-plot .main-svg")
    before = plot_json(page, "lk-interval-chart")
    assert before is not None and _chosen_x(before) == 60
    assert "56.7분" in page.locator(".lk-interval-summary").inner_text()
    assert "88.9 %" in page.locator(".lk-month-summary").inner_text()

    handle = page.locator(".lk-interval-interval_min .noUi-handle").first
    handle.focus()
    for _ in range(5):
        handle.press("ArrowRight")
    page.wait_for_function(
        "(b) => { const g = document.querySelector('.lk-interval-chart .js-plotly-plot');"
        " return g && JSON.stringify(g.data) !== b; }", arg=before)
    page.wait_for_function(
        "() => document.querySelector('.lk-interval-summary').innerText.includes('간격 65분')")
    after = plot_json(page, "lk-interval-chart")
    assert after is not None and _chosen_x(after) == 65

    # a bad per-GPU MTBF: Korean message beside the box, the last chart kept
    scaling = plot_json(page, "lk-scaling-chart")
    box = page.locator(".lk-scaling-gpu_mtbf_h input")
    box.fill("0")
    box.press("Enter")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.lk-error')]"
        ".some(e => e.innerText.includes('0보다 커야'))")
    assert plot_json(page, "lk-scaling-chart") == scaling
    assert plot_json(page, "lk-interval-chart") == after
    assert_no_traceback(page)
    screenshot(page, "04_reliability")


def test_ten_arrow_key_steps_recompute_once_with_the_last_value(page, voila_url):  # type: ignore[no-untyped-def]
    """Issue 17: one recompute per key queued seconds of work; now the latest value wins."""
    open_lesson(page, voila_url, "04_reliability.ipynb")
    page.wait_for_selector(".lk-interval-chart .js-plotly-plot .main-svg")
    page.wait_for_function(
        "() => document.querySelector('.lk-interval-summary')?.innerText.includes('간격 60분')")
    # every text the summary shows from now on (one per recompute that reaches the page)
    page.evaluate(
        "() => { const el = document.querySelector('.lk-interval-summary');"
        " window.lkShown = []; new MutationObserver(() => {"
        " const text = el.innerText; if (window.lkShown.at(-1) !== text) window.lkShown.push(text);"
        " }).observe(el, {childList: true, subtree: true, characterData: true}); }")
    handle = page.locator(".lk-interval-interval_min .noUi-handle").first
    handle.focus()
    # ten key-downs as the browser delivers a held key, all in one burst: pressed one by one
    # from here each waits for a round trip to chromium, which on a loaded 2-core machine is
    # longer than the debounce (labkit.ui.components.DEBOUNCE_S), a pace no keyboard has
    handle.evaluate(
        "h => { for (let i = 0; i < 10; i++) h.dispatchEvent(new KeyboardEvent('keydown',"
        " {key: 'ArrowRight', code: 'ArrowRight', keyCode: 39, which: 39, bubbles: true,"
        " cancelable: true})); }")
    page.wait_for_function(
        "() => document.querySelector('.lk-interval-summary').innerText.includes('간격 70분')")
    page.wait_for_timeout(1500)  # a queued recompute would arrive in this time
    shown = page.evaluate("() => window.lkShown")
    assert len(shown) == 1 and "간격 70분" in shown[0], shown
    assert_no_traceback(page)
