"""The controls every lesson app uses: what a browser may change, and debounced recomputes.

A browser's changes reach the kernel as comm "update" messages, which ipywidgets applies with
``Widget.set_state(state)``; these tests call ``set_state`` with the same dictionaries a browser
sends, inside a running asyncio loop where the kernel would have one.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets
import pytest

from labkit import validate
from labkit.ui import components, goodput
from labkit.ui.components import DEBOUNCE_S, Field, LiveApp, number_field, slider_field


class Echo(LiveApp[float]):
    """Doubles ``x``; counts its own compute calls (independent of LiveApp's counter)."""

    def __init__(self, *fields: Field) -> None:
        super().__init__("echo", fields)
        self.calls: list[float] = []
        self.shown: list[float] = []
        self.children = [f.box for f in self.fields.values()]
        self.update()

    def compute(self, values: dict[str, Any]) -> float:
        self.calls.append(values["x"])
        return 2 * validate.non_negative("x", values["x"])

    def render(self, result: float) -> None:
        self.shown.append(result)


def in_fresh_thread(test: Callable[..., None]) -> Callable[..., None]:
    """Run a test in a thread of its own, where no event loop runs unless the test starts one.

    The session's one chromium (tests/conftest.py) keeps Playwright's sync event loop running
    in the main thread for the rest of the session; a LiveApp there would see "a loop runs"
    and debounce, and ``asyncio.run`` would refuse to start.
    """
    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        failed: list[BaseException] = []

        def body() -> None:
            try:
                test(*args, **kwargs)
            except BaseException as err:  # re-raised in the test's own thread
                failed.append(err)

        worker = threading.Thread(target=body)
        worker.start()
        worker.join()
        if failed:
            raise failed[0]
    return run


def _slider_app() -> Echo:
    return Echo(slider_field("x", "엑스", 1.0, min=0.0, max=10.0, step=0.5))


def _sent(control: widgets.Widget, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    sent: list[list[str]] = []
    monkeypatch.setattr(control, "send_state", lambda key=None: sent.append(list(key or [])))
    return sent


# --- a browser cannot widen a control ---------------------------------------------------------


@pytest.mark.parametrize(
    "state",
    [{"max": 2000.0, "value": 1000.0}, {"min": -50.0, "value": -20.0},
     {"max": 2000.0}, {"step": 100.0}, {"disabled": True}, {"readout_format": ".0e"}],
)
@in_fresh_thread
def test_a_browser_cannot_change_a_sliders_bounds_or_state(
    state: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    app = _slider_app()
    control = app.fields["x"].control
    before = {k: getattr(control, k) for k in ("min", "max", "step", "disabled",
                                               "readout_format", "value")}
    sent = _sent(control, monkeypatch)
    control.set_state(state)
    assert {k: getattr(control, k) for k in before} == before
    assert set(sent[0]) == set(state)  # the browser's view is put back
    assert app.calls == [1.0] and app.result == 2.0


@pytest.mark.parametrize(("state", "words"), [
    ({"max": 2000.0, "value": 1000.0}, ("10 이하", "입력: 1,000")),
    ({"value": 10.5}, ("10 이하", "입력: 10.5")),
    ({"min": -50.0, "value": -20.0}, ("0 이상", "입력: -20")),
])
@in_fresh_thread
def test_a_value_past_the_servers_bounds_is_refused_in_korean_under_the_control(
    state: dict[str, Any], words: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    app = _slider_app()
    sent = _sent(app.fields["x"].control, monkeypatch)
    app.fields["x"].control.set_state(state)
    error = app.fields["x"].error.value
    assert all(w in error for w in words), error
    assert "value" in sent[0]
    assert app.fields["x"].control.value == 1.0 and app.calls == [1.0]


@in_fresh_thread
def test_a_value_within_bounds_from_the_browser_is_taken() -> None:
    app = _slider_app()
    app.fields["x"].control.set_state({"value": 7.5})
    assert app.calls == [1.0, 7.5] and app.result == 15.0  # no event loop: at once


@in_fresh_thread
def test_a_disabled_control_takes_no_value_from_the_browser(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = _slider_app()
    control = app.fields["x"].control
    control.disabled = True  # the server may change its own controls
    sent = _sent(control, monkeypatch)
    control.set_state({"disabled": False, "value": 3.0})
    assert control.disabled and control.value == 1.0 and app.calls == [1.0]
    assert set(sent[0]) == {"disabled", "value"}


@in_fresh_thread
def test_server_code_still_changes_bounds_and_values() -> None:
    app = _slider_app()
    control = app.fields["x"].control
    control.max = 20.0
    control.value = 15.0
    assert app.calls == [1.0, 15.0] and app.result == 30.0


@in_fresh_thread
def test_a_free_number_box_passes_any_number_to_the_model() -> None:
    app = Echo(number_field("x", "엑스", 1.0))
    app.fields["x"].control.set_state({"value": -3.0})
    assert app.calls == [1.0, -3.0] and "0 이상" in app.fields["x"].error.value


@pytest.mark.parametrize("typed", [1e308, -1e17, 1e16])
@in_fresh_thread
def test_a_free_number_box_refuses_sizes_no_lesson_needs(typed: float) -> None:
    """Issue 17 (stop 20 trial): 1e308 typed into lesson 04's MTBF box printed 300 digits."""
    app = Echo(number_field("x", "엑스", 1.0))
    app.fields["x"].control.set_state({"value": typed})
    assert app.calls == [1.0] and app.result == 2.0  # the model never saw it; last good kept
    assert "값이 너무 큽니다" in app.fields["x"].error.value
    app.fields["x"].control.set_state({"value": 9.999e15})  # just under 1경: the model's call
    assert app.calls == [1.0, 9.999e15]


@in_fresh_thread
def test_straggler_s_of_1000_after_raising_max_is_refused() -> None:
    """Issue 17: a client raised the straggler slider's max and pushed S = 1,000."""
    ledger = goodput.worksheet_app()
    straggler = goodput.straggler_app(ledger)
    control = straggler.fields["slowdown"].control
    good, hours = straggler.result, ledger.fields["straggler"].control.value
    control.set_state({"max": 2000.0, "value": 1000.0})
    assert control.max == 1.5 and straggler.result is good
    assert ledger.fields["straggler"].control.value == hours
    error = straggler.fields["slowdown"].error.value
    assert "1.5 이하" in error and "입력: 1,000" in error


# --- debounce ----------------------------------------------------------------------------------


@pytest.fixture
def kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in a Jupyter kernel, where browser messages are handled on the kernel's loop."""
    monkeypatch.setattr(components, "_in_kernel", lambda: True)


def _steps(app: Echo, values: list[float], gap_s: float) -> None:
    async def browser() -> None:
        for v in values:  # one comm message per arrow key
            app.fields["x"].control.set_state({"value": v})
            await asyncio.sleep(gap_s)
        await asyncio.sleep(3 * DEBOUNCE_S)

    asyncio.run(browser())


@in_fresh_thread
def test_ten_arrow_key_steps_recompute_once_with_the_last_value(kernel: None) -> None:
    app = _slider_app()
    steps = [1.0 + 0.5 * k for k in range(1, 11)]
    _steps(app, steps, gap_s=0.033)  # 30 Hz key repeat
    assert app.calls == [1.0, 6.0]
    assert app.shown[-1] == 12.0 and app.computes == 2


@in_fresh_thread
def test_steps_slower_than_the_debounce_each_recompute(kernel: None) -> None:
    app = _slider_app()
    _steps(app, [2.0, 3.0], gap_s=2 * DEBOUNCE_S)
    assert app.calls == [1.0, 2.0, 3.0]


@in_fresh_thread
def test_a_number_box_recomputes_once_its_message_is_handled_without_the_wait(
        kernel: None) -> None:
    """A number box sends one change per Enter: no debounce wait, but not inside the message
    handler either (the control's own echo goes out first)."""
    app = Echo(number_field("x", "엑스", 1.0))
    assert app.fields["x"].debounce_s == 0.0
    seen: list[list[float]] = []

    async def browser() -> None:
        app.fields["x"].control.set_state({"value": 7.0})
        seen.append(list(app.calls))
        await asyncio.sleep(0)  # one turn of the kernel's loop, far less than DEBOUNCE_S
        seen.append(list(app.calls))

    asyncio.run(browser())
    assert seen == [[1.0], [1.0, 7.0]] and app.shown[-1] == 14.0


def test_sliders_and_dropdowns_wait_for_the_burst_to_end() -> None:
    dropdown = Field("x", "엑스", widgets.Dropdown(options=[1.0, 2.0], value=1.0))
    assert _slider_app().fields["x"].debounce_s == DEBOUNCE_S == dropdown.debounce_s
    assert Field("x", "엑스", widgets.Checkbox(value=False)).debounce_s == 0.0


@in_fresh_thread
def test_code_that_sets_a_value_recomputes_at_once_even_in_a_running_loop(kernel: None) -> None:
    app = _slider_app()

    async def cell() -> None:
        app.fields["x"].control.value = 4.0
        assert app.result == 8.0

    asyncio.run(cell())
    assert app.calls == [1.0, 4.0]


@in_fresh_thread
def test_flush_runs_a_waiting_recompute(kernel: None) -> None:
    app = _slider_app()

    async def browser() -> None:
        app.fields["x"].control.set_state({"value": 9.0})
        assert app.calls == [1.0]
        app.flush()
        assert app.calls == [1.0, 9.0]
        await asyncio.sleep(2 * DEBOUNCE_S)

    asyncio.run(browser())
    assert app.calls == [1.0, 9.0]


# --- a value clamped to a bound by the browser's readout gets a note --------------------------


@pytest.mark.parametrize(("value", "words"), [
    # ipywidgets' slider readout clamps 500 typed into a 0-10 slider to 10 before sending it
    # (controls' handleTextChange: Math.max(Math.min(value, max), min)): issue 17's trial saw
    # the clamped readout with no message
    (10.0, "최댓값(10)입니다. 이 슬라이더는 10보다 큰 값을 받지 않고"),
    (0.0, "최솟값(0)입니다. 이 슬라이더는 0보다 작은 값을 받지 않고"),
])
@in_fresh_thread
def test_a_browser_value_at_a_slider_bound_gets_the_bound_note(value: float, words: str) -> None:
    app = _slider_app()
    field = app.fields["x"]
    field.control.set_state({"value": value})
    assert app.result == 2 * value  # taken: the bound is a legal value
    assert words in field.error.value and "⚠" not in field.error.value
    field.control.set_state({"value": 5.0})  # moved off the bound: the note goes
    assert field.error.value == ""


@in_fresh_thread
def test_a_bound_set_by_code_gets_no_note() -> None:
    app = _slider_app()
    app.fields["x"].control.value = 10.0  # a reset, a linked app, a notebook cell
    assert app.result == 20.0 and app.fields["x"].error.value == ""
    number = Echo(number_field("x", "엑스", 1.0))
    number.fields["x"].control.set_state({"value": 0.0})  # no bounds: nothing to say
    assert number.fields["x"].error.value == ""


@in_fresh_thread
def test_a_model_error_at_the_bound_wins_over_the_note() -> None:
    app = Echo(slider_field("x", "엑스", 1.0, min=-5.0, max=10.0, step=0.5))
    app.fields["x"].control.set_state({"value": -5.0})  # the slider's min, the model refuses
    assert "⚠" in app.fields["x"].error.value and "최솟값" not in app.fields["x"].error.value


# --- the plot template -----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["plotly_white", "plotly_dark"])
def test_a_shown_figure_carries_plotlys_own_template(name: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    import plotly.io as pio

    from labkit.ui.plotting import figure

    monkeypatch.setattr(components, "PLOT_TEMPLATE", components.PLOT_TEMPLATE)
    components.set_plot_template(name)
    out = components.FigureOutput()
    out.show(figure([{"type": "bar", "x": [1], "y": [2]}]))
    output: dict[str, Any] = out.outputs[0]
    shown = output["data"][components.PLOTLY_MIME]["layout"]["template"]
    # plotly's own Template object, as plotly serializes it
    expected = json.loads(pio.json.to_json_plotly(pio.templates[name].to_plotly_json()))
    assert shown == expected and shown["layout"]["paper_bgcolor"]


def test_an_unknown_template_is_refused() -> None:
    with pytest.raises(ValueError, match="no template 'plotly_pink'"):
        components.set_plot_template("plotly_pink")


# --- controls outside the fields, lists and wrong types (issue 17, stop 21) -----------------


@in_fresh_thread
def test_a_slider_that_starts_at_its_max_says_so_before_anything_is_typed() -> None:
    """The browser clamps 99999999 typed into a readout at 2.00 to 2.00 and, the value being
    unchanged, sends nothing: the unit says the max from the start (06's precision slider),
    as a plain unit, not an ⓘ note beside an untouched slider (stop 21's trials)."""
    app = Echo(slider_field("x", "엑스", 10.0, min=0.0, max=10.0, step=0.5, unit="%"))
    assert app.fields["x"].unit_html.value == "% (최대 10)" and app.fields["x"].error.value == ""
    app.fields["x"].control.set_state({"value": 5.0})
    assert app.fields["x"].error.value == ""
    app.fields["x"].control.set_state({"value": 10.0})  # a browser back at the bound: the note
    assert "최댓값(10)입니다" in app.fields["x"].error.value
    at_min = Echo(slider_field("x", "엑스", 0.0, min=0.0, max=10.0, step=0.5, unit="%"))
    assert at_min.fields["x"].error.value == "" and at_min.fields["x"].unit_html.value == "%"


@pytest.mark.parametrize("state", [{"index": 3}, {"index": -1}, {"index": "abc"},
                                   {"index": True}, {"value": "없는 값"},
                                   {"_options_labels": ["x"] * 9, "index": 8}])
def test_a_guarded_dropdown_takes_only_a_listed_option(
        state: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    control = widgets.Dropdown(options=[("하나", 1), ("둘", 2), ("셋", 3)], value=2)
    note = components.guard(control, "pick")
    sent = _sent(control, monkeypatch)
    control.set_state(state)  # never raises
    assert (control.value, control.index, len(control.options)) == (2, 1, 3)
    assert "목록에 없는 선택입니다" in note.value and sent
    control.set_state({"index": 0})  # a listed one is taken, and the note goes
    assert control.value == 1 and note.value == ""


@pytest.mark.parametrize(("state", "words"), [
    ({"value": 1e308}, "이하여야"), ({"value": float("nan")}, "유한한"),
    ({"value": "abc"}, "숫자여야"), ({"max": 1e308, "value": 50}, "이하여야"),
    ({"min": -1e308, "value": -50}, "이상이어야"),
])
def test_a_guarded_plain_slider_refuses_beside_itself(state: dict[str, Any],
                                                      words: str) -> None:
    control = widgets.IntSlider(value=3, min=0, max=10)
    seen: list[int] = []
    control.observe(lambda c: seen.append(c["new"]), names="value")
    note = components.guard(control, "time")
    control.set_state(state)
    assert (control.value, control.min, control.max) == (3, 0, 10) and not seen
    assert words in note.value
    control.set_state({"value": 10})  # at the max: the bound note
    assert "최댓값(10)입니다" in note.value and seen == [10]


def test_a_field_refuses_a_value_of_the_wrong_type_in_korean() -> None:
    app = Echo(Field("x", "엑스", widgets.IntSlider(value=1, min=0, max=4)))
    app.fields["x"].control.set_state({"value": "abc"})
    assert app.fields["x"].control.value == 1 and "숫자여야" in app.fields["x"].error.value


@pytest.mark.parametrize(("value", "unit", "shown"), [
    (52_500_000, "원", "원 <span style=\"color:#555\">(= 5,250만 원)</span>"),
    (300_000, "USD", "USD <span style=\"color:#555\">(= 30만 USD)</span>"),
    (12_345, "h", "h"),  # the box's digits read well enough
    (5, "장", "장"), (float("nan"), "h", "h"), (1e308, "h", "h"),
])
def test_a_free_number_box_reads_a_long_value_back_in_peoples_format(
        value: float, unit: str, shown: str) -> None:
    field = number_field("x", "엑스", 1.0, unit=unit)
    field.control.value = value
    assert field.unit_html.value == shown
