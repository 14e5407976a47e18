"""What moves the break-even most: a one-at-a-time tornado (:func:`tornado_app`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go

from labkit import economics as model
from labkit import validate
from labkit.data.economics import Defaults
from labkit.i18n import t
from labkit.ui import format as fmt
from labkit.ui.components import Field, slider_field
from labkit.ui.economics.common import _BIG, EOK, _eok, econ_figure, lesson_defaults
from labkit.ui.economics.curves import CostCurvesApp, _PricingFollower, cost_curves_app
from labkit.ui.economics.tables import UNITS

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
        self.units = {name: d.unit for name, d in defaults.items()}  # the hover's units
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
        self.chart.show(tornado_figure(table, self.units))


#: Share of the bars' span left free on each side of a tornado for the value labels.
LABEL_ROOM = 0.22


def _value_text(value: float, unit: str) -> str:
    """A parameter's value in people's numbers with its Korean unit (0.3 fraction -> '30 %',
    360000 USD -> '36만 USD'; data/economics/defaults.csv units)."""
    if unit.startswith("fraction"):
        return fmt.pct(value)
    key = UNITS.get(unit)
    word = t(f"econ.unit.{key}") if key and key != "none" else ""
    return f"{fmt.readable(float(value))} {word}".strip()


def tornado_figure(table: pd.DataFrame, units: Mapping[str, str] | None = None) -> go.Figure:
    """Return a tornado chart of a :func:`labkit.economics.sensitivity` table (억 tokens).

    ``units``: each parameter's unit as data/economics/defaults.csv writes it (the hover shows
    the value with it); without one, the value alone."""
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
                # the parameter's value in people's numbers and its unit (320만 USD, not
                # 3.2e+06: issue 25), and the break-even it gives in tokens (a short bar's
                # label is blank: the hover still says it)
                "customdata": [[_value_text(float(v), (units or {}).get(p, "")),
                                t("econ.tornado.hover_result", n="∞" if math.isinf(r)
                                  else _eok(r))]
                               for v, p, r in zip(values, rows["parameter"], rows[column],
                                                  strict=True)],
                "hovertemplate": "%{y}: %{customdata[0]} → %{customdata[1]}<extra></extra>"}

    x0 = base / EOK
    ends = [min(v, cap) / EOK for v in (*rows["result_low"], *rows["result_high"], base)]
    # room on both sides for the value labels outside the bars: a label at the longest bar's
    # end would otherwise sit on the parameter names (left) or past the plot (right)
    pad = max(max(ends) - min(ends), 0.02 * x0, 1e-9) * LABEL_ROOM
    return econ_figure(
        [bars("result_low", True), bars("result_high", False)],
        title=t("econ.tornado.chart_title"), barmode="overlay", height=520,
        xaxis={"title": {"text": t("econ.axis.tokens")},
               "range": [min(ends) - pad, max(ends) + pad]},
        margin={"l": 200, "r": 60, "t": 50, "b": 50}, legend={"orientation": "h", "y": -0.15},
        shapes=[{"type": "line", "x0": x0, "x1": x0, "xref": "x", "y0": 0, "y1": 1,
                 "yref": "y domain", "line": {"color": "black", "width": 1}}])


def tornado_app(curves: CostCurvesApp | None = None,
                defaults: Defaults | None = None) -> TornadoApp:
    """Return the tornado app for the scenario ``curves`` shows now."""
    return TornadoApp(curves if curves is not None else cost_curves_app(defaults=defaults),
                      defaults or lesson_defaults())
