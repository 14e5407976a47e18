"""Lesson 01's replay as a student sees it: scenario labels on the chart, no DCGM sentinel ever
shown, no ``title="null"`` tooltip (ipywidgets 8.1 writes one for a control whose tooltip is
None)."""

from __future__ import annotations

import re
from typing import Any

from ipywidgets.widgets.widget_description import DescriptionWidget

from labkit.i18n import t
from labkit.ui import observe as ui

#: DCGM's blank sentinels (dcgm_structs.h) as they would be printed, and as float64.
SENTINELS = ("9223372036854775", "9.22337", "2147483632", "2147483635", "140737488355328",
             "1.40737")


def _walk(widget: Any) -> list[Any]:
    out = [widget]
    for child in getattr(widget, "children", ()):
        out += _walk(child)
    return out


def test_replay_chart_labels_each_scenario_of_the_shipped_trace() -> None:
    app = ui.replay_app()
    fig = app.activity.figure
    labels = [a.text for a in fig.layout.annotations]
    # the trace's own segments line: idle@0,training@20,collective_stall@40,tiny_kernel@60,...
    assert labels == [t(f"observe.scenario_short.{s}") for s in (
        "idle", "training", "collective_stall", "tiny_kernel", "dataloader_starved", "burn_in")]
    bands = [(s.x0, s.x1) for s in fig.layout.shapes if s.type == "rect"]
    assert bands[:3] == [(0.0, 20.0), (20.0, 40.0), (40.0, 60.0)]
    app.close()


def test_replay_never_shows_a_dcgm_sentinel() -> None:
    """The shipped dcgm-exporter trace holds DCGM_INT64_BLANK for the profiling fields of its
    first scrape: at every time step, no panel, signal or chart point shows a sentinel."""
    app = ui.replay_app()
    assert app.trace is not None
    for k in range(len(app.trace.times)):
        app.time.value = k
        shown = " ".join(c.value for c in app.cards.values()) + app.signals.value
        assert not any(s in shown for s in SENTINELS), k
    for fig in (app.activity.figure, app.power.figure):
        ys = [y for tr in fig.data for y in tr.y if y is not None]
        assert max(ys) < 1e5  # %, W and MHz: no 9.2e18
    app.time.value = 0
    assert "DCGM 빈 값" in re.sub(r"<[^>]+>", " ", app.cards["sm_active"].value)
    app.close()


def test_no_control_of_lesson_01_leaves_its_tooltip_none() -> None:
    for app in (ui.replay_app(), ui.wall_exercise()):
        widgets = [w for w in _walk(app) if isinstance(w, DescriptionWidget)]
        assert widgets and all(w.tooltip is not None for w in widgets)
        app.close()


def test_throttle_badge_names_the_reason_in_korean() -> None:
    from labkit.observe import Reading
    from labkit.ui.observe import signals_html

    # nvml.h: nvmlClocksEventReasonSwPowerCap = 0x4, HwThermalSlowdown = 0x40
    shown = re.sub(r"<[^>]+>", " ", signals_html({"clocks_event_reasons": Reading(0x44)}))
    assert "전력 한도에 걸림 (SwPowerCap)" in shown
    assert "온도 때문에 하드웨어 감속 (HwThermalSlowdown)" in shown


def test_prometheus_mig_device_label_in_korean() -> None:
    """labkit.data.prometheus numbers a MIG device as its own series after the GPUs, with its
    parent GPU and dcgm-exporter's GPU_I_PROFILE / GPU_I_ID labels in the device info."""
    from labkit.observe.mig_series import SeriesId
    from labkit.ui.observe.replay import series_label

    devices = {0: {"modelName": "NVIDIA H100 80GB HBM3"},
               1: {"modelName": "NVIDIA H100 80GB HBM3", "GPU_I_PROFILE": "1g.10gb",
                   "GPU_I_ID": "9", "parent_gpu": "0",
                   "name": "NVIDIA H100 80GB HBM3 MIG 1g.10gb (GPU 0, GI 9)"}}
    assert series_label(SeriesId(0, 0), devices) == "GPU 0: NVIDIA H100 80GB HBM3"
    assert series_label(SeriesId(1, 1), devices) == "GPU 0 · MIG 1g.10gb (GI 9)"


def test_replay_time_and_gpu_take_only_what_the_trace_has() -> None:
    """Issue 17: a client could raise the time slider's max (or send 1e308) and a GPU index
    past the list; each is refused beside its control and the panels keep the moment shown."""
    app = ui.replay_app()
    end = app.time.max
    app.time.set_state({"value": 3})
    panels = {k: c.value for k, c in app.cards.items()}
    row = next(b for b in _walk(app) if app.time in getattr(b, "children", ()))
    notes = [w for w in row.children if "lk-error" in w._dom_classes]
    for state in ({"max": end * 100, "value": end * 50}, {"value": 1e308},
                  {"value": float("nan")}, {"value": "abc"}):
        app.time.set_state(state)
        assert (app.time.value, app.time.max) == (3, end)
        assert any("가" <= ch <= "힣" for n in notes for ch in n.value), state
        assert {k: c.value for k, c in app.cards.items()} == panels
    app.gpu.set_state({"index": len(app.gpu.options)})
    assert "목록에 없는 선택입니다" in " ".join(n.value for n in row.children
                                          if "lk-error" in n._dom_classes)
    app.time.set_state({"value": end})  # the last moment: taken; no readout, nothing typed,
    assert app.time.value == end        # so no bound note
    assert notes[-1].value == ""  # the time's own slot (the GPU's keeps its message)
