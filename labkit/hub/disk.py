"""A bounded disk per student: a fixed-size ext4 image, loop-mounted as the student's home.

Without it one student can fill the disk that the hub's database and state share, and stop the
class. Quotas (``quota(1)``) would need the root file system remounted with ``usrquota``; a
loop-mounted image needs only the loop driver and e2fsprogs, which a plain Debian server has
(``losetup(8)``, ``mke2fs(8)``):

- the image ``<images>/jupyter-<name>.img`` is allocated in full when created
  (``posix_fallocate``), so a full class never overcommits the host disk: creating one refuses
  when less than :data:`RESERVE_MIB` would stay free for the hub;
- it is formatted ext4 with no reserved blocks, owned by the student (``-E root_owner``), and
  mounted ``loop,nosuid,nodev`` on ``/home/jupyter-<name>`` (0700) before the server starts;
  what the home held before is copied in once;
- a student who fills it gets ``ENOSPC`` in their own home only.

Where the kernel or container has no loop devices, :func:`probe` says why; the hub then keeps
homes on the shared disk and ``status`` says so (:func:`describe`).
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from labkit.i18n import t

__all__ = ["RESERVE_MIB", "DiskFacts", "DiskFullError", "DiskProbe", "StudentDisk", "describe",
           "probe", "unmount_home"]

#: Free space kept on the images' file system for the hub's database and logs when creating a
#: student's image. [MiB]
RESERVE_MIB = 1024
MIB = 2**20


class DiskFullError(OSError):
    """The host disk has no room for one more student image (plus the hub's reserve).

    ``str(err)`` is the operator's English message; ``jupyterhub_message`` the Korean one that
    JupyterHub shows the student on the spawn page (as :class:`labkit.hub.gpushare.NoShareLeft`).
    """

    def __init__(self, message: str, korean: str) -> None:
        super().__init__(message)
        self.jupyterhub_message = korean


def _tool(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin:/usr/bin:/bin")
    if not found:
        raise FileNotFoundError(f"{name} not found: install the 'e2fsprogs' / 'mount' packages")
    return found


def _run(*args: str) -> None:
    done = subprocess.run(list(args), capture_output=True, text=True, check=False)
    if done.returncode:
        raise OSError(f"{' '.join(args)}: {(done.stderr or done.stdout).strip()[-300:]}")


def _mounted_source(path: Path) -> str | None:
    """Return the source device of the mount at ``path`` (None if not a mount point)."""
    target = str(path.resolve())
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    found = None
    for line in lines:  # "... mount-point ... - fstype source options" (proc(5)); last wins
        left, _, right = line.partition(" - ")
        if left.split()[4].replace("\\040", " ") == target:
            found = right.split()[1]
    return found


@dataclass(frozen=True)
class StudentDisk:
    """One student's image and home.

    Attributes
    ----------
    system_user : str
        ``jupyter-<name>`` (its home is the mount point).
    size_mib : int
        The image's size: everything the student can keep. [MiB]
    images : Path
        Where the images live (the hub's private state directory, 0700).
    """

    system_user: str
    size_mib: int
    images: Path

    def __post_init__(self) -> None:
        if int(self.size_mib) < 16:
            raise ValueError(f"disk size must be >= 16 MiB, got {self.size_mib!r}")

    @property
    def image(self) -> Path:
        """The image file."""
        return self.images / f"{self.system_user}.img"

    @property
    def home(self) -> Path:
        """The student's home (the mount point)."""
        return Path(pwd.getpwnam(self.system_user).pw_dir)

    def mounted(self) -> bool:
        """Whether the student's image is mounted on their home (False: no such account)."""
        try:
            return _mounted_source(self.home) is not None
        except KeyError:
            return False

    def _create(self, entry: pwd.struct_passwd) -> None:
        self.images.mkdir(mode=0o700, parents=True, exist_ok=True)
        free = shutil.disk_usage(self.images).free
        if free - self.size_mib * MIB < RESERVE_MIB * MIB:
            raise DiskFullError(
                f"no room for {self.system_user}'s {self.size_mib} MiB home image in "
                f"{self.images}: {free // MIB} MiB free, {RESERVE_MIB} MiB must stay free for "
                "the hub; lower the disk limit or free space",
                t("hub.disk.full", size=self.size_mib, free=free // MIB, reserve=RESERVE_MIB))
        partial = self.image.with_suffix(".partial")
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            os.posix_fallocate(fd, 0, self.size_mib * MIB)
        finally:
            os.close(fd)
        _run(_tool("mkfs.ext4"), "-q", "-F", "-m", "0", "-L", self.system_user[-16:],
             "-E", f"root_owner={entry.pw_uid}:{entry.pw_gid},nodiscard", str(partial))
        os.replace(partial, self.image)

    def ensure(self) -> Path:
        """Create the image if missing and mount it on the home (as root, before a spawn).

        Returns
        -------
        Path
            The home, now the image's root (owned by the student, 0700).

        Raises
        ------
        DiskFullError
            If a new image would leave less than :data:`RESERVE_MIB` free.
        OSError
            If ``mkfs.ext4`` or ``mount`` fails (their message included).
        """
        entry = pwd.getpwnam(self.system_user)
        home = Path(entry.pw_dir)
        if self.mounted():
            return home
        fresh = not self.image.exists()
        if fresh:
            self._create(entry)
        mount = _tool("mount")
        options = "loop,nosuid,nodev,noatime"
        if fresh and home.is_dir() and any(home.iterdir()):  # copy what the home held, once
            with tempfile.TemporaryDirectory(dir=self.images) as staging:
                _run(mount, "-o", options, str(self.image), staging)
                try:
                    _run(_tool("cp"), "-a", f"{home}/.", staging)
                finally:
                    _run(_tool("umount"), staging)
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        _run(mount, "-o", options, str(self.image), str(home))
        lost = home / "lost+found"  # e2fsck makes it again when it needs it
        if lost.is_dir() and not any(lost.iterdir()):
            lost.rmdir()
        os.chown(home, entry.pw_uid, entry.pw_gid)
        os.chmod(home, 0o700)
        return home

    def remove(self) -> None:
        """Unmount the home and delete the image (the student's files are gone)."""
        unmount_home(self.home)
        self.image.unlink(missing_ok=True)


def unmount_home(home: Path) -> bool:
    """Unmount a loop-mounted home (lazily if busy); return whether one was mounted there."""
    source = _mounted_source(home)
    if source is None or not source.startswith("/dev/loop"):
        return False
    done = subprocess.run([_tool("umount"), str(home)], capture_output=True, check=False)
    if done.returncode:
        subprocess.run([_tool("umount"), "--lazy", str(home)], capture_output=True, check=False)
    return True


@dataclass(frozen=True)
class DiskProbe:
    """Whether per-student images work here.

    ``reason``: why not, in the operator's English ("" when they do); ``kind``: ``""``,
    ``"off"``, ``"not_root"``, ``"no_loop"`` or ``"failed"`` (making or mounting the test image
    failed; ``reason`` has the tool's message).
    """

    works: bool
    reason: str
    kind: str = ""


@cache
def probe() -> DiskProbe:
    """Find out (once per process) whether a loop-mounted ext4 image works here.

    Makes, mounts and removes a 16 MiB image in a temp directory.
    """
    if os.environ.get("LABKIT_HUB_DISK") == "off":
        return DiskProbe(False, "switched off ($LABKIT_HUB_DISK=off)", "off")
    if os.geteuid() != 0:
        return DiskProbe(False, "the hub is not root", "not_root")
    if not Path("/dev/loop-control").exists():
        return DiskProbe(False, "no /dev/loop-control (no loop devices in this kernel or "
                                "container)", "no_loop")
    try:
        with tempfile.TemporaryDirectory(prefix="labkit-disk-probe-") as work:
            image, target = Path(work) / "probe.img", Path(work) / "mnt"
            target.mkdir()
            with open(image, "wb") as out:
                out.truncate(16 * MIB)
            _run(_tool("mkfs.ext4"), "-q", "-F", "-E", "nodiscard", str(image))
            _run(_tool("mount"), "-o", "loop,nosuid,nodev", str(image), str(target))
            _run(_tool("umount"), str(target))
    except OSError as err:
        return DiskProbe(False, str(err), "failed")
    return DiskProbe(True, "")


@dataclass(frozen=True)
class DiskFacts:
    """What each student's home gets, as ``status`` reports it (:func:`describe`).

    Attributes
    ----------
    image_per_student : bool
        Each home is its own loop-mounted ext4 image.
    size_mib : int
        Each image's size (0 when homes share the disk). [MiB]
    reserve_mib : int
        Free space kept for the hub when an image is made (:data:`RESERVE_MIB`). [MiB]
    why : str
        :attr:`DiskProbe.kind` ("" when images apply).
    reason : str
        :attr:`DiskProbe.reason`.
    """

    image_per_student: bool
    size_mib: int
    reserve_mib: int
    why: str
    reason: str


def describe(found: DiskProbe, size_mib: int) -> DiskFacts:
    """Return what :func:`probe` found as facts for ``status`` (rendered there in Korean)."""
    if found.works:
        return DiskFacts(True, int(size_mib), RESERVE_MIB, "", "")
    return DiskFacts(False, 0, RESERVE_MIB, found.kind or "failed", found.reason)
