"""Accounts on the hub: the roster is the allow-list, the password is set at first login.

:class:`RosterAuthenticator` is jupyterhub-firstuseauthenticator's FirstUseAuthenticator
(https://github.com/jupyterhub/firstuseauthenticator) restricted to the roster:

- only roster usernames (and the teacher) can log in (``allowed_users``; ``create_users =
  False`` keeps it to users the hub already knows);
- a student's first login sets their password (bcrypt hash in the hub's private state
  directory); :func:`reset_password` (``python -m labkit.hub roster reset NAME``) forgets it,
  so the next login sets a new one;
- failed logins are rate-limited (:class:`LoginThrottle`): past :data:`MAX_FAILURES` for one
  username, or :data:`MAX_FAILURES_PER_ADDRESS` from one client address, in :data:`WINDOW_S`
  the hub answers 429 (a school's PCs often share one address behind NAT, hence the higher
  per-address count);
- messages in Korean.

FirstUse rather than NativeAuthenticator: the class needs exactly "roster names only, password
set at first login, teacher resets"; NativeAuthenticator adds a sign-up page and an approval
queue the teacher would have to work through for 30 students.
"""

from __future__ import annotations

import dbm
import time
from collections import deque
from pathlib import Path
from typing import Any

from firstuseauthenticator import FirstUseAuthenticator
from firstuseauthenticator.firstuseauthenticator import CustomLoginHandler, ResetPasswordHandler
from tornado import web

from labkit.i18n import t

__all__ = ["MAX_FAILURES", "MAX_FAILURES_PER_ADDRESS", "WINDOW_S", "LoginThrottle",
           "RosterAuthenticator", "reset_password"]

#: Failed logins allowed per username or client address in :data:`WINDOW_S` (the OWASP
#: authentication cheat sheet's "account lockout" advice: a few attempts, a short lockout).
MAX_FAILURES = 5
MAX_FAILURES_PER_ADDRESS = 30
WINDOW_S = 60.0


class LoginThrottle:
    """Failed-login counter over a sliding window (clock injected for tests)."""

    def __init__(self, max_failures: int = MAX_FAILURES, window_s: float = WINDOW_S,
                 clock: Any = time.monotonic) -> None:
        self.max_failures, self.window_s, self.clock = max_failures, window_s, clock
        self._failures: dict[str, deque[float]] = {}

    def _recent(self, key: str) -> deque[float]:
        times = self._failures.setdefault(key, deque())
        cutoff = self.clock() - self.window_s
        while times and times[0] < cutoff:
            times.popleft()
        return times

    def blocked(self, *keys: str) -> bool:
        """Return True if any key has :attr:`max_failures` failures in the window."""
        return any(len(self._recent(k)) >= self.max_failures for k in keys)

    def failed(self, *keys: str) -> None:
        """Record one failure for each key."""
        now = self.clock()
        for key in keys:
            self._recent(key).append(now)


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

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.user_throttle = LoginThrottle(MAX_FAILURES)
        self.address_throttle = LoginThrottle(MAX_FAILURES_PER_ADDRESS)

    async def authenticate(self, handler: Any, data: dict[str, str]) -> str | None:
        """Check the password (or set it at first login); 429 after too many failures."""
        name = self.normalize_username(str(data.get("username", "")))
        address = str(handler.request.remote_ip)
        if self.user_throttle.blocked(name) or self.address_throttle.blocked(address):
            raise web.HTTPError(429, t("hub.error.429"), reason="Too Many Requests")
        if name not in self.allowed_users and name not in self.admin_users:
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
