"""A private mount namespace per student server: its own /tmp, and other users' processes hidden.

Every student's server (and so every kernel it starts) runs in a mount namespace of its own
(``unshare(2)`` with ``CLONE_NEWNS``, made private so nothing propagates back;
``mount_namespaces(7)``), set up as root in the forked child just before it becomes
``jupyter-<name>``:

- ``/tmp``, ``/var/tmp``, ``/dev/shm`` and ``/run/lock`` — the world-writable places of a
  Debian server — are tmpfs mounts of that server alone, bounded by ``size=``
  (``tmpfs(5)``; systemd's ``PrivateTmp=`` idea). A student who fills them gets ``ENOSPC``;
  classmates and the hub never see those files, and the kernel frees them when the student's
  last process exits. tmpfs pages count towards the student's memory cgroup.
- ``/proc`` is a new proc instance with ``hidepid=invisible`` (Linux >= 5.8: one proc
  superblock per mount, ``proc(5)``): another user's ``/proc/<pid>`` — a classmate's kernel, the
  hub's processes, their ``cmdline`` and ``environ`` — is neither listed nor readable. On an
  older kernel ``hidepid=2`` is used (there it changes the one proc superblock for the machine).
- ``/sys/fs/cgroup`` (and any other cgroup mount) is covered by an empty tmpfs: the per-student
  cgroups labkit creates (``labkit-hub/jupyter-<name>``, :mod:`labkit.hub.limits`) list their
  pids in ``cgroup.procs`` and ``tasks``, so without it a student reads who runs what on every
  classmate's server (cgroup v1 and v2 alike). Only the student's own cgroups are bound back,
  at the same paths (``cgroups(7)``: ``/proc/self/cgroup`` still names them), so a kernel can
  still read its own ``memory.usage_in_bytes`` / ``memory.current``.

Where the kernel or container refuses (no ``CAP_SYS_ADMIN``, a seccomp filter, a rootless
container), :func:`probe` says why; the hub then starts the server without it and ``status``
says so (:func:`describe`), never silently.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from labkit.hub.limits import GROUP

__all__ = ["CGROUP_MOUNT", "PRIVATE_DIRS", "IsolationFacts", "NamespacePlan", "Probe", "describe",
           "enter", "own_cgroups", "preexec", "probe"]

#: The world-writable directories a student could otherwise fill, each a tmpfs of the student's
#: own (Filesystem Hierarchy Standard 3.0: /tmp, /var/tmp, /run/lock; /dev/shm: POSIX shm).
PRIVATE_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")
#: proc(5) mount options, best first (``invisible`` needs Linux 5.8).
HIDEPID = ("hidepid=invisible", "hidepid=2")
#: Where Debian (systemd) mounts the cgroup hierarchies (``cgroups(7)``).
CGROUP_MOUNT = "/sys/fs/cgroup"

# <linux/sched.h>, <linux/mount.h>
CLONE_NEWNS = 0x00020000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND, MS_REC, MS_PRIVATE = 2, 4, 8, 4096, 16384, 1 << 18
O_PATH = getattr(os, "O_PATH", 0o10000000)


@dataclass(frozen=True)
class NamespacePlan:
    """What a student's namespace gets.

    Attributes
    ----------
    tmp_mib : int
        Size of each private tmpfs (``/tmp``, ``/var/tmp``); ``/dev/shm`` and ``/run/lock``
        get a quarter of it. [MiB]
    hidepid : str
        The proc mount option (one of :data:`HIDEPID`), or "" to keep the machine's ``/proc``.
    hide_cgroups : bool
        Cover the cgroup mounts, binding back only the process's own cgroups.
    """

    tmp_mib: int = 256
    hidepid: str = HIDEPID[0]
    hide_cgroups: bool = True

    def __post_init__(self) -> None:
        if int(self.tmp_mib) < 1:
            raise ValueError(f"tmp_mib must be >= 1, got {self.tmp_mib!r}")
        if self.hidepid not in ("", *HIDEPID):
            raise ValueError(f"hidepid must be one of {HIDEPID} or '', got {self.hidepid!r}")


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def _mount(libc: ctypes.CDLL, source: str, target: str, fstype: str | None, flags: int,
           data: str | None) -> None:
    _check(libc.mount(source.encode(), target.encode(),
                      fstype.encode() if fstype else None, flags,
                      data.encode() if data else None), f"mount {fstype or source} on {target}")


def own_cgroups(proc_cgroup: str, mountinfo: str, group: str = GROUP) -> list[tuple[str, str]]:
    """Return where this process's own per-student cgroups appear in the file system.

    Parameters
    ----------
    proc_cgroup : str
        ``/proc/self/cgroup`` (``id:controllers:path`` lines, ``cgroups(7)``).
    mountinfo : str
        ``/proc/self/mountinfo`` (``proc(5)``).
    group : str, default "labkit-hub"
        The parent of the per-student cgroups (:data:`labkit.hub.limits.GROUP`).

    Returns
    -------
    list of (str, str)
        ``(mount point, cgroup directory)`` for each cgroup mount whose hierarchy holds the
        process in ``<group>/<name>``: the directory is the mount point joined with the path
        below the mount's root. Hierarchies where the process shares a cgroup with others (the
        root, the hub's service) are left out: binding those back would list classmates again.
    """
    found: list[tuple[str, str]] = []
    paths: list[tuple[frozenset[str], str]] = []
    for line in proc_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            names = frozenset(n for n in parts[1].split(",") if n)
            paths.append((names, parts[2]))
    for line in mountinfo.splitlines():  # "id parent dev root mount-point ... - fstype src opts"
        left, _, right = line.partition(" - ")
        fields, rest = left.split(), right.split()
        if len(fields) < 5 or len(rest) < 3 or rest[0] not in ("cgroup", "cgroup2"):
            continue
        root, point = (f.replace("\\040", " ") for f in fields[3:5])
        options = frozenset(rest[2].split(","))
        for names, path in paths:
            if (rest[0] == "cgroup2") != (not names) or not names <= options:
                continue
            inside = path if root == "/" else path[len(root):] if path.startswith(
                root.rstrip("/") + "/") else ""
            steps = [s for s in inside.split("/") if s]
            if len(steps) >= 2 and steps[-2] == group:
                found.append((point, point.rstrip("/") + "/" + "/".join(steps)))
    return found


def _cgroup_mount_points(mountinfo: str) -> list[str]:
    """Return the mount points of every cgroup (v1 or v2) mount."""
    points = []
    for line in mountinfo.splitlines():
        left, _, right = line.partition(" - ")
        fields, rest = left.split(), right.split()
        if len(fields) >= 5 and rest and rest[0] in ("cgroup", "cgroup2"):
            points.append(fields[4].replace("\\040", " "))
    return points


def _hide_cgroups(libc: ctypes.CDLL) -> None:
    """Cover every cgroup mount with an empty tmpfs; bind the process's own cgroups back."""
    with open("/proc/self/mountinfo") as info, open("/proc/self/cgroup") as mine:
        mountinfo, proc_cgroup = info.read(), mine.read()
    own = [(point, os.open(path, O_PATH | os.O_DIRECTORY), path)
           for point, path in own_cgroups(proc_cgroup, mountinfo) if os.path.isdir(path)]
    try:
        covered = [CGROUP_MOUNT] if os.path.isdir(CGROUP_MOUNT) else []
        covered += [p for p in _cgroup_mount_points(mountinfo)
                    if not any(p == c or p.startswith(c + "/") for c in covered)]
        for point in covered:
            _mount(libc, "tmpfs", point, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                   "size=1m,mode=755")
        for _point, fd, path in own:
            os.makedirs(path, mode=0o755, exist_ok=True)
            _mount(libc, f"/proc/self/fd/{fd}", path, None, MS_BIND, None)
    finally:
        for _point, fd, _path in own:
            os.close(fd)


def enter(plan: NamespacePlan) -> None:
    """Move the calling process into its own private mount namespace per ``plan`` (as root).

    Called in the forked child before ``setuid`` and after it joined its cgroups
    (:func:`preexec`, :func:`labkit.hub.limits.rlimit_preexec`); the process and all its
    children then see the private mounts.

    Raises
    ------
    OSError
        If the kernel refuses ``unshare`` or a mount (the errno and the mount in the message).
    """
    libc = _libc()
    _check(libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _mount(libc, "none", "/", None, MS_REC | MS_PRIVATE, None)
    for path in PRIVATE_DIRS:
        if not os.path.isdir(path) or os.path.islink(path):
            continue
        mib = plan.tmp_mib if path in ("/tmp", "/var/tmp") else max(1, plan.tmp_mib // 4)
        _mount(libc, "tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV,
               f"size={mib}m,mode=1777")
    if plan.hide_cgroups:
        _hide_cgroups(libc)
    if plan.hidepid:
        _mount(libc, "proc", "/proc", "proc", MS_NOSUID | MS_NODEV, plan.hidepid)


def preexec(plan: NamespacePlan | None) -> Callable[[], None]:
    """Return a ``preexec_fn`` step that enters the namespace (a no-op for ``None``)."""
    if plan is None:
        return lambda: None
    return lambda: enter(plan)


@dataclass(frozen=True)
class Probe:
    """What this machine allows (see :func:`probe`).

    Attributes
    ----------
    plan : NamespacePlan or None
        The plan that works here, or None when no private namespace can be made.
    reason : str
        Why not, or why only part of it ("" when all of it works): the operator's English
        detail (the kernel's error), shown in parentheses by ``status``.
    kind : str
        ``""`` (all of it works), ``"off"`` (switched off), ``"not_root"`` or ``"refused"``
        (the kernel refused part or all of it; ``reason`` says what).
    """

    plan: NamespacePlan | None
    reason: str
    kind: str = ""


def _try_in_child(plan: NamespacePlan) -> str:
    """Run :func:`enter` in a forked child; return "" on success, else the error text."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: try, report, exit without running any parent cleanup
        os.close(read)
        try:
            enter(plan)
            message = b""
        except BaseException as err:  # reported to the parent, whatever it is
            message = str(err).encode()[:500] or b"failed"
        os.write(write, message)
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        message = pipe.read()
    os.waitpid(pid, 0)
    return message.decode(errors="replace")


@cache
def probe(tmp_mib: int = 256) -> Probe:
    """Find out (once per process) whether a private namespace works here, in forked children.

    Returns
    -------
    Probe
        The best plan that works (``hidepid=invisible``, else ``hidepid=2``, else private tmp
        only; each with the cgroups hidden, else without), or no plan, with the reason.
    """
    if os.environ.get("LABKIT_HUB_NAMESPACE") == "off":
        return Probe(None, "switched off ($LABKIT_HUB_NAMESPACE=off)", "off")
    if os.geteuid() != 0:
        return Probe(None, "the hub is not root", "not_root")
    reasons: list[str] = []
    for hidepid in (*HIDEPID, ""):
        for hide in (True, False):
            plan = NamespacePlan(tmp_mib=tmp_mib, hidepid=hidepid, hide_cgroups=hide)
            error = _try_in_child(plan)
            if not error:
                return Probe(plan, "; ".join(reasons), "refused" if reasons else "")
            reasons.append(f"{hidepid or 'private tmp'}"
                           f"{' + hidden cgroups' if hide else ''}: {error}")
    return Probe(None, "; ".join(reasons), "refused")


@dataclass(frozen=True)
class IsolationFacts:
    """What each student server's namespace gives, as ``status`` reports it (:func:`describe`).

    Attributes
    ----------
    private_namespace : bool
        Each server has its own mount namespace.
    tmp_mib, shm_mib : int
        Sizes of the private ``/tmp`` and ``/var/tmp``, and of ``/dev/shm`` and ``/run/lock``
        (0 without a private namespace). [MiB]
    hidepid : str
        The private ``/proc``'s option ("" when every user's processes are listed).
    cgroups_hidden : bool
        Classmates' cgroups (and their pids) are hidden under ``/sys/fs/cgroup``.
    why : str
        ``""``, ``"off"``, ``"not_root"`` or ``"refused"`` (:attr:`Probe.kind`).
    reason : str
        The English detail behind ``why`` (the kernel's error), "" when all of it applies.
    """

    private_namespace: bool
    tmp_mib: int
    shm_mib: int
    hidepid: str
    cgroups_hidden: bool
    why: str
    reason: str


def describe(found: Probe) -> IsolationFacts:
    """Return what :func:`probe` found as facts for ``status`` (rendered there in Korean)."""
    plan = found.plan
    if plan is None:
        return IsolationFacts(False, 0, 0, "", False, found.kind or "refused",
                              found.reason or "unknown")
    return IsolationFacts(True, plan.tmp_mib, max(1, plan.tmp_mib // 4), plan.hidepid,
                          plan.hide_cgroups, found.kind, found.reason)
