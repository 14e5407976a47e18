"""labkit.loadprofile: the school calendar, hourly utilization and the room's grid load."""

from __future__ import annotations

import math
import shutil
from collections.abc import Callable
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit import loadprofile as L
from labkit.data import DataError
from labkit.data.school import load_school_calendar
from labkit.validate import InputError


@pytest.fixture(scope="module")
def cal() -> L.SchoolCalendar:
    return load_school_calendar()


def test_default_calendar_has_190_school_days(cal: L.SchoolCalendar) -> None:
    # 초·중등교육법 시행령 제45조: 190 school days; the example year is built to hold exactly 190
    assert cal.year == 2026 and cal.school_days == 190
    assert cal.count("exam") == 18  # 4 + 5 + 4 + 5 exam weekdays
    assert cal.count("closed") == 5 and cal.count("holiday") == 20
    assert cal.count(*L.DayType) == 365
    assert "2026년 월력요항" in cal.source and cal.as_of == "2026-11-30"


def test_default_calendar_day_types(cal: L.SchoolCalendar) -> None:
    days = cal.day_types()
    assert days["2026-03-02"] == "holiday"  # 삼일절 대체공휴일, a Monday in term
    assert days["2026-03-03"] == "class"
    assert days["2026-04-27"] == "exam"
    assert days["2026-05-04"] == "closed"  # 재량휴업일
    assert days["2026-07-20"] == "vacation"  # a Monday in the summer break
    assert days["2026-07-18"] == "weekend"
    assert days["2026-02-10"] == "vacation"


def test_holiday_dates_by_kind(cal: L.SchoolCalendar) -> None:
    public = cal.holiday_dates(("public",))
    both = cal.holiday_dates()
    assert date(2026, 3, 2) not in public and date(2026, 3, 2) in both
    assert len(both) == 20


def test_class_hours_only_is_17_percent_of_the_year(cal: L.SchoolCalendar) -> None:
    # course reference: 8 h x 190 days = 1,520 h = 17 % of 8,760 h
    util = L.hourly_utilization(cal, L.class_hours_only())
    assert len(util) == 8760
    assert util["util_frac"].sum() == pytest.approx(1520)
    assert util["util_frac"].mean() == pytest.approx(1520 / 8760)
    assert round(util["util_frac"].mean(), 2) == 0.17


def test_hourly_utilization_shapes_days_and_hours(cal: L.SchoolCalendar) -> None:
    usage = L.Usage(class_frac=0.8, exam_frac=0.2, after_school_frac=0.3,
                    after_school_end_h=21, vacation_frac=0.1, always_on_frac=0.1)
    u = L.hourly_utilization(cal, usage)["util_frac"]
    at = lambda s: u[pd.Timestamp(s, tz="Asia/Seoul")]  # noqa: E731
    # util = always_on + (1 - always_on) x scheduled
    assert at("2026-03-03 10:00") == pytest.approx(0.1 + 0.9 * 0.8)  # class
    assert at("2026-03-03 18:00") == pytest.approx(0.1 + 0.9 * 0.3)  # after school
    assert at("2026-03-03 21:00") == pytest.approx(0.1)  # after 21:00
    assert at("2026-03-03 08:00") == pytest.approx(0.1)  # before class
    assert at("2026-04-27 10:00") == pytest.approx(0.1 + 0.9 * 0.2)  # exam
    assert at("2026-07-20 10:00") == pytest.approx(0.1 + 0.9 * 0.1)  # vacation weekday
    assert at("2026-07-20 18:00") == pytest.approx(0.1)  # no after-school in vacation
    assert at("2026-07-18 10:00") == pytest.approx(0.1)  # weekend
    assert at("2026-05-05 10:00") == pytest.approx(0.1)  # 어린이날
    assert at("2026-05-04 10:00") == pytest.approx(0.1)  # closure


def test_fractional_class_hours_weight_partial_hours() -> None:
    cal = L.SchoolCalendar(2026, [L.Term("t", date(2026, 3, 2), date(2026, 3, 6))],
                           class_start_h=8.5, class_end_h=16.5)
    u = L.hourly_utilization(cal, L.Usage(class_frac=1.0, after_school_frac=0.0,
                                          always_on_frac=0.0))["util_frac"]
    day = u["2026-03-02"].to_numpy()
    assert day[8] == 0.5 and day[9] == 1.0 and day[16] == 0.5 and day[17] == 0.0
    assert day.sum() == pytest.approx(8)


def test_leap_year_calendar_has_8784_hours() -> None:
    cal = L.SchoolCalendar(2028, [L.Term("1학기", date(2028, 2, 28), date(2028, 3, 3))],
                           holidays=[L.Holiday(date(2028, 3, 1), "삼일절")])
    assert cal.days_in_year == 366 and cal.hours_in_year == 8784
    days = cal.day_types()
    assert days["2028-02-29"] == "class"  # a Tuesday in the term
    assert days["2028-03-01"] == "holiday"
    assert cal.school_days == 4  # Feb 28, Feb 29, Mar 2, Mar 3
    util = L.hourly_utilization(cal, L.class_hours_only())
    assert len(util) == 8784 and util.index[-1] == pd.Timestamp("2028-12-31 23:00",
                                                                 tz="Asia/Seoul")
    assert util["util_frac"].sum() == pytest.approx(4 * 8)


def test_holiday_on_a_weekend_and_in_vacation() -> None:
    cal = L.SchoolCalendar(2026, [L.Term("t", date(2026, 3, 2), date(2026, 3, 31))],
                           holidays=[L.Holiday(date(2026, 3, 1), "삼일절"),
                                     L.Holiday(date(2026, 1, 1), "신정")])
    days = cal.day_types()
    assert days["2026-03-01"] == "holiday" and days["2026-01-01"] == "holiday"


def test_it_power_and_facility_load_case1_numbers() -> None:
    # cases/economics.md case 1: P(u) = 10.2 x (0.3 + 0.7 u) kW; x PUE 1.5
    assert L.it_power_kw(1.0, n_servers=1, server_max_kw=10.2, idle_frac=0.3) == pytest.approx(
        10.2)
    assert L.it_power_kw(0.4, n_servers=1, server_max_kw=10.2, idle_frac=0.3) == pytest.approx(
        5.916)
    util = pd.Series([0.4, 1.0], index=pd.date_range("2026-01-01", periods=2, freq="h",
                                                     tz="Asia/Seoul"))
    load = L.facility_load_kw(util, n_servers=1, server_max_kw=10.2, idle_frac=0.3, pue=1.5)
    assert load.tolist() == pytest.approx([8.874, 15.3])
    assert load.name == "facility_kw"


@settings(max_examples=50, deadline=None)
@given(u=st.floats(0, 1), n=st.integers(1, 20), idle=st.floats(0, 1), pue=st.floats(1, 3))
def test_facility_load_between_idle_and_max(u: float, n: int, idle: float, pue: float) -> None:
    s = pd.Series([u])
    load = L.facility_load_kw(s, n_servers=n, server_max_kw=10.2, idle_frac=idle, pue=pue)[0]
    assert n * 10.2 * idle * pue - 1e-9 <= load <= n * 10.2 * pue + 1e-9


@settings(max_examples=30, deadline=None)
@given(cf=st.floats(0, 1), ao=st.floats(0, 1))
def test_utilization_stays_in_unit_interval(cf: float, ao: float) -> None:
    cal = L.SchoolCalendar(2026, [L.Term("t", date(2026, 3, 2), date(2026, 3, 20))])
    u = L.hourly_utilization(cal, L.Usage(class_frac=cf, always_on_frac=ao))["util_frac"]
    assert ((u >= ao - 1e-12) & (u <= 1 + 1e-12)).all()


# --- editable calendar text ------------------------------------------------------------------

def test_parse_periods_reads_ranges_single_days_and_comments() -> None:
    text = ("# 학기\n2026-03-03 ~ 2026-07-17 1학기\n\n2026-05-04 재량휴업일\n"
            "2026-8-17 - 2026-12-31\n")
    terms = L.parse_periods("terms", text)
    assert [(t.name, t.start, t.end) for t in terms] == [
        ("1학기", date(2026, 3, 3), date(2026, 7, 17)),
        ("재량휴업일", date(2026, 5, 4), date(2026, 5, 4)),
        ("terms 5", date(2026, 8, 17), date(2026, 12, 31)),
    ]


# --- bad input: one table for the module ------------------------------------------------------

T1 = L.Term("1학기", date(2026, 3, 2), date(2026, 7, 17))


def _calendar(**kwargs: object) -> L.SchoolCalendar:
    args: dict[str, object] = {"year": 2026, "terms": [T1]} | kwargs
    return L.SchoolCalendar(**args)  # type: ignore[arg-type]


def _facility(**kwargs: float) -> pd.Series:
    args = {"n_servers": 1, "server_max_kw": 10.2, "idle_frac": 0.3, "pue": 1.5} | kwargs
    return L.facility_load_kw(pd.Series([0.5]), **args)  # type: ignore[arg-type]


def _after_school_before_class_end() -> object:
    return L.hourly_utilization(load_school_calendar(), L.Usage(after_school_end_h=16))


#: (what is called, the field the error names, its rule)
BAD_INPUT: list[tuple[Callable[[], object], str, str]] = [
    # the editable calendar text
    (lambda: L.parse_periods("terms", "3월 3일부터"), "terms", "other"),
    (lambda: L.parse_periods("terms", "2026-02-30 ~ 2026-03-01"), "terms", "other"),
    (lambda: L.parse_periods("terms", "2026-07-17 ~ 2026-03-03 거꾸로"), "terms", "other"),
    (lambda: L.parse_periods("terms", "2026-03-03\n" * 51), "terms", "at_most"),
    # terms and holidays
    (lambda: L.Term("x", date(2026, 3, 5), date(2026, 3, 1)), "x.end", "other"),
    (lambda: L.Term("x", "not a date", date(2026, 3, 1)),  # type: ignore[arg-type]
     "x.start", "other"),
    (lambda: L.Holiday(date(2026, 1, 1), "신정", kind="festival"), "holidays.신정.kind",
     "choice"),
    # the school calendar
    (lambda: _calendar(year=1999), "year", "integer"),  # a whole number >= 2000
    (lambda: _calendar(year=2101), "year", "at_most"),
    (lambda: _calendar(year=2026.5), "year", "integer"),
    (lambda: _calendar(terms=[L.Term("x", date(2025, 12, 1), date(2026, 1, 5))]), "terms",
     "other"),
    (lambda: _calendar(terms=[T1, L.Term("겹침", date(2026, 7, 1), date(2026, 8, 1))]), "terms",
     "other"),
    (lambda: _calendar(exams=[L.Term("시험", date(2026, 8, 1), date(2026, 8, 3))]), "exams",
     "other"),
    (lambda: _calendar(holidays=[L.Holiday(date(2026, 5, 5), "a"),
                                 L.Holiday(date(2026, 5, 5), "b")]), "holidays", "other"),
    (lambda: _calendar(holidays=[L.Holiday(date(2027, 1, 1), "신정")]), "holidays", "other"),
    (lambda: _calendar(closures=[L.ClosedDay(date(2025, 5, 1), "x")]), "closures", "other"),
    (lambda: _calendar(class_start_h=17, class_end_h=9), "class_end_h", "other"),
    (lambda: _calendar(class_end_h=25), "class_end_h", "other"),
    (lambda: _calendar(class_start_h=math.nan), "class_start_h", "finite"),
    # usage and the hourly utilization
    (lambda: L.Usage(class_frac=1.2), "class_frac", "fraction"),
    (lambda: L.Usage(always_on_frac=-0.1), "always_on_frac", "fraction"),
    (lambda: L.Usage(vacation_frac=math.nan), "vacation_frac", "finite"),
    (lambda: L.Usage(after_school_end_h=25), "after_school_end_h", "at_most"),
    (_after_school_before_class_end, "after_school_end_h", "at_least"),
    # the room's load
    (lambda: _facility(pue=0.9), "pue", "at_least"),
    (lambda: _facility(pue=math.inf), "pue", "finite"),
    (lambda: _facility(n_servers=0), "n_servers", "integer"),
    (lambda: _facility(n_servers=1.5), "n_servers", "integer"),
    (lambda: _facility(server_max_kw=-1), "server_max_kw", "positive"),
    (lambda: _facility(idle_frac=1.5), "idle_frac", "fraction"),
    (lambda: L.it_power_kw(np.array([0.5, 1.5]), n_servers=1, server_max_kw=10, idle_frac=0.3),
     "util_frac", "fraction"),
]


@pytest.mark.parametrize(("call", "field", "rule"), BAD_INPUT)
def test_bad_input_is_refused_naming_field_and_rule(call: Callable[[], object], field: str,
                                                    rule: str) -> None:
    with pytest.raises(InputError) as err:
        call()
    assert (err.value.field, err.value.rule) == (field, rule)


def test_load_school_calendar_bad_file_names_it(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    src = Path(__file__).resolve().parents[1] / "data" / "school"
    shutil.copytree(src, tmp_path / "school")
    monkeypatch.setenv("LABKIT_DATA", str(tmp_path))
    path = tmp_path / "school" / "calendar_2026.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("2026-07-17", "2026-02-30"),
                    encoding="utf-8")
    with pytest.raises(DataError, match="calendar_2026.yaml"):
        load_school_calendar()
