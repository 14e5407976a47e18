"""Loader for the default school calendar (``data/school/calendar_<year>.yaml``)."""

from __future__ import annotations

from datetime import date
from typing import Any

from labkit.data import DataError, data_dir, get_field, load_yaml
from labkit.loadprofile import ClosedDay, Holiday, SchoolCalendar, Term
from labkit.validate import InputError

__all__ = ["DEFAULT_CALENDAR", "load_school_calendar"]

DEFAULT_CALENDAR = "school/calendar_2026.yaml"


def _entries(doc: dict[str, Any], key: str, where: str) -> list[dict[str, Any]]:
    items = get_field(doc, key, list, where=where) if key in doc else []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise DataError(f"{where}: {key}[{i}] must be a mapping, got {item!r}")
    return items


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
    try:
        doc = load_yaml(path)
    except DataError:
        raise
    except ValueError as err:  # PyYAML builds dates itself: 2026-02-30 raises here
        raise DataError(f"{data_dir() / path}: invalid value ({err})") from err
    where = path
    try:
        def term(kind: str, i: int, e: dict[str, Any]) -> Term:
            w = f"{where}: {kind}[{i}]"
            return Term(get_field(e, "name", str, where=w), get_field(e, "start", date, where=w),
                        get_field(e, "end", date, where=w))

        return SchoolCalendar(
            year=get_field(doc, "year", int, where=where),
            terms=[term("terms", i, e) for i, e in enumerate(_entries(doc, "terms", where))],
            exams=[term("exams", i, e) for i, e in enumerate(_entries(doc, "exams", where))],
            holidays=[Holiday(get_field(e, "date", date, where=f"{where}: holidays"),
                              get_field(e, "name", str, where=f"{where}: holidays"),
                              e.get("kind", "public"))
                      for e in _entries(doc, "holidays", where)],
            closures=[ClosedDay(get_field(e, "date", date, where=f"{where}: closures"),
                                get_field(e, "name", str, where=f"{where}: closures"))
                      for e in _entries(doc, "closures", where)],
            class_start_h=get_field(doc, "class_start_h", float, where=where),
            class_end_h=get_field(doc, "class_end_h", float, where=where),
            name=str(doc.get("name", "")),
            source=str(doc["source"]).strip(),
            as_of=str(doc["as_of"]),
        )
    except InputError as err:
        raise DataError(f"{where}: {err}") from err
