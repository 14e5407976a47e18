"""A real class hub for the hub tests: ``python -m labkit.hub serve`` as an operator starts it.

Needs root (it creates the students' system accounts ``jupyter-lktest-*``; CI runs as root):
every test here is skipped otherwise, with that reason. The hub's state lives in a temp dir,
the proxy on a free loopback port, the Hub and the proxy's API on the ports the hub itself
chooses at start (``ports.json`` in its state); each home a 128 MiB image, each /tmp a 32 MiB
tmpfs (where the machine allows); the students' environment is
``/opt/labkit-hub/user`` (built on first use, like ``make hub``). At the end the hub is stopped,
every process of the test accounts killed, and the accounts and their homes removed.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

ROOT_REASON = ("the class hub tests create system users (jupyter-lktest-*) and need root; "
               "CI runs them as root")
STUDENT_A, STUDENT_B = "lktest-a", "lktest-b"
THROTLED = "lktest-r"  # only for the login rate-limit test (never spawns)
BROWSER_STUDENT = "lktest-c"  # logs in with chromium (tests/hub/test_hub_browser.py)
TEACHER = "lktest-t"
#: imported while the hub runs (tests/hub/test_hub_accounts_live.py)
LATECOMERS = ("lktest-n", "lktest-m")
#: Set by the teacher's ``roster set-password`` before the hub starts (no first-use claims);
#: BROWSER_STUDENT logs in with the first-login code of their slip and chooses this one.
PASSWORDS = {STUDENT_A: "alpha-pass-1", STUDENT_B: "bravo-pass-2", TEACHER: "teach-pass-3",
             BROWSER_STUDENT: "charlie-pass-4", THROTLED: "bravo-first-use-7"}
START_TIMEOUT_S = 900  # the first run builds the students' environment
DISK_MIB, TMP_MIB = 128, 32  # each student's home image and private /tmp in the test hub


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Hub:
    """A running class hub."""

    base: str
    state_dir: Path
    proc: subprocess.Popen[bytes]
    log_path: Path
    proxy_api: str

    def log(self) -> str:
        """The hub's log so far (for assertion messages)."""
        return self.log_path.read_text(errors="replace")[-4000:]

    def proxy_routes(self) -> dict[str, dict[str, str]]:
        """The proxy's routing table (read with the proxy's token, as root)."""
        token = (self.state_dir / "proxy_token").read_text().strip()
        reply = requests.get(f"{self.proxy_api}/api/routes",
                             headers={"Authorization": f"token {token}"}, timeout=10)
        reply.raise_for_status()
        return reply.json()  # type: ignore[no-any-return]


def _cleanup_accounts() -> None:
    from labkit.hub.accounts import remove_system_user
    from labkit.hub.limits import Limits, StudentCgroup, detect_mechanism
    from labkit.hub.roster import system_username
    from labkit.hub.spawner import kill_user_processes

    mechanism = detect_mechanism()
    for name in (STUDENT_A, STUDENT_B, THROTLED, BROWSER_STUDENT, TEACHER, *LATECOMERS):
        kill_user_processes(system_username(name))
        remove_system_user(name)
        if mechanism.startswith("cgroup"):
            StudentCgroup(system_username(name), Limits(), mechanism).remove()


def roster_command(state_dir: Path, *args: str, stdin: str = "") -> str:
    """Run ``python -m labkit.hub roster ARGS`` as the teacher does; return its output.

    Raises
    ------
    AssertionError
        If it exits non-zero (with its output).
    """
    done = subprocess.run([sys.executable, "-m", "labkit.hub", "--state-dir", str(state_dir),
                           "roster", *args], input=stdin, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def _set_passwords(state_dir: Path, roster: Path) -> None:
    """Import the roster (codes handed out) and set passwords as the teacher does (stdin)."""
    roster_command(state_dir, "import", str(roster))
    for name, password in PASSWORDS.items():
        if name != BROWSER_STUDENT:  # the browser student takes the first-login path
            roster_command(state_dir, "set-password", name, stdin=password + "\n")


@pytest.fixture(scope="session")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    """Start the class hub (roster A, B, R; teacher T; concurrent spawn limit 1)."""
    if os.geteuid() != 0:
        pytest.skip(ROOT_REASON)
    from labkit.hub.state import HubSettings, HubState

    work = tmp_path_factory.mktemp("hub")
    # the state dir under a directory every account can traverse: only its own 0700 protects it
    import tempfile

    # not under /tmp: a student's server has a private /tmp (labkit.hub.isolation), where the
    # state would be simply absent; under /var/lib (where the real state lives) it is there and
    # must be refused by its mode
    open_parent = Path(tempfile.mkdtemp(prefix="labkit-hub-test-", dir="/var/lib"))
    open_parent.chmod(0o755)
    state_dir = open_parent / "state"
    roster = work / "class.csv"
    roster.write_text("username,display_name\n"
                      f"{STUDENT_A},김민지\n{STUDENT_B},이지수\n{THROTLED},박서준\n"
                      f"{BROWSER_STUDENT},최유나\n",
                      encoding="utf-8")
    port = _free_port()
    HubState(state_dir).save_settings(HubSettings(
        teacher=TEACHER, port=port, concurrent_spawn_limit=1, cull_timeout_s=3600,
        mem_limit_mib=1536, cpu_limit=1.0, nproc_limit=256, disk_limit_mib=DISK_MIB,
        tmp_limit_mib=TMP_MIB))
    _cleanup_accounts()
    _set_passwords(state_dir, roster)
    artifacts = Path(os.environ.get("LABKIT_ARTIFACTS",
                                    Path(__file__).parents[2] / "test-artifacts"))
    artifacts.mkdir(parents=True, exist_ok=True)
    log_path = artifacts / "hub.log"  # kept after the run (the hub's and the servers' logs)
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "labkit.hub", "--state-dir", str(state_dir), "serve",
             "--roster", str(roster), "--teacher", TEACHER], stdin=subprocess.DEVNULL,
            stdout=log, stderr=subprocess.STDOUT,
            env={**os.environ, "LABKIT_GPU": "sim:H100-80GB"})
    base = f"http://127.0.0.1:{port}/"
    hub = Hub(base, state_dir, proc, log_path, "")
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                if requests.get(base + "hub/health", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the hub did not start:\n{hub.log()}")
            time.sleep(0.5)
        hub.proxy_api = f"http://127.0.0.1:{HubState(state_dir).ports()['proxy_api']}"
        yield hub
    finally:
        proc.terminate()  # JupyterHub stops the servers it spawned (cleanup_servers)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        _cleanup_accounts()
        import shutil

        shutil.rmtree(open_parent, ignore_errors=True)


@pytest.fixture(scope="session")
def students(hub: Hub) -> dict[str, object]:
    """A and B logged in (passwords set by ``roster set-password``) with running servers."""
    from tests.hub import hubclient

    out: dict[str, object] = {}
    for name in (STUDENT_A, STUDENT_B):
        student, reply = hubclient.login(hub.base, name, PASSWORDS[name])
        assert hubclient.logged_in(reply), (reply.status_code, reply.text[-500:])
        out[name] = student
    return out
