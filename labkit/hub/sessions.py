"""End every session and token of one hub user at once, whether the hub runs or not.

What a JupyterHub user holds (``jupyterhub.orm``, JupyterHub 6.1): the login cookie names the
user's ``cookie_id``; API tokens, the OAuth access tokens their servers' cookies carry and
pending OAuth codes are ``APIToken`` and ``OAuthCode`` rows of the user. ``roster reset``,
``roster set-password`` and ``roster remove`` end all of them:

- **hub running**: through the Hub's REST API with the teacher's commands' own service token
  (``labkit-roster``, :func:`service_spec`; the token lives only in the state directory):
  ``DELETE /users/NAME`` stops their server and deletes the user with every token, OAuth code
  and share (database cascade), and for a reset ``POST /users/NAME`` creates them again with a
  new ``cookie_id``. The running hub keeps its users' ORM objects in memory, so the database
  is never edited under it.
- **hub stopped**: in its sqlite database directly: a new ``cookie_id``
  (``jupyterhub.orm.new_token``, what the column defaults to), the user's ``APIToken`` and
  ``OAuthCode`` rows deleted; for a removal, the user row itself (cascading to the rest).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from labkit.hub.state import HubState

__all__ = ["SERVICE", "HubUnreachable", "end_sessions", "hub_api_url", "hub_is_running",
           "join_students", "service_spec"]

#: The JupyterHub service the teacher's commands act as on a running hub.
SERVICE = "labkit-roster"
#: What it may do: create and delete users (their servers are stopped on the way).
SCOPES = ["admin:users", "admin:servers",
          # the teacher, re-created by set-password, back in their group at once
          "groups!group=teachers",
          # a student imported while the hub runs: in the class page's group at once
          "groups!group=students"]


class HubUnreachable(RuntimeError):
    """The running hub did not do what was asked (it predates the service, or it failed)."""


def service_spec(state: HubState) -> tuple[dict[str, Any], dict[str, Any]]:
    """Return the ``services`` entry and the ``load_roles`` role of the teacher's commands."""
    return ({"name": SERVICE, "api_token": state.roster_api_token(), "display": False},
            {"name": SERVICE, "scopes": list(SCOPES), "services": [SERVICE]})


def hub_api_url(state: HubState) -> str | None:
    """The Hub's own API on loopback (``ports.json``'s ``hub`` port), or None before a start."""
    port = state.ports().get("hub")
    return f"http://127.0.0.1:{port}/hub/api" if port else None


def hub_is_running(state: HubState) -> bool:
    """Whether this state's hub answers its Hub API (``/hub/health`` on the Hub's port)."""
    api = hub_api_url(state)
    if api is None:
        return False
    try:
        with urllib.request.urlopen(api.removesuffix("/api") + "/health", timeout=3) as reply:
            return bool(reply.status == 200)
    except OSError:
        return False


def _call(state: HubState, method: str, path: str, body: dict[str, Any] | None = None) -> int:
    """Call the running Hub's REST API as :data:`SERVICE`; return the HTTP status."""
    api = hub_api_url(state)
    if api is None:
        raise HubUnreachable("no Hub port recorded")
    request = urllib.request.Request(
        f"{api}/{path}", method=method, data=json.dumps(body).encode() if body is not None
        else None, headers={"Authorization": f"token {state.roster_api_token()}",
                            "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=120) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as err:
        return int(err.code)
    except OSError as err:
        raise HubUnreachable(str(err)) from err


def _through_api(state: HubState, name: str, remove: bool) -> None:
    status = _call(state, "DELETE", f"users/{name}")
    if status == 400:  # "in the process of stopping": once more, after the stop
        import time

        time.sleep(5)
        status = _call(state, "DELETE", f"users/{name}")
    if status not in (204, 404):
        raise HubUnreachable(f"DELETE /users/{name}: HTTP {status}")
    if not remove:
        status = _call(state, "POST", f"users/{name}")
        if status not in (201, 409):
            raise HubUnreachable(f"POST /users/{name}: HTTP {status}")
        # the user is new to the hub: back in their group (the teacher's role comes with
        # theirs; a student's group is what the class page's scopes name, so without it 수업
        # 준비 and the class page's stop were refused after a password reset, trial 24c)
        from labkit.hub.config import TEACHER_GROUP
        from labkit.hub.roster import STUDENTS_GROUP

        group = None
        if name == state.settings().teacher:
            group = TEACHER_GROUP
        elif name in {s.username for s in state.roster()}:
            group = STUDENTS_GROUP
        if group is not None:
            status = _call(state, "POST", f"groups/{group}/users", {"users": [name]})
            if status != 200:
                raise HubUnreachable(f"POST /groups/{group}/users: HTTP {status}")


def _in_database(state: HubState, name: str, remove: bool) -> bool:
    from jupyterhub import orm

    if not (state.root / "jupyterhub.sqlite").exists():
        return False
    session = orm.new_session_factory(state.db_url)()
    try:
        user = orm.User.find(session, name)
        if user is None:
            return False
        if remove:
            session.delete(user)
        else:
            user.cookie_id = orm.new_token()
            session.query(orm.APIToken).filter(orm.APIToken.user_id == user.id).delete()
            session.query(orm.OAuthCode).filter(orm.OAuthCode.user_id == user.id).delete()
        session.commit()
    finally:
        session.close()
    return True


def end_sessions(state: HubState, name: str, *, remove: bool = False) -> str:
    """End every login and token of hub user ``name`` (and delete the user if ``remove``).

    Returns
    -------
    str
        "api" (the running hub did it), "database" (the stopped hub's database was changed)
        or "none" (the hub has no such user).

    Raises
    ------
    HubUnreachable
        If the hub runs but refused or failed the request (then nothing is changed under it:
        a restart ends the sessions, ``delete_invalid_users`` removes a removed user).
    """
    if hub_is_running(state):
        _through_api(state, name, remove)
        return "api"
    return "database" if _in_database(state, name, remove) else "none"


def join_students(state: HubState, names: list[str]) -> bool:
    """Create the hub users ``names`` on a running hub and put them in the students' group.

    A student imported while the hub runs is then on the teacher's class page at once (its
    scopes name the group, :data:`labkit.hub.roster.STUDENTS_GROUP`), before their first
    login. Returns False when the hub is not running (its next start's ``load_groups`` does
    it).

    Raises
    ------
    HubUnreachable
        If the running hub refused or failed a request.
    """
    from labkit.hub.roster import STUDENTS_GROUP

    if not names or not hub_is_running(state):
        return False
    for name in names:
        status = _call(state, "POST", f"users/{name}")
        if status not in (201, 409):  # 409: the hub has them already
            raise HubUnreachable(f"POST /users/{name}: HTTP {status}")
    status = _call(state, "POST", f"groups/{STUDENTS_GROUP}/users", {"users": list(names)})
    if status != 200:
        raise HubUnreachable(f"POST /groups/{STUDENTS_GROUP}/users: HTTP {status}")
    return True
