"""Real servers on loopback for the Prometheus tests: labkit's exporter and Debian's prometheus.

``exporter_process`` runs ``python -m labkit.gpu.exporter`` in a subprocess on the simulated lab
with a workload; ``prometheus_process`` runs ``/usr/bin/prometheus`` (or ``$LABKIT_PROMETHEUS``)
with a temporary config and data directory scraping it every second. Both are killed on exit.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

PROMETHEUS = os.environ.get("LABKIT_PROMETHEUS", shutil.which("prometheus") or
                            "/usr/bin/prometheus")
#: The simulated lab of the tests: two H100s, GPU 0 training, GPU 1 idle.
LAB_SPEC = "sim:2xH100-80GB"
WORKLOADS = ("0=training",)


def free_port() -> int:
    """Return a TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@contextlib.contextmanager
def exporter_process(log_dir: Path, *, spec: str = LAB_SPEC,
                     workloads: Sequence[str] = WORKLOADS) -> Iterator[str]:
    """Start the exporter on a free loopback port; yield its ``host:port``."""
    log_path = log_dir / "exporter.log"
    argv = [sys.executable, "-m", "labkit.gpu.exporter", "--host", "127.0.0.1", "--port", "0",
            "--interval", "1", "--hostname", "lab1"]
    for w in workloads:
        argv += ["--sim-workload", w]
    env = {**os.environ, "LABKIT_GPU": spec}
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + 60
        while True:
            match = re.search(r"serving http://([\d.]+:\d+)/metrics", log_path.read_text())
            if match:
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"exporter did not start:\n{log_path.read_text()[-2000:]}")
            time.sleep(0.1)
        yield match.group(1)
    finally:
        _stop(proc)


def query(base_url: str, promql: str) -> list[dict[str, object]]:
    """Return the result of an instant query (an empty list when the server is not ready)."""
    url = f"{base_url}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            doc = json.loads(r.read())
    except OSError:
        return []
    return list(doc.get("data", {}).get("result", []))


@contextlib.contextmanager
def prometheus_process(target: str, work_dir: Path, *, basic_auth: str | None = None
                       ) -> Iterator[str]:
    """Start Debian's prometheus scraping ``target`` every 1 s; yield its base URL.

    ``basic_auth``: ``"user:bcrypt-hash"`` for Prometheus' own ``--web.config.file`` (every
    API call without those credentials then gets HTTP 401).
    """
    if not Path(PROMETHEUS).exists():
        raise RuntimeError(f"{PROMETHEUS} not found: run `make test` (installs Debian's "
                           "prometheus) or set LABKIT_PROMETHEUS")
    port = free_port()
    config = work_dir / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1m\n"
        "scrape_configs:\n  - job_name: labkit\n    scrape_interval: 1s\n"
        f"    static_configs:\n      - targets: ['{target}']\n")
    log_path = work_dir / "prometheus.log"
    argv = [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={work_dir / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn",
            "--storage.tsdb.retention.time=1d"]
    if basic_auth:
        user, _, hashed = basic_auth.partition(":")
        web = work_dir / "web.yml"
        web.write_text(f"basic_auth_users:\n  {user}: '{hashed}'\n")
        argv.append(f"--web.config.file={web}")
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=work_dir)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(base + "/-/ready", timeout=2):
                    break
            except urllib.error.HTTPError:
                break  # it answers (401 behind basic auth): up
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("prometheus did not start:\n"
                                       f"{log_path.read_text()[-2000:]}") from None
                time.sleep(0.3)
        yield base
    finally:
        _stop(proc)


def wait_for_samples(base_url: str, *, gpus: int, seconds: int, timeout_s: float = 90) -> None:
    """Wait until every GPU has ``seconds`` of SM-activity samples in Prometheus."""
    promql = f"count_over_time(DCGM_FI_PROF_SM_ACTIVE[{seconds + 30}s]) >= {seconds}"
    deadline = time.monotonic() + timeout_s
    while len(query(base_url, promql)) < gpus:
        if time.monotonic() > deadline:
            raise RuntimeError(f"no {seconds} s of samples of {gpus} GPUs after {timeout_s} s")
        time.sleep(0.5)
