"""Lesson 04's cluster apps: job MTBF vs size, the checkpoint interval, ETTR.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from labkit import reliability as model
from labkit import validate
from labkit.data import reliability as data
from labkit.i18n import t
from labkit.ui import format as fmt
from labkit.ui.components import (
    Field,
    FigureOutput,
    LiveApp,
    guard,
    number_field,
    slider_field,
    styled_figure,
)
from labkit.ui.reliability.base import (
    _COLORS,
    _MAX_GPUS,
    _MAX_MINUTES,
    ASYNC_WRITE_MIN,
    LLAMA3_GPU_MTBF_H,
    MARKED_SIZES,
    _bounded,
    _minutes,
    _table,
    cluster_label,
)


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
            presets.append((t("reliability.scaling.preset_rate", name=cluster_label(row.cluster),
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
                                   self.preset, guard(self.preset, "scaling-preset")],
                                  layout=widgets.Layout(align_items="center"))
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
        fig.update_xaxes(type="log", tickformat=",")  # 10,000, not plotly's 10k
        fig.update_yaxes(type="log", tickformat=",")
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


def scaling_numbers() -> fmt.Table:
    """Return check case 2's numbers (Llama 3's interruption rate at scale) as a table."""
    mtbf = LLAMA3_GPU_MTBF_H
    all_mtbf = model.observed_gpu_mtbf_h(466, 16_384, 54 * 24)
    rows = [
        (t("reliability.num.gpu_mtbf"), f"{mtbf:,.0f} h ({mtbf / 24 / 365.25:.2f}년)"),
        (t("reliability.num.per_gpu_day"),
         t("reliability.num.per_gpu_day_value", rate=f"{24 / mtbf:.6f}",
           days=f"{mtbf / 24:,.0f}")),
        (t("reliability.num.per_node"), fmt.number(model.rate_per_1000_node_days(mtbf))),
        (t("reliability.num.job_mtbf", n="16,384"),
         f"{fmt.number(model.job_mtbf_h(16_384, mtbf))} h"),
        (t("reliability.num.job_mtbf_all"),
         f"{fmt.number(model.job_mtbf_h(16_384, all_mtbf))} h"),
        (t("reliability.num.job_mtbf", n="4,096"),
         f"{fmt.number(model.job_mtbf_h(4_096, mtbf))} h"),
        (t("reliability.num.month", n="4,096"),
         f"{model.expected_interruptions(4_096, mtbf, 720):.2f} "
         f"(± {math.sqrt(model.expected_interruptions(4_096, mtbf, 720)):.2f})"),
        (t("reliability.num.free", n="16,384", h=1),
         fmt.pct(model.interruption_free_probability(16_384, mtbf, 1), 2)),
        (t("reliability.num.free", n="16,384", h=24),
         fmt.pct(model.interruption_free_probability(16_384, mtbf, 24), 4)),
        (t("reliability.num.free", n="4,096", h=12),
         fmt.pct(model.interruption_free_probability(4_096, mtbf, 12), 1)),
        (t("reliability.num.job_mtbf", n="8"), f"{model.job_mtbf_h(8, mtbf):,.0f} h"),
    ]
    return _table(rows)


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


def interval_numbers() -> fmt.Table:
    """Return check case 7 (Young, Daly, exact; Daly's published optima) as a table [min]."""
    daly = data.load_daly_intervals()
    cases = [(r.checkpoint_cost_min, r.mtbf_min, r.published_optimum_min)
             for r in daly.itertuples()] + [(6.0, 240.0, math.nan)]
    rows = []
    for cost, mtbf, published in cases:
        rows.append({
            t("reliability.num.cost_min"): f"{cost:g}",
            t("reliability.num.mtbf_min"): f"{mtbf:,.0f}",
            t("reliability.num.young_min"): fmt.number(model.young_interval(cost, mtbf)),
            t("reliability.num.daly_min"): fmt.number(model.daly_interval(cost, mtbf)),
            t("reliability.num.exact_min"): fmt.number(model.optimal_interval(cost, mtbf)),
            t("reliability.num.published_min"): "—" if math.isnan(published) else f"{published:g}",
        })
    return fmt.people_table(pd.DataFrame(rows))


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
        fig.update_xaxes(type="log", tickformat=",")  # 10,000, not plotly's 10k
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


def ettr_numbers() -> fmt.Table:
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
            t("reliability.num.ettr_meta"): f"{model.expected_ettr(*args, method='meta'):.3f}",
            t("reliability.num.ettr_exact"): f"{model.expected_ettr(*args, method='exact'):.3f}",
        })
    return fmt.people_table(pd.DataFrame(rows))


