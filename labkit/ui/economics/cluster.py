"""The owned-cluster editor (:func:`cluster_app`) and the aircraft widget (:func:`aircraft_app`)."""

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
from labkit.ui.components import Field, FigureOutput, LiveApp, number_field
from labkit.ui.economics.common import (
    _BIG,
    COLORS,
    MAN,
    _won,
    default_slider,
    econ_figure,
    field_box,
    lesson_defaults,
)

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
