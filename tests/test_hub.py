"""labkit.hub without a running hub: roster, curriculum merge, throttle, frame guards, state."""

from __future__ import annotations

import json
import os
import re
import stat
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from labkit.hub import accounts
from labkit.hub.curriculum import merge, plan
from labkit.hub.roster import Student
from labkit.hub.singleuser import MalformedFrameError, check_legacy_frame, check_v1_frame
from labkit.hub.state import HubSettings, HubState
from labkit.serve.patching import PatchNotApplicableError, require_attribute, require_version
from tests.browser.voila_client import encode_v1
from tests.conftest import SimFactory

# --- curriculum merge --------------------------------------------------------------------------


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


@given(teacher_old=st.binary(max_size=8), teacher_new=st.binary(max_size=8),
       student=st.one_of(st.none(), st.binary(max_size=8)), copied=st.booleans())
def test_plan_never_overwrites_a_students_change(teacher_old: bytes, teacher_new: bytes,
                                                 student: bytes | None, copied: bool) -> None:
    recorded = {"a.ipynb": _sha(teacher_old)} if copied else {}
    present = {"a.ipynb": None if student is None else _sha(student)}
    action = plan({"a.ipynb": teacher_new}, present, recorded).get("a.ipynb")
    # the oracle, written out case by case
    if student is None:
        expected = None if copied and teacher_old == teacher_new else "copy"
    elif copied and student == teacher_old and teacher_old != teacher_new:
        expected = "update"
    else:
        expected = None  # the student's file (changed, or never from us) stays
    assert action == expected


def test_merge_copies_updates_and_keeps_edits(tmp_path: Path) -> None:
    home = tmp_path / "labkit"
    assert merge(home, {"01.ipynb": b"v1", "02.ipynb": b"v1"}) == {
        "01.ipynb": "copy", "02.ipynb": "copy"}
    (home / "02.ipynb").write_bytes(b"student's work")
    (home / "mine.txt").write_bytes(b"mine")
    assert merge(home, {"01.ipynb": b"v2", "02.ipynb": b"v2"}) == {"01.ipynb": "update"}
    assert (home / "01.ipynb").read_bytes() == b"v2"
    assert (home / "02.ipynb").read_bytes() == b"student's work"
    assert (home / "mine.txt").read_bytes() == b"mine"
    assert merge(home, {"01.ipynb": b"v2"}) == {}


@pytest.mark.parametrize("planted", ["link_to_etc", "dangling_link", "file"])
def test_merge_moves_aside_a_labkit_that_is_not_a_folder(tmp_path: Path, planted: str) -> None:
    """Issue 23: a student who turned ~/labkit into a link could no longer start their server
    (an English traceback); the merge moves it aside and says so in Korean."""
    from labkit.hub.curriculum import NOTICE

    home = tmp_path / "labkit"
    work = tmp_path / "mywork"
    work.mkdir()
    (work / "notes.txt").write_text("mine")
    if planted == "link_to_etc":
        home.symlink_to("/etc")
    elif planted == "dangling_link":
        home.symlink_to(tmp_path / "nowhere")
    else:
        home.write_text("not a folder")
    actions = merge(home, {"01.ipynb": b"v1"})
    assert actions == {"01.ipynb": "copy", NOTICE: "notice"}
    assert home.is_dir() and not home.is_symlink() and (home / "01.ipynb").read_bytes() == b"v1"
    moved = [p for p in tmp_path.iterdir() if p.name.startswith("labkit-moved-")]
    assert len(moved) == 1 and (moved[0].is_symlink() or moved[0].read_text() == "not a folder")
    note = (home / NOTICE).read_text(encoding="utf-8")
    assert moved[0].name in note and "옮기고" in note
    assert (work / "notes.txt").read_text() == "mine"
    assert merge(home, {"01.ipynb": b"v1"}) == {}  # once moved, nothing more to do


def test_curriculum_main_moves_aside_a_linked_state_folder(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    """~/.labkit (the runtime folder's parent) turned into a link to /etc would stop the
    server from starting (jupyter cannot make its runtime folder there)."""
    import base64
    import io
    import json

    from labkit.hub import curriculum

    (tmp_path / ".labkit").symlink_to("/etc")
    payload = json.dumps({"01.ipynb": base64.b64encode(b"v1").decode()})
    import sys

    old = sys.stdin
    sys.stdin = io.StringIO(payload)
    try:
        curriculum.main([str(tmp_path / "labkit")])
    finally:
        sys.stdin = old
    actions = json.loads(capsys.readouterr().out)
    moved = [k for k, v in actions.items() if v == "moved"]
    assert len(moved) == 1 and moved[0].startswith(".labkit-moved-")
    assert not (tmp_path / ".labkit").exists() and (tmp_path / moved[0]).is_symlink()


def test_merge_keeps_a_lesson_the_student_turned_into_a_link(tmp_path: Path) -> None:
    home = tmp_path / "labkit"
    assert merge(home, {"01.ipynb": b"v1"}) == {"01.ipynb": "copy"}
    (home / "01.ipynb").unlink()
    (home / "01.ipynb").symlink_to("/etc/shadow")  # unreadable for the student
    (home / ".01.ipynb.labkit-tmp").symlink_to("/etc/passwd")  # a planted temporary file
    (home / ".labkit-curriculum.json").unlink()
    (home / ".labkit-curriculum.json").mkdir()  # the manifest turned into a folder
    assert merge(home, {"01.ipynb": b"v2"}) == {}  # the student's link: kept, not followed
    assert (home / "01.ipynb").is_symlink()
    assert merge(home, {"01.ipynb": b"v2", "02.ipynb": b"v1"}) == {"02.ipynb": "copy"}


# --- websocket frame guards -------------------------------------------------------------------


def test_v1_guard_refuses_the_72_byte_frame_and_passes_real_messages() -> None:
    attack = (2**63 - 1).to_bytes(8, "little") + bytes(64)
    assert len(attack) == 72
    with pytest.raises(MalformedFrameError):
        check_v1_frame(attack)
    msg = {"header": {"msg_id": "1", "msg_type": "comm_msg"}, "parent_header": {},
           "metadata": {}, "content": {"data": {}}}
    check_v1_frame(encode_v1("shell", msg))
    check_v1_frame(encode_v1("shell", msg, [b"\x00" * 100, b"x"]))
    for bad in (b"", b"\x01" + bytes(7), (3).to_bytes(8, "little") + bytes(8)):
        with pytest.raises(MalformedFrameError):
            check_v1_frame(bad)


def test_legacy_guard_refuses_a_huge_buffer_count_and_passes_real_messages() -> None:
    from jupyter_server.services.kernels.connection.base import serialize_binary_message

    with pytest.raises(MalformedFrameError):
        check_legacy_frame(struct.pack("!i", 50_000_000) + bytes(60))
    with pytest.raises(MalformedFrameError):
        check_legacy_frame(struct.pack("!i", -1) + bytes(60))
    real = serialize_binary_message({"header": {}, "parent_header": {}, "metadata": {},
                                     "content": {}, "buffers": [b"abc", b"de"]})
    check_legacy_frame(real)


def test_guards_are_installed_where_jupyter_server_calls_them() -> None:
    from jupyter_server.services.kernels.connection import base, channels

    from labkit.hub.singleuser import guard_kernel_websocket_frames

    guard_kernel_websocket_frames()
    guard_kernel_websocket_frames()  # idempotent
    for module in (base, channels):
        assert module.deserialize_msg_from_ws_v1._labkit_guard
        assert module.deserialize_binary_message._labkit_guard
    with pytest.raises(MalformedFrameError):
        channels.deserialize_msg_from_ws_v1((2**63 - 1).to_bytes(8, "little") + bytes(64))


def test_patch_version_checks_fail_loudly() -> None:
    assert require_version("jupyter_server", "2.0", "3.0", "x")
    with pytest.raises(PatchNotApplicableError, match="was written for voila >=0.6,<0.7"):
        require_version("voila", "0.6", "0.7", "the guard")
    with pytest.raises(PatchNotApplicableError, match="not installed"):
        require_version("no-such-dist-labkit", "1", "2", "x")
    with pytest.raises(PatchNotApplicableError, match="gone"):
        require_attribute(os, "no_such_function", "x")


# --- state, root, config -----------------------------------------------------------------------


def test_state_dir_is_private(tmp_path: Path) -> None:
    state = HubState(tmp_path / "state")
    assert stat.S_IMODE(state.root.stat().st_mode) == 0o700
    token = state.proxy_token()
    assert len(token) == 64 and state.proxy_token() == token
    assert stat.S_IMODE((state.root / "proxy_token").stat().st_mode) == 0o600
    state.save_roster([Student("minji", "김민지")])
    assert state.roster() == [Student("minji", "김민지")]
    state.save_settings(HubSettings(teacher="kim", port=8000))
    assert state.settings().teacher == "kim"
    with pytest.raises(ValueError, match="port"):
        state.save_settings(HubSettings(port=0))


def test_not_root_refuses_in_korean_and_english(monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path) -> None:
    from labkit.hub.__main__ import main

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(accounts.NeedRootError):
        accounts.ensure_system_user("minji")
    with pytest.raises(SystemExit) as exit_info:
        main(["--state-dir", str(tmp_path / "s"), "serve", "--teacher", "kim"])
    message = str(exit_info.value)
    assert "root 권한이 필요합니다" in message and "needs root" in message
    assert "no shared-account mode" in message




def test_config_wires_roster_teacher_limits_and_services(tmp_path: Path) -> None:
    from traitlets.config import Config

    from labkit.hub.config import configure

    state = HubState(tmp_path / "state")
    state.save_roster([Student("minji"), Student("jisoo")])
    state.save_settings(HubSettings(teacher="kim", host="0.0.0.0", port=8000,
                                    cull_timeout_s=900, concurrent_spawn_limit=5))
    c = Config()
    configure(c, state)
    assert c.JupyterHub.bind_url == "http://0.0.0.0:8000/"
    assert c.JupyterHub.hub_bind_url.startswith("http://127.0.0.1:")
    assert c.Authenticator.allowed_users == {"minji", "jisoo", "kim"}
    # issue 23: the teacher is no JupyterHub admin (whose rights open every student's server):
    # their own role, with no access to students' servers and no tokens for others
    assert c.Authenticator.admin_users == set() and c.RosterAuthenticator.teacher_users == {"kim"}
    teacher = next(r for r in c.JupyterHub.load_roles if r["name"] == "teacher")
    assert teacher["users"] == ["kim"] and "servers" in teacher["scopes"]
    # also through a group: set-password re-creates the teacher on a running hub (sessions.py)
    assert teacher["groups"] == ["teachers"]
    assert c.JupyterHub.load_groups == {"teachers": {"users": ["kim"]},
                                        "students": {"users": ["minji", "jisoo"]}}
    assert "access:services!service=classpage" in teacher["scopes"]
    assert not any(s.startswith(("access:servers", "admin", "tokens")) for s in teacher["scopes"])
    assert next(r for r in c.JupyterHub.load_roles if r["name"] == "admin")["users"] == []
    from jupyterhub.scopes import _check_scopes_exist, expand_scopes

    _check_scopes_exist(teacher["scopes"])  # JupyterHub would refuse an unknown one at start
    # what the scopes grant once JupyterHub expands them (servers -> delete:servers, ...)
    granted = expand_scopes([s for s in teacher["scopes"] if s != "self"])
    assert "delete:servers" in granted and "list:users" in granted
    assert not [s for s in granted if s.startswith(("access:servers", "tokens", "admin:",
                                                    "read:tokens"))], sorted(granted)
    assert c.RosterAuthenticator.state_dir == str(state.root)
    roster_service = next(s for s in c.JupyterHub.services if s["name"] == "labkit-roster")
    assert "url" not in roster_service and "command" not in roster_service  # a token only
    assert roster_service["api_token"] == (state.root / "roster_api_token").read_text().strip()
    assert c.JupyterHub.concurrent_spawn_limit == 5
    assert c.JupyterHub.db_url == state.db_url and str(state.root) in c.JupyterHub.db_url
    assert c.JupyterHub.tornado_settings["cookie_options"] == {"SameSite": "Lax"}
    assert "admin:server_state!group=students" in next(
        r for r in c.JupyterHub.load_roles if r.get("services") == ["classpage"])["scopes"]
    # the class page's scopes name the students' group; a latecomer joins it (no restart)
    assert c.JupyterHub.load_groups["students"] == {"users": ["minji", "jisoo"]}
    page_env = next(s for s in c.JupyterHub.services if s["name"] == "classpage")["environment"]
    assert page_env["LABKIT_CLASSPAGE_ROSTER_FILE"] == str(state.root / "roster.json")
    culler = next(s for s in c.JupyterHub.services if s["name"] == "idle-culler")
    assert "--timeout=900" in culler["command"] and "--cull-every=60" in culler["command"]
    # activity reaches the hub every 900 / 4 s, not JupyterHub's 300 s (labkit.hub.activity)
    assert c.JupyterHub.last_activity_interval == 225
    assert c.Spawner.environment == {"JUPYTERHUB_ACTIVITY_INTERVAL": "225"}
    assert c.JupyterHub.tornado_settings["slow_spawn_timeout"] == 0
    assert c.JupyterHub.template_paths == [str(Path(__file__).parents[1]
                                               / "labkit" / "hub" / "templates")]
    role = next(r for r in c.JupyterHub.load_roles if r["name"] == "idle-culler")
    assert set(role["scopes"]) == {"list:users", "read:users:activity", "read:servers",
                                   "delete:servers"}
    page = next(s for s in c.JupyterHub.services if s["name"] == "classpage")
    assert page["url"].startswith("http://127.0.0.1:")
    page_role = next(r for r in c.JupyterHub.load_roles if r.get("services") == ["classpage"])
    assert "admin:users" not in page_role["scopes"] and "delete:servers!group=students" in \
        page_role["scopes"]
    assert not any(s.startswith("access:servers") for s in page_role["scopes"])  # issue 23
    assert c.LabkitSpawner.roster_usernames == ["minji", "jisoo"]
    assert c.LabkitSpawner.gpu_policy == "auto"
    json.dumps(c.JupyterHub.services)  # plain data


def test_config_refuses_without_roster_or_teacher(tmp_path: Path) -> None:
    from traitlets.config import Config

    from labkit.hub.config import configure

    state = HubState(tmp_path / "state")
    with pytest.raises(ValueError, match="no roster"):
        configure(Config(), state)
    state.save_roster([Student("minji")])
    with pytest.raises(ValueError, match="no teacher"):
        configure(Config(), state)


def test_serve_patches_check_the_installed_release(monkeypatch: pytest.MonkeyPatch) -> None:
    """issue 14: labkit.serve.server's private patches raise when they no longer apply."""
    from labkit.serve import patching, server

    monkeypatch.setattr(patching, "version", lambda name: "0.6.0" if name == "voila" else "8.10.0")
    with pytest.raises(PatchNotApplicableError, match="voila"):
        server.guard_binary_header_parsing()
    monkeypatch.setattr(patching, "version", lambda name: "9.0.0")
    with pytest.raises(PatchNotApplicableError, match="jupyter_client"):
        server.repoll_kernel_channels()


def test_gpu_environment_gives_roster_students_their_share_and_the_teacher_none(
        sim: SimFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """The spawner's one call into labkit.hub.gpushare, on the simulated lab of $LABKIT_GPU."""
    import json

    from labkit.hub.spawner import gpu_environment

    monkeypatch.setenv("LABKIT_GPU", "sim:2xH100-80GB")
    nv, _ = sim("sim:2xH100-80GB", clock="wall", noise=True, shared=True)
    uuids = [nv.nvmlDeviceGetUUID(nv.nvmlDeviceGetHandleByIndex(i)) for i in range(2)]
    roster = ["minji", "jisoo"]
    assert gpu_environment("jisoo", roster, "whole")["CUDA_VISIBLE_DEVICES"] == uuids[1]
    share = json.loads(gpu_environment("minji", roster, "whole")["LABKIT_GPU_SHARE"])
    assert share["policy"] == "whole"
    assert gpu_environment("kim", roster, "whole") == {}  # the teacher: not on the roster


def test_shutdown_beacon_skips_xsrf_only_from_the_same_origin() -> None:
    """voila#1458: the tab-close beacon has no _xsrf token; only same-origin ones get through."""
    from types import SimpleNamespace

    from voila.shutdown_kernel_handler import VoilaShutdownKernelHandler

    from labkit.hub.singleuser import _same_origin, same_origin_shutdown_beacon

    same_origin_shutdown_beacon()
    same_origin_shutdown_beacon()  # idempotent
    assert VoilaShutdownKernelHandler._labkit_same_origin

    def handler(headers: dict[str, str]) -> Any:
        return SimpleNamespace(request=SimpleNamespace(headers=headers, host="hub:8000"))

    assert _same_origin(handler({"Origin": "http://hub:8000"}))
    assert _same_origin(handler({"Referer": "http://hub:8000/user/a/voila/render/x.ipynb"}))
    assert not _same_origin(handler({"Origin": "http://evil.example"}))
    assert not _same_origin(handler({"Origin": "http://hub:8000.evil.example"}))
    assert not _same_origin(handler({}))
    # the same-origin case returns before jupyter_server's token check
    assert VoilaShutdownKernelHandler.check_xsrf_cookie(handler({"Origin": "http://hub:8000"})) \
        is None


def test_students_jupyterlab_gets_the_same_korean_defaults_as_make_lab() -> None:
    """The students' environment writes make lab's overrides.json: Korean menus, no news."""
    import re

    from labkit.hub.userenv import LAB_OVERRIDES

    makefile = (Path(__file__).resolve().parents[1] / "Makefile").read_text()
    block = re.search(r"@echo ('.*?') *\\?\s*> \$\(VENV\)/share/jupyter/lab/settings/"
                      r"overrides.json", makefile, re.S)
    assert block, "the Makefile's overrides.json line moved"
    echoed = " ".join(re.findall(r"'([^']*)'", block.group(1)))  # what the shell's echo prints
    assert json.loads(LAB_OVERRIDES) == json.loads(echoed)
    assert json.loads(LAB_OVERRIDES)["@jupyterlab/translation-extension:plugin"] == {
        "locale": "ko_KR"}


# --- the teacher's command line ----------------------------------------------------------------


def test_status_and_roster_list_never_create_the_state_dir(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from labkit.hub.__main__ import main

    missing = tmp_path / "never"
    for argv in (["status"], ["status", "--json"], ["roster", "list"]):
        with pytest.raises(SystemExit) as exit_info:
            main(["--state-dir", str(missing), *argv])
        assert "아직 한 번도 시작하지 않았습니다" in str(exit_info.value)
        assert str(missing) in str(exit_info.value)
    assert not missing.exists()


def test_status_and_roster_speak_korean(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    from labkit.hub.__main__ import main

    csv = tmp_path / "class.csv"
    csv.write_text("username,display_name\nminji,김민지\njisoo,\n", encoding="utf-8")
    state = ["--state-dir", str(tmp_path / "state")]
    main([*state, "roster", "import", str(csv)])
    assert "학생 2명의 명단(roster)을 가져왔습니다" in capsys.readouterr().out
    HubState(tmp_path / "state").save_settings(HubSettings(teacher="kim", port=1))
    main([*state, "roster", "list"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("사용자 이름(username)\t")
    pending = "첫 로그인 전(first login pending)"
    assert lines[1:] == [f"minji\t김민지\tjupyter-minji\t학생(student)\t{pending}",
                         f"jisoo\tjisoo\tjupyter-jisoo\t학생(student)\t{pending}",
                         f"kim\tkim\tjupyter-kim\t교사(teacher)\t{pending}"]
    main([*state, "roster", "reset", "minji"])
    code = HubState(tmp_path / "state").accounts.codes()["minji"]
    assert capsys.readouterr().out.strip().startswith(
        f"minji: 비밀번호(password)를 지우고 새 첫 로그인 코드 {code}")
    with pytest.raises(SystemExit, match="stranger은\\(는\\) 명단\\(roster\\)에 없습니다"):
        main([*state, "roster", "reset", "stranger"])
    main([*state, "status"])
    text = capsys.readouterr().out
    # the teacher's role as it is (labkit.hub.config.TEACHER_SCOPES), never "admin"
    teacher_line = next(line for line in text.splitlines() if line.startswith("교사(teacher): kim"))
    assert "학생 서버 시작·중지" in teacher_line and "관리자(admin)가 아니므로" in teacher_line
    assert "관리자 admin" not in text and "교사(teacher, 관리자" not in text
    assert "꺼져 있음(not running)" in text and "유휴 서버 정리(idle culler): 600초" in text
    assert "학생 2명:" in text
    # no English UI words outside the parenthesised technical terms and paths
    words = re.sub(r"\([^)]*\)|\S*/\S*|jupyter-\w+|0o\d+", "", text)
    assert not re.search(r"\b(not|created|yet|students|password set|running)\b", words)
