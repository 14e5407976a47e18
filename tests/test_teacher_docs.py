"""The teacher's pages in docs/: generated from the lessons, and what the lessons grade with.

- The committed ``docs/answer-key.md``, ``docs/answer-key.html`` and ``docs/lesson-plans.md`` are
  exactly what ``python -m labkit.serve.teacher_docs`` writes (rerun it after changing a lesson
  or ``data/lessons/plans.yaml``).
- The answer key's table of apps (:data:`labkit.ui.answer_key.LESSONS`) is the notebooks' own:
  each notebook's cells are read and run (imports and app assignments in order, then its
  ``ui.predict.ask``, ``ui.tasks.lesson`` and exercise calls), and the key's prediction value,
  task questions and exercise answers must equal what the notebook's own boxes hold.
- Every exercise answer the key writes is graded ✔ by the lesson's grader, and a value just past
  the tolerance is graded ✘ (so the key's answer is the one the ✔ means, not just near it).
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest

from labkit.i18n import t
from labkit.serve import teacher_docs
from labkit.ui import answer_key
from labkit.ui.exercises import Exercise, grade
from tests.test_lessons_exercises import NOTEBOOKS, read_lesson

ROOT = Path(__file__).resolve().parents[1]
_EXERCISE_CALL = re.compile(r"^ui\.[a-z_]+\.(exercises(_\d\d)?|lesson)$")


@pytest.fixture(scope="module")
def keys() -> dict[str, answer_key.LessonKey]:
    with teacher_docs.default_case():
        return {k.number: k for k in answer_key.build_key()}


@pytest.fixture(scope="module")
def pages(keys: dict[str, answer_key.LessonKey]) -> dict[str, str]:
    with teacher_docs.default_case():
        return teacher_docs.answer_key_pages(list(keys.values()))


@pytest.mark.parametrize("name", ["answer-key.md", "answer-key.html"])
def test_committed_answer_key_is_what_the_generator_writes(pages: dict[str, str],
                                                           name: str) -> None:
    committed = (ROOT / "docs" / name).read_text(encoding="utf-8")
    assert committed == pages[name], f"docs/{name} is stale: python -m labkit.serve.teacher_docs"


def test_committed_lesson_plans_are_what_the_generator_writes() -> None:
    committed = (ROOT / "docs" / "lesson-plans.md").read_text(encoding="utf-8")
    assert committed == teacher_docs.lesson_plans_page(), (
        "docs/lesson-plans.md is stale: python -m labkit.serve.teacher_docs")


def test_answer_key_html_prints_on_a4_and_loads_nothing(pages: dict[str, str]) -> None:
    page = pages["answer-key.html"]
    assert "@page { size: A4" in page
    assert not re.search(r"<(script|link|img)\b|src=|url\(", page)


def test_answer_key_names_every_lesson_and_every_question_of_the_catalog(
        keys: dict[str, answer_key.LessonKey]) -> None:
    """Every prediction, task and exercise key the class page knows has an entry."""
    from labkit.hub.results import known_exercises

    listed = {item.key for k in keys.values() for item in k.items}
    assert sorted(keys) == [f"{n:02d}" for n in range(1, 10)]
    # the MLPerf checklist rows (econ.check.*, econ.racks.*) are a table, not questions
    asked = {k for k in known_exercises() if not k.startswith(("econ.check.", "econ.racks."))}
    assert asked - listed == set()


def _notebook_boxes(notebook: Path) -> tuple[list[Any], list[Any], list[Any]]:
    """The notebook's prediction boxes, task boxes and exercise boxes, built by its own cells."""
    lesson = read_lesson(notebook)
    book = json.loads(notebook.read_text(encoding="utf-8"))
    calls = []
    for cell in book["cells"]:
        if cell["cell_type"] != "code":
            continue
        for node in ast.walk(ast.parse("".join(cell["source"]))):
            if (isinstance(node, ast.Call) and _EXERCISE_CALL.match(ast.unparse(node.func))
                    and ast.unparse(node.func) != "ui.tasks.lesson"):
                calls.append(ast.unparse(node))
    namespace: dict[str, Any] = {}
    exec(compile(ast.Module(body=lesson.setup, type_ignores=[]), str(notebook), "exec"),
         namespace)
    return ([eval(src, namespace) for _c, src in lesson.asks],
            [eval(src, namespace) for _c, src in lesson.tasks],
            [eval(src, namespace) for src in calls])


def _text(html_widget: Any) -> str:
    return answer_key._plain(html_widget.value)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda nb: nb.stem)
def test_answer_key_is_built_from_the_notebooks_own_apps(
        notebook: Path, keys: dict[str, answer_key.LessonKey]) -> None:
    from labkit.ui.predict import _shown

    key = keys[notebook.name[:2]]
    with teacher_docs.default_case():
        asks, task_boxes, exercise_boxes = _notebook_boxes(notebook)
        for box in asks:
            item = next(i for i in key.items if i.key == f"predict.{box.pred.key}")
            actual = box.pred.actual(box.source)
            want = (t(f"predict.{box.pred.key}.choice.{actual}") if isinstance(actual, str)
                    else _shown(actual, box.pred.unit))
            assert item.answer == want
            assert item.question in _text(box.children[0])
        questions = [_text(task.children[0]) for box in task_boxes for task in box.children]
        tasks = [i for i in key.items if i.kind == "task"]
        assert [f"{i.label}. {i.question}" for i in tasks] == questions
        exercises = [ex for box in exercise_boxes for ex in box.exercises]
    listed = [i for i in key.items if i.kind in ("exercise", "exit")]
    assert [(i.key, i.answer) for i in listed] == [
        (ex.key, answer_key.answer_text(ex)) for ex in exercises]


def _lesson_exercises() -> list[Exercise]:
    with teacher_docs.default_case():
        return [ex for sources in answer_key.LESSONS.values()
                for make in (*sources.exercises, sources.exit_ticket) if make is not None
                for ex in make().exercises]


@pytest.mark.parametrize("exercise", _lesson_exercises(), ids=lambda ex: ex.key)
def test_answer_key_answer_is_graded_correct_and_a_step_past_it_is_not(
        exercise: Exercise) -> None:
    written = answer_key.answer_text(exercise)
    assert grade(exercise, written).ok is True, written
    step = max(exercise.tolerance, abs(exercise.answer) * 1e-9) * 1.5 + 1e-6
    assert grade(exercise, f"{exercise.answer + step!r} {exercise.unit}").ok is False


@pytest.mark.parametrize(("answer", "tolerance", "unit", "written", "computed"), [
    (5.1684, 0.06, "배", "5.2배", "5.168배"),       # 07 문제 4 asks one decimal place
    (1520 / 8760 * 100, 0.11, "%", "17.4 %", "17.35 %"),  # 07 문제 3: 1,520 h of 8,760 h
    (26 / 32 * 100, 0.06, "%", "81.25 %", None),     # exact in four digits: written whole
    (813_192.0, 1.0, "원", "813,192원", None),
    (30.0, 0.05, "kW", "30 kW", None),
])
def test_answer_text_is_the_shortest_form_the_question_grades(
        answer: float, tolerance: float, unit: str, written: str, computed: str | None) -> None:
    exercise = Exercise("opex.ex4", answer, tolerance, unit)
    assert answer_key.answer_text(exercise) == written
    assert answer_key.computed_text(exercise) == computed


def test_answer_text_refuses_an_answer_no_written_form_grades() -> None:
    impossible = Exercise("goodput.ex1", 1 / 3, 0.0, "%")
    with pytest.raises(ValueError, match="goodput.ex1"):
        answer_key.answer_text(impossible)


def test_teacher_guide_and_readme_link_the_teacher_pages() -> None:
    guide = (ROOT / "docs" / "teacher.md").read_text(encoding="utf-8")
    for page in ("lesson-plans.md", "answer-key.md", "answer-key.html"):
        assert f"]({page})" in guide
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "](docs/lesson-plans.md)" in readme and "](docs/answer-key.md)" in readme


def test_students_get_no_answer_key() -> None:
    """The hub copies notebooks/ (its *.ipynb) to every student; the key lives in docs/."""
    from labkit.hub.curriculum import read_curriculum

    copied = read_curriculum(ROOT / "notebooks")
    assert copied and all(name.endswith(".ipynb") for name in copied)
    assert not any("answer" in name for name in copied)
    assert teacher_docs.DOCS == ROOT / "docs"


def test_every_task_of_a_searched_lesson_has_a_state_its_check_meets(
        keys: dict[str, answer_key.LessonKey]) -> None:
    for number in (*answer_key.SEARCH, "01"):
        for item in (i for i in keys[number].items if i.kind == "task"):
            assert item.answer.startswith("예: "), (item.key, item.answer)


def test_solve_task_takes_the_first_state_the_tasks_check_meets() -> None:
    """Lesson 03's seed worksheet (data/goodput/worksheet.yaml): straggler 30 h is the biggest
    loss, and the straggler task's target is the goodput with it halved (15 h)."""
    from labkit.ui.checks import TASKS

    with teacher_docs.default_case():
        from labkit import ui

        ledger = ui.goodput.worksheet_app()
        straggler, biggest = TASKS["03"](ledger)
        assert answer_key.solve_task(straggler, ledger, [{}, {"straggler": 16.0},
                                                          {"straggler": 15.0}]) == {
            "straggler": 15.0}
        assert answer_key.solve_task(biggest, ledger, [{"rewind": 0.0}, {"straggler": 0.0}]) == {
            "straggler": 0.0}
        assert answer_key.solve_task(biggest, ledger, [{"rewind": 0.0}]) is None
        assert ledger.fields["straggler"].control.value == 30.0  # left as the lesson starts
