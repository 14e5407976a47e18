"""Widgets for lesson 05 "API vs 자체 GPU 손익분기" (lesson 06: :mod:`labkit.ui.benchmarks`).

Builders (linked: every app follows the cluster editor):

- :func:`cluster_app` — the owned server's cost parameters and its yearly cost breakdown;
- :func:`aircraft_app` — cost per calendar hour vs cost per used hour as utilization falls;
- :func:`cost_curves_app` — API (linear) vs owned (flat plus energy) monthly cost over monthly
  tokens, the crossover and today's operating point;
- :func:`demand_app` — a school's monthly tokens (students x requests x tokens);
- :func:`rent_app` — renting GPU-hours as a third option;
- :func:`tornado_app` — what moves the break-even most;
- :func:`case_numbers_05`, :func:`exercises_05`.

All numbers come from :mod:`labkit.economics`; defaults, ranges and sources from
``data/economics/`` (:mod:`labkit.data.economics`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from typing import Any

import ipywidgets as widgets
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from labkit import economics as model
from labkit import validate
from labkit.data.economics import (
    Default,
    Defaults,
    load_api_prices,
    load_cloud_prices,
    load_defaults,
    load_hardware_prices,
    scenario_from_defaults,
)
from labkit.i18n import KO, t
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
from labkit.validate import InputError

__all__ = [
    "AircraftApp",
    "ClusterApp",
    "ClusterView",
    "CostCurvesApp",
    "DemandApp",
    "RentApp",
    "TornadoApp",
    "aircraft_app",
    "api_prices",
    "case_numbers_05",
    "cloud_prices",
    "cluster_app",
    "cost_curves_app",
    "curves_figure",
    "defaults_table",
    "demand_app",
    "exercises_05",
    "hardware_prices",
    "rent_app",
    "tornado_app",
    "tornado_figure",
]

EOK = 1e8          # 억: the unit of the token axis
MAN = 1e4          # 만: the unit of the money axis
COLORS = {"api": "#d1495b", "owned": "#3b6fb6", "rent": "#e0a100", "point": "#2e7d32",
          "calendar": "#7a7a7a"}
_BIG = ('<div style="font-size:1.9em;font-weight:700;line-height:1.15">{big}</div>'
        '<div style="color:#444;line-height:1.5">{detail}</div>')
TABLE_HTML = '<table style="border-collapse:collapse;line-height:1.5">'
TD_HTML = '<td style="padding:3px 14px 3px 0;vertical-align:top">'


@functools.cache
def lesson_defaults() -> Defaults:
    return load_defaults()


def _eok(tokens: float, digits: int = 1) -> str:
    """Tokens in 억 (1e8): 1.4954e10 -> '149.5억'."""
    return "n/a" if not math.isfinite(tokens) else f"{tokens / EOK:,.{digits}f}억"


def _won(amount: float) -> str:
    """KRW with comma grouping: 5473.2 -> '5,473원'."""
    return "n/a" if not math.isfinite(amount) else f"{amount:,.0f}원"


def default_slider(d: Default, key: str, label: str, *, pct: bool = False, digits: int = 2,
            unit: str = "") -> Field:
    """A slider over a default's own range (percent controls feed fractions)."""
    if pct:
        return slider_field(key, label, d.value * 100, min=d.low * 100, max=d.high * 100,
                            step=d.step * 100, unit="%", readout_format=".1f", scale=100)
    return slider_field(key, label, d.value, min=d.low, max=d.high, step=d.step, unit=unit,
                        readout_format=f",.{digits}f")


def econ_figure(traces: list[dict[str, Any]], **layout: Any) -> go.Figure:
    """A styled figure with ``traces`` (plotly trace dicts) and ``layout``, built in one pass.

    One ``update_layout`` and one ``add_traces`` call: plotly's per-call validation dominates
    a callback's time (``add_vline`` alone costs ~10 ms), so shapes go in ``layout``.
    """
    fig = styled_figure(**layout)
    fig.add_traces(traces)
    return fig


def field_box(fields: list[Field]) -> widgets.VBox:
    return widgets.VBox([f.box for f in fields])


# =============================================================================================
# Lesson 05
# =============================================================================================

@dataclass(frozen=True)
class ClusterView:
    """The cluster editor's result: the owned cluster and the exchange rate it was priced at."""

    cluster: model.OwnedCluster
    fx_krw_per_usd: float
    server_capex_usd: float
    #: The yearly cost at 100 % utilization (computed with the view, so a cost line that
    #: overflows is an input error, not a failure while drawing).
    breakdown_full: model.CostBreakdown


LINE_ORDER = ("capital", "maintenance", "energy", "staff", "facility", "base_charge")


class ClusterApp(LiveApp[ClusterView]):
    """The owned server's parameters and its yearly cost by line (see :func:`cluster_app`)."""

    def __init__(self, defaults: Defaults) -> None:
        d = defaults
        fields = [
            default_slider(d["server_capex_usd"], "server_capex_usd", t("econ.f.server_capex_usd"),
                    digits=0, unit="USD"),
            default_slider(d["fx_krw_per_usd"], "fx_krw_per_usd", t("econ.f.fx_krw_per_usd"),
                    digits=0, unit="원/USD"),
            number_field("gpus_per_server", t("econ.f.gpus_per_server"),
                         d.value("gpus_per_server"), unit="장"),
            number_field("servers", t("econ.f.servers"), d.value("servers"), unit="대"),
            default_slider(d["depreciation_years"], "depreciation_years",
                    t("econ.f.depreciation_years"), digits=1, unit="년"),
            default_slider(d["cost_of_capital"], "cost_of_capital", t("econ.f.cost_of_capital"),
                    pct=True),
            default_slider(d["max_it_power_kw"], "max_it_power_kw", t("econ.f.max_it_power_kw"),
                    digits=1, unit="kW"),
            default_slider(d["idle_power_fraction"], "idle_power_fraction",
                    t("econ.f.idle_power_fraction"), pct=True),
            default_slider(d["pue"], "pue", t("econ.f.pue"), digits=2),
            default_slider(d["energy_price_krw_per_kwh"], "energy_price_krw_per_kwh",
                    t("econ.f.energy_price_krw_per_kwh"), digits=1, unit="원/kWh"),
            number_field("base_charge_krw_per_kw_month", t("econ.f.base_charge"),
                         d.value("base_charge_krw_per_kw_month"), unit="원/kW·월", step=10),
            number_field("staff_krw_per_year", t("econ.f.staff_krw_per_year"),
                         d.value("staff_krw_per_year"), unit="원/년", step=1_000_000,
                         width="160px"),
            default_slider(d["maintenance_fraction_per_year"], "maintenance_fraction_per_year",
                    t("econ.f.maintenance"), pct=True),
            number_field("facility_krw_per_year", t("econ.f.facility_krw_per_year"),
                         d.value("facility_krw_per_year"), unit="원/년", step=500_000,
                         width="160px"),
        ]
        super().__init__("cluster", fields, error_prefix="econ")
        self.big = widgets.HTML()
        self.big.add_class("lk-cluster-total")
        self.chart = FigureOutput("lk-cluster-chart")
        reset = widgets.Button(description=t("common.reset"))
        reset.on_click(self.reset)
        self.children = [field_box(list(self.fields.values())), reset, self.status, self.big,
                         self.chart]
        self.update()

    def compute(self, values: dict[str, Any]) -> ClusterView:
        fx = validate.positive("fx_krw_per_usd", values["fx_krw_per_usd"])
        capex = validate.non_negative("server_capex_usd", values["server_capex_usd"])
        cluster = model.OwnedCluster(model.usd_to_krw(capex, fx),
                                     **{name: values[name] for name in model.CLUSTER_INPUTS})
        return ClusterView(cluster, fx, values["server_capex_usd"],
                           cluster.annual_cost_breakdown(1.0))

    def render(self, result: ClusterView) -> None:
        b = result.breakdown_full
        shares = b.shares()
        self.big.value = _BIG.format(
            big=t("econ.cluster.total", total=fmt.krw(b.total_krw)),
            detail=t("econ.cluster.detail", capex=fmt.krw(result.cluster.capex_krw),
                     gpus=result.cluster.gpus, electricity=fmt.pct(
                         shares["energy"] + shares["base_charge"]),
                     capital=fmt.pct(shares["capital"])),
        )
        values = b.as_dict()
        lines = list(reversed(LINE_ORDER))
        self.chart.show(econ_figure(
            [{"type": "bar", "y": [t(f"econ.line.{k}") for k in lines],
              "x": [values[k] / MAN for k in lines], "orientation": "h",
              "marker": {"color": COLORS["owned"]},
              "text": [f"{values[k] / MAN:,.0f}만 ({fmt.pct(shares[k])})" for k in lines],
              "textposition": "auto"}],
            title=t("econ.cluster.chart_title"), height=300, showlegend=False,
            xaxis={"title": {"text": t("econ.axis.man_won_per_year")}, "tickformat": ",d"},
            margin={"l": 170, "r": 30, "t": 50, "b": 50}))


def cluster_app(defaults: Defaults | None = None) -> ClusterApp:
    """Return the owned-cluster editor, filled with the lesson defaults (reference §9)."""
    return ClusterApp(defaults or lesson_defaults())


class _Follower(LiveApp[Any]):
    """An app that recomputes whenever the cluster editor has a new good result."""

    def __init__(self, name: str, fields: list[Field], source: ClusterApp) -> None:
        super().__init__(name, fields, error_prefix="econ")
        self.source = source
        source.on_result.append(lambda _r: self.update())

    def view(self) -> ClusterView:
        if self.source.result is None:
            raise ValueError(t("econ.no_cluster"))
        return self.source.result


# -- the aircraft: calendar hours cost, used hours earn -----------------------------------------

@dataclass(frozen=True)
class AircraftView:
    """Cost per calendar and per used GPU-hour at one utilization."""

    view: ClusterView
    utilization: float
    per_calendar_h: float
    per_used_h: float
    per_used_h_full: float


class AircraftApp(_Follower):
    """Cost per calendar hour vs cost per used hour (see :func:`aircraft_app`)."""

    def __init__(self, source: ClusterApp, defaults: Defaults) -> None:
        fields = [default_slider(defaults["utilization"], "utilization", t("econ.f.utilization"),
                          pct=True)]
        super().__init__("aircraft", fields, source)
        self.big = widgets.HTML()
        self.big.add_class("lk-aircraft-value")
        self.chart = FigureOutput("lk-aircraft-chart")
        self.children = [field_box(list(self.fields.values())), self.status, self.big,
                         self.chart]
        self.update()

    def compute(self, values: dict[str, Any]) -> AircraftView:
        view = self.view()
        c = view.cluster
        u = values["utilization"]
        return AircraftView(view, u, c.cost_per_calendar_gpu_hour(u), c.cost_per_gpu_hour(u),
                            c.cost_per_gpu_hour(1.0))

    def render(self, result: AircraftView) -> None:
        c = result.view.cluster
        self.big.value = _BIG.format(
            big=t("econ.aircraft.big", pct=fmt.pct(result.utilization, 0),
                  used=_won(result.per_used_h)),
            detail=t("econ.aircraft.detail", calendar=_won(result.per_calendar_h),
                     full=_won(result.per_used_h_full),
                     times=fmt.ratio(result.per_used_h / result.per_used_h_full, 1),
                     idle=fmt.pct(1 - result.utilization, 0)),
        )
        u = np.linspace(0.05, 1.0, 96)
        annual = np.array([c.annual_cost_krw(x) for x in (0.0, 1.0)])
        total = annual[0] + (annual[1] - annual[0]) * u   # the year's cost is linear in u
        hours = c.gpus * model.HOURS_PER_YEAR
        self.chart.show(econ_figure(
            [{"type": "scatter", "x": u * 100, "y": total / (hours * u), "mode": "lines",
              "name": t("econ.aircraft.used"), "line": {"color": COLORS["owned"], "width": 3}},
             {"type": "scatter", "x": u * 100, "y": total / hours, "mode": "lines",
              "name": t("econ.aircraft.calendar"),
              "line": {"color": COLORS["calendar"], "dash": "dash"}},
             {"type": "scatter", "x": [result.utilization * 100], "y": [result.per_used_h],
              "mode": "markers+text", "marker": {"size": 13, "color": COLORS["point"]},
              "name": t("econ.point"), "text": [_won(result.per_used_h)],
              "textposition": "top right"}],
            title=t("econ.aircraft.chart_title"), height=380, legend={"x": 0.45, "y": 0.95},
            xaxis={"title": {"text": t("econ.axis.utilization")}},
            yaxis={"title": {"text": t("econ.axis.won_per_gpu_hour")}, "tickformat": ",d"}))


def aircraft_app(source: ClusterApp | None = None,
                 defaults: Defaults | None = None) -> AircraftApp:
    """Return the aircraft widget, following ``source`` (a fresh default cluster if omitted)."""
    return AircraftApp(source if source is not None else cluster_app(defaults),
                       defaults or lesson_defaults())


# -- cost curves and the crossover ---------------------------------------------------------------

@dataclass(frozen=True)
class CurvesView:
    """Everything the cost-curves chart shows (money per month, tokens per month)."""

    view: ClusterView
    api_price_krw_per_m: float
    tokens_per_s_per_gpu: float
    derate: float
    utilization: float
    fixed_krw: float
    marginal_krw_per_token: float
    capacity_tokens: float
    n_star: float
    tokens_at_u: float
    owned_at_u: float
    api_at_u: float

    @property
    def u_star(self) -> float:
        """Break-even utilization (may exceed 1, or be inf)."""
        return self.n_star / self.capacity_tokens


class CostCurvesApp(_Follower):
    """API vs owned monthly cost over monthly tokens (see :func:`cost_curves_app`)."""

    def __init__(self, source: ClusterApp, defaults: Defaults) -> None:
        d = defaults
        self.tokens_per_s_per_gpu = d.value("tokens_per_s_per_gpu")
        fields = [
            default_slider(d["utilization"], "utilization", t("econ.f.utilization"), pct=True),
            default_slider(d["api_price_usd_per_m"], "api_price_usd_per_m",
                    t("econ.f.api_price_usd_per_m"), digits=2, unit="USD / 100만 토큰"),
            default_slider(d["derate"], "derate", t("econ.f.derate"), pct=True),
        ]
        super().__init__("curves", fields, source)
        self.big = widgets.HTML()
        self.big.add_class("lk-curves-summary")
        self.chart = FigureOutput("lk-curves-chart")
        self.children = [field_box(list(self.fields.values())), self.status, self.big,
                         self.chart]
        self.update()

    def compute(self, values: dict[str, Any]) -> CurvesView:
        view = self.view()
        c = view.cluster
        price = model.usd_to_krw(
            validate.non_negative("api_price_usd_per_m", values["api_price_usd_per_m"]),
            view.fx_krw_per_usd)
        tps, derate, u = self.tokens_per_s_per_gpu, values["derate"], values["utilization"]
        cap = model.monthly_capacity_tokens(c, tps, derate)
        n_star = model.break_even_tokens_per_month(c, price, tps, derate)
        tokens_u = cap * validate.fraction("utilization", u)
        return CurvesView(
            view, price, tps, derate, u, model.fixed_cost_krw_per_month(c),
            model.marginal_cost_krw_per_token(c, tps, derate), cap, n_star, tokens_u,
            model.owned_cost_krw_per_month(c, tokens_u, tps, derate),
            model.api_cost_krw(0, tokens_u, 0, price))

    def render(self, r: CurvesView) -> None:
        if math.isinf(r.n_star):
            crossover = t("econ.curves.never")
        elif r.n_star > r.capacity_tokens:
            crossover = t("econ.curves.beyond", n=_eok(r.n_star), pct=fmt.pct(r.u_star))
        else:
            crossover = t("econ.curves.crossover", n=_eok(r.n_star), pct=fmt.pct(r.u_star))
        if r.owned_at_u < r.api_at_u:
            verdict = t("econ.curves.owned_cheaper", times=fmt.ratio(r.api_at_u / r.owned_at_u, 1))
        else:
            verdict = t("econ.curves.api_cheaper", times=fmt.ratio(
                r.owned_at_u / r.api_at_u, 1) if r.api_at_u > 0 else "∞")
        self.big.value = _BIG.format(
            big=crossover,
            detail="<br>".join([
                t("econ.curves.at_u", pct=fmt.pct(r.utilization, 0), n=_eok(r.tokens_at_u),
                  owned=fmt.krw(r.owned_at_u), api=fmt.krw(r.api_at_u)),
                f"<b>{verdict}</b>",
                t("econ.curves.model", fixed=fmt.krw(r.fixed_krw),
                  marginal=f"{r.marginal_krw_per_token * 1e6:,.1f}",
                  price=f"{r.api_price_krw_per_m:,.0f}", cap=_eok(r.capacity_tokens)),
            ]),
        )
        self.chart.show(curves_figure(r))


def _pricing_inputs(r: CurvesView) -> tuple[Any, ...]:
    """What the break-even depends on (everything the curves show except the utilization)."""
    return (r.view, r.api_price_krw_per_m, r.tokens_per_s_per_gpu, r.derate)


class _PricingFollower(LiveApp[Any]):
    """An app that recomputes when the cost curves' pricing inputs change (not utilization)."""

    curves: CostCurvesApp

    def _follow_curves(self, curves: CostCurvesApp, css: str) -> None:
        """Lay out fields, status, summary ``lk-<css>-summary`` and chart ``lk-<css>-chart``."""
        self.big = widgets.HTML()
        self.big.add_class(f"lk-{css}-summary")
        self.chart = FigureOutput(f"lk-{css}-chart")
        self.children = [field_box(list(self.fields.values())), self.status, self.big,
                         self.chart]
        self._inputs = _pricing_inputs(curves.result) if curves.result is not None else None
        curves.on_result.append(self._follow)
        self.update()

    def _follow(self, r: CurvesView) -> None:
        # Utilization moves only the curves' operating point: nothing here depends on it.
        inputs = _pricing_inputs(r)
        if inputs != self._inputs:
            self._inputs = inputs
            self.update()


def curves_figure(r: CurvesView) -> go.Figure:
    """Return the cost-curves chart of a :class:`CurvesView` (x in 억 tokens, y in 만 원)."""
    finite_star = math.isfinite(r.n_star)
    x_max = r.capacity_tokens * 1.15
    if finite_star and r.n_star <= 3 * r.capacity_tokens:
        x_max = max(x_max, r.n_star * 1.15)
    cap = r.capacity_tokens / EOK
    traces: list[dict[str, Any]] = [
        {"type": "scatter", "x": [0, x_max / EOK],
         "y": [0, r.api_price_krw_per_m * x_max / 1e6 / MAN], "mode": "lines",
         "name": t("econ.curves.api"), "line": {"color": COLORS["api"], "width": 3}},
        {"type": "scatter", "x": [0, cap],
         "y": [r.fixed_krw / MAN,
               (r.fixed_krw + r.marginal_krw_per_token * r.capacity_tokens) / MAN],
         "mode": "lines", "name": t("econ.curves.owned"),
         "line": {"color": COLORS["owned"], "width": 3}},
    ]
    if finite_star and r.n_star <= x_max:
        traces.append({
            "type": "scatter", "x": [r.n_star / EOK],
            "y": [r.api_price_krw_per_m * r.n_star / 1e6 / MAN], "mode": "markers+text",
            "name": t("econ.curves.cross"), "marker": {"size": 14, "color": "black",
                                                      "symbol": "x"},
            "text": [t("econ.curves.cross_label", n=_eok(r.n_star))],
            "textposition": "top left"})
    traces.append({
        "type": "scatter", "x": [r.tokens_at_u / EOK] * 2,
        "y": [r.owned_at_u / MAN, r.api_at_u / MAN], "mode": "markers+lines",
        "name": t("econ.curves.point", pct=fmt.pct(r.utilization, 0)),
        "marker": {"size": 11, "color": COLORS["point"]},
        "line": {"color": COLORS["point"], "dash": "dot"}})
    return econ_figure(
        traces, title=t("econ.curves.chart_title"), height=420, legend={"x": 0.01, "y": 0.99},
        xaxis={"title": {"text": t("econ.axis.tokens")}, "range": [0, x_max / EOK]},
        yaxis={"title": {"text": t("econ.axis.man_won_per_month")}},
        shapes=[{"type": "line", "x0": cap, "x1": cap, "xref": "x", "y0": 0, "y1": 1,
                 "yref": "y domain", "line": {"color": "#999", "dash": "dash"}}],
        annotations=[{"x": cap, "xref": "x", "y": 1, "yref": "y domain", "xanchor": "right",
                      "yanchor": "top", "showarrow": False,
                      "text": t("econ.curves.capacity")}])


def cost_curves_app(source: ClusterApp | None = None,
                    defaults: Defaults | None = None) -> CostCurvesApp:
    """Return the cost-curves app, following ``source`` (a fresh default cluster if omitted)."""
    return CostCurvesApp(source if source is not None else cluster_app(defaults),
                         defaults or lesson_defaults())


# -- a school's demand ---------------------------------------------------------------------------

#: Most copies of the cluster the demand app sizes (beyond: "at most N students"). [count]
MAX_CLUSTER_COPIES = 10_000


@dataclass(frozen=True)
class DemandView:
    """A school's monthly demand priced both ways."""

    tokens: float
    api_krw: float
    owned_krw: float
    servers_needed: int
    utilization: float


class DemandApp(_PricingFollower):
    """Students x requests x tokens -> monthly tokens and cost (see :func:`demand_app`)."""

    def __init__(self, curves: CostCurvesApp, defaults: Defaults) -> None:
        d = defaults
        self.curves = curves
        fields = [
            number_field("students", t("econ.f.students"), d.value("students"), unit="명"),
            number_field("requests_per_day", t("econ.f.requests_per_day"),
                         d.value("requests_per_day"), unit="회/일"),
            number_field("tokens_per_request", t("econ.f.tokens_per_request"),
                         d.value("tokens_per_request"), unit="토큰", step=10),
            number_field("days_per_month", t("econ.f.days_per_month"),
                         d.value("days_per_month"), unit="일"),
        ]
        super().__init__("demand", fields, error_prefix="econ")
        self._follow_curves(curves, "demand")

    def compute(self, values: dict[str, Any]) -> DemandView:
        r = self.curves.result
        if r is None:
            raise ValueError(t("econ.no_cluster"))
        # A class has at least one student (0 leaves nothing to compare: "API is inf x cheaper")
        validate.positive("students", values["students"])
        tokens = model.monthly_demand_tokens(values["students"], values["requests_per_day"],
                                             values["tokens_per_request"],
                                             values["days_per_month"])
        c = r.view.cluster
        # More demand than one cluster makes: copies of the servers (staff/facility shared).
        ratio = tokens / r.capacity_tokens
        if not ratio <= MAX_CLUSTER_COPIES:  # also inf / nan from 1e308 students
            per_student = model.monthly_demand_tokens(1, values["requests_per_day"],
                                                      values["tokens_per_request"],
                                                      values["days_per_month"])
            raise InputError("students", "at_most", values["students"],
                             f"demand needs more than {MAX_CLUSTER_COPIES:,} copies of the cluster",
                             limit=math.floor(MAX_CLUSTER_COPIES * r.capacity_tokens / per_student))
        copies = max(1, math.ceil(ratio))
        owned_cluster = replace(c, servers=c.servers * copies)
        owned = model.owned_cost_krw_per_month(owned_cluster, tokens, r.tokens_per_s_per_gpu,
                                               r.derate)
        cap = model.monthly_capacity_tokens(owned_cluster, r.tokens_per_s_per_gpu, r.derate)
        return DemandView(tokens, model.api_cost_krw(0, tokens, 0, r.api_price_krw_per_m),
                          owned, owned_cluster.servers, tokens / cap)

    def render(self, result: DemandView) -> None:
        if result.api_krw < result.owned_krw:
            verdict = t("econ.demand.api_cheaper", times=fmt.ratio(
                result.owned_krw / result.api_krw, 1) if result.api_krw > 0 else "∞")
        else:
            verdict = t("econ.demand.owned_cheaper",
                        times=fmt.ratio(result.api_krw / result.owned_krw, 1))
        self.big.value = _BIG.format(
            big=t("econ.demand.big", n=_eok(result.tokens, 2)),
            detail="<br>".join([
                t("econ.demand.costs", api=fmt.krw(result.api_krw),
                  owned=fmt.krw(result.owned_krw), servers=result.servers_needed,
                  pct=fmt.pct(result.utilization)),
                f"<b>{verdict}</b>"]),
        )
        self.chart.show(econ_figure(
            [{"type": "bar", "x": [t("econ.curves.api"), t("econ.curves.owned")],
              "y": [result.api_krw / MAN, result.owned_krw / MAN],
              "marker": {"color": [COLORS["api"], COLORS["owned"]]},
              "text": [fmt.krw(result.api_krw), fmt.krw(result.owned_krw)],
              "textposition": "auto"}],
            title=t("econ.demand.chart_title"), height=280, showlegend=False,
            yaxis={"title": {"text": t("econ.axis.man_won_per_month")}}))


def demand_app(curves: CostCurvesApp | None = None,
               defaults: Defaults | None = None) -> DemandApp:
    """Return the school demand estimator, priced with ``curves``' API price and throughput."""
    return DemandApp(curves if curves is not None else cost_curves_app(defaults=defaults),
                     defaults or lesson_defaults())


# -- renting as a third option ----------------------------------------------------------------

@dataclass(frozen=True)
class RentView:
    """Rent vs own per used GPU-hour."""

    view: ClusterView
    rent_krw_per_gpu_hour: float
    utilization: float
    u_star: float
    owned_per_used_h: float


class RentApp(_Follower):
    """Renting GPU-hours vs owning (see :func:`rent_app`)."""

    def __init__(self, source: ClusterApp, defaults: Defaults) -> None:
        fields = [
            default_slider(defaults["rent_usd_per_gpu_hour"], "rent_usd_per_gpu_hour",
                    t("econ.f.rent_usd_per_gpu_hour"), digits=2, unit="USD/GPU·h"),
            default_slider(defaults["utilization"], "utilization", t("econ.f.utilization"),
                    pct=True),
        ]
        super().__init__("rent", fields, source)
        self.big = widgets.HTML()
        self.big.add_class("lk-rent-summary")
        self.chart = FigureOutput("lk-rent-chart")
        self.children = [field_box(list(self.fields.values())), self.status, self.big,
                         self.chart]
        self.update()

    def compute(self, values: dict[str, Any]) -> RentView:
        view = self.view()
        rent = model.usd_to_krw(
            validate.non_negative("rent_usd_per_gpu_hour", values["rent_usd_per_gpu_hour"]),
            view.fx_krw_per_usd)
        u = values["utilization"]
        return RentView(view, rent, u,
                        model.rent_vs_own_break_even_utilization(view.cluster, rent),
                        view.cluster.cost_per_gpu_hour(u))

    def render(self, r: RentView) -> None:
        if r.u_star > 1:
            big = t("econ.rent.never")
        else:
            big = t("econ.rent.big", pct=fmt.pct(r.u_star))
        if r.owned_per_used_h < r.rent_krw_per_gpu_hour:
            verdict = t("econ.rent.own_now", times=fmt.ratio(
                r.rent_krw_per_gpu_hour / r.owned_per_used_h, 2))
        else:
            verdict = t("econ.rent.rent_now", times=fmt.ratio(
                r.owned_per_used_h / r.rent_krw_per_gpu_hour, 2)
                if r.rent_krw_per_gpu_hour > 0 else "∞")
        self.big.value = _BIG.format(big=big, detail="<br>".join([
            t("econ.rent.at_u", pct=fmt.pct(r.utilization, 0), rent=_won(r.rent_krw_per_gpu_hour),
              owned=_won(r.owned_per_used_h)), f"<b>{verdict}</b>"]))
        c = r.view.cluster
        u = np.linspace(0.05, 1.0, 96)
        c0, c1 = c.annual_cost_krw(0.0), c.annual_cost_krw(1.0)
        owned = (c0 + (c1 - c0) * u) / (c.gpus * model.HOURS_PER_YEAR * u)
        traces: list[dict[str, Any]] = [
            {"type": "scatter", "x": u * 100, "y": owned, "mode": "lines",
             "name": t("econ.rent.owned"), "line": {"color": COLORS["owned"], "width": 3}},
            {"type": "scatter", "x": [5, 100], "y": [r.rent_krw_per_gpu_hour] * 2,
             "mode": "lines", "name": t("econ.rent.rent"),
             "line": {"color": COLORS["rent"], "width": 3}},
        ]
        if r.u_star <= 1:
            traces.append({
                "type": "scatter", "x": [r.u_star * 100], "y": [r.rent_krw_per_gpu_hour],
                "mode": "markers+text", "marker": {"size": 14, "color": "black", "symbol": "x"},
                "name": t("econ.curves.cross"), "text": [fmt.pct(r.u_star)],
                "textposition": "bottom center"})
        traces.append({"type": "scatter", "x": [r.utilization * 100],
                       "y": [r.owned_per_used_h], "mode": "markers",
                       "marker": {"size": 12, "color": COLORS["point"]},
                       "name": t("econ.point")})
        self.chart.show(econ_figure(
            traces, title=t("econ.rent.chart_title"), height=360, legend={"x": 0.5, "y": 0.95},
            xaxis={"title": {"text": t("econ.axis.utilization")}},
            yaxis={"title": {"text": t("econ.axis.won_per_gpu_hour")}, "tickformat": ",d",
                   "range": [0, max(r.rent_krw_per_gpu_hour * 2.2, owned[-1] * 3)]}))


def rent_app(source: ClusterApp | None = None, defaults: Defaults | None = None) -> RentApp:
    """Return the rent-vs-own app, following ``source``."""
    return RentApp(source if source is not None else cluster_app(defaults),
                   defaults or lesson_defaults())


def cloud_prices() -> pd.DataFrame:
    """Return the cloud GPU-hour prices (data/economics/cloud_gpu_prices.csv) in Korean columns."""
    frame = load_cloud_prices()
    table = frame[["gpu", "provider", "offer", "usd_per_gpu_hour", "as_of", "reliability"]]
    return table.rename(columns={
        "gpu": "GPU", "provider": t("econ.col.provider"), "offer": t("econ.col.offer"),
        "usd_per_gpu_hour": t("econ.col.usd_per_gpu_hour"), "as_of": t("econ.col.as_of"),
        "reliability": t("econ.col.reliability")}).reset_index(drop=True)


def api_prices(input_per_output: float = 3.0) -> pd.DataFrame:
    """Return the API price table with each model's blended price (input:output = r:1).

    Prices in USD per 1M tokens from ``data/economics/api_prices.csv``; the blend is
    :func:`labkit.economics.blended_price`.
    """
    frame = load_api_prices()
    table = frame[["model", "provider", "usd_per_m_input", "usd_per_m_output", "as_of",
                   "reliability"]].copy()
    table.insert(4, "blended", [round(model.blended_price(i, o, input_per_output), 3) for i, o
                                in zip(frame["usd_per_m_input"], frame["usd_per_m_output"],
                                       strict=True)])
    return table.rename(columns={
        "model": t("econ.col.model"), "provider": t("econ.col.provider"),
        "usd_per_m_input": t("econ.col.usd_in"), "usd_per_m_output": t("econ.col.usd_out"),
        "blended": t("econ.col.usd_blended", r=f"{input_per_output:g}"),
        "as_of": t("econ.col.as_of"), "reliability": t("econ.col.reliability")})


def hardware_prices() -> pd.DataFrame:
    """Return GPU and server prices (``data/economics/hardware_prices.csv``), Korean headers."""
    frame = load_hardware_prices()
    table = frame[["item", "gpus", "price_usd_low", "price_usd_high", "as_of", "reliability",
                   "source"]]
    return table.rename(columns={
        "item": t("econ.col.item"), "gpus": "GPU", "price_usd_low": t("econ.col.usd_low"),
        "price_usd_high": t("econ.col.usd_high"), "as_of": t("econ.col.as_of"),
        "reliability": t("econ.col.reliability"), "source": t("econ.col.source")})


# -- what moves the break-even: tornado -------------------------------------------------------

TORNADO_PARAMETERS = (
    "api_price_usd_per_m", "derate", "tokens_per_s_per_gpu", "server_capex_usd",
    "depreciation_years", "cost_of_capital", "maintenance_fraction_per_year",
    "staff_krw_per_year", "facility_krw_per_year", "energy_price_krw_per_kwh", "pue",
    "max_it_power_kw", "idle_power_fraction", "base_charge_krw_per_kw_month", "fx_krw_per_usd",
)


class TornadoApp(_PricingFollower):
    """One-at-a-time sensitivity of the break-even tokens (see :func:`tornado_app`)."""

    def __init__(self, curves: CostCurvesApp, defaults: Defaults) -> None:
        self.curves = curves
        self.defaults = defaults
        mode = widgets.ToggleButtons(
            options=[(t("econ.tornado.mode.relative"), "relative"),
                     (t("econ.tornado.mode.range"), "range")], value="relative")
        fields = [Field("mode", t("econ.tornado.mode"), mode),
                  slider_field("spread", t("econ.tornado.spread"), 20, min=5, max=50, step=5,
                               unit="%", readout_format=".0f", scale=100)]
        super().__init__("tornado", fields, error_prefix="econ")
        self._follow_curves(curves, "tornado")

    def scenario(self) -> model.BreakEvenScenario:
        """The scenario the cluster editor and the cost curves show now."""
        r = self.curves.result
        if r is None:
            raise ValueError(t("econ.no_cluster"))
        return model.BreakEvenScenario(
            server_capex_usd=r.view.server_capex_usd, fx_krw_per_usd=r.view.fx_krw_per_usd,
            api_price_usd_per_m=r.api_price_krw_per_m / r.view.fx_krw_per_usd,
            tokens_per_s_per_gpu=r.tokens_per_s_per_gpu, derate=r.derate, owned=r.view.cluster)

    def compute(self, values: dict[str, Any]) -> pd.DataFrame:
        base = self.scenario()
        mode = validate.one_of("mode", values["mode"], ("relative", "range"))
        spread = validate.at_most("spread", validate.positive("spread", values["spread"]),
                                  0.9, "90 %")
        ranges: dict[str, tuple[float, float]] = {}
        for name in TORNADO_PARAMETERS:
            d = self.defaults[name]
            if mode == "range":
                ranges[name] = (d.low, d.high)
                continue
            # now +- spread, kept inside the plausible range (reference §9) around now
            now = float(base.input(name))
            ranges[name] = (max(now * (1 - spread), min(d.low, now)),
                            min(now * (1 + spread), max(d.high, now)))
        return model.sensitivity(base, ranges)

    def render(self, table: pd.DataFrame) -> None:
        base = table.attrs["base"]
        top = [t(f"econ.p.{p}") for p in table["parameter"].head(3)]
        self.big.value = _BIG.format(
            big=t("econ.tornado.big", first=top[0]),
            detail=t("econ.tornado.detail", base=_eok(base), top=", ".join(top)))
        self.chart.show(tornado_figure(table))


def tornado_figure(table: pd.DataFrame) -> go.Figure:
    """Return a tornado chart of a :func:`labkit.economics.sensitivity` table (억 tokens)."""
    base = table.attrs["base"]
    finite = [v for v in (*table["result_low"], *table["result_high"], base) if math.isfinite(v)]
    cap = max(finite) * 1.1 if finite else 1.0
    rows = table.iloc[::-1]  # largest swing on top
    labels = [t(f"econ.p.{p}") for p in rows["parameter"]]

    def bars(column: str, low_end: bool) -> dict[str, Any]:
        ends = [min(v, cap) for v in rows[column]]
        # no label on a bar of (almost) no length: it would sit on the other bar's label
        text = ["∞" if math.isinf(v) else ("" if abs(v - base) < 0.002 * cap else _eok(v))
                for v in rows[column]]
        values = rows["low" if low_end else "high"]
        return {"type": "bar", "y": labels, "x": [(e - base) / EOK for e in ends],
                "base": base / EOK, "orientation": "h",
                "name": t("econ.tornado.low" if low_end else "econ.tornado.high"),
                "marker": {"color": "#3b6fb6" if low_end else "#d1495b"},
                "text": text, "textposition": "outside", "cliponaxis": False,
                "customdata": [f"{v:,.4g}" for v in values],
                "hovertemplate": "%{y}: %{customdata} → %{text}<extra></extra>"}

    x0 = base / EOK
    return econ_figure(
        [bars("result_low", True), bars("result_high", False)],
        title=t("econ.tornado.chart_title"), barmode="overlay", height=520,
        xaxis={"title": {"text": t("econ.axis.tokens")}},
        margin={"l": 200, "r": 60, "t": 50, "b": 50}, legend={"orientation": "h", "y": -0.15},
        shapes=[{"type": "line", "x0": x0, "x1": x0, "xref": "x", "y0": 0, "y1": 1,
                 "yref": "y domain", "line": {"color": "black", "width": 1}}])


def tornado_app(curves: CostCurvesApp | None = None,
                defaults: Defaults | None = None) -> TornadoApp:
    """Return the tornado app for the scenario ``curves`` shows now."""
    return TornadoApp(curves if curves is not None else cost_curves_app(defaults=defaults),
                      defaults or lesson_defaults())


# -- numbers and exercises ---------------------------------------------------------------------

def defaults_table(lesson: str = "05") -> pd.DataFrame:
    """Return the lesson's parameters: value, range, unit, source, date and reliability."""
    frame = lesson_defaults().frame
    rows = frame[frame["lesson"] == lesson]
    table = rows[["parameter", "value", "unit", "low", "high", "as_of", "reliability",
                  "source"]].copy()
    table["parameter"] = [t(f"econ.p.{p}") if f"econ.p.{p}" in KO else p
                          for p in table["parameter"]]
    return table.rename(columns={
        "parameter": t("econ.col.parameter"), "value": t("econ.col.value"),
        "unit": t("econ.col.unit"), "low": t("econ.col.low"), "high": t("econ.col.high"),
        "as_of": t("econ.col.as_of"), "reliability": t("econ.col.reliability"),
        "source": t("econ.col.source")}).reset_index(drop=True)


def case_numbers_05() -> pd.DataFrame:
    """Return the lesson's key numbers at the defaults (shared check cases 1 and 3).

    Deterministic text for ``# NBVAL_CHECK_OUTPUT``.
    """
    s = scenario_from_defaults(lesson_defaults())
    c = s.cluster()
    full, forty = c.annual_cost_breakdown(1.0), c.annual_cost_breakdown(0.4)
    shares = full.shares()
    tps = s.tokens_per_s_per_gpu
    demand = model.monthly_demand_tokens(1_000, 50, 1_300, 30)
    api = model.api_cost_krw(0, demand, 0, s.api_price_krw_per_m)
    rows = [
        (t("econ.case.annual_100"), fmt.krw(full.total_krw)),
        (t("econ.case.annual_40"), fmt.krw(forty.total_krw)),
        (t("econ.case.gpu_h_100"), _won(c.cost_per_gpu_hour(1.0))),
        (t("econ.case.gpu_h_40"), _won(c.cost_per_gpu_hour(0.4))),
        (t("econ.case.electricity_share"), fmt.pct(shares["energy"] + shares["base_charge"])),
        (t("econ.case.fixed"), fmt.krw(model.fixed_cost_krw_per_month(c))),
        (t("econ.case.marginal"),
         f"{model.marginal_cost_krw_per_token(c, tps) * 1e6:,.2f}원"),
        (t("econ.case.n_star", usd="0.60"), _eok(s.break_even_tokens_per_month())),
        (t("econ.case.u_star"), fmt.pct(s.break_even_utilization())),
        (t("econ.case.school"), _eok(demand)),
        (t("econ.case.school_api"), fmt.krw(api)),
        (t("econ.case.school_ratio"),
         f"{model.fixed_cost_krw_per_month(c) / api:.1f}배"),
    ]
    column = t("econ.col.item")
    return pd.DataFrame(rows, columns=[column, t("econ.col.value")]).set_index(column)


def exercises_05() -> widgets.VBox:
    """Return lesson 05's exercises; answers come from :mod:`labkit.economics`."""
    s = scenario_from_defaults(lesson_defaults())
    c = s.cluster()
    dear = replace(s, api_price_usd_per_m=1.0)
    return exercise_set([
        Exercise("econ.ex05_1", c.cost_per_gpu_hour(0.25), 30.0, "원"),
        Exercise("econ.ex05_2", dear.break_even_tokens_per_month() / EOK, 0.5, "억 토큰"),
        Exercise("econ.ex05_3", model.rent_vs_own_break_even_utilization(
            c, model.usd_to_krw(1.99, s.fx_krw_per_usd)) * 100, 0.5, "%"),
    ])


#: Lesson 06's builders, moved to :mod:`labkit.ui.benchmarks`; ``ui.economics.<name>`` still
#: finds them (imported on use: labkit.ui.benchmarks imports this module).
MOVED_TO_BENCHMARKS = ("ClaimApp", "RackApp", "case_numbers_06", "claim_app", "exercises_06",
                       "mlperf_table", "rack_app", "steps_figure")


def __getattr__(name: str) -> Any:
    if name in MOVED_TO_BENCHMARKS:
        from labkit.ui import benchmarks

        return getattr(benchmarks, name)
    raise AttributeError(f"module 'labkit.ui.economics' has no attribute {name!r}")
