"""Read GPU logs from files for lesson 01: operators' logs, uploads, and ``data/traces/``.

The parsing itself is pure (:mod:`labkit.observe`); this module only gets the text: from a path
(size checked before reading), from an open file or buffer, or from uploaded bytes, always
capped in size and decoded as UTF-8 in memory. Nothing is written anywhere.

``data/traces/`` holds small traces the lesson replays. Each starts with ``# key: value`` lines
carrying at least ``source`` and ``as_of`` (checked here); ``segments`` (``name@start_s,...``)
names the stretches of a scenario recording.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path, PurePath
from typing import IO, Any

from labkit.data import DataError, data_dir
from labkit.observe import LogImport, parse_nvidia_smi_csv, read_dcgm_exporter, read_log

__all__ = [
    "MAX_LOG_BYTES",
    "TRACE_DIR",
    "decode_log",
    "load_trace",
    "read_dcgm_exporter_file",
    "read_log_file",
    "read_nvidia_smi_csv",
    "trace_names",
    "trace_segments",
]

#: Largest log file read (a day of nvidia-smi CSV at 1 Hz on 8 GPUs is ~12 MB). [bytes]
MAX_LOG_BYTES = 16 * 1024 * 1024
#: The lesson's traces, relative to ``data/``.
TRACE_DIR = "traces"
TRACE_SUFFIXES = (".csv", ".prom", ".txt")

PathOrBuffer = str | os.PathLike[str] | IO[str] | IO[bytes]


def decode_log(data: bytes, *, name: str = "<upload>", max_bytes: int = MAX_LOG_BYTES) -> str:
    """Return uploaded or read bytes as text (UTF-8, a BOM dropped), checking the size first.

    Raises
    ------
    ValueError
        If ``data`` is larger than ``max_bytes`` or not UTF-8 text (the message names ``name``).
    """
    if len(data) > max_bytes:
        raise ValueError(f"{name}: {len(data):,} bytes, more than the {max_bytes:,} allowed")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ValueError(f"{name}: not UTF-8 text (byte {err.start})") from None


def _read(path_or_buffer: PathOrBuffer, max_bytes: int) -> tuple[str, str]:
    """Return (text, name) of a path or an open file, reading at most ``max_bytes`` + 1."""
    if isinstance(path_or_buffer, (str, os.PathLike)):
        path = Path(path_or_buffer)
        name = path.name
        try:
            size = path.stat().st_size
        except OSError as err:
            raise ValueError(f"{name}: cannot read ({err.strerror})") from None
        if size > max_bytes:
            raise ValueError(f"{name}: {size:,} bytes, more than the {max_bytes:,} allowed")
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
                        max_bytes: int = MAX_LOG_BYTES) -> LogImport:
    """Read an ``nvidia-smi --query-gpu=... --format=csv`` log from a path or an open file.

    See :func:`labkit.observe.parse_nvidia_smi_csv` for the layouts understood.

    Raises
    ------
    ValueError
        Naming the file (and line): too large, not UTF-8, or not a readable nvidia-smi log.

    Used in: notebooks/01_observe.ipynb
    """
    text, name = _read(path_or_buffer, max_bytes)
    return parse_nvidia_smi_csv(text, source=name, fields=fields, strict=strict)


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
                  max_bytes: int = MAX_LOG_BYTES) -> LogImport:
    """Read a log of any supported format (nvidia-smi CSV, dcgm-exporter, labkit tidy CSV).

    Raises
    ------
    ValueError
        Naming the file (and line).
    """
    text, name = _read(path_or_buffer, max_bytes)
    return read_log(text, source=name, fields=fields)


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
    for key in ("source", "as_of"):
        if not log.metadata.get(key):
            raise DataError(f"{TRACE_DIR}/{name}, line 1: missing '# {key}: ...' header line")
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
