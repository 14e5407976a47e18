"""Widgets for lesson 03, "Goodput 계산": the ledger, its hardware equivalent, stragglers.

Builders (each returns a widget; the notebook only calls them):

- :func:`worksheet_app` — the editable ledger, goodput shown large, a waterfall from reserved to
  effective hours;
- :func:`comparison_app` — another cluster's goodput -> hardware factor, GPUs, money;
- :func:`straggler_app` — equivalent hours <-> step slowdown S, linked to the ledger;
- :func:`seed_numbers` — the worksheet's numbers as a table (checked by nbval);
- :func:`exercises` — 문제 with checked answers.

The numbers all come from :mod:`labkit.goodput`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

import ipywidgets as widgets
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from labkit import goodput as model
from labkit.data.goodput import WorksheetSeed, load_worksheet_seed
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

__all__ = [
    "ComparisonApp",
    "StragglerApp",
    "WorksheetApp",
    "comparison_app",
    "exercises",
    "seed_numbers",
    "straggler_app",
    "waterfall_figure",
    "worksheet_app",
]

_BIG = (
    '<div style="font-size:2.6em;font-weight:700;line-height:1.1">{big}</div>'
    '<div style="color:#555">{detail}</div>'
)


def _label(line: str) -> str:
    if line in ("reserved", "effective"):
        return t("goodput.reserved_h") if line == "reserved" else t("goodput.effective")
    key = f"goodput.loss.{line}"
    try:
        return t(key)
    except KeyError:
        return line


def waterfall_figure(ws: model.Worksheet) -> go.Figure:
    """Return the ledger as a plotly waterfall: reserved, each loss, effective hours."""
    table = ws.table()
    measure = ["absolute"] + ["relative"] * (len(table) - 2) + ["total"]
    y = table["hours"].to_list()
    y[-1] = 0.0  # a "total" bar is computed by plotly from the bars before it
    fig = styled_figure(title=t("goodput.ledger_title"), yaxis_title=t("goodput.hours_axis"),
                        showlegend=False)
    hours = table["hours"].to_list()
    # each bar's own hours in its hover, the loss beside what is left after it (the trial read
    # plotly's running total, "계획 정비 712 h", as the 8 h loss itself)
    left = list(accumulate(hours[:-1]))  # reserved, then each loss taken off
    hover = ([t("goodput.hover.reserved", h=_h(hours[0]))]
             + [t("goodput.hover.loss", h=_h(abs(h)), left=_h(rest))
                for h, rest in zip(hours[1:-1], left[1:], strict=True)]
             + [t("goodput.hover.effective", h=_h(hours[-1]))])
    fig.add_trace(go.Waterfall(
        x=[_label(line) for line in table["line"]], y=y, measure=measure,
        customdata=hover, hovertemplate="%{x}<br>%{customdata}<extra></extra>",
        text=[fmt.hours(abs(h), 1 if h != round(h) else 0) for h in table["hours"]],
        textposition="outside",
        decreasing={"marker": {"color": "#d1495b"}},
        totals={"marker": {"color": "#2e7d32"}},
        increasing={"marker": {"color": "#3b6fb6"}},
        connector={"line": {"color": "#999"}},
    ))
    # Start the axis where the story is: the losses are a few % of the reserved hours, slivers
    # on an axis from 0. The axis starts below the effective hours by half the total loss
    # (rounded down to a round number), and says so.
    lost = ws.reserved_h - ws.effective_h
    low = _round_down(ws.effective_h - max(lost, 0.02 * ws.reserved_h) * 0.5)
    top = ws.reserved_h + max(lost, 0.02 * ws.reserved_h) * 0.25
    fig.update_yaxes(range=[low, top])
    if low > 0:
        fig.add_annotation(text=t("goodput.axis_from", h=fmt.hours(low)), xref="paper",
                           yref="paper", x=0, y=1.0, xanchor="left", yanchor="bottom",
                           showarrow=False, font={"size": 11, "color": "#555"})
    return fig


def _h(h: float) -> str:
    return fmt.hours(h, 1 if h != round(h) else 0)


def _round_down(h: float) -> float:
    """``h`` rounded down to 1, 2 or 5 x a power of ten of a tenth of it (0 if negative)."""
    if h <= 0:
        return 0.0
    step = 10 ** math.floor(math.log10(h / 10)) if h >= 10 else 1.0
    for k in (5, 2, 1):
        if step * k <= h / 10:
            step *= k
            break
    return math.floor(h / step) * step


class WorksheetApp(LiveApp[model.Worksheet]):
    """The editable ledger (see :func:`worksheet_app`)."""

    def __init__(self, seed: WorksheetSeed) -> None:
        ws = seed.worksheet
        fields = [number_field("reserved_h", t("goodput.reserved_h"), ws.reserved_h, unit="h")]
        fields += [number_field(name, t(f"goodput.loss.{name}"), hours, unit="h")
                   for name, hours in ws.losses.items()]
        super().__init__("worksheet", fields, error_prefix="goodput")
        self.loss_keys = list(ws.losses)
        self.big = widgets.HTML()
        self.big.add_class("lk-goodput-value")
        self.chart = FigureOutput("lk-waterfall")
        reset = widgets.Button(description=t("common.reset"), icon="undo")
        reset.on_click(self.reset)
        inputs = widgets.VBox([f.box for f in self.fields.values()] + [reset])
        self.children = [widgets.HBox([inputs, self.big]), self.status, self.chart]
        #: What a prediction about the goodput hides until it is confirmed (issue 25).
        self.revealing = [self.big, self.chart]
        self.update()

    def compute(self, values: dict[str, Any]) -> model.Worksheet:
        return model.Worksheet(values["reserved_h"], {k: values[k] for k in self.loss_keys})

    def render(self, result: model.Worksheet) -> None:
        self.big.value = _BIG.format(
            big=t("goodput.big", pct=fmt.pct(result.goodput)),
            detail=t("goodput.big_detail", effective=fmt.hours(result.effective_h, 1),
                     reserved=fmt.hours(result.reserved_h, 1)),
        )
        self.chart.show(waterfall_figure(result))


def worksheet_app(seed: WorksheetSeed | None = None) -> WorksheetApp:
    """Return the ledger app, filled with the course worksheet (``data/goodput/worksheet.yaml``)."""
    return WorksheetApp(seed or load_worksheet_seed())


class ComparisonApp(LiveApp[model.HardwareEquivalent]):
    """Another cluster's goodput as hardware and money (see :func:`comparison_app`)."""

    def __init__(self, seed: WorksheetSeed, ledger: WorksheetApp | None) -> None:
        self.ledger = ledger
        self.seed = seed
        fields = [
            slider_field("goodput", t("goodput.compare.other"), seed.comparison_goodput * 100,
                         min=30, max=100, step=0.5, unit="%", readout_format=".1f", scale=100),
            number_field("n_gpus", t("goodput.compare.n_gpus"), seed.cluster_gpus, unit="장"),
            number_field("gpu_price_krw", t("goodput.compare.price"), seed.gpu_price_krw,
                         unit="원", step=1_000_000, width="160px"),
        ]
        super().__init__("compare", fields, error_prefix="goodput.compare")
        self.summary = widgets.HTML()
        self.summary.add_class("lk-compare-summary")
        self.chart = FigureOutput("lk-compare-chart")
        self.children = [*(f.box for f in self.fields.values()), self.status, self.summary,
                         self.chart]
        if ledger is not None:
            ledger.on_result.append(lambda _ws: self.update())
        self.update()

    @property
    def reference(self) -> float:
        """Our goodput: the ledger's last good value, or the seed worksheet's."""
        ws = self.ledger.result if self.ledger is not None else None
        return (ws or self.seed.worksheet).goodput

    def compute(self, values: dict[str, Any]) -> model.HardwareEquivalent:
        return model.hardware_equivalent(values["n_gpus"], values["goodput"], self.reference,
                                         values["gpu_price_krw"])

    def render(self, result: model.HardwareEquivalent) -> None:
        other = self.fields["goodput"].value
        cost = shown_extra_cost_krw(result)
        more = result.factor - 1
        needed = fmt.count(result.gpus_needed)
        if more >= 0:
            lines = [t("goodput.compare.factor", factor=fmt.ratio(result.factor), sign="+",
                       pct=fmt.pct(more)),
                     t("goodput.compare.gpus", needed=needed,
                       extra=fmt.count(result.extra_gpus)),
                     t("goodput.compare.money", money=fmt.krw(cost))]
        else:  # the other cluster does better than ours: fewer GPUs, money saved, no "추가 -"
            lines = [t("goodput.compare.factor_less", factor=fmt.ratio(result.factor),
                       pct=fmt.pct(-more)),
                     t("goodput.compare.gpus_fewer", needed=needed,
                       fewer=fmt.count(-result.extra_gpus)),
                     t("goodput.compare.money_saved", money=fmt.krw(-cost))]
        self.summary.value = "<br>".join([
            t("goodput.compare.reference", pct=fmt.pct(self.reference)),
            f"<b>{lines[0]}</b>", *lines[1:]])
        self.chart.show(gpus_curve(result, self.reference, other, self.fields["goodput"]))



def gpus_curve(result: model.HardwareEquivalent, reference: float, other: float,
               field: Field) -> go.Figure:
    """Return GPUs needed for our effective GPU-hours vs the other cluster's goodput: the curve
    n x reference / goodput over the slider's range, our cluster and the chosen one marked.

    The curve is 1/goodput scaled: halving goodput doubles the hardware.
    """
    n = result.gpus_needed - result.extra_gpus
    low = max(float(field.control.min) / field.scale, 0.01)
    high = float(field.control.max) / field.scale
    g = np.linspace(low, high, 141)
    fig = styled_figure(title=t("goodput.compare.chart_title"),
                        xaxis_title=t("goodput.compare.x"),
                        yaxis_title=t("goodput.compare.gpus_axis"), height=340)
    fig.add_trace(go.Scatter(x=100 * g, y=n * reference / g, mode="lines",
                             name=t("goodput.compare.curve"), line={"color": "#3b6fb6"},
                             hovertemplate=f"{t('goodput.compare.hover_theirs')} %{{x:.1f}} % → "
                                           f"{t('goodput.compare.hover_need')} %{{y:,.0f}}"
                                           f"{t('goodput.compare.gpu_unit')}<extra></extra>"))
    for name, x, y, color in ((t("goodput.compare.ours", pct=fmt.pct(reference)), reference, n,
                               "#3b6fb6"),
                              (t("goodput.compare.theirs", pct=fmt.pct(other)), other,
                               result.gpus_needed, "#d1495b")):
        fig.add_trace(go.Scatter(x=[100 * x], y=[y], mode="markers+text", name=name,
                                 text=[t("goodput.compare.point", n=fmt.count(y))],
                                 textposition="top right", marker={"size": 12, "color": color},
                                 hovertemplate=f"{name}: GPU %{{y:,.0f}}"
                                               f"{t('goodput.compare.gpu_unit')}<extra></extra>"))
    fig.update_xaxes(ticksuffix=" %")
    fig.update_yaxes(tickformat=",d")  # GPUs: 12,000, not plotly's 12k
    return fig


def comparison_app(ledger: WorksheetApp | None = None,
                   seed: WorksheetSeed | None = None) -> ComparisonApp:
    """Return the comparison app; linked to ``ledger`` (our goodput follows it) when given."""
    return ComparisonApp(seed or load_worksheet_seed(), ledger)


@dataclass(frozen=True)
class StragglerView:
    """What the straggler app shows: S, the stepping hours and the equivalent hours."""

    slowdown: float
    stepping_h: float
    equivalent_h: float


class StragglerApp(LiveApp[StragglerView]):
    """Step slowdown S <-> equivalent hours, two-way linked to the ledger's straggler line."""

    def __init__(self, ledger: WorksheetApp) -> None:
        self.ledger = ledger
        self._syncing = False
        fields = [slider_field("slowdown", t("goodput.straggler.slowdown"), 1.0, min=1.0,
                               max=1.5, step=0.001, readout_format=".3f")]
        super().__init__("straggler", fields, error_prefix="goodput.straggler")
        self.summary = widgets.HTML()
        self.summary.add_class("lk-straggler-summary")
        self.chart = FigureOutput("lk-straggler-chart")
        self.children = [self.fields["slowdown"].box, self.status, self.summary, self.chart]
        ledger.on_result.append(self._from_ledger)
        if ledger.result is not None:
            self._from_ledger(ledger.result)
        self.fields["slowdown"].default = self.fields["slowdown"].control.value

    def _stepping_h(self) -> float:
        ws = self.ledger.result
        if ws is None:
            raise ValueError("the ledger has no valid result yet")
        return ws.stepping_h

    def compute(self, values: dict[str, Any]) -> StragglerView:
        stepping = self._stepping_h()
        return StragglerView(values["slowdown"], stepping,
                             model.straggler_equivalent_h(values["slowdown"], stepping))

    def render(self, result: StragglerView) -> None:
        self.summary.value = "<br>".join([
            t("goodput.straggler.stepping", stepping=fmt.hours(result.stepping_h, 1)),
            "<b>" + t("goodput.straggler.result", s=fmt.ratio(result.slowdown),
                      pct=fmt.pct(result.slowdown - 1)) + "</b>",
            f"{t('goodput.loss.straggler')}: {fmt.hours(result.equivalent_h, 1)}",
        ])
        s_max = max(1.5, result.slowdown * 1.1)
        s = np.linspace(1.0, s_max, 121)
        fig = styled_figure(title=t("goodput.straggler.chart_title"),
                            xaxis_title=t("goodput.straggler.x"),
                            yaxis_title=t("goodput.hours_axis"), height=320)
        fig.add_trace(go.Scatter(x=s, y=result.stepping_h * (1 - 1 / s), mode="lines",
                                 name=t("goodput.straggler.curve")))
        fig.add_trace(go.Scatter(x=[result.slowdown], y=[result.equivalent_h], mode="markers",
                                 marker={"size": 12, "color": "#d1495b"},
                                 name=t("goodput.straggler.point")))
        self.chart.show(fig)
        if not self._syncing:  # the student moved S: write the hours into the ledger
            self._syncing = True
            try:
                self.ledger.fields["straggler"].control.value = round(result.equivalent_h, 3)
            finally:
                self._syncing = False

    def _from_ledger(self, ws: model.Worksheet) -> None:
        if self._syncing:
            return
        try:
            s = model.straggler_slowdown(ws.losses.get(model.Loss.STRAGGLER, 0.0), ws.stepping_h)
        except ValueError:
            return  # no finite S (nothing effective left); the ledger already shows why
        self._syncing = True
        try:
            control = self.fields["slowdown"].control
            control.max = max(control.max, math.ceil(s * 10) / 10)
            if control.value == round(s, 3):
                self.update()
            else:
                control.value = round(s, 3)  # triggers update -> render (no write-back)
        finally:
            self._syncing = False


def straggler_app(ledger: WorksheetApp | None = None) -> StragglerApp:
    """Return the straggler app, linked to ``ledger`` (a fresh seed ledger when omitted)."""
    return StragglerApp(ledger if ledger is not None else worksheet_app())


def shown_extra_cost_krw(eq: model.HardwareEquivalent) -> float:
    """The price of the extra GPUs as the page counts them, whole (1,105, not 1,105.27).

    The model's ``extra_cost_krw`` prices the fractional count (4,096 x 1.2698 - 4,096 =
    1,105.27 GPUs); the page shows "+1,105" beside it, and a student multiplying the shown
    count by the price got another sum (issue 25). A school buys whole GPUs. [KRW]
    """
    whole = round(eq.extra_gpus)
    return 0.0 if eq.extra_gpus == 0 else eq.extra_cost_krw / eq.extra_gpus * whole


def seed_numbers(seed: WorksheetSeed | None = None) -> fmt.Table:
    """Return the worksheet's key numbers as a small Korean table (deterministic text).

    Rows: effective hours, goodput, hardware factor vs the comparison goodput, GPUs needed, and
    the straggler slowdown S — the values of the course worksheet (check case 1).
    """
    seed = seed or load_worksheet_seed()
    ws = seed.worksheet
    eq = model.hardware_equivalent(seed.cluster_gpus, seed.comparison_goodput, ws.goodput,
                                   seed.gpu_price_krw)
    s = model.straggler_slowdown(ws.losses.get(model.Loss.STRAGGLER, 0.0), ws.stepping_h)
    rows = [
        (t("goodput.effective"), fmt.hours(ws.effective_h)),
        (t("goodput.seed.goodput"), f"{fmt.number(ws.goodput)} ({fmt.pct(ws.goodput)})"),
        (t("goodput.compare.other"), fmt.pct(seed.comparison_goodput)),
        (t("goodput.seed.factor"), fmt.ratio(eq.factor)),
        (t("goodput.seed.gpus"),
         f"{fmt.count(eq.gpus_needed)} (+{fmt.count(eq.extra_gpus)})"),
        (t("goodput.seed.cost"), fmt.krw(shown_extra_cost_krw(eq))),
        (t("goodput.straggler.slowdown"), fmt.ratio(s)),
    ]
    column = t("goodput.seed.col_line")
    return fmt.people_table(
        pd.DataFrame(rows, columns=[column, t("goodput.seed.col_value")]).set_index(column))


def exercises() -> widgets.VBox:
    """Return the lesson's three exercises; answers come from :mod:`labkit.goodput`."""
    return exercise_set([
        Exercise("goodput.ex1", model.Worksheet(720, {"all": 100}).goodput * 100, 0.051, "%"),
        Exercise("goodput.ex2", model.hardware_factor(0.80, 0.90), 0.0006, "배"),
        Exercise("goodput.ex3", model.straggler_equivalent_h(1.25, 500), 0.5, "h"),
    ])
