"""The exercise results a student's own server reports, checked before the class page shows them.

Each checked answer is written by the student's own server into their own home
(:mod:`labkit.data.progress`): the student owns both and can write any line there. So the
teacher's page counts a record only if it could have come from a lesson
(:func:`reported_results`):

- its exercise is one the lessons ask (:func:`known_exercises`: a catalog key with a question,
  ``<key>.q``, under a known lesson);
- its fields have the types the lessons write: a prediction is never graded (``correct``
  null), a task is met or not (a bool), an exercise is right, wrong or not a number;
- its time is an ISO 8601 time no later than the hub's clock (plus :data:`CLOCK_SKEW_S`);
- one entry per exercise: the newest verdict, in the order first tried.

What a student can still forge: a well-formed record of a real exercise with
``"correct": true`` (they own their server and its files); the page shows the results as
"학생 서버가 보고한 결과" (what the student's server reported) for that reason.
:func:`exercise_title` names each exercise in Korean ("3강 문제 1") for the page.
"""

from __future__ import annotations

import datetime as _dt
import functools
import re
from collections.abc import Mapping
from typing import Any

from labkit.i18n import t

__all__ = ["CLOCK_SKEW_S", "LESSON_OF", "checked_records", "exercise_title", "known_exercises",
           "lesson_of", "parse_when", "reported_results"]

#: The lesson of each exercise-key prefix (the notebooks that show them: ``notebooks/NN_*``);
#: ``predict.NN.*`` and ``task.NN.*`` keys name their lesson themselves.
LESSON_OF = {"observe": "01", "mig": "02", "goodput": "03", "reliability": "04",
             "econ.ex05": "05", "econ.check": "06", "econ.racks": "06", "econ.ex06": "06",
             "opex": "07", "orch": "08"}
#: A student's clock may run ahead of the hub's by this much before a record counts as from the
#: future (school PCs and servers synchronise with NTP; a few minutes covers a stray one). [s]
CLOCK_SKEW_S = 300
_MAX_ANSWER = 40  # labkit.data.progress cuts answers to 40 characters


@functools.cache
def known_exercises() -> frozenset[str]:
    """Return every checked exercise, prediction and task key of the lessons.

    They are the catalog keys with a question (``<key>.q``: :class:`labkit.ui.exercises.Exercise`,
    ``predict.NN.*``, ``task.NN.*``, the exit tickets ``exit.NN.*``) under a known lesson.
    """
    from labkit.i18n.ko import KO

    return frozenset(k[:-2] for k in KO if k.endswith(".q") and _lesson(k[:-2]))


def _lesson(key: str) -> str | None:
    parts = key.split(".")
    if parts[0] in ("predict", "task", "exit") and len(parts) == 3 and parts[1].isdigit():
        return parts[1]
    for prefix, lesson in LESSON_OF.items():
        if key.startswith(prefix + ".") or key.startswith(prefix + "_"):
            return lesson
    return None


def exercise_title(key: str) -> str:
    """Return the Korean name of a lesson's exercise for the class page ("03강 문제 1").

    Numbered exercises (``goodput.ex1``, ``econ.ex05_2``) are "NN강 문제 n"; predictions and
    tasks "NN강 예측" / "NN강 실습 과제: <the question's start>"; the others their catalog title
    or the question's start. An unknown key is returned as it is.
    """
    from labkit.i18n.ko import KO

    lesson = _lesson(key)
    question = KO.get(f"{key}.q")
    if lesson is None or question is None:
        return key
    last = key.rsplit(".", 1)[-1]
    number = last.rsplit("_", 1)[-1] if "_" in last else last.removeprefix("ex")
    if last.startswith("ex") and number.isdigit():
        return t("hub.class.ex.numbered", lesson=int(lesson), n=int(number))
    short = KO.get(f"{key}.title") or _short(question)
    kind = key.split(".", 1)[0]
    which = kind if kind in ("predict", "task", "exit") else "other"
    return t(f"hub.class.ex.{which}", lesson=int(lesson), what=short)


def _short(question: str, width: int = 24) -> str:
    plain = re.sub(r"<[^>]*>|\{[^}]*\}", "", question).strip()
    return plain if len(plain) <= width else plain[:width].rstrip() + "…"


def parse_when(text: Any) -> _dt.datetime | None:
    """An ISO 8601 time as JupyterHub and the progress records write it (``Z`` allowed) in UTC
    when it has no zone; None for anything else."""
    if not isinstance(text, str) or not text:
        return None
    try:
        when = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=_dt.UTC)


def _valid_record(rec: object, known: frozenset[str],
                  now: _dt.datetime | None) -> tuple[str, _dt.datetime, bool | None] | None:
    """Return (exercise, time, verdict) of a well-formed record, None for a forged-looking one."""
    if not isinstance(rec, Mapping):
        return None
    key, correct, when = rec.get("exercise"), rec.get("correct"), parse_when(rec.get("time"))
    answer = rec.get("answer", "")
    if not isinstance(key, str) or key not in known or when is None:
        return None
    if not isinstance(answer, str) or len(answer) > _MAX_ANSWER:
        return None
    if now is not None and when > now + _dt.timedelta(seconds=CLOCK_SKEW_S):
        return None
    kind = key.split(".", 1)[0]
    if kind == "predict":  # a prediction is never graded (labkit.ui.predict)
        ok = correct is None
    elif kind == "task":  # a task is met or not (labkit.ui.tasks)
        ok = isinstance(correct, bool)
    else:  # an exercise: right, wrong, or not a number (labkit.ui.exercises)
        ok = correct is None or isinstance(correct, bool)
    return (key, when, correct if isinstance(correct, bool) else None) if ok else None


def reported_results(report: Mapping[str, Any], now: _dt.datetime | None = None
                     ) -> tuple[int, int, tuple[tuple[str, bool | None], ...], int]:
    """Return what a student's server reported, checked: (tried, solved, verdicts, left out).

    Parameters
    ----------
    report : mapping
        The ``/labkit/progress`` document (``results``: a list of records).
    now : datetime, optional
        The hub's time (UTC); records dated after it (plus :data:`CLOCK_SKEW_S`) are left out.

    Returns
    -------
    (int, int, tuple of (str, bool or None), int)
        Exercises and tasks tried (predictions are listed but not counted: they are never
        graded), of those solved at least once, each exercise's newest verdict in the order
        first tried, and how many records were left out.
    """
    known = known_exercises()
    records = report.get("results")
    kept = []
    rejected = 0
    for i, rec in enumerate(records if isinstance(records, list) else ()):
        valid = _valid_record(rec, known, now)
        if valid is None:
            rejected += 1
        else:
            kept.append((valid[1], i, valid[0], valid[2]))
    latest: dict[str, bool | None] = {}
    solved: set[str] = set()
    # by time: one entry per exercise, in the order first tried, holding the newest verdict
    for _time, _i, key, verdict in sorted(kept, key=lambda k: (k[0], k[1])):
        latest[key] = verdict
        if verdict:
            solved.add(key)
    # a prediction is a guess, never graded: listed, not counted as an exercise tried (the
    # teacher's trial read a locked prediction as "0/1 정답")
    graded = [key for key in latest if not key.startswith("predict.")]
    return len(graded), len(solved), tuple(latest.items()), rejected


def lesson_of(key: str) -> str | None:
    """Return the lesson ("03") an exercise key belongs to, None for a key of no lesson."""
    return _lesson(key)


def checked_records(report: Mapping[str, Any], now: _dt.datetime | None = None
                    ) -> list[tuple[str, _dt.datetime, bool | None, str]]:
    """Return the report's well-formed records, oldest first: (exercise, time, verdict, answer).

    The same check as :func:`reported_results` (known exercise, the lessons' types, no time
    after ``now`` plus :data:`CLOCK_SKEW_S`); every attempt is kept, with what the student typed.
    """
    known = known_exercises()
    records = report.get("results")
    kept = []
    for i, rec in enumerate(records if isinstance(records, list) else ()):
        valid = _valid_record(rec, known, now)
        if valid is not None:
            kept.append((valid[1], i, valid[0], valid[2], str(rec.get("answer", ""))))
    return [(key, when, verdict, answer)
            for when, _i, key, verdict, answer in sorted(kept, key=lambda k: (k[0], k[1]))]
