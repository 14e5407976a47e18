"""The class page's link to the hub (:class:`ClassPage`): users, reports, warm-up, stop."""

from __future__ import annotations

import asyncio
import datetime as _dt
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from labkit.data.roster import RosterEntry, RosterLike
from labkit.hub.classpage.homes import _read_report
from labkit.hub.classpage.render import _MAX_BODY_BYTES, StudentRow, _state, class_rows


class ClassPage:
    """The class page's link to the hub: users, progress reports, stopping a server.

    Parameters
    ----------
    api_url : str
        ``$JUPYTERHUB_API_URL`` (``http://127.0.0.1:8081/hub/api``).
    token : str
        ``$JUPYTERHUB_API_TOKEN``, the service's own token (sent to the hub only).
    roster : sequence of RosterEntry (or any RosterLike)
    admins : sequence of str
    homes : str, optional
        The students' homes (:func:`student_home`'s ``template``).
    roster_file : str, optional
        The hub's saved roster (``roster.json`` of its state): read again whenever it changed,
        so a student imported while the hub runs is on the page at once; ``roster`` until then
        (and without one).
    """

    def __init__(self, api_url: str, token: str, roster: Sequence[RosterLike],
                 admins: Sequence[str], homes: str | None = None,
                 roster_file: str | None = None) -> None:
        self.api_url = api_url.rstrip("/")
        self.token = token
        self.homes = homes
        self.admins = list(admins)
        self._roster = list(roster)
        self._roster_file = Path(roster_file) if roster_file else None
        self._roster_stamp: tuple[int, int] | None = None
        self._client: Any = None
        self._tls: Any = None
        self._warmer: Any = None
        self._warm_task: Any = None

    def _refresh_roster(self) -> None:
        """Read the saved roster again if its file changed (an unreadable one is skipped)."""
        if self._roster_file is None:
            return
        try:
            info = self._roster_file.stat()
            stamp = (info.st_mtime_ns, info.st_size)
            if stamp == self._roster_stamp:
                return
            rows = json.loads(self._roster_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if isinstance(rows, list):
            self._roster = [RosterEntry(str(r["username"]), str(r.get("display_name") or ""))
                            for r in rows if isinstance(r, dict) and r.get("username")]
            self._roster_stamp = stamp

    @property
    def roster(self) -> list[RosterEntry | RosterLike]:
        """The class in roster order (the saved roster as it is now)."""
        self._refresh_roster()
        return list(self._roster)

    @property
    def students(self) -> set[str]:
        """The roster's students (the teacher(s) left out)."""
        return {e.username for e in self.roster} - set(self.admins)

    @property
    def display_names(self) -> dict[str, str]:
        """Each roster name's display name (the username where none)."""
        return {e.username: e.display_name or e.username for e in self.roster}

    async def _fetch(self, url: str, method: str = "GET", timeout_s: float = 10.0) -> Any:
        from tornado.httpclient import AsyncHTTPClient, HTTPRequest

        if not url.startswith(self.api_url + "/"):  # the token goes to the hub, nowhere else
            raise ValueError(f"refusing to send the service token to {url!r}")
        request = HTTPRequest(url, method=method, headers={
            "Authorization": f"token {self.token}", "Accept": "application/json"},
            request_timeout=timeout_s, follow_redirects=False)
        if self._client is None:
            self._client = AsyncHTTPClient(force_instance=True, max_body_size=_MAX_BODY_BYTES)
        response = await self._client.fetch(request)
        return json.loads(response.body) if response.body else None

    async def users(self) -> list[dict[str, Any]]:
        """Return ``GET /users`` (the roster's students, as the service's scopes allow)."""
        found = await self._fetch(f"{self.api_url}/users")
        return [u for u in found or [] if isinstance(u, dict)]

    async def report(self, user: Mapping[str, Any]) -> Mapping[str, Any] | str:
        """Return a student's progress report (results, memory), or the Korean reason it failed.

        Read from the student's home by this service itself (never through the student's
        server, which would receive the service's token).
        """
        state, server = _state(user)
        return await asyncio.to_thread(_read_report, str(user.get("name", "")), server,
                                       self.homes, state == "online")

    async def reports(self) -> tuple[list[dict[str, Any]],
                                     dict[str, Mapping[str, Any] | str]]:
        """Return the students' user models and their reports, read from each home."""
        users = [u for u in await self.users() if u.get("name") in self.students]
        seen = [u for u in users if _state(u)[0] != "never"]
        reports = dict(zip([u["name"] for u in seen],
                           await asyncio.gather(*(self.report(u) for u in seen)), strict=True))
        return users, reports

    async def rows(self) -> list[StudentRow]:
        """Return the table: users from the hub, reports from each student's home."""
        users, reports = await self.reports()
        return class_rows(users, self.roster, reports, self.admins,
                          now=_dt.datetime.now(_dt.UTC))

    async def warm(self, lesson: str | None, until: str | None,
                   page: str | None = None) -> Any:
        """Start "수업 준비" (:class:`labkit.hub.warm.Warmer`) in the background; return its
        status (at once: the warm-up goes on after the request).

        Raises
        ------
        ValueError
            For an unknown lesson or page, or an end time that is not a later ``HH:MM``
            (Korean).
        """
        from labkit.hub import warm

        notebook = warm.lesson_notebook(lesson) if lesson else None
        shown = warm.warm_page(page)
        end = warm.parse_until(until, _dt.datetime.now().astimezone()) if until else None
        if self._warmer is None:
            self._warmer = warm.Warmer(self.api_url, self.token)
        running = self._warmer.status
        if running is not None and running.finished is None:
            return running
        students = [e.username for e in self.roster if e.username in self.students]
        self._warm_task = asyncio.create_task(self._warmer.run(
            students, lesson=notebook, page=shown, until=end,
            spawn_limit=int(os.environ.get("LABKIT_CLASSPAGE_SPAWN_LIMIT", "10")),
            keep_every_s=warm.keep_every_s(
                int(os.environ.get("LABKIT_CLASSPAGE_CULL_TIMEOUT", "600")))))
        await asyncio.sleep(0)
        return self._warmer.status

    def warm_status(self) -> Any:
        """Return the last warm-up's :class:`labkit.hub.warm.WarmStatus` (None before one)."""
        return self._warmer.status if self._warmer is not None else None

    async def stop(self, username: str) -> None:
        """Stop ``username``'s server (``DELETE /users/{name}/server``).

        Raises
        ------
        ValueError
            If ``username`` is not a student of the roster.
        """
        if username not in self.students:
            raise ValueError(f"{username!r} is not a student of this class")
        await self._fetch(f"{self.api_url}/users/{quote(username)}/server", method="DELETE")
