"""Building blocks every lesson app uses: fields with an error slot, figure outputs, live apps.

The pattern (see ``labkit/ui/goodput.py``): an app owns labelled :class:`Field` controls; on any
change :class:`LiveApp` reads them, calls the pure model, and either renders the result or shows
the model's error in Korean beside the control that caused it, keeping the last good result on
screen.

A browser can send any widget state (a slider's ``max``, a disabled control's value, a value
past the limits). A :class:`Field` takes only ``value`` (``index`` for a selection) from the
browser: a change of any other trait is dropped and the server's state sent back, a value
outside the server's ``min``/``max`` is refused with a Korean message under the control (and
the browser's view put back). A slider's readout clamps a typed value to its range in the
browser before sending it, so a value arriving exactly at a bound from the browser gets the
Korean bound note beside the slider ("최댓값(100)입니다 ..."): 500 typed into a 0-100 readout
is never shown as 100 without a word; a slider that starts at its max shows that note from
the start (a typed 99999999 clamped to the unchanged max sends nothing). A selection takes
only an index of its list, a value of the wrong type is refused in Korean
(:mod:`labkit.ui.client_state`). A control built outside the fields (a replay's time slider,
a preset list) gets the same guard and its own message slot from :func:`guard`. The models
still check every input themselves.

Value changes from the browser are debounced where a browser sends them in bursts: stepping a
slider or a dropdown with the arrow keys sends one message per key; the app recomputes once,
:data:`DEBOUNCE_S` after the last one, with the last value (latest value wins, no queue). A
control that sends one message per change (a number box on Enter, a checkbox) recomputes as
soon as the message has been handled, without the wait. Changes made by code (a test, a
notebook cell) recompute at once, and so does everything when no event loop runs.

Plots are plain ``plotly.graph_objects.Figure`` objects displayed into an ``ipywidgets.Output``
(:class:`FigureOutput`), not ``FigureWidget``: lighter per kernel and no binary comm messages
(measured; see README "Stack notes").

Every control carries a CSS class ``lk-<app>-<key>`` so tests and benchmarks can find it.
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Generic, TypeVar, cast

import ipywidgets as widgets
import plotly.graph_objects as go
import plotly.io as pio

from labkit.answers import MAX_MAGNITUDE
from labkit.i18n import error_text, t
from labkit.ui import hover, plotly_locale
from labkit.ui.client_state import guarded_set_state
from labkit.validate import InputError

__all__ = [
    "BURSTY_CONTROLS",
    "DEBOUNCE_S",
    "FONT_FAMILY",
    "Field",
    "FigureOutput",
    "LiveApp",
    "find_by_class",
    "guard",
    "number_field",
    "reveal",
    "set_plot_template",
    "slider_field",
    "styled_figure",
]

R = TypeVar("R")

FONT_FAMILY = "Noto Sans CJK KR, Noto Sans KR, Malgun Gothic, Apple SD Gothic Neo, sans-serif"
PLOTLY_MIME = "application/vnd.plotly.v1+json"
#: Quiet time after the last value change from a slider or dropdown in the browser before an
#: app recomputes [s]. Held arrow keys auto-repeat every 33-40 ms (25-30 Hz: the X server's
#: default rate is 25 Hz, Windows' ~30 Hz); chromium delivered them 38 ms apart (median) in
#: ``benchmarks/bench_lessons_browser.py``. 0.1 s is 2.5 such gaps, so a held key recomputes
#: once, and leaves 200 ms of issue 17's 300 ms control -> chart goal to the model and the draw.
DEBOUNCE_S = 0.1
# A leading-edge variant (the first change of a burst at once, the last once more) was measured
# with that script in stop 21: 07's p95 306 -> 192 ms, but ten arrow keys gave 3 recomputes (03: 7)
# instead of 1, the first redraw delaying the browser's next keys; trailing only is kept.
#: Controls whose browser view sends a burst of value changes for one gesture (arrow keys on a
#: slider handle or a focused dropdown, a drag); the others send one change per gesture.
BURSTY_CONTROLS: tuple[type[widgets.Widget], ...] = (
    widgets.FloatSlider, widgets.IntSlider, widgets.FloatLogSlider, widgets.SelectionSlider,
    widgets.Dropdown, widgets.Select, widgets.RadioButtons, widgets.ToggleButtons,
)
#: Controls with a typed readout clamped to ``min``/``max`` in the browser.
SLIDERS: tuple[type[widgets.Widget], ...] = (
    widgets.FloatSlider, widgets.IntSlider, widgets.FloatLogSlider)


def styled_figure(**layout: Any) -> go.Figure:
    """Return an empty figure with labkit's layout defaults (Korean-capable fonts, margins).

    The figure is built with an empty template: applying plotly's template on every figure costs
    ~15 ms per figure (deep copies); :class:`FigureOutput` adds the current theme's template,
    serialized once, when it shows the figure.
    """
    fig = go.Figure(layout={"template": {}})
    fig.update_layout(
        font={"family": FONT_FAMILY, "size": 13},
        margin={"l": 60, "r": 20, "t": 50, "b": 50},
        height=360,
    )
    fig.update_layout(**layout)
    return fig


#: The plotly template every :class:`FigureOutput` figure is shown with; :func:`labkit.ui.setup`
#: sets it from the lesson's theme (``plotly_white`` or ``plotly_dark``).
PLOT_TEMPLATE = "plotly_white"


def set_plot_template(name: str) -> None:
    """Show every figure from now on with plotly's template ``name`` (e.g. ``plotly_dark``).

    Not ``plotly.io.templates.default``: that setter builds and validates the whole template
    (~0.25 s of a lesson's first chart, measured with ``benchmarks/bench_lessons_browser.py``),
    while the figures here carry an empty template and get the template's JSON at display.

    Raises
    ------
    ValueError
        If plotly has no template of that name.
    """
    global PLOT_TEMPLATE
    if name not in pio.templates:
        raise ValueError(f"plotly has no template {name!r}")
    PLOT_TEMPLATE = name


@functools.cache
def _template_json(name: str) -> dict[str, Any]:
    """The JSON of plotly's template ``name``: the file plotly builds its template from
    (``plotly/package_data/templates/<name>.json``, read as plotly's own loader reads it),
    or, for a template registered at run time, the template object's JSON."""
    if not name or name == "none":
        return {}
    try:
        raw = pkgutil.get_data("plotly", f"package_data/templates/{name}.json")
    except OSError:
        raw = None
    if raw is not None:
        return cast(dict[str, Any], json.loads(raw))
    return cast(dict[str, Any],
                json.loads(pio.json.to_json_plotly(pio.templates[name].to_plotly_json())))


class FigureOutput(widgets.Output):
    """An Output area that shows one plotly figure and replaces it on every :meth:`show`.

    The last figure shown stays available as :attr:`figure` (tests read it server side); the
    browser gets it as plotly's own mimetype, rendered by the jupyterlab-plotly extension.

    The figure is put into the widget's ``outputs`` trait directly, not captured from
    ``display()`` inside ``with self:``. Capturing makes voila's executor (nbclient) mirror the
    Output widget and send ``comm_msg`` updates on the kernel's shell channel while a cell runs;
    under CPU load that races with the cell's ``execute_reply`` on the same zmq socket, the reply
    is never seen, and voila hangs at "Executing N of M" (reproduced here: 3 of 12 page loads of
    lesson 07 at load average 7). Setting the trait sends nothing on the shell channel, and is
    safe from a background thread too.
    """

    def __init__(self, css_class: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.figure: go.Figure | None = None
        if css_class:
            self.add_class(css_class)

    def show(self, fig: go.Figure) -> None:
        """Replace the displayed figure with ``fig`` (every trace's hover in people's numbers:
        :func:`labkit.ui.hover.fill`)."""
        self.figure = hover.fill(fig)
        spec = json.loads(pio.to_json(fig, validate=False, remove_uids=True))
        # styled_figure's empty template serializes as {"data": {"scatter": [...]}}: no layout
        if not (spec.get("layout", {}).get("template") or {}).get("layout"):
            spec.setdefault("layout", {})["template"] = _template_json(PLOT_TEMPLATE)
        # no "share chart" button: it uploads the figure to Plotly's cloud (an English dialog,
        # and a student's data leaving the school; the teacher's trial found it)
        spec["config"] = {"displaylogo": False, "responsive": True, "showSendToCloud": False,
                          "modeBarButtonsToRemove": ["sendDataToCloud"],
                          **plotly_locale.config()}
        title = fig.layout.title.text or ""
        self.outputs = ({"output_type": "display_data", "metadata": {},
                         "data": {PLOTLY_MIME: spec, "text/plain": f"<Figure: {title}>"}},)


class Field:
    """A labelled control with a slot for an error message beside it.

    Parameters
    ----------
    key : str
        The app's name for the value (also the model field it feeds, by default).
    label : str
        Korean label.
    control : ipywidgets.ValueWidget
        The control; gets the CSS class ``lk-<app>-<key>`` when added to a :class:`LiveApp`.
    unit : str
        Unit shown after the control.
    scale : float
        The model value is ``control.value / scale`` (e.g. 100 for a percent control feeding a
        fraction).
    """

    def __init__(
        self, key: str, label: str, control: widgets.ValueWidget, *, unit: str = "",
        scale: float = 1.0,
    ) -> None:
        self.key = key
        self.control = control
        self.scale = scale
        self.error = widgets.HTML("", layout=widgets.Layout(min_width="0"))
        self.error.add_class("lk-error")
        self.label = widgets.HTML(f"<b>{label}</b>", layout=widgets.Layout(width="250px"))
        self.unit = unit
        #: The unit after the control; a free number box also reads its value back there in
        #: people's format when it is long ("52500000" -> "원 (= 5,250만 원)", issue 17).
        self.unit_html = widgets.HTML(unit)
        self.box = widgets.HBox(
            [self.label, control, self.unit_html, self.error],
            layout=widgets.Layout(align_items="center", flex_flow="row wrap"),
        )
        self.default = control.value
        #: How long a change from the browser waits for the next one before the app recomputes
        #: [s]: :data:`DEBOUNCE_S` for a control that sends bursts (:data:`BURSTY_CONTROLS`),
        #: else 0 (recompute once the browser's message is handled).
        self.debounce_s = DEBOUNCE_S if isinstance(control, BURSTY_CONTROLS) else 0.0
        #: True while a state update from the browser is being applied to the control.
        self.from_client = False
        #: The bound (min or max) a browser last set the control to, else None (see
        #: :meth:`show_bound`).
        self.at_bound: float | None = None
        # A slider with a readout that starts at its max: the browser clamps a typed 99999999
        # to the max and, the value being unchanged, sends nothing the kernel could answer
        # (issue 17: 06's precision slider at 2.00). Its unit says the max from the start; an
        # ⓘ note there before anything was touched read as an error (stop 21's trials).
        if (isinstance(control, SLIDERS) and getattr(control, "readout", False)
                and control.value == control.max and "최대" not in unit):
            self.unit = f"{unit} ({t('common.slider_max', max=f'{control.max:g}')})".strip()
            self.unit_html.value = self.unit
        # ``set_state`` is ipywidgets' public entry for state sent by a browser (Widget.set_state,
        # called by _handle_msg for every "update" message); wrapping it on this instance filters
        # what the browser may change before anything is set.
        control.set_state = functools.partial(  # type: ignore[method-assign]
            guarded_set_state, self, control.set_state)

    def refuse(self, value: Any) -> str | None:
        """Return the Korean message if ``value`` (control units) lies outside the control's
        ``min``/``max`` as the server set them, else None."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        if not math.isfinite(value):  # NaN and infinities: say so, not "at most max"
            return error_text(InputError(self.key, "finite", value, ""))
        low, high = getattr(self.control, "min", None), getattr(self.control, "max", None)
        # a free box takes what the answer parser takes (below 1경): "1e308" typed into one is
        # refused here, not printed by a model as a 300-digit number (issue 17's trial, stop 20)
        if high is None and abs(value) >= MAX_MAGNITUDE:
            return error_text(InputError(self.key, "too_big", value, ""))
        if high is not None and not value <= high:
            return error_text(InputError(self.key, "at_most", value, "", limit=float(high)))
        if low is not None and not value >= low:
            return error_text(InputError(self.key, "at_least", value, "", limit=float(low)))
        return None

    @property
    def value(self) -> Any:
        """The model value: the control's value divided by ``scale``, float noise rounded off."""
        raw = self.control.value
        if isinstance(raw, bool) or not isinstance(raw, (int, float)):
            return raw
        v = raw / self.scale if self.scale != 1 else raw
        return round(v, 9) if math.isfinite(v) else v

    def read_back(self, *_: Any) -> None:
        """Show the control's value in people's format after the unit where the box shows
        it as bare digits (5,250만 where the number box shows 52500000)."""
        from labkit.ui.format import readable

        value = self.control.value
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        shown = readable(float(value)) if number and math.isfinite(value) else ""
        if not (number and 10**4 <= abs(value) < MAX_MAGNITUDE and shown[-1:] in "만억조"):
            self.unit_html.value = self.unit
            return
        words = f"{shown} {self.unit}".strip()
        self.unit_html.value = f'{self.unit} <span style="color:#555">(= {words})</span>'

    def set_error(self, message: str) -> None:
        """Show ``message`` beside the control."""
        self.error.value = f'<span style="color:#b00020">⚠ {message}</span>'

    def clear_error(self) -> None:
        """Remove any message."""
        self.error.value = ""

    def watch(self) -> None:
        """For a control outside a :class:`LiveApp`: on every value change clear the message
        and show the bound note where due (a LiveApp does this in its recompute)."""
        def refresh(_change: Any) -> None:
            self.clear_error()
            self.show_bound()
        self.control.observe(refresh, names="value")
        self.show_bound()

    def client_value(self, value: Any) -> None:
        """Note a value a browser sets: at the control's min or max, :meth:`show_bound` says
        so (the browser's readout clamps what was typed to the range before sending it)."""
        low, high = getattr(self.control, "min", None), getattr(self.control, "max", None)
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        typed = getattr(self.control, "readout", True)  # no readout: nothing typed, no note
        self.at_bound = value if number and typed and value in (low, high) else None

    def show_bound(self) -> None:
        """Show the Korean bound note beside the control while it holds the bound a browser
        set (a value typed past the range arrives clamped to it)."""
        if self.at_bound is None or self.control.value != self.at_bound:
            return
        from labkit.ui.format import readable

        high = getattr(self.control, "max", None)
        key = "error.bound.max" if self.at_bound == high else "error.bound.min"
        note = t(key, limit=readable(float(self.at_bound)))
        self.error.value = f'<span style="color:#555">ⓘ {note}</span>'


def guard(control: widgets.ValueWidget, key: str) -> widgets.HTML:
    """Guard a control built outside the fields (a replay's time slider, a preset list) as a
    :class:`Field` guards its own; return the message slot to put beside the control.

    A browser may then change only its ``value``/``index``: a new ``min``/``max``/``options``
    is put back, a value past the bounds, a non-number or an option the list does not hold is
    refused with the Korean message in the returned slot, a value at a bound gets the bound
    note; the control keeps its last good value (so whatever reads it never sees the refused
    one).
    """
    field = Field(key, "", control)
    field.watch()
    control.add_class(f"lk-guarded-{key}")
    return field.error


def number_field(
    key: str, label: str, value: float, *, unit: str = "", step: float = 1.0,
    width: str = "130px", scale: float = 1.0,
) -> Field:
    """A free-number :class:`Field` (``FloatText``; updates on Enter or leaving the box).

    Unbounded on purpose: out-of-range values reach the model, which explains what is wrong.
    """
    control = widgets.FloatText(value=value, step=step, continuous_update=False,
                                layout=widgets.Layout(width=width))
    field = Field(key, label, control, unit=unit, scale=scale)
    field.read_back()
    control.observe(field.read_back, names="value")
    return field


def slider_field(
    key: str, label: str, value: float, *, min: float, max: float, step: float,
    unit: str = "", readout_format: str = ".2f", scale: float = 1.0,
) -> Field:
    """A ``FloatSlider`` :class:`Field`; the model still validates (browsers pass the limits)."""
    control = widgets.FloatSlider(
        value=value, min=min, max=max, step=step, readout_format=readout_format,
        continuous_update=False, layout=widgets.Layout(width="420px"),
    )
    return Field(key, label, control, unit=unit, scale=scale)


def _in_kernel() -> bool:
    """Whether this process is a Jupyter kernel (IPython's shell with a kernel attached)."""
    from IPython import get_ipython

    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def _kernel_loop() -> asyncio.AbstractEventLoop | None:
    """The kernel's running event loop while it handles a message, else None.

    Only a kernel's loop counts: another library's loop running in this thread (Playwright's
    sync API in a test session) does not make a value change come from a browser.
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None
    return loop if _in_kernel() else None


class LiveApp(widgets.VBox, Generic[R]):
    """Controls -> pure model -> outputs, with Korean errors and last-good retention.

    A LiveApp is itself a widget (a ``VBox``): a builder returns it and the notebook cell's last
    expression shows it. Subclasses set ``self.children``, implement :meth:`compute` (call the
    model; may raise ``ValueError``) and :meth:`render` (update outputs from a good result),
    then call :meth:`update` once at the end of ``__init__``. An
    :class:`~labkit.validate.InputError` is shown beside the field it names (``field_map`` maps
    model field names to field keys; ``losses.rewind`` falls back to ``rewind``); any other
    ``ValueError`` is shown in the app's status line. The last good result
    stays in :attr:`result` and on screen.

    Parameters
    ----------
    name : str
        App name, used in CSS classes ``lk-<name>`` and ``lk-<name>-<key>``.
    fields : iterable of Field
        The inputs, in display order.
    error_prefix : str, optional
        Catalog prefix for app-specific error messages (see ``messages.error_text``).
    field_map : mapping, optional
        Model field name -> field key, where they differ.
    """

    def __init__(
        self, name: str, fields: Iterable[Field], *, error_prefix: str | None = None,
        field_map: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__()
        self.app_name = name
        self.add_class(f"lk-{name}")
        self.fields: dict[str, Field] = {f.key: f for f in fields}
        self.error_prefix = error_prefix
        self.field_map = dict(field_map or {})
        self.result: R | None = None
        self.status = widgets.HTML("")
        self.status.add_class(f"lk-{name}-status")
        #: How many times :meth:`compute` ran (benchmarks and tests count recomputes).
        self.computes = 0
        self._pending: asyncio.Handle | None = None
        for f in self.fields.values():
            f.control.add_class(f"lk-{name}-{f.key}")
            f.control.observe(functools.partial(self._on_value, f), names="value")
        self.on_result: list[Callable[[R], None]] = []

    # -- to implement -------------------------------------------------------------------------
    def compute(self, values: dict[str, Any]) -> R:
        """Call the pure model with the field values; raise ``ValueError`` on bad input."""
        raise NotImplementedError

    def render(self, result: R) -> None:
        """Show a good result."""
        raise NotImplementedError

    # -- machinery ----------------------------------------------------------------------------
    def values(self) -> dict[str, Any]:
        """Return the current model values, by field key."""
        return {key: f.value for key, f in self.fields.items()}

    def _field_for(self, model_field: str) -> Field | None:
        for candidate in (model_field, model_field.rsplit(".", 1)[-1]):
            key = self.field_map.get(candidate, candidate)
            if key in self.fields:
                return self.fields[key]
        return None

    def _on_value(self, field: Field, _change: Any) -> None:
        if field.from_client:
            self.schedule(delay_s=field.debounce_s)
        else:
            self.update()

    def schedule(self, *_: Any, delay_s: float = 0.0) -> None:
        """Recompute ``delay_s`` after the last call while an event loop runs (the kernel's: a
        browser event is being handled), at once otherwise; latest values win.

        With ``delay_s`` 0 the recompute runs as soon as the message being handled is done.
        Linked apps call this for changes from another widget (a MIG board click), so the
        click's own update reaches the browser before the linked recompute runs.
        """
        loop = _kernel_loop()
        if loop is None:  # not a kernel handling a message (a plain script or test): at once
            self.update()
            return
        if self._pending is not None:
            self._pending.cancel()
        self._pending = (loop.call_later(delay_s, self.flush) if delay_s > 0
                         else loop.call_soon(self.flush))

    def flush(self) -> None:
        """Run a recompute that waits for the browser to stop sending (no-op if none waits)."""
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None
            self.update()

    def update(self, *_: Any) -> None:
        """Recompute from the controls; render, or show the error and keep the last result."""
        if self._pending is not None:  # this recompute already reads the latest values
            self._pending.cancel()
            self._pending = None
        for f in self.fields.values():
            f.clear_error()
            f.show_bound()
        self.status.value = ""
        values = self.values()
        self.computes += 1
        try:
            result = self.compute(values)
        except (ValueError, ArithmeticError) as err:
            if _overflowed(err, values):  # 1e308 typed in a box: say so, not "input: inf"
                message, field = t("error.arithmetic"), None
            else:
                field = self._field_for(getattr(err, "field", ""))
                message = self._message(err, field)  # type: ignore[arg-type]
            kept = f" {t('common.kept_last')}" if self.result is not None else ""
            if field is not None:
                field.set_error(message)
                self.status.value = f'<span style="color:#b00020">{kept}</span>' if kept else ""
            else:
                self.status.value = f'<span style="color:#b00020">⚠ {message}{kept}</span>'
            return
        self.result = result
        self.render(result)
        for callback in self.on_result:
            callback(result)

    def _message(self, err: ValueError, field: Field | None) -> str:
        """The Korean text of ``err``, echoing what the student typed where the control holds
        the model's own quantity (same name; a ``scale`` only changes the unit)."""
        model_field = getattr(err, "field", "").rsplit(".", 1)[-1]
        if field is None or field.key != model_field:
            return error_text(err, prefix=self.error_prefix)
        return error_text(err, prefix=self.error_prefix, typed=field.control.value,
                          scale=field.scale)

    def reset(self, *_: Any) -> None:
        """Put every control back to its initial value."""
        for f in self.fields.values():
            f.control.value = f.default


def _overflowed(err: Exception, values: dict[str, Any]) -> bool:
    """True if ``err`` comes from arithmetic overflow on finite inputs, not from an input itself.

    An ``ArithmeticError``, or a model's "must be finite" on an infinite intermediate (a cost
    line) while every control holds a finite number.
    """
    if isinstance(err, ArithmeticError):
        return True
    if not (isinstance(err, InputError) and err.rule == "finite"):
        return False
    value = err.value
    if not (isinstance(value, float) and math.isinf(value)):
        return False
    return all(math.isfinite(v) for v in values.values() if isinstance(v, float))


def find_by_class(root: widgets.Widget, css_class: str) -> widgets.Widget:
    """Return the first widget under ``root`` (depth first) carrying ``css_class``.

    Raises
    ------
    LookupError
        If none does.
    """
    stack = [root]
    while stack:
        w = stack.pop()
        if css_class in getattr(w, "_dom_classes", ()):
            return w
        stack.extend(reversed(getattr(w, "children", ())))
    raise LookupError(f"no widget with class {css_class!r}")


def reveal(root: widgets.Widget) -> None:
    """Show ``root`` (hidden with ``visibility: hidden``) and redraw every figure under it.

    A plotly figure drawn while its box was hidden comes out 0 px tall in the browser once the
    box is shown (the new teacher's trial, issue 25: 03's waterfall, 07's bills, 09's costs
    after 예측 확정, at 1280 × 900), so each :class:`FigureOutput` under ``root`` gets its
    figure again after the box is visible: the browser draws it in a visible box.
    """
    root.layout.visibility = "visible"
    stack = [root]
    while stack:
        w = stack.pop()
        if isinstance(w, FigureOutput) and w.outputs:
            drawn = w.outputs
            w.outputs = ()  # type: ignore[assignment]
            w.outputs = drawn
        stack.extend(getattr(w, "children", ()))

