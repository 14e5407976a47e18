"""Exercises (문제) with typed answers checked against the lesson's own model.

Each lesson defines its exercises as :class:`Exercise` values whose ``answer`` is computed by the
pure model (never typed in by hand), and shows them with :func:`exercise_set`. On the class hub
each checked answer is also recorded in the student's own home (``labkit.data.progress``) for the
teacher's class page.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

import ipywidgets as widgets

from labkit.answers import AnswerError, Reading, parse_amount, read_quantity, sibling_units
from labkit.data.progress import record_result
from labkit.i18n import t
from labkit.ui import format as fmt

__all__ = ["Exercise", "Grade", "answer_error_text", "check_answer", "exercise_set", "grade",
           "parse_number",
           "understood"]


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
        The unit the question asks for, shown after the answer box; answers are read in it
        by :func:`labkit.answers.read_quantity` (``"h"``, ``"%"``, ``"억 토큰"``, ``""``).

    Raises
    ------
    ValueError
        If ``unit`` is not a unit :mod:`labkit.answers` knows.
    """

    key: str
    answer: float
    tolerance: float
    unit: str = ""

    def __post_init__(self) -> None:
        # A unit the answer parser cannot read answers in is the lesson's bug: fail when the
        # lesson builds its exercises (its tests), not when a student checks an answer.
        read_quantity("0", self.unit)


@dataclass(frozen=True)
class Grade:
    """A checked answer: the verdict and what was understood.

    Attributes
    ----------
    ok : bool or None
        True (correct), False (wrong) or None (could not be read as a number in the unit).
    verdict : str
        Korean feedback: the explanation, the hint, or why the answer could not be read
        (HTML: what the student typed is escaped).
    understood : str
        Korean "30분 = 0.5 h로 읽었습니다." (empty when the answer could not be read, or was
        read as typed: "4개" to a question in 개; HTML).
    value : float or None
        The answer read in the exercise's unit (None when it could not be read).
    """

    ok: bool | None
    verdict: str
    understood: str
    value: float | None = None


def parse_number(text: str) -> float:
    """Return the number of a typed answer, whatever unit follows it (``"53.7분"`` -> 53.7).

    Number words apply (``"1.2만"`` -> 12000). Kept for callers that ignore units; exercises
    read answers in their unit with :func:`labkit.answers.read_quantity`.

    Raises
    ------
    ValueError
        If the text holds no number, two numbers, or a non-finite one.
    """
    return parse_amount(text).number


def _typed(text: str) -> str:
    """What the student typed, cut to 40 characters and escaped for the HTML feedback."""
    return html.escape(text[:40])


def _ro(word: str) -> str:
    """The particle 로/으로 after ``word`` (으로 after a final consonant other than ㄹ)."""
    if not word:
        return "로"
    last = word[-1]
    if "가" <= last <= "힣":
        final = (ord(last) - ord("가")) % 28
        return "로" if final in (0, 8) else "으로"  # 8: ㄹ (서울로, 길로)
    if last.isdigit():  # read as Sino-Korean: 영 삼 육 take 으로 (0, 3, 6)
        return "으로" if last in "036" else "로"
    return "로"  # h(에이치), %(퍼센트), kW(킬로와트), kWh(킬로와트시)


def _plain(text: str) -> str:
    """``text`` without spaces, commas and words of approximation, for comparing forms."""
    return re.sub(r"[\s,]", "", _ABOUT_WORDS.sub("", text))


#: Words of approximation a student may put around an estimate ("약 264일", "30분쯤"):
#: dropping them converts nothing (labkit.answers reads past the same words).
_ABOUT_WORDS = re.compile(r"^\s*(?:약|대략|거의|대충|얼추|어림잡아|~|≈)"
                          r"|(?:쯤|정도|가량|남짓|내외|안팎)\s*$")


def _converted(reading: Reading, shown: str) -> bool:
    """Whether the reading says something the typed text did not: a unit, number word or ratio
    converted ("30분" -> "0.5 h", "123456" -> "12.35만"); not "4개" -> "4개" or "4" -> "4개"."""
    if reading.ratio:
        return True
    typed, said = _plain(reading.text), _plain(shown)
    # the asked unit may be left off ("4" to 개) and its 만/억 may be typed ("89.2억" to 억 토큰)
    units = {_plain(reading.unit), _plain(reading.unit.split()[-1]) if reading.unit else ""}
    return typed not in {said, *(said.removesuffix(u) for u in units if u)}


def _understood(reading: Reading, *, always: bool = False) -> str:
    """What a typed answer was read as; empty when nothing was converted (unless ``always``)."""
    # people's format (labkit.ui.format.quantity): "4개", "0.5 h", "89.2억 토큰", never 309 digits
    shown = fmt.quantity(reading.value, reading.unit)
    if not always and not _converted(reading, shown):
        return ""
    key = "answers.understood_ratio" if reading.ratio else "answers.understood"
    return t(key, typed=_typed(reading.text), value=shown, ro=_ro(shown))


def understood(text: str, unit: str) -> str:
    """Return what a typed answer was read as, in Korean: ``"30분 = 0.5 h로 읽었습니다."``.

    Empty when nothing was converted: ``"4개"`` (or ``"4"``) to a question in 개 is read as
    typed, and "4개 = 4개로 읽었습니다" would say nothing (issue 25).

    Raises
    ------
    ValueError
        If the answer cannot be read in ``unit`` (see :func:`labkit.answers.read_quantity`).
    """
    return _understood(read_quantity(text, unit))


def answer_error_text(err: AnswerError, unit: str) -> str:
    """The Korean text of an answer that could not be read in ``unit`` (HTML-escaped): why,
    and for a count of another thing what was asked ("토큰 수가 아니라 … 물었습니다")."""
    shown_unit = unit or t("answers.no_unit")
    if err.reason == "kind":
        return t("answers.error.kind", typed_what=err.typed_what, asked_what=err.asked_what,
                 unit=shown_unit, text=_typed(err.text))
    return t(f"answers.error.{err.reason}", text=_typed(err.text), unit=shown_unit,
             typed=_typed(err.typed))


def grade(exercise: Exercise, text: str) -> Grade:
    """Check a typed answer in the exercise's unit; never raises on what a student types."""
    try:
        reading = read_quantity(text, exercise.unit)
    except AnswerError as err:
        return Grade(None, answer_error_text(err, exercise.unit), "")
    if reading.ratio and abs(reading.literal - exercise.answer) <= exercise.tolerance:
        # "0.8" to a % question whose answer is 0.8 %: the student meant percent
        reading = replace(reading, value=reading.literal, ratio=False)
        said = _understood(reading, always=True)  # "0.8 = 0.8 %": not read as 80 %, say so
    else:
        said = _understood(reading)
    if abs(reading.value - exercise.answer) <= exercise.tolerance:
        return Grade(True, t("common.correct", explanation=t(f"{exercise.key}.explain")), said,
                     reading.value)
    if reading.ratio:
        hint = t("answers.hint.ratio", typed=_typed(reading.text),
                 value=fmt.readable(reading.value))
    else:
        hint = _other_unit_hint(exercise, reading) or t(f"{exercise.key}.hint")
    return Grade(False, t("common.incorrect", hint=hint), said, reading.value)


def _other_unit_hint(exercise: Exercise, reading: Reading) -> str | None:
    """The hint for a bare number that is right in another unit ("30" to an h question: 30분)."""
    if reading.typed_unit:
        return None
    for other in sibling_units(exercise.unit):
        try:
            value = read_quantity(f"{reading.text} {other}", exercise.unit).value
        except AnswerError:
            continue
        if abs(value - exercise.answer) <= exercise.tolerance:
            return t("answers.hint.other_unit", typed=_typed(reading.text), other=other,
                     unit=exercise.unit)
    return None


def check_answer(exercise: Exercise, text: str) -> tuple[bool | None, str]:
    """Return (correct?, Korean feedback) for a typed answer; ``None`` if it cannot be read.

    The feedback starts with what was understood (``"30분 = 0.5 h로 읽었습니다."``).
    """
    g = grade(exercise, text)
    return g.ok, f"{g.understood} {g.verdict}".strip()


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
        g = grade(ex, answer.value)
        _record(ex, answer.value, g.ok)
        # the box keeps what the student typed: a people's form written back into it can be
        # lossy ("81만 3,192원" -> "81.32만", graded ✘ on the next 확인; issue 25); the
        # reading is shown beside the verdict instead
        color = {True: "#1b7f3b", False: "#b00020", None: "#b00020"}[g.ok]
        mark = {True: "✔", False: "✘", None: "⚠"}[g.ok]
        said = (f' <span class="lk-understood" style="color:#555">{g.understood}</span>'
                if g.understood else "")
        feedback.value = f'<span style="color:{color}">{mark} {g.verdict}</span>{said}'

    button.on_click(on_check)
    question = widgets.HTML(f"<b>{t('common.exercise', n=n)}.</b> {t(f'{ex.key}.q')}")
    return widgets.VBox([question, widgets.HBox([answer, widgets.HTML(ex.unit), button]), feedback])


def exercise_set(exercises: Sequence[Exercise]) -> widgets.VBox:
    """Return a box with every exercise: question, answer box, check button, feedback."""
    box = widgets.VBox([_one(i, ex) for i, ex in enumerate(exercises, start=1)])
    box.add_class("lk-exercises")
    #: The exercises shown, in order (tests walk every lesson's questions through these).
    box.exercises = tuple(exercises)
    return box
