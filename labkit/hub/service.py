"""The class hub as a systemd service: it comes back after a reboot or a crash by itself.

``python -m labkit.hub install-service`` (``make hub-service ROSTER=... TEACHER=...``) writes
``/etc/systemd/system/labkit-hub.service`` and enables it; ``uninstall-service`` stops and
removes it; ``status`` says whether it is installed and running. The unit follows The Littlest
JupyterHub's ``tljh/systemd-units/jupyterhub.service`` (``User=root``, ``Restart=always``,
``WorkingDirectory`` the state directory, ``WantedBy=multi-user.target``), started after the
network is up (systemd.special(7): ``network-online.target``). ``ExecStart`` is ``python -m
labkit.hub --state-dir DIR serve``: the roster, the teacher and every setting come from the
state directory (``settings.json``, ``roster.json``), as the teacher last set them.

Unlike TLJH's unit, no ``PrivateTmp``/``PrivateDevices``/``ProtectKernelModules``: the hub
loop-mounts each student's home image (``/dev/loop*``, :mod:`labkit.hub.disk`), and a mount
namespace of the unit's own would hide those mounts from the operator's shell and backups.
``KillMode=mixed``: ``systemctl stop`` sends SIGTERM to the hub's supervisor only (it stops
JupyterHub in order, :mod:`labkit.hub.lifetime`), then SIGKILL to whatever is left in the unit's
cgroup after ``TimeoutStopSec``.

Where systemd is not PID 1 (a container, CI; sd_booted(3): ``/run/systemd/system`` missing),
the commands change nothing and say so (:class:`NoSystemd`).
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from labkit.hub.lifetime import STOP_DEADLINE_S

__all__ = ["UNIT_DIR", "UNIT_NAME", "NoSystemd", "ServiceStatus", "exec_start", "install",
           "parse_unit", "service_status", "systemd_running", "uninstall", "unit_text"]

UNIT_NAME = "labkit-hub.service"
#: Where an administrator's own units live (systemd.unit(5), "System Unit Search Path").
UNIT_DIR = Path("/etc/systemd/system")
#: sd_booted(3): systemd is the init system exactly when this directory exists.
SYSTEMD_RUN_DIR = Path("/run/systemd/system")
#: Seconds between a crash and the restart (systemd's default 100 ms would spin on a
#: configuration error; TLJH keeps the default). [s]
RESTART_SEC = 2
#: ``systemctl stop`` waits this long before SIGKILL: the supervisor's own deadline plus margin
#: (:data:`labkit.hub.lifetime.STOP_DEADLINE_S`). [s]
TIMEOUT_STOP_SEC = int(STOP_DEADLINE_S) + 10

Systemctl = Callable[[Sequence[str]], subprocess.CompletedProcess[str]]


class NoSystemd(RuntimeError):
    """systemd is not this machine's init (PID 1): no service can be installed."""


def systemd_running(run_dir: Path = SYSTEMD_RUN_DIR) -> bool:
    """Return whether systemd is PID 1 here (sd_booted(3))."""
    return run_dir.is_dir()


def _systemctl(args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["systemctl", *args], capture_output=True, text=True, check=False)


def unit_text(state_dir: Path, python: str = sys.executable) -> str:
    """Return the unit file of the hub whose state lives in ``state_dir``.

    Parameters
    ----------
    state_dir : Path
        The hub's state directory (absolute).
    python : str
        The interpreter with labkit and jupyterhub (default: this one; a virtual environment's
        ``bin/python``, not the file it links to).

    Raises
    ------
    ValueError
        If ``state_dir`` is not absolute or a path holds a character systemd would misread.
    """
    state = Path(state_dir)
    if not state.is_absolute():
        raise ValueError(f"state_dir must be absolute, got {str(state)!r}")
    for value in (str(state), python):
        if any(ch in value for ch in "\n\"'\\%$ "):
            raise ValueError(f"path must not hold spaces, quotes, %, $ or \\: {value!r}")
    bindir = Path(python).parent
    return f"""\
# The labkit class hub (python -m labkit.hub install-service; labkit/hub/service.py).
# Settings, roster and teacher: {state}/settings.json and roster.json.
[Unit]
Description=labkit class hub (JupyterHub)
Documentation=file://{Path(__file__).resolve().parents[2] / "README.md"}
Wants=network-online.target
After=network-online.target

[Service]
Type=simple
User=root
WorkingDirectory={state}
Environment=LABKIT_HUB_STATE={state}
Environment=PATH={bindir}:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
ExecStart={python} -m labkit.hub --state-dir {state} serve
Restart=always
RestartSec={RESTART_SEC}
KillMode=mixed
TimeoutStopSec={TIMEOUT_STOP_SEC}

[Install]
WantedBy=multi-user.target
"""


def parse_unit(text: str) -> dict[str, dict[str, list[str]]]:
    """Return a unit file's ``{section: {key: [values...]}}`` (systemd.syntax(7)).

    Keys may repeat (``Environment=``); comments start with ``#`` or ``;``.

    Raises
    ------
    ValueError
        On a line outside a section or without ``=``.
    """
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
            continue
        key, eq, value = line.partition("=")
        if current is None or not eq:
            raise ValueError(f"line {number}: {raw!r} is not 'Key=value' inside a [Section]")
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def exec_start(text: str) -> list[str]:
    """Return the unit's ``ExecStart`` as an argv list.

    Raises
    ------
    ValueError
        If the unit has no single ``ExecStart``.
    """
    values = parse_unit(text).get("Service", {}).get("ExecStart", [])
    if len(values) != 1:
        raise ValueError(f"the unit needs exactly one ExecStart, has {len(values)}")
    return shlex.split(values[0])


def _require_systemd(running: bool | None) -> None:
    if not (systemd_running() if running is None else running):
        raise NoSystemd("systemd is not PID 1 here (no /run/systemd/system): nothing changed")


def _checked(systemctl: Systemctl, *args: str) -> None:
    done = systemctl(list(args))
    if done.returncode:
        raise OSError(f"systemctl {' '.join(args)}: {(done.stderr or done.stdout).strip()}")


def install(state_dir: Path, *, unit_dir: Path | None = None, python: str = sys.executable,
            systemctl: Systemctl | None = None, systemd: bool | None = None) -> Path:
    """Write the unit, reload systemd, enable and start it; return the unit file's path.

    Raises
    ------
    NoSystemd
        Where systemd is not PID 1 (before anything is written).
    OSError
        If ``systemctl`` fails (its message included).
    """
    _require_systemd(systemd)
    text = unit_text(state_dir, python)
    unit_dir, systemctl = unit_dir or UNIT_DIR, systemctl or _systemctl
    unit_dir.mkdir(parents=True, exist_ok=True)
    path = unit_dir / UNIT_NAME
    tmp = path.with_name(f".{UNIT_NAME}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.chmod(0o644)
    tmp.replace(path)
    _checked(systemctl, "daemon-reload")
    _checked(systemctl, "enable", "--now", UNIT_NAME)
    return path


def uninstall(*, unit_dir: Path | None = None, systemctl: Systemctl | None = None,
              systemd: bool | None = None) -> bool:
    """Stop and disable the service and remove its unit; return whether one was installed.

    Raises
    ------
    NoSystemd
        Where systemd is not PID 1 (nothing is removed).
    """
    _require_systemd(systemd)
    path, systemctl = (unit_dir or UNIT_DIR) / UNIT_NAME, systemctl or _systemctl
    if not path.exists():
        return False
    systemctl(["disable", "--now", UNIT_NAME])  # whatever its state, it goes
    path.unlink()
    _checked(systemctl, "daemon-reload")
    return True


@dataclass(frozen=True)
class ServiceStatus:
    """Whether the hub's unit is installed, and what systemd says of it.

    ``enabled`` / ``active``: ``systemctl is-enabled`` / ``is-active``'s word ("enabled",
    "active", "inactive", "failed", ...), ``None`` where systemd is not running.
    """

    unit: str
    installed: bool
    systemd: bool
    enabled: str | None
    active: str | None

    @property
    def running(self) -> bool:
        """Whether systemd runs the service now."""
        return self.active == "active"


def service_status(*, unit_dir: Path | None = None, systemctl: Systemctl | None = None,
                   systemd: bool | None = None) -> ServiceStatus:
    """Return the service's :class:`ServiceStatus` (never raises for a missing systemd)."""
    path, systemctl = (unit_dir or UNIT_DIR) / UNIT_NAME, systemctl or _systemctl
    running = systemd_running() if systemd is None else systemd
    if not running:
        return ServiceStatus(str(path), path.exists(), False, None, None)
    words = [systemctl([verb, UNIT_NAME]).stdout.strip() or "unknown"
             for verb in ("is-enabled", "is-active")]
    return ServiceStatus(str(path), path.exists(), True, words[0], words[1])
