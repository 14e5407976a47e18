"""A student's exercise results on the class hub: ``~/.labkit/progress.jsonl``, in their own home.

Each checked answer of a lesson exercise (``labkit.ui.exercises``) appends one JSON line::

    {"v": 1, "time": "2026-12-01T09:30:00+00:00", "exercise": "goodput.ex1",
     "correct": true, "answer": "86.1"}

Only on the class hub: :func:`record_result` does nothing unless ``$JUPYTERHUB_USER`` is set
(the single-user server sets it, and kernels inherit it), so ``make lab``, ``make present`` and
CI never write anything. The file lives in the student's own home (0700 on the hub), is written
with mode 0600 and never through a symbolic link. The student's server serves it to the
teacher's class page (``labkit.hub.classpage``, a hub service running as root) reads it itself
with :func:`read_student_progress`, which opens it the way a privileged reader must open a file
its owner controls: no symbolic link followed at any step, a regular file owned by the student
(not a FIFO, not a hard link to someone else's file). :func:`read_progress` reads it back,
skipping lines it cannot read (the student owns the file and may have edited it).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from dataclasses import dataclass
from pathlib import Path

from labkit.data.owned import UnsafeFile, read_owned

__all__ = ["MAX_BYTES", "ProgressRecord", "UnsafeProgressFile", "progress_path", "read_progress",
           "read_student_progress", "record_result"]

#: Most of the file that is read back (its newest part). [bytes]
MAX_BYTES = 1_000_000
_MAX_ANSWER = 40
_MAX_KEY = 80
_HUB_ENV = "JUPYTERHUB_USER"


@dataclass(frozen=True)
class ProgressRecord:
    """One checked answer.

    Attributes
    ----------
    time : str
        When it was checked (ISO 8601, UTC).
    exercise : str
        The exercise's catalog key (``"goodput.ex1"``; the lesson is the first part).
    correct : bool or None
        None when the answer was not a number.
    answer : str
        What the student typed (at most 40 characters).
    """

    time: str
    exercise: str
    correct: bool | None
    answer: str


def progress_path(home: str | os.PathLike[str] | None = None) -> Path:
    """Return the progress file of the home directory ``home`` (default: ``~``)."""
    base = Path(home) if home is not None else Path.home()
    return base / ".labkit" / "progress.jsonl"


def record_result(exercise: str, answer: str, correct: bool | None, *,
                  home: str | os.PathLike[str] | None = None) -> bool:
    """Append one checked answer to the student's progress file, on the class hub only.

    Parameters
    ----------
    exercise : str
        The exercise key (``Exercise.key``).
    answer : str
        The typed answer (cut to 40 characters).
    correct : bool or None
        The check's verdict (None: not a number).
    home : path, optional
        The home directory (default ``~``).

    Returns
    -------
    bool
        True if a line was written; False outside a hub (``$JUPYTERHUB_USER`` unset).

    Raises
    ------
    OSError
        If the file cannot be written (e.g. it is a symbolic link); callers in the UI catch
        it, so a lesson never fails over its progress file.
    """
    if not os.environ.get(_HUB_ENV):
        return False
    path = progress_path(home)
    path.parent.mkdir(mode=0o700, exist_ok=True)
    line = json.dumps({
        "v": 1, "time": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "exercise": str(exercise)[:_MAX_KEY], "correct": correct,
        "answer": str(answer)[:_MAX_ANSWER]}, ensure_ascii=False) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, line.encode("utf-8"))
    finally:
        os.close(fd)
    return True


def _record(doc: object) -> ProgressRecord | None:
    if not isinstance(doc, dict) or doc.get("v") != 1:
        return None
    time, key, correct, answer = (doc.get(k) for k in ("time", "exercise", "correct", "answer"))
    if not (isinstance(time, str) and isinstance(key, str) and 0 < len(key) <= _MAX_KEY
            and (correct is None or isinstance(correct, bool))):
        return None
    return ProgressRecord(time[:40], key, correct, str(answer)[:_MAX_ANSWER])


#: A progress path a privileged reader must not read (:class:`labkit.data.owned.UnsafeFile`).
UnsafeProgressFile = UnsafeFile


def _parse(raw: bytes, cut: bool) -> tuple[list[ProgressRecord], int]:
    lines = raw.decode("utf-8", errors="replace").splitlines()
    if cut and lines:
        lines = lines[1:]  # the first line was cut in the middle
    records: list[ProgressRecord] = []
    skipped = 0
    for line in lines:
        if not line.strip():
            continue
        try:
            rec = _record(json.loads(line))
        except ValueError:
            rec = None
        if rec is None:
            skipped += 1
        else:
            records.append(rec)
    return records, skipped


def _read_tail(fd: int) -> tuple[list[ProgressRecord], int]:
    with os.fdopen(fd, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        f.seek(max(0, size - MAX_BYTES))
        raw = f.read(MAX_BYTES)
    return _parse(raw, size > MAX_BYTES)


def read_progress(path: str | os.PathLike[str]) -> tuple[list[ProgressRecord], int]:
    """Return the records of a progress file (oldest first) and how many lines were skipped.

    Reads at most the newest :data:`MAX_BYTES` of the file; a missing file has no records.
    Lines that are not a version-1 record (broken JSON, wrong types) are skipped and counted.

    Raises
    ------
    OSError
        If the file exists but cannot be read.
    """
    try:
        fd = os.open(Path(path), os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return [], 0
    return _read_tail(fd)


def read_student_progress(home: str | os.PathLike[str], uid: int
                          ) -> tuple[list[ProgressRecord], int]:
    """Read a student's ``<home>/.labkit/progress.jsonl`` as a privileged reader (root).

    Each step (the home, ``.labkit``, the file) is opened with ``O_NOFOLLOW`` relative to the
    one before (``openat``), and must be owned by ``uid``; the file must be a regular file with
    one link, opened ``O_NONBLOCK`` (a FIFO cannot hold the reader). So whatever the student
    puts at that path, root reads only a file the student owns.

    Parameters
    ----------
    home : path
        The student's home directory (from the system account, never from the student).
    uid : int
        The student's uid.

    Returns
    -------
    (list of ProgressRecord, int)
        As :func:`read_progress`; a missing file or ``.labkit`` folder has no records.

    Raises
    ------
    UnsafeProgressFile
        If a step is a symbolic link, not owned by ``uid``, or the file is not regular.
    OSError
        If it cannot be read otherwise.
    """
    try:
        raw, size = read_owned(home, uid, (".labkit", "progress.jsonl"), MAX_BYTES)
    except FileNotFoundError:
        return [], 0
    return _parse(raw, size > MAX_BYTES)
