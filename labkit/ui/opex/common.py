"""Shared pieces of lesson 07's apps: the cached data, the default room, small formatters."""

from __future__ import annotations

import functools
import html
import math
from dataclasses import replace
from typing import Any

from labkit import loadprofile, opex, tariff
from labkit.data.opex import OpexDefault, load_opex_defaults, load_servers
from labkit.data.school import load_school_calendar
from labkit.data.tariff import load_tariff, tariff_classes
from labkit.validate import InputError

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
        contract_kw=_d("contract_kw"),
        summer_pue_add=_d("summer_pue_add"), winter_pue_add=_d("winter_pue_add"),
        staff_fte=_d("staff_fte"), staff_krw_per_fte_year=_d("staff_krw_per_fte_year"),
        maintenance_frac=_d("maintenance_frac"), facility_upgrade_krw=_d("facility_upgrade_krw"),
        facility_years=_d("facility_years"), depreciation_years=_d("depreciation_years"),
        cost_of_capital=_d("cost_of_capital"), derate=_d("derate"),
        rent_krw_per_gpu_hour=_d("rent_usd_per_gpu_hour") * rate,
        api_krw_per_m_tokens=_d("api_usd_per_m_tokens") * rate)


def _non_negative(field: str, value: Any) -> float:
    if not (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and value >= 0):
        raise InputError(field, "non_negative", value, f"{field} must be >= 0, got {value!r}")
    return float(value)

def _html_table(header: list[str], rows: list[tuple[Any, ...]]) -> str:
    head = "".join(f'<th style="text-align:left;padding:3px 10px">{html.escape(h)}</th>'
                   for h in header)
    body = "".join("<tr>" + "".join(f'<td style="padding:3px 10px">{html.escape(str(c))}</td>'
                                    for c in row) + "</tr>" for row in rows)
    return (f'<table style="border-collapse:collapse"><tr style="border-bottom:1px solid #999">'
            f"{head}</tr>{body}</table>")
