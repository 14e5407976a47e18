"""Lesson 01 as a voila app in a real browser: switch a scenario on the simulated H100, the SM
activity panel and chart follow while util.gpu stays high; replay scrubs a log."""

from __future__ import annotations

import re

import pytest

from labkit.i18n import t
from tests.browser.conftest import (
    assert_no_traceback,
    open_lesson,
    plot_json,
    screenshot,
    wait_for_plot_change,
)

pytestmark = pytest.mark.browser

PCT = r"(\d+(?:\.\d+)?) %"


def _pct(page, css: str) -> float:  # type: ignore[no-untyped-def]
    text = page.locator(css).inner_text()
    match = re.search(PCT, text)
    assert match, f"{css}: no percentage in {text!r}"
    return float(match.group(1))


def _wait_pct(page, css: str, test: str) -> None:  # type: ignore[no-untyped-def]
    """Wait until the first percentage shown in ``css`` satisfies the JS expression ``test``."""
    page.wait_for_function(
        "([css, test]) => { const e = document.querySelector(css); if (!e) return false;"
        " const m = e.innerText.match(/(\\d+(?:\\.\\d+)?) %/); if (!m) return false;"
        " const v = parseFloat(m[1]); return eval(test); }", arg=[css, test], timeout=60_000)


def test_observe_scenario_switch_moves_sm_activity_not_util(page, voila_url):  # type: ignore[no-untyped-def]
    open_lesson(page, voila_url, "01_observe.ipynb")
    select = page.locator(".lk-scenario-scenario select")
    select.wait_for()
    util_css = ".lk-scenario .lk-panel-gpu_util"
    sm_css = ".lk-scenario .lk-panel-sm_active"

    select.select_option(label=t("observe.scenario.training"))
    _wait_pct(page, sm_css, "v >= 80")
    _wait_pct(page, util_css, "v >= 95")
    assert "SM" in page.locator(".lk-scenario-reveal").inner_text()
    page.wait_for_function(
        "() => [...document.querySelectorAll('.lk-scenario-activity .js-plotly-plot')]"
        ".some(g => g.data && g.data.some(d => Array.isArray(d.y) && d.y.some(v => v >= 80)))")
    before = plot_json(page, "lk-scenario-activity")

    select.select_option(label=t("observe.scenario.tiny_kernel"))
    _wait_pct(page, sm_css, "v < 5")
    assert _pct(page, util_css) >= 95, "util.gpu should stay ~100 % for a one-thread kernel"
    # the dashboard says so in words too
    page.wait_for_function(
        "(t) => document.querySelector('.lk-scenario-signals').innerText.includes(t)",
        arg=t("observe.signal.basis.sm_active"))
    after = wait_for_plot_change(page, "lk-scenario-activity", before)
    assert after != before and "SM" in after

    # stop sampling: the toggle says so, the page stays alive
    page.locator(".lk-scenario-run").click()
    page.wait_for_function(
        "(t) => document.querySelector('.lk-scenario-status').innerText.includes(t)",
        arg=t("observe.status_stopped").split(" —")[0])

    # replay: move the time slider of the shipped trace, the panels follow
    replay_util = ".lk-replay .lk-panel-gpu_util"
    page.locator(replay_util).wait_for()
    assert _pct(page, replay_util) == 0.0  # the trace starts idle
    handle = page.locator(".lk-replay-time .noUi-handle").first
    handle.focus()
    for _ in range(40):  # 40 scrapes of 1.25 s: t = 50 s, inside the collective stall
        page.keyboard.press("ArrowRight")
    _wait_pct(page, replay_util, "v >= 95")
    page.wait_for_function(
        "() => document.querySelector('.lk-replay-signals').innerText.length > 0")
    assert_no_traceback(page)
    screenshot(page, "01_observe")
