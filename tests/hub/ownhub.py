"""A class hub of a test's own (its own roster, teacher and port), started as the operator does.

For the live tests that need a hub set up differently from the session's (``conftest.hub``):
``serve --self-signed`` (test_hub_tls.py), a short culler timeout (test_hub_warm.py). Their
accounts are named apart (``jupyter-lktls-*``, ``jupyter-lkwarm-*``), so both hubs can run at
once; they are removed at the end, with the state.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.hub.conftest import _free_port


@dataclass
class OwnHub:
    """A running hub: its port, state directory and log."""

    port: int
    state: Path
    log_path: Path

    def log(self) -> str:
        """The hub's output so far."""
        return self.log_path.read_text(errors="replace")


def _cleanup(names: Sequence[str]) -> None:
    from labkit.hub.accounts import remove_system_user
    from labkit.hub.limits import Limits, StudentCgroup, detect_mechanism
    from labkit.hub.roster import system_username
    from labkit.hub.spawner import kill_user_processes

    mechanism = detect_mechanism()
    for name in names:
        kill_user_processes(system_username(name))
        remove_system_user(name)
        if mechanism.startswith("cgroup"):
            StudentCgroup(system_username(name), Limits(), mechanism).remove()


@contextmanager
def own_hub(students: dict[str, str], teacher: str, serve_args: Sequence[str],
            ready: Callable[[OwnHub], bool], passwords: dict[str, str] | None = None,
            **settings: Any) -> Iterator[OwnHub]:
    """Run ``python -m labkit.hub serve`` for ``students`` (username -> display name) until the
    block ends; ``ready(hub)`` says when it answers (polled for at most 10 min). ``passwords``
    (username -> password, the teacher's too) are set by ``roster set-password`` first, as the
    teacher does (no first-use claims)."""
    from labkit.hub.state import HubSettings, HubState

    parent = Path(tempfile.mkdtemp(prefix="labkit-hub-own-", dir="/var/lib"))
    parent.chmod(0o755)  # as conftest: only the state's own 0700 protects it
    state, roster = parent / "state", parent / "class.csv"
    roster.write_text("username,display_name\n" + "".join(
        f"{n},{d}\n" for n, d in students.items()), encoding="utf-8")
    port = _free_port()
    HubState(state).save_settings(HubSettings(teacher=teacher, port=port, disk_limit_mib=128,
                                              tmp_limit_mib=32, **settings))
    names = [*students, teacher]
    _cleanup(names)
    hub = OwnHub(port, state, parent / "hub.log")
    if passwords:
        from tests.hub.conftest import roster_command

        roster_command(state, "import", str(roster))
        for name, password in passwords.items():
            roster_command(state, "set-password", name, stdin=password + "\n")
    with open(hub.log_path, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "labkit.hub", "--state-dir", str(state),
                                 "serve", "--roster", str(roster), "--teacher", teacher,
                                 *serve_args], stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, "LABKIT_GPU": "sim:H100-80GB"})
    try:
        deadline = time.monotonic() + 600
        while not ready(hub):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the hub did not start:\n{hub.log()[-4000:]}")
            time.sleep(0.5)
        yield hub
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        _cleanup(names)
        shutil.rmtree(parent, ignore_errors=True)
