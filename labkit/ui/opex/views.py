"""Panels that follow the room: cost, unit costs, sensitivity, class hours only."""

from __future__ import annotations

import html

import ipywidgets as widgets
import pandas as pd

from labkit import opex
from labkit.i18n import t
from labkit.ui import format as fmt
from labkit.ui import plotting
from labkit.ui.components import FigureOutput, guard
from labkit.ui.opex.common import COLORS, _html_table, _won
from labkit.ui.opex.figures import bars_figure, cost_figure
from labkit.ui.opex.room import RoomApp

# --- views that follow the room --------------------------------------------------------------

class _Follower(widgets.VBox):
    """A panel that re-renders whenever the room app has a new good result."""

    css = "lk-follower"

    def __init__(self, room: RoomApp) -> None:
        super().__init__()
        self.room = room
        self.add_class(self.css)
        room.on_result.append(self.render)

    def render(self, result: opex.OpexResult) -> None:
        raise NotImplementedError


class CostView(_Follower):
    """Annual opex and TCO, line by line (see :func:`cost_view`)."""

    css = "lk-cost"

    def __init__(self, room: RoomApp) -> None:
        super().__init__(room)
        self.summary = widgets.HTML()
        self.summary.add_class("lk-cost-summary")
        self.chart = FigureOutput("lk-cost-chart")
        self.children = [self.summary, self.chart]
        if room.result is not None:
            self.render(room.result)

    def render(self, result: opex.OpexResult) -> None:
        b = result.breakdown
        self.summary.value = "<br>".join([
            "<b>" + t("opex.cost.opex", krw=fmt.krw(result.opex_krw)) + "</b>",
            "<b>" + t("opex.cost.tco", krw=fmt.krw(result.tco_krw)) + "</b>",
            t("opex.cost.lifetime", years=f"{result.design.depreciation_years:g}",
              krw=fmt.krw(result.tco_krw * result.design.depreciation_years)),
            t("opex.cost.electricity_share", pct=fmt.pct(b.electricity_krw / b.total_krw)),
        ])
        self.chart.show(cost_figure(result))


def cost_view(room: RoomApp) -> CostView:
    """Return the annual opex/TCO panel, following ``room``.

    Used in: notebooks/07_opex_lab.ipynb
    """
    return CostView(room)


class UnitCostsView(_Follower):
    """Per-hour and per-token costs against renting and an API (see :func:`unit_costs_view`)."""

    css = "lk-unit"

    def __init__(self, room: RoomApp) -> None:
        super().__init__(room)
        self.summary = widgets.HTML()
        self.summary.add_class("lk-unit-summary")
        self.hours_chart = FigureOutput("lk-unit-hours-chart")
        self.year_chart = FigureOutput("lk-unit-year-chart")
        self.children = [self.summary, widgets.HBox([self.hours_chart, self.year_chart])]
        if room.result is not None:
            self.render(room.result)

    def render(self, result: opex.OpexResult) -> None:
        total_idle, _ = result.idle_costs()
        self.summary.value = "<br>".join([
            t("opex.unit.calendar", krw=_won(result.cost_per_calendar_gpu_h)),
            "<b>" + t("opex.unit.used", krw=_won(result.cost_per_used_gpu_h),
                      pct=fmt.pct(result.mean_utilization)) + "</b>",
            t("opex.unit.student", n=result.design.students,
              krw=_won(result.cost_per_student_h)),
            t("opex.unit.tokens", krw=_won(result.cost_per_m_tokens),
              derate=fmt.pct(result.design.derate, 0)),
            "<b>" + t("opex.unit.idle", pct=fmt.pct(result.idle_share),
                      krw=fmt.krw(total_idle),
                      elec=fmt.pct(result.idle_share_electricity)) + "</b>",
        ])
        d = result.design
        bars = [(t("opex.unit.bar_calendar"), result.cost_per_calendar_gpu_h, COLORS["idle"]),
                (t("opex.unit.bar_used"), result.cost_per_used_gpu_h, COLORS["used"]),
                (t("opex.unit.bar_rent"), d.rent_krw_per_gpu_hour, COLORS["rent"])]
        hours = bars_figure(bars, [f"{b[1]:,.0f}원" for b in bars], t("opex.unit.hours_title"),
                            t("opex.unit.krw_h"))
        bars = [(t("opex.unit.bar_own"), result.tco_krw / 1e4, COLORS["base"]),
                (t("opex.unit.bar_rent_year"), result.rent_same_work_krw / 1e4, COLORS["rent"]),
                (t("opex.unit.bar_api"), result.api_same_work_krw / 1e4, COLORS["api"])]
        year = bars_figure(bars, [fmt.krw(b[1] * 1e4) for b in bars], t("opex.unit.year_title"),
                           t("opex.unit.krw_year"))
        self.hours_chart.show(hours)
        self.year_chart.show(year)


def unit_costs_view(room: RoomApp) -> UnitCostsView:
    """Return the per-hour / per-token panel, following ``room``.

    Used in: notebooks/07_opex_lab.ipynb
    """
    return UnitCostsView(room)


_SWING_FORMAT = {"pue": "{:g}", "capex_scale": "×{:.2f}", "depreciation_years": "{:g}년",
                 "staff_fte": "{:g} FTE"}


def _swing_label(key: str, low: float, high: float) -> str:
    pattern = _SWING_FORMAT.get(key)
    if key == "facility_upgrade_krw":  # 0원↔1억 원, not 100,000,000원 (the trial)
        lo, hi = fmt.krw(low).replace(" 원", "원"), fmt.krw(high).replace(" 원", "원")
    elif pattern is None:  # fractions
        lo, hi = f"{low * 100:.0f}%", f"{high * 100:.0f}%"
    else:
        lo, hi = pattern.format(low), pattern.format(high)
    return f"{t(f'opex.swing.{key}')} ({lo}↔{hi})"


class SensitivityApp(_Follower):
    """Which input moves the yearly cost most (see :func:`sensitivity_app`)."""

    css = "lk-sens"
    METRICS = ("tco", "used_gpu_h")

    def __init__(self, room: RoomApp) -> None:
        super().__init__(room)
        self.metric = widgets.Dropdown(
            options=[(t(f"opex.sens.metric.{m}"), m) for m in self.METRICS], value="tco",
            description=t("opex.sens.metric"), style={"description_width": "initial"})
        self.metric.add_class("lk-sens-metric")
        self.metric.observe(lambda _c: self._refresh(), names="value")
        self.status = widgets.HTML()
        self.status.add_class("lk-sens-status")
        self.chart = FigureOutput("lk-sens-chart")
        self.table: pd.DataFrame | None = None
        self.children = [widgets.HBox([self.metric, guard(self.metric, "sens-metric")],
                                      layout=widgets.Layout(align_items="center")),
                         self.status, self.chart]
        self._refresh()

    def _refresh(self) -> None:
        if self.room.result is not None:
            self.render(self.room.result)

    def render(self, result: opex.OpexResult) -> None:
        metric = self.metric.value
        if metric not in self.METRICS:  # a browser can send any value
            message = t("error.choice", value=html.escape(str(metric)))
            self.status.value = f'<span style="color:#b00020">⚠ {message}</span>'
            return
        self.status.value = ""
        design, tariff_, calendar, usage = self.room.current

        def measure(r: opex.OpexResult) -> float:
            return r.tco_krw if metric == "tco" else r.cost_per_used_gpu_h

        table = opex.sensitivity(design, tariff_, calendar, usage, metric=measure, base=result)
        self.table = table
        rows = table.iloc[::-1]  # largest at the top
        labels = [_swing_label(k, lo, hi) for k, lo, hi in
                  zip(rows["key"], rows["low"], rows["high"], strict=True)]
        base = float(table["base_krw"].iloc[0])
        unit = t("opex.sens.unit_tco") if metric == "tco" else t("opex.sens.unit_h")
        # a year's cost in 만/억; a per-hour cost in whole won, as §4 shows it (11,131 원, not
        # "1만 원": the trial)
        money = fmt.krw if metric == "tco" else _won
        fig = plotting.figure(
            [{"type": "bar", "y": labels, "x": (rows[col] - base).to_list(), "orientation": "h",
              "name": name, "marker": {"color": color},
              # the change in 만/억 (+2,800만 원), not d3 digits (+28,000,000원: issue 25)
              "customdata": [("+" if v > 0 else "") + money(v) for v in rows[col] - base],
              "hovertemplate": "%{y}: %{customdata}<extra></extra>"}
             for col, name, color in (("low_krw", t("opex.sens.low"), "#7fb069"),
                                      ("high_krw", t("opex.sens.high"), "#d1495b"))],
            title=t("opex.sens.title", base=money(base), unit=unit), barmode="overlay",
            height=420, margin={"l": 250, "r": 30, "t": 50, "b": 50},
            legend={"orientation": "h", "y": -0.15},
            xaxis={**plotting.won_axis([*(rows["low_krw"] - base), *(rows["high_krw"] - base)],
                                       t("opex.sens.axis"), signed=True),
                   "zeroline": True, "zerolinecolor": "#333"})
        self.chart.show(fig)


def sensitivity_app(room: RoomApp) -> SensitivityApp:
    """Return the sensitivity (tornado) chart, following ``room``.

    Used in: notebooks/07_opex_lab.ipynb
    """
    return SensitivityApp(room)


class ClassHoursView(_Follower):
    """The room's plan against "only in class hours" (see :func:`class_hours_view`)."""

    css = "lk-classhours"

    def __init__(self, room: RoomApp) -> None:
        super().__init__(room)
        self.table = widgets.HTML()
        self.table.add_class("lk-classhours-table")
        self.chart = FigureOutput("lk-classhours-chart")
        self.scenario: opex.OpexResult | None = None
        #: The monthly bars last drawn: a change that leaves them as they were (a PUE step moves
        #: the money rows, not the hours) redraws nothing in the browser.
        self._drawn: list[dict[str, object]] | None = None
        self.children = [self.table, self.chart]
        if room.result is not None:
            self.render(room.result)

    def render(self, result: opex.OpexResult) -> None:
        design, tariff_, calendar, _ = self.room.current
        other = opex.class_hours_scenario(design, tariff_, calendar)
        self.scenario = other
        rows = [
            (t("opex.ch.utilization"), fmt.pct(result.mean_utilization),
             fmt.pct(other.mean_utilization)),
            (t("opex.ch.electricity"), fmt.krw(result.electricity_krw),
             fmt.krw(other.electricity_krw)),
            (t("opex.ch.tco"), fmt.krw(result.tco_krw), fmt.krw(other.tco_krw)),
            (t("opex.ch.used"), _won(result.cost_per_used_gpu_h),
             _won(other.cost_per_used_gpu_h)),
            (t("opex.ch.student"), _won(result.cost_per_student_h),
             _won(other.cost_per_student_h)),
            (t("opex.ch.idle"), fmt.pct(result.idle_share), fmt.pct(other.idle_share)),
        ]
        self.table.value = _html_table(
            [t("opex.ch.item"), t("opex.ch.plan"), t("opex.ch.class_only")], rows)
        traces: list[dict[str, object]] = []
        names = [t("opex.ch.plan"), t("opex.ch.class_only")]
        for r, name, color in zip((result, other), names, ("#3b6fb6", "#d98e04"), strict=True):
            monthly = r.utilization["util_frac"].groupby(r.utilization.index.month).mean()
            traces.append({"type": "bar", "x": [f"{m}월" for m in monthly.index],
                           "y": (monthly * 100).to_list(), "name": name,
                           "marker": {"color": color}})
        if traces == self._drawn:
            return
        self._drawn = traces
        fig = plotting.figure(traces, title=t("opex.ch.chart_title"), height=320,
                              barmode="group", legend={"orientation": "h", "y": -0.2},
                              yaxis={"title": {"text": t("opex.ch.axis")}, "ticksuffix": "",
                                     "range": [0, 100]})
        self.chart.show(fig)


def class_hours_view(room: RoomApp) -> ClassHoursView:
    """Return the class-hours-only comparison, following ``room``.

    Used in: notebooks/07_opex_lab.ipynb
    """
    return ClassHoursView(room)
