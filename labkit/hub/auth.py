"""Accounts on the hub: the roster is the allow-list, the password is set at first login.

:class:`RosterAuthenticator` is jupyterhub-firstuseauthenticator's FirstUseAuthenticator
(https://github.com/jupyterhub/firstuseauthenticator) restricted to the roster:

- only roster usernames (and the teacher) can log in (``allowed_users``; ``create_users =
  False`` keeps it to users the hub already knows);
- a student's first login sets their password (bcrypt hash in the hub's private state
  directory); :func:`reset_password` (``python -m labkit.hub roster reset NAME``) forgets it,
  so the next login sets a new one;
- failed logins slow guessing down, they never lock anyone out (:class:`LoginThrottle`): each
  failure for a username, and each failure from a client address, makes the next try of that
  name or address wait longer (exponential backoff, :func:`backoff_s`, capped at a few
  seconds; ``await asyncio.sleep`` inside :meth:`RosterAuthenticator.authenticate`, never
  blocking the hub's event loop), and the right password is always accepted after the wait.
  So a student who types wrong passwords for a classmate's name cannot lock the classmate out,
  and a class behind one school NAT address is never refused for its neighbours' typos. What
  keeps a guesser's many parallel tries from exhausting the hub is a cap on logins pending at
  once (:data:`MAX_PENDING_PER_ADDRESS` per address, :data:`MAX_PENDING` in all): past it the
  hub answers 429 at once, without checking a password;
- a student taken off the roster (``python -m labkit.hub roster remove``) is refused at once:
  each login reads the saved roster again (:meth:`RosterAuthenticator.on_roster`), and the hub
  deletes such users from its database at its next start (``delete_invalid_users``);
- the teacher lands on the class page after login, students on their own lab
  (:func:`landing_url`, JupyterHub's callable ``default_url``);
- messages in Korean.

FirstUse rather than NativeAuthenticator: the class needs exactly "roster names only, password
set at first login, teacher resets"; NativeAuthenticator adds a sign-up page and an approval
queue the teacher would have to work through for 30 students.
"""

from __future__ import annotations

import asyncio
import dbm
import json
import os
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from firstuseauthenticator import FirstUseAuthenticator
from firstuseauthenticator.firstuseauthenticator import CustomLoginHandler, ResetPasswordHandler
from tornado import web
from traitlets import Bool, Set, Unicode

from labkit.i18n import t

__all__ = ["ADDRESS_BACKOFF", "CLASS_PAGE_URL", "MAX_PENDING", "MAX_PENDING_PER_ADDRESS",
           "USER_BACKOFF", "WINDOW_S", "Backoff", "LoginThrottle", "PendingLogins",
           "RosterAuthenticator", "backoff_s", "landing_url", "reset_password"]


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
        getattr(r, "name", "") == "teacher" for r in getattr(user, "roles", ())))
    return CLASS_PAGE_URL if teacher else ""


class LoginHandler(CustomLoginHandler):  # type: ignore[misc]
    """FirstUse's login handler that also renders JupyterHub's in-form errors (429).

    JupyterHub >= 5 re-renders the login form for an error raised during a form POST, calling
    ``_render(..., sync=True, ...)``; FirstUse 1.1's ``_render`` takes two arguments only and
    the error page comes out empty.
    """

    def _render(self, login_error: str | None = None, username: str | None = None,
                **kwargs: Any) -> Any:
        if self.custom_login_error:
            login_error = self.custom_login_error
        return super(CustomLoginHandler, self)._render(login_error, username, **kwargs)


class RosterAuthenticator(FirstUseAuthenticator):  # type: ignore[misc]
    """FirstUseAuthenticator for the roster, throttled, in Korean (see the module docstring)."""

    #: users the roster no longer lists are deleted from the hub's database at start
    delete_invalid_users = Bool(True, config=True)
    #: the teacher(s): always allowed to log in, though not on the roster and not hub admins
    #: (their own role, labkit.hub.config.teacher_roles)
    teacher_users = Set(Unicode(), config=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.user_throttle = LoginThrottle(USER_BACKOFF)
        self.address_throttle = LoginThrottle(ADDRESS_BACKOFF)
        self.pending = PendingLogins()

    async def authenticate(self, handler: Any, data: dict[str, str]) -> str | None:
        """Wait the backoff, then check the password (or set it at first login).

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
            wait = max(self.user_throttle.delay_s(name), self.address_throttle.delay_s(address))
            if wait:
                await asyncio.sleep(wait)
            return await self._check(handler, data, name, address)

    def on_roster(self, name: str) -> bool:
        """Whether ``name`` may log in: the teacher, or a student of the saved roster.

        The roster is read again from the hub's state (``$LABKIT_HUB_STATE/roster.json``) so a
        removed student is refused without a restart; without a saved roster,
        ``allowed_users`` decides.
        """
        if name in self.admin_users or name in self.teacher_users:
            return True
        if name not in self.allowed_users:
            return False
        state = os.environ.get("LABKIT_HUB_STATE")
        path = Path(state) / "roster.json" if state else None
        if path is None or not path.exists():
            return True
        try:
            rows = json.loads(path.read_text(encoding="utf-8"))
            return any(isinstance(r, dict) and r.get("username") == name for r in rows)
        except (OSError, ValueError):
            return True  # an unreadable roster: allowed_users (the one read at start) holds

    async def _check(self, handler: Any, data: dict[str, str], name: str,
                     address: str) -> str | None:
        if not self.on_roster(name):
            self.address_throttle.failed(address)
            handler.custom_login_error = t("hub.login.not_on_roster")
            return None
        result = await super().authenticate(handler, data)
        if result is None:
            self.user_throttle.failed(name)
            self.address_throttle.failed(address)
            too_short = getattr(handler, "custom_login_error", "")
            handler.custom_login_error = (
                t("hub.login.too_short", n=self.min_password_length)
                if too_short.startswith("Password too short") else t("hub.login.wrong"))
        else:  # the address keeps its count: a guesser's own good login resets nothing
            self.user_throttle.forget(name)
        return result  # type: ignore[no-any-return]

    def get_handlers(self, app: Any) -> list[tuple[str, Any]]:
        """FirstUse's handlers with :class:`LoginHandler` for the login page."""
        return [(r"/login", LoginHandler), (r"/auth/change-password", ResetPasswordHandler)]


def reset_password(dbm_path: Path, username: str) -> bool:
    """Forget ``username``'s password: their next login sets a new one (first use).

    Returns
    -------
    bool
        True if a password was stored.
    """
    try:
        with dbm.open(str(dbm_path), "w") as db:
            key = username.encode("utf8")
            if key in db:
                del db[key]
                return True
    except dbm.error:
        return False
    return False
