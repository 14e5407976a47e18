"""``python -m labkit.serve.teacher_docs``: write the teacher's pages in ``docs/`` from the lessons.

Writes, for the default school case on the simulated lab GPU (so the pages are the same on
every machine):

- ``docs/answer-key.md`` and ``docs/answer-key.html`` (prints on A4): every prediction, task,
  exercise and exit ticket with its answer (:mod:`labkit.ui.answer_key`);
- ``docs/lesson-plans.md``: each lesson's plan in 50-minute periods, with its measured length
  and the talking points of its "살펴볼 점" notes (``data/lessons/plans.yaml``,
  :mod:`labkit.data.plans`).

``tests/test_teacher_docs.py`` checks that the committed pages equal what this writes; rerun it
after changing a lesson's questions or answers. The pages go to ``docs/`` only: ``notebooks/`` is
what the class hub copies to every student, and the students' servers serve nothing from
``docs/``.

Used in: docs/teacher.md
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from labkit.data.plans import (
    PERIOD_MIN,
    LessonPlan,
    lesson_minutes,
    load_plans,
    notebook_outline,
)
from labkit.i18n import t
from labkit.serve.lessons import Lesson, discover

if TYPE_CHECKING:
    from labkit.ui.answer_key import LessonKey

__all__ = ["DOCS", "answer_key_pages", "default_case", "lesson_plans_page", "main"]

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
#: The simulated lab GPU the pages are made on (lesson 02's board is this model too).
SIM_GPU = "sim:H100-80GB"


@contextmanager
def default_case() -> Iterator[None]:
    """Run the body with the default school case (an empty ``$LABKIT_HOME``) on the simulated
    lab GPU, whatever this machine has saved or plugged in; restores ``$LABKIT_HOME``."""
    import labkit.gpu as gpu

    saved = os.environ.get("LABKIT_HOME")
    with tempfile.TemporaryDirectory(prefix="labkit-teacher-") as home:
        os.environ["LABKIT_HOME"] = home
        try:
            gpu.connect(SIM_GPU)
            yield
        finally:
            if saved is None:
                os.environ.pop("LABKIT_HOME", None)
            else:
                os.environ["LABKIT_HOME"] = saved


def lesson_titles(root: Path | None = None) -> dict[str, str]:
    """Return each lesson's title by number, read from the notebooks' headers."""
    return {lesson.number: lesson.title for lesson in discover(root)}


def answer_key_pages(keys: Sequence[LessonKey] | None = None) -> dict[str, str]:
    """Return the answer key's pages by file name (``answer-key.md``, ``answer-key.html``).

    ``keys`` defaults to :func:`labkit.ui.answer_key.build_key` (about a minute: every task's
    state is searched with its own check). Build them inside :func:`default_case` for the
    committed pages.
    """
    from labkit.ui.answer_key import build_key, render_html, render_markdown

    keys = build_key() if keys is None else keys
    titles = lesson_titles()
    return {"answer-key.md": render_markdown(keys, titles),
            "answer-key.html": render_html(keys, titles)}


def _cell(text: str) -> str:
    """Text for one Markdown table cell (a ``|`` would end the cell)."""
    return text.replace("|", "\\|").replace("\n", " ")


def _plan_section(lesson: Lesson, plan: LessonPlan) -> list[str]:
    measured = lesson_minutes(notebook_outline(lesson.notebook))
    out = [f"## {lesson.number}. {lesson.title}", "",
           f"- **{t('teacher.plan.periods')}**: "
           f"{t('teacher.plan.duration', n=plan.periods, minutes=plan.periods * PERIOD_MIN)}"
           f" · **{t('teacher.plan.measured')}**: "
           f"{t('teacher.plan.measured_value', minutes=measured)}",
           f"- **{t('teacher.plan.reshape')}**: {plan.reshape}", "",
           f"**{t('teacher.plan.objectives')}**", ""]
    out += [f"{i}. {goal}" for i, goal in enumerate(lesson.goals, start=1)]
    out += ["", f"**{t('teacher.plan.preparation')}**", ""]
    out += [f"- {item}" for item in plan.preparation]
    for n in range(1, plan.periods + 1):
        parts = [p for p in plan.parts if p.period == n]
        out += ["", f"### {t('teacher.plan.period', n=n)}", "",
                f"| {t('teacher.plan.phase')} | {t('teacher.plan.minutes')} | "
                f"{t('teacher.plan.sections')} | {t('teacher.plan.activity')} |",
                "|---|---|---|---|"]
        out += [f"| {p.phase} | {t('teacher.plan.minutes_value', n=p.minutes)} | "
                f"{_cell(', '.join(p.sections))} | {_cell(p.activity)} |" for p in parts]
        total = sum(p.minutes for p in parts)
        out.append(f"| **{t('teacher.plan.total')}** | "
                   f"**{t('teacher.plan.minutes_value', n=total)}** | | |")
    if plan.skipped:
        out += ["", f"**{t('teacher.plan.skipped')}**: {', '.join(plan.skipped)}"]
    if plan.extension:
        out += ["", f"**{t('teacher.plan.extension')}**", ""]
        out += [f"- {item}" for item in plan.extension]
    if plan.talking_points:
        out += ["", f"### {t('teacher.plan.talk')}", ""]
        for point in plan.talking_points:
            out += [f"**{point.section}**", ""]
            out += [f"- {t('teacher.plan.talk_ask')}: {q}" for q in point.ask]
            out += [f"- {t('teacher.plan.talk_answer')}: {point.answer}",
                    f"- {t('teacher.plan.talk_misconception')}: {point.misconception}", ""]
    while out[-1] == "":
        out.pop()
    return out


def lesson_plans_page() -> str:
    """Return ``docs/lesson-plans.md``: every lesson's plan, in lesson order.

    Raises
    ------
    labkit.data.DataError
        If ``data/lessons/plans.yaml`` is invalid.
    KeyError
        If a lesson notebook has no plan.
    """
    plans = load_plans().lessons
    out = [f"# {t('teacher.plan.title')}", "", t("teacher.plan.intro"), ""]
    for lesson in discover():
        out += [*_plan_section(lesson, plans[lesson.number]), ""]
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the teacher's pages into ``--out`` (default ``docs/``); return 0."""
    parser = argparse.ArgumentParser(prog="python -m labkit.serve.teacher_docs",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DOCS)
    args = parser.parse_args(argv)
    with default_case():
        pages = answer_key_pages()
    pages["lesson-plans.md"] = lesson_plans_page()
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in pages.items():
        (args.out / name).write_text(text, encoding="utf-8")
        print(args.out / name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
