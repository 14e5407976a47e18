"""Files a privileged reader (the hub's class page, root) opens in a student's home.

The student owns their home and everything in it, so any path there may be a symbolic link to
``/etc/shadow``, a FIFO that blocks the reader, a hard link to a classmate's file, or a folder
where a file was. :func:`open_owned` opens such a path the one safe way: each step relative to
the one before (``openat``), ``O_NOFOLLOW`` at every step, ``O_NONBLOCK``, and each step owned by
the student; the last a regular file with one link. :func:`list_owned` lists a folder the same
way.

References
----------
.. [1] open(2), "O_NOFOLLOW", "O_NONBLOCK", "O_DIRECTORY"; openat(2). Linux man-pages 6.x.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence

__all__ = ["UnsafeFile", "list_owned", "open_owned", "read_owned"]


class UnsafeFile(OSError):
    """A path in a student's home that a privileged reader must not read.

    ``reason`` is ``"symlink"`` (a link at some step), ``"not_regular"`` (a FIFO, socket,
    folder where a file was, or a file where a folder was) or ``"owner"`` (not owned by the
    student, or hard-linked).
    """

    def __init__(self, reason: str, path: str) -> None:
        super().__init__(f"refusing to read {path}: {reason}")
        self.reason = reason


def _open_step(name: str, uid: int, flags: int, dir_fd: int | None, shown: str) -> int:
    try:
        fd = os.open(name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.ENOTDIR):  # a link, or not a folder
            link = stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
            raise UnsafeFile("symlink" if link else "not_regular", shown) from err
        raise
    info = os.fstat(fd)
    directory = bool(flags & os.O_DIRECTORY)
    problem = None
    if info.st_uid != uid:
        problem = "owner"
    elif not directory and not stat.S_ISREG(info.st_mode):
        problem = "not_regular"
    elif not directory and info.st_nlink != 1:
        problem = "owner"  # a hard link: maybe someone else's file under the student's name
    if problem:
        os.close(fd)
        raise UnsafeFile(problem, shown)
    return fd


def _walk(home: str | os.PathLike[str], uid: int, folders: Sequence[str], shown: str) -> int:
    """Open ``home/folders...`` as folders owned by ``uid``; return the last one's fd."""
    directory = os.O_RDONLY | os.O_DIRECTORY
    fd = _open_step(os.fspath(home), uid, directory, None, shown)
    try:
        for name in folders:
            if name in ("", ".", "..") or "/" in name:
                raise ValueError(f"not a plain name: {name!r}")
            inner = _open_step(name, uid, directory, fd, shown)
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_owned(home: str | os.PathLike[str], uid: int, parts: Sequence[str]) -> int:
    """Open ``home/parts...`` for reading as a privileged reader; return the file descriptor.

    Parameters
    ----------
    home : path
        The student's home (from the system account, never from the student).
    uid : int
        The student's uid: every step must be owned by it.
    parts : sequence of str
        Plain names below ``home`` (no ``/``, ``.`` or ``..``), the file last.

    Raises
    ------
    UnsafeFile
        If a step is a link or not owned by ``uid``, or the file is not a regular file.
    FileNotFoundError, OSError
        If a step is missing or cannot be opened.
    ValueError
        If a part is not a plain name.
    """
    shown = os.path.join(os.fspath(home), *parts)
    *folders, name = parts
    if name in ("", ".", "..") or "/" in name:
        raise ValueError(f"not a plain name: {name!r}")
    parent = _walk(home, uid, folders, shown)
    try:
        return _open_step(name, uid, os.O_RDONLY, parent, shown)
    finally:
        os.close(parent)


def read_owned(home: str | os.PathLike[str], uid: int, parts: Sequence[str],
               max_bytes: int) -> tuple[bytes, int]:
    """Return the newest ``max_bytes`` of ``home/parts...`` and the file's size (see
    :func:`open_owned`, which raises the same errors). [bytes]"""
    fd = open_owned(home, uid, parts)
    with os.fdopen(fd, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        f.seek(max(0, size - max_bytes))
        return f.read(max_bytes), size


def list_owned(home: str | os.PathLike[str], uid: int, folders: Sequence[str]) -> list[str]:
    """Return the names in the folder ``home/folders...`` (each step checked as in
    :func:`open_owned`), sorted."""
    fd = _walk(home, uid, folders, os.path.join(os.fspath(home), *folders))
    try:
        return sorted(os.listdir(fd))
    finally:
        os.close(fd)
