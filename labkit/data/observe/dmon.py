"""Read ``nvidia-smi dmon`` logs into the tidy frame.

``nvidia-smi dmon`` prints one line per GPU per interval under a ``#`` header line naming the
columns and a ``#`` line of units; ``-s`` picks the column groups (``p`` power/temperature,
``u`` utilization, ``c`` clocks, ``v`` power/thermal violations, ``m`` frame-buffer/BAR1
memory, ``e`` ECC and PCIe replay errors, ``t`` PCIe throughput), ``-o D`` / ``-o T`` prepend
date (``YYYYMMDD``) and time (``HH:MM:SS``) columns, ``-i`` chooses GPUs, and a value the GPU
does not report prints as ``-``. The header is printed again every screenful and when logs of
several runs are concatenated.

Column names follow nvidia-smi (``nvidia-smi dmon -h`` and the ``nvidia-smi`` man page, "Device
Monitoring"): ``sm`` is the share of time a kernel ran (NVML ``utilization.gpu``, the same number
as ``--query-gpu=utilization.gpu``), ``mem`` the memory-controller busy share, ``pclk`` the
graphics/SM clock, ``fb`` the frame buffer in use (MiB), ``rxpci``/``txpci`` PCIe throughput in
MB/s, ``pci`` the PCIe replay count.

MIG: a header with ``gi`` (and ``ci``) columns gives per-instance rows; a row whose ``gi`` is a
number is that MIG instance's series (metric ``<key>@mig:gi<id>`` or ``...:ci<id>``), ``-`` the
whole GPU. (No public log with instance rows was found; this layout is an assumption, tested on
constructed input only.)

The parsing is vectorised with pandas (the lines are filtered in Python, then read as one
whitespace-separated table), so a day of 1 Hz on 8 GPUs (691,200 lines) reads in seconds.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from labkit.data.observe.common import check_lines, split_meta, tidy_log, where
from labkit.observe.logs import LogError, LogImport, UnparsedRow
from labkit.observe.readings import Status

__all__ = ["DMON_COLUMNS", "parse_nvidia_smi_dmon"]

#: dmon column -> (tidy metric, unit, factor from dmon's unit). Known catalog metrics use their
#: key; the others keep nvidia-smi's column name (``dmon.enc``). Units from dmon's units row.
DMON_COLUMNS: Mapping[str, tuple[str, str, float]] = MappingProxyType({
    "pwr": ("power_usage_w", "W", 1.0),
    "gtemp": ("gpu_temp_c", "degC", 1.0),
    "mtemp": ("memory_temp_c", "degC", 1.0),
    "sm": ("gpu_util_frac", "frac", 0.01),
    "mem": ("mem_copy_util_frac", "frac", 0.01),
    "enc": ("dmon.enc", "frac", 0.01),
    "dec": ("dmon.dec", "frac", 0.01),
    "jpg": ("dmon.jpg", "frac", 0.01),
    "ofa": ("dmon.ofa", "frac", 0.01),
    "mclk": ("dmon.mclk", "MHz", 1.0),
    "pclk": ("sm_clock_mhz", "MHz", 1.0),
    "pviol": ("dmon.pviol", "frac", 0.01),
    "tviol": ("dmon.tviol", "flag", 1.0),
    "fb": ("fb_used_mib", "MiB", 1.0),
    "bar1": ("dmon.bar1", "MiB", 1.0),
    "ccpm": ("dmon.ccpm", "MiB", 1.0),
    "sbecc": ("dmon.sbecc", "count", 1.0),
    "dbecc": ("dmon.dbecc", "count", 1.0),
    "pci": ("pcie_replay_count", "count", 1.0),
    # MB/s -> KB/s (NVML's unit for nvmlDeviceGetPcieThroughput; 1 MB = 1000 KB)
    "rxpci": ("pcie_rx_kb_per_s", "KB/s", 1000.0),
    "txpci": ("pcie_tx_kb_per_s", "KB/s", 1000.0),
})
_ID_COLUMNS = ("date", "time", "gpu", "gi", "ci")
_DATE = re.compile(r"^(\d{4})[/-]?(\d{2})[/-]?(\d{2})$")


@dataclass(frozen=True)
class _Block:
    """The data lines under one header: (line numbers, lines)."""

    columns: tuple[str, ...]
    numbers: list[int]
    lines: list[str]


def _header_columns(line: str) -> tuple[str, ...] | None:
    """Return the column names of a dmon header line (``# gpu pwr ...``), else None."""
    names = tuple(c.lower() for c in line.lstrip("#").split())
    if "gpu" not in names or names[0] not in ("gpu", "date", "time"):
        return None
    if "idx" in names:  # the units row
        return None
    return names


def _blocks(lines: list[str], start: int, source: str) -> list[_Block]:
    """Group the data lines under their header (a repeated identical header continues)."""
    blocks: list[_Block] = []
    marks = [n for n in range(start, len(lines)) if lines[n].lstrip().startswith("#")]
    for k, n in enumerate([*marks, len(lines)]):
        first = marks[k - 1] + 1 if k else start
        body = [m for m in range(first, n) if lines[m] and not lines[m].isspace()]
        if body and not blocks:
            raise LogError(f"{where(source, body[0] + 1)}: no nvidia-smi dmon header ('# gpu "
                           "...') before the first data line", kind="layout", source=source,
                           line=body[0] + 1)
        if body:
            blocks[-1].numbers.extend(m + 1 for m in body)
            blocks[-1].lines.extend(lines[m] for m in body)
        if n < len(lines):
            cols = _header_columns(lines[n].strip())
            if cols is not None and (not blocks or cols != blocks[-1].columns):
                blocks.append(_Block(cols, [], []))
    return blocks


def _clock_seconds(values: pd.Series) -> np.ndarray:
    """Seconds since midnight of ``HH:MM:SS`` cells (NaN if not a time); parsed per distinct
    value (a day has 86,400 of them, the log ~8x more lines)."""
    codes, uniq = pd.factorize(values.astype(str))
    parts = pd.Series(uniq, dtype=object).str.split(":", expand=True)
    if parts.shape[1] != 3:
        return np.full(len(values), np.nan)
    hms = parts.apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
    ok = (hms[:, 0] < 24) & (hms[:, 1] < 60) & (hms[:, 2] < 61)
    secs = np.where(ok, hms[:, 0] * 3600 + hms[:, 1] * 60 + hms[:, 2], np.nan)
    return np.where(codes >= 0, secs[codes], np.nan)


def _day_seconds(values: pd.Series) -> tuple[np.ndarray, pd.Timestamp | None]:
    """Seconds of each ``YYYYMMDD`` (or ``YYYY/MM/DD``) cell since the earliest, and that day."""
    codes, uniq = pd.factorize(values.astype(str).str.replace(r"[/-]", "", regex=True)
                               if values.dtype == object else values.astype(str))
    days = pd.to_datetime(pd.Series(uniq), format="%Y%m%d", errors="coerce")
    if days.isna().all():
        return np.full(len(values), np.nan), None
    first = days.min()
    secs = (days - first).dt.total_seconds().to_numpy()
    return np.where(codes >= 0, secs[codes], np.nan), first


def _stamps(table: pd.DataFrame, columns: tuple[str, ...]) -> tuple[np.ndarray | None,
                                                                     datetime | None, np.ndarray]:
    """Return (seconds since the first, first time, rows that are unreadable)."""
    if "date" not in columns and "time" not in columns:
        return None, None, np.zeros(len(table), dtype=bool)
    clock = _clock_seconds(table["time"]) if "time" in columns else np.zeros(len(table))
    if "date" not in columns:  # -o T only: a time before the previous one is the next day
        bad = np.isnan(clock)
        if bad.all():
            return None, None, bad
        filled = pd.Series(clock).ffill().fillna(0.0).to_numpy()  # a bad row is no wrap
        step = np.diff(filled, prepend=filled[0])
        seconds = clock - clock[~bad][0] + 86400.0 * np.cumsum(step < -43200)
        return seconds, None, bad
    day, first_day = _day_seconds(table["date"])
    total = day + clock
    bad = np.isnan(total)
    if first_day is None or bad.all():
        return None, None, bad
    first = float(np.nanmin(total))
    return total - first, (first_day + pd.Timedelta(seconds=first)).to_pydatetime(), bad


def _read_block(block: _Block, source: str, unparsed: list[UnparsedRow],
                seq0: int) -> tuple[pd.DataFrame, datetime | None, int]:
    """Return the long frame of one header block, its first time, and rows used."""
    width = len(block.columns)
    counts = np.fromiter((len(s.split()) for s in block.lines), dtype=np.int64,
                         count=len(block.lines))
    ok = counts == width
    for k in np.flatnonzero(~ok)[:1000]:
        unparsed.append(UnparsedRow(block.numbers[k], f"{counts[k]} cells, the header has "
                                    f"{width}", block.lines[k][:120]))
    good = [s for s, keep in zip(block.lines, ok, strict=True) if keep]
    numbers = np.asarray(block.numbers)[ok]
    if not good:
        return pd.DataFrame(), None, 0
    # '-' (not reported) is read as NaN by the C parser; a column with anything else that is
    # not a number comes back as text and is converted (and its garbage marked) below
    table = pd.read_csv(io.BytesIO("\n".join(good).encode()), sep=r"\s+", header=None,
                        names=list(block.columns), na_values=["-"], keep_default_na=False,
                        dtype={c: str for c in ("time", "gi", "ci") if c in block.columns},
                        engine="c")
    seconds, first, bad_time = _stamps(table, block.columns)
    gpu = table["gpu"] if pd.api.types.is_numeric_dtype(table["gpu"]) else pd.to_numeric(
        table["gpu"], errors="coerce")
    bad = bad_time | gpu.isna().to_numpy()
    for k in np.flatnonzero(bad)[:1000]:
        unparsed.append(UnparsedRow(int(numbers[k]), "bad gpu index or date/time",
                                    good[k][:120]))
    keep = ~bad
    table = table[keep]
    seq = np.arange(seq0, seq0 + len(table), dtype=float)
    t = seconds[keep] if seconds is not None else seq
    suffix = _mig_suffix(table, block.columns)
    cols = [c for c in block.columns if c not in _ID_COLUMNS]
    spec = [DMON_COLUMNS.get(c, (f"dmon.{c}", "", 1.0)) for c in cols]
    values: list[np.ndarray] = []
    dash: list[np.ndarray] = []
    for col, (_metric, _unit, factor) in zip(cols, spec, strict=True):
        raw = table[col]
        numeric = pd.api.types.is_numeric_dtype(raw)
        values.append((raw.to_numpy(dtype=float) if numeric else
                       pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)) * factor)
        dash.append(np.isnan(values[-1]) if numeric else
                    (raw.isna() | (raw == "-")).to_numpy())
    # row-major (line by line, the metrics of a line in sorted order): the frame comes out in
    # the tidy order (time, GPU, metric) without sorting ~10 million rows
    order = sorted(range(len(cols)), key=lambda k: spec[k][0])
    n = len(table)
    value = np.column_stack([values[k] for k in order]).ravel() if cols else np.empty(0)
    blank = np.column_stack([dash[k] for k in order]).ravel() if cols else np.empty(0, bool)
    missing = np.isnan(value)
    which = np.tile(np.asarray(order), n)
    metric: Any = _codes([m for m, _, _ in spec], which)
    if suffix is not None:  # MIG instance rows: per-row names (rare, small)
        metric = np.asarray(metric, dtype=object) + np.repeat(suffix, len(cols))
    # text columns as categoricals: one code per row, not one string object per row
    frame = pd.DataFrame({
        "timestamp_s": np.repeat(t, len(cols)),
        "gpu": np.repeat(gpu[keep].to_numpy(dtype=np.int64), len(cols)),
        "metric": metric, "value": value,
        "unit": _codes([u for _, u, _ in spec], which),
        "status": pd.Categorical.from_codes(missing.astype(np.int8),
                                            [str(Status.OK), str(Status.NOT_AVAILABLE)]),
        "reason": pd.Categorical.from_codes(
            np.where(missing, np.where(blank, 1, 2), 0).astype(np.int8),
            ["", "-", "not a number"])})
    return frame, first, n


def _codes(names: list[str], which: np.ndarray) -> pd.Categorical:
    """Return ``names[which]`` as a categorical with sorted categories (sorts like the text)."""
    cats = sorted(set(names))
    index = np.asarray([cats.index(x) for x in names], dtype=np.int16)
    return pd.Categorical.from_codes(index[which], cats)


def _mig_suffix(table: pd.DataFrame, columns: tuple[str, ...]) -> pd.Series | None:
    if "gi" not in columns:
        return None
    gi = table["gi"].fillna("-").where(table["gi"].fillna("-") != "-", "")
    suffix = ("@mig:gi" + gi).where(gi != "", "")
    if "ci" in columns:
        ci = table["ci"].fillna("-").where(table["ci"].fillna("-") != "-", "")
        suffix = suffix + (":ci" + ci).where((ci != "") & (gi != ""), "")
    return suffix.to_numpy()


def parse_nvidia_smi_dmon(text: str, *, source: str = "<text>") -> LogImport:
    """Read the text of an ``nvidia-smi dmon`` log (any ``-s`` groups, ``-o D``/``T``/``DT``).

    Parameters
    ----------
    text : str
        The log.
    source : str
        File name for messages.

    Returns
    -------
    LogImport
        ``format == "nvidia-smi-dmon"``; one row per (line, column). Known columns become
        catalog metrics in labkit units (``sm`` -> ``gpu_util_frac`` 0-1, ``pwr`` ->
        ``power_usage_w``, ``pclk`` -> ``sm_clock_mhz``, ``fb`` -> ``fb_used_mib``, ``rxpci``
        MB/s -> ``pcie_rx_kb_per_s``); others keep their name as ``dmon.<column>``. ``-`` is a
        missing reading (``not_available``, reason ``"-"``). Time: seconds from the first
        date/time (``-o T`` alone rolls over at midnight), else the line order per GPU.

    Raises
    ------
    LogError
        (a ``ValueError``) naming the file and line: no header before the data, no data,
        more than half the lines unreadable.

    References
    ----------
    .. [1] ``nvidia-smi`` man page, "Device Monitoring" (``dmon -s pucvmet -o DT``).

    Used in: notebooks/01_observe.ipynb
    """
    lines = check_lines(text, source)
    meta, start = split_meta(lines)
    # split_meta stops at the '# gpu' header only if it has no ':'; find the header ourselves
    start = next((n for n in range(len(lines))
                  if _header_columns(lines[n].strip()) is not None), start)
    meta = {k: v for k, v in meta.items() if k not in ("gpu", "Idx")}
    unparsed: list[UnparsedRow] = []
    blocks = _blocks(lines, start, source)
    data_lines = sum(len(b.lines) for b in blocks)
    if not blocks or data_lines == 0:
        raise LogError(f"{source}: no nvidia-smi dmon data lines", kind="layout",
                       source=source)
    frames, firsts = [], []
    seq = 0
    for block in blocks:
        frame, first, used = _read_block(block, source, unparsed, seq)
        seq += used
        if not frame.empty:
            frames.append(frame)
        if first is not None:
            firsts.append(first)
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["timestamp_s", "gpu", "metric", "value", "unit", "status", "reason"])
    if frames and not firsts:  # no clock: per GPU, the k-th line is tick k
        frame["timestamp_s"] = _ticks_per_gpu(frame)
    devices: dict[int, dict[str, str]] = {int(g): {} for g in frame["gpu"].unique()}
    unparsed.sort(key=lambda u: u.line)
    return tidy_log(frame, source=source, fmt="nvidia-smi-dmon", data_lines=data_lines,
                    unparsed=unparsed, start=min(firsts) if firsts else None,
                    devices=devices, ignored=(), meta=meta)


def _ticks_per_gpu(frame: pd.DataFrame) -> np.ndarray:
    """Without a clock, line k of a GPU is tick k (dmon prints every GPU once per interval)."""
    seq = frame["timestamp_s"].to_numpy()
    out = np.empty(len(frame))
    for (_g, _m), idx in frame.groupby(["gpu", "metric"], sort=False).indices.items():
        order = np.argsort(seq[idx], kind="stable")
        out[idx[order]] = np.arange(len(idx), dtype=float)
    return out
