"""A school year's hourly GPU utilization and the power the server room draws from the grid.

Pure: numbers in, numbers out; no widgets, no I/O (the default calendar is data:
``data/school/calendar_2026`` file, loaded by :func:`labkit.data.school.load_school_calendar`).

The chain, hour by hour over one calendar year (Asia/Seoul):

1. :class:`SchoolCalendar` says what each day is: a class day, an exam day, a vacation weekday,
   a weekend, a public holiday or a school closure.
2. :class:`Usage` says how busy the GPUs are on each kind of day and hour; an always-on service
   (a chatbot for the school, say) keeps a share of the capacity busy around the clock:
   ``util = always_on + (1 - always_on) x scheduled``.
3. :func:`facility_load_kw`: IT power follows utilization linearly between the idle draw and
   the maximum (``P = n x P_max x (idle + (1 - idle) x util)``) and the room draws PUE times that.

References: the linear power model and the 30 % idle default are the course's teaching
assumptions (cases, economics check case 1); PUE = facility power / IT power (The Green Grid,
"PUE: a comprehensive examination of the metric", WP#49, 2012). The class-hours-only year
(8 h x 190 days = 1,520 h, 17 % of 8,760 h) follows 초·중등교육법 시행령 제45조 (190 school days).

Used in: notebooks/07_opex_lab.ipynb
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from enum import StrEnum
from typing import Any

import numpy as np
import pandas as pd

from labkit import validate

__all__ = [
    "TZ",
    "ClosedDay",
    "DayType",
    "Holiday",
    "SchoolCalendar",
    "Term",
    "Usage",
    "class_hours_only",
    "facility_load_kw",
    "hourly_utilization",
    "it_power_kw",
    "parse_periods",
]

TZ = "Asia/Seoul"
MIN_YEAR, MAX_YEAR = 2000, 2100  # bounds the arrays a calendar sizes (one year of hours)
HOLIDAY_KINDS = ("public", "substitute", "temporary")


class DayType(StrEnum):
    """What a day is for the school (precedence: holiday > weekend > closed > exam > class)."""

    CLASS = "class"
    EXAM = "exam"
    VACATION = "vacation"
    WEEKEND = "weekend"
    HOLIDAY = "holiday"
    CLOSED = "closed"


def _as_date(field_name: str, value: Any) -> date:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    try:
        return pd.Timestamp(str(value)).date()
    except (TypeError, ValueError):
        raise validate.InputError(
            field_name, "other", value,
            f"{field_name} must be a date (YYYY-MM-DD), got {value!r}") from None


@dataclass(frozen=True)
class Term:
    """A named date range, both ends included (a term or an exam week)."""

    name: str
    start: date
    end: date

    def __post_init__(self) -> None:
        start = _as_date(f"{self.name}.start", self.start)
        end = _as_date(f"{self.name}.end", self.end)
        if end < start:
            raise validate.InputError(f"{self.name}.end", "other", str(end),
                                      f"{self.name}: end {end} is before start {start}")
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "end", end)

    def contains(self, day: date) -> bool:
        """Whether ``day`` is in the range."""
        return self.start <= day <= self.end


@dataclass(frozen=True)
class Holiday:
    """A public holiday: ``kind`` is "public", "substitute" (대체공휴일) or "temporary"."""

    day: date
    name: str
    kind: str = "public"

    def __post_init__(self) -> None:
        object.__setattr__(self, "day", _as_date(f"holidays.{self.name}", self.day))
        validate.one_of(f"holidays.{self.name}.kind", self.kind, HOLIDAY_KINDS)


@dataclass(frozen=True)
class ClosedDay:
    """A school-specific day off in a term (개교기념일, 재량휴업일): not a public holiday."""

    day: date
    name: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "day", _as_date(f"closures.{self.name}", self.day))


@dataclass(frozen=True)
class SchoolCalendar:
    """One calendar year of a school: terms, exam weeks, holidays, closures and class hours.

    Parameters
    ----------
    year : int
        The calendar year (2000-2100); the profile covers Jan 1 to Dec 31 (8,760 or 8,784 h).
    terms : sequence of Term
        Class periods; their weekdays are school days unless a holiday or closure. Must lie in
        ``year`` and not overlap.
    exams : sequence of Term, default ()
        Exam weeks; each inside a term.
    holidays : sequence of Holiday, default ()
        Public holidays in ``year`` (no duplicates).
    closures : sequence of ClosedDay, default ()
        School days off in ``year``.
    class_start_h, class_end_h : float, default 9, 17
        Class hours on school days, 0 <= start < end <= 24 (fractions allowed: 8.5 = 08:30). [h]
    name, source, as_of : str
        Provenance.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        Naming the field: a year out of range, a date outside the year, overlapping terms, an
        exam week outside the terms, a repeated holiday, class hours out of order.

    Examples
    --------
    >>> cal = SchoolCalendar(2028, [Term("1학기", date(2028, 3, 2), date(2028, 7, 18))])
    >>> cal.hours_in_year
    8784

    Used in: notebooks/07_opex_lab.ipynb
    """

    year: int
    terms: Sequence[Term]
    exams: Sequence[Term] = ()
    holidays: Sequence[Holiday] = ()
    closures: Sequence[ClosedDay] = ()
    class_start_h: float = 9.0
    class_end_h: float = 17.0
    name: str = ""
    source: str = ""
    as_of: str = ""
    _day_types: tuple[DayType, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        year = validate.integer("year", self.year, minimum=MIN_YEAR)
        validate.at_most("year", year, MAX_YEAR, str(MAX_YEAR))
        first, last = date(year, 1, 1), date(year, 12, 31)

        def inside(field_name: str, day: date) -> None:
            if not first <= day <= last:
                raise validate.InputError(field_name, "other", str(day),
                                          f"{field_name}: {day} is not in {year}")

        terms = tuple(sorted(self.terms, key=lambda t: t.start))
        for t in terms:
            inside("terms", t.start)
            inside("terms", t.end)
        for a, b in itertools.pairwise(terms):
            if b.start <= a.end:
                raise validate.InputError("terms", "other", b.name,
                                          f"terms {a.name} and {b.name} overlap")
        exams = tuple(sorted(self.exams, key=lambda t: t.start))
        for e in exams:
            if not any(t.contains(e.start) and t.contains(e.end) for t in terms):
                raise validate.InputError(
                    "exams", "other", e.name,
                    f"exam week {e.name} ({e.start}-{e.end}) is not in a term")
        holidays = tuple(sorted(self.holidays, key=lambda h: h.day))
        seen: set[date] = set()
        for h in holidays:
            inside("holidays", h.day)
            if h.day in seen:
                raise validate.InputError("holidays", "other", str(h.day),
                                          f"holiday {h.day} is listed twice")
            seen.add(h.day)
        closures = tuple(sorted(self.closures, key=lambda c: c.day))
        for c in closures:
            inside("closures", c.day)
        start_h = validate.finite("class_start_h", self.class_start_h)
        end_h = validate.finite("class_end_h", self.class_end_h)
        if not 0 <= start_h < end_h <= 24:
            raise validate.InputError("class_end_h", "other", end_h,
                                      f"class hours must satisfy 0 <= start < end <= 24, "
                                      f"got {start_h:g}-{end_h:g}")
        for name, value in (("year", year), ("terms", terms), ("exams", exams),
                            ("holidays", holidays), ("closures", closures),
                            ("class_start_h", start_h), ("class_end_h", end_h)):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_day_types", self._classify())

    # -- days ---------------------------------------------------------------------------------
    @property
    def days_in_year(self) -> int:
        """365 or 366."""
        return (date(self.year + 1, 1, 1) - date(self.year, 1, 1)).days

    @property
    def hours_in_year(self) -> int:
        """8,760 or 8,784. [h]"""
        return 24 * self.days_in_year

    def _classify(self) -> tuple[DayType, ...]:
        holidays = {h.day for h in self.holidays}
        closed = {c.day for c in self.closures}
        out = []
        day = date(self.year, 1, 1)
        for _ in range(self.days_in_year):
            if day in holidays:
                kind = DayType.HOLIDAY
            elif day.weekday() >= 5:
                kind = DayType.WEEKEND
            elif not any(t.contains(day) for t in self.terms):
                kind = DayType.VACATION
            elif day in closed:
                kind = DayType.CLOSED
            elif any(e.contains(day) for e in self.exams):
                kind = DayType.EXAM
            else:
                kind = DayType.CLASS
            out.append(kind)
            day += timedelta(days=1)
        return tuple(out)

    def day_types(self) -> pd.Series:
        """Return each day's :class:`DayType`, indexed by date (Jan 1 to Dec 31)."""
        index = pd.date_range(f"{self.year}-01-01", periods=self.days_in_year, freq="D")
        return pd.Series([str(d) for d in self._day_types], index=index, name="day_type")

    def count(self, *kinds: DayType | str) -> int:
        """Return how many days of the year are of the given kinds."""
        wanted = {DayType(k) for k in kinds}
        return sum(1 for d in self._day_types if d in wanted)

    @property
    def school_days(self) -> int:
        """Class days plus exam days (수업일수 within this calendar year). [d]"""
        return self.count(DayType.CLASS, DayType.EXAM)

    @property
    def class_hours_per_day(self) -> float:
        """class_end_h - class_start_h. [h]"""
        return self.class_end_h - self.class_start_h

    def holiday_dates(self, kinds: Iterable[str] = ("public", "substitute")) -> list[date]:
        """Return the dates of the holidays of the given kinds (for the tariff's holiday band)."""
        wanted = set(kinds)
        return [h.day for h in self.holidays if h.kind in wanted]


def parse_periods(field_name: str, text: str, *, max_lines: int = 50) -> list[Term]:
    """Parse editable text, one period a line: ``2026-03-03 ~ 2026-07-17 1학기``.

    A single date (``2026-05-04 재량휴업일``) is a one-day period. Blank lines and lines
    starting with ``#`` are skipped.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        Naming ``field_name``: a line that does not start with a date or range, an impossible
        date, an end before its start, or more than ``max_lines`` periods.
    """
    pattern = re.compile(r"^\s*(\d{4}-\d{1,2}-\d{1,2})\s*(?:[~–-]\s*(\d{4}-\d{1,2}-\d{1,2}))?"
                         r"\s*(.*)$")
    terms: list[Term] = []
    for lineno, line in enumerate(str(text).splitlines(), start=1):
        if not line.strip() or line.strip().startswith("#"):
            continue
        if len(terms) >= max_lines:
            raise validate.InputError(field_name, "at_most", len(terms) + 1,
                                      f"{field_name}: at most {max_lines} lines", limit=max_lines)
        match = pattern.match(line)
        if not match:
            raise validate.InputError(field_name, "other", line.strip()[:40],
                                      f"{field_name} line {lineno}: expected "
                                      f"'YYYY-MM-DD ~ YYYY-MM-DD name', got {line.strip()!r}")
        start = _as_date(field_name, match.group(1))
        end = _as_date(field_name, match.group(2)) if match.group(2) else start
        name = match.group(3).strip() or f"{field_name} {lineno}"
        try:
            terms.append(Term(name, start, end))
        except validate.InputError as err:
            raise validate.InputError(field_name, err.rule, err.value,
                                      f"{field_name} line {lineno}: {err}") from None
    return terms


@dataclass(frozen=True)
class Usage:
    """How busy the GPUs are, by kind of day and hour (fractions of the cluster's capacity).

    Parameters
    ----------
    class_frac : float, default 0.8
        In class hours on class days. [fraction, 0-1]
    exam_frac : float, default 0.2
        In class hours on exam days. [fraction, 0-1]
    after_school_frac : float, default 0.2
        On school days from the end of classes to ``after_school_end_h`` (clubs, homework).
        [fraction, 0-1]
    after_school_end_h : float, default 21
        When after-school use stops (>= the calendar's class end, <= 24). [h]
    vacation_frac : float, default 0.1
        In class hours on vacation weekdays (research, teacher training). [fraction, 0-1]
    always_on_frac : float, default 0.05
        The share of the capacity an always-on service keeps busy at every hour. [fraction, 0-1]

    All defaults are teaching assumptions, to be replaced by a school's own plan or
    measurements.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        Naming the field for a fraction outside [0, 1] or a bad hour.

    Used in: notebooks/07_opex_lab.ipynb
    """

    class_frac: float = 0.8
    exam_frac: float = 0.2
    after_school_frac: float = 0.2
    after_school_end_h: float = 21.0
    vacation_frac: float = 0.1
    always_on_frac: float = 0.05

    def __post_init__(self) -> None:
        for name in ("class_frac", "exam_frac", "after_school_frac", "vacation_frac",
                     "always_on_frac"):
            object.__setattr__(self, name,
                               validate.fraction(name, getattr(self, name), allow_zero=True))
        end = validate.at_most("after_school_end_h", self.after_school_end_h, 24, "24")
        object.__setattr__(self, "after_school_end_h", validate.non_negative(
            "after_school_end_h", end))


def class_hours_only(always_on_frac: float = 0.0) -> Usage:
    """Return the "GPUs run only in class hours" usage: busy in class hours of school days.

    Class and exam days at 1.0 in class hours, nothing else (plus an optional always-on share):
    8 h x 190 days = 1,520 h, 17 % of the year.
    """
    return Usage(class_frac=1.0, exam_frac=1.0, after_school_frac=0.0, vacation_frac=0.0,
                 always_on_frac=always_on_frac)


def _hour_overlap(start_h: float, end_h: float) -> np.ndarray:
    """Fraction of each hour 0..23 that lies in [start_h, end_h)."""
    h = np.arange(24, dtype=float)
    return np.clip(np.minimum(h + 1, end_h) - np.maximum(h, start_h), 0.0, 1.0)


def hourly_utilization(calendar: SchoolCalendar, usage: Usage) -> pd.DataFrame:
    """Return the year's hourly GPU utilization from the calendar and the usage plan.

    Parameters
    ----------
    calendar : SchoolCalendar
    usage : Usage

    Returns
    -------
    pandas.DataFrame, shape (8760 or 8784, 3)
        Indexed by the start of each hour (tz-aware, Asia/Seoul), columns ``util_frac`` (share
        of the capacity busy) [fraction], ``scheduled_frac`` (the part the school's own
        schedule uses, excluding the always-on service) [fraction] and ``day_type``.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        If ``usage.after_school_end_h`` is before the end of classes.

    Used in: notebooks/07_opex_lab.ipynb
    """
    if not isinstance(calendar, SchoolCalendar):
        raise validate.InputError("calendar", "other", type(calendar).__name__,
                                  "calendar must be a SchoolCalendar")
    if not isinstance(usage, Usage):
        raise validate.InputError("usage", "other", type(usage).__name__,
                                  "usage must be a Usage")
    if usage.after_school_end_h < calendar.class_end_h:
        raise validate.InputError(
            "after_school_end_h", "at_least", usage.after_school_end_h,
            f"after_school_end_h ({usage.after_school_end_h:g}) must be >= the end of classes "
            f"({calendar.class_end_h:g})", limit=calendar.class_end_h)
    in_class = _hour_overlap(calendar.class_start_h, calendar.class_end_h)
    after = _hour_overlap(calendar.class_end_h, usage.after_school_end_h)
    profiles = {
        DayType.CLASS: usage.class_frac * in_class + usage.after_school_frac * after,
        DayType.EXAM: usage.exam_frac * in_class + usage.after_school_frac * after,
        DayType.VACATION: usage.vacation_frac * in_class,
    }
    zero = np.zeros(24)
    scheduled = np.concatenate([profiles.get(d, zero) for d in calendar._day_types])
    util = usage.always_on_frac + (1 - usage.always_on_frac) * scheduled
    index = pd.date_range(f"{calendar.year}-01-01", periods=calendar.hours_in_year, freq="h",
                          tz=TZ, name="hour")
    day_type = np.repeat(np.array([str(d) for d in calendar._day_types]), 24)
    return pd.DataFrame({"util_frac": util, "scheduled_frac": (1 - usage.always_on_frac)
                         * scheduled, "day_type": day_type}, index=index)


def it_power_kw(util_frac: Any, *, n_servers: int, server_max_kw: float,
                idle_frac: float) -> Any:
    """Return IT power at a utilization: ``n x P_max x (idle + (1 - idle) x util)``.

    Parameters
    ----------
    util_frac : float, numpy array or pandas Series
        Utilization, each in [0, 1]. [fraction]
    n_servers : int
        Servers in the room, >= 1. [servers]
    server_max_kw : float
        One server's maximum draw (10.2 kW for a DGX H100, NVIDIA DGX H100 user guide). [kW]
    idle_frac : float
        Idle draw as a fraction of the maximum (0.30 teaching default; measure yours).
        [fraction, 0-1]

    Returns
    -------
    same type as ``util_frac``
        IT power. [kW]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For a non-integer or < 1 ``n_servers``, ``server_max_kw`` <= 0, ``idle_frac`` outside
        [0, 1], or a utilization outside [0, 1] or not finite.
    """
    n = validate.integer("n_servers", n_servers, minimum=1)
    p_max = validate.positive("server_max_kw", server_max_kw)
    idle = validate.fraction("idle_frac", idle_frac, allow_zero=True)
    u = np.asarray(util_frac, dtype=float)
    if not np.isfinite(u).all() or (u < 0).any() or (u > 1).any():
        bad = u[~(np.isfinite(u) & (u >= 0) & (u <= 1))].ravel()[0]
        raise validate.InputError("util_frac", "fraction", float(bad),
                                  f"util_frac must be in [0, 1], got {bad!r}", limit="[0, 1]")
    return n * p_max * (idle + (1 - idle) * util_frac)


def facility_load_kw(util_frac: pd.Series, *, n_servers: int, server_max_kw: float,
                     idle_frac: float, pue: float) -> pd.Series:
    """Return the room's hourly draw from the grid: IT power x PUE.

    Parameters
    ----------
    util_frac : pandas.Series
        Hourly utilization (``hourly_utilization(...)["util_frac"]``). [fraction]
    n_servers, server_max_kw, idle_frac
        As in :func:`it_power_kw`.
    pue : float
        Power usage effectiveness = facility power / IT power, >= 1 (small school room
        1.5-2.0; LBNL small server rooms 2013; Uptime Institute 2024 survey average 1.56).

    Returns
    -------
    pandas.Series
        Facility power, same index. [kW]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        ``pue`` < 1 or not finite (rule ``at_least``), and the errors of :func:`it_power_kw`.

    Used in: notebooks/07_opex_lab.ipynb
    """
    p = validate.finite("pue", pue)
    if p < 1:
        raise validate.InputError("pue", "at_least", pue, f"pue must be >= 1, got {pue!r}",
                                  limit=1.0)
    if not isinstance(util_frac, pd.Series):
        raise validate.InputError("util_frac", "other", type(util_frac).__name__,
                                  "util_frac must be a pandas Series")
    it = it_power_kw(util_frac, n_servers=n_servers, server_max_kw=server_max_kw,
                     idle_frac=idle_frac)
    return (it * p).rename("facility_kw")
