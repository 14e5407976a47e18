"""Logging in to the real class hub (``python -m labkit.hub serve``, as root): the throttle slows
guessing but never refuses a right password, the teacher lands on the class page, a student
taken off the roster is refused at once.

Needs root (see conftest); skipped otherwise with that reason.
"""

from __future__ import annotations

import json
import os
import time

import pytest
import requests

from labkit.hub.auth import USER_BACKOFF
from tests.hub import hubclient
from tests.hub.conftest import PASSWORDS, ROOT_REASON, TEACHER, THROTLED, Hub

pytestmark = [pytest.mark.hub,
              pytest.mark.skipif(os.geteuid() != 0, reason=ROOT_REASON)]
RIGHT = PASSWORDS[THROTLED]  # THROTLED plays classmate B here (never spawns)


def _timed_login(hub: Hub, name: str, password: str) -> tuple[float, requests.Response]:
    start = time.perf_counter()
    _, reply = hubclient.login(hub.base, name, password, timeout=60)
    return time.perf_counter() - start, reply


def test_wrong_passwords_for_a_classmate_slow_the_guesser_but_never_lock_b_out(hub: Hub) -> None:
    took, first = _timed_login(hub, THROTLED, RIGHT)  # B's password, set by the teacher
    assert hubclient.logged_in(first), first.text[-300:]
    tries = [_timed_login(hub, THROTLED, f"guess-{i}-by-a") for i in range(10)]  # A, as B
    assert all(r.status_code in (200, 403) and not hubclient.logged_in(r) for _, r in tries)
    assert "맞지 않습니다" in tries[0][1].text
    first_s, sixth_s = tries[0][0], tries[5][0]
    # 3 free tries, then 0.5, 1, 2 s: the 6th waits 2 s more than the 1st
    assert sixth_s > first_s + 1.5, [round(s, 2) for s, _ in tries]
    took, right = _timed_login(hub, THROTLED, RIGHT)  # B, from the same (NAT) address
    assert hubclient.logged_in(right), (right.status_code, right.text[-300:])
    assert took < USER_BACKOFF.cap_s + 10, took  # slowed at most by the cap, never refused


def test_the_teacher_lands_on_the_class_page_and_a_student_does_not(hub: Hub) -> None:
    teacher, reply = hubclient.login(hub.base, TEACHER, PASSWORDS[TEACHER])
    assert hubclient.logged_in(reply)
    assert reply.headers["Location"] == "/services/classpage/"
    page = teacher.session.get(hub.base + "services/classpage/", timeout=60)
    assert page.status_code == 200 and "우리 반 실습 현황" in page.text, page.text[-500:]
    assert "학생 서버가 보고한 결과" in page.text
    _, student = hubclient.login(hub.base, THROTLED, RIGHT)
    assert hubclient.logged_in(student)
    assert "classpage" not in student.headers["Location"]


def test_a_student_removed_from_the_roster_is_refused_at_once(hub: Hub) -> None:
    roster_file = hub.state_dir / "roster.json"
    saved = roster_file.read_text(encoding="utf-8")
    rows = [r for r in json.loads(saved) if r["username"] != THROTLED]
    roster_file.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    try:  # what `roster remove` saves; the running hub reads it at each login
        _, reply = hubclient.login(hub.base, THROTLED, RIGHT)
        assert not hubclient.logged_in(reply)
        assert "수업 명단(roster)에 없는" in reply.text
    finally:
        roster_file.write_text(saved, encoding="utf-8")
    _, back = hubclient.login(hub.base, THROTLED, RIGHT)
    assert hubclient.logged_in(back)
