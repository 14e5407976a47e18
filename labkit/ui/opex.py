"""Widgets for lesson 07, "실습 — 우리 학교 미니 AI데이터센터 운영비 모델링".

Builders (each returns a widget; the notebook only calls them):

- :func:`room_app` — design the room (servers, PUE, contract power, KEPCO class, people and
  money, the usage plan, the school calendar) and see the 12 monthly bills stacked;
- :func:`cost_view` — annual opex and TCO, line by line (follows the room);
- :func:`unit_costs_view` — cost per calendar vs used GPU-hour, per student-hour (MIG), per 1M
  tokens, against renting and an API; the share paid for idle time (follows the room);
- :func:`sensitivity_app` — which input moves the yearly cost most (a tornado chart);
- :func:`class_hours_view` — "what if we only run in class hours" (~17 % utilization);
- :func:`export_panel` — the scenario as CSV and a one-page Korean HTML summary for the
  administration, written to a per-session temporary folder and offered as downloads;
- :func:`key_numbers` — the check case and the default room as a table (checked by nbval);
- :func:`exercises` — 문제 with answers computed by the models.

The numbers all come from :mod:`labkit.opex` (with :mod:`labkit.tariff`,
:mod:`labkit.loadprofile` and :mod:`labkit.economics`).
"""

from __future__ import annotations

import base64
import csv
import functools
import html
import io
import math
import tempfile
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go

from labkit import loadprofile, opex, tariff
from labkit.data.opex import OpexDefault, load_opex_defaults, load_servers
from labkit.data.school import load_school_calendar
from labkit.data.tariff import load_tariff, tariff_classes
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
from labkit.validate import InputError, one_of

__all__ = [
    "DEFAULT_CLASS",
    "ClassHoursView",
    "CostView",
    "ExportPanel",
    "RoomApp",
    "SensitivityApp",
    "UnitCostsView",
    "bills_figure",
    "class_hours_view",
    "cost_view",
    "csv_text",
    "exercises",
    "export_panel",
    "key_numbers",
    "room_app",
    "sensitivity_app",
    "summary_html",
    "unit_costs_view",
]

DEFAULT_CLASS = "교육용(갑) 고압A 선택I"
COLORS = {"base": "#3b6fb6", "energy": "#f2a541", "adders": "#7fb069", "taxes": "#b56576",
          "idle": "#bbbbbb", "used": "#2e7d32", "rent": "#8e7dbe", "api": "#d1495b"}
MAX_TEXT = 4_000  # characters accepted from a calendar text box (a browser can send any)


# --- cached inputs (data files are read once per kernel) ---------------------------------------

@functools.cache
def _defaults() -> dict[str, OpexDefault]:
    return dict(load_opex_defaults())


@functools.cache
def _servers_usd() -> dict[str, opex.ServerSpec]:
    """Server types with prices in USD (fx = 1); the app converts at the chosen rate."""
    return load_servers(1.0)


@functools.cache
def _tariff(class_name: str) -> tariff.Tariff:
    return load_tariff(class_name)


@functools.cache
def _classes() -> tuple[str, ...]:
    return tuple(tariff_classes())


@functools.cache
def _calendar() -> loadprofile.SchoolCalendar:
    return load_school_calendar()


def _won(amount: float) -> str:
    """Exact won for per-hour and per-token figures (fmt.krw rounds to 만)."""
    return "n/a" if not math.isfinite(amount) else f"{amount:,.0f} 원"


def _d(key: str) -> float:
    return _defaults()[key].value


def _periods_text(periods: Any) -> str:
    lines = []
    for p in periods:
        if isinstance(p, loadprofile.ClosedDay):
            lines.append(f"{p.day.isoformat()} {p.name}")
        else:
            lines.append(f"{p.start.isoformat()} ~ {p.end.isoformat()} {p.name}")
    return "\n".join(lines)


def default_usage() -> loadprofile.Usage:
    """Return the lesson's default usage plan (``data/opex/defaults.csv``)."""
    return loadprofile.Usage(
        class_frac=_d("class_frac"), exam_frac=_d("exam_frac"),
        after_school_frac=_d("after_school_frac"), after_school_end_h=_d("after_school_end_h"),
        vacation_frac=_d("vacation_frac"), always_on_frac=_d("always_on_frac"))


def default_design(server_name: str | None = None, fx: float | None = None) -> opex.RoomDesign:
    """Return the lesson's default room (one 8×H100 server unless named), priced at ``fx``."""
    rate = fx if fx is not None else _d("fx_krw_per_usd")
    usd = _servers_usd()[server_name or next(iter(_servers_usd()))]
    server = replace(usd, server_capex_krw=usd.server_capex_krw * rate)
    return opex.RoomDesign(
        server, n_servers=int(_d("n_servers")), pue=_d("pue"), idle_frac=_d("idle_frac"),
        staff_fte=_d("staff_fte"), staff_krw_per_fte_year=_d("staff_krw_per_fte_year"),
        maintenance_frac=_d("maintenance_frac"), facility_upgrade_krw=_d("facility_upgrade_krw"),
        facility_years=_d("facility_years"), depreciation_years=_d("depreciation_years"),
        cost_of_capital=_d("cost_of_capital"), derate=_d("derate"),
        rent_krw_per_gpu_hour=_d("rent_usd_per_gpu_hour") * rate,
        api_krw_per_m_tokens=_d("api_usd_per_m_tokens") * rate)


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
    fig = styled_figure(title=t("opex.bill.title", cls=result.tariff_class),
                        yaxis_title=t("opex.bill.axis"), barmode="stack", height=380,
                        margin={"l": 90, "r": 20, "t": 50, "b": 50},
                        legend={"orientation": "h", "y": -0.15, "traceorder": "normal"})
    for key, name, values in parts:
        fig.add_trace(go.Bar(x=months, y=values.to_list(), name=name,
                             marker={"color": COLORS[key]},
                             hovertemplate="%{x} " + name + ": %{y:,.0f}원<extra></extra>"))
    fig.add_trace(go.Scatter(
        x=months, y=bills["total_krw"].to_list(), mode="text", showlegend=False,
        text=[f"{v / 10_000:,.0f}만" for v in bills["total_krw"]], textposition="top center",
        hoverinfo="skip"))
    fig.update_yaxes(range=[0, float(bills["total_krw"].max()) * 1.18], tickformat=",.0f")
    return fig


def _cost_figure(result: opex.OpexResult) -> go.Figure:
    lines = result.breakdown.as_dict()
    labels = [t(f"opex.line.{k}") for k in lines]
    fig = styled_figure(title=t("opex.cost.title"), xaxis_title=t("opex.cost.axis"),
                        height=320, showlegend=False, margin={"l": 130, "r": 30, "t": 50,
                                                              "b": 50})
    fig.add_trace(go.Bar(
        y=labels, x=list(lines.values()), orientation="h",
        text=[fmt.krw(v) for v in lines.values()], textposition="auto",
        marker={"color": ["#3b6fb6", "#f2a541", "#f6c177", "#7fb069", "#b56576", "#8e7dbe"]}))
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(tickformat=",.0f")
    return fig


# --- the room ------------------------------------------------------------------------------------

def _slider(key: str, label: str, *, unit: str = "", pct: bool = False,
            fmt_: str = ".2f") -> Field:
    d = _defaults()[key]
    scale = 100.0 if pct else 1.0
    return slider_field(key, label, d.value * scale, min=d.low * scale, max=d.high * scale,
                        step=d.step * scale, unit="%" if pct else unit,
                        readout_format=".0f" if pct else fmt_, scale=scale)


def _number(key: str, label: str, *, unit: str = "", step: float | None = None,
            width: str = "130px") -> Field:
    d = _defaults()[key]
    return number_field(key, label, d.value, unit=unit, step=step or d.step, width=width)


class RoomApp(LiveApp[opex.OpexResult]):
    """The room designer and its 12 monthly bills (see :func:`room_app`)."""

    current: tuple[opex.RoomDesign, tariff.Tariff, loadprofile.SchoolCalendar,
                   loadprofile.Usage]

    def __init__(self) -> None:
        servers = _servers_usd()
        first = next(iter(servers))
        server = widgets.Dropdown(options=list(servers), value=first,
                                  layout=widgets.Layout(width="230px"))
        price = number_field("server_price_usd", t("opex.f.server_price"),
                             servers[first].server_capex_krw, unit="USD", step=5_000,
                             width="130px")
        students = number_field("students_per_gpu", t("opex.f.students"),
                                servers[first].mig_instances_per_gpu, unit="명", width="90px")
        # before LiveApp's own observers: a new server brings its price and MIG slices along
        server.observe(self._server_changed, names="value")
        self._price, self._students = price, students
        cls = widgets.Dropdown(options=list(_classes()), value=DEFAULT_CLASS,
                               layout=widgets.Layout(width="230px"))
        cal = _calendar()
        text = {"width": "420px", "height": "92px"}
        fields = [
            Field("server", t("opex.f.server"), server), price,
            _slider("n_servers", t("opex.f.n_servers"), unit="대", fmt_=".0f"),
            _slider("pue", t("opex.f.pue")),
            _slider("idle_frac", t("opex.f.idle"), pct=True),
            Field("contract_auto", t("opex.f.contract_auto"),
                  widgets.Checkbox(value=True, indent=False)),
            number_field("contract_kw", t("opex.f.contract_kw"), 20, unit="kW", step=1,
                         width="100px"),
            Field("tariff_class", t("opex.f.tariff_class"), cls),
            Field("school_exception", t("opex.f.school_exception"),
                  widgets.Checkbox(value=False, indent=False)),
            _slider("staff_fte", t("opex.f.staff_fte"), unit="FTE"),
            _number("staff_krw_per_fte_year", t("opex.f.salary"), unit="원", width="150px"),
            _slider("maintenance_frac", t("opex.f.maintenance"), pct=True),
            _number("facility_upgrade_krw", t("opex.f.facility"), unit="원", width="150px"),
            _number("facility_years", t("opex.f.facility_years"), unit="년", width="90px"),
            _slider("depreciation_years", t("opex.f.depreciation"), unit="년", fmt_=".1f"),
            _slider("cost_of_capital", t("opex.f.cost_of_capital"), pct=True),
            _number("fx_krw_per_usd", t("opex.f.fx"), unit="원/USD", width="100px"),
            _slider("class_frac", t("opex.f.class_frac"), pct=True),
            _slider("exam_frac", t("opex.f.exam_frac"), pct=True),
            _slider("after_school_frac", t("opex.f.after_school"), pct=True),
            _number("after_school_end_h", t("opex.f.after_school_end"), unit="시",
                    width="80px"),
            _slider("vacation_frac", t("opex.f.vacation"), pct=True),
            _slider("always_on_frac", t("opex.f.always_on"), pct=True),
            students,
            _slider("derate", t("opex.f.derate"), pct=True),
            _number("rent_usd_per_gpu_hour", t("opex.f.rent"), unit="USD/GPU-h", width="90px"),
            _number("api_usd_per_m_tokens", t("opex.f.api"), unit="USD/1M", width="90px"),
            number_field("class_start_h", t("opex.f.class_start"), cal.class_start_h,
                         unit="시", step=0.5, width="80px"),
            number_field("class_end_h", t("opex.f.class_end"), cal.class_end_h, unit="시",
                         step=0.5, width="80px"),
            Field("terms", t("opex.f.terms"), widgets.Textarea(
                _periods_text(cal.terms), layout=widgets.Layout(**text))),
            Field("exams", t("opex.f.exams"), widgets.Textarea(
                _periods_text(cal.exams), layout=widgets.Layout(**text))),
            Field("closures", t("opex.f.closures"), widgets.Textarea(
                _periods_text(cal.closures), layout=widgets.Layout(**text))),
        ]
        for f in fields:
            if isinstance(f.control, widgets.Textarea):
                f.control.continuous_update = False
        super().__init__("room", fields, error_prefix="opex")
        groups = {
            "opex.tab.room": ["server", "server_price_usd", "n_servers", "pue", "idle_frac",
                              "contract_auto", "contract_kw"],
            "opex.tab.tariff": ["tariff_class", "school_exception"],
            "opex.tab.money": ["staff_fte", "staff_krw_per_fte_year", "maintenance_frac",
                               "facility_upgrade_krw", "facility_years", "depreciation_years",
                               "cost_of_capital", "fx_krw_per_usd"],
            "opex.tab.usage": ["class_frac", "exam_frac", "after_school_frac",
                               "after_school_end_h", "vacation_frac", "always_on_frac",
                               "students_per_gpu", "derate", "rent_usd_per_gpu_hour",
                               "api_usd_per_m_tokens"],
            "opex.tab.calendar": ["class_start_h", "class_end_h", "terms", "exams", "closures"],
        }
        tabs = widgets.Tab(children=[widgets.VBox([self.fields[k].box for k in keys])
                                     for keys in groups.values()])
        for i, key in enumerate(groups):
            tabs.set_title(i, t(key))
        tabs.add_class("lk-room-tabs")
        self.tariff_note = widgets.HTML()
        self.tariff_note.add_class("lk-room-tariff-note")
        self.summary = widgets.HTML()
        self.summary.add_class("lk-room-summary")
        self.chart = FigureOutput("lk-bills-chart")
        reset = widgets.Button(description=t("common.reset"), icon="undo")
        reset.on_click(self.reset)
        self.children = [tabs, reset, self.status, self.tariff_note, self.summary, self.chart]
        self.update()

    def _server_changed(self, change: dict[str, Any]) -> None:
        spec = _servers_usd().get(change["new"])
        if spec is None:
            return  # the model names the bad value when update() runs
        self._price.control.value = spec.server_capex_krw
        self._students.control.value = spec.mig_instances_per_gpu

    def _school_calendar(self, values: dict[str, Any]) -> loadprofile.SchoolCalendar:
        texts = {}
        for key in ("terms", "exams", "closures"):
            text = str(values[key])
            if len(text) > MAX_TEXT:
                raise InputError(key, "at_most", len(text), f"{key}: text too long",
                                 limit=MAX_TEXT)
            texts[key] = loadprofile.parse_periods(key, text)
        for p in texts["closures"]:
            if (p.end - p.start).days > 366:
                raise InputError("closures", "other", p.name,
                                 f"closures: {p.name} is longer than a year")
        closures = [loadprofile.ClosedDay(p.start + timedelta(days=i), p.name)
                    for p in texts["closures"] for i in range((p.end - p.start).days + 1)]
        return replace(_calendar(), terms=texts["terms"], exams=texts["exams"],
                       closures=closures, class_start_h=values["class_start_h"],
                       class_end_h=values["class_end_h"])

    def inputs(self, values: dict[str, Any]) -> tuple[opex.RoomDesign, tariff.Tariff,
                                                      loadprofile.SchoolCalendar,
                                                      loadprofile.Usage]:
        """Turn the control values into the models' inputs (raising on bad values)."""
        servers = _servers_usd()
        name = one_of("server", values["server"], servers)
        cls = one_of("tariff_class", values["tariff_class"], _classes())
        fx = values["fx_krw_per_usd"]
        if not (isinstance(fx, (int, float)) and math.isfinite(fx) and fx > 0):
            raise InputError("fx_krw_per_usd", "positive", fx,
                             f"fx_krw_per_usd must be > 0, got {fx!r}")
        price = values["server_price_usd"]
        if not (isinstance(price, (int, float)) and math.isfinite(price) and price >= 0):
            raise InputError("server_price_usd", "non_negative", price,
                             f"server_price_usd must be >= 0, got {price!r}")
        server = replace(servers[name], server_capex_krw=price * fx)
        usage = loadprofile.Usage(
            class_frac=values["class_frac"], exam_frac=values["exam_frac"],
            after_school_frac=values["after_school_frac"],
            after_school_end_h=values["after_school_end_h"],
            vacation_frac=values["vacation_frac"], always_on_frac=values["always_on_frac"])
        design = opex.RoomDesign(
            server, n_servers=values["n_servers"], pue=values["pue"],
            idle_frac=values["idle_frac"],
            contract_kw=None if values["contract_auto"] else values["contract_kw"],
            school_exception=bool(values["school_exception"]),
            staff_fte=values["staff_fte"],
            staff_krw_per_fte_year=values["staff_krw_per_fte_year"],
            maintenance_frac=values["maintenance_frac"],
            facility_upgrade_krw=values["facility_upgrade_krw"],
            facility_years=values["facility_years"],
            depreciation_years=values["depreciation_years"],
            cost_of_capital=values["cost_of_capital"],
            students_per_gpu=values["students_per_gpu"], derate=values["derate"],
            rent_krw_per_gpu_hour=_non_negative("rent_usd_per_gpu_hour",
                                                values["rent_usd_per_gpu_hour"]) * fx,
            api_krw_per_m_tokens=_non_negative("api_usd_per_m_tokens",
                                               values["api_usd_per_m_tokens"]) * fx)
        return design, _tariff(cls), self._school_calendar(values), usage

    def compute(self, values: dict[str, Any]) -> opex.OpexResult:
        design, tariff_, calendar, usage = self.inputs(values)
        result = opex.evaluate(design, tariff_, calendar, usage)
        self.current = (design, tariff_, calendar, usage)  # the inputs of the last good result
        return result

    def render(self, result: opex.OpexResult) -> None:
        self.fields["contract_kw"].control.disabled = bool(
            self.fields["contract_auto"].control.value)
        notes = []
        if not result.tariff_verified:
            notes.append(t("opex.warn.unverified", date=_tariff(result.tariff_class)
                           .effective_date))
        over = result.bills[result.bills["over_contract"]]
        if len(over):
            notes.append(t("opex.warn.over_contract", peak=f"{over['demand_kw'].max():.1f}",
                           contract=f"{result.design.contract:g}"))
        self.tariff_note.value = "".join(
            f'<div style="padding:6px 10px;margin:4px 0;border-left:4px solid #d98e04;'
            f'background:#fff6e0">⚠ {n}</div>' for n in notes)
        self.summary.value = (
            '<div style="display:flex;gap:28px;flex-wrap:wrap;margin:6px 0">'
            + "".join(
                f'<div><div style="color:#555">{html.escape(label)}</div>'
                f'<div style="font-size:1.7em;font-weight:700">{value}</div></div>'
                for label, value in (
                    (t("opex.sum.electricity"), fmt.krw(result.electricity_krw)),
                    (t("opex.sum.kwh"), f"{result.bills['kwh'].sum():,.0f} kWh"),
                    (t("opex.sum.peak"), f"{result.bills['billing_kw'].max():.1f} kW"),
                    (t("opex.sum.utilization"), fmt.pct(result.mean_utilization)),
                ))
            + "</div>")
        self.chart.show(bills_figure(result))


def _non_negative(field: str, value: Any) -> float:
    if not (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and value >= 0):
        raise InputError(field, "non_negative", value, f"{field} must be >= 0, got {value!r}")
    return float(value)


def room_app() -> RoomApp:
    """Return the room designer with the lesson's defaults (``data/opex/defaults.csv``).

    Used in: notebooks/07_opex_lab.ipynb
    """
    return RoomApp()


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
        self.chart.show(_cost_figure(result))


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
        hours = styled_figure(title=t("opex.unit.hours_title"), yaxis_title=t("opex.unit.krw_h"),
                              height=330, width=430, showlegend=False)
        bars = [(t("opex.unit.bar_calendar"), result.cost_per_calendar_gpu_h, COLORS["idle"]),
                (t("opex.unit.bar_used"), result.cost_per_used_gpu_h, COLORS["used"]),
                (t("opex.unit.bar_rent"), d.rent_krw_per_gpu_hour, COLORS["rent"])]
        hours.add_trace(go.Bar(x=[b[0] for b in bars], y=[b[1] for b in bars],
                               marker={"color": [b[2] for b in bars]},
                               text=[f"{b[1]:,.0f}원" for b in bars], textposition="outside"))
        hours.update_yaxes(range=[0, max(b[1] for b in bars) * 1.2], tickformat=",.0f")
        year = styled_figure(title=t("opex.unit.year_title"), yaxis_title=t("opex.unit.krw_year"),
                             height=330, width=430, showlegend=False)
        bars = [(t("opex.unit.bar_own"), result.tco_krw / 1e4, COLORS["base"]),
                (t("opex.unit.bar_rent_year"), result.rent_same_work_krw / 1e4, COLORS["rent"]),
                (t("opex.unit.bar_api"), result.api_same_work_krw / 1e4, COLORS["api"])]
        year.add_trace(go.Bar(x=[b[0] for b in bars], y=[b[1] for b in bars],
                              marker={"color": [b[2] for b in bars]},
                              text=[fmt.krw(b[1] * 1e4) for b in bars], textposition="outside"))
        year.update_yaxes(range=[0, max(b[1] for b in bars) * 1.2], tickformat=",.0f")
        self.hours_chart.show(hours)
        self.year_chart.show(year)


def unit_costs_view(room: RoomApp) -> UnitCostsView:
    """Return the per-hour / per-token panel, following ``room``.

    Used in: notebooks/07_opex_lab.ipynb
    """
    return UnitCostsView(room)


_SWING_FORMAT = {"pue": "{:g}", "capex_scale": "×{:.2f}", "depreciation_years": "{:g}년",
                 "facility_upgrade_krw": "{:,.0f}원", "staff_fte": "{:g} FTE"}


def _swing_label(key: str, low: float, high: float) -> str:
    pattern = _SWING_FORMAT.get(key)
    if pattern is None:  # fractions
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
        self.children = [self.metric, self.status, self.chart]
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

        table = opex.sensitivity(design, tariff_, calendar, usage, metric=measure)
        self.table = table
        rows = table.iloc[::-1]  # largest at the top
        labels = [_swing_label(k, lo, hi) for k, lo, hi in
                  zip(rows["key"], rows["low"], rows["high"], strict=True)]
        base = float(table["base_krw"].iloc[0])
        unit = t("opex.sens.unit_tco") if metric == "tco" else t("opex.sens.unit_h")
        fig = styled_figure(title=t("opex.sens.title", base=fmt.krw(base), unit=unit),
                            xaxis_title=t("opex.sens.axis"), barmode="overlay", height=420,
                            margin={"l": 250, "r": 30, "t": 50, "b": 50},
                            legend={"orientation": "h", "y": -0.15})
        for col, name, color in (("low_krw", t("opex.sens.low"), "#7fb069"),
                                 ("high_krw", t("opex.sens.high"), "#d1495b")):
            delta = (rows[col] - base).to_list()
            fig.add_trace(go.Bar(y=labels, x=delta, orientation="h", name=name,
                                 marker={"color": color},
                                 hovertemplate="%{y}: %{x:+,.0f}원<extra></extra>"))
        fig.update_xaxes(tickformat="+,.0f", zeroline=True, zerolinecolor="#333")
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
        fig = styled_figure(title=t("opex.ch.chart_title"), yaxis_title=t("opex.ch.axis"),
                            height=320, barmode="group",
                            legend={"orientation": "h", "y": -0.2})
        names = [t("opex.ch.plan"), t("opex.ch.class_only")]
        for r, name, color in zip((result, other), names, ("#3b6fb6", "#d98e04"), strict=True):
            monthly = r.utilization["util_frac"].groupby(r.utilization.index.month).mean()
            fig.add_trace(go.Bar(x=[f"{m}월" for m in monthly.index], y=(monthly * 100).to_list(),
                                 name=name, marker={"color": color}))
        fig.update_yaxes(ticksuffix=" %", range=[0, 100])
        self.chart.show(fig)


def class_hours_view(room: RoomApp) -> ClassHoursView:
    """Return the class-hours-only comparison, following ``room``.

    Used in: notebooks/07_opex_lab.ipynb
    """
    return ClassHoursView(room)


def _html_table(header: list[str], rows: list[tuple[Any, ...]]) -> str:
    head = "".join(f'<th style="text-align:left;padding:3px 10px">{html.escape(h)}</th>'
                   for h in header)
    body = "".join("<tr>" + "".join(f'<td style="padding:3px 10px">{html.escape(str(c))}</td>'
                                    for c in row) + "</tr>" for row in rows)
    return (f'<table style="border-collapse:collapse"><tr style="border-bottom:1px solid #999">'
            f"{head}</tr>{body}</table>")


# --- export ----------------------------------------------------------------------------------

def _cell(value: Any) -> Any:
    """Keep spreadsheet programs from running a cell as a formula."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def csv_text(result: opex.OpexResult, inputs: dict[str, Any]) -> str:
    """Return the scenario as one tidy CSV: ``section,key,value,unit`` rows.

    Sections: ``input`` (every control value), ``result`` (:func:`labkit.opex.summary_table`),
    ``bill`` (each month's bill lines, key ``YYYY-MM.<line>``), ``source`` (provenance).
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["section", "key", "value", "unit"])
    for key, value in inputs.items():
        writer.writerow(["input", key, _cell(value), ""])
    for row in opex.summary_table(result).itertuples(index=False):
        writer.writerow(["result", row.key, _cell(row.value), row.unit])
    for month, bill in result.bills.iterrows():
        for col, value in bill.items():
            unit = "KRW" if str(col).endswith("_krw") else ("kW" if str(col).endswith("_kw")
                                                           else "")
            writer.writerow(["bill", f"{month}.{col}", value, unit])
    tar = _tariff(result.tariff_class)
    writer.writerow(["source", "tariff", _cell(tar.source), f"as_of {tar.as_of}"])
    writer.writerow(["source", "tariff_verified", tar.verified, ""])
    writer.writerow(["source", "server", _cell(result.design.server.source), ""])
    return out.getvalue()


def _svg_bills(result: opex.OpexResult) -> str:
    """A small stacked-bar chart of the 12 bills as inline SVG (no scripts in the summary)."""
    bills = result.bills
    parts = [("base", bills["base_krw"]), ("energy", bills["energy_krw"]),
             ("adders", bills["climate_krw"] + bills["fuel_krw"]),
             ("taxes", bills["vat_krw"] + bills["fund_levy_krw"])]
    width, height, left, bottom = 640, 150, 60, 20
    top = float(bills["total_krw"].max()) * 1.1 or 1.0
    bar = (width - left - 10) / len(bills)
    shapes = []
    for i, _ in enumerate(bills.index):
        y = float(height - bottom)
        for key, series in parts:
            h = float(series.iloc[i]) / top * (height - bottom - 10)
            y -= h
            shapes.append(f'<rect x="{left + i * bar + 4:.1f}" y="{y:.1f}" '
                          f'width="{bar - 8:.1f}" height="{h:.1f}" fill="{COLORS[key]}"/>')
        shapes.append(f'<text x="{left + i * bar + bar / 2:.1f}" y="{height - 6}" '
                      f'font-size="11" text-anchor="middle">{bills.index[i].month}월</text>')
    for frac in (0.5, 1.0):
        value = top / 1.1 * frac
        y_line = height - bottom - value / top * (height - bottom - 10)
        shapes.append(f'<text x="{left - 6}" y="{y_line + 4:.1f}" font-size="10" '
                      f'text-anchor="end">{value / 10_000:,.0f}만</text>'
                      f'<line x1="{left}" x2="{width - 10}" y1="{y_line:.1f}" y2="{y_line:.1f}" '
                      f'stroke="#ddd"/>')
    legend = "".join(
        f'<span style="display:inline-block;width:10px;height:10px;background:{COLORS[k]};'
        f'margin:0 4px 0 12px"></span>{html.escape(t(f"opex.bill.{k}"))}' for k, _ in parts)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'role="img" aria-label="{html.escape(t("opex.report.chart"))}">'
            + "".join(shapes) + f'</svg><div class="legend">{legend}</div>')


def summary_html(result: opex.OpexResult, school: str = "") -> str:
    """Return a one-page Korean summary for the school administration (self-contained HTML).

    Holds the design, the year's bills (a table and an inline SVG chart), opex/TCO, costs per
    hour and per token, the class-hours-only comparison is not included (it is a lesson view),
    the sources and, while the tariff is unverified, the warning to check KEPCO's table.
    """
    e = html.escape
    d = result.design
    tar = _tariff(result.tariff_class)
    total_idle, _ = result.idle_costs()
    key_rows = [
        (t("opex.report.servers"), f"{d.server.name} × {d.n_servers} ({d.gpus} GPU)"),
        (t("opex.report.power"), f"{d.peak_facility_kw:.1f} kW (PUE {d.pue:g}), "
                                 + t("opex.report.contract", kw=f"{d.contract:g}")),
        (t("opex.report.tariff"), result.tariff_class
         + (" · " + t("opex.f.school_exception") if d.school_exception else "")),
        (t("opex.sum.utilization"), fmt.pct(result.mean_utilization)),
        (t("opex.sum.electricity"), fmt.krw(result.electricity_krw)),
        (t("opex.line.staff"), fmt.krw(result.breakdown.staff_krw)),
        (t("opex.line.maintenance"), fmt.krw(result.breakdown.maintenance_krw)),
        (t("opex.report.opex"), fmt.krw(result.opex_krw)),
        (t("opex.line.capital"), fmt.krw(result.breakdown.capital_krw)),
        (t("opex.line.facility"), fmt.krw(result.breakdown.facility_krw)),
        (t("opex.report.tco"), fmt.krw(result.tco_krw)),
        (t("opex.ch.used"), _won(result.cost_per_used_gpu_h)),
        (t("opex.ch.student"), _won(result.cost_per_student_h)),
        (t("opex.report.tokens"), _won(result.cost_per_m_tokens)),
        (t("opex.report.rent"), fmt.krw(result.rent_same_work_krw)),
        (t("opex.report.api"), fmt.krw(result.api_same_work_krw)),
        (t("opex.report.idle"), f"{fmt.pct(result.idle_share)} ({fmt.krw(total_idle)})"),
    ]
    bill_rows = [(f"{p.year}년 {p.month}월", f"{b['kwh']:,.0f}", f"{b['billing_kw']:.1f}",
                  f"{b['base_krw']:,.0f}", f"{b['energy_krw']:,.0f}",
                  f"{b['total_krw']:,.0f}") for p, b in result.bills.iterrows()]
    bill_rows.append((t("opex.report.year_total"), f"{result.bills['kwh'].sum():,.0f}", "",
                      f"{result.bills['base_krw'].sum():,.0f}",
                      f"{result.bills['energy_krw'].sum():,.0f}",
                      f"{result.bills['total_krw'].sum():,.0f}"))
    warning = (f'<p class="warn">⚠ {e(t("opex.warn.unverified", date=tar.effective_date))}</p>'
               if not tar.verified else "")
    title = t("opex.report.title") + (f" — {school}" if school else "")
    return f"""<!DOCTYPE html>
<html lang="ko"><head><meta charset="utf-8"><title>{e(title)}</title>
<style>
@page {{ size: A4; margin: 14mm; }}
body {{ font-family: "Noto Sans CJK KR", "Malgun Gothic", "Apple SD Gothic Neo", sans-serif;
  font-size: 10.5px; color: #222; max-width: 760px; margin: auto; }}
svg {{ display: block; margin-top: 4px; }} .legend {{ margin: 2px 0 6px; }}
h1 {{ font-size: 18px; margin: 0 0 2px; }} h2 {{ font-size: 13px; margin: 8px 0 3px; }}
table {{ border-collapse: collapse; width: 100%; }}
td, th {{ border-bottom: 1px solid #ddd; padding: 1px 6px; text-align: left; }}
td.n, th.n {{ text-align: right; white-space: nowrap; }}
.warn {{ background: #fff6e0; border-left: 4px solid #d98e04; padding: 4px 8px; }}
.small {{ color: #555; font-size: 9px; margin: 2px 0; }}
</style></head><body>
<h1>{e(title)}</h1>
<p class="small">{e(t("opex.report.made", day=date.today().isoformat()))}</p>
{warning}
<h2>{e(t("opex.report.key"))}</h2>
<table>{"".join(
    "<tr>" + "".join(f"<td>{e(k)}</td><td class='n'>{e(v)}</td>" for k, v in key_rows[i:i + 2])
    + "</tr>" for i in range(0, len(key_rows), 2))}</table>
<h2>{e(t("opex.report.bills"))}</h2>
{_svg_bills(result)}
<table><tr>{"".join(f"<th class='n'>{e(h)}</th>" for h in (
        t("opex.report.month"), "kWh", t("opex.report.billing_kw"), t("opex.bill.base"),
        t("opex.bill.energy"), t("opex.report.due")))}</tr>
{"".join("<tr>" + "".join(f"<td class='n'>{e(c)}</td>" for c in row) + "</tr>"
         for row in bill_rows)}</table>
<h2>{e(t("opex.report.notes"))}</h2>
<p class="small">{e(t("opex.report.method"))}</p>
<p class="small">{e(t("opex.report.sources"))} {e(tar.source)} ({e(tar.as_of)});
{e(d.server.source)}.</p>
</body></html>
"""


def _data_link(name: str, mime: str, payload: bytes, label: str, css: str) -> str:
    encoded = base64.b64encode(payload).decode("ascii")
    return (f'<a class="{css}" download="{html.escape(name)}" '
            f'href="data:{mime};base64,{encoded}" style="margin-right:16px">'
            f"⬇ {html.escape(label)}</a>")


class ExportPanel(widgets.VBox):
    """Export the room's scenario: CSV + one-page HTML, per-session temp folder + downloads."""

    def __init__(self, room: RoomApp) -> None:
        super().__init__()
        self.room = room
        self.add_class("lk-export")
        self.folder: Path | None = None
        self.button = widgets.Button(description=t("opex.export.button"), icon="download",
                                     layout=widgets.Layout(width="260px"))
        self.button.add_class("lk-export-button")
        self.button.on_click(self.export)
        self.links = widgets.HTML()
        self.links.add_class("lk-export-links")
        self.children = [self.button, self.links]
        self.files: dict[str, Path] = {}

    def _session_folder(self) -> Path:
        if self.folder is None:
            self.folder = Path(tempfile.mkdtemp(prefix="labkit-opex-"))
        return self.folder

    def export(self, *_: Any) -> dict[str, Path]:
        """Write the CSV and the HTML summary into this session's folder; show the links."""
        result = self.room.result
        if result is None:
            self.links.value = t("opex.export.nothing")
            return {}
        folder = self._session_folder()
        inputs = {k: f.control.value for k, f in self.room.fields.items()}
        files = {
            "opex_scenario.csv": ("text/csv;charset=utf-8",
                                  ("\ufeff" + csv_text(result, inputs)).encode("utf-8")),
            "opex_summary.html": ("text/html;charset=utf-8",
                                  summary_html(result).encode("utf-8")),
        }
        links = []
        self.files = {}
        for name, (mime, payload) in files.items():
            path = folder / name
            path.write_bytes(payload)
            self.files[name] = path
            css = "lk-export-csv" if name.endswith(".csv") else "lk-export-html"
            links.append(_data_link(name, mime, payload, t(f"opex.export.{css[10:]}"), css))
        self.links.value = (" ".join(links) + "<br>"
                            + f'<span style="color:#555">{t("opex.export.where")}</span>')
        return self.files


def export_panel(room: RoomApp) -> ExportPanel:
    """Return the export panel for ``room``.

    Used in: notebooks/07_opex_lab.ipynb
    """
    return ExportPanel(room)


# --- checked numbers and exercises -------------------------------------------------------------

def _case1_result(utilization: float) -> opex.OpexResult:
    """The shared check case 1 (8×H100, PUE 1.5, flat utilization) through the lesson's model."""
    design = opex.RoomDesign(
        replace(_servers_usd()["8×H100 서버"], server_capex_krw=420_000_000), pue=1.5,
        idle_frac=0.3, staff_fte=0.2, staff_krw_per_fte_year=60_000_000, maintenance_frac=0.05,
        facility_upgrade_krw=40_000_000, facility_years=10, depreciation_years=4)
    usage = loadprofile.Usage(0, 0, 0, 24, 0, utilization)
    return opex.evaluate(design, _tariff(DEFAULT_CLASS), _calendar(), usage)


def key_numbers() -> pd.DataFrame:
    """Return the lesson's checked numbers as a small Korean table (deterministic text).

    Rows: check case 1 at 100 % and 40 % utilization through the lesson's model (KEPCO bills
    instead of the flat all-in rate), the default room's year and the class-hours-only year.

    Used in: notebooks/07_opex_lab.ipynb
    """
    full, forty = _case1_result(1.0), _case1_result(0.4)
    cal, tar = _calendar(), _tariff(DEFAULT_CLASS)
    design, usage = default_design(), default_usage()
    room = opex.evaluate(design, tar, cal, usage)
    only = opex.class_hours_scenario(design, tar, cal)
    rows = [
        (t("opex.key.case1_total"), fmt.krw(full.tco_krw)),
        (t("opex.key.case1_used_100"), f"{full.cost_per_used_gpu_h:,.0f} 원"),
        (t("opex.key.case1_used_40"), f"{forty.cost_per_used_gpu_h:,.0f} 원"),
        (t("opex.key.school_days"), f"{cal.school_days} 일"),
        (t("opex.key.room_electricity"), f"{room.electricity_krw:,.0f} 원"),
        (t("opex.key.room_utilization"), fmt.pct(room.mean_utilization)),
        (t("opex.key.room_used"), f"{room.cost_per_used_gpu_h:,.0f} 원"),
        (t("opex.key.class_only_utilization"), fmt.pct(only.mean_utilization)),
        (t("opex.key.class_only_used"), f"{only.cost_per_used_gpu_h:,.0f} 원"),
    ]
    column = t("opex.key.col_item")
    return pd.DataFrame(rows, columns=[column, t("opex.key.col_value")]).set_index(column)


def exercises() -> widgets.VBox:
    """Return the lesson's exercises; answers come from the models.

    Used in: notebooks/07_opex_lab.ipynb
    """
    gap = _tariff(DEFAULT_CLASS)
    january = pd.Series(10.0, index=pd.date_range("2026-01-01", periods=744, freq="h",
                                                  tz=tariff.TZ))
    bill = tariff.monthly_bill(gap, january, 50).iloc[0]
    floor = tariff.monthly_bill(gap, january, 100).iloc[0]["billing_kw"]
    cal = _calendar()
    only = loadprofile.hourly_utilization(cal, loadprofile.class_hours_only())
    design, usage = default_design(), default_usage()
    room = opex.evaluate(design, gap, cal, usage)
    return exercise_set([
        Exercise("opex.ex1", float(bill["energy_krw"]), 1.0, "원"),
        Exercise("opex.ex2", float(floor), 0.05, "kW"),
        Exercise("opex.ex3", float(only["util_frac"].mean()) * 100, 0.11, "%"),
        Exercise("opex.ex4", room.cost_per_used_gpu_h / room.cost_per_calendar_gpu_h, 0.06, "배"),
    ])
