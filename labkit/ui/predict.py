"""Predict → try → check: the student commits a prediction before a simulator, then compares.

:func:`ask` shows a question about a lesson's simulator (a number in a unit, read by
:func:`labkit.answers.read_quantity`, or a choice), a 예측 확정 (lock) button and, once locked,
the prediction beside what the simulator actually gives, with a one-line Korean reflection. The
prediction is recorded like an exercise answer (:func:`labkit.data.progress.record_result`,
key ``predict.<key>``, ``correct`` None: a prediction is not graded) for the class page.

The questions live in :data:`labkit.ui.checks.PREDICTIONS` (one per lesson, before its main
simulator); the actual value is computed from the linked app by the models, never typed in. A
notebook cell only calls ``ui.predict.ask(room, "07.july_bill")``.

A *source* is any lesson app that tells when it changed: a
:class:`~labkit.ui.components.LiveApp` (``on_result``) or lesson 02's board (``on_change``).

Used in: notebooks/01-09
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import ipywidgets as widgets

from labkit.answers import AnswerError, read_quantity
from labkit.data.progress import record_result
from labkit.i18n import t
from labkit.ui import format as fmt
from labkit.ui.components import guard, reveal
from labkit.ui.exercises import answer_error_text

W = TypeVar("W", bound=widgets.Widget)

__all__ = ["PredictWidget", "Prediction", "RevealedTable", "ask", "reflection", "shown_with",
           "subscribe"]


@dataclass(frozen=True)
class Prediction:
    """One prediction question.

    Parameters
    ----------
    key : str
        ``"07.july_bill"``; catalog keys ``predict.<key>.q`` (question) and
        ``predict.<key>.why`` (the reflection's second half), progress key ``predict.<key>``.
    actual : callable
        ``actual(source) -> float | str | None``: what the simulator gives now (None: no result
        yet). Computed by the models from the app's state.
    unit : str
        The unit of a numeric prediction (read by :func:`labkit.answers.read_quantity`).
    choices : tuple of str
        For a choice: the catalog keys ``predict.<key>.choice.<c>``; empty for a number.
    close_frac : float
        A numeric prediction within this relative distance of the actual value is "close".
    low, high : float or None
        The plausible range of a numeric prediction, in ``unit`` (None: unbounded on that
        side). A prediction outside it is refused in Korean beside the box: a share cannot be
        negative, a count cannot be -3. ``high`` defaults to 100 for a ``%`` prediction.
    extra : dict
        The question's placeholders computed from the source (``{"model": ...}``).
    reveal : bool
        The linked app shows the answer as it opens (a readout, a chart): it stays hidden,
        its place on the page kept, until the prediction is confirmed (issue 25: an answer
        in the table right under its question is no prediction).
    """

    key: str
    actual: Callable[[Any], float | str | None]
    unit: str = ""
    choices: tuple[str, ...] = ()
    close_frac: float = 0.1
    extra: dict[str, Callable[[Any], str]] = field(default_factory=dict)
    low: float | None = 0.0
    high: float | None = None
    reveal: bool = False

    def __post_init__(self) -> None:
        if not self.choices:
            read_quantity("0", self.unit)  # a unit the parser cannot read is the lesson's bug

    def bounds(self) -> tuple[float | None, float | None]:
        """The plausible range (low, high) in ``unit``; a % prediction is at most 100."""
        high = self.high if self.high is not None or self.unit != "%" else 100.0
        return self.low, high

    def out_of_range(self, value: float) -> str | None:
        """The Korean message for a prediction outside :meth:`bounds`, else None."""
        low, high = self.bounds()
        if (low is None or value >= low) and (high is None or value <= high):
            return None
        if high is None:
            return t("predict.range.at_least", low=fmt.quantity(float(low or 0), self.unit))
        if low is None:
            return t("predict.range.at_most", high=fmt.quantity(high, self.unit))
        return t("predict.range.between", low=fmt.quantity(low, self.unit),
                 high=fmt.quantity(high, self.unit))


def subscribe(source: Any, callback: Callable[[], None]) -> None:
    """Call ``callback()`` whenever ``source`` has a new result or a changed layout.

    Raises
    ------
    TypeError
        If ``source`` has neither ``on_result`` (a LiveApp) nor ``on_change`` (the MIG board).
    """
    if source is None:  # a prediction about the school case itself: nothing to follow
        return
    hooks = getattr(source, "on_result", None)
    if hooks is None:
        hooks = getattr(source, "on_change", None)
    if not isinstance(hooks, list):
        raise TypeError(f"{type(source).__name__} has no on_result/on_change callbacks")
    hooks.append(lambda *_: callback())


def _shown(value: float, unit: str) -> str:
    """A prediction or an actual value as people read it (labkit.ui.format.quantity)."""
    if unit == "%":  # one decimal, none for a whole number ("12 %", not "12.0 %")
        return f"{fmt.fixed(value, 1)} %"
    digits = 4 if abs(value) < 1_000 else 3
    return fmt.quantity(value, unit, sig=digits)


def reflection(pred: Prediction, guess: float | str, actual: float | str) -> str:
    """Return the one-line Korean reflection on a prediction (direction, then why).

    How far off a numeric prediction is: a percentage in percentage points ("실제보다 32.6 %p
    높습니다"; a relative error of a percentage, "188 % 큽니다", reads as nonsense), another
    quantity relatively ("50 % 큽니다"), ten times or more as a factor ("12,500배").
    """
    why = t(f"predict.{pred.key}.why")
    if isinstance(guess, str) or isinstance(actual, str):
        head = t("predict.reflect.same" if guess == actual else "predict.reflect.other")
        return f"{head} {why}"
    if actual == 0 or not math.isfinite(actual):
        close = guess == actual
        rel = 0.0
    else:
        rel = (guess - actual) / abs(actual)
        close = abs(rel) <= pred.close_frac
    if close:
        head = t("predict.reflect.close")
    elif pred.unit == "%":  # a difference of percentages in percentage points, not "188 % 큽니다"
        pp = fmt.fixed(abs(guess - actual), 1)
        head = t("predict.reflect.high_pp" if guess > actual else "predict.reflect.low_pp", pp=pp)
    elif rel >= 9 and actual > 0:  # 10x or more: "12,500배", not "1,249,900 % 큽니다"
        head = t("predict.reflect.times", times=fmt.readable(guess / actual, sig=3))
    elif guess > actual:
        head = t("predict.reflect.high", pct=f"{abs(rel) * 100:,.0f}")
    else:
        head = t("predict.reflect.low", pct=f"{abs(rel) * 100:,.0f}")
    return f"{head} {why}"


class PredictWidget(widgets.VBox):
    """The prediction box (see :func:`ask`).

    Attributes
    ----------
    guess : float, str or None
        The locked prediction (None until locked).
    """

    def __init__(self, source: Any, pred: Prediction) -> None:
        super().__init__()
        slug = pred.key.replace(".", "-")
        self.add_class("lk-predict")
        self.add_class(f"lk-predict-{slug}")
        self.source, self.pred = source, pred
        self.guess: float | str | None = None
        values = {k: f(source) for k, f in pred.extra.items()}
        question = widgets.HTML(f"<b>{html.escape(t('predict.title'))}</b> "
                                f"{html.escape(t(f'predict.{pred.key}.q', **values))}")
        if pred.choices:
            self.answer: widgets.ValueWidget = widgets.RadioButtons(
                options=[(t(f"predict.{pred.key}.choice.{c}"), c) for c in pred.choices],
                value=None, layout=widgets.Layout(width="auto"))
        else:
            self.answer = widgets.Text(placeholder=t("predict.placeholder"),
                                       layout=widgets.Layout(width="180px"))
        self.answer.add_class(f"lk-predict-{slug}-answer")
        self.lock = widgets.Button(description=t("predict.lock"), icon="lock",
                                   button_style="info")
        self.lock.add_class(f"lk-predict-{slug}-lock")
        self.lock.on_click(lambda _b: self.commit())
        self.feedback = widgets.HTML()
        self.feedback.add_class(f"lk-predict-{slug}-feedback")
        #: Why the typed prediction was refused, beside the box (empty when none).
        self.error = widgets.HTML()
        self.error.add_class(f"lk-predict-{slug}-error")
        self.compare = widgets.HTML()
        self.compare.add_class(f"lk-predict-{slug}-compare")
        unit = widgets.HTML(html.escape(pred.unit))
        # a choice takes only a listed option from a browser; a note beside it says so
        note = [guard(self.answer, f"predict-{slug}")] if pred.choices else []
        self.children = [question, widgets.HBox([self.answer, unit, self.lock, self.error, *note],
                                                layout=widgets.Layout(align_items="center")),
                         self.feedback, self.compare]
        self.box_style = ""
        #: Whether the linked app is hidden until the prediction is confirmed.
        self.hides = pred.reveal and isinstance(source, widgets.Widget)
        #: What the prediction hides: the app's ``revealing`` parts (03's goodput readout
        #: and waterfall, its inputs left to read), else the whole app.
        self.hidden: list[widgets.Widget] = (
            list(getattr(source, "revealing", None) or [source]) if self.hides else [])
        if self.hides:
            # hidden, its place kept: a chart drawn in a hidden box keeps its width (not
            # display:none, where plotly draws at its default 700 px)
            for part in self.hidden:
                part.layout.visibility = "hidden"
            self.add_class("lk-predict-reveals")
            self.feedback.value = html.escape(t("predict.reveal"))
        #: Called once the prediction is confirmed (:meth:`when_confirmed`).
        self._on_confirm: list[Callable[[], None]] = []
        subscribe(source, self.refresh)

    def when_confirmed(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` when the prediction is confirmed (now, if it already is)."""
        if self.guess is not None:
            callback()
        else:
            self._on_confirm.append(callback)

    def commit(self) -> bool:
        """Read and lock the prediction; False (with a Korean message) if it cannot be read."""
        if self.guess is not None:
            return True
        raw = self.answer.value
        typed = str(raw)
        if self.pred.choices:
            if raw not in self.pred.choices:
                self.error.value = _warn(t("predict.pick_one"))
                return False
            guess: float | str = typed
        else:
            read = self._read(typed)
            if read is None:
                return False
            guess = read  # the box keeps what was typed; 내 예측 shows the reading (issue 25)
        self.error.value = ""
        self.guess = guess
        self.answer.disabled = True
        self.lock.disabled = True
        for part in self.hidden:
            reveal(part)
        for callback in self._on_confirm:
            callback()
        self._on_confirm.clear()
        self.lock.description = t("predict.locked")
        try:
            record_result(f"predict.{self.pred.key}", typed, None)
        except OSError:
            pass  # the lesson goes on without its progress line
        self.feedback.value = html.escape(t("predict.try_now"))
        self.refresh()
        return True

    def _read(self, typed: str) -> float | None:
        """The typed prediction in the question's unit and range; None (and the Korean reason
        beside the box) when it cannot be read or lies outside the prediction's range."""
        unit = self.pred.unit
        try:
            value = read_quantity(typed, unit).value
        except AnswerError as err:
            self.error.value = _warn(html.unescape(answer_error_text(err, unit)))
            return None
        message = self.pred.out_of_range(value)
        if message is not None:
            self.error.value = _warn(t("predict.range.typed", message=message,
                                       typed=typed[:40]))
            return None
        return value

    def refresh(self) -> None:
        """Show prediction vs actual (after the prediction is locked and a result exists)."""
        if self.guess is None:
            return
        try:
            actual = self.pred.actual(self.source)
        except (ValueError, ArithmeticError, AttributeError, KeyError, TypeError, LookupError):
            return  # never break the linked app's own callbacks over the comparison
        if actual is None:
            return
        if isinstance(self.guess, str) or isinstance(actual, str):
            g_text = t(f"predict.{self.pred.key}.choice.{self.guess}")
            a_text = t(f"predict.{self.pred.key}.choice.{actual}")
        else:
            g_text, a_text = _shown(self.guess, self.pred.unit), _shown(actual, self.pred.unit)
        line = reflection(self.pred, self.guess, actual)
        self.compare.value = (
            '<div style="display:flex;gap:28px;margin:4px 0">'
            f'<div><div style="color:#555">{html.escape(t("predict.mine"))}</div>'
            f'<div style="font-size:1.4em;font-weight:700">{html.escape(g_text)}</div></div>'
            f'<div><div style="color:#555">{html.escape(t("predict.actual"))}</div>'
            f'<div style="font-size:1.4em;font-weight:700">{html.escape(a_text)}</div></div>'
            f'</div><div>{html.escape(line)}</div>')


def shown_with(prediction: PredictWidget, widget: W) -> W:
    """Return ``widget`` hidden until ``prediction`` is confirmed, then shown (issue 25).

    For an app or table further down the page that shows the prediction's answer (03's
    comparison app repeats the ledger's goodput). Hidden with ``visibility: hidden``, its
    place kept, as a revealing prediction hides its own app (a plotly chart drawn in a
    ``display: none`` box comes out at its default width).

    Used in: notebooks/03, 05, 06, 08
    """
    if prediction.guess is None:
        widget.layout.visibility = "hidden"
        prediction.when_confirmed(lambda: reveal(widget))
    return widget


class RevealedTable(widgets.HTML):
    """A checked table (``# NBVAL_CHECK_OUTPUT``) shown only once ``prediction`` is confirmed.

    Until then the page shows a one-line note in its place; the table's text stays the
    output's ``text/plain`` (what nbval compares, and what a notebook without widgets shows),
    while JupyterLab and voila draw the widget, whose HTML is the table only after the
    prediction is confirmed.

    Used in: notebooks/03, 05, 06, 08
    """

    def __init__(self, prediction: PredictWidget, table: fmt.Table) -> None:
        super().__init__(value=html.escape(t("predict.reveal_table")))
        self.table = table
        self.add_class("lk-revealed-table")
        prediction.when_confirmed(self._reveal)

    def _reveal(self) -> None:
        self.value = self.table._repr_html_()

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any] | None:
        bundle: dict[str, Any] | None = super()._repr_mimebundle_(**kwargs)
        if bundle is not None:
            bundle["text/plain"] = self.table.to_string()
        return bundle


def _warn(text: str) -> str:
    return f'<span style="color:#b00020">⚠ {html.escape(text)}</span>'


def ask(source: Any, key: str) -> PredictWidget:
    """Return the prediction box ``key`` linked to the lesson app ``source``.

    Parameters
    ----------
    source : LiveApp, BoardApp or None
        The simulator the prediction is about (its result is the "actual"); None for a
        prediction about the school case itself (lesson 01).
    key : str
        One of :data:`labkit.ui.checks.PREDICTIONS` (``"02.max_1g"``, ``"07.july_bill"``).

    Raises
    ------
    KeyError
        If ``key`` is not a prediction.

    Used in: notebooks/01-09
    """
    from labkit.ui.checks import PREDICTIONS

    return PredictWidget(source, PREDICTIONS[key])
