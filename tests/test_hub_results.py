"""What the class page believes of a student's progress report, and how it names exercises."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import pytest

from labkit.hub import classpage
from labkit.hub.results import exercise_title, known_exercises, reported_results

NOW = dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.UTC)
REPO = Path(__file__).resolve().parents[1]


def rec(exercise: object = "goodput.ex1", correct: object = True,
        time: object = "2026-12-01T09:00:00+00:00", answer: object = "86.1") -> dict[str, Any]:
    return {"time": time, "exercise": exercise, "correct": correct, "answer": answer}


def test_every_exercise_the_lessons_define_is_known() -> None:
    # oracle: the Exercise("<key>", ...) calls in the lessons' source, read by a regex here
    keys = set()
    for path in (REPO / "labkit" / "ui").rglob("*.py"):
        keys |= set(re.findall(r'Exercise\(\s*"([a-z0-9_.]+)"', path.read_text("utf-8")))
    assert len(keys) >= 20
    assert keys <= known_exercises()
    assert {"predict.03.goodput", "task.03.straggler"} <= known_exercises()


@pytest.mark.parametrize(("record", "why"), [
    (rec(exercise="goodput.ex99"), "an exercise no lesson asks"),
    (rec(exercise="hub.class.title"), "a catalog key that is not an exercise"),
    (rec(exercise=7), "not a key"),
    (rec(correct="yes"), "a verdict that is not a bool"),
    (rec(correct=1), "an int verdict"),
    (rec(exercise="predict.03.goodput", correct=True), "a graded prediction"),
    (rec(exercise="task.03.straggler", correct=None), "a task neither met nor not"),
    (rec(time="2026-12-01T10:00:00+00:00"), "a time 30 min after the hub's clock"),
    (rec(time="yesterday"), "not an ISO time"),
    (rec(time=None), "no time"),
    (rec(answer="9" * 41), "an answer longer than the lessons keep"),
    (rec(answer=86.1), "an answer that is not text"),
    ("goodput.ex1 true", "not a record"),
])
def test_forged_looking_records_are_left_out(record: object, why: str) -> None:
    tried, solved, results, rejected = reported_results({"results": [record]}, NOW)
    assert (tried, solved, results, rejected) == (0, 0, (), 1), why


def test_a_well_formed_record_counts_and_a_clock_a_little_ahead_is_forgiven() -> None:
    ahead = rec(exercise="goodput.ex2", time="2026-12-01T09:33:00+00:00")  # 3 min ahead
    doc = {"results": [rec(), ahead, rec(exercise="task.03.straggler", correct=False)]}
    assert reported_results(doc, NOW) == (
        3, 2, (("goodput.ex1", True), ("task.03.straggler", False), ("goodput.ex2", True)), 0)


def test_one_entry_per_exercise_with_the_newest_verdict_by_time() -> None:
    doc = {"results": [  # written out of order: the newest (09:20) says wrong
        rec(correct=False, time="2026-12-01T09:20:00Z"),
        rec(correct=True, time="2026-12-01T09:10:00Z"),
        rec(exercise="goodput.ex3", correct=None, time="2026-12-01T09:15:00Z")]}
    tried, solved, results, rejected = reported_results(doc, NOW)
    assert results == (("goodput.ex1", False), ("goodput.ex3", None))
    assert (tried, solved, rejected) == (2, 1, 0)  # solved once counts as solved
    assert reported_results({"results": "not a list"}, NOW) == (0, 0, (), 0)


def test_a_prediction_is_listed_but_not_counted_as_an_exercise_tried() -> None:
    # the teacher's trial: one locked prediction showed as "0/1 정답"
    doc = {"results": [rec(exercise="predict.03.goodput", correct=None),
                       rec(exercise="goodput.ex1", correct=True, time="2026-12-01T09:11:00Z")]}
    tried, solved, results, _ = reported_results(doc, NOW)
    assert (tried, solved) == (1, 1)
    assert results == (("predict.03.goodput", None), ("goodput.ex1", True))


@pytest.mark.parametrize(("key", "title"), [
    ("goodput.ex1", "3강 문제 1"),
    ("reliability.ex4", "4강 문제 4"),
    ("econ.ex05_2", "5강 문제 2"),
    ("econ.ex06_3", "6강 문제 3"),
    ("orch.ex5", "8강 문제 5"),
    ("observe.wall.night_oncall", "1강 질문: 야간 당직"),
    ("econ.check.baseline", "6강 질문: 무엇 대비 몇 배입니까? (기준선·라운드)"),
    ("no.such.key", "no.such.key"),
])
def test_exercise_titles_are_korean_lesson_names(key: str, title: str) -> None:
    assert exercise_title(key) == title


def test_prediction_and_task_titles_name_the_lesson_and_the_question() -> None:
    assert exercise_title("predict.03.goodput").startswith("3강 예측: 4,096장 클러스터의")
    task = exercise_title("task.03.straggler")
    assert task.startswith("3강 실습 과제: ") and "{" not in task and task.endswith("…")


def test_the_teachers_page_names_exercises_and_says_who_reported_them() -> None:
    users = [{"name": "kim01", "last_activity": "2026-12-01T09:25:00Z", "servers": {"": {
        "ready": True, "url": "/user/kim01/", "last_activity": "2026-12-01T09:29:00Z",
        "state": {"labkit_gpu_share": '{"policy": "whole", "gpu_index": 0, "uuid": "GPU-0"}'}}}}]
    from labkit.data.roster import RosterEntry

    report = {"results": [rec(), rec(exercise="goodput.ex9"), rec(exercise="mig.ex1",
                                                                   time="2027-01-01T00:00:00Z")],
              "memory_bytes": 2**28}
    rows = classpage.class_rows(users, [RosterEntry("kim01", "김민준")], {"kim01": report},
                                now=NOW)
    page = classpage.render_page(rows, now=NOW, stop_url="/services/classpage/stop")
    assert "학생 서버가 보고한 결과" in page and "3강 문제 1 ✔" in page
    assert 'data-exercise="goodput.ex1"' in page
    assert "goodput.ex9" not in page and "mig.ex1" not in page  # forged: not shown
    assert "확인되지 않은 기록 2개는 뺐습니다" in page
    assert "GPU 0 한 장 전체 (GPU-0)" in page and "내 GPU 몫" not in page
    assert "n/a" not in page


def test_stopping_a_server_asks_the_teacher_first() -> None:
    page = classpage.render_confirm("kim01", "<i>김민준</i>", stop_url="/services/classpage/stop",
                                    back_url="/services/classpage/",
                                    xsrf_html='<input name="_xsrf" value="x">')
    assert "&lt;i&gt;김민준&lt;/i&gt; (kim01) 학생의 서버를 중지합니까?" in page
    assert '<input type="hidden" name="confirm" value="yes">' in page
    assert 'value="kim01"' in page and "네, 서버를 중지합니다" in page and "취소" in page
    assert 'http-equiv="refresh"' not in page  # the question does not reload itself away


@pytest.mark.parametrize(("status", "text"), [
    (403, "선생님만 열 수 있습니다"), (400, "이 반의 학생이 아니어서"), (502, "HTTP 502")])
def test_the_class_pages_errors_are_korean(status: int, text: str) -> None:
    page = classpage.render_error(status)
    assert text in page and f"오류 {status}" in page and "Traceback" not in page
    assert "우리 반 실습 현황" not in page  # a classmate refused the page sees no title of it
