"""Lesson 07's what-ifs on the room: class hours only, and the sensitivity tornado
(:mod:`labkit.opex`).

The year of hourly utilization (:func:`labkit.loadprofile.hourly_utilization`, ~11 ms) depends
only on the calendar and the usage plan, so it is computed once per (calendar, usage):
:func:`year_of_hours`. A PUE step then re-evaluates the tornado's usage swings
(``class_frac``, ``always_on_frac`` at their fixed low/high values) and the class-hours-only
year without recomputing their hours.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

import pandas as pd

from labkit import loadprofile
from labkit.loadprofile import SchoolCalendar, Usage
from labkit.opex.room import OpexResult, RoomDesign, evaluate
from labkit.tariff import Tariff

__all__ = ["SENSITIVITY_RANGES", "Swing", "class_hours_scenario", "sensitivity", "summary_table",
           "year_of_hours"]


@functools.lru_cache(maxsize=32)
def _cached_hours(calendar: SchoolCalendar, usage: Usage) -> pd.DataFrame:
    return loadprofile.hourly_utilization(calendar, usage)


def year_of_hours(calendar: SchoolCalendar, usage: Usage) -> pd.DataFrame:
    """Return ``loadprofile.hourly_utilization(calendar, usage)``, computed once per inputs.

    Both inputs are frozen dataclasses and the function is pure (no clock, no files), so the
    last 32 (calendar, usage) pairs are kept; each call returns a copy (a caller may change
    its frame). Inputs that cannot be hashed are computed every time.

    Returns
    -------
    pandas.DataFrame, shape (8760 or 8784, 3)
        As :func:`labkit.loadprofile.hourly_utilization`.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        As :func:`labkit.loadprofile.hourly_utilization` (errors are not cached).

    Used in: notebooks/07_opex_lab.ipynb
    """
    try:
        frame = _cached_hours(calendar, usage)
    except TypeError:  # an unhashable field (a list a caller put in)
        return loadprofile.hourly_utilization(calendar, usage)
    return frame.copy()


def class_hours_scenario(design: RoomDesign, tariff: Tariff,
                         calendar: SchoolCalendar) -> OpexResult:
    """Return the "we only run in class hours" year: class and exam days at full use in class
    hours, nothing else (8 h x 190 days = 1,520 h, 17 % of the year).

    Used in: notebooks/07_opex_lab.ipynb
    """
    usage = loadprofile.class_hours_only()
    return evaluate(design, tariff, calendar, usage, utilization=year_of_hours(calendar, usage))


# --- sensitivity -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Swing:
    """One input's low/high values for the sensitivity chart."""

    key: str
    low: float
    high: float


# Ranges from the course reference's slider table (economics §9) and §6.3.
SENSITIVITY_RANGES: tuple[Swing, ...] = (
    Swing("pue", 1.1, 2.0),
    Swing("class_frac", 0.2, 1.0),
    Swing("always_on_frac", 0.0, 0.5),
    Swing("idle_frac", 0.2, 0.4),
    Swing("capex_scale", 200 / 300, 450 / 300),
    Swing("depreciation_years", 3, 6),
    Swing("cost_of_capital", 0.0, 0.10),
    Swing("staff_fte", 0.0, 0.5),
    Swing("maintenance_frac", 0.0, 0.10),
    Swing("facility_upgrade_krw", 0.0, 100_000_000),
)


def _vary(design: RoomDesign, usage: Usage, key: str,
          value: float) -> tuple[RoomDesign, Usage]:
    if key == "capex_scale":
        server = replace(design.server,
                         server_capex_krw=design.server.server_capex_krw * value)
        return replace(design, server=server), usage
    changes: dict[str, Any] = {key: value}
    if key in {f.name for f in fields(Usage)}:
        return design, replace(usage, **changes)
    return replace(design, **changes), usage


_MONEY_ONLY = frozenset({"capex_scale", "depreciation_years", "cost_of_capital", "staff_fte",
                         "staff_krw_per_fte_year", "maintenance_frac", "facility_upgrade_krw",
                         "facility_years", "students_per_gpu", "derate", "rent_krw_per_gpu_hour",
                         "api_krw_per_m_tokens"})


def _reprice(base: OpexResult, design: RoomDesign, tariff: Tariff) -> OpexResult:
    """Return ``base`` with a design that changes money only (same load, same bills)."""
    breakdown = design.cluster(tariff).annual_cost_breakdown(base.mean_utilization)
    breakdown = breakdown.with_electricity(base.breakdown.energy_krw,
                                           base.breakdown.base_charge_krw)
    tokens = base.used_gpu_h * 3_600 * design.server.tokens_per_s_per_gpu * design.derate
    return replace(base, design=design, breakdown=breakdown, tokens=tokens)


def sensitivity(design: RoomDesign, tariff: Tariff, calendar: SchoolCalendar, usage: Usage,
                ranges: Sequence[Swing] = SENSITIVITY_RANGES,
                metric: Callable[[OpexResult], float] | None = None,
                base: OpexResult | None = None) -> pd.DataFrame:
    """Return how far each input moves the yearly cost between its low and high value.

    Parameters
    ----------
    design, tariff, calendar, usage
        The base case (as in :func:`evaluate`).
    ranges : sequence of Swing
        Inputs and their low/high values (default :data:`SENSITIVITY_RANGES`, from the course
        reference's slider ranges); ``capex_scale`` multiplies the server price.
    metric : callable, optional
        What to measure; default the TCO per year [KRW/year].
    base : OpexResult, optional
        ``evaluate(design, tariff, calendar, usage)`` when the caller has it already.

    Returns
    -------
    pandas.DataFrame
        One row per input, largest swing first: ``key``, ``low``, ``high``, ``base_value``
        (the input's current value), ``low_krw``, ``high_krw``, ``base_krw``, ``swing_krw``
        (|high - low|).

    Used in: notebooks/07_opex_lab.ipynb
    """
    measure = metric or (lambda r: r.tco_krw)
    if base is None:
        base = evaluate(design, tariff, calendar, usage,
                        utilization=year_of_hours(calendar, usage))
    base_krw = measure(base)
    usage_keys = {f.name for f in fields(Usage)}
    rows: list[dict[str, Any]] = []
    for swing in ranges:
        values = []
        for v in (swing.low, swing.high):
            d, u = _vary(design, usage, swing.key, v)
            if swing.key in _MONEY_ONLY:  # the load and the bills do not change
                values.append(measure(_reprice(base, d, tariff)))
            else:  # same year of hours unless the swing is a usage input
                hours = base.utilization if u == usage else year_of_hours(calendar, u)
                values.append(measure(evaluate(d, tariff, calendar, u, utilization=hours)))
        if swing.key == "capex_scale":
            current: float = 1.0
        elif swing.key in usage_keys:
            current = float(getattr(usage, swing.key))
        else:
            current = float(getattr(design, swing.key))
        rows.append({"key": swing.key, "low": swing.low, "high": swing.high,
                     "base_value": current, "low_krw": values[0], "high_krw": values[1],
                     "base_krw": base_krw, "swing_krw": abs(values[1] - values[0])})
    frame = pd.DataFrame(rows).sort_values("swing_krw", ascending=False, kind="stable")
    return frame.reset_index(drop=True)


def summary_table(result: OpexResult) -> pd.DataFrame:
    """Return the key numbers of a result as (key, value, unit) rows, for export and checks.

    Used in: notebooks/07_opex_lab.ipynb
    """
    total_idle, _ = result.idle_costs()
    b = result.breakdown
    rows = [
        ("tariff_class", result.tariff_class, ""),
        ("tariff_verified", result.tariff_verified, ""),
        ("servers", result.design.n_servers, "servers"),
        ("gpus", result.design.gpus, "GPUs"),
        ("pue", result.design.pue, ""),
        ("contract_kw", result.design.contract, "kW"),
        ("peak_facility_kw", result.design.peak_facility_kw, "kW"),
        ("mean_utilization_frac", result.mean_utilization, "fraction"),
        ("energy_kwh", float(result.bills["kwh"].sum()), "kWh"),
        ("electricity_krw", result.electricity_krw, "KRW/year"),
        ("capital_krw", b.capital_krw, "KRW/year"),
        ("staff_krw", b.staff_krw, "KRW/year"),
        ("maintenance_krw", b.maintenance_krw, "KRW/year"),
        ("facility_krw", b.facility_krw, "KRW/year"),
        ("opex_krw", result.opex_krw, "KRW/year"),
        ("tco_krw", result.tco_krw, "KRW/year"),
        ("cost_per_calendar_gpu_h_krw", result.cost_per_calendar_gpu_h, "KRW/GPU-h"),
        ("cost_per_used_gpu_h_krw", result.cost_per_used_gpu_h, "KRW/GPU-h"),
        ("students_per_gpu", result.design.students, "students"),
        ("cost_per_student_h_krw", result.cost_per_student_h, "KRW/student-h"),
        ("cost_per_m_tokens_krw", result.cost_per_m_tokens, "KRW/1M tokens"),
        ("rent_same_work_krw", result.rent_same_work_krw, "KRW/year"),
        ("api_same_work_krw", result.api_same_work_krw, "KRW/year"),
        ("idle_krw", total_idle, "KRW/year"),
        ("idle_share_frac", result.idle_share, "fraction"),
        ("idle_share_electricity_frac", result.idle_share_electricity, "fraction"),
    ]
    return pd.DataFrame(rows, columns=["key", "value", "unit"])
