"""The teacher's class page: progress recording/reading, the page model, the service spec."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from labkit.data import progress
from labkit.data.roster import RosterEntry
from labkit.hub import classpage, progress_ext
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


# --- the extension's report -----------------------------------------------------------------------


def test_progress_report_has_results_and_memory_but_not_the_share(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTERHUB_USER", "kim01")
    share = Share("mig", GpuUnit("mig", 0, "MIG-1", "H100", "1g.10gb", 0), 1, 1)
    monkeypatch.setenv("LABKIT_GPU_SHARE", share.to_env())
    progress.record_result("goodput.ex1", "86.1", True, home=tmp_path)
    doc = progress_ext.progress_report("kim01", home=str(tmp_path))
    assert doc["user"] == "kim01" and "gpu_share" not in doc  # the class page asks the hub
    assert doc["results"][0]["exercise"] == "goodput.ex1"
    assert isinstance(doc["memory_bytes"], int) and doc["memory_bytes"] > 10 * 2**20
    assert json.loads(json.dumps(doc)) == doc


# --- the page model -------------------------------------------------------------------------------


def at(hhmm: str) -> str:
    """An ISO time on the test's class day (UTC), as labkit.data.progress writes it."""
    return f"2026-12-01T{hhmm}:00+00:00"


def rec(exercise: str, correct: bool | None, hhmm: str, answer: str = "1") -> dict[str, Any]:
    """One record of a progress report (labkit.hub.progress_ext)."""
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
    service, role = classpage.service_spec(port=10101, roster=ROSTER, admins=["teacher"],
                                           proxy_url="http://127.0.0.1:8000")
    assert service["name"] == "classpage" and service["url"] == "http://127.0.0.1:10101"
    assert service["command"][1:] == ["-m", "labkit.hub.classpage", "--port", "10101",
                                      "--proxy-url", "http://127.0.0.1:8000"]
    assert json.loads(service["environment"][classpage.ENV_ROSTER])[0] == ["kim01", "김민준"]
    assert role["services"] == ["classpage"]
    assert sorted({s.split("!")[0] for s in role["scopes"]}) == sorted(classpage.SCOPES)
    assert len(role["scopes"]) == 8 * 3  # eight scopes x three students, none on the teacher
    assert "admin:server_state!user=kim01" in role["scopes"]  # the hub's record of the share
    assert not any("teacher" in s for s in role["scopes"])
    assert "access:servers!user=kim01" in role["scopes"]


@pytest.mark.parametrize(("kw", "match"), [
    ({"port": 80}, "port"), ({"port": True}, "port"), ({"admins": []}, "admin"),
    ({"roster": [RosterEntry("teacher", "t")]}, "no student"),
])
def test_service_spec_rejects_bad_input(kw: dict[str, object], match: str) -> None:
    args: dict[str, object] = {"port": 10101, "roster": ROSTER, "admins": ["teacher"],
                               "proxy_url": "http://127.0.0.1:8000", **kw}
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
                                        admins=["t"], proxy_url="http://127.0.0.1:8000")
    assert json.loads(service["environment"][classpage.ENV_ROSTER]) == [["kim01", "kim01"],
                                                                        ["t", "t"]]


def test_class_page_says_why_a_student_server_or_the_hub_cannot_be_read() -> None:
    import asyncio
    import concurrent.futures
    import socket

    with socket.socket() as s:  # a loopback port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    page = classpage.ClassPage(f"{closed}/hub/api", "token", closed, ROSTER, ["teacher"])
    user = {"name": "kim01", "servers": {"": {"ready": True, "url": "/user/kim01/"}}}
    def run(coro: Any) -> Any:  # off this thread: the session's Playwright keeps a loop here
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, coro).result()

    reason = run(page.report(user))
    assert reason == "학생 서버에서 진도를 읽지 못했습니다 (ConnectionRefusedError)"
    with pytest.raises(OSError):
        run(page.rows())
    with pytest.raises(ValueError, match="not a student"):
        run(page.stop("teacher"))
