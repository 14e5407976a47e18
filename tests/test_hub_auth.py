"""Logging in: handed-out first-login codes (no first-use claims), and the login throttle:
growing waits per username and per address, never a lockout."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace
from typing import Any

import pytest

from labkit.hub.auth import (
    ADDRESS_BACKOFF,
    USER_BACKOFF,
    Backoff,
    LoginQueue,
    LoginThrottle,
    PendingLogins,
    RosterAuthenticator,
    backoff_s,
)


@pytest.mark.parametrize(("failures", "expected"), [
    (0, 0.0), (2, 0.0), (3, 0.5), (4, 1.0), (5, 2.0), (6, 4.0), (7, 5.0), (10**6, 5.0)])
def test_backoff_doubles_after_the_free_tries_up_to_the_cap(failures: int,
                                                            expected: float) -> None:
    # written out by hand: 0.5 s x 2^(n - 3), capped at 5 s
    assert backoff_s(failures, Backoff(free=3, base_s=0.5, cap_s=5.0)) == expected


def test_backoff_refuses_a_negative_count() -> None:
    with pytest.raises(ValueError, match="failures must be >= 0"):
        backoff_s(-1, USER_BACKOFF)


def test_throttle_waits_grow_per_key_and_age_out_of_the_window() -> None:
    now = [0.0]
    throttle = LoginThrottle(Backoff(free=1, base_s=1.0, cap_s=3.0), window_s=60,
                             clock=lambda: now[0])
    assert throttle.delay_s("minji") == 0.0
    waits = []
    for _ in range(4):
        throttle.failed("minji")
        waits.append(throttle.delay_s("minji"))
    assert waits == [1.0, 2.0, 3.0, 3.0]
    assert throttle.delay_s("jisoo") == 0.0  # another name is not slowed
    now[0] = 60.5  # the failures age out
    assert throttle.delay_s("minji") == 0.0
    throttle.failed("minji")
    throttle.forget("minji")
    assert throttle.failures("minji") == 0


def test_pending_logins_are_capped_per_address_and_in_all() -> None:
    pending = PendingLogins(per_address=2, total=3)
    with pending.hold("10.0.0.1") as a1, pending.hold("10.0.0.1") as a2:
        with pending.hold("10.0.0.1") as a3:
            assert (a1, a2, a3) == (True, True, False)
        with pending.hold("10.0.0.2") as b1, pending.hold("10.0.0.3") as c1:
            assert (b1, c1) == (True, False)  # 3 in all
    with pending.hold("10.0.0.1") as again:
        assert again  # places are given back


class _Handler(SimpleNamespace):
    custom_login_error: str = ""
    labkit_first_login: str | None = None


def _authenticator(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[float]]:
    from labkit.hub.roster import Student
    from labkit.hub.state import HubSettings, HubState

    state = HubState(tmp_path / "state")
    state.save_roster([Student("minji"), Student("jisoo")])
    state.save_settings(HubSettings(teacher="kim"))
    auth = RosterAuthenticator(allowed_users={"minji", "jisoo"}, admin_users={"kim"},
                               state_dir=str(state.root))
    slept: list[float] = []
    now = [0.0]
    auth.queue = LoginQueue(clock=lambda: now[0])

    async def sleep(seconds: float) -> None:  # one try after another: the wait passes
        slept.append(seconds)
        now[0] += seconds

    monkeypatch.setattr("labkit.hub.auth.asyncio.sleep", sleep)
    return auth, slept


def _login(auth: Any, name: str, password: str, ip: str = "10.1.1.1",
           handler: Any = None, **more: str) -> Any:
    handler = handler or _Handler(request=SimpleNamespace(remote_ip=ip))
    login = auth.authenticate(handler, {"username": name, "password": password, **more})
    # a thread of its own: in a full run Playwright's sync loop keeps running in the main
    # thread (tests/conftest.py's one chromium), where asyncio.run refuses to start
    with ThreadPoolExecutor(1) as worker:
        return worker.submit(asyncio.run, login).result()


def test_wrong_passwords_for_a_classmate_never_refuse_the_right_one(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    auth, slept = _authenticator(tmp_path, monkeypatch)
    auth.accounts.set_password("jisoo", "jisoo-right-1")  # (roster set-password, or 1st login)
    assert _login(auth, "jisoo", "jisoo-right-1", ip="10.1.1.2") == "jisoo"
    for i in range(10):  # A types wrong passwords for B's name from A's address
        assert _login(auth, "jisoo", f"wrong-{i}-guess") is None
    assert slept == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0, 5.0]  # 3 free, then doubling to the cap
    slept.clear()
    assert _login(auth, "jisoo", "jisoo-right-1", ip="10.1.1.2") == "jisoo"
    assert slept == [USER_BACKOFF.cap_s]  # slowed, never refused
    slept.clear()
    assert _login(auth, "jisoo", "jisoo-right-1") == "jisoo"  # B's counter reset by B
    assert slept == []


def test_a_class_behind_one_address_is_slowed_not_locked_out(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    auth, slept = _authenticator(tmp_path, monkeypatch)
    auth.accounts.set_password("minji", "minji-right-1")
    assert _login(auth, "minji", "minji-right-1") == "minji"
    for i in range(40):  # 40 failures from the school's one NAT address
        _login(auth, "nobody", f"x-{i}")
    assert max(slept) == ADDRESS_BACKOFF.cap_s
    assert _login(auth, "minji", "minji-right-1") == "minji"


def test_the_teacher_lands_on_the_class_page_and_students_where_jupyterhub_sends_them(
        tmp_path: Any) -> None:
    from traitlets.config import Config

    from labkit.hub import config
    from labkit.hub.auth import CLASS_PAGE_URL, landing_url
    from labkit.hub.roster import Student
    from labkit.hub.state import HubState

    def handler(user: object) -> Any:
        return SimpleNamespace(current_user=user)

    assert landing_url(handler(SimpleNamespace(name="kim", admin=True))) == CLASS_PAGE_URL
    teacher_role = SimpleNamespace(name="teacher")  # labkit.hub.config.teacher_roles
    assert landing_url(handler(SimpleNamespace(name="kim", admin=False,
                                               roles=[teacher_role]))) == CLASS_PAGE_URL
    teachers = SimpleNamespace(name="teachers")  # re-created by set-password: the group's role
    assert landing_url(handler(SimpleNamespace(name="kim", admin=False, roles=[],
                                               groups=[teachers]))) == CLASS_PAGE_URL
    assert landing_url(handler(SimpleNamespace(name="minji", admin=False))) == ""  # their lab
    assert landing_url(handler(None)) == ""
    assert CLASS_PAGE_URL == "/services/classpage/"  # the service's name in config
    c = Config()
    config._authenticator(c, HubState(tmp_path / "state"), "kim", [Student("minji")])
    assert c.JupyterHub.default_url is landing_url
    assert RosterAuthenticator.delete_invalid_users.default_value is True


def test_on_roster_reads_the_saved_roster_at_each_login(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from labkit.hub.roster import Student
    from labkit.hub.state import HubState

    auth, _ = _authenticator(tmp_path, monkeypatch)
    state = HubState(auth.state_root)
    auth.accounts.set_password("minji", "minji-right-1")
    assert auth.on_roster("minji") and auth.on_roster("kim")  # the teacher: always
    state.save_roster([Student("jisoo")])  # `roster remove minji`, the hub still running
    assert not auth.on_roster("minji") and auth.on_roster("jisoo")
    assert _login(auth, "minji", "minji-right-1") is None
    assert not auth.on_roster("stranger")
    assert not auth.check_allowed("minji")  # JupyterHub's own allow-list check agrees
    with ThreadPoolExecutor(1) as worker:  # a session or token they still hold: refreshed out
        assert not worker.submit(asyncio.run, auth.refresh_user(SimpleNamespace(name="minji"))
                                 ).result()
        assert worker.submit(asyncio.run, auth.refresh_user(SimpleNamespace(name="jisoo"))
                             ).result()


# --- accounts the teacher hands out (issue 23, attack 1) ---------------------------------------


def test_nobody_claims_a_student_account_by_logging_in_first(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    auth, _ = _authenticator(tmp_path, monkeypatch)
    auth.accounts.hand_out(["jisoo"])
    for typed in ("my-new-pass-1", "", "jisoo"):  # A, as B who has not logged in yet
        handler = _Handler(request=SimpleNamespace(remote_ip="10.1.1.1"))
        assert _login(auth, "jisoo", typed, handler=handler, new_password="a-pass-by-a-1",
                      new_password2="a-pass-by-a-1") is None
        assert handler.labkit_first_login is None and "맞지 않습니다" in handler.custom_login_error
    assert not auth.accounts.has_password("jisoo")  # nothing was set: the code still waits
    assert auth.user_throttle.failures("jisoo") == 3  # a wrong code is a wrong login


def test_the_teacher_is_never_first_use(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    auth, _ = _authenticator(tmp_path, monkeypatch)
    for typed in ("teacher-pass-1", ""):
        assert _login(auth, "kim", typed, new_password="teacher-pass-1",
                      new_password2="teacher-pass-1") is None
    assert not auth.accounts.has_password("kim") and "kim" not in auth.accounts.codes()
    auth.accounts.set_password("kim", "teacher-pass-1")  # `make hub` asks in the terminal
    assert _login(auth, "kim", "teacher-pass-1") == "kim"


def test_a_first_login_takes_the_code_then_the_students_own_password(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    auth, _ = _authenticator(tmp_path, monkeypatch)
    code = auth.accounts.hand_out(["minji", "jisoo"])["minji"]
    assert len(code) == 9 and code[4] == "-"
    ask = _Handler(request=SimpleNamespace(remote_ip="10.1.1.1"))
    assert _login(auth, "minji", code.lower().replace("-", " "), handler=ask) is None
    assert ask.labkit_first_login == "minji"  # the right code: the password page, no login yet
    for new, again, rule in (("short", "short", "짧습니다"), ("minji-own-1", "minji-own-2",
                                                          "다릅니다")):
        retry = _Handler(request=SimpleNamespace(remote_ip="10.1.1.1"))
        assert _login(auth, "minji", code, handler=retry, new_password=new,
                      new_password2=again) is None
        assert retry.labkit_first_login == "minji" and rule in retry.custom_login_error
    assert _login(auth, "minji", code, new_password="minji-own-1",
                  new_password2="minji-own-1") == "minji"
    assert "minji" not in auth.accounts.codes() and "jisoo" in auth.accounts.codes()
    assert _login(auth, "minji", code) is None  # the code is spent
    assert _login(auth, "minji", "minji-own-1") == "minji"


def test_a_student_imported_while_the_hub_runs_can_log_in_at_once(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from labkit.hub.roster import Student
    from labkit.hub.state import HubState

    auth, _ = _authenticator(tmp_path, monkeypatch)  # allowed_users: minji, jisoo (at start)
    HubState(auth.state_root).save_roster([Student("minji"), Student("jisoo"), Student("jun")])
    code = auth.accounts.hand_out(["jun"])["jun"]
    assert auth.check_allowed("jun")
    assert _login(auth, "jun", code, new_password="jun-own-pass",
                  new_password2="jun-own-pass") == "jun"


def test_tries_sent_at_once_from_one_address_take_their_turns(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The trial: 60 wrong passwords at a time for the teacher's name, 240 in 31 s, never a 429.
    Tries that arrive together now start their checks one wait apart (the oracle: the sorted
    start times, each wait after the last, never closer than the backoff's cap)."""
    auth, _ = _authenticator(tmp_path, monkeypatch)
    auth.accounts.set_password("kim", "kim-right-pass")
    for i in range(8):  # past the free tries: each next try of kim's name owes the cap
        assert _login(auth, "kim", f"wrong-{i}") is None
    assert auth.user_throttle.delay_s("kim") == USER_BACKOFF.cap_s
    waits: list[float] = []

    async def sleep(seconds: float) -> None:  # all arrive at the same moment: no time passes
        waits.append(seconds)

    monkeypatch.setattr("labkit.hub.auth.asyncio.sleep", sleep)

    async def burst() -> list[Any]:
        handler = _Handler(request=SimpleNamespace(remote_ip="10.1.1.1"))
        return await asyncio.gather(*(auth.authenticate(
            handler, {"username": "kim", "password": f"guess-{i}"}) for i in range(20)))

    with ThreadPoolExecutor(1) as worker:
        results = worker.submit(asyncio.run, burst()).result()
    assert results == [None] * 20
    starts = sorted(waits)
    gaps = [b - a for a, b in zip([0.0, *starts], starts, strict=False)]
    assert len(starts) == 20 and min(gaps) >= USER_BACKOFF.cap_s
    # another address is not queued behind it: the name's own wait only
    waits.clear()
    assert _login(auth, "kim", "kim-right-pass", ip="10.1.1.9") == "kim"
    assert waits == [USER_BACKOFF.cap_s]
