"""Every control of every lesson against what a hostile browser can send (issue 17).

Each lesson is built as its notebook builds it (``tests.test_rendered_korean.run_lesson``: the
notebook's own code cells, in order). Every slider, number box and selection control found in
what the cells show then gets, through ``set_state`` (ipywidgets' entry for a browser's "update"
message, the kernel-level path a websocket message takes), the states a client can send: a
value of 1e308, -1e308 or NaN, a raised ``max`` (or lowered ``min``) with a value past the old
bound, an index the list does not hold, options of its own. For each:

- nothing raises out of ``set_state``;
- a Korean message shows in the control's own row (a ``lk-error`` slot beside it);
- the control keeps its server-side bounds and options and a value inside them (what every
  model reads), and a lesson app neither recomputes (its model never sees the value) nor
  loses its last good result.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import pytest

from labkit.ui.components import LiveApp
from tests.test_rendered_korean import run_lesson

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted(p.stem for p in (ROOT / "notebooks").glob("0[1-9]_*.ipynb"))

BOUNDED = (widgets.FloatSlider, widgets.IntSlider, widgets.FloatLogSlider,
           widgets.BoundedFloatText, widgets.BoundedIntText)
FREE = (widgets.FloatText, widgets.IntText)
SELECTIONS = (widgets.Dropdown, widgets.Select, widgets.RadioButtons, widgets.ToggleButtons,
              widgets.SelectionSlider)
NAN = float("nan")


def _walk(shown: list[Any]) -> Iterator[tuple[widgets.Widget, widgets.Widget | None,
                                              list[widgets.Widget]]]:
    """(control, its row, the widgets above it) for every value control under ``shown``."""
    seen: set[int] = set()
    stack: list[tuple[widgets.Widget, list[widgets.Widget]]] = [
        (w, []) for w in shown if isinstance(w, widgets.Widget)]
    while stack:
        w, above = stack.pop()
        if id(w) in seen:
            continue
        seen.add(id(w))
        if isinstance(w, BOUNDED + FREE + SELECTIONS):
            yield w, (above[-1] if above else None), above
        for child in getattr(w, "children", ()):
            stack.append((child, [*above, w]))


def hostile_states(control: widgets.Widget) -> list[dict[str, Any]]:
    """What a client can send this control that no lesson should take."""
    if isinstance(control, SELECTIONS):
        n = len(control.options)
        return [{"index": n}, {"index": -1}, {"index": 10**9}, {"index": "abc"},
                {"_options_labels": ["해킹"] * (n + 3), "index": n + 2},
                {"value": "목록에 없는 값"}]
    states: list[dict[str, Any]] = [{"value": 1e308}, {"value": -1e308}, {"value": NAN},
                                    {"value": "abc"}]
    if isinstance(control, BOUNDED):
        states += [{"max": 1e308, "value": control.max * 10 + 1000},
                   {"min": -1e308, "value": control.min - abs(control.min) * 10 - 1000}]
    return states


def _message(row: widgets.Widget | None) -> str:
    """The Korean message in a control's row (its ``lk-error`` slots), else ""."""
    if row is None:
        return ""
    slots = [w for w in getattr(row, "children", ()) if "lk-error" in w._dom_classes]
    return " ".join(str(w.value) for w in slots)


def _clear(row: widgets.Widget | None) -> None:
    for w in getattr(row, "children", ()):
        if "lk-error" in w._dom_classes:
            w.value = ""


def _owner(control: widgets.Widget, above: list[widgets.Widget]) -> LiveApp[Any] | None:
    for w in reversed(above):
        if isinstance(w, LiveApp) and any(f.control is control for f in w.fields.values()):
            return w
    return None


def _snapshot(control: widgets.Widget) -> dict[str, Any]:
    keys = ("min", "max", "options", "value", "index")
    return {k: getattr(control, k) for k in keys if hasattr(control, k)}


def _within(control: widgets.Widget) -> bool:
    """The control holds a value the server allows."""
    if isinstance(control, SELECTIONS):
        return control.index is None or 0 <= control.index < len(control.options)
    value = control.value
    if not (isinstance(value, (int, float)) and math.isfinite(value)):
        return False
    if isinstance(control, BOUNDED):
        return control.min <= value <= control.max
    return abs(value) < 10**16


@pytest.fixture(scope="module")
def lab_gpu() -> None:
    import labkit.gpu as gpu

    gpu.connect("sim:H100-80GB")


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_control_of_a_lesson_refuses_what_a_hostile_browser_sends(
        lesson: str, lab_gpu: None) -> None:
    shown = run_lesson(ROOT / "notebooks" / f"{lesson}.ipynb")
    failures: list[str] = []
    controls = list(_walk(shown))
    assert controls, "a lesson with no controls"
    for control, row, above in controls:
        if getattr(control, "disabled", False):
            continue
        owner = _owner(control, above)
        name = " ".join(c for c in control._dom_classes if c.startswith("lk-")) or repr(
            control.description)
        for state in hostile_states(control):
            before, result = _snapshot(control), owner.result if owner else None
            computes = owner.computes if owner else 0
            _clear(row)
            try:
                control.set_state(dict(state))
            except Exception as err:
                failures.append(f"{name} {state}: raised {err!r}"[:300])
                continue
            message = _message(row)
            if not any("가" <= ch <= "힣" for ch in message):
                failures.append(f"{name} {state}: no Korean message beside the control")
            elif isinstance(control, FREE) and state.get("value") in (1e308, -1e308) and (
                    "1경" not in message or "e+" in message):
                # a free box refuses 1경 or more itself (labkit.answers.MAX_MAGNITUDE), in words
                failures.append(f"{name} {state}: {message[-120:]}")
            after = _snapshot(control)
            if {k: v for k, v in after.items() if k != "value"} != {
                    k: v for k, v in before.items() if k != "value"} or not _within(control):
                failures.append(f"{name} {state}: now {after}")
            if owner is not None and (owner.result is not result or owner.computes != computes):
                # the model never ran on it: nothing outside the control's bounds reached it
                failures.append(f"{name} {state}: the app recomputed")
    assert not failures, "\n".join(failures)
