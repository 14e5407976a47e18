"""The class's results as a CSV file that Excel opens in Korean (the class page's export).

One row per student, lesson and exercise (each exercise, prediction and task the student's server
reported, :func:`labkit.hub.results.checked_records`): the student, the lesson, the exercise's
Korean name, its kind, the last answer typed, its verdict, how many times it was tried and when
it was last checked (Korea time). A student with nothing reported gets one row that says so, so
the file lists the whole roster. The teacher's own row is left out.

Excel reads a CSV as the system's ANSI code page (CP949 on a Korean Windows) unless the file
starts with a UTF-8 byte-order mark; :func:`results_csv` writes one (``utf-8-sig``) and CRLF
line ends (RFC 4180).

References
----------
.. [1] RFC 4180, "Common Format and MIME Type for CSV Files" (CRLF records, quoted fields).
.. [2] Microsoft Support, "Opening CSV UTF-8 files correctly in Excel": a UTF-8 CSV needs the BOM.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
from collections.abc import Mapping, Sequence
from typing import Any
from zoneinfo import ZoneInfo

from labkit.data.roster import RosterLike
from labkit.hub.results import checked_records, exercise_title, lesson_of
from labkit.i18n import t

__all__ = ["COLUMNS", "KOREA", "csv_rows", "results_csv"]

#: The columns, as catalog keys (``hub.csv.col.<name>``).
COLUMNS = ("username", "student", "lesson", "exercise", "kind", "answer", "verdict", "tries",
           "when")
#: The school's clock (the lessons are taught in Korea; KST has no daylight saving time).
KOREA = ZoneInfo("Asia/Seoul")


def _kind(key: str) -> str:
    first = key.split(".", 1)[0]
    return t(f"hub.csv.kind.{first if first in ('predict', 'task') else 'exercise'}")


def _verdict(key: str, ok: bool | None) -> str:
    if key.startswith("predict."):
        return t("hub.csv.verdict.guess")
    return t("hub.csv.verdict.right" if ok else "hub.csv.verdict.wrong" if ok is False
             else "hub.csv.verdict.not_number")


def csv_rows(roster: Sequence[RosterLike], reports: Mapping[str, Mapping[str, Any] | str],
             admins: Sequence[str] = (), *, now: _dt.datetime | None = None
             ) -> list[list[str]]:
    """Return the CSV's rows (header first) for each roster student, in roster order.

    Parameters
    ----------
    roster : sequence of RosterEntry (or any RosterLike)
    reports : mapping of str to dict or str
        Each student's ``/labkit/progress`` document (or the Korean reason it is missing), as
        the class page holds them.
    admins : sequence of str
        The teacher(s): left out.
    now : datetime, optional
        The hub's time (UTC): records dated later are left out.

    Returns
    -------
    list of list of str
        Within a student, lessons in order, then exercises in the order first tried.
    """
    rows = [[t(f"hub.csv.col.{c}") for c in COLUMNS]]
    for entry in roster:
        if entry.username in admins:
            continue
        name = entry.display_name or entry.username
        report = reports.get(entry.username)
        latest: dict[str, tuple[_dt.datetime, bool | None, str]] = {}
        tries: dict[str, int] = {}
        for key, when, ok, answer in (checked_records(report, now)
                                      if isinstance(report, Mapping) else ()):
            latest[key] = (when, ok, answer)
            tries[key] = tries.get(key, 0) + 1
        if not latest:
            why = report if isinstance(report, str) else t("hub.csv.nothing")
            rows.append([entry.username, name, "", "", "", "", why, "0", ""])
            continue
        for key in sorted(latest, key=lambda k: lesson_of(k) or ""):  # stable: first tried
            when, ok, answer = latest[key]
            rows.append([entry.username, name, t("hub.csv.lesson", n=int(lesson_of(key) or 0)),
                         exercise_title(key), _kind(key), answer, _verdict(key, ok),
                         str(tries[key]),
                         when.astimezone(KOREA).strftime("%Y-%m-%d %H:%M")])
    return rows


def results_csv(roster: Sequence[RosterLike], reports: Mapping[str, Mapping[str, Any] | str],
                admins: Sequence[str] = (), *, now: _dt.datetime | None = None) -> bytes:
    """Return :func:`csv_rows` as the bytes of a CSV file: UTF-8 with a BOM, CRLF line ends."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    for row in csv_rows(roster, reports, admins, now=now):
        # a cell starting with = + - @ is a formula to Excel: a student's answer is text
        writer.writerow(["'" + c if c[:1] in ("=", "+", "-", "@") and not _number(c) else c
                         for c in row])
    return out.getvalue().encode("utf-8-sig")


def _number(text: str) -> bool:
    try:
        float(text.replace(",", ""))
    except ValueError:
        return False
    return True
