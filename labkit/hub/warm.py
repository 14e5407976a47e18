"""Ready before the bell: every roster student's server started before the class (수업 준비).

The teacher presses "수업 준비" on the class page, or runs ``python -m labkit.hub warm [--lesson 03]
[--page app|lab] [--until HH:MM]``; the class page service (:mod:`labkit.hub.classpage`, whose
token the hub scopes to the roster's students) does the work, so a student's login at the bell
waits only for the login itself:

- each student's server is started through the hub's REST API (``POST /users/{name}/server``),
  at most :func:`pace` at once: the hub's ``concurrent_spawn_limit``, and no more than the
  machine's cores (a starting server keeps about one core busy; on a 2-core school server more
  at once only makes each slower). A student whose server already runs is left as it is.
- with a lesson, the server is started with it and the page the class will open as its user
  options (``{"lesson": "03_goodput.ipynb", "page": "app"}``;
  :class:`labkit.hub.spawner.LabkitSpawner` accepts only a lesson notebook's name and a page of
  :data:`labkit.hub.preheat.WARM_PAGES` and passes them as ``$LABKIT_WARM_LESSON`` and
  ``$LABKIT_WARM_PAGE``), and the student's own server prepares that page itself
  (:mod:`labkit.hub.preheat`): the lesson's voila app rendered once for the student's first
  request, or one notebook session whose first cell has run, which JupyterLab picks up. A
  server that already runs is left as it is, not preheated.
- nothing here ever calls a student's server: the class page's token may act for every student
  on the roster, and a student's server is a process the student controls (issue 23). Only the
  hub's REST API is called, "ready" included.
- the idle culler leaves warmed servers alone until the period's end: their activity is
  reported to the hub (``POST /users/{name}/activity``) until the teacher's end time (``--until``),
  or, without one, once at the end of the warm-up, so the culler's timeout counts from then.

:class:`Warmer` does it; :class:`WarmStatus` is what the page and the command show (Korean,
:meth:`WarmStatus.lines`).

References
----------
.. [1] JupyterHub REST API: ``POST /users/{name}/server`` (201 started, 202 pending, 400
   already running, 429 the concurrent spawn limit), ``POST /users/{name}/activity``.
.. [2] JupyterHub: the body's ``user_options`` become ``Spawner.user_options`` (kept in the
   hub's database as the defaults of the next start without options).
.. [3] jupyterhub-idle-culler: a server is culled when its ``last_activity`` is older than
   ``--timeout``.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from labkit.hub.preheat import WARM_PAGES
from labkit.i18n import first_few, t

__all__ = ["ENV_SECRET", "LESSONS_DIR", "WarmStatus", "Warmer", "keep_every_s",
           "lesson_notebook", "pace", "parse_until", "warm_page", "warm_secret"]

#: The lessons a warm-up can preheat (the checkout's ``notebooks/``, what students get).
LESSONS_DIR = Path(__file__).resolve().parents[2] / "notebooks"
#: The class page's environment: the secret ``warm`` sends it (a root-only file in the state).
ENV_SECRET = "LABKIT_CLASSPAGE_WARM_SECRET"
_READY_TIMEOUT_S = 300  # one server's start on a loaded 2-core machine (Spawner.start_timeout)


def warm_secret(state_root: Path) -> str:
    """Return the secret ``warm`` proves itself with to the class page (``warm_secret`` in the
    hub's private state, 0600, made on first use)."""
    import secrets

    path = Path(state_root) / "warm_secret"
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(secrets.token_hex(32))
    return path.read_text(encoding="utf-8").strip()


def keep_every_s(cull_timeout_s: int) -> float:
    """Return how often a warmed server's activity is reported: a third of the culler's
    timeout (the culler looks every half of it, ``labkit.hub.state.cull_every_s``), 5-60 s. [s]"""
    return float(max(5, min(60, int(cull_timeout_s) // 3)))


def pace(spawn_limit: int, cpus: int | None = None) -> int:
    """Return how many servers start at once: ``spawn_limit``, at most the machine's cores.

    Raises
    ------
    ValueError
        If ``spawn_limit`` < 1.
    """
    if int(spawn_limit) < 1:
        raise ValueError(f"spawn_limit must be >= 1, got {spawn_limit!r}")
    return max(1, min(int(spawn_limit), int(cpus or os.cpu_count() or 1)))


def lesson_notebook(lesson: str, folder: Path = LESSONS_DIR) -> str:
    """Return the lesson's notebook file name ("03" or "3" -> "03_goodput.ipynb").

    Raises
    ------
    ValueError
        If no lesson of that number (or name) exists (Korean).
    """
    text = str(lesson).strip()
    if re.fullmatch(r"\d{1,2}", text):
        found = sorted(folder.glob(f"{int(text):02d}_*.ipynb"))
    else:
        found = [p for p in folder.glob("*.ipynb") if p.name in (text, f"{text}.ipynb")]
    if not found:
        raise ValueError(t("hub.warm.no_lesson", lesson=text))
    return found[0].name


def warm_page(page: str | None) -> str:
    """Return the page a warm-up prepares: ``page``, or the default (the app) for None/''.

    Raises
    ------
    ValueError
        If ``page`` is not one of :data:`WARM_PAGES` (Korean).
    """
    if not page:
        return WARM_PAGES[0]
    if page not in WARM_PAGES:
        raise ValueError(t("hub.warm.bad_page", page=str(page)[:40]))
    return page


def parse_until(text: str, now: _dt.datetime) -> _dt.datetime:
    """Return today's ``HH:MM`` in ``now``'s time zone (the period's end).

    Raises
    ------
    ValueError
        If ``text`` is not ``HH:MM`` or is already past (Korean).
    """
    match = re.fullmatch(r"([01]?\d|2[0-3]):([0-5]\d)", str(text).strip())
    if match is None:
        raise ValueError(t("hub.warm.bad_until", until=text))
    until = now.replace(hour=int(match[1]), minute=int(match[2]), second=0, microsecond=0)
    if until <= now:
        raise ValueError(t("hub.warm.past_until", until=text))
    return until


@dataclass
class WarmStatus:
    """Where a warm-up is (what the class page and ``warm`` show)."""

    students: list[str]
    lesson: str | None = None
    until: _dt.datetime | None = None
    page: str = WARM_PAGES[0]
    started: _dt.datetime = field(default_factory=lambda: _dt.datetime.now().astimezone())
    finished: _dt.datetime | None = None
    ready: list[str] = field(default_factory=list)
    preheated: list[str] = field(default_factory=list)
    #: Servers that already ran: left as they were, nothing preheated in them.
    already: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Return the status as JSON (``warm`` polls it)."""
        return {"students": self.students, "lesson": self.lesson, "page": self.page,
                "until": self.until.isoformat() if self.until else None,
                "started": self.started.isoformat(),
                "finished": self.finished.isoformat() if self.finished else None,
                "ready": self.ready, "preheated": self.preheated, "already": self.already,
                "failed": self.failed,
                "lines": self.lines()}

    def lines(self) -> list[str]:
        """Return the status in Korean, one line each."""
        out = [t("hub.warm.progress", ready=len(self.ready), total=len(self.students),
                 at=self.started.strftime("%H:%M"))]
        if self.lesson:
            number = self.lesson[:2]
            out.append(t(f"hub.warm.preheated.{self.page}", n=len(self.preheated), lesson=t(
                "hub.csv.lesson", n=int(number)) if number.isdigit() else self.lesson))
            if self.already:  # the trial: "0명의 앱 화면" and no word of why
                out.append(t("hub.warm.already", n=len(self.already),
                             names=first_few(self.already, 8)))
        if self.finished:
            seconds = int((self.finished - self.started).total_seconds())
            out.append(t("hub.warm.finished", s=seconds))
            out.append(t("hub.warm.kept_until", until=self.until.strftime("%H:%M"))
                       if self.until else t("hub.warm.kept_timeout"))
        out += [t("hub.warm.failed", name=n, reason=r) for n, r in self.failed.items()]
        return out


class Warmer:
    """Start and preheat the class's servers through the hub (see the module docstring).

    Parameters
    ----------
    api_url : str
        The hub's REST API (``$JUPYTERHUB_API_URL``).
    token : str
        A token with ``servers``, ``read:servers`` and ``users:activity`` on the students (the
        class page's); it is sent to the hub only (its API on loopback, plain HTTP), never to a
        student's server: each server preheats itself (:mod:`labkit.hub.preheat`).
    """

    def __init__(self, api_url: str, token: str) -> None:
        from tornado.httpclient import AsyncHTTPClient

        self.api_url = api_url.rstrip("/")
        self.token = token
        self.client = AsyncHTTPClient(force_instance=True, max_clients=64)
        self.status: WarmStatus | None = None
        self._keeper: asyncio.Task[None] | None = None

    async def _call(self, url: str, method: str = "GET", body: Any = None,
                    timeout_s: float = 60.0, json_reply: bool = True) -> tuple[int, Any]:
        from tornado.httpclient import HTTPClientError, HTTPRequest

        request = HTTPRequest(
            url, method=method, headers={"Authorization": f"token {self.token}",
                                         "Content-Type": "application/json"},
            body=None if body is None and method in ("GET", "DELETE") else json.dumps(body or {}),
            request_timeout=timeout_s, follow_redirects=False)
        try:
            reply = await self.client.fetch(request)
        except HTTPClientError as err:
            return err.code, None
        return reply.code, json.loads(reply.body) if reply.body and json_reply else None

    async def _start(self, name: str, slots: asyncio.Semaphore,
                     notebook: str | None = None, page: str = WARM_PAGES[0]) -> bool:
        """Start ``name``'s server (with the lesson and page as its user options) and wait until
        the hub says it is ready; return whether it was started here (False: it already ran,
        and is left as it was)."""
        user = quote(name)
        body = {"user_options": {"lesson": notebook, "page": page}} if notebook else {}
        async with slots:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + _READY_TIMEOUT_S
            code, _ = await self._call(f"{self.api_url}/users/{user}/server", "POST", body)
            while code == 429 and loop.time() < deadline:  # the hub's own spawn limit
                await asyncio.sleep(2)
                code, _ = await self._call(f"{self.api_url}/users/{user}/server", "POST", body)
            if code not in (201, 202, 400):
                raise RuntimeError(t("hub.warm.http", code=code))
            while loop.time() < deadline:
                _, model = await self._call(f"{self.api_url}/users/{user}")
                server = ((model or {}).get("servers") or {}).get("") or {}
                if server.get("ready"):
                    return code != 400
                if not server:  # the spawn failed and the hub forgot the server
                    raise RuntimeError(t("hub.warm.spawn_failed"))
                await asyncio.sleep(1)
            raise RuntimeError(t("hub.warm.timeout", s=_READY_TIMEOUT_S))

    async def _one(self, name: str, notebook: str | None, slots: asyncio.Semaphore,
                   status: WarmStatus) -> None:
        from tornado.httpclient import HTTPClientError

        try:
            started = await self._start(name, slots, notebook, status.page)
            status.ready.append(name)
            if started and notebook:
                status.preheated.append(name)
            elif not started:
                status.already.append(name)
        except RuntimeError as err:  # ours, in Korean
            status.failed[name] = str(err)
        except (OSError, ValueError, TimeoutError, HTTPClientError) as err:
            status.failed[name] = t("hub.warm.error", kind=type(err).__name__)

    async def report_activity(self, names: Sequence[str]) -> None:
        """Tell the hub that each server is in use now (the culler counts from here)."""
        now = _dt.datetime.now(_dt.UTC).isoformat()
        await asyncio.gather(*(self._call(
            f"{self.api_url}/users/{quote(n)}/activity", "POST",
            {"last_activity": now, "servers": {"": {"last_activity": now}}}) for n in names))

    async def _keep(self, names: Sequence[str], until: _dt.datetime, every_s: float) -> None:
        while _dt.datetime.now(until.tzinfo) < until:
            await self.report_activity(names)
            left = (until - _dt.datetime.now(until.tzinfo)).total_seconds()
            await asyncio.sleep(max(1.0, min(every_s, left)))

    async def run(self, students: Sequence[str], *, lesson: str | None = None,
                  page: str = WARM_PAGES[0], until: _dt.datetime | None = None,
                  spawn_limit: int = 10, keep_every_s: float = 60.0) -> WarmStatus:
        """Warm the class (see the module docstring); return the finished status.

        ``page``: what each server prepares of the lesson (:data:`WARM_PAGES`). ``until``:
        report the servers' activity every ``keep_every_s`` until then (the culler's timeout
        then counts from ``until``); None: once, when the warm-up ends.

        Raises
        ------
        ValueError
            For an unknown lesson or page (Korean).
        """
        notebook = lesson_notebook(lesson) if lesson else None
        status = WarmStatus(list(students), notebook, until, warm_page(page))
        self.status = status
        if self._keeper is not None:
            self._keeper.cancel()
        slots = asyncio.Semaphore(pace(spawn_limit))
        await asyncio.gather(*(self._one(n, notebook, slots, status) for n in students))
        status.finished = _dt.datetime.now().astimezone()
        if until is None:
            await self.report_activity(status.ready)
        else:
            self._keeper = asyncio.create_task(self._keep(status.ready, until, keep_every_s))
        return status


def _warm_refused(lesson: str | None, until: str | None, page: str | None) -> str | None:
    """Return why a warm-up of ``lesson``'s ``page`` until ``until`` is refused (Korean), None
    if it is not."""
    try:
        if lesson:
            lesson_notebook(lesson)
        warm_page(page)
        if until:
            parse_until(until, _dt.datetime.now().astimezone())
    except ValueError as err:
        return str(err)
    return None


def ask_class_page(state: Any, lesson: str | None, until: str | None, *,
                   page: str | None = None, out: Any = print, poll_s: float = 2.0) -> int:
    """``python -m labkit.hub warm``: ask the running class page to warm the class, print its
    progress (Korean) until done; return the exit status (0 all ready, 1 some failed or the
    hub is not running, 2 a bad lesson or end time).

    ``state`` is the hub's :class:`labkit.hub.state.HubState` (the class page's port from the
    last start, the secret).
    """
    import time
    import urllib.error
    import urllib.request

    refused = _warm_refused(lesson, until, page)
    if refused is not None:
        out(refused)
        return 2
    port = state.ports().get("classpage")
    url = f"http://127.0.0.1:{port}/services/classpage/warm/api"
    headers = {"Authorization": f"labkit-warm {warm_secret(state.root)}",
               "Content-Type": "application/json"}

    def call(body: dict[str, Any] | None) -> dict[str, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, headers=headers,
                                         method="GET" if body is None else "POST")
        with urllib.request.urlopen(request, timeout=30) as reply:
            return dict(json.loads(reply.read()))

    try:
        doc = call({"lesson": lesson, "until": until, "page": page})
    except urllib.error.HTTPError as err:
        try:
            said = json.loads(err.read() or b"{}").get("error")
        except ValueError:  # an HTML error page (403: the secret of another start)
            said = None
        out(said or t("hub.warm.http", code=err.code))
        return 2 if err.code == 400 else 1
    except OSError:
        out(t("hub.warm.not_running"))
        return 1
    out(t("hub.warm.asked"))
    shown: list[str] = []
    while True:
        status = doc.get("status") or {}
        lines = list(status.get("lines") or [])
        for line in lines:
            if line not in shown:
                out(line)
        shown = lines
        if status.get("finished"):
            return 1 if status.get("failed") else 0
        time.sleep(poll_s)
        try:
            doc = call(None)
        except OSError:
            out(t("hub.warm.not_running"))
            return 1
