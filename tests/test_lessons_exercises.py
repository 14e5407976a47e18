"""Every lesson asks a prediction and grades at least two widget-state tasks (issue 17).

Generic over ``notebooks/NN_*.ipynb``: each notebook's cells are read (not trusted by name), its
``ui.predict.ask(...)`` and ``ui.tasks.lesson(...)`` calls found, and both built the way the
notebook builds them (its imports and app assignments run in order, then the calls evaluated).
A lesson without a prediction, with fewer than two tasks, with a task whose 확인 (check) button
grades nothing, or with an exercise of another lesson fails here, so a new lesson cannot ship
without them.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import pytest

from labkit.ui.predict import PredictWidget

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
#: issue 17: "at least two exercises per lesson that grade what the student does in a widget"
MIN_TASKS = 2


@dataclass
class LessonExercises:
    """A notebook's exercises as its cells build them."""

    number: str
    asks: list[tuple[int, str]] = field(default_factory=list)  # (cell, source expression)
    tasks: list[tuple[int, str]] = field(default_factory=list)
    setup: list[ast.stmt] = field(default_factory=list)  # imports and assignments, in order


def _call_name(node: ast.expr) -> str:
    return ast.unparse(node.func) if isinstance(node, ast.Call) else ""


def read_lesson(notebook: Path) -> LessonExercises:
    """Find a notebook's prediction and task calls and the statements that build their apps."""
    book = json.loads(notebook.read_text(encoding="utf-8"))
    found = LessonExercises(notebook.name[:2])
    code = [c for c in book["cells"] if c["cell_type"] == "code"]
    for n, cell in enumerate(code):
        tree = ast.parse("".join(cell["source"]))
        for stmt in tree.body:
            if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.Assign)):
                found.setup.append(stmt)
            for node in ast.walk(stmt):
                name = _call_name(node)  # type: ignore[arg-type]
                if name == "ui.predict.ask":
                    found.asks.append((n, ast.unparse(node)))
                elif name == "ui.tasks.lesson":
                    found.tasks.append((n, ast.unparse(node)))
    return found


_BUILT: dict[str, tuple[list[PredictWidget], list[widgets.VBox]]] = {}


def build(lesson: LessonExercises) -> tuple[list[PredictWidget], list[widgets.VBox]]:
    """Run the notebook's imports and app assignments, then its exercise calls (once a run:
    the two tests below use different widgets of the same build)."""
    if lesson.number in _BUILT:
        return _BUILT[lesson.number]
    namespace: dict[str, Any] = {}
    module = ast.Module(body=lesson.setup, type_ignores=[])
    exec(compile(module, f"notebooks/{lesson.number}", "exec"), namespace)
    predictions = [eval(src, namespace) for _cell, src in lesson.asks]
    tasks = [eval(src, namespace) for _cell, src in lesson.tasks]
    _BUILT[lesson.number] = predictions, tasks
    return predictions, tasks


def _classes(root: widgets.Widget, pattern: str) -> list[tuple[widgets.Widget, str]]:
    """Every (widget, class) under ``root`` whose CSS class matches ``pattern``."""
    found, stack = [], [root]
    while stack:
        w = stack.pop()
        found += [(w, c) for c in getattr(w, "_dom_classes", ()) if re.fullmatch(pattern, c)]
        stack.extend(getattr(w, "children", ()))
    return found


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LABKIT_HOME", str(tmp_path / "lk"))  # the default school case
    monkeypatch.delenv("JUPYTERHUB_USER", raising=False)


@pytest.fixture(scope="module", autouse=True)
def _lab_gpu() -> None:
    import labkit.gpu as gpu

    gpu.connect("sim:H100-80GB")


def test_every_lesson_notebook_is_read() -> None:
    numbers = [nb.name[:2] for nb in NOTEBOOKS]
    assert numbers[:9] == [f"{n:02d}" for n in range(1, 10)], numbers


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda nb: nb.stem)
def test_a_lesson_asks_a_prediction_before_its_tasks(notebook: Path) -> None:
    lesson = read_lesson(notebook)
    assert lesson.asks, f"{notebook.name}: no ui.predict.ask(...) cell"
    assert lesson.tasks, f"{notebook.name}: no ui.tasks.lesson(...) cell"
    assert min(c for c, _ in lesson.asks) <= min(c for c, _ in lesson.tasks), (
        f"{notebook.name}: the prediction is asked after the tasks")


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda nb: nb.stem)
def test_a_lessons_prediction_locks_and_compares(notebook: Path) -> None:
    lesson = read_lesson(notebook)
    predictions, _ = build(lesson)
    assert predictions, f"{notebook.name}: no prediction box"
    for box in predictions:
        assert isinstance(box, PredictWidget)
        assert box.pred.key.startswith(f"{lesson.number}."), (
            f"{notebook.name} asks another lesson's prediction {box.pred.key}")
        assert f"lk-predict-{box.pred.key.replace('.', '-')}" in box._dom_classes
        # a plausible prediction (the low end of its range, or the first choice) locks …
        low, _high = box.pred.bounds()
        box.answer.value = box.pred.choices[0] if box.pred.choices else f"{low or 0:g}"
        assert box.commit(), f"{box.pred.key}: {box.error.value}"
        assert box.answer.disabled and box.lock.disabled
        # … and the simulator's actual value is shown beside it
        assert "<div" in box.compare.value, f"{box.pred.key}: no comparison after locking"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda nb: nb.stem)
def test_a_lesson_grades_at_least_two_widget_state_tasks(notebook: Path) -> None:
    lesson = read_lesson(notebook)
    _, task_sets = build(lesson)
    checks = [(w, c) for box in task_sets for w, c in _classes(box, r"lk-task-.+-check")]
    assert len(checks) >= MIN_TASKS, f"{notebook.name}: {len(checks)} widget-state task(s)"
    for button, css in checks:
        key = css.removeprefix("lk-task-").removesuffix("-check")
        assert key.startswith(f"{lesson.number}-"), f"{notebook.name} grades {key}"
        assert isinstance(button, widgets.Button)
        box = next(b for box in task_sets for b, c in _classes(box, f"lk-task-{key}"))
        feedback = next(w for w, _ in _classes(box, f"lk-task-{key}-feedback"))
        assert feedback.value == ""
        button.click()
        # graded: a verdict in Korean, and not met before the student has done anything
        assert "✘ 아직 아닙니다." in feedback.value, f"{key} on the untouched app: {feedback.value}"
