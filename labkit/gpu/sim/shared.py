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

from labkit.gpu.sim.activity import scenario
from labkit.gpu.sim.device import (
    ComputeInstance,
    GpuInstance,
    MigDevice,
    NvmlReturn,
    Process,
    SimDevice,
    Workload,
)
from labkit.gpu.sim.lab import SimulatedLab
from labkit.gpu.sim.lab_faults import _Fault
from labkit.gpumodels import GpuModel

__all__ = ["ENV_DIR", "ENV_LAB", "STATE_VERSION", "SharedLab", "lab_dir", "lab_name",
           "shared_lab"]

#: Environment variable: the base directory of shared labs (a class hub sets it).
ENV_DIR = "LABKIT_SIM_DIR"
#: Environment variable: the lab's name inside the base directory (default: from the spec).
ENV_LAB = "LABKIT_SIM_LAB"
#: Format version of ``state.json``; another version is refused with a message.
STATE_VERSION = 1
#: How often a reader checks that the lab's processes are still alive. [s]
REAP_INTERVAL_S = 0.5
#: How long stopped workloads stay in the state (windowed readings look back 1 s; 10 s margin).
HISTORY_S = 10.0
#: NVML calls that change the lab (run under the writer lock, saved on success).
MUTATING_CALLS = frozenset({
    "nvmlDeviceSetMigMode", "nvmlDeviceCreateGpuInstance",
    "nvmlDeviceCreateGpuInstanceWithPlacement", "nvmlGpuInstanceDestroy",
    "nvmlGpuInstanceCreateComputeInstance", "nvmlGpuInstanceCreateComputeInstanceWithPlacement",
    "nvmlComputeInstanceDestroy",
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


def _proc_start(pid: int) -> int | None:
    """Return a process's start time in clock ticks (``/proc/<pid>/stat`` field 22), or None."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    try:
        return int(raw.rsplit(")", 1)[1].split()[19])
    except (IndexError, ValueError):
        return None


def _alive(pid: int, start: int | None) -> bool:
    if os.path.isdir("/proc/self"):
        now = _proc_start(pid)
        return now is not None and (start is None or now == start)
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


class SharedLab(SimulatedLab):
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

    # --- (de)serialisation --------------------------------------------------------------------

    def _dump(self) -> dict[str, Any]:
        now = self.now()
        return {
            "version": STATE_VERSION, "models": [d.model.short_name for d in self.devices],
            "seed": self.seed, "origin_epoch": self._origin, "mig_serial": self._mig_serial,
            "flags": {"mig_rights": self.mig_rights, "reset_possible": self.reset_possible,
                      "legacy_mig_queries": self.legacy_mig_queries},
            "devices": [self._dump_device(dev, now) for dev in self.devices],
            "faults": {name: [[f.code, f.device, f.remaining] for f in faults]
                       for name, faults in self._faults.items() if faults},
            "field_faults": [[d, fid, code] for (d, fid), code in self._field_faults.items()],
            "removed": sorted(n for n in dir(type(self))
                              if n.startswith("nvml") and not hasattr(self._library, n)),
            "init_error": self._init_error,
        }

    def _dump_device(self, dev: SimDevice, now: float) -> dict[str, Any]:
        gis = [{"id": gi.id, "profile_id": gi.profile.id, "start": gi.start,
                "compute_instances": [
                    {"id": ci.id, "profile_id": ci.profile.id, "start": ci.start,
                     "mig_index": ci.mig_device.index if ci.mig_device else None,
                     "uuid": ci.mig_device.uuid if ci.mig_device else None}
                    for ci in sorted(gi.compute_instances.values(), key=lambda c: c.id)]}
               for gi in sorted(dev.gpu_instances.values(), key=lambda g: g.id)]
        procs = [{"pid": p.pid, "name": p.name, "used_memory_mib": p.used_memory_mib,
                  "gi": p.gpu_instance_id, "ci": p.compute_instance_id,
                  "proc_start": getattr(p, "proc_start", None) or _proc_start(p.pid)}
                 for p in dev.processes]
        workloads = []
        for w in dev.workloads:
            if w.stop_s is not None and w.stop_s < now - HISTORY_S:
                continue
            workloads.append({"key": self._key(w), "scenario": w.scenario.name,
                              "gi": w.gpu_instance_id, "ci": w.compute_instance_id, "pid": w.pid,
                              "start_s": w.start_s, "stop_s": w.stop_s, "weight": w.weight,
                              "sms": self._sms(dev, w)})
        return {"mig_current": dev.mig_current, "mig_pending": dev.mig_pending,
                "power_limit_w": dev.power_limit_w, "ambient_c": dev.ambient_c, "lost": dev.lost,
                "ecc": [[k[0], k[1], v] for k, v in dev.ecc.items()],
                "remapped_rows": list(dev.remapped_rows), "pcie_replays": dev.pcie_replays,
                "gpu_instances": gis, "processes": procs, "workloads": workloads}

    def _key(self, w: Workload) -> str:
        key = self._wkeys.get(w)
        if key is None:
            self._wseq += 1
            key = f"{os.getpid()}-{self._wseq}-{w.start_s:.3f}"
            self._wkeys[w] = key
        return key

    @staticmethod
    def _sms(dev: SimDevice, w: Workload) -> int:
        if w.gpu_instance_id is not None and w.gpu_instance_id in dev.gpu_instances:
            return dev.gpu_instances[w.gpu_instance_id].profile.sm_count
        return dev.model.sm_count if w.gpu_instance_id is None else round(
            w.weight * dev.model.sm_count)

    def _apply(self, data: dict[str, Any]) -> None:
        """Make this process's lab match ``data`` (objects pynvml holds handles to are kept)."""
        self._mig_serial = int(data.get("mig_serial", self._mig_serial))
        flags = data.get("flags", {})
        self.mig_rights = bool(flags.get("mig_rights", True))
        self.reset_possible = bool(flags.get("reset_possible", True))
        self.legacy_mig_queries = bool(flags.get("legacy_mig_queries", False))
        now = self.now()
        for dev, item in zip(self.devices, data.get("devices", []), strict=False):
            # workloads first: the next sync() integrates them from their own start/stop times
            self._apply_workloads(dev, item.get("workloads", []), now)
            dev.mig_current, dev.mig_pending = int(item["mig_current"]), int(item["mig_pending"])
            if float(item["power_limit_w"]) != dev.power_limit_w:
                dev.set_power_limit(now, float(item["power_limit_w"]))
            dev.ambient_c, dev.lost = float(item["ambient_c"]), bool(item["lost"])
            dev.ecc = {(int(a), int(b)): int(v) for a, b, v in item.get("ecc", [])}
            dev.remapped_rows = [int(v) for v in item.get("remapped_rows", [0, 0, 0, 0])]
            dev.pcie_replays = int(item.get("pcie_replays", 0))
            self._apply_mig(dev, item.get("gpu_instances", []))
            self._apply_processes(dev, item.get("processes", []))
        self._apply_faults(data)

    def _apply_mig(self, dev: SimDevice, gis: list[dict[str, Any]]) -> None:
        want = {int(g["id"]): g for g in gis}
        for gid, gi in list(dev.gpu_instances.items()):
            w = want.get(gid)
            if w is None or w["profile_id"] != gi.profile.id or w["start"] != gi.start:
                for ci in list(gi.compute_instances.values()):
                    self._drop_ci(ci)
                del dev.gpu_instances[gid]
                self._unregister(gi)
        for gid, w in want.items():
            found = dev.gpu_instances.get(gid)
            if found is None:
                assert dev.model.mig is not None
                prof = dev.model.mig.by_id(int(w["profile_id"]))
                if prof is None:
                    continue
                found = self._register(GpuInstance(dev, gid, prof, int(w["start"])))
                dev.gpu_instances[gid] = found
            self._apply_cis(dev, found, w.get("compute_instances", []))

    def _apply_cis(self, dev: SimDevice, gi: GpuInstance, cis: list[dict[str, Any]]) -> None:
        want = {int(c["id"]): c for c in cis}
        for cid, ci in list(gi.compute_instances.items()):
            c = want.get(cid)
            uuid = ci.mig_device.uuid if ci.mig_device else None
            if (c is None or c["profile_id"] != ci.profile.id or c["start"] != ci.start
                    or c.get("uuid") != uuid):
                self._drop_ci(ci)
        for cid, c in want.items():
            if cid in gi.compute_instances:
                continue
            found = self._ci_lookup(gi, int(c["profile_id"]))
            if found is None:
                continue
            ci = self._register(ComputeInstance(gi, cid, found[0], int(c["start"])))
            gi.compute_instances[cid] = ci
            if c.get("mig_index") is not None and c.get("uuid"):
                index = int(c["mig_index"])
                stale = dev.mig_devices.pop(index, None)
                if stale is not None:
                    self._unregister(stale)
                mig = self._register(MigDevice(dev, gi, ci, index, str(c["uuid"])))
                ci.mig_device = mig
                dev.mig_devices[index] = mig

    def _apply_processes(self, dev: SimDevice, procs: list[dict[str, Any]]) -> None:
        for p in dev.processes:
            self._process_names.pop(p.pid, None)
        dev.processes = []
        for item in procs:
            proc = Process(int(item["pid"]), str(item["name"]), int(item["used_memory_mib"]),
                           dev.index, item.get("gi"), item.get("ci"))
            proc.proc_start = item.get("proc_start")  # type: ignore[attr-defined]
            dev.processes.append(proc)
            self._process_names[proc.pid] = proc.name

    def _apply_workloads(self, dev: SimDevice, items: list[dict[str, Any]], now: float) -> None:
        have = {key: w for w, key in self._wkeys.items() if w.device_index == dev.index}
        keep: list[Workload] = []
        for item in items:
            w = have.pop(item["key"], None)
            if w is None:
                scn = scenario(item["scenario"])
                w = Workload(scenario=scn, device_index=dev.index, gpu_instance_id=item["gi"],
                             compute_instance_id=item["ci"], pid=item["pid"],
                             start_s=float(item["start_s"]), weight=float(item["weight"]),
                             vectors=tuple(p.vector(int(item["sms"])) for p in scn.phases),
                             durations=tuple(p.duration_s for p in scn.phases))
                self._wkeys[w] = item["key"]
            w.stop_s = None if item["stop_s"] is None else float(item["stop_s"])
            keep.append(w)
        for w in have.values():
            self._wkeys.pop(w, None)
        dev.workloads = keep

    def _apply_faults(self, data: dict[str, Any]) -> None:
        from labkit.gpu import nvml

        self._faults = {name: [_Fault(int(c), d, r) for c, d, r in faults]
                        for name, faults in data.get("faults", {}).items()}
        self._field_faults = {(d, int(fid)): int(code)
                              for d, fid, code in data.get("field_faults", [])}
        self._init_error = data.get("init_error")
        removed = set(data.get("removed", []))
        changed = False
        for name in dir(type(self)):
            if not name.startswith("nvml"):
                continue
            present = hasattr(self._library, name)
            if name in removed and present:
                delattr(self._library, name)
                changed = True
            elif name not in removed and not present:
                setattr(self._library, name, self._wrap(name, getattr(self, name)))
                changed = True
        if changed:
            nvml.clear_function_cache()


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

