"""The upload control of lesson 01's replay: one log file, size-capped, read in memory.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from labkit.i18n import t
from labkit.ui.observe.errors import reader_error_text

__all__ = ["LOG_ERROR_KINDS", "MAX_UPLOAD_BYTES", "UPLOAD_SUFFIXES", "log_error_text",
           "read_upload", "too_large_text", "upload_hint_text"]

#: Largest upload accepted: an operator's day of logs. A day of 1 Hz ``nvidia-smi dmon`` on 8
#: GPUs is 691,200 lines, about 45 MB (issue 16's benchmark); the readers' own line limit is
#: ``labkit.observe.logs.MAX_LOG_LINES`` (1,000,000). The file travels in 1 MiB chunks
#: (:mod:`labkit.ui.observe.chunked_upload`), so the websocket's 8 MiB message limit does not
#: bound it; the kernel holds it about three times over while reading (bytes, text, frame). [bytes]
MAX_UPLOAD_BYTES = 64 * 1024 * 1024
UPLOAD_SUFFIXES = (".csv", ".txt", ".prom", ".log", ".xml")

def read_upload(value: Any, *, max_bytes: int = MAX_UPLOAD_BYTES,
                suffixes: Sequence[str] = UPLOAD_SUFFIXES) -> tuple[str, bytes]:
    """Check a ``FileUpload`` value (one file, size-capped, allowed suffix); return (name, data).

    The checks of :func:`labkit.ui.files.read_upload` with the log suffixes of this lesson.
    Kept in memory: nothing is written to disk.

    Raises
    ------
    labkit.validate.InputError
        Field ``files`` (``at_least`` none, ``at_most`` more than one, ``other`` not an upload),
        ``size`` (``at_most``), ``suffix`` (``choice``).
    """
    from labkit.ui.files import read_upload as read_checked

    upload = read_checked(value, max_bytes=max_bytes, suffixes=suffixes)
    return upload.name, upload.data


#: LogError kinds with their own Korean sentence (labkit.observe.LogError.kind).
LOG_ERROR_KINDS = ("encoding", "binary", "too_large", "layout", "no_header", "timestamp",
                   "xml", "duplicate")


def log_error_text(err: ValueError, *, source: str | None = None) -> str:
    """Return the Korean message for a log that cannot be read (with a hint where one helps).

    A :class:`labkit.observe.LogError` gets the sentence of its ``kind`` (e.g. "re-save as
    UTF-8" for an unknown encoding); any other ``ValueError`` the generic one. The detail
    (file, line and what is wrong) follows in Korean (:func:`reader_error_text`): no English
    reaches the student. Plain text: the panel escapes it.
    """
    kind = getattr(err, "kind", None)
    key = f"observe.log_error.{kind}" if kind in LOG_ERROR_KINDS else "observe.replay.bad_file"
    return t(key, message=reader_error_text(err, source=source))


def _mb(size: int) -> str:
    return f"{size / 1e6:,.1f} MB"


def too_large_text(name: str, size: int, *, limit: int = MAX_UPLOAD_BYTES) -> str:
    """Return the Korean message for a file over the upload limit: its size, the limit, and how
    to cut it (the first lines with ``head``, a shorter recording with nvidia-smi's options).

    Parameters
    ----------
    name : str
        The file's name (as the browser gave it).
    size, limit : int
        The file's size and the largest upload. [bytes]
    """
    return t("observe.upload.too_large", name=name[:120] or "-", size=_mb(size), limit=_mb(limit))


def upload_hint_text(*, limit: int = MAX_UPLOAD_BYTES) -> str:
    """Return the Korean line beside the upload control: the size limit (from
    :data:`MAX_UPLOAD_BYTES`, the one place it is written) and that nothing is stored."""
    return t("observe.upload.hint", limit=_mb(limit))
