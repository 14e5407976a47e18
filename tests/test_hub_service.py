"""The hub's systemd unit (labkit.hub.service) and its commands, without a running systemd.

The unit is checked by ``systemd-analyze verify`` where the tool exists and by a parser test
everywhere; its ``ExecStart`` is run by the crash test (tests/hub/test_hub_crash.py). Installing
is checked against a recording ``systemctl`` in a temp unit directory; where systemd is not
PID 1 (this CI) the real command changes nothing and says so in Korean.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from labkit.hub import __main__ as hub_main
from labkit.hub import service
from labkit.hub.lifetime import STOP_DEADLINE_S
from tests.test_hub_text import english_outside_brackets

STATE = Path("/var/lib/labkit-hub")


class Recorder:
    """A ``systemctl`` that records its calls and answers ``is-enabled``/``is-active``."""

    def __init__(self, enabled: str = "enabled", active: str = "active") -> None:
        self.calls: list[list[str]] = []
        self.words = {"is-enabled": enabled, "is-active": active}

    def __call__(self, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
        self.calls.append(list(args))
        return subprocess.CompletedProcess(list(args), 0, self.words.get(args[0], "") + "\n", "")


def test_the_unit_restarts_the_hub_after_the_network_at_boot() -> None:
    unit = service.parse_unit(service.unit_text(STATE, python="/srv/labkit/.venv/bin/python"))
    assert unit["Unit"]["After"] == ["network-online.target"]
    assert unit["Unit"]["Wants"] == ["network-online.target"]
    svc = unit["Service"]
    assert svc["Restart"] == ["always"] and svc["User"] == ["root"]
    assert svc["WorkingDirectory"] == [str(STATE)]
    assert f"LABKIT_HUB_STATE={STATE}" in svc["Environment"]
    assert any(e.startswith("PATH=/srv/labkit/.venv/bin:") for e in svc["Environment"])
    # SIGTERM to the supervisor only; the rest of the cgroup is killed after the stop deadline
    assert svc["KillMode"] == ["mixed"] and int(svc["TimeoutStopSec"][0]) > STOP_DEADLINE_S
    # no private mount namespace: the students' home mounts must stay visible
    assert not {"PrivateTmp", "PrivateDevices", "ProtectSystem"} & set(svc)
    assert unit["Install"]["WantedBy"] == ["multi-user.target"]
    assert service.exec_start(service.unit_text(STATE, python="/srv/labkit/.venv/bin/python")) \
        == ["/srv/labkit/.venv/bin/python", "-m", "labkit.hub", "--state-dir", str(STATE),
            "serve"]


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze here")
def test_systemd_analyze_verifies_the_unit(tmp_path: Path) -> None:
    path = tmp_path / service.UNIT_NAME
    path.write_text(service.unit_text(tmp_path, python=sys.executable), encoding="utf-8")
    done = subprocess.run(["systemd-analyze", "verify", str(path)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert service.UNIT_NAME not in done.stderr, done.stderr


@pytest.mark.parametrize(("state_dir", "python"), [
    (Path("var/lib/labkit-hub"), "/usr/bin/python3"),  # relative
    (Path("/var/lib/labkit hub"), "/usr/bin/python3"),  # a space splits ExecStart
    (STATE, "/opt/py%n/bin/python"),  # % is a systemd specifier
    (Path("/var/lib/x\nExecStartPre=/bin/rm"), "/usr/bin/python3"),  # a new line: a new key
])
def test_the_unit_refuses_paths_systemd_would_misread(state_dir: Path, python: str) -> None:
    with pytest.raises(ValueError, match="state_dir|path"):
        service.unit_text(state_dir, python=python)


@pytest.mark.parametrize("text", ["ExecStart=/bin/true\n", "[Service]\nnot a key\n"])
def test_parse_unit_names_the_bad_line(text: str) -> None:
    with pytest.raises(ValueError, match="line"):
        service.parse_unit(text)


def test_exec_start_needs_exactly_one() -> None:
    with pytest.raises(ValueError, match="exactly one ExecStart"):
        service.exec_start("[Service]\nExecStart=/bin/a\nExecStart=/bin/b\n")


def test_systemd_running_agrees_with_pid_1() -> None:
    # the oracle: what PID 1 is, read from /proc, not the sd_booted(3) check service.py uses
    init = Path("/proc/1/comm").read_text().strip()
    assert service.systemd_running() == (init == "systemd")


def test_install_enables_and_uninstall_removes(tmp_path: Path) -> None:
    systemctl = Recorder()
    path = service.install(STATE, unit_dir=tmp_path, python="/usr/bin/python3",
                           systemctl=systemctl, systemd=True)
    assert path == tmp_path / "labkit-hub.service"
    assert path.stat().st_mode & 0o777 == 0o644
    assert service.exec_start(path.read_text())[-1] == "serve"
    assert systemctl.calls == [["daemon-reload"], ["enable", "--now", "labkit-hub.service"]]
    found = service.service_status(unit_dir=tmp_path, systemctl=systemctl, systemd=True)
    assert found.installed and found.running and found.enabled == "enabled"
    systemctl.calls.clear()
    assert service.uninstall(unit_dir=tmp_path, systemctl=systemctl, systemd=True) is True
    assert not path.exists()
    assert systemctl.calls == [["disable", "--now", "labkit-hub.service"], ["daemon-reload"]]
    assert service.uninstall(unit_dir=tmp_path, systemctl=systemctl, systemd=True) is False
    assert not service.service_status(unit_dir=tmp_path, systemctl=systemctl,
                                      systemd=True).installed


def test_a_failing_systemctl_is_reported(tmp_path: Path) -> None:
    def refuses(args: Sequence[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(list(args), 1, "", "Access denied")

    with pytest.raises(OSError, match="systemctl daemon-reload: Access denied"):
        service.install(STATE, unit_dir=tmp_path, systemctl=refuses, systemd=True)


@pytest.mark.parametrize("command", [["install-service", "--teacher", "kim"],
                                     ["uninstall-service"]])
def test_without_systemd_the_commands_change_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]) -> None:
    monkeypatch.setattr(service, "systemd_running", lambda *_: False)
    monkeypatch.setattr(service, "UNIT_DIR", tmp_path / "units")
    roster = tmp_path / "class.csv"
    roster.write_text("username,display_name\nminji,김민지\n", encoding="utf-8")
    argv = ["--state-dir", str(tmp_path / "state"), *command]
    if command[0] == "install-service":
        argv += ["--roster", str(roster)]
    with pytest.raises(SystemExit) as stop:
        hub_main.main(argv)
    text = str(stop.value.code)
    assert "systemd" in text and "아무것도 바꾸지 않았습니다" in text, text
    assert not english_outside_brackets(text), text
    assert not (tmp_path / "state").exists() and not (tmp_path / "units").exists()


def test_install_service_saves_the_class_then_installs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from labkit.hub import accounts
    from labkit.hub.state import HubState

    systemctl = Recorder()
    monkeypatch.setattr(service, "systemd_running", lambda *_: True)
    monkeypatch.setattr(service, "UNIT_DIR", tmp_path / "units")
    monkeypatch.setattr(service, "_systemctl", systemctl)
    monkeypatch.setattr(accounts, "require_root", lambda: None)
    roster = tmp_path / "class.csv"
    roster.write_text("username,display_name\nminji,김민지\njun,이준\n", encoding="utf-8")
    HubState(tmp_path / "state").accounts.set_password("kim", "teacher-pass-1")  # never first-use
    hub_main.main(["--state-dir", str(tmp_path / "state"), "install-service", "--roster",
                   str(roster), "--teacher", "kim", "--port", "8123"])
    state = HubState(tmp_path / "state")
    assert state.settings().teacher == "kim" and state.settings().port == 8123
    assert [s.username for s in state.roster()] == ["minji", "jun"]
    unit = (tmp_path / "units" / "labkit-hub.service").read_text()
    assert service.exec_start(unit)[-3:] == ["--state-dir", str(state.root), "serve"]
    assert ["enable", "--now", "labkit-hub.service"] in systemctl.calls
    for line in capsys.readouterr().out.splitlines():
        assert not english_outside_brackets(line), line


@pytest.mark.parametrize(("found", "expected"), [
    (service.ServiceStatus("/etc/systemd/system/labkit-hub.service", False, True, None, None),
     "설치되지 않음"),
    (service.ServiceStatus("/etc/systemd/system/labkit-hub.service", True, True, "enabled",
                           "active"), "실행 중"),
    (service.ServiceStatus("/etc/systemd/system/labkit-hub.service", True, True, "enabled",
                           "failed"), "실행 중이 아님"),
    (service.ServiceStatus("/etc/systemd/system/labkit-hub.service", True, False, None, None),
     "시작되지 않습니다"),
])
def test_status_says_whether_the_service_runs(monkeypatch: pytest.MonkeyPatch,
                                              found: service.ServiceStatus,
                                              expected: str) -> None:
    monkeypatch.setattr(service, "service_status", lambda **_: found)
    line = hub_main._service_line(hub_main._service_doc())
    assert expected in line and not english_outside_brackets(line), line
