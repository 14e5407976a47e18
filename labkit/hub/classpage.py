"""The teacher's class page: a JupyterHub service that shows the class and stops a server.

For the teacher only (a hub admin; the service checks both the hub's ``access:services`` and
its own admin list), in Korean: each roster student's state (online, starting, offline), GPU
share, memory used by their server and kernels, last activity, exercise results, and a button
that stops the student's server. It works with the hub's REST API through its own token, which
has only the scopes the page needs, each limited to the roster's students
(:data:`SCOPES`): ``list:users``, ``read:users:activity``, ``read:servers`` (the table),
``admin:server_state`` (each server's GPU share and process id, as the hub's spawner stored
them: :class:`labkit.hub.gpushare.ShareState` -- never what the student's own server says) and
``delete:servers`` (the button). The teacher heads the table as 교사(teacher), without a stop
button.

The token never leaves the hub's side: no request carrying it goes to a student's server (a
student reads their own server's memory). The exercise results are read by the service itself
(it runs as root beside the hub) from each student's home, opened as a privileged reader must
open a file its owner controls (:func:`labkit.data.progress.read_student_progress`: no link
followed, a regular file owned by the student); the memory is the resident size of the process
tree the hub's spawner started (its ``pid`` in the server's state).


Three parts: :func:`class_rows` and :func:`render_page` are pure (hub API JSON and progress
reports in, rows and HTML out); :class:`ClassPage` talks to the hub and reads the homes;
:func:`make_app` and :func:`main` run it as a tornado app under the hub (started by the hub
from :func:`service_spec`).

References
----------
.. [1] JupyterHub docs, "Services" (``services``, ``load_roles``, ``HubOAuthenticated``,
   ``JUPYTERHUB_SERVICE_PREFIX``, ``oauth_no_confirm``) and "Scopes" (``list:users``,
   ``read:users:activity``, ``read:servers``, ``delete:servers``, ``access:servers``, the
   ``!user=<name>`` filter).
.. [2] JupyterHub REST API: ``GET /users`` (``servers`` with ``ready``/``pending``/``url``/
   ``last_activity``), ``DELETE /users/{name}/server``.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as _dt
import html
import json
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from labkit.data.roster import RosterEntry, RosterLike
from labkit.hub.results import exercise_title, parse_when, reported_results
from labkit.hub.tickets import class_tickets_html
from labkit.i18n import t

__all__ = ["ENV_ADMINS", "ENV_CAFILE", "ENV_HOMES", "ENV_PROXY", "ENV_ROSTER", "SCOPES",
           "ClassPage", "StudentRow", "class_rows", "main", "make_app", "render_confirm",
           "render_error", "render_page", "render_work", "server_memory_bytes", "service_spec",
           "share_text",
           "student_home", "student_notebooks"]

#: The service's scopes (each filtered to the roster's students in :func:`service_spec`).
#: Never ``access:servers``: the page reads results from the homes itself (issue 23, attack 3).
SCOPES = ("list:users", "read:users:activity", "read:servers", "admin:server_state",
          "delete:servers",
          # "수업 준비" (labkit.hub.warm): start the servers, keep them from the idle culler
          "servers", "users:activity")
#: Environment variables the hub passes the service (JSON roster; comma-separated admins).
ENV_ROSTER = "LABKIT_CLASSPAGE_ROSTER"
ENV_ADMINS = "LABKIT_CLASSPAGE_ADMINS"
#: Where the students' homes are, as a ``str.format`` template of ``username`` (a hub whose
#: spawner puts homes elsewhere than the system accounts'; unset: each student's system account
#: ``jupyter-<name>``, :func:`labkit.hub.roster.system_username`).
ENV_HOMES = "LABKIT_CLASSPAGE_HOMES"
#: Under TLS: the proxy's certificate file, the only one trusted (labkit.hub.tls).
ENV_CAFILE = "LABKIT_CLASSPAGE_CAFILE"
#: The proxy's URL ("수업 준비" waits for each server through it; labkit.hub.warm).
ENV_PROXY = "LABKIT_CLASSPAGE_PROXY"
_REFRESH_S = 30
# Largest reply read from the hub: the users list of 500 students ~1 MB.
_MAX_BODY_BYTES = 4_000_000
#: Newest records of a progress file shown (a class's lessons have ~40 exercises).
MAX_RESULTS = 2000
#: The work view's Content-Security-Policy: a sandbox (an opaque origin: no script runs, no form
#: is sent, nothing reaches the hub's API with the teacher's cookie), nothing loaded from anywhere,
#: inline styles and embedded images only (CSP Level 3, "sandbox", "default-src").
WORK_CSP = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:"
#: A notebook a teacher may view: a plain file name of the student's ``~/labkit`` folder.
_NOTEBOOK_NAME = r"[0-9A-Za-z][0-9A-Za-z_.-]{0,99}\.ipynb"
_MAX_NOTEBOOK_BYTES = 20_000_000  # a lesson with its outputs is ~2 MB


def service_spec(*, port: int, roster: Sequence[RosterLike], admins: Sequence[str],
                 name: str = "classpage", python: str = sys.executable,
                 homes: str | None = None, proxy_url: str | None = None
                 ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Return the JupyterHub ``services`` entry and the ``load_roles`` role of the class page.

    Parameters
    ----------
    port : int
        Loopback port the service listens on (1024 .. 65535).
    roster : sequence of RosterEntry (or any RosterLike)
        The class; the teacher(s) in ``admins`` get no scopes on their own servers.
    admins : sequence of str
        Usernames allowed to open the page (the teacher; hub admins).
    name : str, default "classpage"
        The service name (its URL is ``/services/<name>/``).
    python : str
        The interpreter that runs the service (default: this one).
    homes : str, optional
        The students' homes as a template of ``{username}`` (:data:`ENV_HOMES`); default: the
        students' system accounts.
    proxy_url : str, optional
        The proxy, where "수업 준비" waits for each server (:data:`ENV_PROXY`).

    Returns
    -------
    (dict, dict)
        ``c.JupyterHub.services`` entry, ``c.JupyterHub.load_roles`` entry.

    Raises
    ------
    ValueError
        For a port outside 1024..65535, no admin, or an empty roster.
    """
    if isinstance(port, bool) or not isinstance(port, int) or not 1024 <= port <= 65535:
        raise ValueError(f"port must be in 1024..65535, got {port!r}")
    if not admins:
        raise ValueError("the class page needs at least one admin (the teacher)")
    students = [e for e in roster if e.username not in admins]
    if not students:
        raise ValueError("the roster lists no student")
    doc = json.dumps([[e.username, e.display_name or e.username] for e in roster],
                     ensure_ascii=False)
    service = {
        "name": name,
        "url": f"http://127.0.0.1:{port}",
        "command": [python, "-m", "labkit.hub.classpage", "--port", str(port)],
        "environment": {ENV_ROSTER: doc, ENV_ADMINS: ",".join(admins),
                        **({ENV_HOMES: homes} if homes else {}),
                        **({ENV_PROXY: proxy_url} if proxy_url else {})},
        "oauth_no_confirm": True,
        "display": True,
    }
    scopes = [f"{scope}!user={e.username}" for scope in SCOPES for e in students]
    role = {"name": f"{name}-service",
            "description": "labkit class page: list the class, stop servers",
            "scopes": scopes, "services": [name]}
    return service, role


# --- the pure part: hub JSON -> rows -> HTML -----------------------------------------------------


@dataclass(frozen=True)
class StudentRow:
    """One student's line on the class page.

    Attributes
    ----------
    username, display_name : str
    state : {"online", "starting", "stopping", "offline", "never", "teacher"}
        ``"never"``: the student has not logged in yet; ``"teacher"``: the teacher's own row.
    last_activity : datetime or None
        The hub's latest activity of the user or their server (UTC).
    share : str or None
        The GPU share in Korean, from the hub's record of the spawn (the server model's
        ``state``, :data:`labkit.hub.gpushare.STATE_KEY`); None while the server is not up.
    memory_bytes : int or None
        Resident memory of the server and its kernels. [bytes]
    tried, solved : int
        Exercises answered at least once; of those, answered correctly at least once.
    results : tuple of (str, bool or None)
        Each exercise's latest verdict, in the order first tried.
    note : str or None
        Why the progress report is missing (Korean), when the server is online.
    rejected : int
        Records of the report left out: unknown exercise, wrong types, a time in the future.
    """

    username: str
    display_name: str
    state: str
    last_activity: _dt.datetime | None = None
    share: str | None = None
    memory_bytes: int | None = None
    tried: int = 0
    solved: int = 0
    results: tuple[tuple[str, bool | None], ...] = ()
    note: str | None = None
    rejected: int = 0


def _state(user: Mapping[str, Any] | None) -> tuple[str, Mapping[str, Any]]:
    server = ((user or {}).get("servers") or {}).get("") or {}
    if user is None or (not server and not user.get("last_activity")):
        return "never", {}  # the hub lists allowed users before their first login
    pending = server.get("pending") or user.get("pending")
    if pending == "spawn":
        return "starting", server
    if pending == "stop":
        return "stopping", server
    return ("online" if server.get("ready") else "offline"), server


def class_rows(users: Sequence[Mapping[str, Any]], roster: Sequence[RosterLike],
               reports: Mapping[str, Mapping[str, Any] | str],
               admins: Sequence[str] = (), *, now: _dt.datetime | None = None
               ) -> list[StudentRow]:
    """Return the class page's rows: the teacher(s) first, then each student in roster order.

    The reports are what each student's own server says: only well-formed records of known
    exercises count (:func:`labkit.hub.results.reported_results`), one entry per exercise, none
    dated after ``now``; the rest are counted in ``StudentRow.rejected``.

    Parameters
    ----------
    users : sequence of dict
        ``GET /hub/api/users`` (JupyterHub REST API user models).
    roster : sequence of RosterEntry (or any RosterLike)
    reports : mapping of str to dict or str
        Each online student's ``/labkit/progress`` document, or the Korean reason it is
        missing.
    admins : sequence of str
        The teacher(s): a ``"teacher"`` row each (no share, results or stop button), never
        a student row, even when also on the roster.
    now : datetime, optional
        The hub's time (UTC): records dated later are left out (no check without it).

    Returns
    -------
    list of StudentRow
    """
    by_name = {u.get("name"): u for u in users if isinstance(u, Mapping)}
    names = {e.username: e.display_name for e in roster}
    rows: list[StudentRow] = [StudentRow(a, names.get(a) or a, "teacher") for a in admins]
    for entry in roster:
        if entry.username in admins:
            continue
        rows.append(_student_row(entry, by_name.get(entry.username),
                                 reports.get(entry.username), now))
    return rows


def share_text(raw: object) -> str | None:
    """Return a student's GPU share as the teacher reads it ("GPU 1의 MIG 장치 2 …"), or None.

    ``raw`` is the share the hub's spawner stored (``labkit.hub.gpushare.Share.to_env`` JSON);
    the lessons' banner says the same to the student as "내 GPU 몫".
    """
    import json as _json

    if not isinstance(raw, str) or not raw:
        return None
    try:
        doc = _json.loads(raw)
        policy = str(doc["policy"])
        values = {"gpu": int(doc["gpu_index"]), "uuid": str(doc["uuid"]),
                  "profile": str(doc.get("profile", "")), "mig_index": doc.get("mig_index"),
                  "sharers": int(doc.get("sharers", 1))}
        if policy == "shared":
            unit = "mig" if doc.get("kind") == "mig" else "gpu"
            values["unit"] = t(f"common.banner.share.unit_{unit}", **values)
        return t(f"hub.class.share.{policy}", **values) if policy in (
            "mig", "whole", "shared") else None
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


def _hub_share(server: Mapping[str, Any]) -> str | None:
    from labkit.hub.gpushare import STATE_KEY

    state = server.get("state")
    return share_text(state.get(STATE_KEY)) if isinstance(state, Mapping) else None


def _student_row(entry: RosterLike, user: Mapping[str, Any] | None,
                 report: Mapping[str, Any] | str | None,
                 now: _dt.datetime | None = None) -> StudentRow:
    state, server = _state(user)
    times = [w for w in (parse_when((user or {}).get("last_activity")),
                         parse_when(server.get("last_activity"))) if w is not None]
    live = state == "online"
    row = StudentRow(entry.username, entry.display_name or entry.username, state,
                     max(times) if times else None, _hub_share(server) if live else None)
    if isinstance(report, Mapping):
        tried, solved, results, rejected = reported_results(report, now)
        memory = report.get("memory_bytes")  # a stopped server's last report: results only
        row = StudentRow(row.username, row.display_name, state, row.last_activity,
                         row.share, memory if live and isinstance(memory, int)
                         and memory >= 0 else None, tried, solved, results,
                         rejected=rejected)
    elif isinstance(report, str) and live:
        row = StudentRow(row.username, row.display_name, state, row.last_activity,
                         row.share, note=report)
    return row


def _ago(when: _dt.datetime | None, now: _dt.datetime) -> str:
    if when is None:
        return t("hub.class.never_active")
    seconds = max(0, int((now - when).total_seconds()))
    if seconds < 60:
        return t("hub.class.ago_s", n=seconds)
    if seconds < 3600:
        return t("hub.class.ago_min", n=seconds // 60)
    if seconds < 86400:
        return t("hub.class.ago_h", n=seconds // 3600)
    return t("hub.class.ago_d", n=seconds // 86400)


def _mib(value: int | None) -> str:
    return t("hub.class.unknown") if value is None else f"{value / 2**20:,.0f} MiB"


def _results_html(row: StudentRow) -> str:
    e = html.escape
    if row.note:
        return e(t("hub.class.report_missing", reason=row.note))
    if not row.tried and row.state != "online":
        return e(t("hub.class.no_report"))
    marks = "".join(
        f'<li class="lk-ex" data-exercise="{e(key)}">{e(exercise_title(key))} '
        f'{_mark(key, ok)}</li>' for key, ok in row.results)
    out = e(t("hub.class.results", solved=row.solved, tried=row.tried))
    if marks:
        out += f'<ul class="lk-exercises">{marks}</ul>'
    if row.rejected:
        out += f'<br><small class="lk-rejected">{e(t("hub.class.rejected", n=row.rejected))}' \
               "</small>"
    return out


def _mark(key: str, ok: bool | None) -> str:
    """✔/✘ for a graded exercise or task, ✎ for a prediction (a guess, never graded), ⚠ for
    an exercise whose verdict is unknown."""
    if key.startswith("predict."):
        return "✎"
    return "✔" if ok else "✘" if ok is False else "⚠"


def _row_html(row: StudentRow, now: _dt.datetime, stop_url: str, xsrf_html: str) -> str:
    e = html.escape
    if row.state == "teacher":
        return (f'<tr class="lk-teacher" data-username="{e(row.username)}">'
                f"<td>{e(row.display_name)}<br><small>{e(row.username)}</small></td>"
                f'<td>{e(t("hub.class.state.teacher"))}</td>' + "<td></td>" * 5 + "</tr>")
    button = ""
    if row.state in ("online", "starting"):  # the stop handler asks to confirm first
        button = (f'<form method="post" action="{e(stop_url)}">{xsrf_html}'
                  f'<input type="hidden" name="username" value="{e(row.username)}">'
                  f'<button type="submit" class="lk-stop">{e(t("hub.class.stop"))}</button>'
                  f"</form>")
    when = row.last_activity.isoformat(timespec="seconds") if row.last_activity else ""
    work = f'<br><a class="lk-work-link" href="work/{e(quote(row.username))}/">' \
           f'{e(t("hub.class.work.link"))}</a>' if row.state != "never" else ""
    return (f'<tr class="lk-student lk-{e(row.state)}" data-username="{e(row.username)}">'
            f"<td>{e(row.display_name)}<br><small>{e(row.username)}</small>{work}</td>"
            f"<td>{e(t(f'hub.class.state.{row.state}'))}</td>"
            f'<td class="lk-share">{e(row.share or t("hub.class.no_share"))}</td>'
            f"<td>{e(_mib(row.memory_bytes))}</td>"
            f'<td title="{e(when)}">{e(_ago(row.last_activity, now))}</td>'
            f'<td class="lk-results">{_results_html(row)}</td><td>{button}</td></tr>')


def _frame(body: str, *, refresh: bool, title: str | None = None) -> str:
    e = html.escape
    title = title or t("hub.class.title")
    meta = f'<meta http-equiv="refresh" content="{_REFRESH_S}">' if refresh else ""
    return (
        '<!doctype html><html lang="ko"><head><meta charset="utf-8">'
        f"{meta}<title>{e(title)}</title>"
        "<style>body{font-family:'Noto Sans CJK KR',sans-serif;margin:2em}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;"
        "text-align:left;vertical-align:top}tr.lk-online td:nth-child(2){color:#1b7f3b}"
        "ul.lk-exercises{margin:0;padding-left:1.2em}</style></head><body>"
        f"<h1>{e(title)}</h1>{body}</body></html>")


def render_error(status: int) -> str:
    """Return the class page's error page in Korean (403: not the teacher; 400: not a student)."""
    key = {400: "hub.class.error.400", 403: "hub.class.error.403"}.get(status,
                                                                       "hub.class.error.other")
    return _frame(f'<p class="lk-error">{html.escape(t(key, code=status))}</p>', refresh=False,
                  title=t("hub.class.error.title", code=status))


def _warm_html(warm_url: str, xsrf_html: str, status_lines: Sequence[str]) -> str:
    """The "수업 준비" form (lesson to preheat, end of the period) and the last warm-up's lines."""
    from labkit.hub.warm import LESSONS_DIR

    e = html.escape
    lessons = "".join(f'<option value="{e(p.name[:2])}">{e(p.stem)}</option>'
                      for p in sorted(LESSONS_DIR.glob("[0-9][0-9]_*.ipynb")))
    lines = "".join(f"<li>{e(line)}</li>" for line in status_lines)
    return (f'<form method="post" action="{e(warm_url)}" class="lk-warm">{xsrf_html}'
            f'<label>{e(t("hub.warm.form.lesson"))} <select name="lesson">'
            f'<option value="">{e(t("hub.warm.form.no_lesson"))}</option>{lessons}</select>'
            f'</label> <label>{e(t("hub.warm.form.until"))} '
            '<input type="time" name="until"></label> '
            f'<button type="submit" class="lk-warm-button">{e(t("hub.warm.button"))}</button>'
            f'</form>{f"<ul class=lk-warm-status>{lines}</ul>" if lines else ""}')


def render_page(rows: Sequence[StudentRow], *, now: _dt.datetime, stop_url: str,
                xsrf_html: str = "", message: str | None = None, warm_url: str = "",
                warm_lines: Sequence[str] = ()) -> str:
    """Return the class page's HTML (Korean), refreshed by the browser every 30 s."""
    e = html.escape
    online = sum(1 for r in rows if r.state == "online")
    students = sum(1 for r in rows if r.state != "teacher")
    heads = "".join(f"<th>{e(t(f'hub.class.col.{c}'))}</th>"
                    for c in ("student", "state", "share", "memory", "activity", "reported",
                              "server"))
    body = "".join(_row_html(r, now, stop_url, xsrf_html) for r in rows)
    notice = f'<p class="lk-message">{e(message)}</p>' if message else ""
    warm = _warm_html(warm_url, xsrf_html, warm_lines) if warm_url else ""
    return _frame(
        f'{notice}{warm}<p class="lk-summary">'
        f'{e(t("hub.class.summary", online=online, total=students))}</p>'
        f'<table class="lk-class"><thead><tr>{heads}</tr></thead><tbody>{body}</tbody></table>'
        f"{class_tickets_html(rows)}"
        f'<p class="lk-note"><small>{e(t("hub.class.reported_note"))}</small></p>'
        f'<p><a class="lk-csv" href="results.csv" download>{e(t("hub.class.export_csv"))}</a></p>',
        refresh=True)


def render_confirm(username: str, display_name: str, *, stop_url: str, back_url: str,
                   xsrf_html: str = "") -> str:
    """Return the page that asks the teacher to confirm stopping a student's server (Korean)."""
    e = html.escape
    return _frame(
        f'<p class="lk-confirm">{e(t("hub.class.confirm", name=display_name, username=username))}'
        f'</p><form method="post" action="{e(stop_url)}">{xsrf_html}'
        f'<input type="hidden" name="username" value="{e(username)}">'
        '<input type="hidden" name="confirm" value="yes">'
        f'<button type="submit" class="lk-stop-confirm">{e(t("hub.class.confirm_yes"))}</button> '
        f'<a href="{e(back_url)}" class="lk-cancel">{e(t("hub.class.confirm_no"))}</a></form>',
        refresh=False)


# --- the service: hub API and the students' homes -----------------------------------------------


def student_home(username: str, template: str | None = None) -> tuple[Path, int]:
    """Return a student's home and uid, as the hub (not the student) knows them.

    Parameters
    ----------
    username : str
        The hub username.
    template : str, optional
        ``str.format`` template of ``username`` (:data:`ENV_HOMES`): the home is that folder
        and the uid its owner (the folder itself must not be a link). Default: the system
        account ``jupyter-<name>`` (its ``pw_dir`` and ``pw_uid``).

    Raises
    ------
    KeyError
        If the system account does not exist.
    OSError
        If the templated home is missing or a link.
    """
    if template:
        home = Path(template.format(username=username))
        info = os.lstat(home)
        if not os.path.isdir(home) or os.path.islink(home):
            raise NotADirectoryError(str(home))
        return home, info.st_uid
    import pwd

    from labkit.hub.roster import system_username

    entry = pwd.getpwnam(system_username(username))
    return Path(entry.pw_dir), entry.pw_uid


def server_memory_bytes(pid: object, uid: int) -> int | None:
    """Return the resident memory of the server ``pid`` and its children (kernels). [bytes]

    ``pid`` is what the hub's spawner stored for the server (``state["pid"]``); a process that
    no longer runs as ``uid`` (the pid was reused) counts as unknown: None.
    """
    import psutil

    if isinstance(pid, bool) or not isinstance(pid, int) or pid <= 0:
        return None
    try:
        server = psutil.Process(pid)
        if server.uids().real != uid:
            return None
        total: int = server.memory_info().rss
        for child in server.children(recursive=True):
            try:
                total += child.memory_info().rss if child.uids().real == uid else 0
            except psutil.Error:
                continue
        return total
    except psutil.Error:
        return None


def _read_report(username: str, server: Mapping[str, Any], template: str | None,
                 live: bool) -> Mapping[str, Any] | str:
    """A student's progress report, read from their home as a privileged reader."""
    from labkit.data.progress import UnsafeProgressFile, read_student_progress

    try:
        home, uid = student_home(username, template)
        records, skipped = read_student_progress(home, uid)
    except UnsafeProgressFile:
        return t("hub.class.report_unsafe")
    except KeyError:
        return t("hub.class.report_no_account")
    except OSError as err:
        import errno

        return t("hub.class.report_unreadable",
                 code=errno.errorcode.get(err.errno or 0, type(err).__name__))
    state = server.get("state")
    pid = state.get("pid") if isinstance(state, Mapping) else None
    return {"memory_bytes": server_memory_bytes(pid, uid) if live else None,
            "results": [{"time": r.time, "exercise": r.exercise, "correct": r.correct,
                         "answer": r.answer} for r in records[-MAX_RESULTS:]],
            "skipped_lines": skipped}


def student_notebooks(username: str, template: str | None = None) -> list[str]:
    """Return the notebooks in the student's ``~/labkit`` (read as a privileged reader).

    Raises
    ------
    labkit.data.owned.UnsafeFile, OSError, KeyError
        As :func:`labkit.data.owned.list_owned` and :func:`student_home`.
    """
    import re

    from labkit.data.owned import list_owned
    from labkit.hub.spawner import HOME_FOLDER

    home, uid = student_home(username, template)
    return [n for n in list_owned(home, uid, (HOME_FOLDER,)) if re.fullmatch(_NOTEBOOK_NAME, n)]


def render_work(raw: bytes) -> str:
    """Return a notebook as static HTML for the teacher: inputs and saved outputs, sanitized.

    nbconvert's ``basic`` template with ``sanitize_html`` (no script, no event handler, no
    style that loads anything); the page that shows it adds :data:`WORK_CSP`, so even HTML the
    sanitizer let through runs nothing. Widgets and plotly charts have no static output here.

    Raises
    ------
    ValueError
        If ``raw`` is not a notebook.
    """
    import nbformat
    from nbconvert import HTMLExporter

    try:
        notebook = nbformat.reads(raw.decode("utf-8", errors="replace"), as_version=4)
    except Exception as err:  # nbformat raises several kinds for a broken file
        raise ValueError(f"not a notebook: {type(err).__name__}") from err
    body, _ = HTMLExporter(template_name="basic", sanitize_html=True).from_notebook_node(notebook)
    return str(body)


def _work_html(username: str, name: str | None, template: str | None,
               display_name: str) -> tuple[int, str]:
    """The work view's (status, HTML body) for ``username``'s notebook ``name`` (None: the list)."""
    import re

    from labkit.data.owned import UnsafeFile, read_owned
    from labkit.hub.spawner import HOME_FOLDER

    e = html.escape
    title = e(t("hub.class.work.title", name=display_name, username=username))
    try:
        if name is None:
            names = student_notebooks(username, template)
            items = "".join(f'<li><a href="{e(quote(n))}">{e(n)}</a></li>' for n in names)
            return 200, (f"<h2>{title}</h2>" + (f'<ul class="lk-work">{items}</ul>' if items
                                                  else f"<p>{e(t('hub.class.work.none'))}</p>"))
        if not re.fullmatch(_NOTEBOOK_NAME, name):
            return 404, f"<p>{e(t('hub.class.work.missing'))}</p>"
        home, uid = student_home(username, template)
        raw, size = read_owned(home, uid, (HOME_FOLDER, name), _MAX_NOTEBOOK_BYTES)
        if size > _MAX_NOTEBOOK_BYTES:
            return 413, f"<p>{e(t('hub.class.work.too_big'))}</p>"
        return 200, (f"<h2>{title}: {e(name)}</h2>"
                     f'<p class="lk-note"><small>{e(t("hub.class.work.note"))}</small></p>'
                     f'<div class="lk-work-notebook">{render_work(raw)}</div>')
    except UnsafeFile:
        return 400, f"<p>{e(t('hub.class.work.unsafe'))}</p>"
    except (FileNotFoundError, KeyError):
        return 404, f"<p>{e(t('hub.class.work.missing'))}</p>"
    except ValueError:
        return 400, f"<p>{e(t('hub.class.work.broken'))}</p>"


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
    proxy_url : str, optional
        The proxy ("수업 준비", :mod:`labkit.hub.warm`).
    """

    def __init__(self, api_url: str, token: str, roster: Sequence[RosterLike],
                 admins: Sequence[str], homes: str | None = None,
                 proxy_url: str = "") -> None:
        self.api_url = api_url.rstrip("/")
        self.proxy_url = proxy_url.rstrip("/")
        self.token = token
        self.homes = homes
        self.roster = list(roster)
        self.admins = list(admins)
        self.students = {e.username for e in self.roster} - set(self.admins)
        self.display_names = {e.username: e.display_name or e.username for e in self.roster}
        self._client: Any = None
        self._tls: Any = None
        self._warmer: Any = None
        self._warm_task: Any = None

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

    async def warm(self, lesson: str | None, until: str | None) -> Any:
        """Start "수업 준비" (:class:`labkit.hub.warm.Warmer`) in the background; return its
        status (at once: the warm-up goes on after the request).

        Raises
        ------
        ValueError
            For an unknown lesson or an end time that is not a later ``HH:MM`` (Korean).
        """
        from labkit.hub import warm

        notebook = warm.lesson_notebook(lesson) if lesson else None
        end = warm.parse_until(until, _dt.datetime.now().astimezone()) if until else None
        if self._warmer is None:
            cafile = os.environ.get(ENV_CAFILE)
            from labkit.hub.tls import loopback_context

            self._warmer = warm.Warmer(self.api_url, self.proxy_url, self.token,
                                       loopback_context(cafile) if cafile else None)
        running = self._warmer.status
        if running is not None and running.finished is None:
            return running
        students = [e.username for e in self.roster if e.username in self.students]
        self._warm_task = asyncio.create_task(self._warmer.run(
            students, lesson=notebook, until=end,
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


def _roster_from_env() -> list[RosterEntry]:
    doc = json.loads(os.environ.get(ENV_ROSTER, "[]"))
    return [RosterEntry(str(u), str(d)) for u, d in doc]


def make_app(page: ClassPage, prefix: str) -> Any:
    """Return the tornado application of the service at URL ``prefix`` (``/services/<name>/``)."""
    from jupyterhub.services.auth import HubOAuthCallbackHandler, HubOAuthenticated
    from jupyterhub.utils import url_path_join
    from tornado import web
    from tornado.httpclient import HTTPClientError

    class _Teacher(HubOAuthenticated, web.RequestHandler):  # type: ignore[misc]
        def write_error(self, status_code: int, **kwargs: Any) -> None:
            self.finish(render_error(status_code))  # Korean, never a traceback

        def _check_teacher(self) -> None:
            user = self.current_user
            if not user or user.get("name") not in page.admins:
                raise web.HTTPError(403, "the class page is for the teacher")

    class PageHandler(_Teacher):
        @web.authenticated
        async def get(self) -> None:
            self._check_teacher()
            stopped = self.get_argument("stopped", None)
            message = t("hub.class.stopped", username=stopped) if stopped else None
            try:
                rows = await page.rows()
            except (HTTPClientError, OSError, ValueError) as err:  # the hub API is down or busy
                self.set_status(502)
                rows, message = [], t("hub.class.hub_unreachable", reason=str(err)[:200])
            self.set_header("Cache-Control", "no-store")
            status = page.warm_status()
            self.finish(render_page(rows, now=_dt.datetime.now(_dt.UTC),
                                    stop_url=url_path_join(prefix, "stop"),
                                    xsrf_html=self.xsrf_form_html(), message=message,
                                    warm_url=url_path_join(prefix, "warm"),
                                    warm_lines=status.lines() if status else ()))

    class WorkHandler(_Teacher):
        @web.authenticated
        async def get(self, username: str, name: str) -> None:
            self._check_teacher()
            if username not in page.students:
                raise web.HTTPError(404, "not a student of this class")
            status, body = await asyncio.to_thread(
                _work_html, username, name or None, page.homes,
                page.display_names.get(username, username))
            self.set_status(status)
            self.set_header("Content-Security-Policy", WORK_CSP)
            self.set_header("X-Content-Type-Options", "nosniff")
            self.set_header("Cache-Control", "no-store")
            back = (f'<p><a href="{html.escape(prefix)}">'
                    f'{html.escape(t("hub.class.work.back"))}</a></p>')
            self.finish(_frame(back + body, refresh=False,
                               title=t("hub.class.work.heading")))

    class StopHandler(_Teacher):
        @web.authenticated
        async def post(self) -> None:
            self._check_teacher()
            username = self.get_body_argument("username", "")
            if username not in page.students:
                raise web.HTTPError(400, f"{username!r} is not a student of this class")
            if self.get_body_argument("confirm", "") != "yes":  # ask first
                self.set_header("Cache-Control", "no-store")
                self.finish(render_confirm(username, page.display_names.get(username, username),
                                           stop_url=url_path_join(prefix, "stop"),
                                           back_url=prefix, xsrf_html=self.xsrf_form_html()))
                return
            try:
                await page.stop(username)
            except ValueError as err:
                raise web.HTTPError(400, str(err)) from err
            self.redirect(f"{prefix}?stopped={quote(username)}")

    class WarmHandler(_Teacher):
        @web.authenticated
        async def post(self) -> None:
            self._check_teacher()
            try:
                await page.warm(self.get_body_argument("lesson", "") or None,
                                self.get_body_argument("until", "") or None)
            except ValueError as err:
                raise web.HTTPError(400, str(err)) from err
            self.redirect(prefix)

    class WarmApiHandler(web.RequestHandler):
        """``python -m labkit.hub warm``: the secret from the hub's state, not a login."""

        def check_xsrf_cookie(self) -> None:  # no cookie is used: the secret header is the proof
            pass

        def prepare(self) -> None:
            import hmac

            secret = os.environ.get("LABKIT_CLASSPAGE_WARM_SECRET", "")
            given = self.request.headers.get("Authorization", "").removeprefix("labkit-warm ")
            if not secret or not hmac.compare_digest(given.encode(), secret.encode()):
                raise web.HTTPError(403)

        def get(self) -> None:
            status = page.warm_status()
            self.finish({"status": status.to_json() if status else None})

        async def post(self) -> None:
            body = json.loads(self.request.body or b"{}")
            try:
                status = await page.warm(body.get("lesson"), body.get("until"))
            except ValueError as err:
                self.set_status(400)
                self.finish({"error": str(err)})
                return
            self.finish({"status": status.to_json()})

    class ResultsCsvHandler(_Teacher):
        @web.authenticated
        async def get(self) -> None:
            from labkit.hub.results_csv import results_csv

            self._check_teacher()
            _users, reports = await page.reports()
            self.set_header("Content-Type", "text/csv; charset=utf-8")
            self.set_header("Content-Disposition", "attachment; filename=labkit-results.csv")
            self.set_header("Cache-Control", "no-store")
            self.finish(results_csv(page.roster, reports, page.admins,
                                    now=_dt.datetime.now(_dt.UTC)))

    return web.Application([
        (prefix, PageHandler),
        (url_path_join(prefix, "results.csv"), ResultsCsvHandler),
        (url_path_join(prefix, "warm"), WarmHandler),
        (url_path_join(prefix, "warm/api"), WarmApiHandler),
        (url_path_join(prefix, "stop"), StopHandler),
        (url_path_join(prefix, r"work/([^/]+)/([^/]*)"), WorkHandler),
        (url_path_join(prefix, "oauth_callback"), HubOAuthCallbackHandler),
    ], cookie_secret=os.urandom(32), xsrf_cookies=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the class page (started by the hub: ``python -m labkit.hub.classpage``)."""
    parser = argparse.ArgumentParser(prog="python -m labkit.hub.classpage")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args(argv)
    page = ClassPage(os.environ["JUPYTERHUB_API_URL"], os.environ["JUPYTERHUB_API_TOKEN"],
                     _roster_from_env(),
                     [a for a in os.environ.get(ENV_ADMINS, "").split(",") if a],
                     homes=os.environ.get(ENV_HOMES) or None,
                     proxy_url=os.environ.get(ENV_PROXY, ""))
    app = make_app(page, os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/services/classpage/"))

    async def serve() -> None:
        app.listen(args.port, address="127.0.0.1")
        stop = asyncio.Event()  # the hub stops its services with SIGINT, then SIGTERM
        for signum in (signal.SIGINT, signal.SIGTERM):
            asyncio.get_running_loop().add_signal_handler(signum, stop.set)
        await stop.wait()

    asyncio.run(serve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
