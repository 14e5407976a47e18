"""Widgets for lesson 01, "관측 — 무엇을 봐야 합니까": a live GPU dashboard, replay of real logs.

Builders (each returns a widget or a table; the notebook only calls them):

- :func:`dashboard` — the lab GPU live: util.gpu next to SM activity, occupancy, tensor and
  DRAM activity, memory, power vs limit, temperature, clocks with throttle reasons, errors;
  start/stop and rate controls; every panel says "n/a — reason" when its reading fails;
- :func:`scenario_lab` — the same panels with the simulated GPU's workload scenarios: which
  panel reveals each;
- :func:`wall_exercise` — "what goes on the wall": at most three panels per situation;
- :func:`replay_app` — an operator's log (nvidia-smi --query-gpu CSV or dmon, an nvidia-smi -q/-q -x
  snapshot, a dcgm-exporter scrape; shipped or uploaded; a field picker for noheader logs),
  scrubbed with a time slider through the same panels;
- :func:`reference_table`, :func:`trace_summary`, :func:`unit_pitfalls` — tables (nbval checks).

The package, one idea per module: ``common`` (constants, small widget helpers), ``panels`` (a
panel card, the signal badges), ``charts``, ``dashboard`` (live; threads are described there),
``wall``, ``upload`` (the upload control and its Korean errors), ``fields`` (the field picker),
``snapshot`` (the ``nvidia-smi -q`` panel), ``replay``, ``tables``. Every name importable from
``labkit.ui.observe`` before the split still is.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

from labkit.ui.observe.charts import activity_figure, power_figure, with_gaps
from labkit.ui.observe.common import (
    ACTIVITY_LINES,
    DEFAULT_TRACE,
    MAX_CHART_POINTS,
    MAX_EXPORT_BYTES,
    MAX_RUN_S,
    RATES_HZ,
    RENDER_INTERVAL_S,
    SCENARIO_RUN_S,
    SCENARIOS,
    WINDOW_S,
    LiveFigureOutput,
)
from labkit.ui.observe.dashboard import DashboardApp, dashboard, scenario_lab
from labkit.ui.observe.fields import preview_html
from labkit.ui.observe.panels import _value_text as _value_text
from labkit.ui.observe.panels import panel_html, signals_html
from labkit.ui.observe.replay import ReplayApp, current_replay, replay_app
from labkit.ui.observe.snapshot import snapshot_html
from labkit.ui.observe.tables import reference_table, trace_summary, unit_pitfalls
from labkit.ui.observe.upload import (
    LOG_ERROR_KINDS,
    MAX_UPLOAD_BYTES,
    UPLOAD_SUFFIXES,
    log_error_text,
    read_upload,
)
from labkit.ui.observe.wall import wall_exercise

_DEFAULT_TRACE = DEFAULT_TRACE

__all__ = [
    "ACTIVITY_LINES",
    "LOG_ERROR_KINDS",
    "MAX_CHART_POINTS",
    "MAX_EXPORT_BYTES",
    "MAX_RUN_S",
    "MAX_UPLOAD_BYTES",
    "RATES_HZ",
    "RENDER_INTERVAL_S",
    "SCENARIOS",
    "SCENARIO_RUN_S",
    "UPLOAD_SUFFIXES",
    "WINDOW_S",
    "DashboardApp",
    "LiveFigureOutput",
    "ReplayApp",
    "activity_figure",
    "current_replay",
    "dashboard",
    "log_error_text",
    "panel_html",
    "power_figure",
    "preview_html",
    "read_upload",
    "reference_table",
    "replay_app",
    "scenario_lab",
    "signals_html",
    "snapshot_html",
    "trace_summary",
    "unit_pitfalls",
    "wall_exercise",
    "with_gaps",
]
