"""Renting GPU-hours as a third option (:func:`rent_app`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets
import numpy as np

from labkit import economics as model
from labkit import validate
from labkit.data.economics import Defaults
from labkit.i18n import t
from labkit.ui import format as fmt
from labkit.ui.components import FigureOutput
from labkit.ui.economics.cluster import ClusterApp, ClusterView, _Follower, cluster_app
from labkit.ui.economics.common import (
    _BIG,
    COLORS,
    _won,
    default_slider,
    econ_figure,
    field_box,
    lesson_defaults,
)

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
