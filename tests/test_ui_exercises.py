"""labkit.ui.exercises: answers read in the unit asked, what was understood beside the verdict."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from labkit.ui.exercises import Exercise, check_answer, exercise_set, grade, understood

ROOT = Path(__file__).resolve().parents[1]


def test_thirty_minutes_to_an_hours_question_is_half_an_hour() -> None:
    ex = Exercise("orch.ex5", 0.5, 0.05, "h")
    g = grade(ex, "30분")
    assert g.ok is True and g.understood == "30분 = 0.5 h로 읽었습니다."
    assert grade(ex, "30").ok is False  # a bare number is in the unit asked: 30 h


def test_a_bare_number_right_in_another_unit_gets_that_hint() -> None:
    """Issue 17: "30" meant as minutes to an hours question is told to write "30분"."""
    ok, feedback = check_answer(Exercise("orch.ex5", 0.5, 0.05, "h"), "30")
    assert ok is False and "'30분'처럼 단위를 붙여" in feedback
    ok, feedback = check_answer(Exercise("opex.ex2", 30.0, 0.05, "kW"), "30000")
    assert ok is False and "'30000W'처럼" in feedback
    ok, feedback = check_answer(Exercise("orch.ex5", 0.5, 0.05, "h"), "7")
    assert ok is False and "단위를 붙여" not in feedback  # wrong in every unit: the lesson's hint


def test_understood_uses_the_right_particle() -> None:
    assert understood("30분", "h") == "30분 = 0.5 h로 읽었습니다."
    assert understood("0.5시간", "분") == "0.5시간 = 30분으로 읽었습니다."
    assert understood("1.2만 원", "원") == "1.2만 원 = 12,000원으로 읽었습니다."
    assert understood("0.5", "배") == ""  # read as typed: nothing to say
    assert understood("70.7%", "") == "70.7% = 0.707로 읽었습니다."


@pytest.mark.parametrize(("text", "unit", "said"), [
    # issue 17's trial: "4개 = 4 개로" (a Korean counter follows its number without a space)
    ("4", "장", ""),  # read as typed: nothing to say (issue 25: "4개 = 4개로 읽었습니다")
    ("3일", "h", "3일 = 72 h로 읽었습니다."),
    ("약 1.5일", "h", "약 1.5일 = 36 h로 읽었습니다."),
    ("3시간", "분", "3시간 = 180분으로 읽었습니다."),
    # numbers in people's format: 만/억/조, at most 4 significant digits, never 309 digits
    ("89.2억", "토큰", ""),
    ("89.2억", "억 토큰", ""),
    ("123456", "", "123456 = 12.35만으로 읽었습니다."),
    ("9" * 15, "", f"{'9' * 15} = 1,000조로 읽었습니다."),
    ("1e8", "억 토큰", None),  # 10^8 x 억 = 10^16 tokens: refused, not echoed
    ("1시간 20분", "h", "1시간 20분 = 1.333 h로 읽었습니다."),
    ("150000", "억 토큰", "150000 = 15조 토큰으로 읽었습니다."),
    ("0.000012345", "h", "0.000012345 = 0.000012 h로 읽었습니다."),
])
def test_understood_is_in_peoples_format(text: str, unit: str, said: str | None) -> None:
    if said == "":
        assert understood(text, unit) == ""
        return
    if said is None:
        with pytest.raises(ValueError, match="너무 큽니다"):
            understood(text, unit)
        return
    assert understood(text, unit) == said
    echoed = said.split(" = ", 1)[1]
    assert all(len(run) <= 6 for run in re.findall(r"\d+", echoed.replace(",", "")))


def test_1e308_is_refused_in_korean_not_echoed() -> None:
    g = grade(Exercise("goodput.ex1", 1.0, 0.1, ""), "1e308")
    assert g.ok is None and "너무 큽니다" in g.verdict and g.understood == ""


def test_a_ratio_to_a_percent_question_is_read_and_said() -> None:
    ex = Exercise("goodput.ex1", 620 / 720 * 100, 0.051, "%")
    ok, feedback = check_answer(ex, "0.861")
    assert ok is True
    assert feedback.startswith("0.861 = 86.1 %로 읽었습니다 (0과 1 사이의 비율로 보고 100을 곱했")


def test_a_wrong_ratio_gets_the_specific_hint_not_the_generic_one() -> None:
    ex = Exercise("goodput.ex1", 620 / 720 * 100, 0.051, "%")
    ok, feedback = check_answer(ex, "0.8")
    assert ok is False
    assert "0.8 × 100 = 80 %" in feedback and "백분율(%)" in feedback
    assert "goodput = (예약" not in feedback  # the lesson's generic hint is replaced
    ok, feedback = check_answer(ex, "80")
    assert ok is False and "goodput = (예약" in feedback  # a plain wrong % keeps the lesson's hint


def test_a_small_percentage_typed_bare_still_counts_as_percent() -> None:
    """Lesson 01's SM activity is 0.8 %: "0.8" to that question is right, not 80 %."""
    ex = Exercise("goodput.ex1", 0.8, 0.05, "%")
    g = grade(ex, "0.8")
    assert g.ok is True and g.understood == "0.8 = 0.8 %로 읽었습니다."


@pytest.mark.parametrize(("unit", "answer", "text"), [
    ("토큰", 8.92e9, "89.2억"),
    ("토큰", 8.9e9, "89억 토큰"),
    ("h", 100, "100 시간"),
    ("개", 4, "4개"),
    ("원", 30_000_000, "3천만 원"),
    ("kW", 30, "30000 W"),
])
def test_answers_with_units_and_number_words_are_graded(unit: str, answer: float,
                                                        text: str) -> None:
    assert grade(Exercise("goodput.ex1", answer, 0.0, unit), text).ok is True


@pytest.mark.parametrize(("text", "unit", "words"), [
    ("모름", "h", "숫자로 입력하세요"),
    ("", "h", "비어 있습니다"),
    ("30 40", "h", "둘 이상"),
    ("5 원", "h", "이 문제는 h 단위로 답합니다"),
    ("5 furlong", "h", "알 수 없는 단위입니다: furlong"),
    ("1e400", "h", "유한하지 않은"),
    ("7" * 100_000, "h", "너무 깁니다"),
    ("<b>3</b> 개", "h", "&lt;b&gt;"),  # what was typed is escaped in the HTML feedback
])
def test_unreadable_answers_say_why_in_korean(text: str, unit: str, words: str) -> None:
    g = grade(Exercise("goodput.ex1", 1.0, 0.1, unit), text)
    assert g.ok is None and words in g.verdict and g.understood == ""


def test_the_widget_shows_the_understood_text_beside_the_verdict() -> None:
    box = exercise_set([Exercise("orch.ex5", 0.5, 0.05, "h")])
    _question, row, feedback = box.children[0].children
    answer, _unit, button = row.children
    answer.value = "30분"
    button.click()
    assert "✔" in feedback.value and "lk-understood" in feedback.value
    assert "30분 = 0.5 h로 읽었습니다." in feedback.value


def test_an_exercise_in_a_unit_the_parser_cannot_read_fails_when_built() -> None:
    with pytest.raises(ValueError, match="asked unit"):
        Exercise("goodput.ex1", 1.0, 0.1, "furlongs")


@pytest.mark.parametrize("lesson", ["mig", "goodput", "reliability", "economics", "opex",
                                    "orchestration"])
def test_every_lessons_exercises_build_in_units_the_parser_reads(lesson: str) -> None:
    """Lessons 02-08 build their exercises; each Exercise checks its unit when built."""
    import importlib

    module = importlib.import_module(f"labkit.ui.{lesson}")
    builders = [getattr(module, n) for n in ("exercises", "exercises_05", "exercises_06")
                if hasattr(module, n)]
    assert builders, lesson
    assert all(b().children for b in builders)


@pytest.mark.parametrize("unit", ["h", "%", "배", "분", "억 토큰", "원", "kW", "개", "장", ""])
def test_the_lessons_units_take_an_answer_with_the_unit_typed(unit: str) -> None:
    assert grade(Exercise("goodput.ex1", 2.0, 0.0, unit), f"2 {unit}".strip()).ok is True


# --- every exercise and prediction of every lesson, as the notebooks build them (issue 17) ---

#: A unit of another dimension for each asked unit's dimension: the right number typed in it
#: must be refused in Korean, not graded.
_OTHER = {"h": "원", "분": "원", "초": "원", "일": "원", "원": "h", "달러": "h"}


def _lesson_questions(lesson: str) -> tuple[list[Exercise], list[Any]]:
    import ipywidgets as widgets

    from labkit.ui.predict import PredictWidget
    from tests.test_rendered_korean import run_lesson

    shown = run_lesson(ROOT / "notebooks" / f"{lesson}.ipynb")
    exercises: list[Exercise] = []
    predictions: list[Any] = []
    stack = [w for w in shown if isinstance(w, widgets.Widget)]
    while stack:
        w = stack.pop()
        exercises.extend(getattr(w, "exercises", ()))
        if isinstance(w, PredictWidget):
            predictions.append(w)
        stack.extend(getattr(w, "children", ()))
    return exercises, predictions


def _typed_forms(value: float, unit: str) -> list[str]:
    """The right answer as a student may type it: with its unit, with the general counter
    for a count, bare."""
    number = f"{value:.12g}"
    forms = [f"{number} {unit}".strip(), f"{number}{unit}", number]
    if unit in ("장", "대", "명"):
        forms.append(f"{number}개")
    if unit == "개":
        forms.append(f"{number}장")
    return forms


@pytest.fixture(scope="module")
def lab_gpu() -> None:
    import labkit.gpu as gpu

    gpu.connect("sim:H100-80GB")


@pytest.mark.parametrize("lesson", sorted(
    p.stem for p in (ROOT / "notebooks").glob("0[1-9]_*.ipynb")))
def test_every_question_takes_its_units_and_refuses_another_dimension(
        lesson: str, lab_gpu: None) -> None:
    exercises, predictions = _lesson_questions(lesson)
    problems = []
    for ex in exercises:
        for typed in _typed_forms(ex.answer, ex.unit):
            g = grade(ex, typed)
            if g.ok is not True:
                problems.append(f"{ex.key} {typed!r}: {g.ok} {g.verdict[:120]}")
        other = _OTHER.get(ex.unit, "h") if ex.unit else "h"
        g = grade(ex, f"{ex.answer:.12g} {other}")
        if g.ok is not None or "단위" not in g.verdict:
            problems.append(f"{ex.key} in {other}: {g.ok} {g.verdict[:120]}")
        # a count of another thing: tokens for GPUs, GPUs for tokens
        thing = {"장": "토큰", "개": "토큰", "대": "토큰", "명": "토큰"}.get(
            ex.unit, "장" if ex.unit.endswith("토큰") else "")
        if thing:
            g = grade(ex, f"{ex.answer:.12g} {thing}")
            if g.ok is not None or "아니라" not in g.verdict:
                problems.append(f"{ex.key} in {thing}: {g.ok} {g.verdict[:120]}")
    for widget in predictions:
        pred = widget.pred
        actual = pred.actual(widget.source)
        if pred.choices or not isinstance(actual, float | int):
            continue
        for typed in _typed_forms(float(actual), pred.unit)[:2]:
            if widget._read(typed) is None:
                problems.append(f"{pred.key} {typed!r}: {widget.error.value[:120]}")
        other = _OTHER.get(pred.unit, "h") if pred.unit else "h"
        if widget._read(f"{actual:.12g} {other}") is not None or "단위" not in widget.error.value:
            problems.append(f"{pred.key} in {other}: {widget.error.value[:120]}")
    assert exercises or predictions or lesson == "01_observe"
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("text", "unit", "said"), [
    ("-0", "h", "-0 = 0 h로 읽었습니다."),  # -0 is 0, said so
    # what a box shows reads back
    ("5,250만 원", "원", "5,250만 원 = 52,500,000원으로 읽었습니다."),
    ("30만 USD", "USD", ""),  # read as typed: nothing to say
])
def test_echoes_of_zero_and_peoples_numbers(text: str, unit: str, said: str) -> None:
    assert understood(text, unit) == said


@pytest.mark.parametrize(("typed", "said"), [
    ("52500000", ""),  # read as typed (digits grouped)
    ("5,250만 원", "5,250만 원 = 52,500,000원으로 읽었습니다."),
    ("52,500,000원", ""),  # read as typed
    ("5250만원", "5250만원 = 52,500,000원으로 읽었습니다."),
])
def test_a_checked_answer_keeps_what_was_typed_and_says_the_reading_beside(
        typed: str, said: str) -> None:
    """Issue 25: the box rewrote "81만 3,192원" into "81.32만", graded ✘ on the next 확인."""
    box = exercise_set([Exercise("opex.ex1", 52_500_000, 1.0, "원")])
    _question, row, feedback = box.children[0].children
    answer, _unit, button = row.children
    answer.value = typed
    button.click()
    assert answer.value == typed and "✔" in feedback.value
    assert (said in feedback.value) if said else "lk-understood" not in feedback.value
    button.click()  # checked again: still right
    assert "✔" in feedback.value and answer.value == typed


def test_the_echo_of_07s_bill_is_exact() -> None:
    box = exercise_set([Exercise("opex.ex1", 813_192, 1.0, "원")])
    _question, row, feedback = box.children[0].children
    answer, _unit, button = row.children
    answer.value = "81만 3,192원"
    button.click()
    button.click()
    assert answer.value == "81만 3,192원" and "✔" in feedback.value
    assert "81만 3,192원 = 813,192원으로 읽었습니다." in feedback.value


# --- a checked answer stays right (issue 25) -----------------------------------------------------

def _korean_groups(x: float) -> str:
    """A whole amount as a bill or a student writes it in 만/억 groups: '81만 3,192'."""
    n, parts = round(abs(x)), []
    for size, word in ((10**8, "억"), (10**4, "만")):
        big, n = divmod(n, size)
        if big:
            parts.append(f"{big:,}{word}")
    if n or not parts:
        parts.append(f"{n:,}")
    return ("-" if x < 0 else "") + " ".join(parts)


def _written(value: float, unit: str, form: int) -> str:
    """``value`` typed the way a student may type it, in one of the course's number forms."""
    from labkit.ui import format as fmt

    texts = [f"{value:.12g}", f"{value:,.2f}", fmt.readable(value), fmt.quantity(value, unit),
             _korean_groups(value), f"약 {fmt.readable(value, sig=3)}", f"{value:.3g}"]
    text = texts[form % len(texts)]
    plain = unit.split()[-1] if unit else ""
    return f"{text}{plain}" if form >= len(texts) and plain and text[-1:].isdigit() else text


@pytest.fixture(scope="module")
def every_exercise(lab_gpu: None) -> list[Exercise]:
    """Every exercise of every lesson, as the notebooks build them."""
    found = [ex for nb in sorted((ROOT / "notebooks").glob("0[1-9]_*.ipynb"))
             for ex in _lesson_questions(nb.stem)[0]]
    assert len(found) >= 20
    return found


def _mark(feedback: str) -> str:
    return next(m for m in "✔✘⚠" if m in feedback)


def test_grading_what_the_box_shows_after_a_check_gives_the_same_verdict(
        every_exercise: list[Exercise]) -> None:
    """Property (hypothesis): for every exercise of every lesson and an answer typed in any of
    the course's number forms, near the answer or not, pressing 확인 again on what the box then
    shows gives the first verdict (issue 25: 07's "81만 3,192원" became "81.32만", then ✘)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(index=st.integers(0, len(every_exercise) - 1),
           factor=st.one_of(st.just(1.0), st.floats(0.9, 1.1), st.floats(0.0, 100.0)),
           form=st.integers(0, 13))
    def check(index: int, factor: float, form: int) -> None:
        ex = every_exercise[index]
        box = exercise_set([ex])
        _question, row, feedback = box.children[0].children
        answer, _unit, button = row.children
        answer.value = _written(ex.answer * factor, ex.unit, form)
        button.click()
        first, shown = _mark(feedback.value), answer.value
        button.click()
        assert answer.value == shown
        assert _mark(feedback.value) == first, (ex.key, shown, feedback.value)

    check()


def test_07s_bill_typed_in_groups_stays_right(every_exercise: list[Exercise]) -> None:
    ex = next(e for e in every_exercise if e.key == "opex.ex1")
    assert _korean_groups(ex.answer) == "81만 3,192"
    box = exercise_set([ex])
    _question, row, feedback = box.children[0].children
    answer, _unit, button = row.children
    answer.value = "81만 3,192원"
    for _ in range(2):
        button.click()
        assert answer.value == "81만 3,192원" and "✔" in feedback.value


def test_02s_first_question_says_it_depends_on_the_drivers_placement() -> None:
    from labkit.i18n import t

    q = t("mig.ex1.q")
    assert "드라이버" in q and "어느 유닛에 놓는지에 달려" in q and t("mig.board.auto") in q


def test_07s_neighbouring_utilizations_say_why_they_differ() -> None:
    """Issue 25: 17.4 % (문제 3) and "약 19 %" (문제 4) side by side, no word on why."""
    from labkit.i18n import t
    from labkit.ui import format as fmt
    from labkit.ui.opex import exercises

    by_key = {ex.key: ex for ex in exercises().exercises}
    class_only = fmt.fixed(by_key["opex.ex3"].answer, 1)
    plan = 100 / by_key["opex.ex4"].answer  # the default plan's mean utilization [%]
    explain = t("opex.ex4.explain")
    assert f"{class_only} %" in explain and f"가동률 {plan:.1f} %" in explain
    # the costs it divides are the model's (the trial followed "1 ÷ 0.19" to 5.3배: ✘)
    from labkit import opex
    from labkit.ui.opex.common import (
        DEFAULT_CLASS,
        _calendar,
        _tariff,
        default_design,
        default_usage,
    )
    room = opex.evaluate(default_design(), _tariff(DEFAULT_CLASS), _calendar(), default_usage())
    assert (f"{room.cost_per_used_gpu_h:,.0f}원 ÷ 달력 시간 기준 GPU-시간당 "
            f"{room.cost_per_calendar_gpu_h:,.0f}원 ≈ {by_key['opex.ex4'].answer:.1f}배") in explain
    assert "계획이 다르기 때문" in explain and "문제 3과 달리" in t("opex.ex4.q")
