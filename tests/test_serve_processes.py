"""labkit.serve.processes: the start-up poll and the stop of a child server, on real processes.

The servers are Python's own ``http.server`` (an oracle outside labkit) on a loopback port.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from labkit.serve.processes import ServerDidNotStart, stop_process, wait_until_answers


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _http_server(root: Path, port: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind",
                             "127.0.0.1", "--directory", str(root)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_waits_for_an_answer_of_any_status_or_the_one_asked_for(tmp_path: Path) -> None:
    (tmp_path / "up.txt").write_text("up")
    port = _free_port()
    proc = _http_server(tmp_path, port)
    try:
        wait_until_answers(f"http://127.0.0.1:{port}/up.txt", proc, timeout_s=30, ok_status=200)
        wait_until_answers(f"http://127.0.0.1:{port}/missing", proc, timeout_s=5)  # a 404 answers
        start = time.monotonic()
        with pytest.raises(ServerDidNotStart, match="did not answer .*missing in 1 s"):
            wait_until_answers(f"http://127.0.0.1:{port}/missing", proc, timeout_s=1,
                               ok_status=200)
        assert time.monotonic() - start < 5
    finally:
        stop_process(proc)
    assert proc.returncode is not None


def test_a_server_that_exits_fails_at_once_with_its_log(tmp_path: Path) -> None:
    log_path = tmp_path / "server.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.exit('port taken')"],
                                stdout=log, stderr=subprocess.STDOUT)
    start = time.monotonic()
    with pytest.raises(ServerDidNotStart, match=r"(?s)voila did not start \(exited\):.*port taken"):
        wait_until_answers(f"http://127.0.0.1:{_free_port()}/", proc, timeout_s=60, what="voila",
                           log_path=log_path)
    assert time.monotonic() - start < 30


def test_stop_kills_a_process_that_ignores_sigterm() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import signal, sys, time\n"
                             "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                             "print('ready', flush=True)\ntime.sleep(60)"],
                            stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    stop_process(proc, timeout_s=0.5)
    assert proc.returncode == -9  # SIGKILL, after SIGTERM was ignored
    stop_process(proc)  # already stopped: nothing to do
