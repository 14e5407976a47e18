"""One simulated lab for many processes: the lab's state in a locked file every process reads.

With ``LABKIT_GPU=sim:<models>`` a kernel, a terminal's ``nvitop``, ``gpustat`` and
``python -m labkit.gpu mig -cgi ...`` must see the same lab: a MIG layout made in one process,
a workload a kernel started, an injected fault. :class:`SharedLab` is a
:class:`~labkit.gpu.sim.SimulatedLab` whose state lives in ``<lab dir>/state.json``.

Why a locked state file and not a lab service: a service needs a process that outlives every
client (who starts it, who stops it, what if it dies mid-lesson), a socket and a protocol, and
each NVML call would become a round trip. The lab's shared state is small (MIG mode and
instances, processes, workloads, faults: a few KB) and changes only on a MIG command, a workload
start/stop or a fault; telemetry is computed locally from the shared workload timeline and the
shared wall clock (``origin_epoch``), so every process reads the same power and utilization
without talking to anyone. So: writers take ``fcntl.flock`` on ``<dir>/lock``, re-read, change,
and replace ``state.json`` atomically (write a temporary file, ``os.replace``); readers need no
lock: before each NVML call they ``stat`` the file (about a microsecond) and reload it when its
inode or mtime changed. Nothing to start or stop, and a crashed client leaves a valid file.

Where the lab lives: ``$LABKIT_SIM_DIR/<lab>``, else ``$XDG_RUNTIME_DIR/labkit-sim/<lab>``,
else ``/tmp/labkit-sim-<uid>/<lab>``; ``<lab>`` is ``$LABKIT_SIM_LAB`` or the spec's GPUs
(``H100-80GB``, ``8xH100-80GB``). A per-user base that another user owns is refused (no one can
plant a lab in ``/tmp`` for someone else).

Permissions, as on a real GPU server: the state is readable by everyone who can reach the
directory (0644 files; 0664 when the directory is group-writable). Whoever can write the
directory can start workloads and inject faults (on a real server any user may start CUDA
work); **MIG changes are allowed only to the directory's owner or root** (on a real server only
root may change MIG); everyone else gets ``NVMLError_NoPermission``, as ``nvidia-smi mig`` does for
a non-root user. For a class hub whose student servers run as different system users, the
operator creates a group-writable, setgid directory (``install -d -m 2770 -g students
/srv/labkit-sim``) and sets ``LABKIT_SIM_DIR=/srv/labkit-sim`` in the spawner's environment:
students then share one lab, see each other's workloads (pid, user, command, as ``nvidia-smi``
shows every user's processes), and only the operator changes MIG.

Processes are real: a workload started in a shared lab belongs to the process that started it
(``os.getpid()``, with its ``/proc`` start time), so nvitop and gpustat show its real pid, user
and command; when that process ends, the next reader reaps it and its workload stops.

Not shared (per process): count-limited faults count down in each process; a fault scheduled
with ``at_s`` in the future fires only in the process that scheduled it; pinned readings.

Used in: LABKIT_GPU=sim:... for every process (labkit.gpu.connect, the pynvml hook
labkit.gpu.sim.hook, python -m labkit.gpu)
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import math
import os
import re
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pynvml as N

from labkit.gpu.sim.device import (
    NvmlReturn,
    Workload,
)
from labkit.gpu.sim.lab import SimulatedLab
from labkit.gpu.sim.state import STATE_VERSION, LabState, _proc_start
from labkit.gpumodels import GpuModel

__all__ = ["ENV_DIR", "ENV_LAB", "STATE_VERSION", "SharedLab", "lab_dir", "lab_name",
           "shared_lab"]

#: Environment variable: the base directory of shared labs (a class hub sets it).
ENV_DIR = "LABKIT_SIM_DIR"
#: Environment variable: the lab's name inside the base directory (default: from the spec).
ENV_LAB = "LABKIT_SIM_LAB"
#: How often a reader checks that the lab's processes are still alive. [s]
REAP_INTERVAL_S = 0.5
#: NVML calls that change the lab (run under the writer lock, saved on success).
MUTATING_CALLS = frozenset({
    "nvmlDeviceSetMigMode", "nvmlDeviceCreateGpuInstance",
    "nvmlDeviceCreateGpuInstanceWithPlacement", "nvmlGpuInstanceDestroy",
    "nvmlGpuInstanceCreateComputeInstance", "nvmlGpuInstanceCreateComputeInstanceWithPlacement",
    "nvmlComputeInstanceDestroy", "nvmlDeviceSetPersistenceMode",
})
#: Control-API methods that change the lab (the same lock and save).
CONTROL_MUTATORS = (
    "add_process", "remove_process", "start", "stop", "set_power_limit", "set_ambient",
    "set_mig_rights", "set_reset_possible", "set_legacy_mig_queries", "reset_gpu", "inject",
    "remove_function", "restore_function", "clear_faults", "fail_init", "apply_preset",
    "ecc_error", "pcie_replays", "xid",
)
_SAFE = re.compile(r"[^A-Za-z0-9._+-]")
_labs: dict[Path, SharedLab] = {}
_labs_lock = threading.Lock()


def lab_name(models: Sequence[str]) -> str:
    """Return the default lab name for a list of model short names (``8xH100-80GB``)."""
    env = os.environ.get(ENV_LAB, "").strip()
    if env:
        return _SAFE.sub("_", env)
    if len(set(models)) == 1:
        name = models[0] if len(models) == 1 else f"{len(models)}x{models[0]}"
    else:
        name = "+".join(models)
    return _SAFE.sub("_", name)


def lab_dir(models: Sequence[str]) -> Path:
    """Return the directory of the shared lab for these models (see the module docstring).

    Raises
    ------
    PermissionError
        If the per-user base directory exists but belongs to someone else.
    """
    env = os.environ.get(ENV_DIR, "").strip()
    if env:
        return Path(env) / lab_name(models)
    runtime = os.environ.get("XDG_RUNTIME_DIR", "").strip()
    if runtime and os.path.isdir(runtime) and os.access(runtime, os.W_OK):
        base = Path(runtime) / "labkit-sim"
    else:
        base = Path(tempfile.gettempdir()) / f"labkit-sim-{os.getuid()}"
    with contextlib.suppress(FileNotFoundError):
        owner = base.stat().st_uid
        if owner != os.getuid():
            raise PermissionError(f"{base} belongs to uid {owner}, not to you: refusing a "
                                  f"simulated lab there (set {ENV_DIR} to a directory you trust)")
    return base / lab_name(models)



def _alive(pid: int, start: int | None) -> bool:
    if os.path.isdir("/proc/self"):
        now = _proc_start(pid)
        if now is not None:
            return start is None or now == start
        # another user's process under a hidepid /proc (a class hub's student servers,
        # labkit.hub.isolation) is not listed; kill(pid, 0) still tells whether it exists
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _command(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "python"
    return os.path.basename(raw[0].decode(errors="replace")) or "python"


class SharedLab(LabState):
    """A simulated lab whose state is shared by every process through ``<directory>/state.json``.

    Parameters
    ----------
    models : sequence of GpuModel
        One per GPU; must match the lab already in ``directory`` (if any).
    directory : path
        The lab's directory (created 0755 if missing; see :func:`lab_dir`).
    noise : bool, default True
        Reading jitter, as for :class:`~labkit.gpu.sim.SimulatedLab`.

    Raises
    ------
    ValueError
        If ``directory`` holds a lab with other GPUs or another state version.
    PermissionError
        If the directory cannot be created.

    The clock is always the wall clock, counted from the lab's creation (``origin_epoch`` in
    the state), so all processes agree on time and on every reading.
    """

    def __init__(self, models: Sequence[GpuModel], directory: str | os.PathLike[str], *,
                 noise: bool = True) -> None:
        self._dir = Path(directory)
        self._state_path = self._dir / "state.json"
        self._lock_path = self._dir / "lock"
        self._dir.mkdir(parents=True, exist_ok=True, mode=0o755)
        existing = self._read()
        names = [m.short_name for m in models]
        seed = 0
        if existing is not None:
            if existing.get("version") != STATE_VERSION:
                raise ValueError(f"{self._state_path}: state version {existing.get('version')!r},"
                                 f" this labkit reads {STATE_VERSION}; remove the directory")
            if existing.get("models") != names:
                raise ValueError(f"{self._dir} holds a lab of {existing.get('models')}, not "
                                 f"{names}: set {ENV_LAB} to another name or remove it")
            seed = int(existing.get("seed", 0))
        self._origin = float(existing["origin_epoch"]) if existing else time.time()
        self._stamp: tuple[int, int, int] | None = None
        self._last_reap = 0.0
        self._depth = 0
        self._flock_fd: int | None = None
        self._wkeys: dict[Workload, str] = {}
        self._wseq = 0
        super().__init__(models, seed=seed, clock="wall", noise=noise)
        self._owner = self._dir.stat().st_uid
        with self._exclusive():
            if self._read() is None:
                self._save()

    # --- identity, time, pids ------------------------------------------------------------------

    @property
    def directory(self) -> Path:
        """The lab's directory (``state.json`` and ``lock``)."""
        return self._dir

    @property
    def _epoch_s(self) -> float:
        return self._origin

    def now(self) -> float:
        """Seconds since the lab was created, on the wall clock, in whole ms (all processes)."""
        return math.floor((time.time() - self._origin) * 1000.0) / 1000.0

    def _default_pid(self) -> int:
        return os.getpid()

    def _need_rights(self) -> None:
        """MIG changes: the lab flag, and only the lab directory's owner or root."""
        if not self.mig_rights or os.geteuid() not in (0, self._owner):
            raise NvmlReturn(N.NVML_ERROR_NO_PERMISSION)

    # --- the file ----------------------------------------------------------------------------

    def _read(self) -> dict[str, Any] | None:
        try:
            text = self._state_path.read_text()
        except FileNotFoundError:
            return None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise ValueError(f"{self._state_path}: not a labkit lab state ({err})") from err
        return data if isinstance(data, dict) else None

    @contextlib.contextmanager
    def _exclusive(self) -> Iterator[None]:
        """Hold the thread lock and the writer lock; reload first (re-entrant)."""
        with self._lock:
            if self._depth == 0:
                flags = os.O_RDWR | os.O_CREAT if os.access(self._dir, os.W_OK) else os.O_RDONLY
                fd = os.open(self._lock_path, flags, self._file_mode())
                fcntl.flock(fd, fcntl.LOCK_EX)
                self._flock_fd = fd
                self._stamp = None
                self._refresh(reap=False)
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._flock_fd is not None:
                    fcntl.flock(self._flock_fd, fcntl.LOCK_UN)
                    os.close(self._flock_fd)
                    self._flock_fd = None

    def _file_mode(self) -> int:
        try:
            group_writable = bool(self._dir.stat().st_mode & stat.S_IWGRP)
        except OSError:
            group_writable = False
        return 0o664 if group_writable else 0o644

    def _save(self) -> None:
        data = json.dumps(self._dump(), indent=1, sort_keys=True)
        try:
            fd, tmp = tempfile.mkstemp(dir=self._dir, prefix=".state-", suffix=".json")
        except PermissionError as err:
            raise PermissionError(f"cannot change the shared simulated lab in {self._dir}: "
                                  "the directory is not writable for you") from err
        try:
            with os.fdopen(fd, "w") as handle:
                handle.write(data)
            os.chmod(tmp, self._file_mode())
            os.replace(tmp, self._state_path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        st = self._state_path.stat()
        self._stamp = (st.st_ino, st.st_mtime_ns, st.st_size)

    def _refresh(self, reap: bool = True) -> None:
        """Reload the state if another process changed it; reap dead processes now and then."""
        try:
            st = os.stat(self._state_path)
        except FileNotFoundError:
            return
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        if stamp != self._stamp:
            data = self._read()
            if data is not None:
                self._apply(data)
            self._stamp = stamp
        if reap and time.monotonic() - self._last_reap >= REAP_INTERVAL_S:
            self._last_reap = time.monotonic()
            self._reap()

    def _reap(self) -> None:
        dead = [p.pid for dev in self.devices for p in dev.processes
                if not _alive(p.pid, getattr(p, "proc_start", None))]
        if not dead or not os.access(self._dir, os.W_OK):
            return
        with self._exclusive():
            changed = False
            for pid in dead:
                with contextlib.suppress(ValueError):
                    SimulatedLab.remove_process(self, pid)
                    changed = True
            if changed:
                self._save()

    # --- NVML calls and control API go through the file -----------------------------------------

    def _wrap(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        inner = super()._wrap(name, method)
        if name == "nvmlErrorString":
            return inner
        lab = self
        if name in MUTATING_CALLS:

            def write_call(*args: Any) -> Any:
                with lab._exclusive():
                    result = inner(*args)
                    if result == N.NVML_SUCCESS:
                        try:
                            lab._save()
                        except PermissionError:
                            return N.NVML_ERROR_NO_PERMISSION
                    return result

            write_call.__name__ = write_call.__qualname__ = name
            return write_call

        def read_call(*args: Any) -> Any:
            with lab._lock:
                lab._refresh()
            return inner(*args)

        read_call.__name__ = read_call.__qualname__ = name
        return read_call

    def add_process(self, device: int = 0, *, name: str = "python", used_memory_mib: int = 512,
                    gpu_instance_id: int | None = None, compute_instance_id: int | None = None,
                    pid: int | None = None) -> int:
        """Attach a process (default: this one, with its real pid) to a GPU or MIG device.

        See :meth:`labkit.gpu.sim.SimulatedLab.add_process`.
        """
        with self._exclusive():
            pid = os.getpid() if pid is None else pid
            if name == "python":
                name = _command(pid)
            result = SimulatedLab.add_process(
                self, device, name=name, used_memory_mib=used_memory_mib,
                gpu_instance_id=gpu_instance_id, compute_instance_id=compute_instance_id, pid=pid)
            self._save()
            return result



def _mutator(name: str) -> Callable[..., Any]:
    base = getattr(SimulatedLab, name)

    @functools.wraps(base)
    def method(self: SharedLab, *args: Any, **kwargs: Any) -> Any:
        with self._exclusive():
            result = base(self, *args, **kwargs)
            self._save()
            return result

    return method


for _name in CONTROL_MUTATORS:
    if _name != "add_process":
        setattr(SharedLab, _name, _mutator(_name))


def shared_lab(models: Sequence[str], *, noise: bool = True) -> SharedLab:
    """Return this process's :class:`SharedLab` for these model short names (one per lab dir).

    Raises
    ------
    ValueError
        For an unknown model or a lab directory holding other GPUs.
    PermissionError
        For a lab directory that cannot be used (see :func:`lab_dir`).
    """
    from labkit.data.gpus import load_gpu_model

    directory = lab_dir(models)
    with _labs_lock:
        lab = _labs.get(directory)
        if lab is None:
            lab = SharedLab([load_gpu_model(m) for m in models], directory, noise=noise)
            _labs[directory] = lab
        return lab


def forget_shared_labs() -> None:
    """Drop this process's shared-lab objects (tests; the state files stay)."""
    with _labs_lock:
        _labs.clear()

