"""The room designer and its 12 monthly bills (:func:`room_app`)."""

from __future__ import annotations

import html
import math
from dataclasses import replace
from datetime import timedelta
from typing import Any

import ipywidgets as widgets

from labkit import loadprofile, opex, tariff
from labkit.i18n import t
from labkit.opex import whatif
from labkit.ui import format as fmt
from labkit.ui.components import Field, FigureOutput, LiveApp, number_field, slider_field
from labkit.ui.opex.common import (
    DEFAULT_CLASS,
    MAX_TEXT,
    _calendar,
    _classes,
    _d,
    _defaults,
    _non_negative,
    _periods_text,
    _servers_usd,
    _tariff,
)
from labkit.ui.opex.figures import bills_figure, demand_figure
from labkit.validate import InputError, one_of

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


#: The room designer's tabs: catalog key of the title -> its fields' keys.
ROOM_TABS = {
    "opex.tab.room": ["server", "server_price_usd", "n_servers", "pue", "summer_pue_add",
                      "winter_pue_add", "idle_frac", "contract_auto", "contract_kw"],
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


def _room_fields(server: widgets.Dropdown, price: Field, students: Field) -> list[Field]:
    """The room designer's controls, in the order of its tabs (defaults: data/opex)."""
    cls = widgets.Dropdown(options=list(_classes()), value=DEFAULT_CLASS,
                           layout=widgets.Layout(width="230px"))
    cal = _calendar()
    text = {"width": "420px", "height": "92px"}
    return [
        Field("server", t("opex.f.server"), server), price,
        _slider("n_servers", t("opex.f.n_servers"), unit="대", fmt_=".0f"),
        _slider("pue", t("opex.f.pue")),
        _slider("summer_pue_add", t("opex.f.summer_pue_add")),
        _slider("winter_pue_add", t("opex.f.winter_pue_add")),
        _slider("idle_frac", t("opex.f.idle"), pct=True),
        # the school's contract (its card says 20 kW), not the automatic one (issue 25)
        Field("contract_auto", t("opex.f.contract_auto"),
              widgets.Checkbox(value=False, indent=False)),
        number_field("contract_kw", t("opex.f.contract_kw"), _d("contract_kw"), unit="kW", step=1,
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
        _number("rent_usd_per_gpu_hour", t("opex.f.rent"), unit="USD/GPU·h", width="90px"),
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


#: Bounds of the USD controls (so the won they convert to stays finite: 1e308 typed in a box
#: gets a message beside it, not "too large to compute" in the status line).
USD_LIMITS = {"fx_krw_per_usd": 100_000.0, "server_price_usd": 1e9,
              "rent_usd_per_gpu_hour": 1e6, "api_usd_per_m_tokens": 1e6}


def _at_most(key: str, value: Any, limit: float) -> None:
    if isinstance(value, (int, float)) and value > limit:
        raise InputError(key, "at_most", value, f"{key} must be <= {limit:,.0f}, got {value!r}",
                         limit=f"{limit:,.0f}")


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
        fields = _room_fields(server, price, students)
        for f in fields:
            if isinstance(f.control, widgets.Textarea):
                f.control.continuous_update = False
        super().__init__("room", fields, error_prefix="opex")
        tabs = widgets.Tab(children=[widgets.VBox([self.fields[k].box for k in keys])
                                     for keys in ROOM_TABS.values()])
        for i, key in enumerate(ROOM_TABS):
            tabs.set_title(i, t(key))
        tabs.add_class("lk-room-tabs")
        self.tariff_note = widgets.HTML()
        self.tariff_note.add_class("lk-room-tariff-note")
        self.summary = widgets.HTML()
        self.summary.add_class("lk-room-summary")
        self.chart = FigureOutput("lk-bills-chart")
        self.demand_chart = FigureOutput("lk-room-demand-chart")
        reset = widgets.Button(description=t("common.reset"), icon="undo")
        reset.on_click(self.reset)
        self.children = [tabs, reset, self.status, self.tariff_note, self.summary, self.chart,
                         self.demand_chart]
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
        for key in USD_LIMITS:
            _at_most(key, values[key], USD_LIMITS[key])
        server = replace(servers[name], server_capex_krw=price * fx)
        usage = loadprofile.Usage(
            class_frac=values["class_frac"], exam_frac=values["exam_frac"],
            after_school_frac=values["after_school_frac"],
            after_school_end_h=values["after_school_end_h"],
            vacation_frac=values["vacation_frac"], always_on_frac=values["always_on_frac"])
        design = opex.RoomDesign(
            server, n_servers=values["n_servers"], pue=values["pue"],
            summer_pue_add=values["summer_pue_add"], winter_pue_add=values["winter_pue_add"],
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
        result = opex.evaluate(design, tariff_, calendar, usage,
                               utilization=whatif.year_of_hours(calendar, usage))
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
            # rounded up as the task's hint does: 15.03 kW shown as "15.0" reads "15 is enough"
            peak = math.ceil(float(over["demand_kw"].max()) * 10) / 10
            notes.append(t("opex.warn.over_contract", peak=f"{peak:.1f}",
                           contract=f"{result.design.contract:g}"))
        warnings = "".join(
            f'<div style="padding:6px 10px;margin:4px 0;border-left:4px solid #d98e04;'
            f'background:#fff6e0">⚠ {n}</div>' for n in notes)
        if self.fields["contract_auto"].control.value:  # the box is disabled: say what is used
            warnings += (
                '<div class="lk-contract-auto" style="padding:6px 10px;margin:4px 0;'
                'border-left:4px solid #4a78c2;background:#eef3fb">'
                + html.escape(t("opex.note.contract_auto",
                                contract=fmt.fixed(result.design.contract, 1),
                                typed=fmt.fixed(self.fields["contract_kw"].control.value, 1)))
                + "</div>")
        self.tariff_note.value = warnings
        self.summary.value = (
            '<div style="display:flex;gap:28px;flex-wrap:wrap;margin:6px 0">'
            + "".join(
                f'<div><div style="color:#555">{html.escape(label)}</div>'
                f'<div style="font-size:1.7em;font-weight:700">{value}</div></div>'
                for label, value in (
                    (t("opex.sum.electricity"), fmt.krw(result.electricity_krw)),
                    (t("opex.sum.kwh"), f"{result.bills['kwh'].sum():,.0f} kWh"),
                    (t("opex.sum.peak"), f"{fmt.fixed(result.bills['billing_kw'].max(), 1)} kW"),
                    (t("opex.sum.utilization"), fmt.pct(result.mean_utilization)),
                ))
            + "</div>")
        self.chart.show(bills_figure(result))
        self.demand_chart.show(demand_figure(result))



def room_app() -> RoomApp:
    """Return the room designer with the lesson's defaults (``data/opex/defaults.csv``).

    Used in: notebooks/07_opex_lab.ipynb
    """
    return RoomApp()
