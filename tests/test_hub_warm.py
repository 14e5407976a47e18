"""수업 준비 (labkit.hub.warm): pacing, the period's end, the lesson, what the page says."""

from __future__ import annotations

import datetime as dt

import pytest

from labkit.hub import classpage
from labkit.hub.warm import WarmStatus, keep_every_s, lesson_notebook, pace, parse_until

KST = dt.timezone(dt.timedelta(hours=9))
NOW = dt.datetime(2026, 12, 2, 13, 40, 12, tzinfo=KST)


@pytest.mark.parametrize(("limit", "cpus", "expected"), [
    (10, 2, 2),  # the 2-core school server: two starts at a time, not the hub's ten
    (1, 16, 1),  # the hub's own limit holds
    (10, 16, 10),
    (3, 1, 1),
])
def test_pace_is_the_spawn_limit_at_most_the_cores(limit: int, cpus: int, expected: int) -> None:
    assert pace(limit, cpus) == expected


def test_pace_refuses_no_slot() -> None:
    with pytest.raises(ValueError, match="spawn_limit must be >= 1"):
        pace(0, 2)


@pytest.mark.parametrize(("timeout_s", "expected"), [(600, 60.0), (60, 20.0), (9, 5.0)])
def test_activity_is_reported_well_within_the_culler_timeout(timeout_s: int,
                                                            expected: float) -> None:
    assert keep_every_s(timeout_s) == expected
    assert keep_every_s(timeout_s) < timeout_s  # the culler never sees a warmed server idle


def test_parse_until_is_today_in_the_schools_zone() -> None:
    assert parse_until("14:50", NOW) == dt.datetime(2026, 12, 2, 14, 50, tzinfo=KST)
    assert parse_until("9:05", NOW.replace(hour=8)) == NOW.replace(hour=9, minute=5, second=0)


@pytest.mark.parametrize(("text", "message"), [
    ("13:00", "이미 지났습니다"), ("25:00", "시:분으로"), ("1450", "시:분으로"), ("", "시:분으로"),
])
def test_parse_until_bad_times_in_korean(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_until(text, NOW)


def test_lesson_notebook_by_number_or_name() -> None:
    assert lesson_notebook("03") == lesson_notebook("3") == "03_goodput.ipynb"
    assert lesson_notebook("03_goodput") == "03_goodput.ipynb"
    with pytest.raises(ValueError, match="강의가 없습니다"):
        lesson_notebook("42")


def test_status_lines_say_how_far_and_until_when() -> None:
    status = WarmStatus(["a", "b", "c"], "03_goodput.ipynb", NOW.replace(hour=14, minute=50),
                        started=NOW)
    status.ready += ["a", "b"]
    status.preheated += ["a"]
    assert status.lines() == ["수업 준비(13:40 시작): 학생 3명 가운데 2명의 서버가 켜졌습니다.",
                              "3강: 1명의 커널(kernel)을 미리 띄워 두었습니다."]
    status.failed["c"] = "허브가 HTTP 500로 답했습니다"
    status.finished = NOW + dt.timedelta(seconds=95)
    assert status.lines()[2:] == [
        "수업 준비를 마쳤습니다(95초 걸림).",
        "유휴 서버 정리(idle culler)는 14:50까지 이 서버들을 멈추지 않습니다.",
        "c: 준비하지 못했습니다 — 허브가 HTTP 500로 답했습니다"]
    assert status.to_json()["lines"] == status.lines()


def test_class_page_has_the_warm_button_and_its_status() -> None:
    page = classpage.render_page([], now=NOW, stop_url="/s/stop", warm_url="/s/warm",
                                 warm_lines=["수업 준비를 마쳤습니다(95초 걸림)."])
    assert 'action="/s/warm"' in page and ">수업 준비</button>" in page
    assert '<option value="03">03_goodput</option>' in page
    assert "수업 준비를 마쳤습니다(95초 걸림)." in page
