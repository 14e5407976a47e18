"""Lesson 08's widgets, server side: live updates, Korean errors, last good result kept."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest

from labkit import scheduling as model
from labkit.data.scheduling import load_school_day
from labkit.i18n import t
from labkit.ui import orchestration as ui
from labkit.ui.components import find_by_class
from labkit.ui.exercises import check_answer

#: The 16-GPU shared cluster of data/scheduling/school_day.yaml: lesson 08's contrast (the
#: school's own day is tested in tests/test_class_day.py).
SHARED = load_school_day()


def bars(fig: object) -> list[tuple[str, tuple[float, ...]]]:
    return [(tr.name, tuple(tr.base)) for tr in fig.data]  # type: ignore[attr-defined]


def test_demand_app_reports_capacity_and_follows_installed_gpus() -> None:
    app = ui.demand_app(SHARED)
    assert app.result is not None and app.result.installed_gpus == 16
    assert app.result.peak_gpus > 16 > app.result.mean_gpus
    assert "16 GPU" in str(app.chart.figure.layout.annotations[0].text)
    idle_16 = app.result.idle_cost_krw
    app.fields["installed_gpus"].control.value = 32
    assert app.result.installed_gpus == 32 and app.result.idle_cost_krw > idle_16
    assert app.result.best_occupancy < 0.5


@pytest.mark.parametrize(("key", "value", "text"), [
    ("installed_gpus", 0, "0보다 커야"), ("installed_gpus", math.nan, "유한한"),
    ("installed_gpus", 1e9, "이하여야"), ("cost_krw_per_gpu_h", -1, "0 이상"),
])
def test_demand_app_bad_input_keeps_last_chart(key: str, value: float, text: str) -> None:
    app = ui.demand_app(SHARED)
    good, fig = app.result, app.chart.figure
    app.fields[key].control.value = value
    assert text in app.fields[key].error.value
    assert app.result is good and app.chart.figure is fig


def test_school_day_app_policy_switch_changes_gantt_and_metrics() -> None:
    app = ui.school_day_app(day=SHARED)
    assert app.result is not None and app.result.policy == "fifo"
    fifo_gantt, fifo_metrics = bars(app.gantt.figure), app.metrics.value
    assert "점유율" in fifo_metrics and "설치 GPU 1장당" in fifo_metrics
    assert len(app.gantt.figure.layout.yaxis.tickvals) == 16
    app.fields["policy"].control.value = "greedy"
    assert app.result.policy == "greedy"
    assert bars(app.gantt.figure) != fifo_gantt
    assert app.metrics.value != fifo_metrics
    assert "탐욕적" in app.gantt.figure.layout.title.text
    # back to FIFO: the cached run, same chart data
    app.fields["policy"].control.value = "fifo"
    assert bars(app.gantt.figure) == fifo_gantt


def test_school_day_app_preemption_shows_lost_work_and_class_waits_drop() -> None:
    app = ui.school_day_app("priority", day=SHARED)
    before = app.result.waits("kind").loc["class_lab", "mean_wait_h"]
    app.fields["preemption"].control.value = True
    after = app.result.waits("kind").loc["class_lab", "mean_wait_h"]
    assert after < before
    assert app.result.wasted_gpu_h > 0
    names = {tr.name for tr in app.waits.figure.data}
    assert names == {"평균 대기", "평균 지연 (완료 시간 − 실행 시간)"}


def test_school_day_app_rejects_values_a_browser_forces() -> None:
    app = ui.school_day_app(day=SHARED)
    good = app.result
    app.fields["preemption"].control.value = True
    assert app.result is not good
    kept = app.result
    # a comm message can set a Dropdown only to one of its options; a Checkbox to a bool.
    # Values the model has never seen still reach it through compute():
    with pytest.raises(ValueError):
        app.compute({"policy": "lottery", "placement": "pack", "preemption": False})
    with pytest.raises(ValueError):
        app.compute({"policy": "fifo", "placement": "pack", "preemption": "yes"})
    assert app.result is kept


def test_gantt_bars_stay_inside_their_gpu_rows() -> None:
    app = ui.mig_class_app()  # MIG slices and whole GPUs
    for tr in app.gantt.figure.data:
        for y, w in zip(tr.y, tr.width, strict=True):
            row = round(y)
            assert row - 0.45 - 1e-9 <= y - w / 2 and y + w / 2 <= row + 0.45 + 1e-9


def test_filler_app_raises_occupancy_not_value() -> None:
    app = ui.filler_app()
    base = app.result.base.summary(1000, 24)
    fill = app.result.other.summary(1000, 24)
    assert fill["occupancy"] > base["occupancy"] + 0.2
    assert fill["value_krw"] <= base["value_krw"] * 1.01
    # without preemption even the real-time service waits for running filler to finish
    rt = "inference_realtime"
    assert app.result.base.waits("kind").loc[rt, "mean_wait_h"] == 0
    assert app.result.other.waits("kind").loc[rt, "mean_wait_h"] > 0
    assert "채우기 있음" in app.table.value
    assert any(tr.name == "가치 없는 채우기 작업" for tr in app.gantt.figure.data)
    app.fields["filler"].control.value = False
    assert all(tr.name != "가치 없는 채우기 작업" for tr in app.gantt.figure.data)


def test_mig_class_app_whole_gpus_hold_more_and_wait_longer() -> None:
    app = ui.mig_class_app()
    mig, whole = app.result.base, app.result.other
    lab = {r: r.schedule[r.schedule["kind"] == "class_lab"] for r in (mig, whole)}
    held = {r: float((s["gpus"] * (s["end_h"] - s["start_h"])).sum()) for r, s in lab.items()}
    assert held[whole] > 3 * held[mig]
    assert (whole.waits("kind").loc["class_lab", "mean_wait_h"]
            > mig.waits("kind").loc["class_lab", "mean_wait_h"])
    app.fields["students"].control.value = 36
    assert int((app.result.base.jobs["job"].str.startswith("ai-lab")).sum()) == 36
    good = app.result
    app.fields["students"].control.value = 2.5
    assert "정수" in app.fields["students"].error.value and app.result is good
    app.fields["students"].control.value = 10_000
    assert "이하" in app.fields["students"].error.value and app.result is good


def test_policy_lab_shows_waits_per_tenant_and_explains_impossible_quota() -> None:
    app = ui.policy_lab_app()
    assert app.result is not None
    assert "연구실" in app.table.value and "AI 기초 수업" in app.table.value
    assert {tr.name for tr in app.waits.figure.data} >= {"평균 대기"}
    good = app.result
    app.fields["borrowing"].control.value = False  # the 8-GPU training cannot fit quota 4
    assert app.result is good
    assert "쿼터" in app.status.value and "빌리기를 허용" in app.status.value
    app.fields["quota_research"].control.value = 8
    assert app.result is not good and app.status.value == ""
    app.fields["quota_service"].control.value = -2
    assert "0 이상" in app.fields["quota_service"].error.value


def test_policy_lab_preemption_reclaims_and_loses_work() -> None:
    app = ui.policy_lab_app()
    assert app.result.wasted_gpu_h == 0
    app.fields["preemption"].control.value = True
    assert app.result.wasted_gpu_h > 0
    assert app.result.schedule["preempted"].any()


def test_specialization_app_freed_gpus_are_value_only_when_lent() -> None:
    app = ui.specialization_app()
    runs = app.result.runs
    day = {k: r.value_krw(24) for k, r in runs.items()}
    occ = {k: r.occupancy(24) for k, r in runs.items()}
    # no lending: the smaller model frees GPUs that stay idle -> same value, lower occupancy
    assert day[(True, False)] == pytest.approx(day[(False, False)], rel=1e-3)
    assert occ[(True, False)] < occ[(False, False)]
    # lending: the freed GPUs go to queued work -> more value in the day
    assert day[(True, True)] > day[(False, True)]
    assert "background:#fff3c4" in app.table.value
    app.fields["specialized"].control.value = True
    app.fields["lending"].control.value = True
    assert app.result.selected == (True, True)


def test_tables_for_nbval_are_deterministic() -> None:
    key = ui.key_numbers().data
    assert list(key.iloc[:, 1]) == ["7 h", "1 h", "10 h", "8 h", "11 h", "8 h"]
    assert list(key.iloc[:, 3]) == ["100 %", "100 %", "65 %", "81.2 %", "61.4 %", "84.4 %"]
    table = ui.policy_table()  # the default 우리 학교, as the notebook's checked cell
    assert list(table.data.iloc[:, 0]) == [t(f"orch.policy.{p}") for p in model.POLICIES]
    # nbval re-runs the notebook in a fresh kernel: the table must not depend on set/dict
    # iteration order, which PYTHONHASHSEED changes between processes
    code = "from labkit.ui import orchestration as ui; print(ui.policy_table().to_string(), end='')"
    for seed in ("1", "2"):
        other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                               check=True, env={**os.environ, "PYTHONHASHSEED": seed})
        assert other.stdout == table.to_string()
    assert len(ui.workload_table(SHARED)) == 12


def test_exercises_answers_come_from_the_model() -> None:
    answers = {e.key: e.answer for e in ui.exercise_list()}
    assert answers["orch.ex1"] == 4  # case 1a
    assert answers["orch.ex2"] == pytest.approx(81.25)  # case 2a EASY
    assert answers["orch.ex3"] == 6  # case 2b greedy: J2 waits 6 h
    assert answers["orch.ex4"] == pytest.approx(2 ** -0.5)
    assert answers["orch.ex5"] == pytest.approx(0.5)
    ex1 = ui.exercise_list()[0]
    assert check_answer(ex1, "4 h")[0] is True and check_answer(ex1, "3.5")[0] is False
    box = ui.exercises()
    assert find_by_class(box, "lk-orch-ex1-answer") is not None


def test_gantt_labels_are_readable_or_hidden_never_shrunk() -> None:
    app = ui.school_day_app(day=SHARED)
    fig = app.gantt.figure
    assert fig.layout.uniformtext.mode == "hide" and fig.layout.uniformtext.minsize >= 10
    bars = [d for d in fig.data if d.type == "bar"]
    assert bars and all(d.textfont.size >= 12 and d.textposition == "inside" for d in bars)
    # labels are the Korean kind names (the legend's words without the English term)
    assert {d.text[0] for d in bars} <= {t(f"orch.kind.{k}").split("(")[0] for k in model.KINDS}
    # 16 GPUs (data/scheduling school day: 2 nodes x 8): 26 px a row plus the frame
    assert fig.layout.height == 150 + 26 * 16


def test_demand_cost_too_large_is_named_under_its_control() -> None:
    app = ui.demand_app(SHARED)
    good = app.result
    cost = app.fields["cost_krw_per_gpu_h"]
    cost.control.value = 1e308
    assert "(입력: 1경 이상)" in cost.error.value and "1,000,000 이하" in cost.error.value
    assert app.result is good and "n/a" not in app.summary.value
    cost.control.value = 2_000
    assert cost.error.value == ""
    # the day's calendar-hour cost: installed GPUs x 24 h x 2,000 KRW (16 x 24 x 2,000)
    assert app.result.calendar_cost_krw == pytest.approx(16 * 24 * 2_000)
