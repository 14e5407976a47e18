"""The teacher's class page: progress recording/reading, the page model, the service spec."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from labkit.data import progress
from labkit.data.roster import RosterEntry
from labkit.hub import classpage
from labkit.hub.gpushare import GpuUnit, Share
from labkit.ui import exercises

NOW = dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.UTC)
ROSTER = [RosterEntry("kim01", "김민준"), RosterEntry("lee02", "이서연"),
          RosterEntry("park03", "박지호"), RosterEntry("teacher", "선생님")]


# --- labkit.data.progress -------------------------------------------------------------------------


def test_record_result_is_a_no_op_outside_a_hub(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JUPYTERHUB_USER", raising=False)
    assert progress.record_result("goodput.ex1", "86.1", True, home=tmp_path) is False
    assert not (tmp_path / ".labkit").exists()


def test_record_result_appends_private_json_lines_read_back_in_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTERHUB_USER", "kim01")
    assert progress.record_result("goodput.ex1", "80", False, home=tmp_path)
    assert progress.record_result("goodput.ex1", "86.1", True, home=tmp_path)
    assert progress.record_result("econ.ex05_1", "x" * 100, None, home=tmp_path)
    path = progress.progress_path(tmp_path)
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert oct(path.parent.stat().st_mode & 0o777) == "0o700"
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["exercise"] for line in lines] == ["goodput.ex1", "goodput.ex1",
                                                               "econ.ex05_1"]
    records, skipped = progress.read_progress(path)
    assert skipped == 0
    assert [(r.exercise, r.correct, r.answer) for r in records] == [
        ("goodput.ex1", False, "80"), ("goodput.ex1", True, "86.1"),
        ("econ.ex05_1", None, "x" * 40)]
    assert dt.datetime.fromisoformat(records[0].time).tzinfo is not None


def test_record_result_refuses_a_symlinked_progress_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTERHUB_USER", "kim01")
    (tmp_path / ".labkit").mkdir()
    target = tmp_path / "elsewhere"
    progress.progress_path(tmp_path).symlink_to(target)
    with pytest.raises(OSError):
        progress.record_result("goodput.ex1", "1", True, home=tmp_path)
    assert not target.exists()


def test_read_progress_skips_what_it_cannot_read(tmp_path: Path) -> None:
    path = tmp_path / "progress.jsonl"
    good = {"v": 1, "time": "2026-12-01T09:00:00+00:00", "exercise": "goodput.ex1",
            "correct": True, "answer": "86.1"}
    bad = [
        "not json", "[1, 2]", json.dumps({**good, "v": 2}),
        json.dumps({**good, "correct": "yes"}), json.dumps({**good, "exercise": ""}),
        json.dumps({**good, "exercise": 5}), json.dumps({k: v for k, v in good.items()
                                                         if k != "time"}),
    ]
    path.write_text("\n".join([json.dumps(good), *bad, "", json.dumps(good)]) + "\n")
    records, skipped = progress.read_progress(path)
    assert len(records) == 2 and skipped == len(bad)
    assert progress.read_progress(tmp_path / "missing.jsonl") == ([], 0)


def test_read_progress_reads_only_the_newest_megabyte(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "MAX_BYTES", 1000)
    path = tmp_path / "progress.jsonl"
    line = json.dumps({"v": 1, "time": "t", "exercise": "a.b", "correct": True,
                       "answer": "1"}) + "\n"
    path.write_text(line * 100)
    records, skipped = progress.read_progress(path)
    assert skipped == 0 and len(records) == 1000 // len(line) - (1000 % len(line) == 0)


def test_exercise_check_records_the_answer_on_the_hub(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTERHUB_USER", "kim01")
    monkeypatch.setenv("HOME", str(tmp_path))
    ex = exercises.Exercise("orch.ex5", 0.5, 0.05, "h")
    box = exercises.exercise_set([ex])
    row = box.children[0].children[1]
    answer, button = row.children[0], row.children[2]
    answer.value = "0.5"
    button.click()
    answer.value = "abc"
    button.click()
    records, _ = progress.read_progress(progress.progress_path(tmp_path))
    assert [(r.exercise, r.correct, r.answer) for r in records] == [
        ("orch.ex5", True, "0.5"), ("orch.ex5", None, "abc")]


def test_exercise_check_goes_on_when_the_home_is_read_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTERHUB_USER", "kim01")
    monkeypatch.setenv("HOME", str(tmp_path / "no" / "such" / "home"))
    box = exercises.exercise_set([exercises.Exercise("orch.ex5", 0.5, 0.05, "h")])
    row = box.children[0].children[1]
    row.children[0].value = "0.5"
    row.children[2].click()
    assert "✔" in box.children[0].children[2].value


# --- the results, read from the student's home as a privileged reader ---------------------------


def test_read_student_progress_reads_the_students_own_file(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.setenv("JUPYTERHUB_USER", "kim01")
    progress.record_result("goodput.ex1", "86.1", True, home=tmp_path)
    records, skipped = progress.read_student_progress(tmp_path, os.getuid())
    assert [(r.exercise, r.correct, r.answer) for r in records] == [("goodput.ex1", True, "86.1")]
    assert skipped == 0
    with pytest.raises(progress.UnsafeProgressFile) as err:  # another account's file
        progress.read_student_progress(tmp_path, os.getuid() + 1)
    assert err.value.reason == "owner"


def _plant(home: Path, what: str) -> None:
    """What a student can put at ~/.labkit/progress.jsonl in their own home."""
    import os

    folder = home / ".labkit"
    secret = home.parent / "secret.txt"  # someone else's file (here: outside the home)
    secret.write_text('{"v": 1, "time": "2026-12-01T09:00:00+00:00", "exercise": "mig.ex1", '
                      '"correct": true, "answer": "1"}\n')
    if what == "folder_link":
        folder.symlink_to(home.parent)
        return
    if what == "folder_file":
        folder.write_text("x")
        return
    folder.mkdir()
    target = folder / "progress.jsonl"
    if what == "symlink":
        target.symlink_to("/etc/shadow")
    elif what == "link_to_other":
        target.symlink_to(secret)
    elif what == "fifo":
        os.mkfifo(target)
    elif what == "hardlink":
        os.link(secret, target)
    elif what == "directory":
        target.mkdir()


@pytest.mark.parametrize(("what", "reason"), [
    ("symlink", "symlink"), ("link_to_other", "symlink"), ("folder_link", "symlink"),
    ("fifo", "not_regular"), ("directory", "not_regular"), ("folder_file", "not_regular"),
    ("hardlink", "owner"),
])
def test_read_student_progress_refuses_what_a_student_can_plant(tmp_path: Path, what: str,
                                                                reason: str) -> None:
    import os

    home = tmp_path / "home"
    home.mkdir()
    _plant(home, what)
    with pytest.raises(progress.UnsafeProgressFile) as err:
        progress.read_student_progress(home, os.getuid())  # a FIFO must not block it either
    assert err.value.reason == reason


def test_class_page_reads_results_from_the_home_and_memory_from_the_hubs_pid(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio
    import concurrent.futures
    import os

    monkeypatch.setenv("JUPYTERHUB_USER", "kim01")
    (tmp_path / "kim01").mkdir()
    progress.record_result("goodput.ex1", "86.1", True, home=tmp_path / "kim01")
    page = classpage.ClassPage("http://127.0.0.1:1/hub/api", "token", ROSTER, ["teacher"],
                               homes=str(tmp_path / "{username}"))
    online = {"name": "kim01", "servers": {"": {"ready": True, "state": {"pid": os.getpid()}}}}

    def run(coro: Any) -> Any:  # off this thread: the session's Playwright keeps a loop here
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, coro).result()

    doc = run(page.report(online))
    assert doc["results"][0]["exercise"] == "goodput.ex1" and "gpu_share" not in doc
    assert isinstance(doc["memory_bytes"], int) and doc["memory_bytes"] > 10 * 2**20
    offline = {"name": "kim01", "servers": {}, "last_activity": "2026-12-01T09:00:00Z"}
    assert run(page.report(offline))["memory_bytes"] is None
    # a pid the hub stored that now belongs to another account is not this student's memory
    assert classpage.server_memory_bytes(os.getpid(), os.getuid() + 1) is None
    assert classpage.server_memory_bytes("1", os.getuid()) is None
    assert run(page.report({"name": "lee02", "servers": {}})) == \
        "학생 홈에서 진도 파일을 읽지 못했습니다 (오류 ENOENT)"
    (tmp_path / "park03").mkdir()
    _plant(tmp_path / "park03", "symlink")
    assert "보통 파일이 아니어서" in run(page.report({"name": "park03", "servers": {}}))


def test_class_page_sends_its_token_to_the_hub_only() -> None:
    import asyncio
    import concurrent.futures

    page = classpage.ClassPage("http://127.0.0.1:1/hub/api", "token", ROSTER, ["teacher"])
    with concurrent.futures.ThreadPoolExecutor(1) as pool, \
            pytest.raises(ValueError, match="refusing to send"):
        pool.submit(asyncio.run, page._fetch("http://127.0.0.1:1/user/kim01/api")).result()


# --- the page model -------------------------------------------------------------------------------


def at(hhmm: str) -> str:
    """An ISO time on the test's class day (UTC), as labkit.data.progress writes it."""
    return f"2026-12-01T{hhmm}:00+00:00"


def rec(exercise: str, correct: bool | None, hhmm: str, answer: str = "1") -> dict[str, Any]:
    """One record of a progress report (labkit.hub.classpage, from labkit.data.progress)."""
    return {"time": at(hhmm), "exercise": exercise, "correct": correct, "answer": answer}


HUB_SHARE = Share("mig", GpuUnit("mig", 1, "MIG-9", "H100", "1g.10gb", 2), 1, 1)


def hub_users() -> list[dict[str, object]]:
    """The shape of GET /hub/api/users (JupyterHub REST API, 5.x/6.x)."""
    return [
        {"kind": "user", "name": "kim01", "admin": False, "last_activity":
         "2026-12-01T09:25:00.000000Z", "pending": None, "servers": {"": {
             "name": "", "ready": True, "pending": None, "url": "/user/kim01/",
             "last_activity": "2026-12-01T09:29:00.000000Z", "started":
             "2026-12-01T09:00:00.000000Z",
             # with admin:server_state: the spawner's state (labkit.hub.gpushare.ShareState)
             "state": {"pid": 4242, "labkit_gpu_share": HUB_SHARE.to_env()}}}},
        {"kind": "user", "name": "lee02", "admin": False, "last_activity":
         "2026-12-01T07:30:00Z", "pending": None, "servers": {}},
        {"kind": "user", "name": "teacher", "admin": True, "last_activity": None,
         "servers": {}},
    ]


def test_class_rows_from_hub_json_and_reports() -> None:
    report = {"user": "kim01", "memory_bytes": 300 * 2**20,
              "results": [
                  rec("goodput.ex1", False, "09:01"),
                  rec("goodput.ex2", True, "09:02"),
                  rec("goodput.ex1", True, "09:03"),
                  rec("goodput.ex3", None, "09:04"),
                  {"exercise": 7, "correct": True, "time": at("09:05")},  # unreadable: left out
              ]}
    rows = classpage.class_rows(hub_users(), ROSTER, {"kim01": report}, admins=["teacher"])
    assert [(r.username, r.state) for r in rows] == [
        ("teacher", "teacher"), ("kim01", "online"), ("lee02", "offline"), ("park03", "never")]
    assert rows[0].share is None and rows[0].tried == 0
    rows = rows[1:]
    kim = rows[0]
    assert kim.last_activity == dt.datetime(2026, 12, 1, 9, 29, tzinfo=dt.UTC)
    assert (kim.tried, kim.solved) == (3, 2)
    assert kim.results == (("goodput.ex1", True), ("goodput.ex2", True), ("goodput.ex3", None))
    assert kim.rejected == 1
    assert kim.share == "GPU 1의 MIG 장치 2 (1g.10gb, MIG-9) — 이 학생만 씁니다"
    assert kim.memory_bytes == 300 * 2**20
    assert rows[1].last_activity == dt.datetime(2026, 12, 1, 7, 30, tzinfo=dt.UTC)
    assert rows[2].last_activity is None and rows[2].tried == 0


@pytest.mark.parametrize(("server", "state"), [
    ({"ready": False, "pending": "spawn"}, "starting"),
    ({"ready": True, "pending": "stop"}, "stopping"),
    ({"ready": False, "pending": None}, "offline"),
    (None, "never"),  # listed by the hub (allowed_users) but never logged in
])
def test_class_rows_server_states(server: dict[str, object] | None, state: str) -> None:
    users = [{"name": "kim01", "last_activity": None, "servers": {"": server} if server else {}}]
    assert classpage.class_rows(users, ROSTER[:1], {})[0].state == state


def test_class_rows_share_comes_from_the_hub_not_from_the_student_server() -> None:
    # the student's own server says it has a whole GPU (a forged report): the page keeps the
    # share the hub's spawner stored when it started the server
    forged = Share("whole", GpuUnit("gpu", 0, "GPU-0", "H100"), 1, 1).to_env()
    report = {"gpu_share": forged, "LABKIT_GPU_SHARE": forged, "memory_bytes": 2**20}
    kim = classpage.class_rows(hub_users(), ROSTER[:1], {"kim01": report})[0]
    assert kim.share == "GPU 1의 MIG 장치 2 (1g.10gb, MIG-9) — 이 학생만 씁니다"
    # no state in the hub's model (no admin:server_state): no share, whatever the report says
    users = hub_users()
    del users[0]["servers"][""]["state"]  # type: ignore[index, attr-defined]
    assert classpage.class_rows(users, ROSTER[:1], {"kim01": report})[0].share is None


def test_share_state_keeps_the_share_in_the_spawners_state() -> None:
    from labkit.hub.gpushare import STATE_KEY, ShareState

    class Base:  # the part of jupyterhub.spawner.Spawner that ShareState extends
        def get_state(self) -> dict[str, object]:
            return {"pid": 7}

        def load_state(self, state: dict[str, object]) -> None:
            self.loaded = state

        def clear_state(self) -> None:
            self.cleared = True

    class Spawner(ShareState, Base):
        pass

    spawner = Spawner()
    assert spawner.get_state() == {"pid": 7}
    spawner.labkit_gpu_share = HUB_SHARE.to_env()
    assert spawner.get_state() == {"pid": 7, STATE_KEY: HUB_SHARE.to_env()}
    again = Spawner()
    again.load_state(spawner.get_state())  # the hub restarted: the share is read back
    assert again.labkit_gpu_share == HUB_SHARE.to_env()
    again.clear_state()
    assert again.labkit_gpu_share == "" and again.get_state() == {"pid": 7}


def test_class_rows_shows_only_the_results_of_a_stopped_server() -> None:
    last = {"memory_bytes": 2**30, "results": [rec("goodput.ex1", True, "09:10")]}
    row = classpage.class_rows(hub_users(), ROSTER[1:2], {"lee02": last})[0]
    assert (row.state, row.share, row.memory_bytes, row.solved) == ("offline", None, None, 1)


def test_class_rows_keeps_the_reason_a_report_is_missing() -> None:
    rows = classpage.class_rows(hub_users(), ROSTER[:1], {"kim01": "HTTP 503"})
    assert rows[0].note == "HTTP 503"
    assert rows[0].share and "MIG-9" in rows[0].share  # the hub knows it without the server


def test_render_page_lists_students_in_korean_and_escapes_names() -> None:
    roster = [RosterEntry("kim01", "<b>김민준</b>"), *ROSTER[1:]]
    rows = classpage.class_rows(hub_users(), roster, {"kim01": {
        "results": [rec("goodput.ex1", True, "09:10")], "memory_bytes": 2**30}},
        admins=["teacher"])
    page = classpage.render_page(rows, now=NOW, stop_url="/services/classpage/stop",
                                 xsrf_html='<input name="_xsrf" value="x">')
    assert "접속 중 1명 / 전체 3명" in page  # the teacher's row is not counted
    assert '<tr class="lk-teacher" data-username="teacher"><td>선생님' in page
    assert "교사(teacher)" in page
    assert "&lt;b&gt;김민준&lt;/b&gt;" in page and "<b>김민준" not in page
    assert "1/1 정답" in page and "1,024 MiB" in page and "1분 전" in page
    assert "2시간 전" in page and "아직 로그인 안 함" in page
    assert page.count('class="lk-stop"') == 1  # only the online student can be stopped
    assert 'name="_xsrf"' in page and 'value="kim01"' in page


# --- the service spec -----------------------------------------------------------------------------


def test_service_spec_gives_only_the_needed_scopes_on_the_class_students() -> None:
    service, role = classpage.service_spec(port=10101, roster=ROSTER, admins=["teacher"])
    assert service["name"] == "classpage" and service["url"] == "http://127.0.0.1:10101"
    assert service["command"][1:] == ["-m", "labkit.hub.classpage", "--port", "10101"]
    assert json.loads(service["environment"][classpage.ENV_ROSTER])[0] == ["kim01", "김민준"]
    assert role["services"] == ["classpage"]
    assert sorted({s.split("!")[0] for s in role["scopes"]}) == sorted(classpage.SCOPES)
    # seven scopes, each on the students' hub group (the teacher is not in it), so a student
    # imported while the hub runs is covered without a restart
    assert len(role["scopes"]) == 7 and all(s.endswith("!group=students") for s in role["scopes"])
    assert "admin:server_state!group=students" in role["scopes"]  # the hub's record of the share
    assert not any("teacher" in s for s in role["scopes"])
    # issue 23: nothing that reaches a student's server (its token would sit in their memory)
    # ("servers" starts and stops them for 수업 준비; it opens none of them)
    assert not any(s.split("!")[0] in ("access:servers", "admin:servers", "tokens", "admin:users")
                   for s in role["scopes"]), role["scopes"]


@pytest.mark.parametrize(("kw", "match"), [
    ({"port": 80}, "port"), ({"port": True}, "port"), ({"admins": []}, "admin"),
    ({"roster": [RosterEntry("teacher", "t")]}, "no student"),
])
def test_service_spec_rejects_bad_input(kw: dict[str, object], match: str) -> None:
    args: dict[str, object] = {"port": 10101, "roster": ROSTER, "admins": ["teacher"], **kw}
    with pytest.raises(ValueError, match=match):
        classpage.service_spec(**args)  # type: ignore[arg-type]



def test_class_rows_take_any_roster_like_entries_and_empty_display_names() -> None:
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Student:  # the shape of the hub's own roster type (username, display_name = "")
        username: str
        display_name: str = ""

    rows = classpage.class_rows(hub_users(), [Student("kim01")], {})
    assert (rows[0].username, rows[0].display_name) == ("kim01", "kim01")
    service, _ = classpage.service_spec(port=10101, roster=[Student("kim01"), Student("t")],
                                        admins=["t"])
    assert json.loads(service["environment"][classpage.ENV_ROSTER]) == [["kim01", "kim01"],
                                                                        ["t", "t"]]


def test_class_page_says_why_a_student_server_or_the_hub_cannot_be_read() -> None:
    import asyncio
    import concurrent.futures
    import socket

    with socket.socket() as s:  # a loopback port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    page = classpage.ClassPage(f"{closed}/hub/api", "token", ROSTER, ["teacher"],
                               homes="/nonexistent/{username}")
    user = {"name": "kim01", "servers": {"": {"ready": True, "url": "/user/kim01/"}}}

    def run(coro: Any) -> Any:  # off this thread: the session's Playwright keeps a loop here
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, coro).result()

    reason = run(page.report(user))
    assert reason == "학생 홈에서 진도 파일을 읽지 못했습니다 (오류 ENOENT)"
    with pytest.raises(OSError):
        run(page.rows())
    with pytest.raises(ValueError, match="not a student"):
        run(page.stop("teacher"))


# --- the teacher's view of a student's work ---------------------------------------------------


def _notebook(html_output: str) -> bytes:
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# 내 답 <script>alert(1)</script>"),
        nbformat.v4.new_code_cell("x = 42", outputs=[
            nbformat.v4.new_output("stream", name="stdout", text="answer 42\n"),
            nbformat.v4.new_output("display_data", data={"text/html": html_output})])])
    return nbformat.writes(nb).encode()


def test_render_work_shows_inputs_and_outputs_without_any_script() -> None:
    body = classpage.render_work(_notebook(
        "<b>bold</b><script>fetch('/hub/api/users')</script>"
        "<img src=x onerror=\"fetch('/hub/api')\"><a href=\"javascript:alert(1)\">x</a>"))
    import html as _html
    import re

    text = _html.unescape(re.sub(r"<[^>]+>", "", body))
    assert "x = 42" in text and "answer 42" in text and "<b>bold</b>" in body
    tags = [tag.lower() for tag in re.findall(r"<[^>]+>", body)]  # what a browser would parse
    assert not [tag for tag in tags if tag.startswith(("<script", "<img", "<iframe"))
                or "onerror" in tag or "javascript:" in tag or "/hub/" in tag], tags
    with pytest.raises(ValueError, match="not a notebook"):
        classpage.render_work(b"{not json")
    assert classpage.WORK_CSP.startswith("sandbox;") and "default-src 'none'" in classpage.WORK_CSP


def test_work_view_lists_and_refuses_what_a_student_planted(tmp_path: Path) -> None:
    import os

    home = tmp_path / "kim01"
    (home / "labkit").mkdir(parents=True)
    (home / "labkit" / "03_goodput.ipynb").write_bytes(_notebook("<i>ok</i>"))
    (home / "labkit" / "notes.txt").write_text("not a notebook")
    (home / "labkit" / "shadow.ipynb").symlink_to("/etc/shadow")
    (home / "labkit" / "broken.ipynb").write_text("{")
    template = str(tmp_path / "{username}")
    assert classpage.student_notebooks("kim01", template) == [
        "03_goodput.ipynb", "broken.ipynb", "shadow.ipynb"]
    status, body = classpage._work_html("kim01", None, template, "김민준")
    assert status == 200 and 'href="03_goodput.ipynb"' in body and "김민준" in body
    assert classpage._work_html("kim01", "03_goodput.ipynb", template, "김민준")[0] == 200
    status, body = classpage._work_html("kim01", "shadow.ipynb", template, "김민준")
    assert status == 400 and "보통 파일이 아니어서" in body
    assert classpage._work_html("kim01", "broken.ipynb", template, "김민준")[0] == 400
    for name in ("../kim01/labkit/03_goodput.ipynb", "notes.txt", "missing.ipynb"):
        assert classpage._work_html("kim01", name, template, "김민준")[0] == 404, name
    os.rename(home / "labkit", home / "real")
    (home / "labkit").symlink_to(home / "real")  # the folder itself a link
    assert classpage._work_html("kim01", None, template, "김민준")[0] == 400


def test_class_page_reads_the_saved_roster_again_when_it_changes(tmp_path: Path) -> None:
    from labkit.hub.roster import Student
    from labkit.hub.state import HubState

    state = HubState(tmp_path / "state")
    state.save_roster([Student("kim01", "김민준")])
    page = classpage.ClassPage("http://127.0.0.1:1/hub/api", "token", [], ["teacher"],
                               roster_file=str(state.root / "roster.json"))
    assert page.students == {"kim01"} and page.display_names == {"kim01": "김민준"}
    # a latecomer imported while the hub (and the page) runs
    state.save_roster([Student("kim01", "김민준"), Student("late09", "늦은")])
    assert page.students == {"kim01", "late09"}
    assert [e.username for e in page.roster] == ["kim01", "late09"]
    rows = classpage.class_rows([], page.roster, {}, page.admins)
    assert [(r.username, r.state) for r in rows][-1] == ("late09", "never")
    (state.root / "roster.json").write_text("not json", encoding="utf-8")
    assert page.students == {"kim01", "late09"}  # an unreadable file: the last roster stays


def test_answer_key_is_copied_for_the_teacher_and_closed_to_other_accounts(
        tmp_path: Path) -> None:
    import stat

    from labkit.hub import answerkey

    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("answer-key.html", "answer-key.md"):
        (docs / name).write_text("<p>정답</p>", encoding="utf-8")
        (docs / name).chmod(0o644)
    (tmp_path / ".git").mkdir(mode=0o755)  # the history holds the key (the trial's git show)
    (tmp_path / ".git").chmod(0o755)
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    copy = answerkey.protect(state, docs)
    assert copy == state / "answer-key.html" and copy.read_text(encoding="utf-8") == "<p>정답</p>"
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600
    for name in ("answer-key.html", "answer-key.md"):  # no "others" bits left in the checkout
        assert stat.S_IMODE((docs / name).stat().st_mode) == 0o640
    assert stat.S_IMODE((tmp_path / ".git").stat().st_mode) == 0o750
    (docs / "answer-key.html").unlink()
    assert answerkey.protect(state, docs) is None


def test_class_page_offers_the_answer_key_download() -> None:
    page = classpage.render_page([], now=dt.datetime(2026, 12, 2, tzinfo=dt.UTC),
                                 stop_url="stop")
    assert 'href="answer-key.html" download' in page and "정답과 풀이" in page
