"""The class hub survives a crash and a reboot, and leaves no orphan (issue 24).

One hub of its own (students C-A and C-B, teacher C-T; not the session hub of conftest.py, since
this test kills it), started by the systemd unit's own ``ExecStart``
(:func:`labkit.hub.service.exec_start`), as systemd would after a crash or at boot:

1. both students log in, save a file in their home and start a kernel;
2. ``kill -9`` the hub (the supervisor and jupyterhub): the proxy, the idle culler, the class
   page and both servers die with it (PR_SET_PDEATHSIG), within 10 s;
3. start again: both log in, find their file and reach their lesson; no process of the first
   run is left;
4. ``kill -9`` again, then a reboot's traces: homes unmounted, the students' cgroups gone, the pid
   files pointing at another program (a reboot hands pids out anew): start again, the same
   holds, the homes are mounted again from their images, the other program still runs;
5. Ctrl+C (SIGINT): the whole hub stops within 10 s, without a traceback, leaving nothing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests

from labkit.hub import disk, service
from labkit.hub.lifetime import STOP_DEADLINE_S
from labkit.hub.roster import system_username
from labkit.hub.state import HubSettings, HubState
from tests.hub import hubclient
from tests.hub.conftest import DISK_MIB, ROOT_REASON, START_TIMEOUT_S, TMP_MIB, _free_port

pytestmark = pytest.mark.hub

STUDENTS = {"lktest-ca": "crash-alpha-1", "lktest-cb": "crash-bravo-2"}
TEACHER = "lktest-ct"
LESSON = "03_goodput.ipynb"
NOTE = "crash-note.txt"


@dataclass
class Run:
    """One start of the hub: its supervisor and everything it started (pid, start time)."""

    proc: subprocess.Popen[bytes]
    processes: set[tuple[int, float]] = field(default_factory=set)


def _started(pid: int) -> float | None:
    import psutil

    try:
        return float(psutil.Process(pid).create_time())
    except psutil.Error:
        return None


def _alive(processes: set[tuple[int, float]]) -> set[tuple[int, float]]:
    """Those of ``processes`` that still run (the same pid and start time: not a reused pid)."""
    import psutil

    left = set()
    for pid, created in processes:
        try:
            proc = psutil.Process(pid)
            if proc.create_time() == created and proc.status() != psutil.STATUS_ZOMBIE:
                left.add((pid, created))
        except psutil.Error:
            pass
    return left


def _describe(processes: set[tuple[int, float]]) -> list[str]:
    import psutil

    out = []
    for pid, _ in processes:
        try:
            out.append(f"{pid}: {' '.join(psutil.Process(pid).cmdline())[:160]}")
        except psutil.Error:
            pass
    return out


def _wait_gone(processes: set[tuple[int, float]], timeout_s: float) -> set[tuple[int, float]]:
    deadline = time.monotonic() + timeout_s
    while (left := _alive(processes)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def _uids() -> set[int]:
    import pwd

    return {pwd.getpwnam(system_username(n)).pw_uid for n in STUDENTS}


def _everything(run: Run) -> set[tuple[int, float]]:
    """The run's supervisor, its descendants and every process of the students' accounts."""
    import psutil

    top = psutil.Process(run.proc.pid)
    found = {(p.pid, p.create_time()) for p in [top, *top.children(recursive=True)]}
    uids = _uids()
    for proc in psutil.process_iter(["uids"]):
        if proc.info["uids"] and proc.info["uids"].real in uids:
            try:
                found.add((proc.pid, proc.create_time()))
            except psutil.Error:
                pass
    return found


class CrashHub:
    """Starts, kills and stops the test's own hub through the unit's ExecStart."""

    def __init__(self, state_dir: Path, port: int, log_path: Path) -> None:
        self.state_dir = state_dir
        self.base = f"http://127.0.0.1:{port}/"
        self.log_path = log_path
        self.argv = service.exec_start(service.unit_text(state_dir, python=sys.executable))
        self.runs: list[Run] = []

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]

    def start(self) -> Run:
        env = {**os.environ, "LABKIT_GPU": "sim:H100-80GB", "LABKIT_HUB_STATE": str(self.state_dir)}
        with open(self.log_path, "ab") as log:
            proc = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT, env=env,
                                    cwd=self.state_dir, start_new_session=True)
        run = Run(proc)
        self.runs.append(run)
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                if requests.get(self.base + "hub/health", timeout=2).status_code == 200:
                    return run
            except requests.RequestException:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the hub did not start from the unit's ExecStart:\n{self.log()}")
            time.sleep(0.5)

    @staticmethod
    def kill_hard(run: Run) -> tuple[set[tuple[int, float]], set[tuple[int, float]]]:
        """``kill -9`` the supervisor and jupyterhub; return what ran of theirs just before:
        (everything, the hub's side: proxy, services and the students' servers, no kernels)."""
        import psutil

        run.processes = _everything(run)
        uids = _uids()
        hub_side = set()
        for pid, created in run.processes:
            try:
                proc = psutil.Process(pid)
                if proc.uids().real not in uids or "jupyterhub-singleuser" in " ".join(
                        proc.cmdline()):
                    hub_side.add((pid, created))
            except psutil.Error:
                pass
        hub = [c.pid for c in psutil.Process(run.proc.pid).children() if "jupyterhub" in
               " ".join(c.cmdline())]
        assert hub, "no jupyterhub under the supervisor"
        for pid in [run.proc.pid, *hub]:
            os.kill(pid, signal.SIGKILL)
        run.proc.wait()
        return run.processes, hub_side


def _work(hub: CrashHub, name: str, write: str | None) -> str:
    """Log ``name`` in, start their server, reach the lesson; write or read the note."""
    student, reply = hubclient.login(hub.base, name, STUDENTS[name])
    assert hubclient.logged_in(reply), (reply.status_code, reply.text[-300:], hub.log())
    hubclient.start_server(student, timeout=300)
    headers = hubclient.auth_headers(student)
    lesson = student.session.get(f"{student.server_url}api/contents/{LESSON}?content=0",
                                 headers=headers, timeout=60)
    assert lesson.status_code == 200, (lesson.status_code, lesson.text[-300:])
    lab = student.session.get(f"{student.server_url}lab/tree/{LESSON}", headers=headers,
                              timeout=60)
    assert lab.status_code == 200, lab.status_code
    url = f"{student.server_url}api/contents/{NOTE}"
    if write is not None:
        saved = student.session.put(url, headers=headers, timeout=60, json={
            "type": "file", "format": "text", "content": write})
        assert saved.status_code in (200, 201), (saved.status_code, saved.text[-300:])
        hubclient.start_kernel(student)  # working: a kernel runs too
        return write
    note = student.session.get(url, headers=headers, timeout=60)
    assert note.status_code == 200, (note.status_code, note.text[-300:])
    return str(note.json()["content"])


def _cleanup() -> None:
    from labkit.hub.accounts import remove_system_user
    from labkit.hub.limits import Limits, StudentCgroup, detect_mechanism
    from labkit.hub.spawner import kill_user_processes

    mechanism = detect_mechanism()
    for name in [*STUDENTS, TEACHER]:
        kill_user_processes(system_username(name))
        remove_system_user(name)
        if mechanism.startswith("cgroup"):
            StudentCgroup(system_username(name), Limits(), mechanism).remove()


@pytest.fixture()
def crash_hub() -> Iterator[CrashHub]:
    """A state directory with the class and the teacher's settings; cleaned up afterwards."""
    if os.geteuid() != 0:
        pytest.skip(ROOT_REASON)
    parent = Path(tempfile.mkdtemp(prefix="labkit-hub-crash-", dir="/var/lib"))
    parent.chmod(0o755)
    state = HubState(parent / "state")
    roster = parent / "class.csv"
    roster.write_text("username,display_name\n" + "".join(
        f"{n},학생{i}\n" for i, n in enumerate(STUDENTS)), encoding="utf-8")
    from labkit.hub.roster import read_roster

    state.save_roster(read_roster(roster))
    for name, password in {**STUDENTS, TEACHER: "crash-teach-3"}.items():
        state.accounts.set_password(name, password)  # handed out (no first-use logins, issue 23)
    state.save_settings(HubSettings(
        teacher=TEACHER, port=_free_port(), concurrent_spawn_limit=2, cull_timeout_s=3600,
        mem_limit_mib=1536, cpu_limit=1.0, nproc_limit=256, disk_limit_mib=DISK_MIB,
        tmp_limit_mib=TMP_MIB))
    _cleanup()
    from labkit.hub import accounts

    for name in STUDENTS:  # serve creates them too; here first, so that their uids are known
        accounts.ensure_system_user(name, role="student")
    artifacts = Path(os.environ.get("LABKIT_ARTIFACTS",
                                    Path(__file__).parents[2] / "test-artifacts"))
    artifacts.mkdir(parents=True, exist_ok=True)
    log_path = artifacts / "hub-crash.log"
    log_path.write_bytes(b"")
    hub = CrashHub(state.root, state.settings().port, log_path)
    try:
        yield hub
    finally:
        from labkit.hub.lifetime import run_processes

        for run in hub.runs:  # the supervisors this test started: the rest dies with them
            if run.proc.poll() is None:
                run.proc.kill()
                run.proc.wait()
        for pid in run_processes(state.root):  # marked as this test's hub (labkit.hub.lifetime)
            os.kill(pid, signal.SIGKILL)
        _cleanup()
        import shutil

        shutil.rmtree(parent, ignore_errors=True)


def test_the_hub_survives_a_crash_and_a_reboot_and_leaves_no_orphan(
        crash_hub: CrashHub) -> None:
    hub = crash_hub
    state = hub.state_dir
    # 1. two students working
    first = hub.start()
    for name in STUDENTS:
        _work(hub, name, write=f"{name}의 메모: 크래시 전에 저장")
    # 2. the hub killed hard: what it started dies with it
    before, hub_side = CrashHub.kill_hard(first)
    assert len(hub_side) >= 2 + 3 + len(STUDENTS)  # supervisor, hub, proxy, 2 services, servers
    left = _wait_gone(hub_side, timeout_s=10)
    assert not left, f"orphans of the killed hub: {_describe(left)}"
    # 3. started again: both students back, nothing of the first run left
    second = hub.start()
    for name in STUDENTS:
        assert _work(hub, name, write=None) == f"{name}의 메모: 크래시 전에 저장"
    left = _alive(before)
    assert not left, f"processes of the first run after the restart: {_describe(left)}"
    routes = set(requests.get(  # the new proxy holds only this run's routes
        f"http://127.0.0.1:{HubState(state).ports()['proxy_api']}/api/routes",
        headers={"Authorization": f"token {(state / 'proxy_token').read_text().strip()}"},
        timeout=10).json())
    assert routes <= {"/", "/services/classpage", *(f"/user/{n}" for n in STUDENTS)}, routes
    # 4. a reboot: killed, homes unmounted, cgroups gone, pid files naming another program
    before, _ = CrashHub.kill_hard(second)
    _wait_gone(before, timeout_s=10)
    from labkit.hub.limits import Limits, StudentCgroup, detect_mechanism

    mechanism = detect_mechanism()
    images = disk.probe().works
    for name in STUDENTS:
        home = disk.StudentDisk(system_username(name), DISK_MIB, state / "homes")
        if images:
            assert home.mounted()
            assert disk.unmount_home(home.home)
            assert not home.mounted()
        if mechanism.startswith("cgroup"):
            StudentCgroup(system_username(name), Limits(), mechanism).remove()
    other = subprocess.Popen(["sleep", "600"])  # the program a reboot gave the old pids to
    try:
        for pid_file in ("proxy.pid", "jupyterhub.pid", "labkit-hub.pid"):
            (state / pid_file).write_text(f"{other.pid}\n")
        third = hub.start()
        for name in STUDENTS:
            assert _work(hub, name, write=None) == f"{name}의 메모: 크래시 전에 저장"
            if images:
                assert disk.StudentDisk(system_username(name), DISK_MIB,
                                        state / "homes").mounted()
        assert other.poll() is None, "the start killed a program that got an old pid"
        left = _alive(before)
        assert not left, f"processes of the run before the reboot: {_describe(left)}"
        # 5. Ctrl+C: the whole hub down within 10 s, no traceback, nothing left
        everything = _everything(third)
        size = hub.log_path.stat().st_size
        start = time.monotonic()
        third.proc.send_signal(signal.SIGINT)
        third.proc.wait(timeout=STOP_DEADLINE_S + 5)
        took = time.monotonic() - start
        assert took < STOP_DEADLINE_S, f"Ctrl+C took {took:.1f} s"
        left = _wait_gone(everything, timeout_s=1)
        assert not left, f"left after Ctrl+C: {_describe(left)}"
        with open(hub.log_path, "rb") as log:
            log.seek(size)
            after = log.read().decode(errors="replace")
        assert "Traceback" not in after, after[-3000:]
        assert third.proc.returncode == 0, after[-2000:]
    finally:
        other.kill()
        other.wait()
