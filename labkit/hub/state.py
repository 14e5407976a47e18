"""The hub's private state directory: database, secrets, roster and the teacher's settings.

JupyterHub keeps its database (``jupyterhub.sqlite``), cookie secret and the proxy's auth token;
labkit adds the imported roster, the passwords and first-login codes (:mod:`labkit.hub.passwords`),
the token of the teacher's commands on a running hub (:mod:`labkit.hub.sessions`) and the
teacher's settings. All of
it lives in one directory that only the hub's own account can read (0700, files 0600), never in
the repository (JupyterHub "Security overview": the cookie secret and proxy token let anyone act
as the hub). Default: ``/var/lib/labkit-hub`` when the hub runs as root (the FHS place for state,
as TLJH's ``/opt/tljh/state``), else ``$XDG_STATE_HOME/labkit-hub`` (XDG base directory spec;
``~/.local/state`` when unset). ``$LABKIT_HUB_STATE`` overrides it (tests use a temp dir).
"""

from __future__ import annotations

import json
import os
import secrets
import stat
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from labkit.hub.passwords import Accounts
from labkit.hub.roster import Student

__all__ = ["DEFAULT_CULL_TIMEOUT_S", "HubSettings", "HubState", "cull_every_s",
           "default_state_dir"]

ROOT_STATE_DIR = Path("/var/lib/labkit-hub")


def default_state_dir() -> Path:
    """Return where the hub keeps its state (see the module docstring)."""
    override = os.environ.get("LABKIT_HUB_STATE")
    if override:
        return Path(override)
    if os.geteuid() == 0:
        return ROOT_STATE_DIR
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "labkit-hub"


#: Idle time before the culler stops a student's server, unless the teacher sets another: TLJH's
#: default (https://tljh.jupyter.org, "Culling idle notebook servers": 600 s). [s]
DEFAULT_CULL_TIMEOUT_S = 600


def cull_every_s(timeout_s: int) -> int:
    """Return how often the idle culler looks for a ``timeout_s`` timeout: half of it, 10-60 s.

    The same on one server (``jupyterhub-idle-culler --cull-every``) and on Kubernetes (the
    chart's ``cull.every``), so a server is stopped at most a minute after its timeout. [s]
    """
    return max(10, min(60, int(timeout_s) // 2))


#: The teacher's choices of GPU share (labkit.hub.gpushare.POLICIES).
GPU_POLICIES = ("auto", "mig", "whole", "shared")


@dataclass
class HubSettings:
    """What the teacher chose for the class (saved in the state directory).

    Attributes
    ----------
    teacher : str
        The teacher's hub username (a JupyterHub admin).
    host, port : str, int
        Where the proxy listens for browsers.
    cull_timeout_s : int
        Idle student servers are stopped after this long (jupyterhub-idle-culler; TLJH's
        default is 600 s). [s]
    mem_limit_mib : int
        Memory of one student's server and kernels together. [MiB]
    cpu_limit : float
        CPU cores one student may use. [cores]
    nproc_limit : int
        Processes and threads one student may run at once (stops a fork bomb; a server
        and a kernel use ~100 threads).
    concurrent_spawn_limit : int
        Student servers starting at once (JupyterHub's ``concurrent_spawn_limit``).
    gpu_policy : {"auto", "mig", "whole", "shared"}
        How students share the lab GPU (:mod:`labkit.hub.gpushare`).
    disk_limit_mib : int
        Each student's home: the size of their ext4 image (:mod:`labkit.hub.disk`). [MiB]
    tmp_limit_mib : int
        Each student server's private ``/tmp`` and ``/var/tmp`` (tmpfs,
        :mod:`labkit.hub.isolation`). [MiB]
    """

    teacher: str = ""
    host: str = "127.0.0.1"
    port: int = 8000
    cull_timeout_s: int = DEFAULT_CULL_TIMEOUT_S
    mem_limit_mib: int = 2048
    cpu_limit: float = 1.0
    nproc_limit: int = 512
    concurrent_spawn_limit: int = 10
    gpu_policy: str = "auto"
    disk_limit_mib: int = 2048
    tmp_limit_mib: int = 256
    extra: dict[str, Any] = field(default_factory=dict)

    def validate(self) -> HubSettings:
        """Return self if every value is usable.

        Raises
        ------
        ValueError
            On a port outside 1-65535 or a non-positive limit.
        """
        if not 0 < int(self.port) < 65536:
            raise ValueError(f"port must be in 1-65535, got {self.port!r}")
        for name in ("cull_timeout_s", "mem_limit_mib", "nproc_limit", "concurrent_spawn_limit",
                     "tmp_limit_mib"):
            if int(getattr(self, name)) <= 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)!r}")
        if int(self.disk_limit_mib) < 16:
            raise ValueError(f"disk_limit_mib must be >= 16, got {self.disk_limit_mib!r}")
        if not float(self.cpu_limit) > 0:
            raise ValueError(f"cpu_limit must be > 0, got {self.cpu_limit!r}")
        if self.gpu_policy not in GPU_POLICIES:
            raise ValueError(f"gpu_policy must be one of {GPU_POLICIES}, got {self.gpu_policy!r}")
        return self


def _private_dir(path: Path) -> Path:
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.stat()
    if info.st_uid != os.geteuid():
        raise PermissionError(f"{path} belongs to uid {info.st_uid}, not to the hub "
                              f"(uid {os.geteuid()}): choose another LABKIT_HUB_STATE")
    if stat.S_IMODE(info.st_mode) != 0o700:
        os.chmod(path, 0o700)
    return path


def _write_private(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(tmp, path)


class HubState:
    """The hub's private state directory (created 0700 on first use).

    Parameters
    ----------
    root : Path, optional
        The directory (default :func:`default_state_dir`).

    Raises
    ------
    PermissionError
        If the directory exists and belongs to another account.
    """

    def __init__(self, root: Path | None = None) -> None:
        self.root = _private_dir(Path(root or default_state_dir()).resolve())

    @property
    def db_url(self) -> str:
        """JupyterHub's database URL (sqlite in the state directory)."""
        return f"sqlite:///{self.root / 'jupyterhub.sqlite'}"

    @property
    def cookie_secret_file(self) -> Path:
        """JupyterHub's cookie secret (JupyterHub creates it 0600)."""
        return self.root / "jupyterhub_cookie_secret"

    @property
    def images_dir(self) -> Path:
        """The students' home images (:mod:`labkit.hub.disk`), inside the private directory."""
        return self.root / "homes"

    @property
    def accounts(self) -> Accounts:
        """The passwords and first-login codes (:class:`labkit.hub.passwords.Accounts`)."""
        return Accounts(self.root)

    def _secret(self, name: str) -> str:
        path = self.root / name
        if not path.exists():
            _write_private(path, secrets.token_hex(32))
        return path.read_text(encoding="utf-8").strip()

    def proxy_token(self) -> str:
        """Return the proxy's auth token, created (0600) on first use."""
        return self._secret("proxy_token")

    def roster_api_token(self) -> str:
        """Return the API token of the teacher's commands on a running hub (service
        ``labkit-roster``, :mod:`labkit.hub.sessions`), created (0600) on first use."""
        return self._secret("roster_api_token")

    # --- ports -----------------------------------------------------------------------------

    def save_ports(self, ports: dict[str, int]) -> None:
        """Record the ports this start of the hub listens on (``public``, ``hub``, ``proxy_api``,
        ``classpage``; :func:`labkit.hub.config.configure` writes them)."""
        _write_private(self.root / "ports.json", json.dumps(ports, indent=1))

    def ports(self) -> dict[str, int]:
        """Return the ports of the last start (empty before the first)."""
        path = self.root / "ports.json"
        if not path.exists():
            return {}
        return {str(k): int(v) for k, v in json.loads(path.read_text(encoding="utf-8")).items()}

    # --- roster ----------------------------------------------------------------------------

    def save_roster(self, students: list[Student]) -> None:
        """Replace the stored roster."""
        rows = [asdict(s) for s in students]
        _write_private(self.root / "roster.json", json.dumps(rows, ensure_ascii=False, indent=1))

    def roster(self) -> list[Student]:
        """Return the stored roster (empty before the first import)."""
        path = self.root / "roster.json"
        if not path.exists():
            return []
        return [Student(**row) for row in json.loads(path.read_text(encoding="utf-8"))]

    # --- settings --------------------------------------------------------------------------

    def save_settings(self, settings: HubSettings) -> None:
        """Store the teacher's settings."""
        _write_private(self.root / "settings.json",
                       json.dumps(asdict(settings.validate()), ensure_ascii=False, indent=1))

    def settings(self) -> HubSettings:
        """Return the stored settings (defaults before the first ``serve``)."""
        path = self.root / "settings.json"
        if not path.exists():
            return HubSettings()
        return HubSettings(**json.loads(path.read_text(encoding="utf-8"))).validate()
