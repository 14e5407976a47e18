"""Lesson 07's figures: the 12 monthly bills and the yearly cost by line."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from labkit import opex
from labkit.i18n import t
from labkit.ui import format as fmt
from labkit.ui import plotting
from labkit.ui.opex.common import COLORS

# --- figures -----------------------------------------------------------------------------------

def bills_figure(result: opex.OpexResult) -> go.Figure:
    """Return the 12 monthly bills as stacked bars: base, energy, adders, VAT and fund levy."""
    bills = result.bills
    months = [f"{p.month}월" for p in bills.index]
    parts = [
        ("base", t("opex.bill.base"), bills["base_krw"]),
        ("energy", t("opex.bill.energy"), bills["energy_krw"]),
        ("adders", t("opex.bill.adders"), bills["climate_krw"] + bills["fuel_krw"]),
        ("taxes", t("opex.bill.taxes"), bills["vat_krw"] + bills["fund_levy_krw"]),
    ]
    traces: list[dict[str, Any]] = [
        {"type": "bar", "x": months, "y": values.to_list(), "name": name,
         "marker": {"color": COLORS[key]},
         "hovertemplate": "%{x} " + name + ": %{y:,.0f}원<extra></extra>"}
        for key, name, values in parts]
    traces.append({"type": "scatter", "x": months, "y": bills["total_krw"].to_list(),
                   "mode": "text", "showlegend": False, "hoverinfo": "skip",
                   "text": [f"{v / 10_000:,.0f}만" for v in bills["total_krw"]],
                   "textposition": "top center"})
    return plotting.figure(
        traces, title=t("opex.bill.title", cls=result.tariff_class), barmode="stack",
        height=380, margin={"l": 90, "r": 20, "t": 50, "b": 50},
        legend={"orientation": "h", "y": -0.15, "traceorder": "normal"},
        yaxis={**plotting.won_axis(bills["total_krw"] * 1.18, t("opex.bill.axis")),
               "range": [0, float(bills["total_krw"].max()) * 1.18]})


def demand_figure(result: opex.OpexResult) -> go.Figure:
    """Return each month's peak demand (bars) against its billing demand (요금적용전력, line).

    The gap is the ratchet of KEPCO's 기본공급약관 제68조: the base charge is billed on the
    highest of this month's peak and the Dec-Feb and Jul-Sep peaks of the last 12 months (at
    least 30 % of contract power); with the K-12 exception, on this month's peak only.
    """
    bills = result.bills
    months = [f"{p.month}월" for p in bills.index]
    demand, billing = bills["demand_kw"].to_list(), bills["billing_kw"].to_list()
    contract = result.design.contract
    # each line says which it is (the trial read "1월: 15.0 kW" twice, not knowing which)
    def kw(name: str) -> str:
        return f"%{{x}} {name}: %{{y:.1f}} kW<extra></extra>"

    return plotting.figure(
        [{"type": "bar", "x": months, "y": demand, "name": t("opex.demand.peak"),
          "marker": {"color": COLORS["energy"]}, "hovertemplate": kw(t("opex.demand.peak"))},
         {"type": "scatter", "x": months, "y": billing, "name": t("opex.demand.billing"),
          "mode": "lines+markers+text", "line": {"color": COLORS["base"], "width": 3,
                                                 "shape": "hv"},
          "text": [f"{v:.1f}" for v in billing], "textposition": "top center",
          "hovertemplate": kw(t("opex.demand.billing"))},
         {"type": "scatter", "x": months, "y": [contract] * len(months), "mode": "lines",
          "name": t("opex.demand.contract", kw=f"{contract:g}"),
          "line": {"color": "#999", "dash": "dash"}, "hoverinfo": "skip"}],
        title=t("opex.demand.title"), height=300, margin={"l": 70, "r": 20, "t": 50, "b": 50},
        legend={"orientation": "h", "y": -0.2},
        yaxis={"title": {"text": t("opex.demand.axis")}, "tickformat": ".0f",
               "range": [0, max(contract, *demand, *billing) * 1.2]})


def cost_figure(result: opex.OpexResult) -> go.Figure:
    """Return the year's cost by line as horizontal bars (KRW)."""
    lines = result.breakdown.as_dict()
    return plotting.figure(
        [{"type": "bar", "y": [t(f"opex.line.{k}") for k in lines], "x": list(lines.values()),
          "orientation": "h", "text": [fmt.krw(v) for v in lines.values()],
          "textposition": "auto",
          "marker": {"color": ["#3b6fb6", "#f2a541", "#f6c177", "#7fb069", "#b56576",
                               "#8e7dbe"]}}],
        title=t("opex.cost.title"), height=320, showlegend=False,
        margin={"l": 130, "r": 30, "t": 50, "b": 50},
        xaxis=plotting.won_axis(lines.values(), t("opex.cost.axis")),
        yaxis={"autorange": "reversed"})


def bars_figure(bars: list[tuple[str, float, str]], text: list[str], title: str,
                axis: str) -> go.Figure:
    """Return a small bar chart of (label, value, colour) bars with ``text`` above them."""
    return plotting.figure(
        [{"type": "bar", "x": [b[0] for b in bars], "y": [b[1] for b in bars],
          "marker": {"color": [b[2] for b in bars]}, "text": text, "textposition": "outside"}],
        title=title, height=330, width=430, showlegend=False,
        yaxis={"title": {"text": axis}, "tickformat": ",.0f",
               "range": [0, max(b[1] for b in bars) * 1.2]})
