"""One system account per student: ``jupyter-<username>``, home 0700 (TLJH's convention).

The hub creates the accounts from the roster when it runs as root (``useradd(8)``; as The
Littlest JupyterHub does, https://tljh.jupyter.org "Users"). Without root it cannot, and it
refuses to serve (:class:`NeedRootError`): every student's server and kernels must run under
their own uid, so there is no fallback to one shared account.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from pathlib import Path

from labkit.hub.roster import system_username

__all__ = ["HOME_BASE", "NeedRootError", "ensure_system_user", "remove_system_user",
           "require_root"]

HOME_BASE = Path(os.environ.get("LABKIT_HUB_HOME_BASE", "/home"))
#: The account's description (GECOS comment, ``useradd --comment``) by role.
COMMENTS = {"student": "labkit student", "teacher": "labkit teacher"}

NEED_ROOT = (
    "labkit hub: 학생마다 시스템 계정(jupyter-<이름>)을 만들어야 하므로 root 권한이 필요합니다. "
    "root로(또는 sudo로) `make hub ROSTER=... TEACHER=...` 를 다시 실행하십시오.\n"
    "labkit hub: each student gets their own system account (jupyter-<name>), which needs root. "
    "Run it again as root (or with sudo): `make hub ROSTER=... TEACHER=...`. "
    "(There is no shared-account mode: students would see each other's files and kernels.)"
)


class NeedRootError(PermissionError):
    """The hub was started without root, so it cannot create the students' accounts."""


def require_root() -> None:
    """Raise :class:`NeedRootError` (Korean and English message) unless running as root."""
    if os.geteuid() != 0:
        raise NeedRootError(NEED_ROOT)


def _tool(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")
    if not found:
        raise FileNotFoundError(f"{name} not found: the hub needs the 'passwd' package")
    return found


def ensure_system_user(username: str, role: str | None = None) -> pwd.struct_passwd:
    """Create the student's system account if missing; make its home private (0700).

    Parameters
    ----------
    username : str
        The roster username (the account is ``jupyter-<username>``).
    role : {"student", "teacher"}, optional
        The account's description (:data:`COMMENTS`): set when the account is created, and
        corrected on an existing account (``usermod --comment``). None: a new account is a
        student's, an existing one is left as it is (the spawner's call).

    Returns
    -------
    pwd.struct_passwd
        The account.

    Raises
    ------
    NeedRootError
        If not running as root.
    ValueError
        If ``username`` is not a valid roster name, or ``role`` is not one of :data:`COMMENTS`.
    subprocess.CalledProcessError
        If ``useradd`` or ``usermod`` fails.
    """
    name = system_username(username)
    if role is not None and role not in COMMENTS:
        raise ValueError(f"role must be one of {sorted(COMMENTS)}, got {role!r}")
    require_root()
    comment = COMMENTS[role or "student"]
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        home = HOME_BASE / name
        subprocess.run([_tool("useradd"), "--create-home", "--home-dir", str(home),
                        "--user-group", "--shell", "/bin/bash", "--comment", comment,
                        name], check=True, capture_output=True)
        entry = pwd.getpwnam(name)
    if role is not None and entry.pw_gecos != comment:
        subprocess.run([_tool("usermod"), "--comment", comment, name], check=True,
                       capture_output=True)
        entry = pwd.getpwnam(name)
    home = Path(entry.pw_dir)
    if not home.is_dir():
        home.mkdir(mode=0o700, parents=True)
        os.chown(home, entry.pw_uid, entry.pw_gid)
    os.chmod(home, 0o700)
    return entry


def remove_system_user(username: str) -> None:
    """Delete the student's account and home (``userdel -r``); no error if it is gone.

    A home image (:mod:`labkit.hub.disk`) is unmounted first; the image file stays in the
    hub's state directory.

    Raises
    ------
    NeedRootError
        If not running as root.
    """
    name = system_username(username)
    require_root()
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        return
    from labkit.hub.disk import unmount_home

    unmount_home(Path(entry.pw_dir))  # a loop-mounted home image (labkit.hub.disk)
    subprocess.run([_tool("userdel"), "--remove", "--force", name], check=False,
                   capture_output=True)
