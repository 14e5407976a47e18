"""Loader for the default school calendar (``data/school/calendar_<year>.yaml``)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from labkit.data import DataError, load_document
from labkit.data.schema import Day, Document, Schema, Text, one_of
from labkit.loadprofile import HOLIDAY_KINDS, ClosedDay, Holiday, SchoolCalendar, Term
from labkit.validate import InputError

__all__ = ["DEFAULT_CALENDAR", "CalendarFile", "load_school_calendar"]

DEFAULT_CALENDAR = "school/calendar_2026.yaml"


class TermEntry(Schema):
    """A term or exam week: ``name``, ``start``, ``end`` (inclusive)."""

    name: Text
    start: Day
    end: Day


class HolidayEntry(Schema):
    """A public holiday: ``date``, ``name``, ``kind`` (public | substitute | temporary)."""

    date: Day
    name: Text
    kind: Annotated[str, one_of(HOLIDAY_KINDS)] = "public"


class ClosureEntry(Schema):
    """A school-specific day off (개교기념일, 재량휴업일)."""

    date: Day
    name: Text


class CalendarFile(Document):
    """``calendar_<year>.yaml``: one school year's terms, exams, closures and holidays."""

    name: str = ""
    year: int
    class_start_h: float
    class_end_h: float
    terms: list[TermEntry] = Field(default_factory=list)
    exams: list[TermEntry] = Field(default_factory=list)
    closures: list[ClosureEntry] = Field(default_factory=list)
    holidays: list[HolidayEntry] = Field(default_factory=list)


def load_school_calendar(path: str = DEFAULT_CALENDAR) -> SchoolCalendar:
    """Load and validate a school calendar file.

    Returns
    -------
    labkit.loadprofile.SchoolCalendar
        The default: the calendar year 2026 of an example middle/high school (190 school days,
        classes 09:00-17:00, the 2026 public holidays).

    Raises
    ------
    labkit.data.DataError (a ValueError)
        Naming the file and the entry if a key is missing or mistyped or a date is invalid.

    Used in: notebooks/07_opex_lab.ipynb
    """
    doc = load_document(path, CalendarFile)
    try:
        return SchoolCalendar(
            year=doc.year,
            terms=[Term(e.name, e.start, e.end) for e in doc.terms],
            exams=[Term(e.name, e.start, e.end) for e in doc.exams],
            holidays=[Holiday(e.date, e.name, e.kind) for e in doc.holidays],
            closures=[ClosedDay(e.date, e.name) for e in doc.closures],
            class_start_h=doc.class_start_h,
            class_end_h=doc.class_end_h,
            name=doc.name,
            source=doc.source,
            as_of=doc.as_of,
        )
    except InputError as err:
        raise DataError(f"{path}: {err}") from err
