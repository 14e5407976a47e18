"""Lesson 04's widgets, server side: live updates, Korean errors, bounds, last good result kept."""

from __future__ import annotations

import math
import re

import pytest

from labkit import reliability as rel
from labkit.ui import reliability as ui
from labkit.ui.components import find_by_class
from labkit.ui.exercises import check_answer


def _trace(fig, name_part: str):  # type: ignore[no-untyped-def]
    return next(tr for tr in fig.data if name_part in (tr.name or ""))


def test_scaling_app_marks_the_three_sizes_and_follows_the_preset() -> None:
    app = ui.scaling_app()
    fig = app.chart.figure
    marked = [tr for tr in fig.data if tr.mode == "markers+text"]
    assert [int(tr.x[0]) for tr in marked] == [8, 4_096, 16_384]
    assert marked[2].y[0] == pytest.approx(3.093, abs=1e-3)  # Llama 3: 3.09 h
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert "12.37 h" in app.summary.value
    rsc1 = rel.gpu_mtbf_h_from_rate(6.50, "per_1000_node_days")
    app.preset.value = next(v for label, v in app.preset.options if "RSC-1" in label)
    assert app.result.gpu_mtbf_h == pytest.approx(rsc1, abs=0.1)
    assert app.chart.figure.data[3].y[0] == pytest.approx(1.80, abs=0.01)


def test_scaling_app_bad_mtbf_keeps_last_chart() -> None:
    app = ui.scaling_app()
    good = app.chart.figure
    app.fields["gpu_mtbf_h"].control.value = 0
    assert "0보다 커야" in app.fields["gpu_mtbf_h"].error.value
    assert app.chart.figure is good


def test_interval_app_marks_young_daly_exact_and_moves_with_the_slider() -> None:
    app = ui.interval_app()  # delta 5 min, M 6 h, R 10 min: Daly's 57-min case
    r = app.result
    assert (round(r.young, 2), round(r.daly, 2), round(r.exact, 3)) == (60.0, 56.71, 56.714)
    fig = app.chart.figure
    assert _trace(fig, "Young").x[0] == pytest.approx(60.0)
    assert _trace(fig, "Daly 근사").x[0] == pytest.approx(56.71, abs=5e-3)
    assert _trace(fig, "정확한 최적값").x[0] == pytest.approx(56.714, abs=5e-4)
    chosen = _trace(fig, "지금 고른 간격")
    assert chosen.x[0] == 60
    app.fields["interval_min"].control.value = 150
    moved = _trace(app.chart.figure, "지금 고른 간격")
    assert moved.x[0] == 150 and moved.y[0] > chosen.y[0]
    assert "간격 150분" in app.summary.value


def test_interval_app_async_checkpoint_shrinks_write_cost_and_optimum() -> None:
    app = ui.interval_app()
    before = app.result
    app.fields["async_write"].control.value = True
    after = app.result
    assert after.write_min == pytest.approx(ui.ASYNC_WRITE_MIN)
    assert after.exact < before.exact / 5
    assert after.best_overhead < before.best_overhead


@pytest.mark.parametrize(
    ("key", "value", "text"),
    [("write_min", 400, "MTBF(360분)보다 짧아야"), ("interval_min", 0, "0보다 커야"),
     ("interval_min", math.nan, "유한한"), ("mtbf_h", -1, "0보다 커야"),
     ("restart_min", -5, "0 이상"), ("interval_min", 1e9, "범위")],
)
def test_interval_app_bad_input_korean_error_last_result_kept(
    key: str, value: float, text: str
) -> None:
    app = ui.interval_app()
    good, fig = app.result, app.chart.figure
    control = app.fields[key].control
    control.max = max(control.max, value) if math.isfinite(value) else control.max
    control.min = min(control.min, value) if math.isfinite(value) else control.min
    control.value = value  # a browser can send any value
    assert text in app.fields[key].error.value
    assert app.result is good and app.chart.figure is fig
    assert "마지막으로 올바른 결과" in app.status.value


def test_ettr_app_shows_meta_and_exact() -> None:
    app = ui.ettr_app()
    meta, exact = app.result.at_n
    assert round(meta, 3) == 0.684 and round(exact, 3) == 0.720
    assert "68.4 %" in app.summary.value and "72 %" in app.summary.value
    app.fields["interval_min"].control.value = 5
    assert round(app.result.at_n[0], 2) == 0.93
    app.fields["n_gpus"].control.value = 1e12
    assert "범위" in app.fields["n_gpus"].error.value
    app.fields["n_gpus"].control.value = 2.5
    assert "정수" in app.fields["n_gpus"].error.value
    app.fields["n_gpus"].control.value = 16_000
    app.fields["write_s"].control.max = 1e6
    app.fields["write_s"].control.value = 1e6  # 278 h > the job's MTBF (1.85 h)
    assert "MTBF" in app.fields["write_s"].error.value


def test_month_app_histogram_marks_889_and_waterfall_is_lesson_03s() -> None:
    app = ui.month_app()
    view = app.result
    assert len(view.frame) == 10_000
    hist = app.histogram.figure
    lines = [shape.x0 for shape in hist.layout.shapes]
    assert lines[0] == pytest.approx(100 * 640 / 720)  # the worksheet's 88.9 %
    assert lines[1] == pytest.approx(100 * view.expected.goodput)
    water = app.waterfall.figure.data[0]
    assert water.type == "waterfall" and len(water.x) == 7
    assert water.y[0] == 720 and water.y[1] == -8
    assert app.progress.value == app.progress.max == 10_000
    mean = view.frame["goodput"].mean()
    assert abs(mean - view.expected.goodput) < 3 * view.frame["goodput"].sem()


def test_month_app_sample_and_redraw_and_parameters() -> None:
    app = ui.month_app()
    frame = app.result.frame
    app.fields["sample"].control.value = 7
    assert app.result.frame is frame  # same run, another month
    assert app.waterfall.figure.data[0].y[2] == pytest.approx(-frame.loc[7, "failure_stops"])
    find_by_class(app, "lk-month-redraw").click()
    assert app.result.frame is not frame
    before = app.result.expected.losses["failure_stops"]
    app.fields["restart_min"].control.value = 5
    assert app.result.expected.losses["failure_stops"] < before / 3


@pytest.mark.parametrize(
    ("key", "value", "text"),
    [("trials", 10**9, "20,000"), ("trials", 0, "정수"), ("trials", 1500.5, "정수"),
     ("n_gpus", -3, "정수"), ("interval_min", 0, "0보다 커야"), ("sample", 5_000, "표본")],
)
def test_month_app_bounds_every_browser_value(key: str, value: float, text: str) -> None:
    app = ui.month_app()
    good = app.result
    control = app.fields[key].control
    if hasattr(control, "max"):  # a slider: a comm message can move its limits too
        control.min, control.max = min(control.min, value), max(control.max, value)
    if key == "sample":
        app.fields["trials"].control.value = 1_000
        good = app.result
    control.value = value
    assert text in app.fields[key].error.value
    assert app.result is good


def test_eventlog_app_case11b_and_restart_slider() -> None:
    app = ui.eventlog_app()
    assert "30.6 %" in app.summary.value
    names = [tr.name for tr in app.chart.figure.data]
    assert "인프라 복구" in names and "되감기로 버린 진행" in names
    app.fields["restart_s"].control.value = 40
    assert app.result.result.goodput == pytest.approx(15 / 59)
    app.fields["restart_s"].control.min = 0
    app.fields["restart_s"].control.value = 10
    assert "충돌" in app.fields["restart_s"].error.value
    app.fields["restart_s"].control.value = 30
    app.fields["resume_step"].control.value = 4
    assert app.result.result.seconds["wasted_progress_from_disruption"] == 0


def test_real_data_builders() -> None:
    llama = ui.llama3_causes()
    fig = find_by_class(llama, "lk-llama3-chart").figure
    assert sum(sum(tr.x) for tr in fig.data) == 419
    text = ui.llama3_numbers().to_string()
    for value in ("419", "94.9 %", "GPU 고장: 횟수로 계산하면 35.3 %, 논문 인쇄값 30.1 %",
                  "268/419 = 64.0 %", "58.7 %"):
        assert value in text
    rates = find_by_class(ui.failure_rates(), "lk-rates-chart").figure
    assert len(rates.data) == 4
    stepfun = ui.stepfun_numbers().to_string()
    assert "4.20" in stepfun and "1.76" in stepfun and "33 / 231" in stepfun


def test_number_tables_hold_the_cases() -> None:
    scaling = ui.scaling_numbers().to_string()
    for value in ("50,677 h", "3.093 h", "2.781 h", "12.37 h", "58.19 (± 7.63)", "72.38 %",
                  "0.0427 %", "37.9 %", "3.789", "0.000474회 (약 2,112일에 한 번)"):
        assert value in scaling
    assert not re.search(r"\d[eE][+-]?\d", scaling)  # no scientific notation (issue 17)
    interval = ui.interval_numbers().to_string()
    for value in ("116.7", "56.71", "9.141", "9.167", "49.74", "53.67"):
        assert value in interval
    assert "0.684" in ui.ettr_numbers().to_string()
    log = ui.eventlog_numbers().to_string()
    for value in ("30.61", "20.41", "12.24", "16.33", "6.122"):
        assert value in log
    month = ui.month_numbers().to_string()
    assert "88.89 %" in month and "88.98 %" in month


def test_exercises_answers_come_from_the_models() -> None:
    box = ui.exercises()
    assert len(box.children) == 4
    answer = find_by_class(box, "lk-reliability-ex2-answer")
    button = find_by_class(box, "lk-reliability-ex2-check")
    feedback = find_by_class(box, "lk-reliability-ex2-feedback")
    answer.value = "53.7분"
    button.click()
    assert "정답" in feedback.value
    answer.value = "69"
    button.click()
    assert "다시" in feedback.value
    from labkit.ui.exercises import Exercise

    assert check_answer(Exercise("reliability.ex3", 37.9, 0.5, "%"), "37.9 %")[0] is True


def test_month_app_refuses_a_huge_gpu_count_under_the_gpu_box() -> None:
    """Issue 17: 1e308 GPUs put the error under the write-time slider."""
    app = ui.month_app()
    good = app.result
    app.fields["n_gpus"].control.value = 1e308
    assert "10,000,000" in app.fields["n_gpus"].error.value
    assert "1경 이상" in app.fields["n_gpus"].error.value
    assert all(not f.error.value for k, f in app.fields.items() if k != "n_gpus")
    assert app.result is good
