"""Lesson 07's checked numbers and exercises."""

from __future__ import annotations

from dataclasses import replace

import ipywidgets as widgets
import pandas as pd

from labkit import loadprofile, opex, tariff
from labkit.i18n import t
from labkit.ui import format as fmt
from labkit.ui.exercises import Exercise, exercise_set
from labkit.ui.opex.common import (
    DEFAULT_CLASS,
    _calendar,
    _servers_usd,
    _tariff,
    default_design,
    default_usage,
)

# --- checked numbers and exercises -------------------------------------------------------------

def _case1_result(utilization: float) -> opex.OpexResult:
    """The shared check case 1 (8×H100, PUE 1.5, flat utilization) through the lesson's model."""
    design = opex.RoomDesign(
        replace(_servers_usd()["8×H100 서버"], server_capex_krw=420_000_000), pue=1.5,
        idle_frac=0.3, staff_fte=0.2, staff_krw_per_fte_year=60_000_000, maintenance_frac=0.05,
        facility_upgrade_krw=40_000_000, facility_years=10, depreciation_years=4)
    usage = loadprofile.Usage(0, 0, 0, 24, 0, utilization)
    return opex.evaluate(design, _tariff(DEFAULT_CLASS), _calendar(), usage)


def key_numbers() -> fmt.Table:
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
    return fmt.pairs_table(rows, t("opex.key.col_item"), t("opex.key.col_value"))


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
        # one decimal place, as asked: 17.4 % (17.35 %) is right, 17.3 % is not
        Exercise("opex.ex3", float(only["util_frac"].mean()) * 100, 0.05, "%"),
        Exercise("opex.ex4", room.cost_per_used_gpu_h / room.cost_per_calendar_gpu_h, 0.06, "배"),
    ])
