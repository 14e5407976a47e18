"""Per-student memory, CPU and process limits, with the strongest mechanism the machine has.

JupyterHub's ``Spawner.mem_limit``/``cpu_limit`` are enforced only by spawners that support them
(systemd, docker, kube); LocalProcessSpawner ignores them (JupyterHub docs, "Spawners"). labkit
picks, in order (a machine with systemd has cgroup v2 too; TLJH's SystemdSpawner units are the
same cgroup controls):

``cgroup-v2``
    a writable unified hierarchy (``/sys/fs/cgroup/cgroup.controllers`` with ``memory``, ``cpu``,
    ``pids``): one cgroup per student with ``memory.max``, ``cpu.max``, ``pids.max``
    (kernel docs, "Control Group v2").
``cgroup-v1``
    writable v1 ``memory``/``cpu``/``pids`` hierarchies: ``memory.limit_in_bytes``,
    ``cpu.cfs_quota_us``/``cpu.cfs_period_us``, ``pids.max`` (kernel docs, "cgroup-v1").
``rlimit``
    none of these: ``RLIMIT_AS`` per process and ``RLIMIT_NPROC`` per uid (``setrlimit(2)``);
    no CPU cap.

``RLIMIT_NPROC`` is set in every case as a second fork-bomb stop (it counts the student's uid).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CGROUP_ROOT", "Limits", "StudentCgroup", "detect_mechanism", "rlimit_preexec"]

CGROUP_ROOT = Path(os.environ.get("LABKIT_CGROUP_ROOT", "/sys/fs/cgroup"))
GROUP = "labkit-hub"
CFS_PERIOD_US = 100_000  # the kernel's default CFS period (sched-bwc.rst)


@dataclass(frozen=True)
class Limits:
    """One student's limits.

    Attributes
    ----------
    mem_limit_mib : int
        Server and kernels together (cgroup), or each process's address space (rlimit). [MiB]
    cpu_limit : float
        Cores. [cores]
    nproc_limit : int
        Processes and threads of the student's uid.
    """

    mem_limit_mib: int = 2048
    cpu_limit: float = 1.0
    nproc_limit: int = 512


def _v2_usable(root: Path) -> bool:
    controllers = root / "cgroup.controllers"
    try:
        have = set(controllers.read_text().split())
    except OSError:
        return False
    return {"memory", "cpu", "pids"} <= have and os.access(root, os.W_OK)


def _v1_usable(root: Path) -> bool:
    return all((root / c / "cgroup.procs").exists() and os.access(root / c, os.W_OK)
               for c in ("memory", "cpu", "pids"))


def detect_mechanism(root: Path | None = None) -> str:
    """Return the limit mechanism this machine allows (see the module docstring).

    Returns
    -------
    str
        ``"cgroup-v2"``, ``"cgroup-v1"`` or ``"rlimit"``.
    """
    root = CGROUP_ROOT if root is None else root
    if os.environ.get("LABKIT_HUB_LIMITS") in ("cgroup-v2", "cgroup-v1", "rlimit"):
        return os.environ["LABKIT_HUB_LIMITS"]
    if os.geteuid() == 0 and _v2_usable(root):
        return "cgroup-v2"
    if os.geteuid() == 0 and _v1_usable(root):
        return "cgroup-v1"
    return "rlimit"


class StudentCgroup:
    """The cgroup(s) of one student's server (v2: one directory; v1: one per controller)."""

    def __init__(self, username: str, limits: Limits, mechanism: str,
                 root: Path | None = None) -> None:
        if mechanism not in ("cgroup-v2", "cgroup-v1"):
            raise ValueError(f"not a cgroup mechanism: {mechanism!r}")
        self.root = CGROUP_ROOT if root is None else root
        self.mechanism = mechanism
        self.limits = limits
        self.username = username

    def dirs(self) -> list[Path]:
        """Return the student's cgroup directories."""
        if self.mechanism == "cgroup-v2":
            return [self.root / GROUP / self.username]
        return [self.root / c / GROUP / self.username for c in ("memory", "cpu", "pids")]

    def create(self) -> None:
        """Create the cgroups and write the limits (as root, before the server starts)."""
        mem = self.limits.mem_limit_mib * 2**20
        quota = max(1000, int(self.limits.cpu_limit * CFS_PERIOD_US))
        if self.mechanism == "cgroup-v2":
            parent = self.root / GROUP
            parent.mkdir(exist_ok=True)
            (self.root / "cgroup.subtree_control").write_text("+memory +cpu +pids")
            (parent / "cgroup.subtree_control").write_text("+memory +cpu +pids")
            group = parent / self.username
            group.mkdir(exist_ok=True)
            (group / "memory.max").write_text(str(mem))
            (group / "memory.swap.max").write_text("0") if (group / "memory.swap.max").exists() \
                else None
            (group / "cpu.max").write_text(f"{quota} {CFS_PERIOD_US}")
            (group / "pids.max").write_text(str(self.limits.nproc_limit))
            return
        memory, cpu, pids = self.dirs()
        for group in (memory, cpu, pids):
            group.mkdir(parents=True, exist_ok=True)
        (memory / "memory.limit_in_bytes").write_text(str(mem))
        (cpu / "cpu.cfs_period_us").write_text(str(CFS_PERIOD_US))
        (cpu / "cpu.cfs_quota_us").write_text(str(quota))
        (pids / "pids.max").write_text(str(self.limits.nproc_limit))

    def procs_files(self) -> list[str]:
        """Return the ``cgroup.procs`` paths a new process writes its pid to."""
        return [str(d / "cgroup.procs") for d in self.dirs()]

    def memory_bytes(self) -> int | None:
        """Return the memory the student's cgroup uses now, or None if unreadable. [bytes]"""
        name = "memory.current" if self.mechanism == "cgroup-v2" else "memory.usage_in_bytes"
        try:
            return int((self.dirs()[0] / name).read_text())
        except (OSError, ValueError):
            return None

    def remove(self) -> None:
        """Remove the cgroups once empty (no error if busy or gone)."""
        for group in self.dirs():
            try:
                group.rmdir()
            except OSError:
                pass


def rlimit_preexec(limits: Limits, mechanism: str,
                   procs_files: list[str] | None = None) -> Callable[[], None]:
    """Return a ``preexec_fn`` that joins the cgroups and sets the rlimits (before setuid).

    Only async-signal-tolerant calls (``os.open``/``os.write``/``setrlimit``): it runs in the
    forked child.
    """
    import resource

    mem = limits.mem_limit_mib * 2**20
    nproc = limits.nproc_limit
    files = list(procs_files or [])

    def preexec() -> None:
        for path in files:
            fd = os.open(path, os.O_WRONLY)
            try:
                os.write(fd, b"0")  # "0" = the writing process (cgroup docs)
            finally:
                os.close(fd)
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        if mechanism == "rlimit":
            resource.setrlimit(resource.RLIMIT_AS, (mem, mem))

    return preexec
