"""Lesson 01's replay: each MIG device of an uploaded log is its own selectable series.

Inputs: dcgm-exporter scrapes from NVIDIA/dcgm-exporter issues #512 (H100, three 1g.10gb
devices, GPU_I_ID 7/8/9) and #317 (A30) — tests/fixtures/observe/SOURCES.md — and a dmon log
with MIG rows written here (the layout of ``nvidia-smi dmon`` with ``gi``/``ci`` columns).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from labkit.observe.mig_series import SeriesId, split_mig_series
from labkit.ui import observe as ui

FIXTURES = Path(__file__).parent / "fixtures" / "observe"
DMON_MIG = ("#Time        gpu    gi    ci   pwr    sm\n"
            "#HH:MM:SS    Idx    Id    Id     W     %\n"
            " 10:00:00      0     -     -   300     -\n"
            " 10:00:00      0     1     0     -    50\n"
            " 10:00:00      0     2     0     -    20\n"
            " 10:00:01      0     -     -   310     -\n"
            " 10:00:01      0     1     0     -    60\n"
            " 10:00:01      0     2     0     -    30\n")


def _upload(name: str, data: bytes) -> tuple[dict[str, Any], ...]:
    return ({"name": name, "type": "text/plain", "size": len(data),
             "content": memoryview(data), "last_modified": datetime(2026, 12, 1)},)


def _labels(app: Any) -> list[str]:
    return [label for label, _ in app.gpu.options]


def test_split_mig_series_moves_each_tag_to_its_own_series() -> None:
    frame = pd.DataFrame({
        "timestamp_s": [0.0, 0.0, 0.0, 1.0], "timestamp": None, "gpu": [0, 0, 1, 0],
        "metric": ["power_usage_w", "sm_active_frac@mig:1g.10gb:9", "sm_active_frac@mig:gi1",
                   "sm_active_frac@mig:1g.10gb:7"],
        "value": [300.0, 0.5, 0.1, 0.7], "unit": "", "status": "ok", "reason": None})
    out, series = split_mig_series(frame)
    # whole GPU 0 first, then MIG devices after the highest GPU index (1): parent, then GI id
    assert series == (SeriesId(0, 0), SeriesId(2, 0, "1g.10gb", 7), SeriesId(3, 0, "1g.10gb", 9),
                      SeriesId(4, 1, None, 1))
    assert list(out.gpu) == [0, 3, 4, 2]
    assert list(out.metric) == ["power_usage_w", "sm_active_frac", "sm_active_frac",
                                "sm_active_frac"]
    assert list(frame.gpu) == [0, 0, 1, 0]  # the input is not changed


def test_split_mig_series_without_mig_returns_the_frame() -> None:
    frame = pd.DataFrame({"timestamp_s": [0.0], "timestamp": None, "gpu": [3],
                          "metric": ["power_usage_w"], "value": [1.0], "unit": "W",
                          "status": "ok", "reason": None})
    out, series = split_mig_series(frame)
    assert out is frame and series == (SeriesId(3, 3),)


def test_replay_offers_each_mig_device_of_a_dcgm_scrape() -> None:
    app = ui.replay_app()
    app.upload.value = _upload("h100.prom",
                               (FIXTURES / "dcgm_h100_mig_issue512.prom").read_bytes())
    assert app.log_import is not None and app.log_import.source == "h100.prom"
    labels = _labels(app)
    assert labels == ["GPU 0 · MIG 1g.10gb (GI 7)", "GPU 0 · MIG 1g.10gb (GI 8)",
                      "GPU 0 · MIG 1g.10gb (GI 9)"]
    assert not any("@mig" in label for label in labels)
    app.gpu.value = app.gpu.options[2][1]
    fig = app.activity.figure
    assert fig is not None
    names = [tr.name for tr in fig.data]
    assert names == ["그래픽 엔진 활동 (GR engine active)"]  # the MIG device's own line
    app.close()


def test_replay_offers_whole_gpus_and_mig_devices_of_a_dmon_log() -> None:
    app = ui.replay_app()
    app.upload.value = _upload("dmon.txt", DMON_MIG.encode())
    assert _labels(app)[1:] == ["GPU 0 · MIG (GI 1, CI 0)", "GPU 0 · MIG (GI 2, CI 0)"]
    assert _labels(app)[0] == "GPU 0 (nvidia-smi dmon)"  # dmon names no model (issue 16)
    app.gpu.value = app.gpu.options[2][1]  # GI 2: dmon's "sm" (util.gpu) 20 % then 30 %
    lines = {tr.name: list(tr.y) for tr in app.activity.figure.data}
    assert lines == {"GPU 사용률 (util.gpu)": pytest.approx([20.0, 30.0])}
    app.close()


def test_replay_a30_scrape_keeps_the_mig_device_of_the_second_gpu() -> None:
    app = ui.replay_app()
    app.upload.value = _upload("a30.prom", (FIXTURES / "dcgm_a30_mig_issue317.prom").read_bytes())
    labels = _labels(app)
    assert labels[-1] == "GPU 1 · MIG 1g.6gb (GI 3)" and len(labels) == 5
    app.close()
