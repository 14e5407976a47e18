"""Shared pieces of the lesson 01 log readers: metadata lines, size checks, building the LogImport.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from labkit.observe.catalog import FRAME_COLUMNS
from labkit.observe.logs import (
    MAX_LOG_LINES,
    MAX_UNPARSED_FRAC,
    LogError,
    LogImport,
    UnparsedRow,
)


def where(source: str, line: int) -> str:
    """Return ``"<source>, line <n>"`` for messages."""
    return f"{source}, line {line}"


def split_meta(lines: list[str]) -> tuple[dict[str, str], int]:
    """Return the leading ``# key: value`` metadata and the index of the first other line."""
    meta: dict[str, str] = {}
    i = 0
    while i < len(lines) and (lines[i].startswith("#") or not lines[i].strip()):
        text = lines[i].lstrip("#").strip()
        if ":" in text and not lines[i].startswith(("# HELP", "# TYPE")):
            key, _, value = text.partition(":")
            if re.fullmatch(r"[A-Za-z_][\w.-]*", key.strip()):
                meta[key.strip()] = value.strip()
        elif lines[i].startswith(("# HELP", "# TYPE")):
            break
        i += 1
    return meta, i


def check_lines(text: str, source: str) -> list[str]:
    """Return the lines of ``text``; raise ValueError if it is not text or too long."""
    if not isinstance(text, str):
        raise ValueError(f"{source}: expected text, got {type(text).__name__}")
    lines = text.splitlines()
    if len(lines) > MAX_LOG_LINES:
        raise ValueError(f"{source}: {len(lines):,} lines, more than {MAX_LOG_LINES:,}")
    return lines



def meta_interval(meta: Mapping[str, str], source: str) -> float:
    """Return the ``# interval_s:`` metadata (default 1 s); raise ValueError if bad."""
    raw = meta.get("interval_s")
    if raw is None:
        return 1.0
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{source}: metadata interval_s is not a number: {raw!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{source}: metadata interval_s must be > 0, got {raw!r}")
    return value


def _check_unparsed(rows: int, unparsed: list[UnparsedRow], data_lines: int, source: str) -> None:
    if data_lines == 0:
        raise ValueError(f"{source}: no data rows")
    if len(unparsed) > MAX_UNPARSED_FRAC * data_lines or not rows:
        first = unparsed[0] if unparsed else None
        place = where(source, first.line) if first else source
        raise ValueError(f"{place}: {len(unparsed)} of {data_lines} data rows cannot be read "
                         f"(unknown layout?); first problem: "
                         f"{first.reason if first else 'no values'}")


def stamp_seconds(stamps: list[datetime], source: str) -> tuple[np.ndarray, datetime]:
    """Return seconds since the earliest stamp (ms resolution) and that stamp.

    Stamps with a UTC offset (ISO-8601 ``+08:00``, epoch) compare as instants; a file that
    mixes stamps with and without an offset is rejected (the naive ones have no defined zone).

    Raises
    ------
    ValueError
        If some stamps carry a UTC offset and others do not.
    """
    aware = {s.tzinfo is not None for s in set(stamps)}
    if len(aware) > 1:
        raise ValueError(f"{source}: some timestamps carry a UTC offset and some do not")
    start = min(stamps)
    cache: dict[datetime, float] = {}
    out = np.empty(len(stamps))
    for k, s in enumerate(stamps):
        v = cache.get(s)
        if v is None:
            v = cache[s] = (s - start).total_seconds()
        out[k] = v
    # one tick's GPUs are printed a few ms apart: each row keeps its own time
    return np.round(out, 3), start


def tidy_log(frame: pd.DataFrame, *, source: str, fmt: str, data_lines: int,
             unparsed: list[UnparsedRow], start: datetime | None,
             devices: Mapping[int, Mapping[str, str]], ignored: tuple[str, ...],
             meta: Mapping[str, str]) -> LogImport:
    """Return the :class:`~labkit.observe.LogImport` of a frame with :data:`FRAME_COLUMNS`.

    Sorts by time, GPU and metric and fixes the dtypes (value float, gpu int, text columns
    str; a categorical text column, as the dmon reader builds for millions of rows, stays
    categorical: same values, one code per row). For readers that build their columns at
    once (``read_nvidia_smi_dmon``, ``read_prometheus``).

    Raises
    ------
    ValueError
        For no rows, or more than :data:`~labkit.observe.MAX_UNPARSED_FRAC` of the data lines
        unreadable (naming the file and the first bad line).
    """
    _check_unparsed(len(frame), unparsed, data_lines, source)
    text = {c: frame[c] if isinstance(frame[c].dtype, pd.CategoricalDtype)  # kept compact
            else (frame[c].fillna("") if c == "reason" else frame[c]).astype(str)
            for c in ("metric", "unit", "status", "reason")}
    gpu = frame["gpu"] if pd.api.types.is_integer_dtype(frame["gpu"]) else \
        frame["gpu"].astype(int)  # a small integer type (dmon: int8) is kept
    frame = frame.assign(value=frame["value"].astype(float), gpu=gpu, **text)
    if not _in_tidy_order(frame):
        frame = frame.sort_values(["timestamp_s", "gpu", "metric"], kind="stable")
    frame = frame[list(FRAME_COLUMNS)].reset_index(drop=True)
    return LogImport(frame, source, fmt, data_lines, tuple(unparsed), start,
                     MappingProxyType({g: MappingProxyType(dict(v)) for g, v in devices.items()}),
                     ignored, MappingProxyType(dict(meta)))


def _in_tidy_order(frame: pd.DataFrame) -> bool:
    """Whether rows already run by time, GPU, then metric (a categorical metric: by its code,
    whose categories are sorted). Checked with numpy, so a reader that builds its rows in
    order skips sorting millions of them."""
    metric = frame["metric"]
    if len(frame) < 2 or not isinstance(metric.dtype, pd.CategoricalDtype) or \
            list(metric.cat.categories) != sorted(metric.cat.categories):
        return False
    t = frame["timestamp_s"].to_numpy()
    g = frame["gpu"].to_numpy()
    m = metric.cat.codes.to_numpy()
    step = 1 << 16  # rows at a time: the differences of 10 million at once would be ~250 MB
    for a in range(0, len(frame) - 1, step):
        b = min(a + step + 1, len(frame))
        dt, dg, dm = np.diff(t[a:b]), np.diff(g[a:b].astype(np.int64)), np.diff(
            m[a:b].astype(np.int64))
        if not np.all((dt > 0) | ((dt == 0) & ((dg > 0) | ((dg == 0) & (dm > 0))))):
            return False
    return True


def finish_log(rows: list[tuple[Any, ...]], unparsed: list[UnparsedRow], data_lines: int,
               source: str, fmt: str, devices: Mapping[int, Mapping[str, str]],
               ignored: tuple[str, ...], meta: Mapping[str, str], *, time_mode: str,
               interval_s: float = 1.0) -> LogImport:
    """Build the LogImport from rows ``(t, stamp, gpu, metric, value, unit, status, reason)``.

    ``time_mode``: ``"stamp"`` (seconds from the earliest datetime ``stamp``), ``"seq"``
    (``t`` is a row/scrape number, times ``interval_s``), ``"epoch"`` (``t`` in seconds since
    the epoch; rebased to the first).

    Raises
    ------
    ValueError
        As :func:`tidy_log`, and for timestamps that mix UTC offsets and none.
    """
    _check_unparsed(len(rows), unparsed, data_lines, source)
    cols = list(zip(*rows, strict=True))
    start: datetime | None = None
    if time_mode == "stamp":
        seconds, start = stamp_seconds(list(cols[1]), source)
    elif time_mode == "epoch":
        t = np.asarray(cols[0], dtype=float)
        first_s = float(t.min())
        start = datetime.fromtimestamp(first_s, tz=UTC)
        seconds = np.round(t - first_s, 3)
    else:
        seconds = np.asarray(cols[0], dtype=float) * interval_s
    frame = pd.DataFrame({"timestamp_s": seconds, "gpu": cols[2], "metric": cols[3],
                          "value": np.asarray([np.nan if v is None else v for v in cols[4]],
                                              dtype=float),
                          "unit": cols[5], "status": [str(s) for s in cols[6]],
                          "reason": ["" if r is None else r for r in cols[7]]})
    return tidy_log(frame, source=source, fmt=fmt, data_lines=data_lines, unparsed=unparsed,
                    start=start, devices=devices, ignored=ignored, meta=meta)


def first_doubled(frame: pd.DataFrame) -> int | None:
    """Return the row of a tidy frame (sorted by time, GPU, metric) that repeats the moment,
    GPU and metric of the row before it, or None: a reader never returns two such readings."""
    if len(frame) < 2:
        return None
    metric = frame["metric"]
    codes = (metric.cat.codes.to_numpy() if isinstance(metric.dtype, pd.CategoricalDtype)
             else pd.factorize(metric)[0])
    t, g = frame["timestamp_s"].to_numpy(), frame["gpu"].to_numpy()
    same = np.flatnonzero((t[1:] == t[:-1]) & (g[1:] == g[:-1]) & (codes[1:] == codes[:-1]))
    return int(same[0]) + 1 if len(same) else None


def check_single_readings(log: LogImport, columns: str) -> LogImport:
    """Return ``log`` if no (moment, GPU, metric) has two readings; else refuse it.

    Parameters
    ----------
    columns : str
        What tells moments and GPUs apart in this format, for the message (``"time, gpu"``).

    Raises
    ------
    LogError
        Kind ``"duplicate"``, naming the GPU, the metric, the moment and ``columns``.
    """
    k = first_doubled(log.frame)
    if k is None:
        return log
    row = log.frame.iloc[k]
    raise LogError(f"{log.source}: two readings of GPU {int(row['gpu'])} {row['metric']} at "
                   f"{float(row['timestamp_s']):g} s (columns {columns}); the log mixes two "
                   "GPUs or devices under one name", kind="duplicate", source=log.source)
