"""A scripted class-hub student without a browser: log in, start the server, open a lesson.

Used by the hub's security tests and ``benchmarks/bench_hub.py``. It talks to a real JupyterHub
through its proxy: the Korean login form (first use sets the password), the Hub REST API with
the student's own API token, and the student's single-user server (voila pages, the kernel
websocket through :class:`tests.browser.voila_client.KernelClient`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests
import websocket

from labkit.serve.processes import wait_until_answers
from tests.browser.voila_client import _KERNEL_ID, V1, KernelClient, Page

#: The venv's scripts (jupyterhub, jupyterhub-singleuser).
BIN = Path(sys.executable).parent
#: The lines every plain loopback hub of the live tests starts its config with (``str.format``
#: fields: port, hub_port, chp, proxy_api_port, state); the tests add their authenticator's,
#: spawner's and services' lines.
LOOPBACK_HUB_CONFIG = """
import sys
c = get_config()  # noqa: F821
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.command = [{chp!r}]
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
c.JupyterHub.db_url = "sqlite:///{state}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "{state}/jupyterhub_cookie_secret"
c.JupyterHub.authenticator_class = "dummy"
"""


@contextmanager
def running_jupyterhub(config: Path, state: Path, log: Path, base: str,
                       env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``jupyterhub -f config`` in ``state`` until the block ends; yield its process.

    Waits until ``base``/hub/api answers 200 (at most 90 s, else
    :class:`labkit.serve.processes.ServerDidNotStart` with the log's tail). Afterwards SIGTERM
    (JupyterHub stops the servers it spawned), and after 30 s SIGKILL to its whole session.
    """
    full_env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", **(env or {})}
    full_env.pop("JUPYTERHUB_USER", None)
    with log.open("wb") as out:
        proc = subprocess.Popen([str(BIN / "jupyterhub"), "-f", str(config)], cwd=state,
                                stdout=out, stderr=subprocess.STDOUT, env=full_env,
                                start_new_session=True)
    try:
        wait_until_answers(f"{base}/hub/api", proc, timeout_s=90, what="the hub", log_path=log,
                           ok_status=200, interval_s=0.5)
        yield proc
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


@dataclass
class Student:
    """One logged-in student (``session`` carries the hub's login cookie)."""

    base: str  # http://host:port/
    name: str
    session: requests.Session = field(default_factory=requests.Session)
    token: str = ""

    @property
    def server_url(self) -> str:
        """The student's server through the proxy (``/user/<name>/``)."""
        return f"{self.base}user/{self.name}/"

    def xsrf(self) -> str:
        """The hub's ``_xsrf`` cookie value (sent back as ``X-XSRFToken``)."""
        return self.session.cookies.get("_xsrf", path="/hub/") or self.session.cookies.get(
            "_xsrf") or ""

    def api(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        """Call the Hub REST API with the student's token (or login cookie before one)."""
        headers = kwargs.pop("headers", {})
        if self.token:
            headers["Authorization"] = f"token {self.token}"
        else:
            headers["X-XSRFToken"] = self.xsrf()
        return self.session.request(method, f"{self.base}hub/api/{path}", headers=headers,
                                    timeout=kwargs.pop("timeout", 30), **kwargs)


def login(base: str, name: str, password: str, timeout: float = 30) -> tuple[Student,
                                                                             requests.Response]:
    """Submit the hub's login form; return the student and the form's final response.

    The login succeeded when the student holds a ``jupyterhub-session-id``/hub cookie and the
    response is not the login page again (see :func:`logged_in`).
    """
    student = Student(base, name)
    page = student.session.get(f"{base}hub/login", timeout=timeout)
    page.raise_for_status()
    reply = student.session.post(
        f"{base}hub/login?next=", data={"username": name, "password": password,
                                        "_xsrf": student.xsrf()},
        allow_redirects=False, timeout=timeout)
    reply.encoding = "utf-8"  # JupyterHub's pages are UTF-8 without a charset parameter
    return student, reply


def logged_in(reply: requests.Response) -> bool:
    """Whether a login form submission was accepted (a redirect away from the login page)."""
    return reply.status_code in (302, 303) and "/hub/login" not in reply.headers.get(
        "Location", "")


def start_server(student: Student, timeout: float = 240) -> float:
    """Get an API token, start the student's server, wait until ready; return seconds taken.

    While the Hub answers 429 (its concurrent spawn limit), the start is asked again.

    Raises
    ------
    TimeoutError
        If the server is not ready in ``timeout``.
    """
    start = time.perf_counter()
    if not student.token:
        reply = student.api("POST", f"users/{student.name}/tokens",
                            json={"note": "labkit test", "expires_in": 3600})
        reply.raise_for_status()
        student.token = reply.json()["token"]
    deadline = start + timeout
    while True:  # 429: the concurrent spawn limit is reached; the Hub says to try again
        reply = student.api("POST", f"users/{student.name}/server")
        if reply.status_code != 429 or time.perf_counter() > deadline:
            break
        time.sleep(1)
    if reply.status_code not in (201, 202, 400):  # 400: already running
        reply.raise_for_status()
    while time.perf_counter() < deadline:
        model = student.api("GET", f"users/{student.name}").json()
        server = (model.get("servers") or {}).get("")
        if server and server.get("ready"):
            return time.perf_counter() - start
        time.sleep(0.5)
    raise TimeoutError(f"{student.name}'s server not ready in {timeout} s")


def auth_headers(student: Student) -> dict[str, str]:
    """Headers that authenticate the student at their own server."""
    return {"Authorization": f"token {student.token}"}


def fetch_voila(student: Student, notebook: str, timeout: float = 240) -> Page:
    """GET the lesson as a voila app from the student's server; return the page."""
    url = f"{student.server_url}voila/render/{urllib.parse.quote(notebook)}"
    start = time.perf_counter()
    reply = student.session.get(url, headers=auth_headers(student), timeout=timeout,
                                stream=True)
    reply.raise_for_status()
    chunks = reply.iter_content(chunk_size=None)
    first = next(chunks, b"")
    first_byte = time.perf_counter() - start
    html = (first + b"".join(chunks)).decode("utf-8")
    match = _KERNEL_ID.search(html)
    if match is None:
        raise LookupError(f"no kernel id in {url}")
    return Page(html, match.group(1), first_byte, time.perf_counter() - start)


class HubKernelClient(KernelClient):
    """:class:`KernelClient` for a kernel of a student's server (token in a header)."""

    def __init__(self, student: Student, kernel_id: str, *, protocol: str = "v1",
                 timeout: float = 60, token: str | None = None) -> None:
        import uuid

        self.session = uuid.uuid4().hex
        self.protocol = protocol
        self.timeout = timeout
        url = student.server_url.replace("http://", "ws://", 1)
        url += f"api/kernels/{kernel_id}/channels?session_id={self.session}"
        self.ws = websocket.create_connection(
            url, timeout=timeout, subprotocols=[V1] if protocol == "v1" else None,
            header=[f"Authorization: token {token or student.token}"])
        self.backlog = []


def execute(client: KernelClient, code: str, timeout: float = 60) -> dict[str, Any]:
    """Run ``code`` in the kernel; return {"stdout", "error" (ename or ""), "seconds"}."""
    start = time.perf_counter()
    messages = client.collect(client.send("execute_request", {
        "code": code, "silent": False, "store_history": False, "user_expressions": {},
        "allow_stdin": False, "stop_on_error": True}), timeout)
    out = "".join(m.content.get("text", "") for m in messages if m.msg_type == "stream")
    errors = [m.content.get("ename", "") for m in messages if m.msg_type == "error"]
    return {"stdout": out, "error": errors[0] if errors else "",
            "seconds": time.perf_counter() - start}


def start_kernel(student: Student, timeout: float = 120) -> str:
    """Start a python3 kernel on the student's server (as JupyterLab does); return its id."""
    reply = student.session.post(f"{student.server_url}api/kernels",
                                 headers=auth_headers(student), json={"name": "python3"},
                                 timeout=timeout)
    reply.raise_for_status()
    return str(reply.json()["id"])
