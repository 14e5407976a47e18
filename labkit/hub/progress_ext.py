"""A jupyter_server extension on each student's single-user server: ``GET /labkit/progress``.

Returns JSON for the teacher's class page (``labkit.hub.classpage``)::

    {"user": "kim01", "memory_bytes": 412000000,
     "results": [{"time": ..., "exercise": "goodput.ex1", "correct": true, "answer": "86.1"}],
     "skipped_lines": 0}

``results`` are the newest :data:`MAX_RESULTS` records of ``~/.labkit/progress.jsonl``
(:mod:`labkit.data.progress`); ``memory_bytes`` the resident memory of the server and its
kernels (psutil; null where it cannot be read). The GPU share is not reported here: the class
page reads it from the hub (:class:`labkit.hub.gpushare.ShareState`), where the student cannot
change it.

The handler is an ordinary authenticated jupyter_server API handler: on the hub, only the
student, and tokens with ``access:servers`` on this server (the class page's), get through.

Enable it in the single-user server with the spawner argument
``--ServerApp.jpserver_extensions=labkit.hub.progress_ext=True`` (traitlets' dict syntax on the
command line), or ``c.ServerApp.jpserver_extensions = {"labkit.hub.progress_ext": True}`` in a
jupyter_server config file.
"""

from __future__ import annotations

import json
import os
from typing import Any

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado import web

from labkit.data.progress import progress_path, read_progress

__all__ = ["MAX_RESULTS", "ROUTE", "ProgressHandler", "progress_report"]

#: Newest records served (a class's lessons have ~40 exercises; room for many attempts).
MAX_RESULTS = 2000
#: Path of the endpoint below the server's base URL.
ROUTE = "labkit/progress"


def _memory_bytes() -> int | None:
    try:
        import psutil

        me = psutil.Process(os.getpid())
        total: int = me.memory_info().rss
        for child in me.children(recursive=True):
            try:
                total += child.memory_info().rss
            except psutil.Error:
                continue
        return total
    except (ImportError, OSError, RuntimeError):
        return None


def progress_report(user: str, home: str | None = None) -> dict[str, Any]:
    """Return the endpoint's JSON document for ``user`` (see the module docstring)."""
    try:
        records, skipped = read_progress(progress_path(home))
    except OSError:
        records, skipped = [], -1
    return {
        "user": user,
        "memory_bytes": _memory_bytes(),
        "results": [{"time": r.time, "exercise": r.exercise, "correct": r.correct,
                     "answer": r.answer} for r in records[-MAX_RESULTS:]],
        "skipped_lines": skipped,
    }


class ProgressHandler(APIHandler):
    """``GET /labkit/progress``: the student's results and memory."""

    auth_resource = "contents"

    @web.authenticated
    @authorized
    def get(self) -> None:
        """Write the progress report as JSON."""
        user = os.environ.get("JUPYTERHUB_USER", "")
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.set_header("Cache-Control", "no-store")
        self.finish(json.dumps(progress_report(user), ensure_ascii=False))


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "labkit.hub.progress_ext"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    web_app = serverapp.web_app
    route = url_path_join(web_app.settings["base_url"], ROUTE)
    web_app.add_handlers(".*$", [(route, ProgressHandler)])
