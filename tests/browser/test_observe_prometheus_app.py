"""Lesson 01 in voila replays from a real Prometheus: Debian's prometheus scrapes labkit's
exporter (simulated lab, GPU 0 training); the page's Prometheus panel reads it through
query_range and the replay shows the training GPU; a wrong address is a Korean message."""

from __future__ import annotations

import pytest

from labkit.i18n import t
from tests.browser.conftest import assert_no_traceback, open_lesson, screenshot
from tests.prometheus_servers import free_port

pytestmark = pytest.mark.browser


def test_observe_replays_from_prometheus(page, voila_url, prometheus_lab):  # type: ignore[no-untyped-def]
    prom_url, _ = prometheus_lab
    open_lesson(page, voila_url, "01_observe.ipynb")
    url_box = page.locator(".lk-live-url input")
    url_box.wait_for()

    # an address where nothing listens: a Korean message, the page stays alive
    url_box.fill(f"http://127.0.0.1:{free_port()}")
    url_box.press("Tab")
    page.locator("button.lk-live-read").click()
    page.wait_for_function(
        "(t) => document.querySelector('.lk-live-error').innerText.includes(t)",
        arg=t("observe.live.error.unreachable")[:20])

    url_box.fill(prom_url)
    url_box.press("Tab")
    page.locator(".lk-live-window select").select_option(label=t("observe.live.window.5m"))
    page.locator(".lk-live-step select").select_option(label="1s")
    page.locator("button.lk-live-read").click()
    page.wait_for_function(
        "(t) => document.querySelector('.lk-replay-info').innerText.includes(t)",
        arg=t("observe.replay.format.prometheus"))
    page.wait_for_function(  # the panel says what it read; the old error is gone
        "() => document.querySelector('.lk-live-status').innerText.includes('GPU 2')"
        " && document.querySelector('.lk-live-error').innerText.trim() === ''")
    # the replay's activity chart now holds GPU 0's training: SM activity 85 %
    page.wait_for_function(
        "() => [...document.querySelectorAll('.lk-replay-activity .js-plotly-plot')]"
        ".some(g => g.data && g.data.some(d => Array.isArray(d.y) && d.y.some(v => v == 85)))")
    # scrub to the end: util.gpu 100 % on the training GPU
    handle = page.locator(".lk-replay-time .noUi-handle").first
    handle.focus()
    page.keyboard.press("End")
    page.wait_for_function(
        "() => /100(\\.0)? %/.test(document.querySelector('.lk-replay .lk-panel-gpu_util')"
        ".innerText)")
    assert_no_traceback(page)
    screenshot(page, "01_observe_prometheus")
