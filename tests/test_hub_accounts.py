"""Accounts the teacher hands out (issue 23): first-login codes, slips, passwords set in the
terminal, ``roster reset``/``remove`` ending every session, the spawner's roster check, and the
roster's errors in Korean (every bad line at once)."""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from labkit.hub.passwords import CODE_ALPHABET, Accounts, PasswordRejected, new_code
from labkit.hub.roster import Student
from labkit.hub.state import HubSettings, HubState


def _state(tmp_path: Path, *names: str, teacher: str = "kim") -> HubState:
    state = HubState(tmp_path / "state")
    state.save_roster([Student(n, f"학생{i}") for i, n in enumerate(names or ("minji", "jisoo"))])
    state.save_settings(HubSettings(teacher=teacher, port=1))
    return state


def _cli(state: HubState, *args: str, stdin: str | None = None,
         monkeypatch: pytest.MonkeyPatch | None = None) -> None:
    from labkit.hub.__main__ import main

    if stdin is not None and monkeypatch is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    main(["--state-dir", str(state.root), *args])


# --- codes and passwords -------------------------------------------------------------------


def test_codes_are_random_unambiguous_and_private(tmp_path: Path) -> None:
    codes = {new_code() for _ in range(200)}
    assert len(codes) == 200  # 40 bits: no repeats in a class
    assert all(len(c) == 9 and c[4] == "-" and set(c) - {"-"} <= set(CODE_ALPHABET)
               for c in codes)
    assert not set(CODE_ALPHABET) & set("01OI")
    accounts = Accounts(HubState(tmp_path / "s").root)
    given = accounts.hand_out(["minji", "jisoo"])
    assert set(given) == {"minji", "jisoo"} and accounts.hand_out(["minji"]) == {}  # once
    assert stat.S_IMODE(accounts.codes_file.stat().st_mode) == 0o600
    assert accounts.check_code("minji", given["minji"].lower())
    assert not accounts.check_code("minji", given["jisoo"]) and not accounts.check_code("x", "")


def test_passwords_are_bcrypt_hashes_with_limits(tmp_path: Path) -> None:
    accounts = Accounts(HubState(tmp_path / "s").root)
    accounts.hand_out(["minji"])
    accounts.set_password("minji", "minji-own-1")
    text = accounts.passwords_file.read_text()
    assert "minji-own-1" not in text and "$2b$" in text
    assert stat.S_IMODE(accounts.passwords_file.stat().st_mode) == 0o600
    assert accounts.check_password("minji", "minji-own-1")
    assert not accounts.check_password("minji", "minji-own-2")
    assert "minji" not in accounts.codes()  # set: the code is gone
    for bad, rule in (("short", "short"), ("가" * 25, "long")):  # 25 x 3 bytes > 72
        with pytest.raises(PasswordRejected) as err:
            accounts.set_password("minji", bad)
        assert err.value.rule == rule
    code = accounts.reset("minji")
    assert not accounts.has_password("minji") and accounts.check_code("minji", code)


# --- the teacher's commands ------------------------------------------------------------------


def test_roster_import_hands_out_codes_and_codes_prints_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = _state(tmp_path)
    csv = tmp_path / "class.csv"
    csv.write_text("username,display_name\nminji,김민지\njisoo,이지수\nkim,김선생\n",
                   encoding="utf-8")
    _cli(state, "roster", "import", str(csv))
    codes = state.accounts.codes()
    assert set(codes) == {"minji", "jisoo"}  # the teacher (kim) never gets a code
    assert "첫 로그인 코드를 새로 만들었습니다" in capsys.readouterr().out
    _cli(state, "roster", "codes", "--csv")
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["\ufeff이름,아이디,첫 로그인 코드", f"김민지,minji,{codes['minji']}",
                     f"이지수,jisoo,{codes['jisoo']}"]
    from jupyterhub import orm

    session = orm.new_session_factory(state.db_url)()
    session.add(orm.User(name="jisoo"))
    session.commit()
    session.close()
    csv.write_text("username,display_name\nminji,김민지\n", encoding="utf-8")
    _cli(state, "roster", "import", str(csv))
    out = capsys.readouterr().out
    assert "jisoo" in out and "로그인할 수 없고" in out  # dropped: said, not silent
    session = orm.new_session_factory(state.db_url)()
    assert orm.User.find(session, "jisoo") is None  # and their hub user (tokens) is gone
    session.close()


def test_roster_slips_is_a_korean_a4_page_with_every_code(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from labkit.hub.slips import slips_html

    names = [f"s{i:02d}" for i in range(12)]
    state = _state(tmp_path, *names)
    state.save_roster([*state.roster()[:-1], Student("s11", "<b>나쁜</b>")])
    codes = state.accounts.hand_out(names)
    out = tmp_path / "slips.html"
    _cli(state, "roster", "slips", str(out), "--url", "http://10.0.0.5:8000/")
    page = out.read_text(encoding="utf-8")
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert '<html lang="ko">' in page and "@page { size: A4" in page
    assert all(page.count(code) == 1 for code in codes.values())
    assert page.count('class="slip"') == 12 and page.count('class="sheet"') == 2  # 10 a page
    for word in ("이름", "아이디", "첫 로그인 코드", "http://10.0.0.5:8000/"):
        assert word in page
    assert "<b>나쁜</b>" not in page and "&lt;b&gt;" in page  # escaped
    assert "<script" not in page and "http" not in page.replace("http://10.0.0.5:8000/", "")
    assert "12명의 로그인 쪽지" in capsys.readouterr().out
    assert slips_html(state.roster(), {}).count('class="slip"') == 0


def test_set_password_reads_standard_input_and_refuses_a_bad_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = _state(tmp_path)
    _cli(state, "roster", "set-password", "kim", stdin="teacher-pass-1\n",
         monkeypatch=monkeypatch)
    assert state.accounts.check_password("kim", "teacher-pass-1")
    _cli(state, "roster", "set-password", "minji", stdin="minji-pass-1\n",
         monkeypatch=monkeypatch)
    assert state.accounts.check_password("minji", "minji-pass-1")
    with pytest.raises(SystemExit, match="8자 이상이어야 합니다"):
        _cli(state, "roster", "set-password", "jisoo", stdin="short\n", monkeypatch=monkeypatch)
    with pytest.raises(SystemExit, match="비밀번호가 없습니다"):
        _cli(state, "roster", "set-password", "jisoo", stdin="", monkeypatch=monkeypatch)
    with pytest.raises(SystemExit, match="명단"):
        _cli(state, "roster", "set-password", "stranger", stdin="x-pass-word\n",
             monkeypatch=monkeypatch)


def test_serve_refuses_to_start_without_the_teachers_password(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from labkit.hub import __main__ as cli

    monkeypatch.setattr(cli.accounts, "require_root", lambda: None)
    started: list[object] = []
    monkeypatch.setattr("labkit.hub.userenv.ensure_user_env", lambda **_k: started.append(1))
    state = _state(tmp_path)
    with pytest.raises(SystemExit, match="비밀번호가 없어 허브를 시작하지 않았습니다"):
        _cli(state, "serve", "--teacher", "kim", stdin="", monkeypatch=monkeypatch)
    assert started == [] and not state.accounts.has_password("kim")
    # its advice works (the trial, under nohup): set-password on standard input, then serve
    _cli(state, "roster", "set-password", "kim", stdin="teacher-pass-1\n",
         monkeypatch=monkeypatch)
    assert state.accounts.check_password("kim", "teacher-pass-1")
    with pytest.raises(SystemExit, match="시스템이 쓰는 이름"):
        _cli(state, "serve", "--teacher", "root", stdin="", monkeypatch=monkeypatch)


def test_reset_gives_a_new_code_and_ends_every_session_of_a_stopped_hub(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from jupyterhub import orm

    state = _state(tmp_path)
    state.accounts.set_password("minji", "claimed-by-a-1")
    session = orm.new_session_factory(state.db_url)()
    user, other = orm.User(name="minji"), orm.User(name="jisoo")
    session.add_all([user, other, orm.OAuthClient(identifier="jupyterhub")])  # tokens' client
    session.commit()
    old_cookie, other_cookie = user.cookie_id, other.cookie_id
    user.new_api_token(note="a's token")
    other.new_api_token(note="b's token")
    session.commit()
    session.close()
    _cli(state, "roster", "reset", "minji")
    assert "새 첫 로그인 코드" in capsys.readouterr().out
    assert not state.accounts.has_password("minji") and "minji" in state.accounts.codes()
    session = orm.new_session_factory(state.db_url)()
    try:
        minji, jisoo = orm.User.find(session, "minji"), orm.User.find(session, "jisoo")
        assert minji.cookie_id != old_cookie and not minji.api_tokens
        assert jisoo.cookie_id == other_cookie and len(jisoo.api_tokens) == 1  # untouched
    finally:
        session.close()
    with pytest.raises(SystemExit, match="set-password"):
        _cli(state, "roster", "reset", "kim")  # the teacher: no code, ever


# --- the roster's errors, every line, in Korean ----------------------------------------------


def test_roster_import_reports_every_bad_line_in_korean(tmp_path: Path) -> None:
    state = _state(tmp_path)
    csv = tmp_path / "class.csv"
    csv.write_text("username,display_name\nminji,김민지\nroot,루트\nKim01,김\nminji,또\n"
                   "daemon2,x,y\nnobody,아무개\n", encoding="utf-8")
    with pytest.raises(SystemExit) as err:
        _cli(state, "roster", "import", str(csv))
    text = str(err.value)
    assert "잘못된 줄이 5개" in text
    said = {int(x.split("번째")[0]): x for x in (y.strip() for y in text.splitlines()[1:])}
    for line, words in ((3, ("root", "시스템이 쓰는 이름")), (4, ("Kim01", "영어 소문자로")),
                        (5, ("minji", "2번째 줄과 겹칩니다")), (6, ("칸이 2개", "3개")),
                        (7, ("nobody", "시스템이 쓰는 이름"))):
        assert all(w in said[line] for w in words), (line, text)
    assert sorted(said) == [3, 4, 5, 6, 7]
    assert "line" not in text and "must" not in text  # no English
    assert [s.username for s in state.roster()] == ["minji", "jisoo"]  # nothing imported


def test_a_name_of_an_existing_system_account_is_refused(tmp_path: Path) -> None:
    import pwd

    from labkit.hub.roster import is_system_account, read_roster

    system = next(e.pw_name for e in pwd.getpwall() if 0 < e.pw_uid < 1000
                  and e.pw_name.islower() and e.pw_name.isalpha()
                  and e.pw_name not in __import__("labkit.data.roster").data.roster.
                  RESERVED_USERNAMES)
    assert is_system_account(system) and not is_system_account("lkno-such-user")
    csv = tmp_path / "class.csv"
    csv.write_text(f"username,display_name\n{system},x\n", encoding="utf-8")
    with pytest.raises(ValueError) as err:
        read_roster(csv)
    from labkit.hub.roster import problem_text

    assert "이미 있는 시스템 계정" in problem_text(err.value)


# --- the spawner's roster check (issue 23, attack 5) -----------------------------------------


def test_the_spawner_refuses_a_user_not_on_the_saved_roster(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tornado import web

    from labkit.hub import spawner as spawner_module
    from labkit.hub.spawner import LabkitSpawner

    state = _state(tmp_path)
    monkeypatch.setenv("LABKIT_HUB_STATE", str(state.root))
    created: list[str] = []
    monkeypatch.setattr(spawner_module.accounts, "ensure_system_user",
                        lambda name, *a, **k: created.append(name))

    def spawner(name: str) -> Any:
        s = LabkitSpawner.__new__(LabkitSpawner)  # no hub around it: only the check runs
        s.user = SimpleNamespace(name=name, admin=False)
        return s

    for name in ("minji", "kim"):
        spawner(name).check_on_roster()  # a student of the roster, the teacher
    state.save_roster([Student("jisoo")])  # minji removed while the hub runs
    import asyncio

    with pytest.raises(web.HTTPError) as err:
        asyncio.run(spawner("minji").start())
    assert err.value.status_code == 403 and "수업 명단(roster)에 없어" in str(err.value.log_message)
    assert created == []  # no account, no home made again
    assert os.environ["LABKIT_HUB_STATE"] == str(state.root)
