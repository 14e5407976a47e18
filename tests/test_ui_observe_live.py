"""Lesson 01's Prometheus panel: reads the real Prometheus (scraping the exporter) into the
lesson's replay app; every error is a Korean message and the replay keeps its last good log."""

from __future__ import annotations

import html
import re
from datetime import datetime
from pathlib import Path

import pytest

from labkit.i18n import t
from labkit.ui import observe
from labkit.ui.observe_live import PrometheusPanel, auto_step, prometheus_panel
from tests.prometheus_servers import exporter_process, free_port


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


#: Latin letters outside parentheses (technical terms go in parentheses) and outside the
#: echoed value; what an English detail line ("cannot reach ...", "is not a time") is made of.
ENGLISH_WORD = re.compile(r"\b(?:is|not|cannot|reach|the|of|a|an|to|time)\b")


def _detail(panel: PrometheusPanel) -> str:
    return html.unescape(panel.error.value.split("<small>", 1)[1].split("</small>")[0])


@pytest.mark.parametrize(("url", "step", "kind", "detail", "echo"), [
    ("ftp://prometheus", "15s", "bad_url", "bad_url", "ftp://prometheus"),
    (None, "15s", "unreachable", "unreachable.refused", "http://127.0.0.1:"),
    ("http://127.0.0.1:9", "1s", "too_many_points", "too_many_points", "86,401"),
])
def test_panel_errors_are_korean_and_keep_the_last_log(url: str | None, step: str,
                                                       kind: str, detail: str,
                                                       echo: str) -> None:
    replay = observe.ReplayApp()
    before = replay.log_import
    panel = PrometheusPanel(replay, url=url or f"http://127.0.0.1:{free_port()}")
    panel.step.value = step
    if kind == "too_many_points":
        panel.window.value = 86400.0  # 24 h at 1 s: 86,401 points per series
    assert panel.load() is None
    assert t(f"observe.live.error.{kind}") in html.unescape(panel.error.value)
    line = _detail(panel)
    head = t(f"observe.live.why.{detail}", value="\0", url="\0", points="\0", limit="\0",
             reason="\0").split("\0")[0]
    assert line.startswith(head) and echo in line  # the Korean line, with what was typed
    assert not ENGLISH_WORD.search(line.replace(echo, "")), line
    assert replay.log_import is before  # the shipped trace is still shown


def test_an_exporters_address_says_so_in_korean(tmp_path: Path) -> None:
    """The real exporter (:9400 in a school) answers 405: the panel names it an exporter."""
    with exporter_process(tmp_path) as target:
        panel = PrometheusPanel(observe.ReplayApp(), url=f"http://{target}")
        assert panel.load() is None
    assert t("observe.live.error.exporter") in html.unescape(panel.error.value)
    assert "Prometheus 주소(보통 :9090)" in panel.error.value
    assert t("observe.live.error.query_failed") not in html.unescape(panel.error.value)
    assert "405" in _detail(panel) and target in _detail(panel)


def test_an_end_in_the_future_is_named() -> None:
    now = datetime(2026, 12, 1, 14, 0).timestamp()
    asked: list[object] = []
    panel = PrometheusPanel(observe.ReplayApp(), url="http://127.0.0.1:9",
                            reader=lambda *a, **k: asked.append(a),  # type: ignore[arg-type,return-value]
                            clock=lambda: now)
    panel.end.value = "2026-12-02 09:00"
    assert panel.load() is None and asked == []  # nothing asked of the server
    assert t("observe.live.error.future_end") in panel.error.value
    line = _detail(panel)
    assert "2026-12-02 09:00:00" in line and "2026-12-01 14:00:00" in line


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
    assert _detail(panel) == t("observe.live.why.bad_time.end", value="'어제 저녁'")


def test_panel_refuses_values_the_browser_invented() -> None:
    panel = PrometheusPanel(observe.ReplayApp(), url="http://127.0.0.1:9")
    panel.url.value = "x" * 10_000
    assert panel.load() is None
    assert t("observe.live.error.bad_url") in panel.error.value
