"""Lesson 01's Prometheus panel: reads the real Prometheus (scraping the exporter) into the
lesson's replay app; every error is a Korean message and the replay keeps its last good log."""

from __future__ import annotations

from datetime import datetime

import pytest

from labkit.i18n import t
from labkit.ui import observe
from labkit.ui.observe_live import PrometheusPanel, auto_step, prometheus_panel
from tests.prometheus_servers import free_port


def test_panel_feeds_the_lessons_replay(prometheus_lab: tuple[str, float]) -> None:
    url, _ = prometheus_lab
    replay = observe.replay_app()  # the lesson's replay, built before the panel reads
    assert observe.current_replay() is replay
    panel = prometheus_panel(url)
    panel.window.value = 300.0
    panel.step.value = "1s"
    panel.read.click()
    assert panel.error.value == ""
    assert replay.log_import is panel.log_import is not None
    assert replay.log_import.format == "prometheus"
    assert t("observe.replay.format.prometheus") in replay.info.value
    assert replay.trace is not None and replay.trace.gpus == (0, 1)
    # scrub to the end: GPU 0 is training (util 100 %, SM activity 85 %)
    replay.time.value = replay.time.max
    assert "100" in replay.cards["gpu_util"].value and "85" in replay.cards["sm_active"].value
    assert "GPU 2개" in panel.status.value


@pytest.mark.parametrize(("url", "step", "kind"), [
    ("ftp://prometheus", "15s", "bad_url"),
    (None, "15s", "unreachable"),
    ("http://127.0.0.1:9", "1s", "too_many_points"),
])
def test_panel_errors_are_korean_and_keep_the_last_log(url: str | None, step: str,
                                                       kind: str) -> None:
    replay = observe.ReplayApp()
    before = replay.log_import
    panel = PrometheusPanel(replay, url=url or f"http://127.0.0.1:{free_port()}")
    panel.step.value = step
    if kind == "too_many_points":
        panel.window.value = 86400.0  # 24 h at 1 s: 86,401 points per series
    assert panel.load() is None
    assert t(f"observe.live.error.{kind}") in panel.error.value.replace("&#x27;", "'")
    assert replay.log_import is before  # the shipped trace is still shown


def test_panel_builds_its_own_replay_when_the_lesson_has_none(
        prometheus_lab: tuple[str, float], monkeypatch: pytest.MonkeyPatch) -> None:
    url, _ = prometheus_lab
    monkeypatch.setattr(observe.replay, "_CURRENT_REPLAY", None)
    panel = prometheus_panel(url)
    panel.window.value = 300.0
    assert panel.load() is not None
    assert isinstance(panel.children[-1], observe.ReplayApp)
    assert panel.children[-1].log_import is panel.log_import


@pytest.mark.parametrize(("window_s", "step"), [(300, "15s"), (21600, "15s"), (86400, "1m"),
                                                (7 * 86400, "5m")])
def test_auto_step_keeps_a_window_to_1500_points(window_s: float, step: str) -> None:
    assert auto_step(window_s) == step


def test_panel_reads_a_window_ending_at_a_typed_time(prometheus_lab: tuple[str, float]) -> None:
    url, started = prometheus_lab
    panel = PrometheusPanel(observe.ReplayApp(), url=url)
    panel.window.value = 300.0
    panel.end.value = datetime.fromtimestamp(started - 3600).isoformat(timespec="seconds")
    assert panel.load() is None  # an hour before the exporter started: nothing there
    assert t("observe.live.error.empty") in panel.error.value
    panel.end.value = "어제 저녁"
    assert panel.load() is None
    assert t("observe.live.error.bad_window") in panel.error.value


def test_panel_refuses_values_the_browser_invented() -> None:
    panel = PrometheusPanel(observe.ReplayApp(), url="http://127.0.0.1:9")
    panel.url.value = "x" * 10_000
    assert panel.load() is None
    assert t("observe.live.error.bad_url") in panel.error.value
