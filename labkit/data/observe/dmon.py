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
    blocks: list[_Block] = []
    current: _Block | None = None
    for n in range(start, len(lines)):
        raw = lines[n]
        stripped = raw.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            cols = _header_columns(stripped)
            if cols is not None and (current is None or cols != current.columns):
                current = _Block(cols, [], [])
                blocks.append(current)
            continue
        if current is None:
            raise LogError(f"{where(source, n + 1)}: no nvidia-smi dmon header ('# gpu ...') "
                           f"before the first data line", kind="layout", source=source,
                           line=n + 1)
        current.numbers.append(n + 1)
        current.lines.append(stripped)
    return blocks


def _stamps(table: pd.DataFrame, columns: tuple[str, ...]) -> tuple[np.ndarray | None,
                                                                     datetime | None, np.ndarray]:
    """Return (seconds since the first, first time, rows that are unreadable)."""
    bad = np.zeros(len(table), dtype=bool)
    if "date" not in columns and "time" not in columns:
        return None, None, bad
    text = pd.Series("", index=table.index)
    fmt = ""
    if "date" in columns:
        text = table["date"].str.replace(r"[/-]", "", regex=True)
        fmt = "%Y%m%d"
    if "time" in columns:
        text = (text + " " + table["time"]) if fmt else table["time"]
        fmt = f"{fmt} %H:%M:%S" if fmt else "%H:%M:%S"
    stamps = pd.to_datetime(text, format=fmt, errors="coerce")
    bad = stamps.isna().to_numpy()
    if bad.all():
        return None, None, bad
    if "date" not in columns:  # -o T only: a time before the previous one is the next day
        seconds = (stamps - stamps[~bad].iloc[0]).dt.total_seconds().to_numpy()
        filled = pd.Series(seconds).ffill().fillna(0.0).to_numpy()  # a bad row is no wrap
        step = np.diff(filled, prepend=0.0)
        seconds = seconds + 86400.0 * np.cumsum(step < -43200)
        return seconds, None, bad
    first = stamps[~bad].min()
    seconds = (stamps - first).dt.total_seconds().to_numpy()
    return seconds, first.to_pydatetime(), bad


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
    table = pd.read_csv(io.StringIO("\n".join(good)), sep=r"\s+", header=None,
                        names=list(block.columns), na_values=["-"], keep_default_na=False,
                        dtype={c: str for c in ("date", "time", "gi", "ci") if c in block.columns},
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
    values, dash = [], []
    for col, (_metric, _unit, factor) in zip(cols, spec, strict=True):
        raw = table[col]
        numeric = pd.api.types.is_numeric_dtype(raw)
        values.append((raw.to_numpy(dtype=float) if numeric else
                       pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)) * factor)
        dash.append(np.isnan(values[-1]) if numeric else
                    (raw.isna() | (raw == "-")).to_numpy())
    value = np.concatenate(values)
    missing = np.isnan(value)
    n = len(table)
    which = np.repeat(np.arange(len(cols)), n)
    metric: Any = _codes([m for m, _, _ in spec], which)
    if suffix is not None:  # MIG instance rows: per-row names (rare, small)
        metric = np.asarray(metric, dtype=object) + np.tile(suffix, len(cols))
    # long frame built from arrays; text columns as categoricals (one code per row, not one
    # string object per row: a day of 8 GPUs is ~10 million rows)
    frame = pd.DataFrame({
        "timestamp_s": np.tile(t, len(cols)),
        "gpu": np.tile(gpu[keep].to_numpy(dtype=np.int64), len(cols)),
        "metric": metric, "value": value,
        "unit": _codes([u for _, u, _ in spec], which),
        "status": pd.Categorical.from_codes(missing.astype(np.int8),
                                            [str(Status.OK), str(Status.NOT_AVAILABLE)]),
        "reason": pd.Categorical.from_codes(
            np.where(missing, np.where(np.concatenate(dash), 1, 2), 0).astype(np.int8),
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
