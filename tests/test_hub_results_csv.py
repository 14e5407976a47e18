"""The class's results as a CSV for Excel: BOM, Korean headers, one row per student and exercise."""

from __future__ import annotations

import csv
import datetime as dt
import io
from collections.abc import Mapping
from typing import Any

from labkit.data.roster import RosterEntry
from labkit.hub.results_csv import results_csv

NOW = dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.UTC)
ROSTER = [RosterEntry("kim01", "김민지"), RosterEntry("lee02", "이지수"),
          RosterEntry("teach", "선생님")]


def rec(exercise: str, correct: object, time: str, answer: str) -> dict[str, object]:
    return {"time": time, "exercise": exercise, "correct": correct, "answer": answer}


REPORTS: dict[str, Mapping[str, Any] | str] = {
    "kim01": {"results": [
        rec("goodput.ex1", False, "2026-12-01T00:10:00+00:00", "80"),
        rec("predict.03.goodput", None, "2026-12-01T00:05:00+00:00", "=1+1"),
        rec("goodput.ex1", True, "2026-12-01T00:12:00+00:00", "86.1"),
        rec("observe.wall.night_oncall", True, "2026-12-01T00:20:00+00:00", "42"),
        rec("goodput.ex99", True, "2026-12-01T00:20:00+00:00", "1"),  # no lesson asks it
        rec("goodput.ex2", True, "2026-12-02T00:00:00+00:00", "1"),  # after the hub's clock
    ]},
    "lee02": "서버가 꺼져 있습니다",
}


def _parse(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))


def test_results_csv_starts_with_a_bom_and_crlf_lines() -> None:
    data = results_csv(ROSTER, REPORTS, ["teach"], now=NOW)
    assert data.startswith(b"\xef\xbb\xbf")  # what makes Excel read UTF-8
    assert b"\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")


def test_results_csv_rows_per_student_lesson_and_exercise() -> None:
    rows = _parse(results_csv(ROSTER, REPORTS, ["teach"], now=NOW))
    assert rows[0] == ["사용자 이름", "학생", "강", "문항", "종류", "마지막 답", "결과",
                       "시도 횟수", "마지막 확인 시각(한국 시간)"]
    body = rows[1:]
    # lesson 01 before lesson 03; within 03 the order first tried (the prediction at 00:05)
    assert [r[:3] for r in body] == [["kim01", "김민지", "1강"], ["kim01", "김민지", "3강"],
                                     ["kim01", "김민지", "3강"], ["lee02", "이지수", ""]]
    observe, predict, ex1, lee = body
    assert observe[3:9] == ["1강 질문: 야간 당직", "문제", "42", "정답", "1", "2026-12-01 09:20"]
    assert predict[4:8] == ["예측", "'=1+1", "예측(채점하지 않음)", "1"]  # never an Excel formula
    assert ex1[3:9] == ["3강 문제 1", "문제", "86.1", "정답", "2", "2026-12-01 09:12"]
    assert lee[6:8] == ["서버가 꺼져 있습니다", "0"]
    assert not any(r[0] == "teach" for r in body)
