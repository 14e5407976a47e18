"""``python -m labkit.hub backup DEST`` / ``restore SRC [NAME...]``: the class's homes and state.

A backup is a directory (0700: it holds the students' work, password hashes and the hub's
secrets), taken while the hub runs:

- ``jupyterhub.sqlite``: the hub's database through sqlite's online backup API (a consistent
  copy even while the hub writes it; ``sqlite3.Connection.backup``);
- ``state/``: the roster, the teacher's settings, the cookie secret, the proxy token and ``tls/``
  (the class CA of ``serve --self-signed``, its key, the hub's certificate);
- ``passwords.json`` and ``first_login_codes.json``: the password hashes and the first-login
  codes not used yet (:class:`labkit.hub.passwords.Accounts`), read together under the store's
  lock (:meth:`~labkit.hub.passwords.Accounts.copy_to`);
- ``homes/<username>.tar``: each roster student's (and the teacher's) home, read file by file
  from its mounted file system (:mod:`labkit.hub.disk`): never the image file itself, which
  is inconsistent while mounted. A home whose account is gone but whose image stays is mounted
  read-only for the copy. Symbolic links are kept as links, never followed; sockets, FIFOs and
  devices are left out, and so is anything another account owns.
- ``manifest.json``: when, the teacher, which students, how many files and bytes per home
  (the teacher's too).

``restore SRC NAME...`` brings students back while the hub runs: their roster row, account,
password, and home (a fresh image mounted first where images apply), their files owned by them
again; results come back with the home (``~/.labkit/progress.jsonl``, :mod:`labkit.data.progress`).
A student whose processes run is refused. ``restore SRC`` alone restores every student and
the hub's database and state, and needs the hub stopped.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import pwd
import shutil
import sqlite3
import subprocess
import tarfile
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path

from labkit.hub.passwords import Accounts
from labkit.hub.roster import Student, system_username, validate_username
from labkit.hub.state import HubState
from labkit.i18n import first_few, t

__all__ = ["FORMAT", "STATE_FILES", "backup", "restore"]

#: The backup layout's version (manifest.json ``format``).
FORMAT = 1
#: The state directory's files a backup keeps (ports and pid files belong to one run only).
STATE_FILES = ("roster.json", "settings.json", "jupyterhub_cookie_secret", "proxy_token")
#: The state's folder of the hub's TLS files (``serve --self-signed``'s class CA and key:
#: labkit.hub.tls), backed up whole.
TLS_DIR = "tls"
_DB = "jupyterhub.sqlite"
_KEPT_TYPES = (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE)

Out = Callable[[str], object]


def _copy_db(source: Path, target: Path) -> None:
    """Copy a sqlite database with the online backup API (consistent while it is written)."""
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True, timeout=30)
    try:
        dst = sqlite3.connect(target)
        try:
            src.backup(dst)
        finally:
            dst.close()
    finally:
        src.close()


def _archive(home: Path, target: Path) -> dict[str, int]:
    """Write ``home``'s tree to the tar file ``target``; return its files and bytes.

    Only what the home's owner owns is kept: a file of another account in a student's home (a
    hard link to one, where homes share a disk) would be handed to the student at a restore.
    """
    owner = home.stat().st_uid

    def keep(member: tarfile.TarInfo) -> tarfile.TarInfo | None:
        return member if member.type in _KEPT_TYPES and member.uid == owner else None

    with tarfile.open(target, "w", format=tarfile.PAX_FORMAT) as tar:
        tar.add(str(home), arcname=".", recursive=True, filter=keep)
        members = tar.getmembers()
    return {"files": sum(1 for m in members if m.isfile()),
            "bytes": sum(m.size for m in members if m.isfile())}


def _mount_tool(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin:/usr/bin:/bin")
    if not found:
        raise FileNotFoundError(f"{name} not found: install the 'mount' package")
    return found


def _archive_home(state: HubState, username: str, target: Path) -> dict[str, int] | None:
    """Archive a student's home from its mounted file system; None if they have none."""
    from labkit.hub.disk import StudentDisk

    user = system_username(username)
    try:
        home = Path(pwd.getpwnam(user).pw_dir)
    except KeyError:
        home = None
    image = StudentDisk(user, 16, state.images_dir).image
    if home is not None and home.is_dir() and (StudentDisk(user, 16, state.images_dir).mounted()
                                                or not image.exists()):
        return _archive(home, target)
    if not image.exists():
        return None
    with tempfile.TemporaryDirectory(dir=state.root) as staging:  # the account is gone
        subprocess.run([_mount_tool("mount"), "-o", "loop,ro,noload,nosuid,nodev",
                        str(image), staging], check=True, capture_output=True)
        try:
            return _archive(Path(staging), target)
        finally:
            subprocess.run([_mount_tool("umount"), staging], check=False, capture_output=True)


def backup(state: HubState, dest: Path, *, out: Out = print) -> dict[str, object]:
    """Back up the class (see the module docstring) into the new directory ``dest``.

    Returns
    -------
    dict
        The manifest (also written as ``dest/manifest.json``).

    Raises
    ------
    FileExistsError
        If ``dest`` exists and is not empty.
    """
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise FileExistsError(t("hub.backup.not_empty", path=dest))
    dest.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(dest, 0o700)
    (dest / "state").mkdir(mode=0o700)
    (dest / "homes").mkdir(mode=0o700)
    if (state.root / _DB).exists():
        _copy_db(state.root / _DB, dest / _DB)
    for name in STATE_FILES:
        if (state.root / name).exists():
            shutil.copy2(state.root / name, dest / "state" / name)
    if (state.root / TLS_DIR).is_dir():  # the class CA: a new one means every PC trusts again
        shutil.copytree(state.root / TLS_DIR, dest / "state" / TLS_DIR, symlinks=True)
    passwords = state.accounts.copy_to(Accounts(dest))
    teacher = state.settings().teacher
    students = [s.username for s in state.roster() if s.username != teacher]
    people = students + ([teacher] if teacher else [])  # the teacher's home is kept too
    homes: dict[str, dict[str, int]] = {}
    for name in people:
        found = _archive_home(state, name, dest / "homes" / f"{name}.tar")
        if found is None:
            out(t("hub.backup.no_home", name=name))
            continue
        homes[name] = found
        out(t("hub.backup.home", name=name, files=found["files"],
              mib=round(found["bytes"] / 2**20, 1)))
    manifest: dict[str, object] = {
        "format": FORMAT, "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "state_dir": str(state.root), "teacher": teacher, "students": students,
        "homes": homes, "passwords": passwords, "hub_db": (dest / _DB).exists()}
    (dest / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=1),
                                        encoding="utf-8")
    out(t("hub.backup.done", path=dest, n=len(homes)))
    return manifest


def _manifest(src: Path) -> dict[str, object]:
    try:
        doc = json.loads((src / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ValueError(t("hub.restore.no_manifest", path=src)) from err
    if doc.get("format") != FORMAT:
        raise ValueError(t("hub.restore.format", path=src, found=doc.get("format")))
    return dict(doc)


def _restore_state(src: Path, state: HubState) -> None:
    """Put the backup's database, state files and TLS folder back (a stopped hub's)."""
    if (src / _DB).exists():
        _copy_db(src / _DB, state.root / _DB)
    for name in STATE_FILES:
        if (src / "state" / name).exists():
            shutil.copy2(src / "state" / name, state.root / name)
            os.chmod(state.root / name, 0o600)
    if (src / "state" / TLS_DIR).is_dir():
        shutil.copytree(src / "state" / TLS_DIR, state.root / TLS_DIR, symlinks=True,
                        dirs_exist_ok=True)
        os.chmod(state.root / TLS_DIR, 0o700)


def _extract_home(archive: Path, home: Path, uid: int, gid: int) -> tuple[int, list[str]]:
    """Extract a home archive into ``home`` and give every extracted path to the student.

    Each member passes tarfile's ``data`` filter (nothing lands outside ``home``, no device
    files); one it refuses (a student's ``ln -s /abs/path``, which the filter calls an
    absolute link) is left out and named, never the end of the restore (the trial: one such
    link stopped the restore half-way, the home's folders left owned by root).

    Returns
    -------
    tuple[int, list[str]]
        The regular files extracted, and the members left out (their names in the home).
    """
    kept: list[tarfile.TarInfo] = []
    skipped: list[str] = []

    def keep(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
        if member.type not in _KEPT_TYPES:
            return None
        try:
            extracted = tarfile.data_filter(member, dest)
        except tarfile.FilterError:
            skipped.append(member.name.removeprefix("./"))
            return None
        kept.append(member)  # its own mode: the filtered one has none for a folder
        return extracted

    with tarfile.open(archive) as tar:
        tar.extractall(home, filter=keep)
    for member in kept:
        os.lchown(home / member.name, uid, gid)
        if member.isdir():  # the data filter leaves a folder's mode to the umask (0755): a
            # 0700 folder (~/.labkit, ~/.labkit/run) comes back 0700; never group/other write
            os.chmod(home / member.name, member.mode & 0o755)
    os.chown(home, uid, gid)
    os.chmod(home, 0o700)
    return sum(1 for m in kept if m.isfile()), skipped


def _restore_student(state: HubState, src: Path, student: Student, teacher: str,
                     out: Out) -> None:
    from labkit.hub import accounts, disk
    from labkit.hub.removal import running_processes

    if running_processes(student.username):
        raise ValueError(t("hub.restore.running", name=student.username))
    entry = accounts.ensure_system_user(
        student.username, role="teacher" if student.username == teacher else "student")
    settings = state.settings()
    if disk.probe().works and int(settings.disk_limit_mib) > 0:
        disk.StudentDisk(entry.pw_name, int(settings.disk_limit_mib), state.images_dir).ensure()
    Accounts(src).copy_to(state.accounts, [student.username])
    archive = src / "homes" / f"{student.username}.tar"
    files, skipped = (_extract_home(archive, Path(entry.pw_dir), entry.pw_uid, entry.pw_gid)
                      if archive.exists() else (0, []))
    out(t("hub.restore.student", name=student.username, files=files))
    if skipped:
        out(t("hub.restore.skipped", name=student.username, n=len(skipped),
              paths=first_few(skipped, 5)))


def restore(state: HubState, src: Path, names: Sequence[str] = (), *,
            out: Out = print) -> int:
    """Restore students (``names``), or the whole class and hub state (none named).

    Returns
    -------
    int
        The exit status: 0 restored; 1 refused (the hub runs for a whole restore, or a
        student's processes run); 2 a bad name or backup.
    """
    from labkit.hub.accounts import NeedRootError, require_root
    from labkit.hub.sessions import hub_is_running

    src = Path(src)
    try:
        require_root()
        manifest = _manifest(src)
        roster = {s.username: s for s in HubState(src / "state").roster()}
        teacher = str(manifest.get("teacher") or "")
        if teacher and teacher not in roster:
            roster[teacher] = Student(teacher)
        wanted = [validate_username(n) for n in names] or list(roster)
        missing = [n for n in wanted if n not in roster]
        if missing:
            raise ValueError(t("hub.restore.not_in_backup", names=", ".join(missing)))
    except NeedRootError as err:
        out(str(err))
        return 2
    except ValueError as err:
        out(t("hub.restore.bad", reason=str(err)))
        return 2
    if not names:
        if hub_is_running(state):
            out(t("hub.restore.hub_running"))
            return 1
        _restore_state(src, state)
        out(t("hub.restore.state"))
    else:  # back on the roster (the running hub reads it at each login)
        current = state.roster()
        have = {s.username for s in current}
        state.save_roster(current + [Student(**asdict(roster[n])) for n in wanted
                                     if n not in have and n != teacher])
    try:
        for name in wanted:
            _restore_student(state, src, roster[name], teacher, out)
    except ValueError as err:
        out(str(err))
        return 1
    out(t("hub.restore.done", n=len(wanted), path=src))
    return 0
