"""The lesson plans (``data/lessons/plans.yaml``) and the measured length of each notebook.

A plan gives a lesson its periods (차시) of :data:`PERIOD_MIN` minutes each: preparation
(the objectives are the notebook's own 학습 목표, read from it), and each period in timed
parts — 도입, 예측, 실험, 문제, 정리 (:data:`PHASES`, in that order) — that name the
notebook's sections (its ``##`` headings) and add up to the period.
Each plan also holds the talking points for the notebook's "살펴볼 점" notes (what to ask, the
expected answer, the misconception it targets).

:func:`load_plans` validates the file: every period's minutes add up to :data:`PERIOD_MIN`, its
phases come in :data:`PHASES` order, each at least once; a problem raises
:class:`labkit.data.DataError` naming the file, the lesson and the period.

:func:`notebook_outline` reads a lesson notebook's sections and :func:`measured_minutes` says
how long each takes in class by one stated rule (:data:`READ_CHARS_PER_MIN`, :data:`CELL_MIN`),
so that a plan's claim "this fits one period" is checked against the notebook, not asserted.

Used in: docs/lesson-plans.md (labkit.serve.teacher_docs), tests/test_data_plans.py
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import Field, model_validator

from labkit.data import DataError, load_document
from labkit.data.schema import Document, PositiveInt, Schema, Text, one_of

__all__ = ["CELL_MIN", "PERIOD_MIN", "PHASES", "READ_CHARS_PER_MIN", "LessonPlan", "Part",
           "PlansFile", "Section", "TalkingPoint", "load_plans", "measured_minutes",
           "notebook_outline"]

PATH = "lessons/plans.yaml"
#: One high-school period (차시) [min]: 교육부 고시 제2022-33호 「초·중등학교 교육과정」 총론,
#: 고등학교 편제와 시간 배당 기준("1회 수업 시간은 50분을 원칙으로").
PERIOD_MIN = 50
#: The timed parts of a period, in order: hook/question, prediction, experiment, exercises, wrap-up.
PHASES = ("도입", "예측", "실험", "문제", "정리")
#: How fast a class goes through a lesson's prose with the teacher [Korean characters per min]
#: (teaching assumption: about half of silent reading speed for technical Korean text, since
#: the teacher reads and explains; 국립국어원 reading-speed surveys give ~600-800 per min silent).
READ_CHARS_PER_MIN = 300
#: Class minutes per kind of code cell (teaching assumption, from the course team's trials):
#: an app the class moves (slider, tabs), a prediction box, a box of tasks or exercises (3-5
#: questions answered and checked), an exit ticket (2-3 short questions), a number table read
#: aloud, and the page's own furniture.
CELL_MIN: Mapping[str, float] = {"app": 4.0, "predict": 2.0, "box": 8.0, "ticket": 3.0,
                                  "table": 1.0, "none": 0.0}

_Phase = Annotated[str, one_of(PHASES)]


class Part(Schema):
    """One timed part of a period: its phase, minutes, the notebook sections and what happens."""

    period: PositiveInt
    phase: _Phase
    minutes: PositiveInt
    sections: list[Text] = Field(default_factory=list)
    activity: Text


class TalkingPoint(Schema):
    """What to say and ask at one "살펴볼 점" of a section."""

    section: Text
    ask: list[Text] = Field(min_length=1, max_length=2)
    answer: Text
    misconception: Text


class LessonPlan(Schema):
    """The plan of one lesson (``lessons.<NN>``).

    ``reshape`` says how the lesson was fitted to its periods (split, trimmed, extended);
    ``extension`` lists planned activities beyond the notebook; ``skipped`` names the notebook
    sections left out of class time (homework reading), so that every section is accounted for.
    """

    periods: PositiveInt
    preparation: list[Text] = Field(min_length=1)
    reshape: Text
    parts: list[Part] = Field(min_length=len(PHASES))
    extension: list[Text] = Field(default_factory=list)
    skipped: list[Text] = Field(default_factory=list)
    talking_points: list[TalkingPoint] = Field(default_factory=list)

    @model_validator(mode="after")
    def _periods_add_up(self) -> LessonPlan:
        for n in range(1, self.periods + 1):
            parts = [p for p in self.parts if p.period == n]
            total = sum(p.minutes for p in parts)
            if total != PERIOD_MIN:
                raise ValueError(f"period {n}: minutes add up to {total}, not {PERIOD_MIN}")
            order = [PHASES.index(p.phase) for p in parts]
            if order != sorted(order) or set(order) != set(range(len(PHASES))):
                raise ValueError(f"period {n}: phases must be {'→'.join(PHASES)} in order, "
                                 f"each at least once, got {[p.phase for p in parts]}")
        stray = sorted({p.period for p in self.parts} - set(range(1, self.periods + 1)))
        if stray:
            raise ValueError(f"parts of period {stray[0]}, but the plan has {self.periods}")
        return self


class PlansFile(Document):
    """``plans.yaml``: one plan per lesson number (``"01"`` … ``"09"``)."""

    lessons: dict[Annotated[str, Field(pattern=r"^\d\d$")], LessonPlan]


def load_plans(path: str | os.PathLike[str] = PATH) -> PlansFile:
    """Load and validate the lesson plans.

    Raises
    ------
    labkit.data.DataError
        Naming the file and the key path (``lessons.03``: "period 1: minutes add up to 45, not
        50") if a plan is missing a field, its periods do not add up or its phases are out of
        order.
    """
    return load_document(path, PlansFile)


@dataclass(frozen=True)
class Section:
    """One ``##`` section of a lesson notebook.

    Attributes
    ----------
    title : str
        The heading without ``## `` (``"1. 한 달의 장부"``); ``""`` for the header before it.
    chars : int
        Characters of markdown prose in the section.
    cells : tuple of str
        The kind of each code cell (a key of :data:`CELL_MIN`), in order.
    notes : int
        How many "살펴볼 점" notes it holds.
    """

    title: str
    chars: int
    cells: tuple[str, ...]
    notes: int


_NOTE = "살펴볼 점"


def _cell_kind(source: str) -> str:
    if "NBVAL_CHECK_OUTPUT" in source:
        return "table"
    if "ui.predict.ask" in source:
        return "predict"
    if "ui.exit_ticket.lesson" in source:
        return "ticket"
    if re.search(r"ui\.(tasks\.lesson|exit_ticket\.lesson|[a-z_.]+\.exercises(_\d\d)?\(|"
                 r"observe\.wall_exercise)", source):
        return "box"
    if re.fullmatch(r"\s*(import labkit\.ui as ui\s*ui\.setup\(\)|ui\.school\.card\(.*\)|\w+)\s*",
                    source, re.DOTALL):
        return "none"  # the imports, the school card, or a name that shows an app built above
    return "app"


def notebook_outline(path: str | os.PathLike[str]) -> list[Section]:
    """Return a lesson notebook's sections in order (the header before the first ``##`` first).

    Raises
    ------
    labkit.data.DataError
        If the file is not a notebook (names the file).
    """
    try:
        book = json.loads(Path(path).read_text(encoding="utf-8"))
        cells = book["cells"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise DataError(f"{path}: not a readable notebook ({err})") from err
    sections: list[Section] = []
    title, chars, kinds, notes = "", 0, list[str](), 0
    for cell in cells:
        source = "".join(cell.get("source", ""))
        if cell.get("cell_type") != "markdown":
            kinds.append(_cell_kind(source))
            continue
        for line in source.splitlines():
            if line.startswith("## "):
                sections.append(Section(title, chars, tuple(kinds), notes))
                title, chars, kinds, notes = line[3:].strip(), 0, [], 0
            else:
                chars += len(line.strip())
                notes += line.count(_NOTE)
    sections.append(Section(title, chars, tuple(kinds), notes))
    return sections


def measured_minutes(section: Section) -> float:
    """Return a section's class time by the stated rule. [min]

    ``chars / READ_CHARS_PER_MIN + Σ CELL_MIN[cell]`` (see :data:`READ_CHARS_PER_MIN` and
    :data:`CELL_MIN` for the assumptions and their source).
    """
    return section.chars / READ_CHARS_PER_MIN + sum(CELL_MIN[k] for k in section.cells)


def lesson_minutes(outline: Sequence[Section]) -> int:
    """Return a whole lesson's measured class time, rounded up to a minute. [min]"""
    return math.ceil(sum(measured_minutes(s) for s in outline))
