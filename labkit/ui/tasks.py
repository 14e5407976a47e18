"""Widget-state exercises: tasks graded on what the student DOES in a lesson's simulator.

A :class:`Task` is a predicate over a linked app's state and result ("the board holds 1 ×
3g.40gb and the most 1g.10gb beside it", "the July bill is under ₩X and only the contract
power changed"). :func:`task_set` shows each task's question, a 확인 (check) button and the
verdict: ✔ with an explanation, or ✘ with a Korean hint that says what is not met yet. Each
check is recorded like an exercise answer (:func:`labkit.data.progress.record_result`, key
``task.<key>``) for the class page.

Targets are computed by the models when the tasks are built (never typed by hand); the tasks
of every lesson are in :mod:`labkit.ui.checks` (``ui.tasks.lesson("07", room)``).

Used in: notebooks/01-09
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import ipywidgets as widgets

from labkit.data.progress import record_result
from labkit.i18n import t

__all__ = ["Task", "Verdict", "changed_fields", "check_task", "lesson", "task_set"]


@dataclass(frozen=True)
class Verdict:
    """The outcome of checking a task.

    Attributes
    ----------
    ok : bool
    hint : str
        Catalog key of the hint when not met (``task.<key>.hint`` or a shared one such as
        ``task.only``); empty when met.
    values : dict
        The hint's placeholders (what the student has now, the target).
    state : str
        A short summary of the checked state, recorded as the "answer" (≤ 40 characters).
    """

    ok: bool
    hint: str = ""
    values: Mapping[str, Any] = field(default_factory=dict)
    state: str = ""


@dataclass(frozen=True)
class Task:
    """One widget-state exercise.

    Parameters
    ----------
    key : str
        ``"07.contract"``: catalog ``task.<key>.q`` (question, with ``values``),
        ``task.<key>.done`` (the explanation once met); progress key ``task.<key>``.
    check : callable
        ``check(source) -> Verdict``: the predicate over the linked app.
    values : mapping
        The question's placeholders (the targets, formatted).
    """

    key: str
    check: Callable[[Any], Verdict]
    values: Mapping[str, Any] = field(default_factory=dict)


def changed_fields(app: Any, allowed: Iterable[str]) -> list[str]:
    """Return the keys of ``app.fields`` whose control differs from its default, outside
    ``allowed`` (a task "changing only X" is not met while this is non-empty)."""
    keep = set(allowed)
    return [k for k, f in app.fields.items() if k not in keep and f.control.value != f.default]


def check_task(task: Task, source: Any) -> Verdict:
    """Check ``task`` against ``source``; never raises over the app's state."""
    try:
        return task.check(source)
    except (ValueError, ArithmeticError, AttributeError, KeyError, TypeError):
        return Verdict(False, "task.no_result")


def _record(key: str, state: str, ok: bool) -> None:
    try:
        record_result(f"task.{key}", state, ok)
    except OSError:
        pass  # the lesson goes on without its progress line


def _one(n: int, task: Task, source: Any) -> widgets.VBox:
    slug = task.key.replace(".", "-")
    button = widgets.Button(description=t("common.check"), button_style="primary")
    button.add_class(f"lk-task-{slug}-check")
    feedback = widgets.HTML("")
    feedback.add_class(f"lk-task-{slug}-feedback")

    def on_check(*_: object) -> None:
        v = check_task(task, source)
        _record(task.key, v.state, v.ok)
        if v.ok:
            text = t("common.correct", explanation=t(f"task.{task.key}.done", **task.values))
            feedback.value = f'<span style="color:#1b7f3b">✔ {html.escape(text)}</span>'
        else:
            hint = t(v.hint or f"task.{task.key}.hint", **v.values)
            text = t("task.not_yet", hint=hint)
            feedback.value = f'<span style="color:#b00020">✘ {html.escape(text)}</span>'

    button.on_click(on_check)
    question = widgets.HTML(f"<b>{html.escape(t('task.title', n=n))}.</b> "
                            f"{html.escape(t(f'task.{task.key}.q', **task.values))}")
    box = widgets.VBox([question, button, feedback])
    box.add_class(f"lk-task-{slug}")
    return box


def task_set(tasks: Sequence[Task], source: Any) -> widgets.VBox:
    """Return a box with every task: question, 확인 button, verdict."""
    box = widgets.VBox([_one(i, task, source) for i, task in enumerate(tasks, start=1)])
    box.add_class("lk-tasks")
    return box


def lesson(lesson_id: str, source: Any) -> widgets.VBox:
    """Return the widget-state tasks of lesson ``lesson_id`` linked to its app ``source``.

    Parameters
    ----------
    lesson_id : str
        ``"02"``, ``"07"``, …
    source : lesson app
        The app the tasks are about (``board`` in 02, ``room`` in 07, …).

    Raises
    ------
    KeyError
        If the lesson has no tasks.

    Used in: notebooks/01-08
    """
    from labkit.ui.checks import TASKS

    return task_set(TASKS[lesson_id](source), source)
