"""Accounts on the real class hub (issue 23): attacks 1 and 5, performed as a student would.

- attack 1: claiming a classmate's account, or the teacher's, by logging in first;
- ``roster reset`` / ``set-password`` on a running hub end the old cookie and the old token;
- a student imported while the hub runs logs in at once, with the code of their slip;
- attack 5: a removed student's token starts no server, and no account or home comes back;
  a student dropped from the roster (not removed) is refused by the spawner, in Korean.

Students here are imported while the hub runs (``roster import`` of the fixture's roster plus
them), as a teacher adds a latecomer. Needs root (see conftest); skipped otherwise.
"""

from __future__ import annotations

import json
import os
import pwd
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from labkit.hub.roster import STUDENTS_GROUP
from labkit.hub.state import HubState
from tests.hub import hubclient
from tests.hub.conftest import (
    BROWSER_STUDENT,
    LATECOMERS,
    PASSWORDS,
    ROOT_REASON,
    STUDENT_A,
    STUDENT_B,
    TEACHER,
    THROTLED,
    Hub,
    roster_command,
)
from tests.hub.hubclient import Student

pytestmark = [pytest.mark.hub,
              pytest.mark.skipif(os.geteuid() != 0, reason=ROOT_REASON)]
NEW, DROPPED = LATECOMERS
BASE_ROSTER = (f"{STUDENT_A},김민지\n{STUDENT_B},이지수\n{THROTLED},박서준\n"
               f"{BROWSER_STUDENT},최유나\n")


def _import(hub: Hub, tmp_path: Path, extra: str) -> str:
    csv = tmp_path / "class.csv"
    csv.write_text("username,display_name\n" + BASE_ROSTER + extra, encoding="utf-8")
    return roster_command(hub.state_dir, "import", str(csv))


def _code(hub: Hub, name: str) -> str:
    return HubState(hub.state_dir).accounts.codes()[name]


def _first_login(hub: Hub, name: str, code: str, new: str) -> tuple[Student, requests.Response]:
    """Log in with the slip's code, then choose ``new`` on the Korean password page."""
    student, page = hubclient.login(hub.base, name, code)
    assert page.status_code == 200 and "처음 로그인: 비밀번호 정하기" in page.text, page.text[-400:]
    return student, _post_new_password(hub, student, code, new)


def _post_new_password(hub: Hub, student: Student, code: str, new: str) -> requests.Response:
    """Submit the first-login password form (what first_login.html posts)."""
    return student.session.post(
        f"{hub.base}hub/login?next=", data={"username": student.name, "password": code,
                                            "new_password": new, "new_password2": new,
                                            "_xsrf": student.xsrf()},
        allow_redirects=False, timeout=60)


def _token(student: Student) -> str:
    reply = student.api("POST", f"users/{student.name}/tokens",
                        json={"note": "mine", "expires_in": 3600})
    reply.raise_for_status()
    return str(reply.json()["token"])


def _cookie_works(hub: Hub, student: Student) -> bool:
    reply = student.session.get(f"{hub.base}hub/home", allow_redirects=False, timeout=30)
    return reply.status_code == 200


def _token_works(hub: Hub, token: str) -> bool:
    reply = requests.get(f"{hub.base}hub/api/user", timeout=30,
                         headers={"Authorization": f"token {token}"})
    return reply.status_code == 200


@pytest.fixture(scope="module")
def latecomers(hub: Hub, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """NEW and DROPPED imported while the hub runs; their codes (the roster restored after)."""
    work = tmp_path_factory.mktemp("latecomers")
    out = _import(hub, work, f"{NEW},늦게온\n{DROPPED},빠질\n")
    assert "첫 로그인 코드를 새로 만들었습니다" in out, out
    yield {name: _code(hub, name) for name in LATECOMERS}
    _import(hub, work, "")


def test_nobody_claims_a_classmate_or_the_teacher_by_logging_in_first(
        hub: Hub, latecomers: dict[str, str]) -> None:
    # A, before NEW's first login: any password, and the first-login form with a made-up code
    _, guess = hubclient.login(hub.base, NEW, "a-chose-this-1")
    assert not hubclient.logged_in(guess) and "맞지 않습니다" in guess.text
    _, claim = _first_login_attempt(hub, NEW, "AAAA-BBBB", "a-chose-this-1")
    assert not hubclient.logged_in(claim)
    # A, as the teacher: no first use there either
    _, teacher = _first_login_attempt(hub, TEACHER, "AAAA-BBBB", "a-chose-this-1")
    assert not hubclient.logged_in(teacher)
    _, teacher = hubclient.login(hub.base, TEACHER, "a-chose-this-1")
    assert not hubclient.logged_in(teacher)
    # the rightful owners are not locked out
    _, real = hubclient.login(hub.base, TEACHER, PASSWORDS[TEACHER])
    assert hubclient.logged_in(real)
    student, reply = _first_login(hub, NEW, latecomers[NEW], "new-own-pass-1")
    assert hubclient.logged_in(reply), (reply.status_code, reply.text[-400:])
    assert _cookie_works(hub, student)
    _, again = hubclient.login(hub.base, NEW, latecomers[NEW])  # the code is spent
    assert not hubclient.logged_in(again)


_KERNEL_CHECK = """
import json, os, resource
print(json.dumps({"share": os.environ.get("LABKIT_GPU_SHARE", ""),
                  "cuda": os.environ.get("CUDA_VISIBLE_DEVICES"),
                  "nproc": resource.getrlimit(resource.RLIMIT_NPROC)[0]}))
try:
    open(%r, "rb").read(1)
    print("KEY-READABLE")
except OSError as err:
    print("KEY-REFUSED", type(err).__name__)
try:  # the checkout's history holds the key too (the trial: git show HEAD:docs/answer-key.md)
    os.listdir(%r)
    print("HISTORY-READABLE")
except OSError as err:
    print("HISTORY-REFUSED", type(err).__name__)
"""


def test_a_latecomer_spawns_with_their_gpu_share_and_is_on_the_class_page(
        hub: Hub, latecomers: dict[str, str]) -> None:
    """NEW was imported while the hub ran (after its start): their server has the class's
    limits and a GPU share of its own, the teacher's class page lists them with that share,
    and the answer key is the teacher's only (not through the page, not on disk)."""
    from labkit.hub.answerkey import DOCS
    from labkit.hub.classpage import share_text
    from labkit.hub.limits import Limits, StudentCgroup, detect_mechanism
    from labkit.hub.roster import system_username

    student, reply = hubclient.login(hub.base, NEW, "new-own-pass-1")
    assert hubclient.logged_in(reply)
    hubclient.start_server(student)
    try:
        kernel = hubclient.start_kernel(student)
        client = hubclient.HubKernelClient(student, kernel)
        try:
            done = hubclient.execute(client, _KERNEL_CHECK % (str(DOCS / "answer-key.html"),
                                                              str(DOCS.parent / ".git")))
        finally:
            client.close()
        assert not done["error"], done
        first, verdict, history = done["stdout"].strip().splitlines()[-3:]
        seen = json.loads(first)
        share = json.loads(seen["share"])  # labkit.hub.gpushare.Share.to_env
        assert share["policy"] in ("mig", "whole", "shared") and seen["cuda"], seen
        assert seen["nproc"] == 256, seen  # the class's limits (conftest's settings)
        assert verdict.startswith("KEY-REFUSED"), verdict  # the answer key is not theirs
        assert history.startswith("HISTORY-REFUSED"), history  # nor the checkout's history
        mechanism = detect_mechanism()
        if mechanism.startswith("cgroup"):
            group = StudentCgroup(system_username(NEW), Limits(), mechanism).dirs()[0]
            name = "memory.max" if mechanism == "cgroup-v2" else "memory.limit_in_bytes"
            assert int((group / name).read_text()) == 1536 * 2**20
        teacher, _ = hubclient.login(hub.base, TEACHER, PASSWORDS[TEACHER])
        page = teacher.session.get(f"{hub.base}services/classpage/", timeout=120)
        assert page.status_code == 200, page.text[-400:]
        row = page.text[page.text.index("늦게온"):][:3000]
        expected = share_text(seen["share"])
        assert expected and expected in row, row
        key = teacher.session.get(f"{hub.base}services/classpage/answer-key.html", timeout=60)
        assert key.status_code == 200 and "attachment" in key.headers["Content-Disposition"]
        assert key.headers["Content-Security-Policy"].startswith("sandbox")
        assert key.content == (DOCS / "answer-key.html").read_bytes()
        theirs = student.session.get(f"{hub.base}services/classpage/answer-key.html",
                                     timeout=60)
        assert theirs.status_code == 403, (theirs.status_code, theirs.text[:300])
    finally:
        student.api("DELETE", f"users/{NEW}/server")


def _first_login_attempt(hub: Hub, name: str, code: str, new: str
                         ) -> tuple[Student, requests.Response]:
    """The password form posted straight away, without the code's page (a forged first login)."""
    student = Student(hub.base, name)
    student.session.get(f"{hub.base}hub/login", timeout=30).raise_for_status()
    return student, _post_new_password(hub, student, code, new)


def _hub_groups(hub: Hub, name: str) -> list[str]:
    """The hub groups of ``name``, read from the hub's database (as root)."""
    from jupyterhub import orm

    db = orm.new_session_factory(HubState(hub.state_dir).db_url)()
    try:
        user = orm.User.find(db, name)
        return sorted(g.name for g in user.groups) if user is not None else []
    finally:
        db.close()


def test_reset_and_set_password_end_the_old_cookie_and_token_at_once(
        hub: Hub, latecomers: dict[str, str]) -> None:
    student, reply = hubclient.login(hub.base, NEW, "new-own-pass-1")
    assert hubclient.logged_in(reply)
    token = _token(student)
    assert _cookie_works(hub, student) and _token_works(hub, token)
    out = roster_command(hub.state_dir, "reset", NEW)  # the hub runs: through its REST API
    assert "새 첫 로그인 코드" in out, out
    assert not _cookie_works(hub, student) and not _token_works(hub, token)
    student, reply = _first_login(hub, NEW, _code(hub, NEW), "new-own-pass-2")
    assert hubclient.logged_in(reply)
    token = _token(student)
    roster_command(hub.state_dir, "set-password", NEW, stdin="teacher-set-3\n")
    assert not _cookie_works(hub, student) and not _token_works(hub, token)
    # the hub user made again is back in the students' group before any start of theirs: the
    # class page's scopes name the group (trial 24c: 수업 준비 got 404 after a reset)
    assert _hub_groups(hub, NEW) == [STUDENTS_GROUP]
    _, reply = hubclient.login(hub.base, NEW, "teacher-set-3")
    assert hubclient.logged_in(reply)


def test_a_removed_students_token_starts_no_server_and_brings_nothing_back(
        hub: Hub, latecomers: dict[str, str]) -> None:
    student, reply = hubclient.login(hub.base, NEW, "teacher-set-3")
    assert hubclient.logged_in(reply)
    token = _token(student)
    out = roster_command(hub.state_dir, "remove", NEW, "--stop", "--yes")
    assert "사용자 1명을 지웠습니다" in out, out
    # attack 5: the removed student's token asks for a server
    attack = requests.post(f"{hub.base}hub/api/users/{NEW}/server", timeout=60,
                           headers={"Authorization": f"token {token}"})
    assert attack.status_code == 403, (attack.status_code, attack.text[:300])
    assert not _cookie_works(hub, student)
    time.sleep(3)
    with pytest.raises(KeyError):
        pwd.getpwnam(f"jupyter-{NEW}")
    assert not Path(f"/home/jupyter-{NEW}").exists()
    teacher, _ = hubclient.login(hub.base, TEACHER, PASSWORDS[TEACHER])
    assert teacher.api("GET", f"users/{NEW}").status_code == 404  # nothing invisible left
    _, login = hubclient.login(hub.base, NEW, "teacher-set-3")
    assert not hubclient.logged_in(login) and "수업 명단(roster)에 없는" in login.text


def test_a_student_off_the_saved_roster_gets_no_server_whatever_token(
        hub: Hub, latecomers: dict[str, str], tmp_path: Path) -> None:
    student, reply = _first_login(hub, DROPPED, latecomers[DROPPED], "dropped-pass-1")
    assert hubclient.logged_in(reply)
    token = _token(student)
    roster_file = hub.state_dir / "roster.json"
    saved = roster_file.read_text(encoding="utf-8")
    rows = [r for r in json.loads(saved) if r["username"] != DROPPED]
    roster_file.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    try:  # off the roster, the hub's user and token still there: the spawner's own check
        requests.post(f"{hub.base}hub/api/users/{DROPPED}/server", timeout=60,
                      headers={"Authorization": f"token {token}"})
        refused = f"refused a server for {DROPPED}: not on the roster"
        deadline = time.monotonic() + 60
        while refused not in hub.log_path.read_text(errors="replace") and \
                time.monotonic() < deadline:
            time.sleep(1)
        assert refused in hub.log_path.read_text(errors="replace"), hub.log()
        model = requests.get(f"{hub.base}hub/api/users/{DROPPED}", timeout=30,
                             headers={"Authorization": f"token {token}"}).json()
        server = (model.get("servers") or {}).get("")
        assert not (server and server.get("ready")), server
        with pytest.raises(KeyError):
            pwd.getpwnam(f"jupyter-{DROPPED}")  # no account, no home made for them
    finally:
        roster_file.write_text(saved, encoding="utf-8")
    out = _import(hub, tmp_path, "")  # a new roster without them: their hub user goes now
    assert DROPPED in out and "로그인할 수 없고" in out, out
    assert not _token_works(hub, token) and not _cookie_works(hub, student)
