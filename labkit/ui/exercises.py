"""Exercises (문제) with typed answers checked against the lesson's own model.

Each lesson defines its exercises as :class:`Exercise` values whose ``answer`` is computed by the
pure model (never typed in by hand), and shows them with :func:`exercise_set`. On the class hub
each checked answer is also recorded in the student's own home (``labkit.data.progress``) for the
teacher's class page.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import ipywidgets as widgets

from labkit.data.progress import record_result
from labkit.ui.messages import t

__all__ = ["Exercise", "check_answer", "exercise_set", "parse_number"]

_STRIP = re.compile(r"[,\s%원배분초hH]|GPU|장")


@dataclass(frozen=True)
class Exercise:
    """One question with a numeric answer.

    Parameters
    ----------
    key : str
        Catalog prefix: ``<key>.q`` (question), ``<key>.hint``, ``<key>.explain``.
    answer : float
        The expected answer, in the unit the question asks for.
    tolerance : float
        Accepted absolute difference (e.g. 0.05 for "one decimal place").
    unit : str
        Unit shown after the answer box.
    """

    key: str
    answer: float
    tolerance: float
    unit: str = ""


def parse_number(text: str) -> float:
    """Parse a typed answer: ``"86.1"``, ``"86.1 %"``, ``"5,201"``, ``"100h"``, ``"53.7분"``.

    Raises
    ------
    ValueError
        If what is left is not a finite number.
    """
    cleaned = _STRIP.sub("", str(text))
    value = float(cleaned)  # raises ValueError on garbage
    if not math.isfinite(value):
        raise ValueError(f"not a finite number: {text!r}")
    return value


def check_answer(exercise: Exercise, text: str) -> tuple[bool | None, str]:
    """Return (correct?, Korean feedback) for a typed answer; ``None`` if it is not a number."""
    try:
        value = parse_number(text)
    except ValueError:
        return None, t("common.not_a_number", value=str(text)[:40])
    ok = abs(value - exercise.answer) <= exercise.tolerance
    if ok:
        return True, t("common.correct", explanation=t(f"{exercise.key}.explain"))
    return False, t("common.incorrect", hint=t(f"{exercise.key}.hint"))


def _record(ex: Exercise, answer: str, ok: bool | None) -> None:
    """Record the checked answer for the teacher's class page (class hub only; never fails)."""
    try:
        record_result(ex.key, answer, ok)
    except OSError:
        pass  # the lesson goes on without its progress line (e.g. a full or read-only home)


def _one(n: int, ex: Exercise) -> widgets.Widget:
    slug = ex.key.replace(".", "-")
    answer = widgets.Text(placeholder=t("common.answer_placeholder"),
                          layout=widgets.Layout(width="160px"))
    answer.add_class(f"lk-{slug}-answer")
    button = widgets.Button(description=t("common.check"))
    button.add_class(f"lk-{slug}-check")
    feedback = widgets.HTML("")
    feedback.add_class(f"lk-{slug}-feedback")

    def on_check(*_: object) -> None:
        ok, text = check_answer(ex, answer.value)
        _record(ex, answer.value, ok)
        color = {True: "#1b7f3b", False: "#b00020", None: "#b00020"}[ok]
        mark = {True: "✔", False: "✘", None: "⚠"}[ok]
        feedback.value = f'<span style="color:{color}">{mark} {text}</span>'

    button.on_click(on_check)
    question = widgets.HTML(f"<b>{t('common.exercise', n=n)}.</b> {t(f'{ex.key}.q')}")
    return widgets.VBox([question, widgets.HBox([answer, widgets.HTML(ex.unit), button]), feedback])


def exercise_set(exercises: Sequence[Exercise]) -> widgets.VBox:
    """Return a box with every exercise: question, answer box, check button, feedback."""
    box = widgets.VBox([_one(i, ex) for i, ex in enumerate(exercises, start=1)])
    box.add_class("lk-exercises")
    return box
