"""Widgets for lesson 04, "장애를 전제로 한 운영": failures at scale, checkpoints, ETTR, a month.

Builders (each returns a widget or a table; the notebook only calls them):

- :func:`scaling_app` — job MTBF vs cluster size (log-log), 8 / 4,096 / 16,384 GPUs marked;
- :func:`interval_app` — overhead vs checkpoint interval, Young / Daly / exact optimum marked;
- :func:`ettr_app` — Meta's closed form vs the exact ETTR as the cluster grows;
- :func:`month_app` — Monte Carlo of the worksheet's month: goodput histogram, a sampled month's
  ledger as lesson 03's waterfall;
- :func:`eventlog_app` — goodput and badput from a job's event log;
- :func:`llama3_causes`, :func:`failure_rates` — real failure data;
- ``*_numbers`` — the lesson's key numbers as tables (checked by nbval);
- :func:`exercises` — 문제 with checked answers.

The numbers all come from :mod:`labkit.reliability`, :mod:`labkit.eventlog` and
:mod:`labkit.fault_trace`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from labkit import eventlog, validate
from labkit import reliability as model
from labkit.data import reliability as data
from labkit.goodput import Worksheet
from labkit.i18n import t
from labkit.ui import format as fmt
from labkit.ui.components import (
    Field,
    FigureOutput,
    LiveApp,
    number_field,
    slider_field,
    styled_figure,
)
from labkit.ui.exercises import Exercise, exercise_set
from labkit.ui.goodput import waterfall_figure

__all__ = [
    "ASYNC_WRITE_MIN",
    "UI_MAX_TRIALS",
    "ettr_app",
    "ettr_numbers",
    "eventlog_app",
    "eventlog_numbers",
    "exercises",
    "failure_rates",
    "interval_app",
    "interval_numbers",
    "llama3_causes",
    "llama3_numbers",
    "month_app",
    "month_numbers",
    "scaling_app",
    "scaling_numbers",
    "stepfun_numbers",
]

#: Per-GPU MTBF implied by Llama 3's 54-day snapshot (419 unexpected interruptions, 16,384
#: GPUs; arXiv 2407.21783 §3.3.4). [h]
LLAMA3_GPU_MTBF_H = model.observed_gpu_mtbf_h(419, 16_384, 54 * 24)
#: Cluster sizes the lesson marks: the school's 8 GPUs, the worksheet's 4,096, Llama 3's 16,384.
MARKED_SIZES = (8, 4_096, 16_384)
#: Blocking part of an asynchronous checkpoint: "several seconds" to copy GPU state to pinned
#: host memory (MegaScale, arXiv 2402.15627 §4); 5 s here. [min]
ASYNC_WRITE_MIN = 5 / 60
#: Most trials the Monte Carlo app runs per change (a browser can send any value).
UI_MAX_TRIALS = 20_000
#: Largest interval/MTBF the interval app draws (bounds the chart; the model checks the rest).
_MAX_MINUTES = 100_000.0
_MAX_GPUS = 10_000_000

_COLORS = {"young": "#e09f3e", "daly": "#9c27b0", "exact": "#2e7d32", "chosen": "#d1495b",
           "meta": "#e09f3e", "line": "#3b6fb6"}


def _minutes(x: float) -> str:
    return t("reliability.minutes", value=f"{x:,.1f}")


def _bounded(field: str, value: Any, limit: float) -> float:
    """Check a UI value against the app's own bound (anything that sizes work is bounded)."""
    return validate.at_most(field, value, limit, "the app's limit")


# -- 1. scaling -----------------------------------------------------------------------------
@dataclass(frozen=True)
class ScalingView:
    """Job MTBF over cluster sizes for one per-GPU MTBF."""

    gpu_mtbf_h: float
    sizes: np.ndarray
    mtbf_h: np.ndarray


def _presets() -> list[tuple[str, float]]:
    rates = data.load_failure_rates()
    presets = [(t("reliability.scaling.preset_llama3"), LLAMA3_GPU_MTBF_H),
               (t("reliability.scaling.preset_epoch"), 50_000.0)]
    for row in rates.itertuples():
        if row.kind in ("published", "measured"):
            mtbf = model.gpu_mtbf_h_from_rate(row.rate_per_1000_node_days, "per_1000_node_days")
            presets.append((t("reliability.scaling.preset_rate", name=row.cluster,
                              rate=f"{row.rate_per_1000_node_days:.2f}"), mtbf))
    return presets


class ScalingApp(LiveApp[ScalingView]):
    """Job MTBF vs cluster size (see :func:`scaling_app`)."""

    def __init__(self) -> None:
        fields = [number_field("gpu_mtbf_h", t("reliability.scaling.gpu_mtbf"),
                               round(LLAMA3_GPU_MTBF_H), unit="h", step=1000)]
        super().__init__("scaling", fields, error_prefix="reliability")
        self.preset = widgets.Dropdown(options=_presets(), value=LLAMA3_GPU_MTBF_H,
                                       description="", layout=widgets.Layout(width="420px"))
        self.preset.add_class("lk-scaling-preset")
        self.preset.observe(self._from_preset, names="value")
        self.meta = data.load_meta_mttf()
        self.summary = widgets.HTML()
        self.summary.add_class("lk-scaling-summary")
        self.chart = FigureOutput("lk-scaling-chart")
        preset_box = widgets.HBox([widgets.HTML(f"<b>{t('reliability.scaling.preset')}</b>",
                                                layout=widgets.Layout(width="250px")),
                                   self.preset])
        self.children = [preset_box, self.fields["gpu_mtbf_h"].box, self.status, self.summary,
                         self.chart]
        self.update()

    def _from_preset(self, change: dict[str, Any]) -> None:
        self.fields["gpu_mtbf_h"].control.value = round(float(change["new"]), 1)

    def compute(self, values: dict[str, Any]) -> ScalingView:
        gpu_mtbf = validate.positive("gpu_mtbf_h", values["gpu_mtbf_h"])
        sizes = np.unique(np.round(np.logspace(0, 6, 61)).astype(int))
        return ScalingView(gpu_mtbf, sizes,
                           np.array([model.job_mtbf_h(int(n), gpu_mtbf) for n in sizes]))

    def render(self, result: ScalingView) -> None:
        fig = styled_figure(title=t("reliability.scaling.title"),
                            xaxis_title=t("reliability.scaling.x"),
                            yaxis_title=t("reliability.scaling.y"), height=420)
        fig.update_xaxes(type="log")
        fig.update_yaxes(type="log")
        fig.add_trace(go.Scatter(x=result.sizes, y=result.mtbf_h, mode="lines",
                                 name=t("reliability.scaling.model"),
                                 line={"color": _COLORS["line"]}))
        lines = []
        for n, label in zip(MARKED_SIZES, ("school", "worksheet", "llama3"), strict=True):
            mtbf = model.job_mtbf_h(n, result.gpu_mtbf_h)
            free = model.interruption_free_probability(n, result.gpu_mtbf_h, 24)
            per_month = model.expected_interruptions(n, result.gpu_mtbf_h, 720)
            name = t(f"reliability.scaling.{label}", n=fmt.count(n))
            fig.add_trace(go.Scatter(
                x=[n], y=[mtbf], mode="markers+text", name=name,
                text=[f"{name}<br>{_mtbf_text(mtbf)}"], textposition="top right",
                marker={"size": 12, "color": _COLORS["chosen"]}, showlegend=False))
            lines.append(t("reliability.scaling.row", name=name, mtbf=_mtbf_text(mtbf),
                           month=fmt.count(per_month, 1), free=fmt.pct(free, 2)))
        for kind, symbol in (("measured", "diamond"), ("projected", "diamond-open")):
            rows = self.meta[self.meta["kind"] == kind]
            fig.add_trace(go.Scatter(x=rows["n_gpus"], y=rows["mttf_h"], mode="markers",
                                     name=t(f"reliability.scaling.meta_{kind}"),
                                     marker={"size": 10, "symbol": symbol, "color": "#555"}))
        fig.update_layout(legend={"x": 0.99, "xanchor": "right", "y": 0.99})
        self.summary.value = "<br>".join(lines)
        self.chart.show(fig)


def _mtbf_text(hours: float) -> str:
    if hours >= 48:
        return t("reliability.days", value=f"{hours / 24:,.1f}")
    if hours >= 1:
        return fmt.hours(hours, 2)
    return _minutes(hours * 60)


def scaling_app() -> ScalingApp:
    """Return the MTBF-vs-cluster-size app (per-GPU MTBF from Llama 3 by default)."""
    return ScalingApp()


def scaling_numbers() -> pd.DataFrame:
    """Return check case 2's numbers (Llama 3's interruption rate at scale) as a table."""
    mtbf = LLAMA3_GPU_MTBF_H
    all_mtbf = model.observed_gpu_mtbf_h(466, 16_384, 54 * 24)
    rows = [
        (t("reliability.num.gpu_mtbf"), f"{mtbf:,.0f} h ({mtbf / 24 / 365.25:.2f}년)"),
        (t("reliability.num.per_gpu_day"), f"{24 / mtbf:.4e}"),
        (t("reliability.num.per_node"), f"{model.rate_per_1000_node_days(mtbf):.3f}"),
        (t("reliability.num.job_mtbf", n="16,384"), f"{model.job_mtbf_h(16_384, mtbf):.3f} h"),
        (t("reliability.num.job_mtbf_all"), f"{model.job_mtbf_h(16_384, all_mtbf):.3f} h"),
        (t("reliability.num.job_mtbf", n="4,096"), f"{model.job_mtbf_h(4_096, mtbf):.2f} h"),
        (t("reliability.num.month", n="4,096"),
         f"{model.expected_interruptions(4_096, mtbf, 720):.2f} "
         f"(± {math.sqrt(model.expected_interruptions(4_096, mtbf, 720)):.2f})"),
        (t("reliability.num.free", n="16,384", h=1),
         f"{model.interruption_free_probability(16_384, mtbf, 1):.4f}"),
        (t("reliability.num.free", n="16,384", h=24),
         f"{model.interruption_free_probability(16_384, mtbf, 24):.3e}"),
        (t("reliability.num.free", n="4,096", h=12),
         f"{model.interruption_free_probability(4_096, mtbf, 12):.3f}"),
        (t("reliability.num.job_mtbf", n="8"), f"{model.job_mtbf_h(8, mtbf):,.0f} h"),
    ]
    return _table(rows)


def _table(rows: list[tuple[str, str]]) -> pd.DataFrame:
    column = t("reliability.col_item")
    return pd.DataFrame(rows, columns=[column, t("reliability.col_value")]).set_index(column)


# -- 2. checkpoint interval -----------------------------------------------------------------
@dataclass(frozen=True)
class IntervalView:
    """The overhead curve and its optima, in minutes."""

    write_min: float
    mtbf_min: float
    restart_min: float
    interval_min: float
    young: float
    daly: float
    exact: float
    chosen_overhead: float
    best_overhead: float


class IntervalApp(LiveApp[IntervalView]):
    """Overhead vs checkpoint interval (see :func:`interval_app`)."""

    def __init__(self) -> None:
        fields = [
            slider_field("interval_min", t("reliability.interval.interval"), 60, min=1, max=300,
                         step=1, unit="분", readout_format=".0f"),
            slider_field("write_min", t("reliability.interval.write"), 5, min=0.1, max=30,
                         step=0.1, unit="분", readout_format=".1f"),
            slider_field("mtbf_h", t("reliability.interval.mtbf"), 6, min=0.5, max=48,
                         step=0.5, unit="h", readout_format=".1f"),
            slider_field("restart_min", t("reliability.interval.restart"), 10, min=0, max=60,
                         step=1, unit="분", readout_format=".0f"),
            Field("async_write", t("reliability.interval.async"),
                  widgets.Checkbox(value=False, indent=False)),
        ]
        super().__init__("interval", fields, error_prefix="reliability.interval",
                         field_map={"interval": "interval_min", "checkpoint_cost": "write_min",
                                    "mtbf": "mtbf_h", "restart": "restart_min"})
        self.summary = widgets.HTML()
        self.summary.add_class("lk-interval-summary")
        self.chart = FigureOutput("lk-interval-chart")
        self.children = [*(f.box for f in self.fields.values()), self.status, self.summary,
                         self.chart]
        self.update()

    def compute(self, values: dict[str, Any]) -> IntervalView:
        tau = _bounded("interval", values["interval_min"], _MAX_MINUTES)
        mtbf = _bounded("mtbf", values["mtbf_h"], _MAX_MINUTES / 60) * 60
        write = ASYNC_WRITE_MIN if values["async_write"] is True else values["write_min"]
        restart = _bounded("restart", values["restart_min"], _MAX_MINUTES)
        chosen = model.overhead(tau, write, mtbf, restart)
        exact = model.optimal_interval(write, mtbf)
        return IntervalView(write, mtbf, restart, tau, model.young_interval(write, mtbf),
                            model.daly_interval(write, mtbf), exact, chosen,
                            model.overhead(exact, write, mtbf, restart))

    def render(self, result: IntervalView) -> None:
        r = result
        top = max(3 * r.exact, 1.2 * r.interval_min)
        x = np.linspace(top / 200, top, 200)
        y = [100 * model.overhead(float(v), r.write_min, r.mtbf_min, r.restart_min) for v in x]
        fig = styled_figure(title=t("reliability.interval.title"),
                            xaxis_title=t("reliability.interval.x"),
                            yaxis_title=t("reliability.interval.y"), height=400)
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name=t("reliability.interval.curve"),
                                 line={"color": _COLORS["line"]}))
        for key, tau in (("young", r.young), ("daly", r.daly), ("exact", r.exact)):
            fig.add_trace(go.Scatter(
                x=[tau], y=[100 * model.overhead(tau, r.write_min, r.mtbf_min, r.restart_min)],
                mode="markers", name=t(f"reliability.interval.{key}", value=_minutes(tau)),
                marker={"size": 11, "color": _COLORS[key],
                        "symbol": {"young": "triangle-up", "daly": "square",
                                   "exact": "star"}[key]}))
        fig.add_trace(go.Scatter(x=[r.interval_min], y=[100 * r.chosen_overhead],
                                 mode="markers", name=t("reliability.interval.chosen"),
                                 marker={"size": 14, "color": _COLORS["chosen"],
                                         "line": {"width": 2, "color": "white"}}))
        ceiling = min(max(y), 100 * max(r.chosen_overhead, r.best_overhead) * 3 + 5)
        fig.update_yaxes(range=[0, ceiling])
        fig.update_xaxes(range=[0, top])
        fig.update_layout(legend={"x": 0.99, "xanchor": "right", "y": 0.99})
        self.chart.show(fig)
        self.summary.value = "<br>".join([
            t("reliability.interval.optima", young=_minutes(r.young), daly=_minutes(r.daly),
              exact=_minutes(r.exact)),
            "<b>" + t("reliability.interval.result", tau=_minutes(r.interval_min),
                      overhead=fmt.pct(r.chosen_overhead, 2), best=fmt.pct(r.best_overhead, 2),
                      ettr=fmt.pct(1 / (1 + r.chosen_overhead), 1)) + "</b>",
            t("reliability.interval.write_used", write=_minutes(r.write_min)),
        ])


def interval_app() -> IntervalApp:
    """Return the overhead-vs-interval app (Daly's 6-hour case: delta 5 min, R 10 min)."""
    return IntervalApp()


def interval_numbers() -> pd.DataFrame:
    """Return check case 7 (Young, Daly, exact; Daly's published optima) as a table [min]."""
    daly = data.load_daly_intervals()
    cases = [(r.checkpoint_cost_min, r.mtbf_min, r.published_optimum_min)
             for r in daly.itertuples()] + [(6.0, 240.0, math.nan)]
    rows = []
    for cost, mtbf, published in cases:
        rows.append({
            "δ (분)": f"{cost:g}", "M (분)": f"{mtbf:,.0f}",
            "Young": round(model.young_interval(cost, mtbf), 2),
            "Daly": round(model.daly_interval(cost, mtbf), 2),
            t("reliability.num.exact"): round(model.optimal_interval(cost, mtbf), 3),
            t("reliability.num.published"): "" if math.isnan(published) else f"{published:g}",
        })
    return pd.DataFrame(rows).set_index(["δ (분)", "M (분)"])


# -- 3. ETTR --------------------------------------------------------------------------------
@dataclass(frozen=True)
class EttrView:
    """Meta's and the exact ETTR over cluster sizes, and at the chosen size."""

    sizes: np.ndarray
    meta: np.ndarray
    exact: np.ndarray
    n_gpus: int
    at_n: tuple[float, float]


class EttrApp(LiveApp[EttrView]):
    """Meta's closed form vs the exact ETTR (see :func:`ettr_app`)."""

    def __init__(self) -> None:
        rsc1 = model.gpu_mtbf_h_from_rate(6.50, "per_1000_node_days")
        fields = [
            number_field("n_gpus", t("reliability.ettr.n_gpus"), 16_000, unit="장", step=1024),
            number_field("gpu_mtbf_h", t("reliability.scaling.gpu_mtbf"), round(rsc1, 1),
                         unit="h", step=1000),
            slider_field("interval_min", t("reliability.interval.interval"), 60, min=1,
                         max=240, step=1, unit="분", readout_format=".0f"),
            slider_field("restart_min", t("reliability.interval.restart"), 5, min=0, max=60,
                         step=1, unit="분", readout_format=".0f"),
            slider_field("write_s", t("reliability.ettr.write"), 0, min=0, max=600, step=5,
                         unit="초", readout_format=".0f"),
        ]
        super().__init__("ettr", fields, error_prefix="reliability.ettr",
                         field_map={"checkpoint_interval_h": "interval_min",
                                    "restart_h": "restart_min", "checkpoint_write_h": "write_s"})
        self.summary = widgets.HTML()
        self.summary.add_class("lk-ettr-summary")
        self.chart = FigureOutput("lk-ettr-chart")
        self.children = [*(f.box for f in self.fields.values()), self.status, self.summary,
                         self.chart]
        self.update()

    def compute(self, values: dict[str, Any]) -> EttrView:
        n = validate.integer("n_gpus", _bounded("n_gpus", values["n_gpus"], _MAX_GPUS),
                             minimum=1)
        args = (values["gpu_mtbf_h"], values["interval_min"] / 60, values["write_s"] / 3600,
                values["restart_min"] / 60)
        at_n = tuple(model.expected_ettr(n, *args, method=m) for m in ("meta", "exact"))
        sizes = np.unique(np.round(np.logspace(np.log10(8), np.log10(262_144), 50)).astype(int))
        meta, exact = [], []
        for size in sizes:
            try:
                meta.append(model.expected_ettr(int(size), *args, method="meta"))
                exact.append(model.expected_ettr(int(size), *args, method="exact"))
            except validate.InputError:  # the write outlasts the MTBF at this size: no point
                meta.append(math.nan)
                exact.append(math.nan)
        return EttrView(sizes, np.array(meta), np.array(exact), n, (at_n[0], at_n[1]))

    def render(self, result: EttrView) -> None:
        fig = styled_figure(title=t("reliability.ettr.title"),
                            xaxis_title=t("reliability.scaling.x"),
                            yaxis_title=t("reliability.ettr.y"), height=400)
        fig.update_xaxes(type="log")
        fig.update_yaxes(range=[0, 1.02])
        fig.add_trace(go.Scatter(x=result.sizes, y=result.meta, mode="lines",
                                 name=t("reliability.ettr.meta"),
                                 line={"color": _COLORS["meta"], "dash": "dash"}))
        fig.add_trace(go.Scatter(x=result.sizes, y=result.exact, mode="lines",
                                 name=t("reliability.ettr.exact"),
                                 line={"color": _COLORS["exact"]}))
        fig.add_trace(go.Scatter(x=[result.n_gpus, result.n_gpus], y=list(result.at_n),
                                 mode="markers", name=t("reliability.ettr.chosen"),
                                 marker={"size": 12, "color": _COLORS["chosen"]}))
        fig.update_layout(legend={"x": 0.01, "y": 0.05})
        self.chart.show(fig)
        meta, exact = result.at_n
        self.summary.value = t("reliability.ettr.result", n=fmt.count(result.n_gpus),
                               meta=fmt.pct(meta), exact=fmt.pct(exact))


def ettr_app() -> EttrApp:
    """Return the ETTR app (Meta RSC-1's failure rate, 60-min interval, 5-min restart)."""
    return EttrApp()


def ettr_numbers() -> pd.DataFrame:
    """Return Meta's reported ETTR values next to both methods (RSC-1 rate, u0 = 5 min)."""
    rsc1 = model.gpu_mtbf_h_from_rate(6.50, "per_1000_node_days")
    cases = [(16_000, 60, "≈ 0.7"), (16_000, 5, "0.93"), (8_000, 30, "≈ 0.9")]
    rows = []
    for n, interval, reported in cases:
        args = (n, rsc1, interval / 60, 0.0, 5 / 60)
        rows.append({
            t("reliability.ettr.n_gpus"): f"{n:,}",
            t("reliability.interval.interval"): f"{interval}분",
            t("reliability.num.reported"): reported,
            "meta": f"{model.expected_ettr(*args, method='meta'):.3f}",
            "exact": f"{model.expected_ettr(*args, method='exact'):.3f}",
        })
    return pd.DataFrame(rows).set_index(t("reliability.ettr.n_gpus"))


# -- 4. the month ---------------------------------------------------------------------------
@dataclass(frozen=True)
class MonthView:
    """A Monte Carlo run, its exact expectation, and the sampled month."""

    frame: pd.DataFrame
    expected: Worksheet
    sample: int
    sampled: Worksheet
    hours: float


class MonthApp(LiveApp[MonthView]):
    """Monte Carlo of the worksheet's month (see :func:`month_app`)."""

    def __init__(self, defaults: data.MonthModel, reference: float) -> None:
        self.defaults = defaults
        self.reference = reference
        self.seed = defaults.seed
        self._cache: tuple[tuple[Any, ...], pd.DataFrame] | None = None
        fields = [
            slider_field("trials", t("reliability.month.trials"), defaults.trials, min=1000,
                         max=UI_MAX_TRIALS, step=1000, readout_format=".0f"),
            slider_field("interval_min", t("reliability.interval.interval"),
                         defaults.checkpoint_interval_h * 60, min=1, max=240, step=1, unit="분",
                         readout_format=".0f"),
            slider_field("write_s", t("reliability.ettr.write"),
                         round(defaults.checkpoint_write_h * 3600), min=0, max=600, step=5,
                         unit="초", readout_format=".0f"),
            slider_field("restart_min", t("reliability.interval.restart"),
                         round(defaults.restart_h * 60), min=0, max=120, step=1, unit="분",
                         readout_format=".0f"),
            number_field("n_gpus", t("reliability.ettr.n_gpus"), defaults.n_gpus, unit="장",
                         step=1024),
            slider_field("sample", t("reliability.month.sample"), 0, min=0, max=999, step=1,
                         readout_format=".0f"),
        ]
        super().__init__("month", fields, error_prefix="reliability.month",
                         field_map={"checkpoint_interval_h": "interval_min",
                                    "checkpoint_write_h": "write_s", "restart_h": "restart_min",
                                    "trial": "sample"})
        self.progress = widgets.IntProgress(value=0, min=0, max=defaults.trials,
                                            layout=widgets.Layout(width="420px"))
        self.progress.add_class("lk-month-progress")
        redraw = widgets.Button(description=t("reliability.month.redraw"))
        redraw.add_class("lk-month-redraw")
        redraw.on_click(self._redraw)
        self.summary = widgets.HTML()
        self.summary.add_class("lk-month-summary")
        self.histogram = FigureOutput("lk-month-histogram")
        self.waterfall = FigureOutput("lk-month-waterfall")
        self.children = [*(f.box for f in self.fields.values()),
                         widgets.HBox([redraw, self.progress]), self.status, self.summary,
                         self.histogram, self.waterfall]
        self.update()

    def _redraw(self, *_: Any) -> None:
        self.seed += 1
        self.update()

    def _on_progress(self, done: int, total: int) -> None:
        self.progress.max = total
        self.progress.value = done

    def compute(self, values: dict[str, Any]) -> MonthView:
        trials = validate.integer("trials", _bounded("trials", values["trials"], UI_MAX_TRIALS),
                                  minimum=1)
        kwargs = {**self.defaults.kwargs(), "n_gpus": values["n_gpus"],
                  "checkpoint_interval_h": values["interval_min"] / 60,
                  "checkpoint_write_h": values["write_s"] / 3600,
                  "restart_h": values["restart_min"] / 60}
        expected = model.expected_month(**kwargs)  # validates every input first
        key = (*kwargs.values(), trials, self.seed)
        if self._cache is not None and self._cache[0] == key:
            frame = self._cache[1]
        else:
            frame = model.simulate_month(**kwargs, trials=trials, seed=self.seed,
                                         progress=self._on_progress)
            self._cache = (key, frame)
        sample = validate.integer("trial", values["sample"], minimum=0)
        sampled = model.month_worksheet(frame, sample, self.defaults.hours)
        return MonthView(frame, expected, sample, sampled, self.defaults.hours)

    def render(self, result: MonthView) -> None:
        goodput = result.frame["goodput"]
        mean, sd = float(goodput.mean()), float(goodput.std())
        below = float((goodput < self.reference).mean())
        fig = styled_figure(title=t("reliability.month.hist_title", n=fmt.count(len(goodput))),
                            xaxis_title=t("reliability.month.x"),
                            yaxis_title=t("reliability.month.y"), height=380, showlegend=False,
                            bargap=0.02)
        fig.add_trace(go.Histogram(x=100 * goodput, nbinsx=60, marker={"color": "#3b6fb6"},
                                   name=t("reliability.month.y")))
        fig.add_vline(x=100 * self.reference, line={"color": _COLORS["chosen"], "width": 3},
                      annotation_text=t("reliability.month.reference",
                                        pct=fmt.pct(self.reference)),
                      annotation_position="top left")
        fig.add_vline(x=100 * result.expected.goodput,
                      line={"color": _COLORS["exact"], "dash": "dash", "width": 2},
                      annotation_text=t("reliability.month.expected",
                                        pct=fmt.pct(result.expected.goodput, 2)),
                      annotation_position="top right", annotation_yshift=-22)
        self.histogram.show(fig)
        water = waterfall_figure(result.sampled)
        row = result.frame.loc[result.sample]
        water.update_layout(title=t("reliability.month.sample_title", k=result.sample,
                                    pct=fmt.pct(float(row["goodput"])),
                                    n=int(row["interruptions"])),
                            height=440, margin={"b": 120})
        self.waterfall.show(water)
        self.summary.value = "<br>".join([
            "<b>" + t("reliability.month.result", mean=fmt.pct(mean, 2), sd=fmt.pct(sd, 2),
                      expected=fmt.pct(result.expected.goodput, 2)) + "</b>",
            t("reliability.month.below", pct=fmt.pct(below), ref=fmt.pct(self.reference)),
            t("reliability.month.interruptions",
              mean=fmt.count(float(result.frame["interruptions"].mean()), 1),
              low=int(result.frame["interruptions"].min()),
              high=int(result.frame["interruptions"].max())),
        ])


def month_app() -> MonthApp:
    """Return the Monte Carlo app for the worksheet's month (``data/reliability/month_model``)."""
    from labkit.data.goodput import load_worksheet_seed

    return MonthApp(data.load_month_model(), load_worksheet_seed().worksheet.goodput)


def month_numbers() -> pd.DataFrame:
    """Return the month model's exact expected ledger next to the course worksheet [h]."""
    from labkit.data.goodput import load_worksheet_seed

    seed = load_worksheet_seed().worksheet
    expected = model.expected_month(**data.load_month_model().kwargs())
    rows = [(t(f"goodput.loss.{name}"), f"{seed.losses[name]:g} h",
             f"{expected.losses[name]:.2f} h") for name in model.LEDGER_COLUMNS]
    rows.append(("Goodput", fmt.pct(seed.goodput, 2), fmt.pct(expected.goodput, 2)))
    column = t("reliability.col_item")
    return pd.DataFrame(rows, columns=[column, t("reliability.num.worksheet"),
                                       t("reliability.num.model")]).set_index(column)


# -- 5. event log ---------------------------------------------------------------------------
@dataclass(frozen=True)
class LogView:
    """An event log and its breakdown."""

    log: list[dict[str, Any]]
    result: eventlog.LogGoodput


class EventLogApp(LiveApp[LogView]):
    """Goodput and badput from an event log (see :func:`eventlog_app`)."""

    def __init__(self) -> None:
        fields = [
            slider_field("restart_s", t("reliability.log.restart"), 30, min=25, max=120, step=1,
                         unit="초", readout_format=".0f"),
            Field("resume_step", t("reliability.log.resume"),
                  widgets.IntSlider(value=2, min=0, max=4, continuous_update=False,
                                    layout=widgets.Layout(width="420px"))),
        ]
        super().__init__("eventlog", fields, error_prefix="reliability.log")
        self.summary = widgets.HTML()
        self.summary.add_class("lk-eventlog-summary")
        self.chart = FigureOutput("lk-eventlog-chart")
        self.log_view = widgets.HTML()
        self.log_view.add_class("lk-eventlog-log")
        self.children = [*(f.box for f in self.fields.values()), self.status, self.summary,
                         self.chart, self.log_view]
        self.update()

    def compute(self, values: dict[str, Any]) -> LogView:
        restart = _bounded("restart_s", values["restart_s"], 1e6)
        log = eventlog.disrupted_run_log(restart_s=restart, resume_step=values["resume_step"])
        return LogView(log, eventlog.job_goodput(log))

    def render(self, view: LogView) -> None:
        result = view.result
        table = result.table()
        table = table[table["seconds"] > 0]
        fig = styled_figure(title=t("reliability.log.title", total=f"{result.total_s:g}"),
                            xaxis_title=t("reliability.log.x"), height=300, barmode="stack",
                            legend={"orientation": "h", "y": -0.35})
        palette = ["#2e7d32", "#8d6e63", "#a1887f", "#e09f3e", "#f2c14e", "#5c6bc0", "#7986cb",
                   "#d1495b", "#9c27b0", "#26a69a", "#9e9e9e"]
        colors = dict(zip([b.value for b in eventlog.Bucket], palette, strict=True))
        for row in table.itertuples():
            fig.add_trace(go.Bar(y=["job"], x=[row.seconds], orientation="h",
                                 name=t(f"reliability.bucket.{row.bucket}"),
                                 marker={"color": colors[row.bucket]},
                                 text=[f"{row.seconds:g}s"], textposition="inside"))
        fig.update_yaxes(showticklabels=False)
        self.chart.show(fig)
        self.summary.value = "<b>" + t(
            "reliability.log.result", pct=fmt.pct(result.goodput, 3),
            n=result.disruptions, step=result.last_productive_step) + "</b>"
        events = "".join(f"<tr><td>{_event_text(e)}</td></tr>" for e in view.log)
        self.log_view.value = (f"<details><summary>{t('reliability.log.show')}</summary>"
                               f"<table style='font-family:monospace'>{events}</table></details>")


def _event_text(record: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in record.items())


def eventlog_app() -> EventLogApp:
    """Return the event-log app (the library's "wasted progress and disruptions" test log)."""
    return EventLogApp()


def eventlog_numbers() -> pd.DataFrame:
    """Return check case 11B's breakdown: seconds and % of the 49-s job per bucket."""
    table = eventlog.job_goodput(eventlog.disrupted_run_log()).table()
    return pd.DataFrame({
        t("reliability.col_item"): [t(f"reliability.bucket.{b}") for b in table["bucket"]],
        "s": table["seconds"].map(lambda v: f"{v:g}"),
        "%": (100 * table["fraction"]).map(lambda v: f"{v:.3f}"),
    }).set_index(t("reliability.col_item"))


# -- 6. real data ---------------------------------------------------------------------------
def llama3_causes() -> widgets.VBox:
    """Return Llama 3's interruption causes as a chart, with the table's own arithmetic."""
    table = model.interruption_shares(data.load_llama3_interruptions())
    order = table.sort_values("interruptions")
    fig = styled_figure(title=t("reliability.llama3.title"),
                        xaxis_title=t("reliability.llama3.x"), height=560,
                        margin={"l": 230, "r": 30, "t": 50, "b": 50})
    palette = {"GPU": "#d1495b", "Host": "#e09f3e", "Network": "#3b6fb6",
               "Dependency": "#2e7d32", "Unplanned Maintenance": "#8d6e63", "Unknown": "#9e9e9e"}
    for category, rows in order.groupby("category", sort=False):
        fig.add_trace(go.Bar(
            y=rows["component"], x=rows["interruptions"], orientation="h",
            name=t(f"reliability.llama3.cat.{_slug(str(category))}"),
            marker={"color": palette[str(category)]},
            text=[f"{c} ({p:.1f} %)" for c, p in zip(rows["interruptions"],
                                                     rows["computed_pct"], strict=True)],
            textposition="outside"))
    fig.update_yaxes(categoryorder="array", categoryarray=list(order["component"]))
    fig.update_xaxes(range=[0, float(table["interruptions"].max()) * 1.3])
    chart = FigureOutput("lk-llama3-chart")
    chart.show(fig)
    box = widgets.VBox([chart])
    box.add_class("lk-llama3")
    return box


def _slug(text: str) -> str:
    return text.lower().replace(" ", "_")


def llama3_numbers() -> pd.DataFrame:
    """Return check case 3: the sums of Llama 3 Table 5 and the row that does not match."""
    table = model.interruption_shares(data.load_llama3_interruptions())
    bad = table[~table["pct_matches"]]
    gpu = table[table["category"] == "GPU"]
    total = table.attrs["total"]
    rows = [
        (t("reliability.llama3.sum"), f"{total:g}"),
        (t("reliability.llama3.printed_sum"), f"{table.attrs['printed_total_pct']:g} %"),
        (t("reliability.llama3.mismatch"),
         "; ".join(f"{r.component}: {r.computed_pct:.1f} % vs {r.printed_pct:g} %"
                   for r in bad.itertuples())),
        (t("reliability.llama3.gpu_count"),
         f"{int(gpu['interruptions'].sum())}/{total:g} = "
         f"{100 * gpu['interruptions'].sum() / total:.1f} %"),
        (t("reliability.llama3.gpu_printed"), f"{gpu['printed_pct'].sum():.1f} %"),
    ]
    return _table(rows)


def failure_rates() -> widgets.VBox:
    """Return the failure rates per 1,000 node-days, source by source, as a bar chart."""
    rates = data.load_failure_rates()
    colors = {"published": "#3b6fb6", "derived": "#2e7d32", "measured": "#e09f3e",
              "anecdotal": "#9e9e9e"}
    fig = styled_figure(title=t("reliability.rates.title"),
                        xaxis_title=t("reliability.rates.x"), height=420,
                        margin={"l": 260, "r": 30, "t": 50, "b": 50})
    for kind, rows in rates.groupby("kind", sort=False):
        fig.add_trace(go.Bar(y=rows["cluster"], x=rows["rate_per_1000_node_days"],
                             orientation="h", name=t(f"reliability.rates.{kind}"),
                             marker={"color": colors[str(kind)]},
                             text=[f"{v:.2f}" for v in rows["rate_per_1000_node_days"]],
                             textposition="outside"))
    fig.update_yaxes(categoryorder="array", categoryarray=list(rates["cluster"])[::-1])
    chart = FigureOutput("lk-rates-chart")
    chart.show(fig)
    box = widgets.VBox([chart])
    box.add_class("lk-rates")
    return box


def stepfun_numbers() -> pd.DataFrame:
    """Return the key statistics derived from the InfiniteHBD fault trace."""
    rates = data.load_stepfun_table("stepfun_fault_rates")
    repair = data.load_stepfun_table("stepfun_repair_days").set_index("group")
    gaps = data.load_stepfun_table("stepfun_interarrival").set_index("statistic")["value"]
    total = rates[(rates["level"] == "all")].iloc[0]
    hardware = rates[(rates["level"] == "Hardware Failure") & (rates["class"] == "all")].iloc[0]
    gpu = rates[(rates["level"] == "Hardware Failure") & (rates["class"] == "GPU")].iloc[0]
    rows = [
        (t("reliability.stepfun.rate_all"), f"{total.rate_per_1000_node_days:.2f}"),
        (t("reliability.stepfun.rate_hw"), f"{hardware.rate_per_1000_node_days:.2f}"),
        (t("reliability.stepfun.rate_gpu"), f"{gpu.rate_per_1000_node_days:.2f}"),
        (t("reliability.stepfun.repair"),
         f"{repair.loc['all', 'median_days']:.2f} / {repair.loc['all', 'mean_days']:.1f} / "
         f"{repair.loc['all', 'p90_days']:.1f}"),
        (t("reliability.stepfun.gap"),
         f"{gaps['mean_gap_days']:.2f} / {gaps['median_gap_days']:.2f}"),
        (t("reliability.stepfun.cv"), f"{gaps['gap_cv']:.2f}"),
        (t("reliability.stepfun.lemons"),
         f"{gaps['nodes_with_5_or_more']:.0f} / {gaps['nodes_with_faults']:.0f}"),
        (t("reliability.stepfun.top"), fmt.pct(gaps["top_10pct_nodes_share"])),
        (t("reliability.stepfun.unavailable"), fmt.pct(gaps["unavailable_frac"])),
    ]
    return _table(rows)


# -- 7. exercises ---------------------------------------------------------------------------
def exercises() -> widgets.VBox:
    """Return the lesson's four exercises; answers come from the models."""
    return exercise_set([
        Exercise("reliability.ex1", model.job_mtbf_h(16_384, 50_000), 0.05, "h"),
        Exercise("reliability.ex2", model.young_interval(6, 240), 0.5, "분"),
        Exercise("reliability.ex3",
                 100 * model.interruption_free_probability(4_096, LLAMA3_GPU_MTBF_H, 12),
                 0.5, "%"),
        Exercise("reliability.ex4",
                 100 * eventlog.job_goodput(eventlog.disrupted_run_log(restart_s=40)).goodput,
                 0.05, "%"),
    ])
