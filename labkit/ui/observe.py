"""Widgets for lesson 01, "관측 — 무엇을 봐야 하는가": a live GPU dashboard, replay of real logs.

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

Threads: the sampler polls NVML on its own thread (``labkit.gpu.sampler.Sampler.start``); after
each tick it hands the snapshot over and the app re-renders at most every
:data:`RENDER_INTERVAL_S`, under one lock shared with the widget callbacks. Widgets are only
changed by setting traits (thread-safe in ipykernel); figures are shown by setting the Output's
``outputs`` trait, never by capturing ``display()`` from a thread. Nothing samples until a
student presses start (or picks a scenario); it stops by itself after
:data:`MAX_RUN_S`, so a forgotten tab does not poll forever, and on kernel shutdown (daemon
thread, ``atexit``).

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import atexit
import base64
import html
import math
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import PurePath
from typing import Any

import ipywidgets as widgets
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from labkit import observe as model
from labkit.data.observe.smi_csv import COMMON_FIELD_SETS
from labkit.gpu.sampler import GPM_MIN_INTERVAL_S, Sampler, stop_all
from labkit.i18n import KO, error_text, t
from labkit.observe import CATALOG, PANELS, Reading
from labkit.ui import format as fmt
from labkit.ui.components import FigureOutput, styled_figure
from labkit.validate import InputError

__all__ = [
    "DashboardApp",
    "ReplayApp",
    "current_replay",
    "dashboard",
    "panel_html",
    "reference_table",
    "replay_app",
    "scenario_lab",
    "trace_summary",
    "unit_pitfalls",
    "wall_exercise",
]

#: Rates offered (Hz); the sampler refuses more than labkit.observe.MAX_RATE_HZ.
RATES_HZ: tuple[float, ...] = (0.5, 1.0, 2.0, 5.0, 10.0)
#: The page re-renders at most this often, whatever the sampling rate (a plot update costs
#: 40-100 ms in the browser; see README "Stack notes"). [s]
RENDER_INTERVAL_S = 0.5
#: A dashboard stops sampling by itself after this long. [s]
MAX_RUN_S = 600.0
#: The scenario lab starts sampling when a scenario is picked, for this long. [s]
SCENARIO_RUN_S = 180.0
#: Charts show this much recent history. [s]
WINDOW_S = 60.0
#: Largest upload accepted (a month of 1 Hz nvidia-smi CSV is about 1 MB). [bytes]
MAX_UPLOAD_BYTES = 2 * 1024 * 1024
UPLOAD_SUFFIXES = (".csv", ".txt", ".prom", ".log", ".xml")
#: Largest CSV export offered as a download link (it travels inside the page). [bytes]
MAX_EXPORT_BYTES = 4 * 1024 * 1024
#: Most points per line in a replay chart (longer logs are thinned for drawing only).
MAX_CHART_POINTS = 2000
#: The scenarios the lab offers, in teaching order (names of labkit.gpu.sim.SCENARIOS).
SCENARIOS: tuple[str, ...] = ("idle", "training", "tiny_kernel", "collective_stall",
                              "dataloader_starved", "memory_bound", "inference_small_batch",
                              "burn_in")
ACTIVITY_LINES: tuple[tuple[str, str], ...] = (
    ("gpu_util_frac", "#d1495b"), ("sm_active_frac", "#3b6fb6"),
    ("sm_occupancy_frac", "#7aa6dc"), ("tensor_active_frac", "#2e7d32"),
    ("dram_active_frac", "#e09f3e"))
_DEFAULT_TRACE = "sim-h100_dcgm-exporter_scenarios.prom"

_APPS: list[Any] = []


@atexit.register
def _stop_everything() -> None:
    stop_all()


# --------------------------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------------------------


# FigureOutput sets the Output widget's ``outputs`` trait (no display() capture), which is safe
# from the sampler thread; the dashboard uses it as it is.
LiveFigureOutput = FigureOutput


def _css(widget: widgets.Widget, *classes: str) -> widgets.Widget:
    for c in classes:
        widget.add_class(c)
    return widget


def _reason_text(reading: Reading) -> str:
    """Korean 'why n/a' for a missing reading: the status in words, the NVML name after it."""
    status = reading.status.value
    raw = reading.reason or ""
    if raw.startswith("DCGM blank"):  # "DCGM blank (not supported)": say it in Korean
        kind = raw.partition("(")[2].rstrip(")") or "blank"
        key = f"observe.dcgm_blank.{kind}"
        return t("observe.dcgm_blank", kind=t(key) if key in KO else html.escape(kind))
    words = t(f"observe.status.{status}")
    return f"{words} ({html.escape(raw)})" if raw and raw.lower() != status else words


_ABSENT = threading.local()


def _na(reading: Reading | None) -> str:
    if reading is None:
        absent = getattr(_ABSENT, "key", "observe.status.not_read")
        return t("common.na_reason", reason=t(absent))
    return t("common.na_reason", reason=_reason_text(reading))


def _num(value: float, digits: int = 0) -> str:
    return fmt.count(value, digits)


def _value_text(metric: str, reading: Reading | None) -> str:
    """Format one reading in its unit ("n/a — reason" if missing)."""
    if reading is None or not reading.ok or reading.value is None:
        return _na(reading)
    v = reading.value
    unit = CATALOG[metric].unit if metric in CATALOG else ""
    if unit == "frac":
        return fmt.pct(v, 1)
    if unit == "W":
        return f"{_num(v, 1)} W"
    if unit == "J":
        return f"{_num(v / 1000, 1)} kJ"
    if unit == "MiB":
        return f"{_num(v)} MiB"
    if unit == "degC":
        return f"{_num(v)} °C"
    if unit == "MHz":
        return f"{_num(v)} MHz"
    if unit == "KB/s":
        return f"{_num(v / 1000, 1)} MB/s"
    return _num(v)


_CARD = ('<div style="border:1px solid #d0d7e2;border-radius:6px;padding:6px 10px;'
         'min-height:86px;background:{bg}">'
         '<div style="color:#555;font-size:0.85em">{title}</div>'
         '<div style="font-size:1.6em;font-weight:700;line-height:1.2">{big}</div>'
         '<div style="color:#555;font-size:0.85em">{detail}</div></div>')


def _card(title: str, big: str, detail: str = "", *, alarm: bool = False, na: bool = False
          ) -> str:
    bg = "#fdecee" if alarm else ("#f3f3f3" if na else "#ffffff")
    if na:
        big = f'<span style="font-size:0.6em;font-weight:600;color:#777">{big}</span>'
    return _CARD.format(bg=bg, title=title, big=big, detail=detail)


def panel_html(panel: str, view: Mapping[str, Reading], *, replay: bool = False) -> str:
    """Return one dashboard panel as HTML for one GPU's readings ("n/a — reason" if missing).

    Parameters
    ----------
    panel : str
        A key of :data:`labkit.observe.PANELS`.
    view : mapping of str to Reading
        The GPU's latest readings.
    replay : bool, default False
        A metric absent from ``view`` reads "not in this log" instead of "not read yet".
    """
    _ABSENT.key = "observe.status.not_in_log" if replay else "observe.status.not_read"
    try:
        return _panel_html(panel, view)
    finally:
        _ABSENT.key = "observe.status.not_read"


def _panel_html(panel: str, view: Mapping[str, Reading]) -> str:
    title = t(f"observe.panel.{panel}")
    primary = PANELS[panel][0]
    r = view.get(primary)

    def missing() -> str:
        return _card(title, _na(r), na=True)

    if panel == "memory":
        used, total = view.get("fb_used_mib"), view.get("fb_total_mib")
        if used is None or not used.ok:
            return missing()
        detail = ""
        if total is not None and total.ok and total.value:
            detail = t("observe.detail.of_total", total=_value_text("fb_total_mib", total),
                       pct=fmt.pct((used.value or 0) / total.value))
        return _card(title, _value_text("fb_used_mib", used), detail)
    if panel == "power":
        if r is None or not r.ok:
            return missing()
        pf = model.power_frac(view)
        limit = view.get("power_limit_w")
        detail = (t("observe.detail.power_of_limit", limit=_value_text("power_limit_w", limit),
                    pct=fmt.pct(pf)) if pf is not None
                  else t("observe.detail.limit_na", reason=_na(limit)))
        energy = view.get("energy_j")
        if energy is not None and energy.ok:
            detail += "<br>" + t("observe.detail.energy", energy=_value_text("energy_j", energy))
        return _card(title, _value_text("power_usage_w", r), detail)
    if panel == "temperature":
        if r is None or not r.ok:
            return missing()
        hbm = _value_text("memory_temp_c", view.get("memory_temp_c"))
        fan = _value_text("fan_speed_frac", view.get("fan_speed_frac"))
        parts = [f"HBM {hbm}", f"{t('observe.detail.fan')} {fan}"]
        return _card(title, _value_text("gpu_temp_c", r), " · ".join(parts))
    if panel == "clocks":
        if r is None or not r.ok:
            return missing()
        frac = model.sm_clock_frac(view)
        reasons_r = view.get("clocks_event_reasons")
        if reasons_r is not None and reasons_r.ok and reasons_r.value is not None:
            names = model.decode_clocks_event_reasons(reasons_r.value)
            reasons = ", ".join(f"{n} ({t(f'observe.reason.{n}')})"
                                if f"observe.reason.{n}" in KO else n
                                for n in names) or t("observe.detail.no_reason")
        else:
            reasons = _na(reasons_r)
        sig = model.throttle(view)
        detail = t("observe.detail.clock_of_max", pct=fmt.pct(frac)) if frac is not None else ""
        detail += "<br>" + t("observe.detail.reasons", reasons=reasons)
        return _card(title, _value_text("sm_clock_mhz", r), detail, alarm=bool(sig.on))
    if panel == "pcie":
        rx, tx = view.get("pcie_rx_kb_per_s"), view.get("pcie_tx_kb_per_s")
        if (rx is None or not rx.ok) and (tx is None or not tx.ok):
            return _card(title, _na(rx), na=True)
        return _card(title, f"RX {_value_text('pcie_rx_kb_per_s', rx)}",
                     f"TX {_value_text('pcie_tx_kb_per_s', tx)}")
    if panel == "errors":
        found = model.alerts(view)
        counters = [view.get(m) for m in PANELS["errors"]]
        if not found and all(c is None or not c.ok for c in counters):
            return _card(title, _na(next((c for c in counters if c is not None), None)),
                         na=True)
        if not found:
            return _card(title, t("observe.detail.no_errors"),
                         t("observe.detail.errors_checked"))
        lines = [t(f"observe.alert.{a.key}", value=_num(a.value or 0)) for a in found]
        return _card(title, t("observe.detail.n_alerts", n=len(found)), "<br>".join(lines),
                     alarm=True)
    # activity panels
    if r is None or not r.ok:
        return missing()
    detail = ""
    if panel == "gpu_util":
        detail = t("observe.detail.gpu_util")
        busy = model.busy_not_working(view)
        if busy.on:
            detail = "<b>" + t("observe.signal.busy_not_working_short") + "</b>"
        return _card(title, _value_text(primary, r), detail, alarm=bool(busy.on))
    if panel == "sm_active":
        occ = view.get("sm_occupancy_frac")
        detail = t("observe.detail.occupancy", occ=_value_text("sm_occupancy_frac", occ))
    elif panel == "dram_active":
        detail = t("observe.detail.mem_copy",
                   util=_value_text("mem_copy_util_frac", view.get("mem_copy_util_frac")))
    elif panel == "tensor_active":
        detail = t("observe.detail.tensor")
    return _card(title, _value_text(primary, r), detail)


def signals_html(view: Mapping[str, Reading]) -> str:
    """Return the derived signals as a line of badges (busy-but-not-working, throttle, alerts)."""
    badges = []
    busy = model.busy_not_working(view)
    if busy.on is None:
        badges.append(("#777", t("observe.signal.busy_unknown")))
    elif busy.on:
        basis = t(f"observe.signal.basis.{busy.basis}")
        value = fmt.pct(busy.value if busy.value is not None else math.nan)
        badges.append(("#b00020", t("observe.signal.busy_on", basis=basis, value=value)))
    else:
        badges.append(("#1b7f3b", t("observe.signal.busy_off")))
    thr = model.throttle(view)
    if thr.on:
        badges.append(("#b00020", t("observe.signal.throttle_on", reasons=thr.basis)))
    for a in model.alerts(view):
        badges.append(("#b00020" if a.severity == "critical" else "#a15c00",
                       t(f"observe.alert.{a.key}", value=_num(a.value or 0))))
    return " ".join(f'<span style="display:inline-block;margin:2px 4px;padding:2px 8px;'
                    f'border-radius:10px;color:white;background:{c}">{text}</span>'
                    for c, text in badges)


_LEGEND_BELOW: dict[str, Any] = {
    "legend": {"orientation": "h", "y": -0.42, "x": 0},
    "margin": {"l": 60, "r": 70, "t": 50, "b": 110},
}


def with_gaps(frame: pd.DataFrame, max_gap_s: float) -> pd.DataFrame:
    """Return ``frame`` (index: time) with readings carried forward between samples of slower
    metrics, and a blank row wherever samples are more than ``max_gap_s`` apart (sampling was
    stopped), so a chart line breaks there instead of drawing a ramp across the gap."""
    if frame.empty:
        return frame
    frame = frame.sort_index().ffill()
    t = frame.index.to_numpy(dtype=float)
    gaps = np.nonzero(np.diff(t) > max_gap_s)[0]
    if len(gaps) == 0:
        return frame
    blank = pd.DataFrame(np.nan, columns=frame.columns,
                         index=pd.Index(t[gaps] + max_gap_s / 2, name=frame.index.name))
    return pd.concat([frame, blank]).sort_index()


def _plain(values: np.ndarray, digits: int = 4) -> list[float | None]:
    """Return a JSON-plain list (NaN -> None): small, and readable from the page's plot data."""
    return [None if not math.isfinite(v) else round(float(v), digits) for v in values]


def activity_figure(frame: pd.DataFrame, *, title: str, marker_t: float | None = None,
                    x_range: tuple[float, float] | None = None) -> go.Figure:
    """Return util.gpu next to SM activity, occupancy, tensor and DRAM activity over time.

    Parameters
    ----------
    frame : pandas.DataFrame
        Index ``timestamp_s``, columns among the activity metrics (fractions 0-1).
    """
    fig = styled_figure(title=title, height=330, yaxis_title="%",
                        xaxis_title=t("observe.chart.time_axis"), **_LEGEND_BELOW)
    x = _plain(frame.index.to_numpy(dtype=float))
    for key, color in ACTIVITY_LINES:
        if key not in frame.columns:
            continue
        y = _plain(frame[key].to_numpy(dtype=float) * 100)
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name=t(f"observe.metric.{key}"),
                                 line={"color": color, "width": 3 if key == "gpu_util_frac"
                                       else 2}, connectgaps=False))
    fig.update_yaxes(range=[-2, 105])
    if x_range is not None:
        fig.update_xaxes(range=list(x_range))
    if marker_t is not None:
        fig.add_vline(x=marker_t, line={"color": "#444", "dash": "dot"})
    return fig


def power_figure(frame: pd.DataFrame, *, title: str, marker_t: float | None = None,
                 x_range: tuple[float, float] | None = None) -> go.Figure:
    """Return power vs the enforced limit (left axis) and the SM clock (right axis) over time."""
    fig = styled_figure(title=title, height=330, yaxis_title="W",
                        xaxis_title=t("observe.chart.time_axis"),
                        yaxis2={"title": "MHz", "overlaying": "y", "side": "right",
                                "showgrid": False, "rangemode": "tozero"},
                        **_LEGEND_BELOW)
    x = _plain(frame.index.to_numpy(dtype=float))
    lines = (("power_usage_w", "y", "#d1495b", None), ("power_limit_w", "y", "#d1495b", "dash"),
             ("sm_clock_mhz", "y2", "#3b6fb6", None), ("max_sm_clock_mhz", "y2", "#3b6fb6",
                                                        "dash"))
    for key, axis, color, dash in lines:
        if key not in frame.columns:
            continue
        y = _plain(frame[key].to_numpy(dtype=float))
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", yaxis=axis,
                                 name=t(f"observe.metric.{key}"),
                                 line={"color": color, "dash": dash}, connectgaps=False))
    fig.update_yaxes(rangemode="tozero")
    if x_range is not None:
        fig.update_xaxes(range=list(x_range))
    if marker_t is not None:
        fig.add_vline(x=marker_t, line={"color": "#444", "dash": "dot"})
    return fig


def _download_link(text: str, filename: str) -> str:
    data = text.encode("utf-8")
    if len(data) > MAX_EXPORT_BYTES:
        return t("observe.export.too_big", size=fmt.count(len(data) / 2**20, 1))
    b64 = base64.b64encode(data).decode("ascii")
    return (f'<a download="{html.escape(filename)}" href="data:text/csv;base64,{b64}">'
            f"⬇ {html.escape(filename)}</a> ({fmt.count(len(data) / 1024, 0)} KB)")


# --------------------------------------------------------------------------------------------
# The live dashboard
# --------------------------------------------------------------------------------------------


class DashboardApp(widgets.VBox):
    """The live dashboard (see :func:`dashboard` and :func:`scenario_lab`).

    Parameters
    ----------
    nv : module or None
        The connected NVML module; None shows why there is no GPU (``reason``).
    name : str
        CSS prefix of the controls (``lk-<name>-run``, ``lk-<name>-rate``, ...).
    panels : sequence of str
        Panels shown (keys of :data:`labkit.observe.PANELS`).
    lab : object, optional
        The simulated lab (``labkit.gpu.simulator()``).
    scenarios : bool, default False
        Offer the simulated lab's workload scenarios (on a real GPU: a note that labkit never
        starts work there).
    charts : sequence of {"activity", "power"}
        The charts under the panels.
    clock, sleep : callable, optional
        The sampler's clock and the pause used to take the first GPM interval (tests pass the
        simulated lab's virtual clock and ``lab.advance``).
    """

    def __init__(self, nv: Any | None, *, name: str, panels: Sequence[str], lab: Any = None,
                 reason: str = "", rate_hz: float = 1.0,
                 charts: Sequence[str] = ("activity", "power"),
                 clock: Callable[[], float] | None = None,
                 sleep: Callable[[float], Any] = time.sleep, autostart_s: float | None = None,
                 scenarios: bool = False) -> None:
        super().__init__()
        self.app_name = name
        self.add_class(f"lk-{name}")
        self.panel_keys = tuple(panels)
        self.lab = lab
        self.autostart_s = autostart_s
        self._render_lock = threading.RLock()
        self._last_render = -math.inf
        self.renders = 0
        self.status = _css(widgets.HTML(""), f"lk-{name}-status")
        self.cards = {p: _css(widgets.HTML(""), f"lk-{name}-panel", f"lk-panel-{p}")
                      for p in self.panel_keys}
        self.signals = _css(widgets.HTML(""), f"lk-{name}-signals")
        self.activity = LiveFigureOutput(f"lk-{name}-activity")
        self.power = LiveFigureOutput(f"lk-{name}-power")
        self.charts = tuple(charts)
        self.sampler: Sampler | None = None
        if nv is not None:
            self.sampler = Sampler(nv, clock=clock or time.monotonic)
            self.sampler.set_rate(rate_hz)
            if not self.sampler.devices:
                reason = self.sampler.error or "NoDevices"
                self.sampler = None
        if self.sampler is None:
            note = _css(widgets.HTML(
                '<div style="padding:8px;border-left:4px solid #b00020;background:#fdecee">'
                + t("observe.no_gpu", reason=html.escape(reason or "?")) + "</div>"),
                f"lk-{name}-nogpu")
            self.children = [note]
            return
        gpus = self.sampler.gpus
        self.gpu = _css(widgets.Dropdown(
            options=[(t("observe.gpu_option", index=g, name=d.name), g)
                     for g, d in zip(gpus, self.sampler.devices, strict=True)],
            value=gpus[0], description=t("observe.gpu_label"),
            layout=widgets.Layout(width="360px")), f"lk-{name}-gpu")
        self.run = _css(widgets.ToggleButton(value=False, description=t("observe.start"),
                                             button_style="success",
                                             layout=widgets.Layout(width="120px")),
                        f"lk-{name}-run")
        self.rate = _css(widgets.Dropdown(
            options=[(f"{r:g} Hz", r) for r in RATES_HZ], value=rate_hz,
            description=t("observe.rate_label"), layout=widgets.Layout(width="200px")),
            f"lk-{name}-rate")
        self.export = _css(widgets.Button(description=t("observe.export.button")),
                           f"lk-{name}-export")
        self.export_link = _css(widgets.HTML(""), f"lk-{name}-export-link")
        self.error = _css(widgets.HTML(""), "lk-error")
        self.gpu.observe(self._on_gpu, names="value")
        self.run.observe(self._on_run, names="value")
        self.rate.observe(self._on_rate, names="value")
        self.export.on_click(self._on_export)
        controls = [self.run, self.rate, self.gpu]
        rows: list[widgets.Widget] = [
            widgets.HBox(controls, layout=widgets.Layout(flex_flow="row wrap",
                                                         align_items="center")),
            self.status, self.error]
        self.scenario: widgets.Dropdown | None = None
        self.reveal = _css(widgets.HTML(""), f"lk-{name}-reveal")
        if scenarios and lab is not None:
            self.scenario = _css(widgets.Dropdown(
                options=[(t(f"observe.scenario.{s}"), s) for s in SCENARIOS],
                value=self._current_scenario(gpus[0]), description=t("observe.scenario_label"),
                layout=widgets.Layout(width="680px"), style={"description_width": "initial"}),
                f"lk-{name}-scenario")
            self.scenario.observe(self._on_scenario, names="value")
            rows.append(widgets.VBox([self.scenario, self.reveal]))
        elif scenarios:
            rows.append(_css(widgets.HTML(t("observe.real_gpu_note")),
                             f"lk-{name}-real-note"))
        grid = widgets.GridBox(list(self.cards.values()), layout=widgets.Layout(
            grid_template_columns="repeat(auto-fill, minmax(210px, 1fr))", grid_gap="8px"))
        rows += [self.signals, grid]
        rows += [{"activity": self.activity, "power": self.power}[c] for c in self.charts]
        rows.append(widgets.HBox([self.export, self.export_link]))
        self.children = rows
        # a first look, taken now: two polls one GPM interval apart, so SM activity has a value
        self.sampler.poll()
        sleep(GPM_MIN_INTERVAL_S + 0.01)
        self.sampler.poll()
        self.render(force=True)
        for old in [a for a in _APPS if a.app_name == name]:  # the cell was run again
            old.stop()
            _APPS.remove(old)
        _APPS.append(self)

    # -- state ----------------------------------------------------------------------------------
    @property
    def selected_gpu(self) -> int:
        """The GPU the panels show (validated: always one the sampler reads)."""
        assert self.sampler is not None
        g = self.gpu.value
        return g if g in self.sampler.gpus else self.sampler.gpus[0]

    def _current_scenario(self, gpu: int) -> str:
        running = [w.scenario.name for w in self.lab.workloads(gpu)]
        return running[-1] if running and running[-1] in SCENARIOS else "idle"

    # -- callbacks ------------------------------------------------------------------------------
    def _set_error(self, err: ValueError | None) -> None:
        if err is None:
            self.error.value = ""
            return
        message = html.escape(error_text(err, prefix="observe.error"))
        self.error.value = f'<span style="color:#b00020">⚠ {message}</span>'

    def _on_gpu(self, _change: Any = None) -> None:
        if self.scenario is not None:
            self.scenario.unobserve(self._on_scenario, names="value")
            self.scenario.value = self._current_scenario(self.selected_gpu)
            self.scenario.observe(self._on_scenario, names="value")
        self.render(force=True)

    def _on_rate(self, change: Any) -> None:
        assert self.sampler is not None
        try:
            self.sampler.set_rate(change["new"])
        except ValueError as err:
            self._set_error(err)
            return
        self._set_error(None)
        self.render(force=True)

    def _on_run(self, change: Any) -> None:
        if change["new"]:
            self.start()
        else:
            self.stop()

    def start(self, max_run_s: float | None = MAX_RUN_S) -> None:
        """Start sampling on the background thread (stops by itself after ``max_run_s``)."""
        assert self.sampler is not None
        try:
            self.sampler.start(self.rate.value, max_run_s=max_run_s,
                               on_snapshot=self._on_snapshot)
        except ValueError as err:
            self._set_error(err)
            self._set_run(False)
            return
        self._set_error(None)
        self._set_run(True)
        self.render(force=True)

    def stop(self) -> None:
        """Stop sampling (waits for the thread to end)."""
        if self.sampler is not None:
            self.sampler.stop()
        self._set_run(False)
        self.render(force=True)

    def close(self) -> None:
        """Stop sampling, free NVML resources and close the widgets."""
        if self.sampler is not None:
            self.sampler.close()
        if self in _APPS:
            _APPS.remove(self)
        super().close()

    def _set_run(self, on: bool) -> None:
        self.run.unobserve(self._on_run, names="value")
        self.run.value = on
        self.run.description = t("observe.stop") if on else t("observe.start")
        self.run.button_style = "warning" if on else "success"
        self.run.observe(self._on_run, names="value")

    def _on_scenario(self, change: Any) -> None:
        name = change["new"]
        try:
            self.switch_scenario(name)
        except ValueError as err:
            self._set_error(err)

    def switch_scenario(self, name: str) -> None:
        """Run scenario ``name`` on the selected simulated GPU (stops its other workloads).

        Raises
        ------
        labkit.validate.InputError
            For a scenario not offered.
        """
        from labkit import validate

        validate.one_of("scenario", name, SCENARIOS)
        if self.lab is None:
            raise InputError("scenario", "choice", name, "no simulated GPU")
        gpu = self.selected_gpu
        with self._render_lock:
            self.lab.stop(device=gpu)
            if name != "idle":
                self.lab.start(name, gpu)
        self._set_error(None)
        self.reveal.value = self._reveal_text(name)
        if self.autostart_s and self.sampler is not None and not self.sampler.running:
            self.start(max_run_s=self.autostart_s)
        self.render(force=True)

    @staticmethod
    def _reveal_text(name: str) -> str:
        panels = ", ".join(t(f"observe.panel.{p}") for p in model.SCENARIO_REVEALS.get(name, ()))
        return ('<div style="padding:6px 10px;border-left:4px solid #2e7d32;background:#eef7ef">'
                + t("observe.reveal", panels=panels, why=t(f"observe.reveal.{name}")) + "</div>")

    def _on_export(self, _button: Any = None) -> None:
        assert self.sampler is not None
        frame = self.sampler.history.frame()
        if frame.empty:
            self.export_link.value = t("observe.export.empty")
            return
        text = model.export_csv(frame, source=f"labkit dashboard, {self._gpu_words()}",
                                as_of=time.strftime("%Y-%m-%d"))
        self.export_link.value = _download_link(text, "labkit_observe.csv")

    def _gpu_words(self) -> str:
        assert self.sampler is not None
        return ", ".join(f"GPU {d.index} {d.name}" for d in self.sampler.devices)

    def _on_snapshot(self, _snap: model.Snapshot) -> None:
        self.render()

    # -- drawing --------------------------------------------------------------------------------
    def render(self, force: bool = False) -> None:
        """Redraw panels, signals and charts from the history (at most every 0.5 s unless
        ``force``)."""
        if self.sampler is None:
            return
        with self._render_lock:
            now = time.monotonic()
            if not force and now - self._last_render < RENDER_INTERVAL_S:
                return
            self._last_render = now
            gpu = self.selected_gpu
            view = self.sampler.history.latest(gpu)
            for p, card in self.cards.items():
                card.value = panel_html(p, view)
            self.signals.value = signals_html(view)
            self.status.value = self._status_text()
            if self.charts:
                end = self.sampler.now()
                since = end - WINDOW_S
                act = self.sampler.history.series(gpu, [k for k, _ in ACTIVITY_LINES], since)
                pw = self.sampler.history.series(
                    gpu, ["power_usage_w", "power_limit_w", "sm_clock_mhz", "max_sm_clock_mhz"],
                    since)
                x_range = (max(0.0, since), max(end, WINDOW_S / 6))
                gap = max(3.0 / self.sampler.rate_hz, 1.0)
                if "activity" in self.charts:
                    self.activity.show(activity_figure(
                        with_gaps(act, gap), title=t("observe.chart.activity"), x_range=x_range))
                if "power" in self.charts:
                    self.power.show(power_figure(
                        with_gaps(pw, gap), title=t("observe.chart.power"), x_range=x_range))
            self.renders += 1

    def _status_text(self) -> str:
        assert self.sampler is not None
        s = self.sampler
        interval = (f"{s.last_interval_s:.2f} s" if s.last_interval_s is not None else "-")
        if s.running:
            head = t("observe.status_running", rate=f"{s.rate_hz:g}")
        elif s.stopped_reason == "max_run":
            head = t("observe.status_auto_stopped")
        elif s.stopped_reason == "callback_error":
            head = t("observe.status_error", error=html.escape(str(s.callback_error)))
        else:
            head = t("observe.status_stopped")
        text = (f'<span style="color:#555">{head} · '
                + t("observe.status_detail", interval=interval,
                    duration=f"{s.last_duration_s * 1000:.1f} ms", ticks=s.ticks))
        if len(s.gpus) > 1:
            healthy, total = model.healthy_gpus({g: s.history.latest(g) for g in s.gpus})
            text += " · " + t("observe.fleet", healthy=healthy, total=total)
        return text + "</span>"


def _connect() -> tuple[Any | None, Any, str]:
    """Return (NVML module or None, simulated lab or None, reason when there is no GPU)."""
    import labkit.gpu as gpu

    status = gpu.status()
    if status.kind == "none":
        return None, None, status.reason or status.reason_code or "none"
    try:
        nv = gpu.connect()
    except Exception as err:  # NVML errors (pynvml stays inside labkit.gpu) and bad specs
        return None, None, str(err)
    lab = gpu.simulator() if gpu.status().kind == "sim" else None
    return nv, lab, ""


def dashboard(*, rate_hz: float = 1.0, nv: Any = None, lab: Any = None,
              clock: Callable[[], float] | None = None,
              sleep: Callable[[float], Any] = time.sleep) -> DashboardApp:
    """Return the live dashboard of the lab GPU (stopped until the student presses start).

    Parameters
    ----------
    rate_hz : float, default 1.0
        Initial sampling rate (one of :data:`RATES_HZ`). [Hz]
    nv, lab, clock, sleep : optional
        For tests: an NVML module, the simulated lab, a clock and a pause (default: the lesson's
        lab GPU from ``labkit.gpu``, wall clock).
    """
    reason = ""
    if nv is None:
        nv, lab, reason = _connect()
    return DashboardApp(nv, name="observe", panels=tuple(PANELS), lab=lab, reason=reason,
                        rate_hz=rate_hz, clock=clock, sleep=sleep)


def scenario_lab(*, nv: Any = None, lab: Any = None, clock: Callable[[], float] | None = None,
                 sleep: Callable[[float], Any] = time.sleep) -> DashboardApp:
    """Return the scenario switcher: key panels of the simulated GPU and what reveals each job.

    Picking a scenario starts sampling (at 2 Hz, for :data:`SCENARIO_RUN_S`). On a real GPU
    it shows the panels without the switcher (labkit never starts work on a real GPU).
    """
    reason = ""
    if nv is None:
        nv, lab, reason = _connect()
    return DashboardApp(nv, name="scenario", lab=lab, reason=reason, rate_hz=2.0, scenarios=True,
                        panels=("gpu_util", "sm_active", "tensor_active", "dram_active",
                                "power", "clocks", "pcie"),
                        clock=clock, sleep=sleep, autostart_s=SCENARIO_RUN_S,
                        charts=("activity",))


# --------------------------------------------------------------------------------------------
# "What goes on the wall"
# --------------------------------------------------------------------------------------------


def _wall_one(situation: str) -> widgets.Widget:
    toggles = {p: _css(widgets.ToggleButton(value=False, description=t(f"observe.panel.{p}"),
                                            layout=widgets.Layout(width="auto")),
                       f"lk-wall-{situation}-{p}") for p in PANELS}
    check = _css(widgets.Button(description=t("common.check"), button_style="primary"),
                 f"lk-wall-{situation}-check")
    feedback = _css(widgets.HTML(""), f"lk-wall-{situation}-feedback")

    def on_check(*_: Any) -> None:
        chosen = [p for p, b in toggles.items() if b.value is True]
        try:
            verdict = model.check_wall(situation, chosen)
        except ValueError as err:
            feedback.value = (f'<span style="color:#b00020">⚠ '
                              f'{html.escape(error_text(err, prefix="observe.wall"))}</span>')
            return
        explain = t(f"observe.wall.{situation}.explain")
        if verdict.ok:
            feedback.value = (f'<span style="color:#1b7f3b">✔ '
                              f'{t("observe.wall.ok", explanation=explain)}</span>')
            return
        parts = []
        if verdict.missing:
            parts.append(t("observe.wall.missing", panels=", ".join(
                t(f"observe.panel.{p}") for p in verdict.missing)))
        for p in verdict.misleading:
            parts.append(t("observe.wall.misleading", panel=t(f"observe.panel.{p}"),
                           why=t(f"observe.wall.{situation}.why.{p}")))
        feedback.value = ('<span style="color:#b00020">✘ ' + " ".join(parts)
                          + f"<br>{t('observe.wall.hint')}</span>")

    check.on_click(on_check)
    question = widgets.HTML(f"<b>{t(f'observe.wall.{situation}.title')}</b> — "
                            f"{t(f'observe.wall.{situation}.q')}")
    box = widgets.VBox([question, widgets.HBox(list(toggles.values()), layout=widgets.Layout(
        flex_flow="row wrap")), check, feedback])
    box.add_class(f"lk-wall-{situation}")
    return box


def wall_exercise() -> widgets.VBox:
    """Return the "what goes on the wall" exercise: per situation, pick at most three panels."""
    box = widgets.VBox([_wall_one(s) for s in model.SITUATIONS])
    box.add_class("lk-wall")
    return box


# --------------------------------------------------------------------------------------------
# Replay
# --------------------------------------------------------------------------------------------


def read_upload(value: Any, *, max_bytes: int = MAX_UPLOAD_BYTES,
                suffixes: Sequence[str] = UPLOAD_SUFFIXES) -> tuple[str, bytes]:
    """Check a ``FileUpload`` value (one file, size-capped, allowed suffix); return (name, data).

    The checks of :func:`labkit.ui.files.read_upload` with the log suffixes of this lesson.
    Kept in memory: nothing is written to disk.

    Raises
    ------
    labkit.validate.InputError
        Field ``files`` (``at_least`` none, ``at_most`` more than one, ``other`` not an upload),
        ``size`` (``at_most``), ``suffix`` (``choice``).
    """
    from labkit.ui.files import read_upload as read_checked

    upload = read_checked(value, max_bytes=max_bytes, suffixes=suffixes)
    return upload.name, upload.data


#: LogError kinds with their own Korean sentence (labkit.observe.LogError.kind).
LOG_ERROR_KINDS = ("encoding", "too_large", "layout", "no_header", "timestamp", "xml")


def log_error_text(err: ValueError) -> str:
    """Return the Korean message for a log that cannot be read (with a hint where one helps).

    A :class:`labkit.observe.LogError` gets the sentence of its ``kind`` (e.g. "re-save as
    UTF-8" for an unknown encoding); any other ``ValueError`` the generic one. The English
    detail (file and line) follows (plain text: the panel escapes it).
    """
    kind = getattr(err, "kind", None)
    key = f"observe.log_error.{kind}" if kind in LOG_ERROR_KINDS else "observe.replay.bad_file"
    return t(key, message=str(err))


def preview_html(text: str, rows: int = 5) -> str:
    """Return the first rows of an uploaded CSV as a small table (for the field picker)."""
    from labkit.data.observe import preview_rows

    cells = preview_rows(text, rows=rows)
    width = max((len(r) for r in cells), default=0)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c[:40])}</td>" for c in r) + "</tr>"
                   for r in cells)
    return (t("observe.replay.preview", n=width)
            + f'<table class="lk-preview" style="font-size:85%">{body}</table>')


def snapshot_html(snapshot: Any) -> str:
    """Return an ``nvidia-smi -q`` snapshot as "what is on this GPU right now" (Korean)."""
    when = snapshot.timestamp.strftime("%Y-%m-%d %H:%M:%S") if snapshot.timestamp else "-"
    parts = [f"<b>{t('observe.snapshot.title', time=when)}</b>"]
    for w in snapshot.warnings:
        key = f"observe.snapshot.warning.{getattr(w, 'code', '')}"
        text = t(key, **w.params) if key in KO else html.escape(str(w))
        parts.append(f'<span style="color:#a15c00">⚠ {text}</span>')
    for g in snapshot.gpus:
        parts.append(t("observe.snapshot.gpu", index=g.index, name=html.escape(g.name),
                       uuid=html.escape(g.uuid), bus=html.escape(g.pci_bus_id)))
        parts.append(t("observe.snapshot.mig", mode=html.escape(g.mig_mode),
                       pending=html.escape(g.mig_mode_pending)))
        for d in g.mig_devices:
            parts.append("&nbsp;&nbsp;" + t(
                "observe.snapshot.mig_device", index=_opt(d.index), gi=_opt(d.gi_id),
                ci=_opt(d.ci_id), used=_opt(d.memory_used_mib), total=_opt(d.memory_total_mib),
                sm=_opt(d.sm_count)))
        reasons = ", ".join(f"{n} ({t(f'observe.reason.{n}')})" if f"observe.reason.{n}" in KO
                            else n for n in g.clocks_event_reasons)
        parts.append(t("observe.snapshot.reasons",
                       reasons=reasons or t("observe.snapshot.no_reasons")))
        unc = g.ecc.get("volatile.dram_uncorrectable", g.ecc.get("volatile.double_bit.total"))
        cor = g.ecc.get("volatile.dram_correctable", g.ecc.get("volatile.single_bit.total"))
        parts.append(t("observe.snapshot.ecc", uncorrectable=_opt(unc), correctable=_opt(cor)))
        rows = ", ".join(f"{html.escape(k)} {_opt(v)}" for k, v in g.remapped_rows.items())
        parts.append(t("observe.snapshot.remapped",
                       rows=rows or t("observe.snapshot.remapped_na")))
        procs = [t("observe.snapshot.process", pid=_opt(p.pid), name=html.escape(p.name[:60]),
                   type=html.escape(p.type), mem=_opt(p.used_memory_mib),
                   gi=t("observe.snapshot.process_gi", gi=p.gi_id) if p.gi_id is not None
                   else "") for p in g.processes[:20]]
        parts.append(t("observe.snapshot.processes", n=len(g.processes), list="; ".join(procs))
                     if procs else t("observe.snapshot.no_processes"))
    return "<br>".join(parts)


def _opt(value: float | int | None) -> str:
    if value is None:
        return "-"
    return f"{value:g}" if isinstance(value, float) else str(value)


class ReplayApp(widgets.VBox):
    """Replay a log through the dashboard's panels (see :func:`replay_app`)."""

    PANELS = ("gpu_util", "sm_active", "tensor_active", "dram_active", "memory", "power",
              "temperature", "clocks", "errors")

    def __init__(self, log: model.LogImport | None = None) -> None:
        super().__init__()
        self.add_class("lk-replay")
        from labkit.data.observe import trace_names

        names = trace_names()
        self.source = _css(widgets.Dropdown(
            options=[(n, n) for n in names], value=_DEFAULT_TRACE if _DEFAULT_TRACE in names
            else (names[0] if names else None), description=t("observe.replay.trace_label"),
            layout=widgets.Layout(width="520px"), style={"description_width": "initial"}),
            "lk-replay-trace")
        self.upload = _css(widgets.FileUpload(accept=",".join(UPLOAD_SUFFIXES), multiple=False,
                                              description=t("observe.replay.upload")),
                           "lk-replay-upload")
        self.fields = _css(widgets.Text(value="", placeholder="timestamp,index,utilization.gpu",
                                        description=t("observe.replay.fields_label"),
                                        continuous_update=False,
                                        layout=widgets.Layout(width="520px"),
                                        style={"description_width": "initial"}),
                           "lk-replay-fields")
        self.field_set = _css(widgets.Dropdown(
            options=[(t("observe.replay.field_set.custom"), "")]
            + [(t(f"observe.replay.field_set.{k}"), k) for k in COMMON_FIELD_SETS],
            value="", description=t("observe.replay.field_set_label"),
            layout=widgets.Layout(width="520px"), style={"description_width": "initial"}),
            "lk-replay-field-set")
        self.preview = _css(widgets.HTML(""), "lk-replay-preview")
        self.snapshot = _css(widgets.HTML(""), "lk-replay-snapshot")
        self._pending: tuple[str, str] | None = None  # a noheader upload waiting for fields
        self.info = _css(widgets.HTML(""), "lk-replay-info")
        self.error = _css(widgets.HTML(""), "lk-replay-error")
        self.gpu = _css(widgets.Dropdown(options=[(" ", 0)], value=0,
                                         description=t("observe.gpu_label")), "lk-replay-gpu")
        self.time = _css(widgets.IntSlider(value=0, min=0, max=0, step=1,
                                           description=t("observe.replay.time_label"),
                                           continuous_update=False, readout=False,
                                           layout=widgets.Layout(width="600px")),
                         "lk-replay-time")
        self.time_text = _css(widgets.HTML(""), "lk-replay-time-text")
        self.cards = {p: _css(widgets.HTML(""), "lk-replay-panel", f"lk-panel-{p}")
                      for p in self.PANELS}
        self.signals = _css(widgets.HTML(""), "lk-replay-signals")
        self.activity = LiveFigureOutput("lk-replay-activity")
        self.power = LiveFigureOutput("lk-replay-power")
        self.export = _css(widgets.Button(description=t("observe.export.button")),
                           "lk-replay-export")
        self.export_link = _css(widgets.HTML(""), "lk-replay-export-link")
        self.log_import: model.LogImport | None = None
        self.trace: model.Trace | None = None
        grid = widgets.GridBox(list(self.cards.values()), layout=widgets.Layout(
            grid_template_columns="repeat(auto-fill, minmax(210px, 1fr))", grid_gap="8px"))
        self.children = [
            self.source, widgets.HBox([self.upload, self.fields]), self.field_set, self.preview,
            self.error, self.info, self.snapshot,
            widgets.HBox([self.gpu, self.time, self.time_text]), self.signals, grid,
            self.activity, self.power, widgets.HBox([self.export, self.export_link])]
        self.source.observe(self._on_source, names="value")
        self.upload.observe(self._on_upload, names="value")
        self.field_set.observe(self._on_field_set, names="value")
        self.fields.observe(self._on_fields, names="value")
        self.gpu.observe(self._on_position, names="value")
        self.time.observe(self._on_position, names="value")
        self.export.on_click(self._on_export)
        if log is not None:
            self.load(log)
        elif self.source.value:
            self._on_source({"new": self.source.value})

    # -- loading --------------------------------------------------------------------------------
    def _show_error(self, message: str) -> None:
        self.error.value = f'<span style="color:#b00020">⚠ {html.escape(message)}</span>'

    def _on_source(self, change: Any) -> None:
        from labkit.data.observe import load_trace, trace_names

        name = change["new"]
        if name not in trace_names():  # a browser can send any value
            self._show_error(t("observe.replay.unknown_trace", name=str(name)[:80]))
            return
        try:
            self.load(load_trace(name))
            self.snapshot.value = ""
        except ValueError as err:
            self._show_error(log_error_text(err))

    def _on_upload(self, change: Any) -> None:
        value = change["new"]
        if not value:
            return
        from labkit.data.observe import decode_log

        try:
            name, data = read_upload(value)
            text = decode_log(data, name=name, max_bytes=MAX_UPLOAD_BYTES)
        except InputError as err:
            self._show_error(error_text(err, prefix="observe.upload"))
            return
        except ValueError as err:
            self._show_error(log_error_text(err))
            return
        finally:
            self.upload.unobserve(self._on_upload, names="value")
            self.upload.value = ()  # drop the bytes from the widget
            self.upload.observe(self._on_upload, names="value")
        self._read_text(name, text)

    def _read_text(self, name: str, text: str) -> None:
        """Read an uploaded log's text; a noheader CSV waits for its field list."""
        from labkit.data.observe import parse_nvidia_smi_query, read_log
        from labkit.data.observe.smi_query import looks_like_query

        fields = self.fields.value.strip()[:2000] or None
        snapshot = None
        try:
            if looks_like_query(text) is not None:
                snapshot = parse_nvidia_smi_query(text, source=name)
                log = snapshot.log
            else:
                log = read_log(text, source=name, fields=fields)
        except ValueError as err:
            if getattr(err, "kind", None) == "no_header" or (
                    fields and self._pending is not None):
                self._pending = (name, text[:MAX_UPLOAD_BYTES])
                self.preview.value = preview_html(text)
            self._show_error(log_error_text(err))
            return
        self._pending = None
        self.preview.value = ""
        self.load(log)
        self.snapshot.value = snapshot_html(snapshot) if snapshot is not None else ""

    def _on_field_set(self, change: Any) -> None:
        from labkit.data.observe import COMMON_FIELD_SETS

        fields = COMMON_FIELD_SETS.get(str(change["new"]))
        if fields is not None:
            self.fields.value = ",".join(fields)  # -> _on_fields re-reads a waiting upload

    def _on_fields(self, _change: Any) -> None:
        if self._pending is not None:
            self._read_text(*self._pending)

    def load(self, log: model.LogImport) -> None:
        """Show ``log``: info line, GPU choice, time slider at the start."""
        trace = model.Trace(log.frame)
        self.log_import, self.trace = log, trace
        self.error.value = ""
        devices = log.devices
        options = [(t("observe.gpu_option", index=g, name=devices.get(g, {}).get(
            "name") or devices.get(g, {}).get("modelName", "")), g) for g in trace.gpus]
        self.gpu.unobserve(self._on_position, names="value")
        self.time.unobserve(self._on_position, names="value")
        self.gpu.options = options
        self.gpu.value = trace.gpus[0]
        self.time.max = len(trace.times) - 1
        self.time.value = 0
        self.gpu.observe(self._on_position, names="value")
        self.time.observe(self._on_position, names="value")
        self.info.value = self._info_html(log)
        self.export_link.value = ""
        self.render()

    def _info_html(self, log: model.LogImport) -> str:
        fmt_name = t(f"observe.replay.format.{log.format}")
        start = log.start.strftime("%Y-%m-%d %H:%M:%S") if log.start else "-"
        lines = [t("observe.replay.info", source=html.escape(log.source), format=fmt_name,
                   rows=fmt.count(log.rows), gpus=len(log.devices), start=start,
                   duration=f"{self.trace.duration_s if self.trace else 0:.1f}")]
        if log.metadata.get("source"):
            lines.append(t("observe.replay.meta_source",
                           source=html.escape(log.metadata["source"][:300])))
        metrics = set(log.frame["metric"])
        if "sm_active_frac" not in metrics:
            lines.append("<b>" + t("observe.replay.no_sm_active") + "</b>")
        if log.unparsed:
            shown = "; ".join(f"{u.line}: {html.escape(u.reason)}" for u in log.unparsed[:5])
            lines.append('<span style="color:#a15c00">' + t(
                "observe.replay.unparsed", n=len(log.unparsed), rows=shown) + "</span>")
        if log.ignored_fields:
            lines.append(t("observe.replay.ignored",
                           fields=html.escape(", ".join(log.ignored_fields[:20]))))
        return "<br>".join(lines)

    # -- scrubbing ------------------------------------------------------------------------------
    def _on_position(self, _change: Any = None) -> None:
        self.render()

    def position(self) -> tuple[int, float]:
        """Return the (validated) GPU and time the slider points at."""
        assert self.trace is not None
        gpu = self.gpu.value if self.gpu.value in self.trace.gpus else self.trace.gpus[0]
        k = self.time.value
        if not isinstance(k, int) or not 0 <= k < len(self.trace.times):
            k = 0
        return gpu, float(self.trace.times[k])

    def render(self) -> None:
        """Draw the panels and charts at the slider's time."""
        if self.trace is None:
            return
        gpu, t_s = self.position()
        view = self.trace.view(gpu, t_s)
        for p, card in self.cards.items():
            card.value = panel_html(p, view, replay=True)
        self.signals.value = signals_html(view)
        self.time_text.value = t("observe.replay.at", t=f"{t_s:.1f}",
                                 total=f"{self.trace.duration_s:.1f}")
        act = self._frame(gpu, [k for k, _ in ACTIVITY_LINES])
        pw = self._frame(gpu, ["power_usage_w", "power_limit_w", "sm_clock_mhz",
                               "max_sm_clock_mhz"])
        x_range = (float(self.trace.times[0]), float(self.trace.times[-1]))
        self.activity.show(activity_figure(act, title=t("observe.chart.activity"),
                                           marker_t=t_s, x_range=x_range))
        self.power.show(power_figure(pw, title=t("observe.chart.power"), marker_t=t_s,
                                     x_range=x_range))

    def _frame(self, gpu: int, metrics: Sequence[str]) -> pd.DataFrame:
        assert self.trace is not None
        cols = {m: self.trace.series(gpu, m) for m in metrics if m in self.trace.metrics}
        if not cols:
            return pd.DataFrame(index=pd.Index([], name="timestamp_s"))
        frame = pd.concat(cols, axis=1).sort_index()
        frame = frame.groupby(level=0).last()
        if len(frame) > MAX_CHART_POINTS:  # thin for drawing only
            step = math.ceil(len(frame) / MAX_CHART_POINTS)
            frame = frame.iloc[::step]
        return frame

    def _on_export(self, _button: Any = None) -> None:
        log = self.log_import
        if log is None:
            return
        text = model.export_csv(log.frame, source=f"labkit replay of {log.source}",
                                as_of=log.metadata.get("as_of") or time.strftime("%Y-%m-%d"))
        stem = PurePath(log.source).stem or "log"
        self.export_link.value = _download_link(text, f"{stem}_tidy.csv")


def replay_app(path: str | None = None) -> ReplayApp:
    """Return the replay app: a shipped trace (or ``path``, from Python only), or an upload.

    ``path`` is read in JupyterLab by the student's own code; the voila page offers only the
    shipped traces and the size-capped upload, never a server path. The app becomes this
    kernel's :func:`current_replay` (the live Prometheus source feeds it).
    """
    if path is None:
        app = ReplayApp()
    else:
        from labkit.data.observe import read_log_file

        app = ReplayApp(read_log_file(path))
    global _CURRENT_REPLAY
    _CURRENT_REPLAY = weakref.ref(app)
    return app


_CURRENT_REPLAY: weakref.ref[ReplayApp] | None = None


def current_replay() -> ReplayApp | None:
    """Return the replay app :func:`replay_app` last built in this kernel (None if none)."""
    return _CURRENT_REPLAY() if _CURRENT_REPLAY is not None else None


# --------------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------------


def reference_table() -> pd.DataFrame:
    """Return the DCGM field <-> NVML call <-> nvidia-smi name table in Korean, with units."""
    ref = model.reference_table()
    rows = []
    for key, row in ref.iterrows():
        dcgm = f"{row['dcgm_field']} ({row['dcgm_id']})" if row["dcgm_field"] else "—"
        smi_unit = (row["smi_unit"] or row["unit"]) if row["smi_field"] else ""  # "" = bare
        units = " / ".join(u or "—" for u in (row["nvml_unit"], row["dcgm_unit"], smi_unit))
        call = row["nvml_call"].replace("NVML_GPM_METRIC_", "").replace(
            "NVML_MEMORY_ERROR_TYPE_", "")
        unit = t("observe.ref.frac") if row["unit"] == "frac" else row["unit"]
        rows.append((t(f"observe.metric.{key}"), dcgm, call, row["smi_field"] or "—", units,
                     unit))
    cols = [t(f"observe.ref.{c}") for c in ("metric", "dcgm", "nvml", "smi", "units", "labkit")]
    return pd.DataFrame(rows, columns=cols).set_index(cols[0])


def trace_summary(name: str = _DEFAULT_TRACE) -> pd.DataFrame:
    """Return the mean readings of each scenario segment of a shipped trace, and the verdict.

    Columns: util.gpu, SM activity, tensor, DRAM [%], power [W], SM clock [MHz], and whether
    "busy but not working" fires on the segment's means.
    """
    from labkit.data.observe import load_trace, trace_segments

    log = load_trace(name)
    trace = model.Trace(log.frame)
    metrics = ["gpu_util_frac", "sm_active_frac", "tensor_active_frac", "dram_active_frac",
               "power_usage_w", "power_limit_w", "sm_clock_mhz"]
    segments = trace_segments(log)
    gpu = trace.gpus[0]
    means = trace.summary(gpu, [m for m in metrics if m in trace.metrics], segments)
    rows = []
    for seg, row in means.iterrows():
        view = {m: Reading(float(row[m])) for m in means.columns if np.isfinite(row[m])}
        busy = model.busy_not_working(view)
        verdict = {None: "n/a", True: t("observe.summary.yes"), False: t("observe.summary.no")}
        rows.append((t(f"observe.scenario_short.{seg}"),
                     *(fmt.pct(row[m], 0) if m in row and np.isfinite(row[m]) else "n/a"
                       for m in metrics[:4]),
                     f"{row['power_usage_w']:.0f}" if "power_usage_w" in row else "n/a",
                     f"{row['sm_clock_mhz']:.0f}" if "sm_clock_mhz" in row else "n/a",
                     verdict[busy.on]))
    cols = [t(f"observe.summary.{c}") for c in ("segment", "util", "sm", "tensor", "dram",
                                                "power", "clock", "busy")]
    return pd.DataFrame(rows, columns=cols).set_index(cols[0])


def unit_pitfalls() -> pd.DataFrame:
    """Return the unit traps as a table: raw readings and what they are in labkit's units.

    NVML power 4034 (mW) is 4.0 W, not 4034 W; NVML energy 123,456,789 (mJ) is 123.5 kJ;
    dcgm-exporter's power 71.4 is already W; GPM's SM_UTIL 37.5 is percent while DCGM's
    SM_ACTIVE 0.375 is a ratio. The conversions are :data:`labkit.observe.CATALOG`'s.
    """
    cases = [("nvml", "power_usage_w", 4034.0), ("nvml", "energy_j", 123_456_789.0),
             ("dcgm", "power_usage_w", 71.4), ("nvml", "sm_active_frac", 37.5),
             ("dcgm", "sm_active_frac", 0.375), ("nvml", "fb_used_mib", 85_520_809_984.0)]
    rows = []
    for layer, key, raw in cases:
        m = CATALOG[key]
        scale, unit = (m.nvml_scale, m.nvml_unit) if layer == "nvml" else (m.dcgm_scale,
                                                                           m.dcgm_unit)
        where = m.nvml_call.split("(")[0] if layer == "nvml" else m.dcgm_field
        shown = f"{raw:,.0f}" if float(raw).is_integer() else f"{raw:,g}"
        rows.append((where, f"{shown} {unit}", _value_text(key, Reading(raw * scale))))
    cols = [t(f"observe.units.{c}") for c in ("source", "raw", "value")]
    return pd.DataFrame(rows, columns=cols).set_index(cols[0])
