"""Lesson 03's widgets, server side: live updates, Korean errors, last good result kept."""

from __future__ import annotations

import math
import re

import pytest

from labkit.ui import goodput as ui
from labkit.ui.components import find_by_class
from labkit.ui.exercises import Exercise, check_answer, parse_number


@pytest.fixture
def ledger() -> ui.WorksheetApp:
    return ui.worksheet_app()


def test_worksheet_app_shows_seed_goodput(ledger: ui.WorksheetApp) -> None:
    assert ledger.result is not None and ledger.result.effective_h == 640
    assert "88.9 %" in ledger.big.value
    assert list(ledger.chart.figure.data[0].y) == [720, -8, -22, -6, -14, -30, 0]


def test_worksheet_app_loss_change_updates_goodput_and_waterfall(ledger: ui.WorksheetApp) -> None:
    ledger.fields["failure_stops"].control.value = 100
    assert ledger.result.effective_h == 562
    assert "78.1 %" in ledger.big.value
    assert ledger.chart.figure.data[0].y[2] == -100


@pytest.mark.parametrize(
    ("key", "value", "text"),
    [("failure_stops", -5, "0 이상"), ("reserved_h", 0, "0보다 커야"),
     ("rewind", math.nan, "유한한"), ("rewind", math.inf, "유한한"),
     ("rewind", 700, "예약된 시간(720 h)")],
)
def test_worksheet_app_bad_input_shows_korean_error_and_keeps_last_chart(
    ledger: ui.WorksheetApp, key: str, value: float, text: str
) -> None:
    good_result, good_fig, good_big = ledger.result, ledger.chart.figure, ledger.big.value
    ledger.fields[key].control.value = value
    assert text in ledger.fields[key].error.value
    assert ledger.result is good_result
    assert ledger.chart.figure is good_fig
    assert ledger.big.value == good_big
    assert "마지막으로 올바른 결과" in ledger.status.value
    ledger.fields[key].control.value = ledger.fields[key].default
    assert ledger.fields[key].error.value == ""
    assert ledger.result.effective_h == 640


def test_worksheet_app_reset_restores_seed(ledger: ui.WorksheetApp) -> None:
    ledger.fields["rewind"].control.value = 50
    ledger.reset()
    assert ledger.result.effective_h == 640


def test_controls_carry_css_classes_for_tests(ledger: ui.WorksheetApp) -> None:
    assert find_by_class(ledger, "lk-worksheet-rewind") is ledger.fields["rewind"].control
    with pytest.raises(LookupError):
        find_by_class(ledger, "lk-nothing")


def test_comparison_app_case1_and_follows_ledger(ledger: ui.WorksheetApp) -> None:
    compare = ui.comparison_app(ledger)
    assert round(compare.result.factor, 5) == 1.26984
    assert round(compare.result.gpus_needed, 1) == 5201.3
    assert "5,201장" in compare.summary.value
    ledger.fields["failure_stops"].control.value = 100
    assert compare.reference == pytest.approx(562 / 720)
    assert "78.1 %" in compare.summary.value


def test_comparison_app_rejects_values_a_browser_forces_past_the_slider(
    ledger: ui.WorksheetApp,
) -> None:
    compare = ui.comparison_app(ledger)
    good = compare.result
    slider = compare.fields["goodput"].control
    slider.max = 1e6  # a comm message can move max and value together
    slider.value = 123456
    assert compare.result is good
    assert "허용 범위" in compare.fields["goodput"].error.value
    compare.fields["n_gpus"].control.value = -1
    assert "0보다 커야" in compare.fields["n_gpus"].error.value


def test_straggler_app_is_two_way_linked_to_ledger(ledger: ui.WorksheetApp) -> None:
    straggler = ui.straggler_app(ledger)
    assert straggler.result.slowdown == pytest.approx(1.047, abs=5e-4)
    straggler.fields["slowdown"].control.value = 1.1
    assert ledger.fields["straggler"].control.value == pytest.approx(670 * (1 - 1 / 1.1), abs=1e-3)
    assert ledger.result.losses["straggler"] == pytest.approx(60.909, abs=1e-3)
    ledger.fields["straggler"].control.value = 30
    assert straggler.fields["slowdown"].control.value == pytest.approx(1.047, abs=5e-4)
    ledger.fields["rewind"].control.value = 114  # stepping hours fall to 570 h
    assert straggler.result.stepping_h == 570
    assert straggler.result.slowdown == pytest.approx(570 / 540, abs=5e-4)


def test_seed_numbers_table_holds_case1_values() -> None:
    table = ui.seed_numbers()
    text = table.to_string()
    for value in ("640 h", "0.889 (88.9 %)", "1.270", "5,201 (+1,105)", "580억 1,250만 원",
                  "1.047"):
        assert value in text


def test_the_extra_cost_prices_the_gpus_the_page_shows() -> None:
    """Issue 25: 1,105.27 GPUs were priced beside "+1,105"; the page prices 1,105 GPUs."""
    from labkit import goodput
    from labkit.ui.goodput import shown_extra_cost_krw

    eq = goodput.hardware_equivalent(4096, 0.7, 640 / 720, 52_500_000)
    assert f"{eq.extra_gpus:,.0f}" == "1,105" and eq.extra_gpus != 1105
    assert shown_extra_cost_krw(eq) == pytest.approx(1105 * 52_500_000)
    fewer = goodput.hardware_equivalent(4096, 0.95, 640 / 720, 52_500_000)
    assert shown_extra_cost_krw(fewer) == pytest.approx(
        round(fewer.extra_gpus) * 52_500_000)


@pytest.mark.parametrize(
    ("text", "value"), [("86.1", 86.1), ("86.1 %", 86.1), ("5,201", 5201), ("100h", 100),
                        ("1.125배", 1.125), (" 7 ", 7)],
)
def test_parse_number_accepts_units(text: str, value: float) -> None:
    assert parse_number(text) == value


@pytest.mark.parametrize("text", ["", "abc", "nan", "inf", "1.2.3"])
def test_parse_number_rejects_garbage(text: str) -> None:
    with pytest.raises(ValueError):
        parse_number(text)


def test_exercise_answers_come_from_the_model_and_are_checked() -> None:
    box = ui.exercises()
    assert len(box.children) == 3
    ex = Exercise("goodput.ex1", 620 / 720 * 100, 0.051, "%")
    assert check_answer(ex, "86.1")[0] is True
    ok, feedback = check_answer(ex, "80")
    assert ok is False and "goodput" in feedback
    ok, feedback = check_answer(ex, "모름")
    assert ok is None and "숫자로" in feedback


def test_exercise_widget_check_button_gives_feedback() -> None:
    box = ui.exercises()
    answer = find_by_class(box, "lk-goodput-ex2-answer")
    button = find_by_class(box, "lk-goodput-ex2-check")
    feedback = find_by_class(box, "lk-goodput-ex2-feedback")
    answer.value = "1.125"
    button.click()
    assert "정답" in feedback.value


def test_too_many_reserved_hours_are_refused_under_the_reserved_box(
    ledger: ui.WorksheetApp,
) -> None:
    """Issue 17: 9,000 h reserved said "손실을 모두 더하면 … (8784 h)보다 큽니다"."""
    ledger.fields["reserved_h"].control.value = 9000
    error = ledger.fields["reserved_h"].error.value
    assert "8,784 h" in error and "입력: 9,000 h" in error and "손실" not in error
    assert all(not f.error.value for k, f in ledger.fields.items() if k != "reserved_h")


def test_losses_past_the_reserved_hours_name_the_line_and_echo_it(
    ledger: ui.WorksheetApp,
) -> None:
    ledger.fields["rewind"].control.value = 700
    error = ledger.fields["rewind"].error.value
    assert "예약된 시간(720 h)" in error and "입력: 700 h" in error


def test_a_cluster_better_than_ours_needs_fewer_gpus_never_minus_extra(
    ledger: ui.WorksheetApp,
) -> None:
    """Issue 17: the straggler slider at its max made the comparison say "추가 -465.9장"."""
    compare = ui.comparison_app(ledger)
    straggler = ui.straggler_app(ledger)
    straggler.fields["slowdown"].control.value = straggler.fields["slowdown"].control.max
    assert compare.result.extra_gpus < 0  # our goodput fell below the other cluster's
    text = compare.summary.value
    assert not re.search(r"[-−]\s*\d", text)
    fewer = -compare.result.extra_gpus
    assert f"{fewer:,.0f}장 적게" in text and "아끼는 장비 비용" in text


def test_the_percent_slider_states_its_range_in_percent(ledger: ui.WorksheetApp) -> None:
    compare = ui.comparison_app(ledger)
    slider = compare.fields["goodput"].control
    slider.max = 1e6  # server side (a browser cannot: tests/test_ui_components.py)
    slider.value = 250
    error = compare.fields["goodput"].error.value
    assert "허용 범위 0 초과 100 이하를 벗어났습니다 (입력: 250)" in error


def test_the_waterfall_axis_starts_where_the_losses_are_and_says_so(
    ledger: ui.WorksheetApp,
) -> None:
    """Issue 17: from 0, 80 h of losses on 720 h were slivers."""
    low, high = ledger.chart.figure.layout.yaxis.range
    assert low == 600 and 720 < high <= 760  # 640 h effective - half of the 80 h lost, rounded
    assert "600 h에서 시작" in ledger.chart.figure.layout.annotations[0].text
    ledger.fields["failure_stops"].control.value = 500  # most of the month lost: axis from 0
    assert ledger.chart.figure.layout.yaxis.range[0] == 0
    assert not ledger.chart.figure.layout.annotations


def test_the_comparison_chart_is_the_1_over_goodput_curve(ledger: ui.WorksheetApp) -> None:
    compare = ui.comparison_app(ledger)
    curve, ours, theirs = compare.chart.figure.data
    assert len(curve.x) > 100 and curve.x[0] == 30 and curve.x[-1] == 100
    n, ref = 4_096, 640 / 720  # the worksheet: 4,096 GPUs at 88.9 %
    for x, y in zip(curve.x, curve.y, strict=True):
        assert y == pytest.approx(n * ref / (x / 100))
    assert (ours.x[0], ours.y[0]) == (pytest.approx(100 * ref), pytest.approx(n))
    assert theirs.x[0] == pytest.approx(70) and theirs.y[0] == pytest.approx(n * ref / 0.7)
