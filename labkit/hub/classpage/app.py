"""The class page as a tornado app under the hub (``python -m labkit.hub.classpage``)."""

from __future__ import annotations

import argparse
import asyncio
import datetime as _dt
import html
import json
import os
import signal
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from labkit.data.roster import RosterEntry
from labkit.hub.classpage.homes import _work_html
from labkit.hub.classpage.link import ClassPage
from labkit.hub.classpage.render import (
    ENV_ADMINS,
    ENV_HOMES,
    ENV_ROSTER,
    ENV_ROSTER_FILE,
    WORK_CSP,
    _frame,
    render_confirm,
    render_error,
    render_page,
)
from labkit.i18n import t


def _roster_from_env() -> list[RosterEntry]:
    doc = json.loads(os.environ.get(ENV_ROSTER, "[]"))
    return [RosterEntry(str(u), str(d)) for u, d in doc]


def _teacher_base(page: ClassPage) -> Any:
    """The handlers' base: the hub's OAuth login, Korean errors, the teacher only."""
    from jupyterhub.services.auth import HubOAuthenticated
    from tornado import web

    class _Teacher(HubOAuthenticated, web.RequestHandler):  # type: ignore[misc]
        def write_error(self, status_code: int, **kwargs: Any) -> None:
            self.finish(render_error(status_code))  # Korean, never a traceback

        def _check_teacher(self) -> None:
            user = self.current_user
            if not user or user.get("name") not in page.admins:
                raise web.HTTPError(403, "the class page is for the teacher")

    return _Teacher


def _page_handler(base: Any, page: ClassPage, prefix: str) -> Any:
    """``GET prefix``: the class table."""
    from jupyterhub.utils import url_path_join
    from tornado import web
    from tornado.httpclient import HTTPClientError

    class PageHandler(base):  # type: ignore[misc,valid-type]
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

    return PageHandler


def _work_handler(base: Any, page: ClassPage, prefix: str) -> Any:
    """``GET prefix/work/<student>/<notebook>``: a student's work, read-only and sandboxed."""
    from tornado import web

    class WorkHandler(base):  # type: ignore[misc,valid-type]
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

    return WorkHandler


def _stop_handler(base: Any, page: ClassPage, prefix: str) -> Any:
    """``POST prefix/stop``: asks first, then stops a student's server."""
    from jupyterhub.utils import url_path_join
    from tornado import web

    class StopHandler(base):  # type: ignore[misc,valid-type]
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

    return StopHandler


def _warm_handler(base: Any, page: ClassPage, prefix: str) -> Any:
    """``POST prefix/warm``: the teacher's "수업 준비" button."""
    from tornado import web

    class WarmHandler(base):  # type: ignore[misc,valid-type]
        @web.authenticated
        async def post(self) -> None:
            self._check_teacher()
            try:
                await page.warm(self.get_body_argument("lesson", "") or None,
                                self.get_body_argument("until", "") or None,
                                self.get_body_argument("page", "") or None)
            except ValueError as err:
                raise web.HTTPError(400, str(err)) from err
            self.redirect(prefix)

    return WarmHandler


def _warm_api_handler(page: ClassPage) -> Any:
    """``prefix/warm/api``: ``python -m labkit.hub warm``, by the secret, not a login."""
    from tornado import web

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
                status = await page.warm(body.get("lesson"), body.get("until"),
                                         body.get("page"))
            except ValueError as err:
                self.set_status(400)
                self.finish({"error": str(err)})
                return
            self.finish({"status": status.to_json()})

    return WarmApiHandler


def _results_csv_handler(base: Any, page: ClassPage) -> Any:
    """``GET prefix/results.csv``: the class's results as a spreadsheet."""
    from tornado import web

    class ResultsCsvHandler(base):  # type: ignore[misc,valid-type]
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

    return ResultsCsvHandler


def _answer_key_handler(base: Any) -> Any:
    """``GET prefix/answer-key.html``: the printable answer key, for the teacher only."""
    from tornado import web

    class AnswerKeyHandler(base):  # type: ignore[misc,valid-type]
        @web.authenticated
        async def get(self) -> None:
            from labkit.hub.answerkey import ENV_ANSWER_KEY

            self._check_teacher()
            where = os.environ.get(ENV_ANSWER_KEY, "")
            try:
                body = await asyncio.to_thread(_read_bytes, where) if where else None
            except OSError:
                body = None
            if body is None:
                raise web.HTTPError(404, "no answer key on this hub")
            self.set_header("Content-Type", "text/html; charset=utf-8")
            self.set_header("Content-Disposition",
                            "attachment; filename=labkit-answer-key.html")
            self.set_header("Content-Security-Policy", WORK_CSP)  # opened anyway: no script
            self.set_header("X-Content-Type-Options", "nosniff")
            self.set_header("Cache-Control", "no-store")
            self.finish(body)

    return AnswerKeyHandler


def _read_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def make_app(page: ClassPage, prefix: str) -> Any:
    """Return the tornado application of the service at URL ``prefix`` (``/services/<name>/``)."""
    from jupyterhub.services.auth import HubOAuthCallbackHandler
    from jupyterhub.utils import url_path_join
    from tornado import web

    base = _teacher_base(page)
    return web.Application([
        (prefix, _page_handler(base, page, prefix)),
        (url_path_join(prefix, "results.csv"), _results_csv_handler(base, page)),
        (url_path_join(prefix, "answer-key.html"), _answer_key_handler(base)),
        (url_path_join(prefix, "warm"), _warm_handler(base, page, prefix)),
        (url_path_join(prefix, "warm/api"), _warm_api_handler(page)),
        (url_path_join(prefix, "stop"), _stop_handler(base, page, prefix)),
        (url_path_join(prefix, r"work/([^/]+)/([^/]*)"), _work_handler(base, page, prefix)),
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
                     roster_file=os.environ.get(ENV_ROSTER_FILE) or None)
    app = make_app(page, os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/services/classpage/"))

    async def serve() -> None:
        app.listen(args.port, address="127.0.0.1")
        stop = asyncio.Event()  # the hub stops its services with SIGINT, then SIGTERM
        for signum in (signal.SIGINT, signal.SIGTERM):
            asyncio.get_running_loop().add_signal_handler(signum, stop.set)
        await stop.wait()

    asyncio.run(serve())
    return 0
