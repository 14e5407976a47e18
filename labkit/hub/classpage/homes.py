"""What the class page reads from the students' homes: results, notebooks, server memory.

Read by the service itself as a privileged reader (never through the student's server).
"""

from __future__ import annotations

import html
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from labkit.hub.classpage.render import _MAX_NOTEBOOK_BYTES, _NOTEBOOK_NAME, MAX_RESULTS
from labkit.i18n import t


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
