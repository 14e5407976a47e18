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

__all__ = ["PRIVATE_DIRS", "NamespacePlan", "Probe", "describe", "enter", "preexec", "probe"]

#: The world-writable directories a student could otherwise fill, each a tmpfs of the student's
#: own (Filesystem Hierarchy Standard 3.0: /tmp, /var/tmp, /run/lock; /dev/shm: POSIX shm).
PRIVATE_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")
#: proc(5) mount options, best first (``invisible`` needs Linux 5.8).
HIDEPID = ("hidepid=invisible", "hidepid=2")

# <linux/sched.h>, <linux/mount.h>
CLONE_NEWNS = 0x00020000
MS_NOSUID, MS_NODEV, MS_REC, MS_PRIVATE = 2, 4, 16384, 1 << 18


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
    """

    tmp_mib: int = 256
    hidepid: str = HIDEPID[0]

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


def enter(plan: NamespacePlan) -> None:
    """Move the calling process into its own private mount namespace per ``plan`` (as root).

    Called in the forked child before ``setuid`` (:func:`preexec`); the process and all its
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
        Why not, or why only part of it ("" when all of it works).
    """

    plan: NamespacePlan | None
    reason: str


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
    """Find out (once per process) whether a private namespace works here, in a forked child.

    Returns
    -------
    Probe
        The best plan that works (``hidepid=invisible``, else ``hidepid=2``, else private tmp
        only), or no plan, with the reason.
    """
    if os.environ.get("LABKIT_HUB_NAMESPACE") == "off":
        return Probe(None, "switched off ($LABKIT_HUB_NAMESPACE=off)")
    if os.geteuid() != 0:
        return Probe(None, "the hub is not root")
    reasons: list[str] = []
    for hidepid in (*HIDEPID, ""):
        plan = NamespacePlan(tmp_mib=tmp_mib, hidepid=hidepid)
        error = _try_in_child(plan)
        if not error:
            return Probe(plan, "; ".join(reasons))
        reasons.append(f"{hidepid or 'private tmp'}: {error}")
    return Probe(None, "; ".join(reasons))


def describe(found: Probe) -> dict[str, str]:
    """Return the ``status`` lines: what applies to /tmp and to /proc, and why not."""
    plan = found.plan
    if plan is None:
        why = found.reason or "unknown"
        return {"tmp": f"shared /tmp, /var/tmp, /dev/shm (no private mount namespace: {why})",
                "proc": f"/proc shows every user's processes (no private mount namespace: {why})"}
    tmp = (f"private tmpfs per student server: /tmp and /var/tmp {plan.tmp_mib} MiB, "
           f"/dev/shm and /run/lock {max(1, plan.tmp_mib // 4)} MiB")
    if plan.hidepid:
        proc = f"/proc mounted with {plan.hidepid} per student server: other users' processes " \
               "hidden"
        if found.reason:
            proc += f" ({found.reason})"
    else:
        proc = f"/proc shows every user's processes (hidepid refused: {found.reason})"
    return {"tmp": tmp, "proc": proc}
