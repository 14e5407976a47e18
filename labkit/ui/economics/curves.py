"""API vs owned monthly cost over monthly tokens: the crossover (:func:`cost_curves_app`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets
import plotly.graph_objects as go

from labkit import economics as model
from labkit import validate
from labkit.data.economics import Defaults
from labkit.i18n import t
from labkit.ui import format as fmt
from labkit.ui.components import FigureOutput, LiveApp
from labkit.ui.economics.cluster import ClusterApp, ClusterView, _Follower, cluster_app
from labkit.ui.economics.common import (
    _BIG,
    COLORS,
    EOK,
    MAN,
    _eok,
    default_slider,
    econ_figure,
    field_box,
    lesson_defaults,
    times,
)

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
            verdict = t("econ.curves.owned_cheaper", times=times(r.api_at_u / r.owned_at_u))
        else:
            verdict = t("econ.curves.api_cheaper", times=times(
                r.owned_at_u / r.api_at_u) if r.api_at_u > 0 else "∞")
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
        yaxis={"title": {"text": t("econ.axis.man_won_per_month")}, "tickformat": ",~g"},
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
