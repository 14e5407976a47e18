"""Read GPU logs for lesson 01: operators' files, uploads, and ``data/traces/``.

Every reader returns lesson 01's tidy frame (:class:`labkit.observe.LogImport`, columns
:data:`labkit.observe.FRAME_COLUMNS`):

- :func:`read_nvidia_smi_csv` -- ``nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]``
  (:mod:`~labkit.data.observe.smi_csv`);
- :func:`read_nvidia_smi_dmon` -- ``nvidia-smi dmon`` (:mod:`~labkit.data.observe.dmon`);
- :func:`read_nvidia_smi_query` -- ``nvidia-smi -q`` / ``-q -x`` snapshots, with the snapshot
  itself (:mod:`~labkit.data.observe.smi_query`);
- :func:`read_dcgm_exporter` -- dcgm-exporter scrapes, parsed by ``prometheus_client``
  (:mod:`~labkit.data.observe.dcgm`);
- :func:`read_log_file` / :func:`read_log` -- any of them, detected (:func:`detect_format`).

Text arrives in every encoding nvidia-smi output is saved in (:func:`decode_log`): UTF-8 with or
without a BOM, UTF-16 LE/BE with a BOM (Windows PowerShell's ``>``), CRLF line ends. Sizes are
checked before reading; nothing is written anywhere. Errors are :class:`labkit.observe.LogError`
(a ``ValueError``) naming the file and line, with a ``kind`` the UI turns into Korean.

``data/traces/`` holds small traces the lesson replays. Each starts with ``# key: value`` lines
carrying at least ``source`` and ``as_of`` (checked here); ``segments`` (``name@start_s,...``)
names the stretches of a scenario recording.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import codecs
import io
import os
from collections.abc import Sequence
from pathlib import Path, PurePath
from typing import IO, Any

from labkit.data import DataError, data_dir
from labkit.data.observe.chunks import byte_chunks, checked_size
from labkit.data.observe.dcgm import read_dcgm_exporter
from labkit.data.observe.dmon import parse_nvidia_smi_dmon, read_dmon_chunks
from labkit.data.observe.formats import FORMATS, detect_format, read_log
from labkit.data.observe.smi_csv import (
    COMMON_FIELD_SETS,
    GPU_COLUMNS,
    header_fields,
    parse_nvidia_smi_csv,
    preview_rows,
)
from labkit.data.observe.smi_csv_chunked import read_nvidia_smi_csv_chunks
from labkit.data.observe.smi_csv_stream import NotStreamable
from labkit.data.observe.smi_query import (
    GpuSnapshot,
    MigDeviceSnapshot,
    ProcessSnapshot,
    SmiSnapshot,
    parse_nvidia_smi_query,
)
from labkit.data.observe.tidy import parse_tidy_csv
from labkit.data.prometheus import read_prometheus
from labkit.data.traces import check_trace_header
from labkit.observe.logs import LogError, LogImport

__all__ = [
    "COMMON_FIELD_SETS",
    "FORMATS",
    "GPU_COLUMNS",
    "MAX_LOG_BYTES",
    "TRACE_DIR",
    "GpuSnapshot",
    "LogError",
    "LogImport",
    "MigDeviceSnapshot",
    "ProcessSnapshot",
    "SmiSnapshot",
    "decode_log",
    "detect_format",
    "header_fields",
    "load_trace",
    "parse_nvidia_smi_csv",
    "parse_nvidia_smi_dmon",
    "parse_nvidia_smi_query",
    "parse_tidy_csv",
    "preview_rows",
    "read_dcgm_exporter",
    "read_dcgm_exporter_file",
    "read_log",
    "read_log_file",
    "read_nvidia_smi_csv",
    "read_nvidia_smi_dmon",
    "read_nvidia_smi_query",
    "read_prometheus",
    "trace_names",
    "trace_segments",
]

#: Largest log file read (a day of nvidia-smi CSV at 1 Hz on 8 GPUs is ~12 MB). [bytes]
MAX_LOG_BYTES = 16 * 1024 * 1024
#: The lesson's traces, relative to ``data/``.
TRACE_DIR = "traces"
TRACE_SUFFIXES = (".csv", ".prom", ".txt")

PathOrBuffer = str | os.PathLike[str] | IO[str] | IO[bytes]

#: Byte-order marks -> codec (Unicode 15, section 23.8; PowerShell 5's ``>`` writes UTF-16LE).
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))


#: File signatures of what operators upload by mistake (PNG, JPEG, GIF, PDF, ZIP/xlsx, gzip,
#: ELF); from each format's specification.
_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF8", b"%PDF-", b"PK\x03\x04",
          b"\x1f\x8b", b"\x7fELF")


def _binary(data: bytes) -> bool:
    """Whether bytes are a known binary format or hold control bytes no text log has."""
    if data.startswith(_MAGIC):
        return True
    head = data[:4096]
    control = sum(1 for b in head if (b < 32 and b not in (9, 10, 13)) or b == 127)
    return bool(head) and b"\0" not in head[:2] and control > len(head) // 100 + 2


def _cp949_log(data: bytes) -> str | None:
    """Return CP949 (EUC-KR and Korean Excel's re-save) text if the bytes decode cleanly and the
    text looks like a log: every non-ASCII character Hangul or CJK punctuation (a wrong code
    page gives Hanja or symbols); None otherwise. As labkit.data.roster reads rosters."""
    try:
        text = data.decode("cp949")
    except UnicodeDecodeError:
        return None
    other = [c for c in text if ord(c) > 127]
    hangul = sum(1 for c in other if "\uac00" <= c <= "\ud7a3" or "\u3000" <= c <= "\u318f")
    return text if other and hangul == len(other) and "\0" not in text else None


def decode_log(data: bytes, *, name: str = "<upload>", max_bytes: int = MAX_LOG_BYTES,
               cp949: bool = True) -> str:
    """Return uploaded or read bytes as text, checking the size first.

    UTF-8 (a BOM dropped) and UTF-16 LE/BE with a BOM are decoded; CRLF and CR line ends are
    left to the readers (they split lines with :meth:`str.splitlines`). Without a BOM, text
    that is not UTF-8 is read as CP949 (a Korean Excel re-save) only when it decodes cleanly
    and every non-ASCII character is Hangul; anything else is refused with the line: guessing
    other legacy code pages (cp1252) could silently change names. A binary file (an image, an
    archive) is refused as not a log.

    Parameters
    ----------
    cp949 : bool
        Whether to try CP949 after UTF-8 (False: the chunked readers, which stream UTF-8).

    Raises
    ------
    LogError
        (a ``ValueError``, ``kind`` "too_large", "binary" or "encoding") if ``data`` is larger
        than ``max_bytes``, binary, or neither UTF-8, BOM-marked UTF-16 nor Korean CP949 (the
        message names ``name`` and the 1-based line).
    """
    if len(data) > max_bytes:
        raise LogError(f"{name}: {len(data):,} bytes, more than the {max_bytes:,} allowed",
                       kind="too_large", source=name)
    codec = next((c for bom, c in _BOMS if data.startswith(bom)), "utf-8")
    if codec == "utf-8" and _binary(data):
        raise LogError(f"{name}: not a log (binary data: an image, archive or program?)",
                       kind="binary", source=name)
    try:
        text = data.decode(codec)
    except UnicodeDecodeError as err:
        korean = _cp949_log(data) if codec == "utf-8" and cp949 else None
        if korean is not None:
            return korean
        hint = ("UTF-16 without a byte-order mark?" if data[1:2] == b"\0" or data[:1] == b"\0"
                else "re-save it as UTF-8")
        line = data[:err.start].count(b"\n") + 1
        raise LogError(f"{name}, line {line}: not {codec.upper().removesuffix('-SIG')} text; "
                       f"{hint}", kind="encoding", source=name, line=line) from None
    if "\0" in text:
        raise LogError(f"{name}: text holds NUL characters (a binary file, or UTF-16 without "
                       "a byte-order mark); re-save it as UTF-8", kind="encoding", source=name)
    return text


def _read(path_or_buffer: PathOrBuffer, max_bytes: int) -> tuple[str, str]:
    """Return (text, name) of a path or an open file, reading at most ``max_bytes`` + 1."""
    if isinstance(path_or_buffer, (str, os.PathLike)):
        path = Path(path_or_buffer)
        name = path.name
        checked_size(path, max_bytes)
        with path.open("rb") as fh:
            data: Any = fh.read(max_bytes + 1)
    else:
        name = PurePath(str(getattr(path_or_buffer, "name", "<buffer>"))).name
        data = path_or_buffer.read(max_bytes + 1)
    if isinstance(data, str):
        if len(data.encode("utf-8")) > max_bytes:
            raise ValueError(f"{name}: more than the {max_bytes:,} bytes allowed")
        return data.removeprefix("\ufeff"), name
    return decode_log(bytes(data), name=name, max_bytes=max_bytes), name


def read_nvidia_smi_csv(path_or_buffer: PathOrBuffer, *,
                        fields: Sequence[str] | str | None = None, strict: bool = False,
                        max_bytes: int = MAX_LOG_BYTES, gpu_column: str | None = None
                        ) -> LogImport:
    """Read an ``nvidia-smi --query-gpu=... --format=csv`` log from a path or an open file.

    See :func:`labkit.data.observe.smi_csv.parse_nvidia_smi_csv` for the layouts and timestamps
    understood (nvidia-smi's own, ISO-8601 with offsets, epoch seconds or milliseconds). The
    file is read in chunks (:mod:`labkit.data.observe.smi_csv_stream`; peak memory about the
    tidy frame) unless it needs the whole text (``strict``, a quoted cell, the header beyond the
    first chunk).

    Parameters
    ----------
    path_or_buffer : str, path, or open file (text or binary)
    fields : sequence of str or str, optional
        The ``--query-gpu`` list of a ``noheader`` log.
    strict : bool, default False
        Raise at the first unreadable row.
    max_bytes : int, default MAX_LOG_BYTES
    gpu_column : str, optional
        The column that tells GPUs apart (lesson 01's field picker), if not nvidia-smi's.

    Returns
    -------
    LogImport

    Raises
    ------
    ValueError
        Naming the file (and line): too large, an unknown encoding, not a readable
        nvidia-smi log, or two readings of one moment, GPU and metric.

    Used in: notebooks/01_observe.ipynb
    """
    if not strict:  # large files: in chunks (memory ~ the tidy frame), unless it needs the text
        source: Any = path_or_buffer
        if not isinstance(path_or_buffer, (str, os.PathLike)):
            data = path_or_buffer.read(max_bytes + 1)
            source = io.StringIO(data) if isinstance(data, str) else io.BytesIO(bytes(data))
            source.name = getattr(path_or_buffer, "name", "<buffer>")
        chunks, name = byte_chunks(source, max_bytes, _decode)
        size = (Path(source).stat().st_size if isinstance(source, (str, os.PathLike))
                else len(data))
        try:
            return read_nvidia_smi_csv_chunks(chunks, source=name, fields=fields,
                                              size_bytes=size, gpu_column=gpu_column)
        except NotStreamable:
            getattr(chunks, "close", lambda: None)()  # the file, if it was opened
            if not isinstance(source, (str, os.PathLike)):
                source.seek(0)
        path_or_buffer = source
    text, name = _read(path_or_buffer, max_bytes)
    return parse_nvidia_smi_csv(text, source=name, fields=fields, strict=strict,
                                gpu_column=gpu_column)


def _decode(data: bytes, name: str, max_bytes: int) -> str:
    # the chunked readers (a path or an open file) only call this to raise the whole file's
    # error: they stream UTF-8, so CP949 is for the upload and whole-text paths
    return decode_log(data, name=name, max_bytes=max_bytes, cp949=False)


def read_nvidia_smi_dmon(path_or_buffer: PathOrBuffer, *,
                         max_bytes: int = MAX_LOG_BYTES) -> LogImport:
    """Read an ``nvidia-smi dmon`` log (any ``-s`` groups, ``-o D``/``T``, several GPUs).

    See :func:`labkit.data.observe.dmon.parse_nvidia_smi_dmon`. The file is read in chunks
    (:func:`labkit.data.observe.dmon.read_dmon_chunks`): peak memory is about the tidy frame.

    Raises
    ------
    ValueError
        Naming the file (and line).

    Used in: notebooks/01_observe.ipynb
    """
    chunks, name = byte_chunks(path_or_buffer, max_bytes, _decode)
    size = (Path(path_or_buffer).stat().st_size
            if isinstance(path_or_buffer, (str, os.PathLike)) else None)
    return read_dmon_chunks(chunks, source=name, size_bytes=size)


def read_nvidia_smi_query(path_or_buffer: PathOrBuffer, *,
                          max_bytes: int = MAX_LOG_BYTES) -> SmiSnapshot:
    """Read an ``nvidia-smi -q`` (text) or ``nvidia-smi -q -x`` (XML) snapshot.

    Returns
    -------
    SmiSnapshot
        ``.gpus`` (each: ``name``, ``uuid``, ``mig_mode``, ``mig_devices`` with ``gi_id``,
        ``ci_id``, ``memory_total_mib``; reasons, ECC, remapped rows, processes), ``.frame``
        (tidy rows), ``.warnings``.

    Raises
    ------
    ValueError
        Naming the file (and line).

    Used in: notebooks/01_observe.ipynb
    """
    text, name = _read(path_or_buffer, max_bytes)
    return parse_nvidia_smi_query(text, source=name)


def read_dcgm_exporter_file(path_or_buffer: PathOrBuffer, *, interval_s: float | None = None,
                            max_bytes: int = MAX_LOG_BYTES) -> LogImport:
    """Read a saved dcgm-exporter scrape (``curl host:9400/metrics > file``).

    Raises
    ------
    ValueError
        Naming the file (and line).
    """
    text, name = _read(path_or_buffer, max_bytes)
    return read_dcgm_exporter(text, source=name, interval_s=interval_s)


def read_log_file(path_or_buffer: PathOrBuffer, *, fields: Sequence[str] | str | None = None,
                  max_bytes: int = MAX_LOG_BYTES, gpu_column: str | None = None) -> LogImport:
    """Read a log of any supported format (:data:`FORMATS`, detected by :func:`detect_format`).

    Raises
    ------
    ValueError
        Naming the file (and line).
    """
    text, name = _read(path_or_buffer, max_bytes)
    return read_log(text, source=name, fields=fields, gpu_column=gpu_column)


def trace_names() -> list[str]:
    """Return the file names in ``data/traces/`` the lesson can replay, sorted."""
    folder = data_dir() / TRACE_DIR
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir()
                  if p.is_file() and p.suffix in TRACE_SUFFIXES and not p.name.startswith("."))


def load_trace(name: str) -> LogImport:
    """Load one of the lesson's traces by file name, checking its ``source`` and ``as_of``.

    Parameters
    ----------
    name : str
        A name from :func:`trace_names` (a bare file name: no folders).

    Raises
    ------
    labkit.data.DataError
        For an unknown name or missing metadata (naming the file).
    ValueError
        If the file does not parse (naming the file and line).
    """
    if name not in trace_names():
        raise DataError(f"{TRACE_DIR}/{name}: no such trace (known: {', '.join(trace_names())})")
    log = read_log_file(data_dir() / TRACE_DIR / name)
    check_trace_header(log.metadata, f"{TRACE_DIR}/{name}")
    trace_segments(log)  # validates the optional segments line
    return log


def trace_segments(log: LogImport) -> list[tuple[str, float, float]]:
    """Return the named stretches ``(name, start_s, end_s)`` of a trace's ``segments`` line.

    ``# segments: idle@0,training@20,collective_stall@40`` -> each segment runs to the next
    one's start; the last to the end of the trace (plus one sample interval).

    Raises
    ------
    labkit.data.DataError
        For a malformed line or starts that do not increase.
    """
    raw = log.metadata.get("segments", "").strip()
    if not raw:
        return []
    starts: list[tuple[str, float]] = []
    for part in raw.split(","):
        name, sep, at = part.strip().partition("@")
        try:
            start = float(at)
        except ValueError:
            start = float("nan")
        if not sep or not name or not start == start:
            raise DataError(f"{log.source}: bad segments entry {part.strip()!r} "
                            "(expected name@start_s)")
        if starts and start <= starts[-1][1]:
            raise DataError(f"{log.source}: segment starts must increase ({part.strip()!r})")
        starts.append((name, start))
    times = log.frame["timestamp_s"]
    step = float(times.diff().loc[lambda d: d > 0].min()) if len(times.unique()) > 1 else 1.0
    end = float(times.max()) + step
    return [(name, start, starts[k + 1][1] if k + 1 < len(starts) else end)
            for k, (name, start) in enumerate(starts)]
