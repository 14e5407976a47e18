"""Logging in to the hub: roster names only, accounts handed out by the teacher.

:class:`RosterAuthenticator` is a JupyterHub ``Authenticator`` over the hub's own password
store (:mod:`labkit.hub.passwords`):

- only the teacher and the students of the saved roster can log in, read again at every login
  (:meth:`RosterAuthenticator.on_roster`): a student imported while the hub runs logs in at
  once, a student removed is refused at once (and :meth:`refresh_user` ends what they still
  hold at the hub's next check);
- nobody claims an account by coming first. A student's first login takes the one-time
  first-login code from the teacher's slip (``roster codes`` / ``roster slips``), then a
  Korean page asks for the student's own password (twice; :data:`~labkit.hub.passwords.
  MIN_PASSWORD` characters or more) and only then logs them in; the code is then gone. The
  teacher has no code: their password is set in the terminal (``make hub``, ``roster
  set-password``) before the hub accepts any login;
- a wrong password and a wrong code are the same wrong login, and failed logins slow guessing
  down, they never lock anyone out (:class:`LoginThrottle`): each failure for a username, and
  each failure from a client address, makes the next try of that name or address wait longer
  (exponential backoff, :func:`backoff_s`, capped at a few seconds; ``await asyncio.sleep``
  inside :meth:`RosterAuthenticator.authenticate`, never blocking the hub's event loop), and
  the right password is always accepted after the wait; tries from one address that owe a
  wait take their turns (:class:`LoginQueue`), so sending many at once is no faster. So a
  student who types wrong passwords for a classmate's name cannot lock the classmate out, and
  a class behind one school NAT address is never refused for its neighbours' typos. What
  keeps a guesser's many parallel tries from exhausting the hub is a cap on logins pending at
  once
  (:data:`MAX_PENDING_PER_ADDRESS` per address, :data:`MAX_PENDING` in all): past it the hub
  answers 429 at once, without checking a password;
- the teacher lands on the class page after login, students on their own lab
  (:func:`landing_url`, JupyterHub's callable ``default_url``);
- messages in Korean.

Not FirstUseAuthenticator (which this module wrapped before): there the first person to type
a name sets its password, the teacher's included (issue 23, attack 1).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jupyterhub.auth import Authenticator
from jupyterhub.handlers.login import LoginHandler as HubLoginHandler
from tornado import web
from traitlets import Bool, Set, Unicode

from labkit.hub.passwords import (
    MAX_PASSWORD_BYTES,
    MIN_PASSWORD,
    Accounts,
    PasswordRejected,
    check_new_password,
)
from labkit.i18n import t

__all__ = ["ADDRESS_BACKOFF", "CLASS_PAGE_URL", "MAX_PENDING", "MAX_PENDING_PER_ADDRESS",
           "USER_BACKOFF", "WINDOW_S", "Backoff", "LoginHandler", "LoginQueue", "LoginThrottle",
           "PendingLogins", "RosterAuthenticator", "backoff_s", "landing_url"]


@dataclass(frozen=True)
class Backoff:
    """An exponential backoff: ``free`` failures cost nothing, then ``base_s`` doubling to
    ``cap_s``.

    Attributes
    ----------
    free : int
        Failures in the window before any wait (typos). [count]
    base_s : float
        The first wait. [s]
    cap_s : float
        The longest wait: a correct password is never kept waiting longer. [s]
    """

    free: int
    base_s: float
    cap_s: float


#: Per username: 3 typos free, then 0.5, 1, 2, 4, 5, 5 ... s (OWASP Authentication Cheat Sheet,
#: "Account Lockout": prefer an increasing delay to a lockout an attacker can trigger for
#: someone else; NIST SP 800-63B 5.2.2 "Rate Limiting": at most 100 failures per account
#: without a lock -- 5 s per try stays far under that in a school day's guessing).
USER_BACKOFF = Backoff(free=3, base_s=0.5, cap_s=5.0)
#: Per client address: a class behind one NAT address types many wrong passwords (30 students
#: x a few typos), so 20 free, then 0.25 s doubling to 5 s.
ADDRESS_BACKOFF = Backoff(free=20, base_s=0.25, cap_s=5.0)
#: Failures are forgotten after this long (sliding window). [s]
WINDOW_S = 600.0
#: Logins being checked or waiting at once, per client address and in all. Past them the hub
#: answers 429 at once (the only refusal; a class of 40 logging in together behind one NAT
#: address stays well under it).
MAX_PENDING_PER_ADDRESS = 64
MAX_PENDING = 256


def backoff_s(failures: int, backoff: Backoff) -> float:
    """Return the wait before the next try after ``failures`` recent failures.

    >>> [backoff_s(n, Backoff(free=3, base_s=0.5, cap_s=5.0)) for n in range(8)]
    [0.0, 0.0, 0.0, 0.5, 1.0, 2.0, 4.0, 5.0]

    Raises
    ------
    ValueError
        If ``failures`` < 0.
    """
    if failures < 0:
        raise ValueError(f"failures must be >= 0, got {failures!r}")
    if failures < backoff.free:
        return 0.0
    return float(min(backoff.cap_s, backoff.base_s * 2.0 ** min(failures - backoff.free, 32)))


class LoginThrottle:
    """Failed logins per key over a sliding window, and the wait they cost (clock injected).

    Parameters
    ----------
    backoff : Backoff
    window_s : float
        Failures older than this are forgotten. [s]
    clock : callable
        Monotonic seconds (default :func:`time.monotonic`).
    """

    def __init__(self, backoff: Backoff, window_s: float = WINDOW_S,
                 clock: Any = time.monotonic) -> None:
        self.backoff, self.window_s, self.clock = backoff, window_s, clock
        self._failures: dict[str, deque[float]] = {}

    def _recent(self, key: str) -> deque[float]:
        times = self._failures.setdefault(key, deque())
        cutoff = self.clock() - self.window_s
        while times and times[0] < cutoff:
            times.popleft()
        return times

    def failures(self, key: str) -> int:
        """Return the failures of ``key`` in the window."""
        count = len(self._recent(key))
        if not count:
            self._failures.pop(key, None)  # memory stays bounded by recent keys
        return count

    def delay_s(self, key: str) -> float:
        """Return how long the next try of ``key`` waits. [s]"""
        return backoff_s(self.failures(key), self.backoff)

    def failed(self, key: str) -> None:
        """Record one failure of ``key``."""
        times = self._recent(key)
        times.append(self.clock())
        if len(times) > 1000:  # far past the cap: older ones change nothing
            times.popleft()

    def forget(self, key: str) -> None:
        """Forget ``key``'s failures (its owner logged in)."""
        self._failures.pop(key, None)


class LoginQueue:
    """Tries from one client address that owe a wait, one after another (clock injected).

    :class:`LoginThrottle`'s wait is read when a try arrives, so tries sent at once all read
    the same count and wait the same few seconds in parallel: 60 at a time made 240 wrong
    passwords for one name in 31 s, ~8 a second (the trial). Here each try that owes a wait
    starts its check ``delay`` after the one before it from the same address starts, so an
    address's guesses come no faster than one per wait however many it sends at once. A try
    that owes nothing (a class behind one address, few failures) is not queued at all, and
    another address is never queued behind this one.

    Parameters
    ----------
    clock : callable
        Monotonic seconds (default :func:`time.monotonic`).
    """

    def __init__(self, clock: Any = time.monotonic) -> None:
        self.clock = clock
        self._last_start: dict[str, float] = {}

    def reserve(self, address: str, delay: float) -> float:
        """Return how long this try waits before its check [s]: ``delay`` after now and after
        the last reserved start of ``address``; 0 when ``delay`` is 0."""
        if delay <= 0:
            return 0.0
        now = self.clock()
        if len(self._last_start) > 4096:  # only starts still ahead of now matter
            self._last_start = {k: v for k, v in self._last_start.items() if v > now}
        start = max(now, self._last_start.get(address, now)) + delay
        self._last_start[address] = start
        return start - now


class PendingLogins:
    """Logins in progress, per client address and in all (the cap on parallel guessing)."""

    def __init__(self, per_address: int = MAX_PENDING_PER_ADDRESS,
                 total: int = MAX_PENDING) -> None:
        self.per_address, self.total = per_address, total
        self._by_address: dict[str, int] = {}

    @contextmanager
    def hold(self, address: str) -> Iterator[bool]:
        """Yield True while ``address`` holds one of the places, False if none is free."""
        if (self._by_address.get(address, 0) >= self.per_address
                or sum(self._by_address.values()) >= self.total):
            yield False
            return
        self._by_address[address] = self._by_address.get(address, 0) + 1
        try:
            yield True
        finally:
            left = self._by_address[address] - 1
            if left:
                self._by_address[address] = left
            else:
                del self._by_address[address]


#: Where the teacher lands: the class page service (:mod:`labkit.hub.classpage`).
CLASS_PAGE_URL = "/services/classpage/"


def landing_url(handler: Any) -> str:
    """Return the teacher's landing page, or "" (JupyterHub's default: the student's own lab).

    For ``c.JupyterHub.default_url``: JupyterHub calls it with the request handler after login
    and at ``/hub/``, and takes an empty answer as "the usual place" (the user's server).
    """
    user = getattr(handler, "current_user", None)
    teacher = user is not None and (getattr(user, "admin", False) or any(
        getattr(r, "name", "") == "teacher" for r in getattr(user, "roles", ())) or any(
        getattr(g, "name", "") == "teachers" for g in getattr(user, "groups", ())))
    return CLASS_PAGE_URL if teacher else ""


class LoginHandler(HubLoginHandler):  # type: ignore[misc]
    """JupyterHub's login handler with the first-login step and labkit's Korean errors.

    A right first-login code without a new password yet renders ``first_login.html`` (the
    student chooses their password there, the form posts the code again with it); any other
    failed login re-renders the login form with the authenticator's Korean reason, as 403.
    """

    async def post(self) -> None:
        """Log in (JupyterHub's ``LoginHandler.post``), or ask a first login's password."""
        data = {arg: self.get_argument(arg, strip=arg == "username")
                for arg in self.request.body_arguments if arg != "_xsrf"}
        user = await self.login_user(data)
        if user:
            self._jupyterhub_user = user
            self.redirect(self.get_next_url(user))
            return
        name = str(data.get("username", ""))[:32]
        first = getattr(self, "labkit_first_login", None)
        if first is not None:
            self.finish(await self.render_template(
                "first_login.html", username=first, code=data.get("password", ""),
                login_error=getattr(self, "custom_login_error", ""),
                next=self.get_argument("next", default=""), xsrf=self.xsrf_token.decode("ascii"),
                authenticator_login_url=self.authenticator.login_url(self.hub.base_url)))
            return
        self.set_status(403)
        self.finish(await self._render(
            login_error=getattr(self, "custom_login_error", "") or t("hub.login.wrong"),
            username=name))


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


class RosterAuthenticator(Authenticator):  # type: ignore[misc]
    """Roster names, handed-out first-login codes, throttled, in Korean (module docstring)."""

    #: users the roster no longer lists are deleted from the hub's database at start
    delete_invalid_users = Bool(True, config=True)
    state_dir = Unicode(help="the hub's private state (roster, passwords, codes); "
                             "default $LABKIT_HUB_STATE").tag(config=True)
    #: the teacher(s): always allowed to log in, though not on the roster and not hub admins
    #: (their own role, labkit.hub.config.teacher_roles)
    teacher_users = Set(Unicode(), config=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.user_throttle = LoginThrottle(USER_BACKOFF)
        self.address_throttle = LoginThrottle(ADDRESS_BACKOFF)
        self.pending = PendingLogins()
        self.queue = LoginQueue()

    @property
    def state_root(self) -> Path | None:
        """The state directory, or None (then ``allowed_users`` alone decides)."""
        where = self.state_dir or os.environ.get("LABKIT_HUB_STATE", "")
        return Path(where) if where else None

    @property
    def accounts(self) -> Accounts:
        """The password and first-login code store.

        Raises
        ------
        RuntimeError
            If no state directory is configured.
        """
        if self.state_root is None:
            raise RuntimeError("RosterAuthenticator needs state_dir (or $LABKIT_HUB_STATE)")
        return Accounts(self.state_root)

    def teachers(self) -> set[str]:
        """The teacher (``admin_users``, ``teacher_users`` and the saved settings' teacher)."""
        found = set(self.admin_users) | set(self.teacher_users)
        root = self.state_root
        settings = _read_json(root / "settings.json") if root else None
        if isinstance(settings, dict) and settings.get("teacher"):
            found.add(str(settings["teacher"]))
        return found

    async def authenticate(self, handler: Any, data: dict[str, str]) -> str | None:
        """Wait the backoff, then check the password or the first-login code.

        Raises
        ------
        tornado.web.HTTPError
            429 only when too many logins from this address (or in all) are pending at once.
        """
        name = self.normalize_username(str(data.get("username", "")))
        address = str(handler.request.remote_ip)
        with self.pending.hold(address) as placed:
            if not placed:
                raise web.HTTPError(429, t("hub.error.429"), reason="Too Many Requests")
            wait = self.queue.reserve(address, max(self.user_throttle.delay_s(name),
                                                   self.address_throttle.delay_s(address)))
            if wait:
                await asyncio.sleep(wait)
            return await self._check(handler, data, name, address)

    def on_roster(self, name: str) -> bool:
        """Whether ``name`` may log in or hold a session: the teacher, or a saved roster name.

        The roster is read again from the hub's state (``roster.json``) so a student imported
        or removed while the hub runs counts at once; without a saved roster (or an unreadable
        one), ``allowed_users`` decides.
        """
        if name in self.teachers():
            return True
        root = self.state_root
        rows = _read_json(root / "roster.json") if root else None
        if not isinstance(rows, list):
            return name in self.allowed_users
        return any(isinstance(r, dict) and r.get("username") == name for r in rows)

    def check_allowed(self, username: str, authentication: Any = None) -> bool:
        """JupyterHub's allow-list check, read from the saved roster (:meth:`on_roster`)."""
        return self.on_roster(username)

    async def refresh_user(self, user: Any, handler: Any = None) -> bool:
        """Refuse a session or token of a user who is no longer on the roster."""
        return self.on_roster(str(user.name))

    def _fail(self, handler: Any, name: str, address: str, key: str = "hub.login.wrong") -> None:
        self.user_throttle.failed(name)
        self.address_throttle.failed(address)
        handler.custom_login_error = t(key)

    async def _check(self, handler: Any, data: dict[str, str], name: str,
                     address: str) -> str | None:
        if not self.on_roster(name):
            self.address_throttle.failed(address)
            handler.custom_login_error = t("hub.login.not_on_roster")
            return None
        accounts = self.accounts
        typed = str(data.get("password", ""))
        if accounts.has_password(name):
            if await asyncio.to_thread(accounts.check_password, name, typed):
                self.user_throttle.forget(name)  # the address keeps its count
                return name
            self._fail(handler, name, address)
            return None
        if name in self.teachers() or not accounts.check_code(name, typed):
            self._fail(handler, name, address)  # the teacher has no first-use login, ever
            return None
        handler.labkit_first_login = name  # the right code: the password page
        new = data.get("new_password")
        if new is None:
            return None
        try:
            check_new_password(new, data.get("new_password2", ""))
        except PasswordRejected as err:
            limits = {"short": {"n": MIN_PASSWORD}, "long": {"max": MAX_PASSWORD_BYTES}}
            handler.custom_login_error = t(f"hub.first_login.{err.rule}",
                                           **limits.get(err.rule, {}))
            return None
        await asyncio.to_thread(accounts.set_password, name, new)
        self.user_throttle.forget(name)
        handler.labkit_first_login = None
        return name

    def get_handlers(self, app: Any) -> list[tuple[str, Any]]:
        """The login page: :class:`LoginHandler`."""
        return [(r"/login", LoginHandler)]
