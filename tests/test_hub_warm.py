"""수업 준비 (labkit.hub.warm): pacing, the period's end, the lesson, what the page says; the
lesson as the start's user option (labkit.hub.spawner) and the server's own preheat
(labkit.hub.preheat)."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from labkit.hub import classpage, preheat
from labkit.hub.warm import (
    LESSONS_DIR,
    Warmer,
    WarmStatus,
    keep_every_s,
    lesson_notebook,
    pace,
    parse_until,
)

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
                              "3강: 1명의 앱(voila) 화면을 미리 만들어 두었습니다."]
    status.page = "lab"
    assert status.lines()[1] == "3강: 1명의 노트북 커널(kernel)을 미리 띄워 두었습니다."
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
    assert '<select name="page"><option value="app">앱(voila) 화면</option>' in page
    assert '<option value="lab">JupyterLab 노트북</option>' in page
    assert "수업 준비를 마쳤습니다(95초 걸림)." in page


class _RecordingWarmer(Warmer):
    """A Warmer whose requests are recorded and answered like a hub whose servers start."""

    def __init__(self, running: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        super().__init__("http://hub/hub/api", "classpage-token")
        self.calls: list[tuple[str, str, Any]] = []
        self.running = set(running)

    async def _call(self, url: str, method: str = "GET", body: Any = None,
                    timeout_s: float = 60.0, json_reply: bool = True) -> tuple[int, Any]:
        self.calls.append((method, url, body))
        if url.endswith("/server") and method == "POST":
            return (400 if url.split("/")[-2] in self.running else 201), None
        if url.endswith("/activity"):
            return 204, None
        return 200, {"servers": {"": {"ready": True}}}


def test_warm_up_calls_only_the_hub_never_a_students_server() -> None:
    """Issue 23: the class page's token (it may act for every student) goes to the hub's API
    only; the lesson goes as the start's user option, and the server preheats itself."""
    warmer = _RecordingWarmer(running={"b"})
    status = asyncio.run(warmer.run(["a", "b"], lesson="03"))
    assert status.ready == ["a", "b"] and not status.failed
    assert status.preheated == ["a"]  # b already ran: left as it was, not preheated
    assert status.already == ["b"]  # and the teacher is told so (the trial: "0명", no why)
    assert status.lines()[2] == (
        "1명은 서버가 이미 켜져 있어 그대로 두었고 미리 만들지 않았습니다(b). 이 학생들도 "
        "준비하려면 수업 현황 페이지에서 서버를 멈춘 뒤 수업 준비를 다시 누르세요.")
    assert warmer.calls, "no request made"
    assert all(url.startswith("http://hub/hub/api/") for _, url, _ in warmer.calls)
    assert not any("/user/" in url or "proxy" in url for _, url, _ in warmer.calls)
    starts = [(url, body) for method, url, body in warmer.calls if method == "POST"
              and url.endswith("/server")]
    assert starts == [("http://hub/hub/api/users/a/server",
                       {"user_options": {"lesson": "03_goodput.ipynb", "page": "app"}}),
                      ("http://hub/hub/api/users/b/server",
                       {"user_options": {"lesson": "03_goodput.ipynb", "page": "app"}})]
    assert not hasattr(warmer, "_preheat") and not hasattr(warmer, "_run_first_cell")


def test_warm_up_of_the_lab_page_says_so_in_the_start() -> None:
    warmer = _RecordingWarmer()
    status = asyncio.run(warmer.run(["a"], lesson="03", page="lab"))
    assert status.page == "lab" and status.to_json()["page"] == "lab"
    assert ("POST", "http://hub/hub/api/users/a/server",
            {"user_options": {"lesson": "03_goodput.ipynb", "page": "lab"}}) in warmer.calls
    for bad in ("pdf", "APP", "../lab"):
        with pytest.raises(ValueError, match="미리 만들 수 있는 화면이 아닙니다"):
            asyncio.run(_RecordingWarmer().run(["a"], lesson="03", page=bad))


def test_warm_up_without_a_lesson_starts_with_no_options() -> None:
    warmer = _RecordingWarmer()
    status = asyncio.run(warmer.run(["a"]))
    assert status.ready == ["a"] and status.preheated == []
    assert ("POST", "http://hub/hub/api/users/a/server", {}) in warmer.calls


def _spawner(options: Any, curriculum_dir: str = "") -> Any:
    return SimpleNamespace(user_options=options, curriculum_dir=curriculum_dir)


def test_spawner_takes_only_a_lesson_notebooks_name_as_user_option() -> None:
    from tornado import web

    from labkit.hub.spawner import LabkitSpawner

    assert LabkitSpawner.warm_lesson(_spawner({})) is None
    assert LabkitSpawner.warm_lesson(_spawner(None)) is None
    assert LabkitSpawner.warm_lesson(_spawner({"lesson": "03_goodput.ipynb"})) == (
        "03_goodput.ipynb")
    assert LabkitSpawner.warm_page(_spawner({"lesson": "03_goodput.ipynb"})) == "app"
    assert LabkitSpawner.warm_page(_spawner({"lesson": "03_goodput.ipynb", "page": "lab"})) == (
        "lab")
    for bad in ({"lesson": "03"}, {"lesson": "../../etc/passwd"}, {"lesson": "42_x.ipynb"},
                {"lesson": ["03_goodput.ipynb"]}, {"lesson": "03_goodput.ipynb", "cmd": "sh"},
                {"image": "x"}):
        with pytest.raises(web.HTTPError) as err:
            LabkitSpawner.warm_lesson(_spawner(bad))
        said = str(err.value.log_message)
        assert err.value.status_code == 400
        assert ("강의 노트북의 파일 이름이 아닙니다" in said
                or "강의(lesson)와 화면(page)뿐입니다" in said), said
    for bad_page in ("pdf", ["app"], 1, "", None):
        with pytest.raises(web.HTTPError) as err:
            LabkitSpawner.warm_page(_spawner({"lesson": "03_goodput.ipynb", "page": bad_page}))
        assert err.value.status_code == 400 and "화면이 아닙니다" in str(err.value.log_message)


def test_spawner_checks_the_lesson_against_the_teachers_curriculum(tmp_path: Path) -> None:
    from tornado import web

    from labkit.hub.spawner import LabkitSpawner

    (tmp_path / "01_mine.ipynb").write_text("{}", encoding="utf-8")
    assert LabkitSpawner.warm_lesson(_spawner({"lesson": "01_mine.ipynb"}, str(tmp_path))) == (
        "01_mine.ipynb")
    with pytest.raises(web.HTTPError):
        LabkitSpawner.warm_lesson(_spawner({"lesson": "03_goodput.ipynb"}, str(tmp_path)))


class _FakeClient:
    def __init__(self, log: list[Any]) -> None:
        self.log = log

    def start_channels(self) -> None:
        self.log.append("start")

    async def wait_for_ready(self, timeout: float) -> None:
        self.log.append("ready")

    async def execute_interactive(self, code: str, **kwargs: Any) -> dict[str, Any]:
        self.log.append(("execute", code, kwargs["silent"]))
        return {"content": {"status": "ok"}}

    def stop_channels(self) -> None:
        self.log.append("stop")


def test_server_preheats_the_lesson_in_itself() -> None:
    """The student's server opens the lesson's session with its own managers and runs the
    lesson's first code cell in its kernel (no HTTP request, no token)."""
    log: list[Any] = []

    async def create_session(**kwargs: Any) -> dict[str, Any]:
        log.append(("session", kwargs))
        return {"kernel": {"id": "k1"}}

    client = _FakeClient(log)
    app = SimpleNamespace(
        root_dir=str(LESSONS_DIR),
        session_manager=SimpleNamespace(create_session=create_session),
        kernel_manager=SimpleNamespace(get_kernel=lambda kid: SimpleNamespace(
            client=lambda: client)))
    assert asyncio.run(preheat.preheat(app, "03_goodput.ipynb")) == "k1"
    first = preheat.first_code_cell(LESSONS_DIR / "03_goodput.ipynb")
    assert "ui.setup()" in first
    assert log == [("session", {"path": "03_goodput.ipynb", "name": "03_goodput.ipynb",
                                "type": "notebook", "kernel_name": None}),
                   "start", "ready", ("execute", first, True), "stop"]


def test_preheat_is_scheduled_only_for_a_plain_lesson_name() -> None:
    app = SimpleNamespace(log=None)
    assert preheat.schedule(app, {}) is False
    assert preheat.schedule(app, {preheat.ENV_WARM_LESSON: "../03_goodput.ipynb"}) is False
    assert preheat.schedule(app, {preheat.ENV_WARM_LESSON: "03_goodput.ipynb",
                                  preheat.ENV_WARM_PAGE: "both"}) is False


@pytest.mark.parametrize(("page", "expected"), [("", "prerender"), ("app", "prerender"),
                                                ("lab", "preheat")])
def test_preheat_prepares_one_page_only(page: str, expected: str,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """One kernel per warmed server: the app's page or the JupyterLab session, never both."""
    from labkit.hub import voila_pool

    ran: list[str] = []

    async def fake_preheat(app: Any, notebook: str) -> str:
        ran.append("preheat")
        return "k1"

    async def fake_prerender(app: Any, notebook: str) -> str:
        ran.append("prerender")
        return "k2"

    monkeypatch.setattr(preheat, "preheat", fake_preheat)
    monkeypatch.setattr(voila_pool, "prerender", fake_prerender)
    loop = asyncio.new_event_loop()
    try:
        callbacks: list[Any] = []
        app = SimpleNamespace(log=SimpleNamespace(info=lambda *a: None, warning=lambda *a: None),
                              io_loop=SimpleNamespace(add_callback=callbacks.append))
        assert preheat.schedule(app, {preheat.ENV_WARM_LESSON: "03_goodput.ipynb",
                                      preheat.ENV_WARM_PAGE: page}) is True
        loop.run_until_complete(callbacks[0]())
    finally:
        loop.close()
    assert ran == [expected]


def test_spawner_checks_the_user_option_as_the_hub_applies_it() -> None:
    from tornado import web

    from labkit.hub.spawner import LabkitSpawner

    hook = LabkitSpawner(limit_mechanism="rlimit").apply_user_options
    assert callable(hook)
    assert hook(_spawner(None), {"lesson": "03_goodput.ipynb"}) == ("03_goodput.ipynb", "app")
    assert hook(_spawner(None), {}) == (None, "app")
    with pytest.raises(web.HTTPError):
        hook(_spawner(None), {"lesson": "nope"})


def test_refused_user_options_are_forgotten_for_the_next_start() -> None:
    """The trial: one POST with options of a student's own making was saved by the hub and
    refused every later login with the same 400; refused options are cleared where the hub
    keeps them (the spawner's ``orm_spawner.user_options``, committed)."""
    from tornado import web

    from labkit.hub.spawner import LabkitSpawner

    hook = LabkitSpawner(limit_mechanism="rlimit").apply_user_options
    commits: list[int] = []
    bad = {"gpu": "all", "environment": {"X": "1"}}
    spawner = SimpleNamespace(user_options=bad, curriculum_dir="",
                              orm_spawner=SimpleNamespace(user_options=dict(bad)),
                              db=SimpleNamespace(commit=lambda: commits.append(1)))
    with pytest.raises(web.HTTPError) as refused:
        hook(spawner, bad)
    assert refused.value.status_code == 400
    assert (spawner.user_options, spawner.orm_spawner.user_options, commits) == ({}, {}, [1])
    good = {"lesson": "03_goodput.ipynb"}
    spawner.orm_spawner.user_options = dict(good)
    assert hook(spawner, good) == ("03_goodput.ipynb", "app")
    assert spawner.orm_spawner.user_options == good and commits == [1]


def test_preheat_in_a_real_server_runs_the_first_cell(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """With jupyter_server's own managers: the lesson's session exists and its kernel has run
    the first code cell (what JupyterLab then finds when the student opens the lesson)."""
    import nbformat
    from jupyter_server.serverapp import ServerApp

    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "run"))
    root = tmp_path / "root"
    root.mkdir()
    nbformat.write(nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# 강의"), nbformat.v4.new_code_cell("MARK = 6 * 7")]),
        root / "01_x.ipynb")
    app = ServerApp(root_dir=str(root), open_browser=False, port=0, token="t",
                    jpserver_extensions={})
    app.initialize(argv=[], find_extensions=False, new_httpserver=False)
    out: list[str] = []

    async def check() -> list[dict[str, Any]]:
        kernel_id = await preheat.preheat(app, "01_x.ipynb", timeout_s=120)
        kernels: Any = app.kernel_manager  # async managers, typed as the sync ones
        client: Any = kernels.get_kernel(kernel_id).client()
        client.start_channels()
        try:
            await client.wait_for_ready(timeout=60)
            await client.execute_interactive(
                "print(MARK)", timeout=60,
                output_hook=lambda m: out.append(str(m["content"].get("text") or "")))
        finally:
            client.stop_channels()
        sessions: list[dict[str, Any]] = await app.session_manager.list_sessions()
        await kernels.shutdown_all()
        return sessions

    sessions = app.io_loop.run_sync(check, timeout=240)
    assert [s["path"] for s in sessions] == ["01_x.ipynb"]
    assert "".join(out).strip() == "42"
