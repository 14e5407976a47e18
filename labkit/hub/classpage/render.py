"""The class page's pure part: hub API JSON and progress reports in, rows and HTML out.

The service's constants and :func:`service_spec` (how the hub starts it) live here too.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from labkit.data.roster import RosterLike
from labkit.hub.results import exercise_title, parse_when, reported_results
from labkit.hub.roster import STUDENTS_GROUP
from labkit.hub.tickets import class_tickets_html
from labkit.i18n import t

#: The service's scopes (each filtered to the roster's students in :func:`service_spec`).
#: Never ``access:servers``: the page reads results from the homes itself (issue 23, attack 3).
SCOPES = ("list:users", "read:users:activity", "read:servers", "admin:server_state",
          "delete:servers",
          # "수업 준비" (labkit.hub.warm): start the servers, keep them from the idle culler
          "servers", "users:activity")
#: Environment variables the hub passes the service (JSON roster; comma-separated admins).
ENV_ROSTER = "LABKIT_CLASSPAGE_ROSTER"
ENV_ADMINS = "LABKIT_CLASSPAGE_ADMINS"
#: The hub's saved roster file, read again when it changes (students imported while it runs).
ENV_ROSTER_FILE = "LABKIT_CLASSPAGE_ROSTER_FILE"
#: Where the students' homes are, as a ``str.format`` template of ``username`` (a hub whose
#: spawner puts homes elsewhere than the system accounts'; unset: each student's system account
#: ``jupyter-<name>``, :func:`labkit.hub.roster.system_username`).
ENV_HOMES = "LABKIT_CLASSPAGE_HOMES"
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
                 homes: str | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
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
                        **({ENV_HOMES: homes} if homes else {})},
        "oauth_no_confirm": True,
        "display": True,
    }
    # the students' hub group, not the usernames of this start: a student imported while the
    # hub runs joins it (roster import, their first start) and is on the page at once
    scopes = [f"{scope}!group={STUDENTS_GROUP}" for scope in SCOPES]
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
    """The "수업 준비" form (lesson to preheat, its page, end of the period) and the last
    warm-up's lines."""
    from labkit.hub.preheat import WARM_PAGES
    from labkit.hub.warm import LESSONS_DIR

    e = html.escape
    lessons = "".join(f'<option value="{e(p.name[:2])}">{e(p.stem)}</option>'
                      for p in sorted(LESSONS_DIR.glob("[0-9][0-9]_*.ipynb")))
    pages = "".join(f'<option value="{e(p)}">{e(t(f"hub.warm.form.page.{p}"))}</option>'
                    for p in WARM_PAGES)
    lines = "".join(f"<li>{e(line)}</li>" for line in status_lines)
    return (f'<form method="post" action="{e(warm_url)}" class="lk-warm">{xsrf_html}'
            f'<label>{e(t("hub.warm.form.lesson"))} <select name="lesson">'
            f'<option value="">{e(t("hub.warm.form.no_lesson"))}</option>{lessons}</select>'
            f'</label> <label>{e(t("hub.warm.form.page"))} <select name="page">{pages}'
            f'</select></label> <label>{e(t("hub.warm.form.until"))} '
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
        f'<p><a class="lk-csv" href="results.csv" download>{e(t("hub.class.export_csv"))}</a>'
        f' · <a class="lk-key" href="answer-key.html" download>'
        f'{e(t("hub.class.answer_key"))}</a></p>',
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
