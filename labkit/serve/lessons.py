"""The lessons present in ``notebooks/``, read from their headers, and how to drive each app.

Every lesson notebook ``notebooks/NN_slug.ipynb`` opens with a markdown cell ``# NN. 제목`` that
lists its numbered **학습 목표** (``tests/test_notebooks.py`` enforces the convention). The
teacher's gallery, the thumbnails tool, the classroom benchmark and the generic browser tests
all read the lessons from here, so a new lesson is picked up without touching them.

:data:`MAIN_INTERACTIONS` is the one hand-kept table: for each lesson, the control a student moves
first and the chart it must change. Tests and the benchmark fail with a clear message for a lesson
that has no entry; add one when a lesson lands.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from labkit.i18n import t

__all__ = [
    "MAIN_INTERACTIONS",
    "Lesson",
    "MainInteraction",
    "discover",
    "main_interaction",
    "parse_header",
]

NOTEBOOK_PATTERN = "[0-9][0-9]_*.ipynb"
_TITLE = re.compile(r"^#\s+(\d\d)\.\s+(.+?)\s*$")
_GOAL = re.compile(r"^\s*\d+\.\s+(.+?)\s*$")
_DURATION = re.compile(r"\*\*소요 시간\*\*\s*[:：]\s*(.+?)\s*$", re.MULTILINE)
_EMPHASIS = re.compile(r"(\*\*|\*|`)")


@dataclass(frozen=True)
class Lesson:
    """One lesson notebook, as the gallery shows it.

    Attributes
    ----------
    notebook : Path
        The ``.ipynb`` file.
    number : str
        Two digits, e.g. ``"03"``.
    title : str
        The title after ``# NN.`` (Korean), without markdown emphasis.
    goals : tuple of str
        The numbered learning goals (학습 목표), in order.
    duration : str or None
        The **소요 시간** text (e.g. ``"30분"``), when given.
    """

    notebook: Path
    number: str
    title: str
    goals: tuple[str, ...]
    duration: str | None = None

    @property
    def name(self) -> str:
        """The notebook's file name, e.g. ``03_goodput.ipynb`` (its path under voila's root)."""
        return self.notebook.name

    @property
    def stem(self) -> str:
        """The notebook's stem, e.g. ``03_goodput`` (key of :data:`MAIN_INTERACTIONS`)."""
        return self.notebook.stem


def _plain(text: str) -> str:
    return _EMPHASIS.sub("", text).strip()


def parse_header(markdown: str, notebook: Path) -> Lesson:
    """Read a lesson's title, goals and duration from its first markdown cell.

    Parameters
    ----------
    markdown : str
        The cell source.
    notebook : Path
        The notebook it came from (named in errors; its ``NN_`` prefix must match the title).

    Returns
    -------
    Lesson

    Raises
    ------
    ValueError
        If the first line is not ``# NN. 제목`` with the notebook's number, or no numbered goal
        follows **학습 목표**; the message names the notebook.
    """
    lines = markdown.strip().splitlines()
    match = _TITLE.match(lines[0]) if lines else None
    if match is None:
        raise ValueError(f"{notebook.name}: the first cell must start with '# NN. 제목', "
                         f"got {lines[0] if lines else ''!r}")
    number, title = match.groups()
    if not notebook.name.startswith(number + "_"):
        raise ValueError(f"{notebook.name}: title number {number} does not match the file name")
    goals: list[str] = []
    in_goals = False
    for line in lines[1:]:
        if "학습 목표" in line:
            in_goals = True
            continue
        if not in_goals:
            continue
        goal = _GOAL.match(line)
        if goal:
            goals.append(_plain(goal.group(1)))
        elif goals and (not line.strip() or line.lstrip().startswith(("**", "#", "|"))):
            break
    if not goals:
        raise ValueError(f"{notebook.name}: no numbered goals after '**학습 목표**'")
    duration = _DURATION.search(markdown)
    return Lesson(notebook, number, _plain(title), tuple(goals),
                  _plain(duration.group(1)) if duration else None)


def read_lesson(notebook: Path) -> Lesson:
    """Read one notebook's header (see :func:`parse_header`).

    Raises
    ------
    ValueError
        If the notebook is not valid JSON or its header breaks the convention.
    """
    try:
        nb = json.loads(notebook.read_text(encoding="utf-8"))
        first = nb["cells"][0]
    except (OSError, ValueError, KeyError, IndexError, TypeError) as err:
        raise ValueError(f"{notebook.name}: cannot read the notebook ({err})") from err
    if first.get("cell_type") != "markdown":
        raise ValueError(f"{notebook.name}: the first cell must be markdown")
    source = first.get("source", "")
    return parse_header("".join(source) if isinstance(source, list) else source, notebook)


def discover(root: Path | None = None) -> list[Lesson]:
    """Return every lesson ``NN_*.ipynb`` in ``root`` (default ``notebooks/``), by number.

    Raises
    ------
    ValueError
        If a lesson's header breaks the convention (names the notebook).
    """
    if root is None:
        from labkit.serve import notebooks_dir

        root = notebooks_dir()
    return [read_lesson(p) for p in sorted(Path(root).glob(NOTEBOOK_PATTERN))]


# --- the main control and main chart of each lesson ------------------------------------------

How = Literal["fill", "slider", "select", "toggle", "click"]


@dataclass(frozen=True)
class MainInteraction:
    """What a student does first in a lesson app, and what must visibly change.

    Attributes
    ----------
    widget : str
        CSS class on the control's ipywidget (a :class:`~labkit.ui.components.LiveApp` field
        ``key`` of app ``name`` has ``lk-<name>-<key>``).
    how : {"fill", "slider", "select", "toggle", "click"}
        How a browser sets it: type into a number/text box and press Enter; type into a
        slider's readout; pick a dropdown option by its label; click a checkbox/toggle; click a
        button. A websocket client sends the matching widget state (``value``; ``index`` for a
        dropdown; a click event for a button).
    value : float, str or bool
        The new value, different from the lesson's default (a dropdown option's label for
        ``select``; ignored for ``click``).
    chart : str
        CSS class on the :class:`~labkit.ui.components.FigureOutput` whose figure must change.
    """

    widget: str
    how: How
    value: float | str | bool
    chart: str


#: Lesson stem -> its main interaction. Fill one in when a lesson lands (tests fail without it).
MAIN_INTERACTIONS: dict[str, MainInteraction] = {
    # the scenario switcher: a one-thread kernel keeps util.gpu ~100 % while SM activity drops
    "01_observe": MainInteraction(widget="lk-scenario-scenario", how="select",
                                  value=t("observe.scenario.tiny_kernel"),
                                  chart="lk-scenario-activity"),
    # the MIG board: start a class workload on the default layout
    "02_mig": MainInteraction(widget="lk-board-start-4", how="click", value="",
                              chart="lk-workload-chart"),
    "03_goodput": MainInteraction(widget="lk-worksheet-failure_stops", how="fill", value=100.0,
                                  chart="lk-waterfall"),
    # checkpoint interval 60 -> 65 min: the chosen point moves on the waste curve
    "04_reliability": MainInteraction(widget="lk-interval-interval_min", how="slider", value=65.0,
                                      chart="lk-interval-chart"),
    # utilization 40 % -> 10 %: the operating point moves left of the crossover
    "05_break_even": MainInteraction(widget="lk-curves-utilization", how="slider", value=10.0,
                                     chart="lk-curves-chart"),
    # a school-sized demand: "3x faster = 1/3 of the racks" no longer holds
    "06_benchmarks": MainInteraction(widget="lk-racks-demand_tokens_per_s", how="slider",
                                     value=752.0, chart="lk-racks-chart"),
    # PUE 1.5 -> 2.0: every monthly bill grows
    "07_opex_lab": MainInteraction(widget="lk-room-pue", how="slider", value=2.0,
                                   chart="lk-bills-chart"),
    # FIFO -> greedy backfill: the school day's Gantt changes
    "08_orchestration": MainInteraction(widget="lk-day-policy", how="select",
                                        value=t("orch.policy.greedy"), chart="lk-gantt"),
    # the capstone: the school uses its server in class hours all day -> the costs change
    "09_capstone": MainInteraction(widget="lk-capstone-class_frac", how="fill", value=100.0,
                                   chart="lk-capstone-chart"),
}


def main_interaction(lesson: Lesson | str) -> MainInteraction:
    """Return the main interaction of ``lesson`` (a :class:`Lesson` or a stem like ``03_goodput``).

    Raises
    ------
    LookupError
        If :data:`MAIN_INTERACTIONS` has no entry for it; the message says what to add.
    """
    stem = lesson.stem if isinstance(lesson, Lesson) else str(lesson).removesuffix(".ipynb")
    try:
        return MAIN_INTERACTIONS[stem]
    except KeyError:
        raise LookupError(
            f"lesson {stem} has no entry in labkit/serve/lessons.py MAIN_INTERACTIONS: add "
            f'"{stem}": MainInteraction(widget="lk-<app>-<key> of its main control", '
            'how="fill|slider|select|toggle|click", value=<a new value>, '
            'chart="lk-<class of the FigureOutput it changes>")'
        ) from None
