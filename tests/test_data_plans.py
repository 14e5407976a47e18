"""The lesson plans (data/lessons/plans.yaml) fit their periods and name the notebooks' sections.

- Every lesson notebook has a plan; every period's parts add up to 50 minutes in the order
  도입 → 예측 → 실험 → 문제 → 정리; every part names real ``##`` sections of its notebook, and
  every section is in some part or listed as skipped (nothing silently dropped).
- Honest length: the measured minutes (labkit.data.plans.measured_minutes) of the sections a
  period first names fit in that period; a lesson claims no more periods than it needs plus one.
- The notebook's own "소요 시간" line and the gallery card say the plan's periods.
- Every "살펴볼 점" note of a notebook has its talking point in the plan.
- A broken plan fails to load with a DataError naming the lesson and the period.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from labkit.data import DataError, data_dir
from labkit.data import plans as plans_data
from labkit.data.plans import (
    CELL_MIN,
    PERIOD_MIN,
    PHASES,
    READ_CHARS_PER_MIN,
    load_plans,
    measured_minutes,
    notebook_outline,
)
from labkit.i18n import t

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = {p.name[:2]: p for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))}


@pytest.fixture(scope="module")
def plans() -> dict[str, plans_data.LessonPlan]:
    return dict(load_plans().lessons)


def test_every_lesson_notebook_has_a_plan(plans: dict[str, plans_data.LessonPlan]) -> None:
    assert sorted(plans) == sorted(NOTEBOOKS)


@pytest.mark.parametrize("number", sorted(NOTEBOOKS))
def test_every_period_adds_up_to_50_minutes_in_phase_order(
        plans: dict[str, plans_data.LessonPlan], number: str) -> None:
    plan = plans[number]
    for n in range(1, plan.periods + 1):
        parts = [p for p in plan.parts if p.period == n]
        assert sum(p.minutes for p in parts) == 50
        assert sorted({p.phase for p in parts}, key=PHASES.index) == list(PHASES)
    assert {p.period for p in plan.parts} == set(range(1, plan.periods + 1))


@pytest.mark.parametrize("number", sorted(NOTEBOOKS))
def test_every_part_names_real_sections_and_every_section_is_planned(
        plans: dict[str, plans_data.LessonPlan], number: str) -> None:
    plan = plans[number]
    headings = [s.title for s in notebook_outline(NOTEBOOKS[number]) if s.title]
    for part in plan.parts:
        assert part.sections, f"{number} period {part.period} {part.phase}: names no section"
        for section in part.sections:
            assert section in headings, f"{number}: no section '## {section}' in the notebook"
    named = {s for p in plan.parts for s in p.sections}
    assert set(plan.skipped) <= set(headings)
    assert not named & set(plan.skipped), f"{number}: a skipped section is also taught"
    assert set(headings) - named - set(plan.skipped) == set(), f"{number}: unplanned sections"


@pytest.mark.parametrize("number", sorted(NOTEBOOKS))
def test_each_period_fits_what_its_sections_measure(
        plans: dict[str, plans_data.LessonPlan], number: str) -> None:
    """A section counts in the first period that names it; the header counts in period 1."""
    plan = plans[number]
    outline = {s.title: s for s in notebook_outline(NOTEBOOKS[number])}
    first: dict[str, int] = {}
    for part in sorted(plan.parts, key=lambda p: p.period):
        for section in part.sections:
            first.setdefault(section, part.period)
    for n in range(1, plan.periods + 1):
        load = sum(measured_minutes(outline[s]) for s, p in first.items() if p == n)
        if n == 1:
            load += measured_minutes(outline[""])
        assert load <= PERIOD_MIN, f"{number} period {n}: {load:.1f} min of content in 50"
    total = sum(measured_minutes(s) for title, s in outline.items() if title not in plan.skipped)
    assert plan.periods <= math.ceil(total / PERIOD_MIN) + 1, f"{number}: {total:.0f} min"


@pytest.mark.parametrize("number", sorted(NOTEBOOKS))
def test_notebook_and_gallery_say_the_plans_periods(
        plans: dict[str, plans_data.LessonPlan], number: str) -> None:
    from labkit.serve.server import gallery_entries

    plan = plans[number]
    want = t("teacher.plan.duration", n=plan.periods, minutes=plan.periods * PERIOD_MIN)
    header = "".join(json.loads(NOTEBOOKS[number].read_text(encoding="utf-8"))
                     ["cells"][0]["source"])
    assert f"**소요 시간**: {want}\n" in header
    card = next(c for c in gallery_entries(ROOT / "notebooks") if c["number"] == number)
    assert card["duration"] == want


def test_notebook_outline_reads_sections_cells_and_notes(tmp_path: Path) -> None:
    book = {"cells": [
        {"cell_type": "markdown", "source": ["# 99. 제목\n", "소개 열 글자입니다."]},
        {"cell_type": "code", "source": ["import labkit.ui as ui\n", "\n", "ui.setup()"]},
        {"cell_type": "markdown", "source": ["## 1. 첫 절\n", "abc"]},
        {"cell_type": "code", "source": ["app = ui.x.app()\n", "ui.predict.ask(app, 'k')"]},
        {"cell_type": "code", "source": ["app"]},
        {"cell_type": "code", "source": ["# NBVAL_CHECK_OUTPUT\n", "ui.x.numbers()"]},
        {"cell_type": "markdown", "source": ["**살펴볼 점**: 보세요.\n", "\n", "## 2. 둘째 절"]},
        {"cell_type": "code", "source": ["ui.x.slider_app(app)"]},
        {"cell_type": "code", "source": ["ui.tasks.lesson('99', app)"]},
        {"cell_type": "code", "source": ["ui.x.exercises()"]},
        {"cell_type": "code", "source": ["ui.exit_ticket.lesson('99')"]},
    ]}
    path = tmp_path / "99_x.ipynb"
    path.write_text(json.dumps(book, ensure_ascii=False), encoding="utf-8")
    head, one, two = notebook_outline(path)
    assert (head.title, head.cells) == ("", ("none",))
    assert head.chars == len("# 99. 제목") + len("소개 열 글자입니다.")
    assert (one.title, one.cells, one.notes) == ("1. 첫 절", ("predict", "none", "table"), 1)
    assert one.chars == 3 + len("**살펴볼 점**: 보세요.")
    assert (two.title, two.cells, two.notes) == ("2. 둘째 절", ("app", "box", "box", "ticket"), 0)
    # the rule, written out: prose at READ_CHARS_PER_MIN plus each cell's minutes
    assert measured_minutes(one) == pytest.approx(one.chars / READ_CHARS_PER_MIN + 2 + 0 + 1)
    assert measured_minutes(two) == pytest.approx(CELL_MIN["app"] + 2 * 8 + 3)


def test_notebook_outline_refuses_a_file_that_is_not_a_notebook(tmp_path: Path) -> None:
    path = tmp_path / "01_x.ipynb"
    path.write_text("not json", encoding="utf-8")
    with pytest.raises(DataError, match="01_x.ipynb"):
        notebook_outline(path)


BROKEN = [
    ("{period: 1, phase: 도입, minutes: 5,", "{period: 1, phase: 도입, minutes: 6,",
     r"lessons\.03.*period 1: minutes add up to 51, not 50"),
    ("{period: 1, phase: 도입, minutes: 5,", "{period: 1, phase: 정리, minutes: 5,",
     r"lessons\.03.*period 1: phases must be"),
    ("{period: 1, phase: 도입, minutes: 5,", "{period: 1, phase: 소개, minutes: 5,",
     r"lessons\.03\.parts\[0\]\.phase must be one of"),
    ("{period: 1, phase: 도입, minutes: 5,", "{period: 2, phase: 도입, minutes: 5,",
     r"lessons\.03.*period 1"),
    ("    periods: 1\n    reshape: >-", "    periods: 1\n    reshap: >-",
     r"lessons\.03\.reshape is missing"),
]


@pytest.mark.parametrize(("old", "new", "message"), BROKEN, ids=[b[2][:30] for b in BROKEN])
def test_a_broken_plan_names_lesson_and_period(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               old: str, new: str, message: str) -> None:
    shutil.copytree(data_dir(), tmp_path / "data")
    monkeypatch.setenv("LABKIT_DATA", str(tmp_path / "data"))
    path = tmp_path / "data" / "lessons" / "plans.yaml"
    text = path.read_text(encoding="utf-8")
    start = text.index('  "03":')
    assert old in text[start:], f"plans.yaml no longer holds {old!r}: update the case"
    path.write_text(text[:start] + text[start:].replace(old, new, 1), encoding="utf-8")
    with pytest.raises(DataError, match=message):
        load_plans()


@pytest.mark.parametrize("number", sorted(NOTEBOOKS))
def test_every_note_to_look_at_has_its_talking_point(
        plans: dict[str, plans_data.LessonPlan], number: str) -> None:
    """Each "살펴볼 점" of a section has one talking point (question, answer, misconception)."""
    notes = {s.title: s.notes for s in notebook_outline(NOTEBOOKS[number]) if s.notes}
    points: dict[str, int] = {}
    for point in plans[number].talking_points:
        points[point.section] = points.get(point.section, 0) + 1
        assert point.ask and all(q.endswith("?") for q in point.ask), point.section
    assert points == notes
