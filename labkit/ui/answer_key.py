"""The teacher's answer key: every prediction, task, exercise and exit ticket of lessons 01-09.

Nothing here is typed twice. Each lesson's apps are built as its notebook builds them
(:data:`LESSONS`; ``tests/test_answer_key.py`` checks the table against the notebooks' own
calls), and every entry is read from the objects the lesson grades with:

- an exercise (:class:`~labkit.ui.exercises.Exercise`): its ``answer``, ``unit`` and
  ``tolerance``, the question (``<key>.q``) and the worked computation (``<key>.explain``); the
  answer is written so that :func:`labkit.ui.exercises.grade` marks the written text ✔ (a test
  grades every one);
- a prediction (:data:`labkit.ui.checks.PREDICTIONS`): the simulator's value at the lesson's
  defaults (``Prediction.actual``), the "close" band and the reflection (``.why``);
- a task (:data:`labkit.ui.checks.TASKS`): the question with the targets the check computes, and
  what it explains once met (``.done``);
- lesson 01's wall exercise (:data:`labkit.observe.SITUATIONS`): the panels the rubric requires
  and those it refuses.

The values depend on the school case the lessons read (``labkit.data.school.load_case``);
the committed pages in ``docs/`` are made for the default case
(``python -m labkit.serve.teacher_docs``).
The key is for the teacher: it is written to ``docs/``, never to ``notebooks/`` (which the hub
copies to every student).

Used in: docs/answer-key.md, docs/answer-key.html (labkit.serve.teacher_docs)
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from labkit.i18n import t
from labkit.ui import format as fmt

__all__ = ["LESSONS", "KeyItem", "LessonKey", "LessonSources", "answer_text", "build_key",
           "lesson_key", "render_html", "render_markdown"]


@dataclass(frozen=True)
class LessonSources:
    """How a lesson's notebook builds what its checks are about.

    Attributes
    ----------
    predict_source : callable or None
        Builds the app the prediction is linked to (``ui.predict.ask(<it>, key)``); None where
        the notebook passes None (a prediction about the school case itself).
    task_source : callable
        Builds the app the tasks check (``ui.tasks.lesson(NN, <it>)``).
    exercises : tuple of callable
        The notebook's exercise boxes (``ui.goodput.exercises()``), in order; each returns a
        box with ``.exercises``.
    wall : bool
        Whether the lesson shows the "what goes on the wall" exercise (lesson 01).
    shared : bool
        True where the prediction and the tasks use one app (the notebook assigns it once).
    exit_ticket : callable or None
        The lesson's exit-ticket box (``ui.exit_ticket.lesson(NN)``), None where it has none.
    """

    predict_source: Callable[[], Any] | None
    task_source: Callable[[], Any]
    exercises: tuple[Callable[[], Any], ...] = ()
    wall: bool = False
    shared: bool = True
    exit_ticket: Callable[[], Any] | None = None


def _ui() -> Any:
    import labkit.ui as ui

    return ui


def _curves() -> Any:
    ui = _ui()
    return ui.economics.cost_curves_app(ui.economics.cluster_app())


#: Each lesson's apps and exercise boxes, as its notebook builds them (the test reads the
#: notebooks' ``ui.predict.ask``, ``ui.tasks.lesson`` and exercise calls against this table).
LESSONS: dict[str, LessonSources] = {
    "01": LessonSources(None, lambda: _ui().observe.replay_app(), wall=True, shared=False),
    "02": LessonSources(lambda: _ui().mig.board_app("H100-80GB"),
                        lambda: _ui().mig.board_app("H100-80GB"),
                        (lambda: _ui().mig.exercises(),)),
    "03": LessonSources(lambda: _ui().goodput.worksheet_app(),
                        lambda: _ui().goodput.worksheet_app(),
                        (lambda: _ui().goodput.exercises(),)),
    "04": LessonSources(None, lambda: _ui().reliability.interval_app(),
                        (lambda: _ui().reliability.exercises(),), shared=False),
    "05": LessonSources(_curves, _curves, (lambda: _ui().economics.exercises_05(),)),
    "06": LessonSources(lambda: _ui().benchmarks.claim_app(),
                        lambda: _ui().benchmarks.claim_app(),
                        (lambda: _ui().benchmarks.exercises_06(),)),
    "07": LessonSources(lambda: _ui().opex.room_app(), lambda: _ui().opex.room_app(),
                        (lambda: _ui().opex.exercises(),)),
    "08": LessonSources(lambda: _ui().orchestration.school_day_app(),
                        lambda: _ui().orchestration.school_day_app(),
                        (lambda: _ui().orchestration.exercises(),)),
    "09": LessonSources(lambda: _ui().capstone.decision_app(),
                        lambda: _ui().capstone.decision_app()),
}



def _exit_ticket(number: str) -> Callable[[], Any]:
    return lambda: _ui().exit_ticket.lesson(number)


for _number, _sources in LESSONS.items():  # every lesson ends with its exit ticket
    LESSONS[_number] = replace(_sources, exit_ticket=_exit_ticket(_number))


@dataclass(frozen=True)
class KeyItem:
    """One entry of the answer key (all text Korean, plain: no markup).

    Attributes
    ----------
    kind : str
        ``"predict"``, ``"task"``, ``"exercise"``, ``"wall"`` (lesson 01) or ``"exit"``.
    key : str
        The progress key the class page lists (``"goodput.ex1"``, ``"predict.03.goodput"``).
    label : str
        What the lesson calls it ("예측", "실습 과제 1", "문제 2").
    question : str
        The question as the student reads it (targets filled in).
    answer : str
        The answer as a student would write it (for an exercise: a text graded ✔).
    tolerance : str
        What the check accepts around the answer ("± 0.05 %", "정확히", for a prediction the
        "close" band; it is never graded).
    working : str
        The worked computation or the reason (the lesson's own explanation).
    """

    kind: str
    key: str
    label: str
    question: str
    answer: str
    tolerance: str
    working: str


@dataclass(frozen=True)
class LessonKey:
    """The answer key of one lesson: its number and entries in the order the lesson asks them."""

    number: str
    items: tuple[KeyItem, ...]


_TAG = re.compile(r"<[^>]+>")


def _plain(text: str) -> str:
    return html.unescape(_TAG.sub("", text)).strip()


def answer_text(exercise: Any) -> str:
    """Return an exercise's answer as a student writes it, which its grader marks ✔.

    People's format (:func:`labkit.ui.format.quantity`) with the fewest significant digits
    :func:`labkit.ui.exercises.grade` accepts: a question asking for one decimal place gets
    ``5.2배``, not the model's ``5.168배`` (:func:`computed_text` gives that one); a value
    exact in four digits is written whole (``81.25 %``).

    Raises
    ------
    ValueError
        If no written form within 12 significant digits is graded correct (a lesson's bug).
    """
    from labkit.answers import read_quantity
    from labkit.ui.exercises import grade

    for sig in range(1, 5):  # an exact short value stays as it is (81.25 %, not 81.2 %)
        text = fmt.quantity(exercise.answer, exercise.unit, sig=sig)
        if (math.isclose(read_quantity(text, exercise.unit).value, exercise.answer,
                         rel_tol=1e-9, abs_tol=1e-12) and grade(exercise, text).ok):
            return text
    for sig in range(1, 13):
        text = fmt.quantity(exercise.answer, exercise.unit, sig=sig)
        if grade(exercise, text).ok:
            return text
    raise ValueError(f"{exercise.key}: no written answer within 12 digits is graded correct")


def computed_text(exercise: Any, written: str | None = None) -> str | None:
    """Return the model's value behind an answer when :func:`answer_text` (or ``written``,
    its result when the caller has it) rounds it (4 significant digits, ``"5.168배"``), else
    None."""
    computed = fmt.quantity(exercise.answer, exercise.unit, sig=4)
    shown = answer_text(exercise) if written is None else written
    return None if _digits(computed) == _digits(shown) else computed


def _digits(text: str) -> str:
    return re.sub(r"[^0-9.]", "", text).rstrip("0").rstrip(".")


def _tolerance(exercise: Any, written: str) -> str:
    if exercise.tolerance == 0:
        return t("teacher.key.exact")
    band = t("teacher.key.plus_minus", value=fmt.quantity(exercise.tolerance, exercise.unit,
                                                          sig=3))
    computed = computed_text(exercise, written)
    return band if computed is None else t("teacher.key.computed", value=computed, band=band)


def _exercise_items(boxes: Sequence[Any], kind: str = "exercise") -> list[KeyItem]:
    items = []
    n = 0
    for box in boxes:
        for ex in box.exercises:
            n += 1
            written = answer_text(ex)
            items.append(KeyItem(
                kind, ex.key, t("common.exercise", n=n) if kind == "exercise"
                else t("teacher.key.exit_label", n=n),
                _plain(t(f"{ex.key}.q")), written, _tolerance(ex, written),
                _plain(t(f"{ex.key}.explain"))))
    return items


def _prediction_item(number: str, source: Any) -> KeyItem | None:
    from labkit.ui.checks import PREDICTIONS
    from labkit.ui.predict import _shown

    pred = next((p for p in PREDICTIONS.values() if p.key.startswith(f"{number}.")), None)
    if pred is None:
        return None
    values = {k: f(source) for k, f in pred.extra.items()}
    actual = pred.actual(source)
    if actual is None:
        raise ValueError(f"prediction {pred.key}: the app has no result at its defaults")
    if isinstance(actual, str):
        answer = t(f"predict.{pred.key}.choice.{actual}")
        band = t("teacher.key.predict_choice")
    else:
        answer = _shown(float(actual), pred.unit)
        band = t("teacher.key.predict_close", pct=f"{pred.close_frac * 100:g}")
    return KeyItem("predict", f"predict.{pred.key}", t("teacher.key.predict_label"),
                   _plain(t(f"predict.{pred.key}.q", **values)), answer, band,
                   _plain(t(f"predict.{pred.key}.why")))


# --- tasks: a state that meets each task, found by the task's own check ------------------------

Assignment = dict[str, Any]


def _grid(start: float, stop: float, step: float) -> list[float]:
    """``start, start ± step, …`` up to ``stop`` (inclusive; descending if stop < start)."""
    n = round(abs(stop - start) / step)
    sign = 1 if stop >= start else -1
    return [round(start + sign * i * step, 9) for i in range(n + 1)]


def _options(app: Any, key: str) -> list[Any]:
    return [o[1] if isinstance(o, tuple) else o for o in app.fields[key].control.options]


def _search_03(app: Any, key: str) -> list[Assignment]:
    if key == "03.straggler":
        return [{"straggler": v} for v in _grid(app.fields["straggler"].control.value, 0, 1)]
    return [{loss: 0.0} for loss in app.loss_keys]


def _search_04(app: Any, key: str) -> list[Assignment]:
    from labkit.ui.checks.goodput_reliability import _big_mtbf_h

    base: Assignment = ({"mtbf_h": _big_mtbf_h(app)} if key == "04.interval"
                        else {"async_write": True})
    return [{**base, "interval_min": v} for v in _grid(1, 300, 1)]


def _search_05(app: Any, key: str) -> list[Assignment]:
    if key == "05.utilization":
        return [{"utilization": v} for v in _grid(100, 5, 1)]
    half = app.fields["api_price_usd_per_m"].default / 2
    return [{"api_price_usd_per_m": half, "utilization": v} for v in _grid(5, 100, 1)]


def _search_06(app: Any, _key: str) -> list[Assignment]:
    return [{"claimant": c} for c in _options(app, "claimant")]


def _search_07(app: Any, key: str) -> list[Assignment]:
    if key == "07.contract":
        return [{"contract_auto": False, "contract_kw": v} for v in _grid(1, 100, 1)]
    family = app.fields["tariff_class"].default.split(" 선택")[0]  # the task's own family
    return [{"tariff_class": c, "school_exception": e}
            for c in _options(app, "tariff_class") if c.startswith(family)
            for e in (False, True)]


def _search_08(app: Any, key: str) -> list[Assignment]:
    pre = (True, False) if key == "08.wait" else (False,)
    return [{"policy": p, "placement": m, "preemption": x} for x in pre
            for p in _options(app, "policy") for m in _options(app, "placement")]


def _search_09(app: Any, key: str) -> list[Assignment]:
    if key == "09.api":
        return [{"api_usd_per_m_tokens": v} for v in _grid(0.6, 0.05, 0.05)]
    return [{"always_on_frac": v} for v in _grid(5, 100, 5)] + [
        {"always_on_frac": 100.0, "after_school_frac": v} for v in _grid(20, 100, 5)]


#: Where to look for a state that meets each lesson's tasks: the controls the task lets the
#: student change, over their range (a search space, not an answer: the task's own check picks).
SEARCH: dict[str, Callable[[Any, str], list[Assignment]]] = {
    "03": _search_03, "04": _search_04, "05": _search_05, "06": _search_06,
    "07": _search_07, "08": _search_08, "09": _search_09,
}


def _shown_value(app: Any, key: str, value: Any) -> str:
    control = app.fields[key].control
    if isinstance(value, bool):
        return t("teacher.key.on" if value else "teacher.key.off")
    for option in getattr(control, "options", ()):
        if isinstance(option, tuple) and option[1] == value:
            return str(option[0])
    if isinstance(value, (int, float)):
        return fmt.quantity(float(value), app.fields[key].unit)
    return str(value)


def solve_task(task: Any, app: Any, candidates: Sequence[Assignment]) -> Assignment | None:
    """Return the first assignment of control values under which ``task``'s own check is met
    (the app is reset before each and left reset), or None.

    Raises
    ------
    KeyError
        If an assignment names a control the app does not have.
    """
    from labkit.ui.tasks import check_task

    found = None
    for values in candidates:
        app.reset()
        for key, value in values.items():
            app.fields[key].control.value = value
        app.flush()
        if check_task(task, app).ok:
            found = values
            break
    app.reset()
    app.flush()
    return found


def _replay_answer(task: Any, replay: Any) -> str | None:
    """Lesson 01: the first moment of the replay's time slider the task's check accepts."""
    from labkit.ui.tasks import check_task

    start = replay.time.value
    try:
        for k in range(replay.time.max + 1):
            replay.time.value = k
            if check_task(task, replay).ok:
                return t("teacher.key.replay_at", t=fmt.readable(replay.position()[1]))
    finally:
        replay.time.value = start
    return None


def _task_answer(number: str, task: Any, app: Any) -> str:
    if number == "01":
        moment = _replay_answer(task, app)
        if moment is None:
            raise ValueError(f"task {task.key}: no moment of the replay meets its check")
        return moment
    search = SEARCH.get(number)
    if search is None or not hasattr(app, "reset"):
        return t("teacher.key.task_answer")
    found = solve_task(task, app, search(app, task.key))
    if found is None:
        raise ValueError(f"task {task.key}: no state in its search space meets its check")
    shown = ", ".join(f"{_plain(app.fields[k].label.value)} = {_shown_value(app, k, v)}"
                      for k, v in found.items())
    return t("teacher.key.task_example", state=shown)


def _task_items(number: str, source: Any) -> list[KeyItem]:
    from labkit.ui.checks import TASKS

    items = []
    for n, task in enumerate(TASKS[number](source), start=1):
        answer = _task_answer(number, task, source)
        check = ("teacher.key.task_check" if number in SEARCH or number == "01"
                 else "teacher.key.task_check_generic")
        items.append(KeyItem(
            "task", f"task.{task.key}", t("task.title", n=n),
            _plain(t(f"task.{task.key}.q", **task.values)), answer, t(check),
            _plain(t(f"task.{task.key}.done", **task.values))))
    return items


def _wall_items() -> list[KeyItem]:
    from labkit.observe import SITUATIONS, WALL_MAX_PANELS

    items = []
    for key, rubric in SITUATIONS.items():
        def names(panels: Sequence[str]) -> str:
            return ", ".join(t(f"observe.panel.{p}") for p in panels)

        answer = t("teacher.key.wall_answer", essential=names(rubric.essential),
                   misleading=names(rubric.misleading) or "-")
        items.append(KeyItem(
            "wall", f"observe.wall.{key}", _plain(t(f"observe.wall.{key}.title")),
            _plain(t(f"observe.wall.{key}.q")), answer,
            t("teacher.key.wall_check", n=WALL_MAX_PANELS),
            _plain(t(f"observe.wall.{key}.explain"))))
    return items


def lesson_key(number: str) -> LessonKey:
    """Return lesson ``number``'s answer key, its apps built as the notebook builds them.

    Parameters
    ----------
    number : str
        ``"01"`` … ``"09"`` (a key of :data:`LESSONS`).

    Raises
    ------
    KeyError
        If the lesson is not in :data:`LESSONS`.
    ValueError
        If an app has no result at its defaults, or an exercise's answer cannot be written so
        that it is graded correct (both are a lesson's bug).
    """
    sources = LESSONS[number]
    task_source = sources.task_source()
    if sources.predict_source is None:
        predict_source = None
    elif sources.shared:
        predict_source = task_source
    else:
        predict_source = sources.predict_source()
    items: list[KeyItem] = []
    pred = _prediction_item(number, predict_source)
    if pred is not None:
        items.append(pred)
    items += _task_items(number, task_source)
    if sources.wall:
        items += _wall_items()
    items += _exercise_items([make() for make in sources.exercises])
    if sources.exit_ticket is not None:
        items += _exercise_items([sources.exit_ticket()], kind="exit")
    return LessonKey(number, tuple(items))


def build_key(numbers: Sequence[str] | None = None) -> list[LessonKey]:
    """Return the answer key of every lesson in :data:`LESSONS` (or of ``numbers``), in order."""
    return [lesson_key(n) for n in (numbers or sorted(LESSONS))]


_KIND_KEYS = ("predict", "task", "wall", "exercise", "exit")


def render_markdown(keys: Sequence[LessonKey], titles: dict[str, str]) -> str:
    """Return the answer key as a Markdown page (``docs/answer-key.md``).

    ``titles`` maps a lesson number to its title (the notebook's ``# NN. 제목``).
    """
    out = [f"# {t('teacher.key.title')}", "", t("teacher.key.intro"), ""]
    for lesson in keys:
        out += [f"## {lesson.number}. {titles.get(lesson.number, '')}".rstrip(), ""]
        for kind in _KIND_KEYS:
            items = [i for i in lesson.items if i.kind == kind]
            if not items:
                continue
            out += [f"### {t(f'teacher.key.kind.{kind}')}", ""]
            for item in items:
                out += [f"**{item.label}.** {item.question}", "",
                        f"- {t('teacher.key.answer')}: **{item.answer}** ({item.tolerance})",
                        f"- {t('teacher.key.working')}: {item.working}",
                        f"- {t('teacher.key.record')}: `{item.key}`", ""]
    return "\n".join(out).rstrip() + "\n"


_CSS = """
@page { size: A4; margin: 16mm 14mm; }
body { font-family: "Noto Sans CJK KR", "Noto Sans KR", "Malgun Gothic", sans-serif;
       font-size: 10.5pt; line-height: 1.45; color: #111; max-width: 182mm; margin: 0 auto; }
h1 { font-size: 17pt; margin: 0 0 4mm; }
h2 { font-size: 13.5pt; border-bottom: 1.5pt solid #333; margin: 7mm 0 2mm;
     break-before: page; }
h2.first { break-before: auto; }
h3 { font-size: 11pt; margin: 4mm 0 1mm; color: #333; }
table { border-collapse: collapse; width: 100%; break-inside: auto; }
td, th { border: 0.5pt solid #999; padding: 1.2mm 1.8mm; vertical-align: top; text-align: left; }
th { background: #eee; }
tr { break-inside: avoid; }
td.answer { font-weight: 700; width: 26%; }
.key { color: #666; font-size: 8.5pt; }
p.intro { color: #333; }
"""


def render_html(keys: Sequence[LessonKey], titles: dict[str, str]) -> str:
    """Return the answer key as one HTML file that prints on A4 (``docs/answer-key.html``).

    Self-contained (no script, font or image loaded from anywhere): a school network may have
    no internet. One lesson per printed page group (``break-before: page``).
    """
    esc = html.escape
    out = ['<!DOCTYPE html>', '<html lang="ko"><head><meta charset="utf-8">',
           f"<title>{esc(t('teacher.key.title'))}</title>", f"<style>{_CSS}</style>",
           "</head><body>", f"<h1>{esc(t('teacher.key.title'))}</h1>",
           f'<p class="intro">{esc(t("teacher.key.intro"))}</p>']
    head = (f"<tr><th>{esc(t('teacher.key.question'))}</th><th>{esc(t('teacher.key.answer'))}"
            f"</th><th>{esc(t('teacher.key.working'))}</th></tr>")
    for i, lesson in enumerate(keys):
        cls = ' class="first"' if i == 0 else ""
        title = f"{lesson.number}. {titles.get(lesson.number, '')}".rstrip()
        out.append(f"<h2{cls}>{esc(title)}</h2>")
        for kind in _KIND_KEYS:
            items = [it for it in lesson.items if it.kind == kind]
            if not items:
                continue
            out += [f"<h3>{esc(t(f'teacher.key.kind.{kind}'))}</h3>", f"<table>{head}"]
            for it in items:
                out.append(
                    f"<tr><td><b>{esc(it.label)}.</b> {esc(it.question)}"
                    f'<div class="key">{esc(it.key)}</div></td>'
                    f'<td class="answer">{esc(it.answer)}<div class="key">{esc(it.tolerance)}'
                    f"</div></td><td>{esc(it.working)}</td></tr>")
            out.append("</table>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
