"""A server started as a child process: wait until its HTTP URL answers, stop it afterwards.

:func:`wait_until_answers` is the start-up poll every server labkit or its tests start needs
(voila for the thumbnails, a class hub, jupyter server, Prometheus); :func:`stop_process` the
terminate-then-kill that follows. Standard library only (``urllib``), so a test or benchmark that
starts a server uses the same two functions.
"""

from __future__ import annotations

import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

__all__ = ["ServerDidNotStart", "stop_process", "wait_until_answers"]


class ServerDidNotStart(RuntimeError):
    """The server exited, or did not answer in time; the message ends with its log's tail."""


def wait_until_answers(url: str, proc: subprocess.Popen[bytes] | None = None, *,
                       timeout_s: float, what: str = "the server", log_path: Path | None = None,
                       ok_status: int | None = None, interval_s: float = 0.3) -> None:
    """Poll ``url`` until the server answers it over HTTP.

    Parameters
    ----------
    url
        The URL to GET (a page or API route the server serves once it is up).
    proc
        The server's process: its exit ends the wait at once. ``None``: only the deadline does.
    timeout_s
        How long to wait. [s]
    what
        The server's name in the error message.
    log_path
        The server's log; its last 3,000 characters end the error message.
    ok_status
        The HTTP status that means up (e.g. 200 for ``/hub/health``); ``None``: any answer,
        an error status included (a 302 or 403 without a token is a server that is up).
    interval_s
        Pause between tries. [s]

    Raises
    ------
    ServerDidNotStart
        If ``proc`` exits, or no (``ok_status``) answer comes within ``timeout_s``.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                status = response.status
        except urllib.error.HTTPError as err:
            status = err.code
        except OSError:
            status = None
        if status is not None and (ok_status is None or status == ok_status):
            return
        exited = proc is not None and proc.poll() is not None
        if exited or time.monotonic() > deadline:
            gone = "exited" if exited else f"did not answer {url} in {timeout_s:g} s"
            tail = log_path.read_text(errors="replace")[-3000:] if log_path else ""
            raise ServerDidNotStart(f"{what} did not start ({gone})" + (f":\n{tail}" if tail
                                                                         else ""))
        time.sleep(interval_s)


def stop_process(proc: subprocess.Popen[bytes], *, timeout_s: float = 15) -> None:
    """Terminate ``proc`` and wait for it; kill it if it is still running after ``timeout_s``.

    Parameters
    ----------
    proc
        The child process (already exited is fine).
    timeout_s
        How long SIGTERM may take (a hub stops the servers it spawned first). [s]
    """
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
