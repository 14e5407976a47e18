"""Issue 17's "the case runs through 01-09": one edited 우리 학교, saved once, read by every lesson.

The edited case (4 GPUs, a class of 20, class hours 09-15, a cheaper server, another contract)
is saved in a temporary LABKIT_HOME; then each lesson's school-case cells are built as the
notebook builds them (the card, the predictions and tasks that read the case, lesson 08's day
and lesson 09's decision) and must show the edited numbers. Expected values are worked out
here from the case's own figures and the calendar file, not from labkit's functions.
"""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from labkit.data import school as school_data
from labkit.school import SchoolCase
from labkit.ui import school as ui_school

EDITED = {"name": "한빛고등학교", "n_gpus": 4, "students": 20, "class_end_h": 15.0,
          "server_price_usd": 200_000.0, "contract_kw": 12.0}
CALENDAR = Path(__file__).parents[1] / "data" / "school" / "calendar_2026.yaml"


@pytest.fixture
def edited(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SchoolCase:
    monkeypatch.setenv("LABKIT_HOME", str(tmp_path / "lk"))
    case = SchoolCase(**EDITED)  # type: ignore[arg-type]
    school_data.save_case(case)
    assert school_data.load_case().origin == "saved"
    return case


def school_days() -> int:
    """Weekdays inside a term that are neither a public holiday nor a closure (brute force)."""
    doc = yaml.safe_load(CALENDAR.read_text(encoding="utf-8"))
    off = {str(h["date"]) for h in doc["holidays"]} | {str(c["date"]) for c in doc["closures"]}
    days = set()
    for term in doc["terms"]:
        day = dt.date.fromisoformat(str(term["start"]))
        end = dt.date.fromisoformat(str(term["end"]))
        while day <= end:
            if day.weekday() < 5 and day.isoformat() not in off:
                days.add(day)
            day += dt.timedelta(days=1)
    return len(days)


def per_gpu_max(students: int, gpus: int) -> int:
    """The busiest GPU when ``students`` are dealt round-robin onto ``gpus`` (brute force)."""
    load = [0] * gpus
    for k in range(students):
        load[k % gpus] += 1
    return max(load)


# the edited case's own numbers, worked out by hand
HOURS_A_DAY = 15 - 9
PERIODS = list(range(9, 15))  # one class period an hour: 09:00 ... 14:00
PER_GPU = per_gpu_max(20, 4)  # 5


def test_every_lesson_card_shows_the_edited_case(edited: SchoolCase) -> None:
    price = "2억 8,000만 원"  # 200,000 USD x 1,400 won = 280,000,000 won
    lesson_says = {
        "01": ["GPU 4장을 관측"],
        "02": ["학생 20명이 GPU 4장", f"1장에 최대 {PER_GPU}명"],
        "03": [f"{4 * 8_760:,} GPU·h"],
        "04": [f"{16_384 // 4:,}배 드물게"],
        "05": [price],
        "06": ["H100-80GB 4장"],
        "07": ["계약전력 12 kW"],
        "08": ["한 반 20명"],
        "09": [],
    }
    for lesson, bits in lesson_says.items():
        card = ui_school.card(lesson).value
        for bit in ["한빛고등학교", "GPU 4장", "한 반 20명", "9–15시",
                    f"GPU 1장에 최대 {PER_GPU}명", price, *bits]:
            assert bit in card, (lesson, bit)
        assert "8장" not in card.split("비교:")[0], lesson  # no default figure left


def test_lesson_01_and_04_predictions_read_the_edited_case(edited: SchoolCase) -> None:
    from labkit.ui import checks, predict

    # 01: the class hours' share of the year: 6 h x school days / 8,760 h
    assert checks.class_share_pct() == pytest.approx(HOURS_A_DAY * school_days() / 8_760 * 100)
    # 04: the question names the school's GPUs
    question = predict.ask(None, "04.school_mtbf").children[0].value
    assert "GPU 4장" in question


def test_lesson_08_simulates_the_edited_school(edited: SchoolCase) -> None:
    from labkit.ui import orchestration, tasks

    day = orchestration.school_day_app()
    assert day.day.cluster.installed_gpus == 4 and day.day.cluster.nodes == 1
    assert len(day.gantt.figure.layout.yaxis.tickvals) == 4  # one Gantt row per GPU
    labs = [j for j in day.jobs if j.kind == "class_lab" and j.priority == 3]
    assert len(labs) == 20 * len(PERIODS)
    assert sorted({math.floor(j.submit_h) for j in labs}) == PERIODS
    box = tasks.lesson("08", day)
    assert "한 반 20명" in _text(box)
    demand = orchestration.demand_app()
    assert demand.fields["installed_gpus"].control.value == 4
    # an installed GPU's calendar hour: the server's price over 4 years of 8,760 h
    assert demand.day.cost_krw_per_gpu_h == pytest.approx(200_000 * 1_400 / (4 * 4 * 8_760))
    table = orchestration.workload_table().data
    assert (table.iloc[:, 2] == 20).sum() == len(PERIODS)  # one row of 20 jobs per period


def test_lesson_09_decides_for_the_edited_school(edited: SchoolCase) -> None:
    from labkit.ui import capstone

    app = capstone.decision_app()
    assert app.result is not None and app.result.case == edited
    rec = app.recommendation.value
    assert f"한 반 20명이 GPU 4장을 쓰므로 GPU 1장에 최대 {PER_GPU}명" in rec
    share = app.sharing_table.value
    assert f"한 반 20명이 GPU 4장을 나눠 쓰면 GPU 1장에 최대 {PER_GPU}명" in share
    assert f"{PER_GPU}/{PER_GPU}" in share or "실패" in share  # the table's jobs: one GPU's
    report = capstone.report_html(app.result)
    assert "한빛고등학교 AI 서버 결정 보고서" in report and "GPU 4장" in report
    assert f"GPU 1장에 최대 {PER_GPU}명" in report
    class_pct = HOURS_A_DAY * school_days() / 8_760 * 100
    shown = f"{class_pct:.1f}".removesuffix(".0")  # one decimal, none where it is zero
    assert f"수업 시간만 세면 1년의 {shown} %" in rec


def _text(widget: Any) -> str:
    out = []
    stack = [widget]
    while stack:
        w = stack.pop()
        value = getattr(w, "value", None)
        if isinstance(value, str):
            out.append(value)
        stack.extend(getattr(w, "children", ()))
    return " ".join(out)
