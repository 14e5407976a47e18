"""Start extra voila servers for the classroom tests (``make present``'s way, or variants).

The session server of ``conftest.py`` serves ``notebooks/``; these serve small test notebooks
written into a temporary folder, with their own limits, and expose the server's process (its
kernels, memory and log) to the tests.
"""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import nbformat
import psutil

from labkit.serve import CONFIG_DIR, voila_command
from labkit.serve.processes import stop_process, wait_until_answers
from tests.browser.conftest import _free_port


@dataclass
class VoilaServer:
    """A running voila server started by a test."""

    url: str
    proc: subprocess.Popen[bytes]
    log_path: Path
    token: str | None = None

    def log(self) -> str:
        """Return the server's log so far (server and kernels' stderr)."""
        return self.log_path.read_text(errors="replace")

    def kernels(self) -> list[psutil.Process]:
        """Return the kernel processes the server has started and not yet stopped."""
        found = []
        for child in psutil.Process(self.proc.pid).children(recursive=True):
            try:
                if any("ipykernel" in part for part in child.cmdline()):
                    found.append(child)
            except psutil.Error:
                continue
        return found

    def server_rss_mib(self) -> float:
        """Return the voila server process's own resident memory. [MiB]"""
        return psutil.Process(self.proc.pid).memory_info().rss / 2**20

    def get(self, path: str, timeout: float = 30) -> tuple[int, str, dict[str, str]]:
        """GET ``path`` without following redirects; return (status, body, headers)."""

        class _NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args, **kwargs):  # type: ignore[no-untyped-def]
                return None

        opener = urllib.request.build_opener(_NoRedirect)
        try:
            with opener.open(self.url + path, timeout=timeout) as response:
                return response.status, response.read().decode("utf-8", "replace"), dict(
                    response.headers)
        except urllib.error.HTTPError as err:
            return err.code, err.read().decode("utf-8", "replace"), dict(err.headers)


@contextmanager
def running(argv: list[str], log_path: Path, url: str, *, cwd: Path = CONFIG_DIR,
            env: dict[str, str] | None = None, token: str | None = None,
            probe: str = "voila/api/contents") -> Iterator[VoilaServer]:
    """Run ``argv`` until the block ends (terminated, then killed)."""
    full_env = {**os.environ, "LABKIT_GPU": os.environ.get("LABKIT_GPU", "sim:H100-80GB"),
                **(env or {})}
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, cwd=cwd, stdout=log, stderr=subprocess.STDOUT,
                                env=full_env)
    try:
        # any HTTP status is an answer (e.g. 302/403 without a token)
        wait_until_answers(url + probe + (f"?token={token}" if token else ""), proc,
                           timeout_s=90, what="voila", log_path=log_path)
        yield VoilaServer(url, proc, log_path, token)
    finally:
        stop_process(proc, timeout_s=20)


@contextmanager
def voila_server(root: Path, log_dir: Path, *, env: dict[str, str] | None = None,
                 extra: list[str] | None = None, theme: str = "light",
                 warm: dict[str, int] | None = None) -> Iterator[VoilaServer]:
    """Serve ``root`` on 127.0.0.1 exactly as ``make present`` does (plus ``extra`` flags)."""
    port = _free_port()
    argv = voila_command(port=port, root=root, extra=extra, theme=theme, warm=warm)
    with running(argv, log_dir / f"voila-{port}.log", f"http://127.0.0.1:{port}/",
                 env=env) as server:
        yield server


@contextmanager
def labkit_serve(root: Path, log_dir: Path, cwd: Path, args: list[str],
                 env: dict[str, str] | None = None) -> Iterator[VoilaServer]:
    """Run ``python -m labkit.serve ARGS ROOT`` from ``cwd`` (the teacher's folder)."""
    port = _free_port()
    log_path = log_dir / f"labkit-serve-{port}.log"
    argv = [sys.executable, "-m", "labkit.serve", "--port", str(port), *args, str(root)]
    full_env = {**os.environ, **(env or {})}
    # Python puts the working directory on sys.path for -m: make labkit importable from the
    # checkout, as it is for a teacher (installed in the venv).
    full_env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, cwd=cwd, stdout=log, stderr=subprocess.STDOUT,
                                env={**full_env, "LABKIT_GPU": "sim:H100-80GB"})
    url = f"http://127.0.0.1:{port}/"
    try:
        wait_until_answers(url + "voila/api/contents", proc, timeout_s=90, what="voila",
                           log_path=log_path)
        yield VoilaServer(url, proc, log_path)
    finally:
        stop_process(proc, timeout_s=20)


def write_notebook(path: Path, *cells: str, title: str | None = None) -> Path:
    """Write a notebook of code ``cells`` (a lesson-style header cell first when ``title``)."""
    nb = nbformat.v4.new_notebook()
    if title:
        nb.cells.append(nbformat.v4.new_markdown_cell(title))
    nb.cells += [nbformat.v4.new_code_cell(src) for src in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, path)
    return path
