"""The hub's processes die with it (labkit.hub.lifetime), on plain processes (no hub, no root).

The live proof on the real hub, with the proxy, services and students' servers, is the crash
test (tests/hub/test_hub_crash.py); here each mechanism alone, quickly: the tied wrapper dies
with its parent, a stale pid file never kills a program that got the pid, a hub still running
on the state directory is refused, the supervisor stops a child that ignores SIGTERM in time.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from labkit.hub import lifetime

if not sys.platform.startswith("linux"):
    pytest.skip("prctl(PR_SET_PDEATHSIG) is Linux's", allow_module_level=True)

ENV = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}


def _gone(pid: int, timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


def test_a_tied_process_dies_with_its_parent(tmp_path: Path) -> None:
    # the parent: a Python that starts the tied sleep, prints its pid, then waits to be killed
    parent = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import subprocess, sys, time
        from labkit.hub.lifetime import tied
        child = subprocess.Popen(tied(["sleep", "60"], {str(tmp_path)!r}))
        print(child.pid, flush=True)
        time.sleep(60)
        """)], stdout=subprocess.PIPE, text=True, env=ENV)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    deadline = time.monotonic() + 10
    while Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")[0] != b"sleep":
        assert time.monotonic() < deadline, "the wrapper never exec'd the command"
        time.sleep(0.05)
    assert lifetime.run_processes(tmp_path) == [child]  # marked with the run's directory
    parent.kill()
    parent.wait()
    assert _gone(child), "the tied process outlived its parent"


def test_the_wrapper_exits_when_its_parent_is_already_gone() -> None:
    done = subprocess.run([sys.executable, "-m", "labkit.hub.lifetime", "--parent", "1",
                           "--run", "/nowhere", "--", "sleep", "60"], env=ENV, timeout=30,
                          check=False)
    assert done.returncode == 1


@pytest.mark.parametrize("argv", [[], ["--parent", "1", "--", "x"], ["--run", "d", "sleep"]])
def test_the_wrapper_explains_a_bad_command_line(argv: list[str]) -> None:
    with pytest.raises(SystemExit, match="usage"):
        lifetime.main(argv)


def test_a_stale_pid_file_never_kills_the_program_that_got_the_pid(tmp_path: Path) -> None:
    # after a reboot the proxy's old pid belongs to another program (JupyterHub's own check
    # would SIGTERM it: it only asks whether the pid exists)
    other = subprocess.Popen(["sleep", "60"])
    try:
        for name in ("proxy.pid", "jupyterhub.pid", lifetime.PID_FILE):
            (tmp_path / name).write_text(f"{other.pid}\n")
        found = lifetime.clean_previous_run(tmp_path, [])
        assert other.poll() is None
        assert found == {"hub": 0, "students": 0, "pid_files": 2}
        assert not (tmp_path / "proxy.pid").exists()
    finally:
        other.kill()
        other.wait()


def test_a_hub_still_running_on_the_state_is_refused(tmp_path: Path) -> None:
    hub = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)",
                            "labkit.hub", "serve"])  # its command line reads as a hub's
    try:
        (tmp_path / lifetime.PID_FILE).write_text(f"{hub.pid}\n")
        with pytest.raises(lifetime.HubAlreadyRunning) as err:
            lifetime.clean_previous_run(tmp_path, [])
        assert err.value.pid == hub.pid and hub.poll() is None
    finally:
        hub.kill()
        hub.wait()


def test_roots_processes_are_never_cleaned(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="root"):
        lifetime.clean_previous_run(tmp_path, [1000, 0])


def test_the_supervisor_stops_a_child_that_ignores_sigterm_in_time(tmp_path: Path) -> None:
    stubborn = ("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                "print('up', flush=True); time.sleep(60)")
    script = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from labkit.hub.lifetime import supervise
        sys.exit(supervise([sys.executable, "-c", {stubborn!r}], run_dir=Path({str(tmp_path)!r}),
                           env=dict(__import__("os").environ), cwd=Path("/"), grace_s=1.0))
        """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                            env=ENV)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "up"
    assert (tmp_path / lifetime.PID_FILE).read_text().strip() == str(proc.pid)
    child = lifetime.run_processes(tmp_path)
    assert len(child) == 1
    start = time.monotonic()
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=lifetime.STOP_DEADLINE_S) == 0
    assert time.monotonic() - start < 1.0 + 2.0
    assert _gone(child[0], timeout_s=1)
    assert not (tmp_path / lifetime.PID_FILE).exists()
