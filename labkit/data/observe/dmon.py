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

The log is read in chunks (:mod:`~labkit.data.observe.chunks`): numpy finds each chunk's
header and data lines and counts their cells, pandas' C parser reads the data lines as one
whitespace-separated table per chunk, and the tidy columns go straight into preallocated
arrays, so a day of 1 Hz on 8 GPUs (691,200 lines, 9.7 million tidy rows) needs about the
memory of its tidy frame.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import pandas as pd

from labkit.data.observe.chunks import ChunkLines, TidySink, byte_chunks, classify
from labkit.data.observe.common import (
    check_lines,
    check_single_readings,
    split_meta,
    tidy_log,
    where,
)
from labkit.observe.logs import MAX_LOG_LINES, LogError, LogImport, UnparsedRow
from labkit.observe.readings import Status

__all__ = ["DMON_COLUMNS", "parse_nvidia_smi_dmon", "read_dmon_chunks"]

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


@dataclass
class _Block:
    """The lines under one header, read chunk by chunk (state carried between chunks)."""

    columns: tuple[str, ...]
    sink_start: int = 0
    #: earliest date+time (seconds since 1970, naive) of the block, for ``-o D``/``DT``
    first_s: float | None = None
    #: ``-o T`` only: the first time of day, the last one seen, midnights passed
    clock0: float | None = None
    clock_last: float | None = None
    days: int = 0
    bad_cells: int = 0  # unparsed rows reported (at most 1000 of each kind per block)
    bad_rows: int = 0
    #: no clock: the last device key read and the smallest one (see :func:`_check_cycles`)
    last_key: int | None = None
    min_key: int | None = None


def _header_columns(line: str) -> tuple[str, ...] | None:
    """Return the column names of a dmon header line (``# gpu pwr ...``), else None."""
    names = tuple(c.lower() for c in line.lstrip("#").split())
    if "gpu" not in names or names[0] not in ("gpu", "date", "time"):
        return None
    if "idx" in names:  # the units row
        return None
    return names


def _clock_seconds(values: pd.Series) -> np.ndarray:
    """Seconds since midnight of ``HH:MM:SS`` cells (NaN if not a time); parsed per distinct
    value (a day has 86,400 of them, the log ~8x more lines). Cells of exactly that shape
    (two digits each) are read with numpy; others are split on ``:``."""
    codes, uniq = pd.factorize(values)
    cells = [u if isinstance(u, str) else str(u) for u in uniq.tolist()]
    secs = np.full(len(cells), np.nan)
    slow = np.ones(len(cells), dtype=bool)
    fast = np.flatnonzero(np.fromiter((len(c) == 8 and c.isascii() for c in cells), dtype=bool,
                                      count=len(cells)))
    if len(fast):
        d = np.array([cells[k] for k in fast.tolist()], dtype="S8").view(np.uint8).reshape(
            -1, 8).astype(np.int64) - ord("0")
        digits = np.all((d[:, [0, 1, 3, 4, 6, 7]] >= 0) & (d[:, [0, 1, 3, 4, 6, 7]] <= 9), axis=1)
        shape = digits & (d[:, 2] == ord(":") - ord("0")) & (d[:, 5] == ord(":") - ord("0"))
        h, m, sec = d[:, 0] * 10 + d[:, 1], d[:, 3] * 10 + d[:, 4], d[:, 6] * 10 + d[:, 7]
        ok = shape & (h < 24) & (m < 60) & (sec < 61)
        secs[fast] = np.where(ok, h * 3600 + m * 60 + sec, np.nan)
        slow[fast[shape]] = False
    if slow.any():
        rest = np.flatnonzero(slow)
        parts = pd.Series([cells[k] for k in rest.tolist()], dtype=object).str.split(
            ":", expand=True)
        if parts.shape[1] == 3:
            hms = parts.apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
            ok = (hms[:, 0] < 24) & (hms[:, 1] < 60) & (hms[:, 2] < 61)
            secs[rest] = np.where(ok, hms[:, 0] * 3600 + hms[:, 1] * 60 + hms[:, 2], np.nan)
    return np.where(codes >= 0, secs[codes], np.nan) if len(cells) else np.full(
        len(values), np.nan)


def _day_epoch_seconds(values: pd.Series) -> np.ndarray:
    """Seconds from 1970-01-01 (naive) to each ``YYYYMMDD`` (``YYYY/MM/DD``, ``YYYY-MM-DD``)
    cell; NaN if not a date. Parsed per distinct value (a day's log has one or two)."""
    codes, uniq = pd.factorize(values)
    if not len(uniq):
        return np.full(len(values), np.nan)
    text = [str(int(u)) if isinstance(u, (int, float, np.number)) and float(u).is_integer()
            else re.sub(r"[/-]", "", str(u)) for u in uniq]
    days = pd.to_datetime(pd.Series(text, dtype=object), format="%Y%m%d", errors="coerce")
    secs = (days - pd.Timestamp(0)).dt.total_seconds().to_numpy(dtype=float)
    return np.where(codes >= 0, secs[codes], np.nan)


def _times(block: _Block, table: pd.DataFrame) -> tuple[np.ndarray | None, np.ndarray]:
    """Return (time of each row, rows whose date/time is unreadable); None: no clock.

    ``-o D``/``DT``: seconds since 1970 (the block's earliest is subtracted at the end).
    ``-o T`` alone: seconds from the block's first time, a time before the previous one is the
    next day (carried from chunk to chunk).
    """
    columns = block.columns
    if "date" not in columns and "time" not in columns:
        return None, np.zeros(len(table), dtype=bool)
    clock = _clock_seconds(table["time"]) if "time" in columns else np.zeros(len(table))
    if "date" in columns:
        total = _day_epoch_seconds(table["date"]) + clock
        bad = np.isnan(total)
        if not bad.all():
            low = float(np.nanmin(total))
            block.first_s = low if block.first_s is None else min(block.first_s, low)
        return total, bad
    bad = np.isnan(clock)
    if bad.all():
        return None, bad
    if block.clock0 is None:
        block.clock0 = float(clock[~bad][0])
    # a bad row is no wrap: carry the last good time over it (and over the chunk boundary)
    filled = pd.Series(clock).ffill().fillna(
        block.clock_last if block.clock_last is not None else 0.0).to_numpy()
    step = np.diff(filled, prepend=block.clock_last if block.clock_last is not None
                   else filled[0])
    days = block.days + np.cumsum(step < -43200)
    block.clock_last, block.days = float(filled[-1]), int(days[-1])
    return clock - block.clock0 + 86400.0 * days, bad


class _DmonReader:
    """The state of one dmon log read chunk by chunk (see :mod:`.chunks`)."""

    def __init__(self, source: str, size_bytes: int | None) -> None:
        self.source = source
        self.size_bytes = size_bytes
        self.unparsed: list[UnparsedRow] = []
        self.blocks: list[_Block] = []
        self.meta: dict[str, str] | None = None
        self.head: list[str] = []  # the lines before the first data line (metadata)
        self.lines = 0  # lines of the chunks before this one
        self.data_lines = 0
        self.first_data_line: int | None = None  # a data line seen before any header
        self.seq = 0
        self.sink: TidySink | None = None
        self.metric_codes: dict[str, int] = {}
        self.unit_codes: dict[str, int] = {}
        self.gpus: dict[int, None] = {}

    def feed(self, chunk: bytes) -> None:
        """Read one chunk (ending with ``\\n``)."""
        lines = classify(chunk)
        data = (lines.cells > 0) & ~lines.hashed
        if self.meta is None:
            self._head(lines, data)
        pending: list[np.ndarray] = []
        pos = 0
        for mark in np.flatnonzero(lines.hashed).tolist():
            cols = _header_columns(lines.text(mark).strip())
            if cols is not None and (not self.blocks or cols != self.blocks[-1].columns):
                self._segment(lines, pos + np.flatnonzero(data[pos:mark]), pending)
                self._flush(lines, pending)
                self.blocks.append(_Block(cols, self.sink.n if self.sink else 0))
                pos = mark + 1
        self._segment(lines, pos + np.flatnonzero(data[pos:]), pending)
        self._flush(lines, pending)
        self.lines += len(lines)

    def _head(self, lines: ChunkLines, data: np.ndarray) -> None:
        """Collect the lines before the first data line: the ``# key: value`` metadata."""
        body = np.flatnonzero(data)
        end = int(lines.starts[body[0]]) if len(body) else len(lines.chunk)
        self.head.extend(lines.chunk[:end].decode("utf-8", "replace").split("\n")[:-1])
        if len(body):
            self._end_head()

    def _end_head(self) -> None:
        meta, _ = split_meta(self.head)
        self.meta = {k: v for k, v in meta.items() if k not in ("gpu", "Idx")}
        self.head = []

    def _segment(self, lines: ChunkLines, rows: np.ndarray, pending: list[np.ndarray]) -> None:
        """The data lines ``rows`` (indices in the chunk) of the current block."""
        if not len(rows):
            return
        if not self.blocks:  # before any header (an error only if no header ever comes)
            if self.first_data_line is None:
                self.first_data_line = self.lines + int(rows[0]) + 1
            return
        block = self.blocks[-1]
        self.data_lines += len(rows)
        width = len(block.columns)
        good = lines.cells[rows] == width
        for k in rows[~good][:max(0, 1000 - block.bad_cells)].tolist():
            self.unparsed.append(UnparsedRow(self.lines + k + 1, f"{lines.cells[k]} cells, the "
                                             f"header has {width}", lines.text(k)[:120]))
        block.bad_cells += int((~good).sum())
        pending.append(rows[good])

    def _flush(self, lines: ChunkLines, pending: list[np.ndarray]) -> None:
        rows = np.concatenate(pending) if pending else np.empty(0, dtype=np.int64)
        pending.clear()
        if len(rows) and self.blocks:
            self._read_rows(self.blocks[-1], lines, rows)

    def _read_rows(self, block: _Block, lines: ChunkLines, rows: np.ndarray) -> None:
        """Parse the good lines ``rows`` of ``block`` in this chunk into the sink."""
        columns = block.columns
        # '-' (not reported) is read as NaN by the C parser; a column with anything else that
        # is not a number comes back as text and is converted (and its garbage marked) below
        table = pd.read_csv(io.BytesIO(lines.join(rows)), sep=r"\s+", header=None,
                            names=list(columns), na_values=["-"], keep_default_na=False,
                            dtype={c: object for c in ("time", "gi", "ci") if c in columns},
                            engine="c")
        t, bad_time = _times(block, table)
        gpu = table["gpu"] if pd.api.types.is_numeric_dtype(table["gpu"]) else pd.to_numeric(
            table["gpu"], errors="coerce")
        bad = bad_time | gpu.isna().to_numpy()
        for k in np.flatnonzero(bad)[:max(0, 1000 - block.bad_rows)].tolist():
            self.unparsed.append(UnparsedRow(self.lines + int(rows[k]) + 1,
                                             "bad gpu index or date/time",
                                             lines.text(int(rows[k]))[:120]))
        block.bad_rows += int(bad.sum())
        keep = ~bad
        table = table[keep]
        n = len(table)
        if not n:
            return
        if t is None:
            self._check_cycles(block, table, rows[keep])
        seq = np.arange(self.seq, self.seq + n, dtype=float)
        self.seq += n
        cols = [c for c in columns if c not in _ID_COLUMNS]
        if not cols:
            return
        spec = [DMON_COLUMNS.get(c, (f"dmon.{c}", "", 1.0)) for c in cols]
        # row-major (line by line, the metrics of a line in sorted order): the frame comes out
        # in the tidy order (time, GPU, metric) without sorting ~10 million rows
        order = sorted(range(len(cols)), key=lambda k: spec[k][0])
        values = np.empty((n, len(cols)))
        dash = np.empty((n, len(cols)), dtype=bool)
        for j, k in enumerate(order):
            raw = table[cols[k]]
            if pd.api.types.is_numeric_dtype(raw):
                values[:, j] = raw.to_numpy(dtype=float) * spec[k][2]
                dash[:, j] = np.isnan(values[:, j])
            else:
                values[:, j] = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float) \
                    * spec[k][2]
                dash[:, j] = (raw.isna() | (raw == "-")).to_numpy()
        value, blank = values.ravel(), dash.ravel()
        missing = np.isnan(value)
        gpus = gpu[keep].to_numpy(dtype=np.int64)
        self.gpus.update(dict.fromkeys(pd.unique(gpus).tolist()))
        metric = self._metric_codes([spec[k][0] for k in order], table, columns, n)
        units = np.asarray([self.unit_codes.setdefault(spec[k][1], len(self.unit_codes))
                            for k in order], dtype=np.int8)
        if self.sink is None:
            self.sink = TidySink(self._estimate(lines, len(cols)))
        self.sink.add(np.repeat(t[keep] if t is not None else seq, len(cols)),
                      np.repeat(gpus, len(cols)), metric, value, np.tile(units, n),
                      missing.astype(np.int8),
                      np.where(missing, np.where(blank, 1, 2), 0).astype(np.int8))

    def _check_cycles(self, block: _Block, table: pd.DataFrame, rows: np.ndarray) -> None:
        """Without a clock, refuse a device that repeats before dmon's cycle wraps around.

        dmon prints every device (GPU, or GPU + GI + CI) once per interval, in index order
        (nvidia-smi man page, "Device Monitoring"), and the k-th line of a device is tick k: a
        device twice in one cycle (``0 0 1 1``, ``0 1 1``) would be read as a longer timeline of
        interleaved readings. A cycle wraps when a key is not above the last one; it must then
        come back to the smallest device seen (a log cut mid-cycle starts anywhere).
        """
        def index(name: str) -> np.ndarray:
            if name not in table.columns:
                return np.full(len(table), -1, dtype=np.int64)
            return pd.to_numeric(table[name], errors="coerce").fillna(-1).to_numpy(
                dtype=np.int64).clip(-1, (1 << 19) - 2)

        gpu = table["gpu"].to_numpy(dtype=np.int64)
        gi, ci = index("gi"), index("ci")
        keys = (gpu << 40) | ((gi + 1) << 20) | (ci + 1)
        if not len(keys):
            return
        before = np.concatenate([[keys[0] if block.last_key is None else block.last_key],
                                 keys[:-1]])
        low = np.minimum.accumulate(np.concatenate(
            [[keys[0] if block.min_key is None else block.min_key], keys]))[:-1]
        wraps = keys <= before
        if block.last_key is None:
            wraps[0] = False
        bad = np.flatnonzero(wraps & (keys > low))
        block.last_key, block.min_key = int(keys[-1]), int(min(low[-1], keys[-1]))
        if len(bad):
            k = int(bad[0])
            line = self.lines + int(rows[k]) + 1
            device = f"GPU {int(gpu[k])}" + (f" GI {int(gi[k])} CI {int(ci[k])}"
                                            if gi[k] >= 0 else "")
            raise LogError(f"{where(self.source, line)}: {device} repeats within one dmon "
                           "cycle (dmon prints each device once per interval, in index order); "
                           "without a -o T/DT time column the lines cannot be told apart",
                           kind="duplicate", source=self.source, line=line)

    def _metric_codes(self, names: list[str], table: pd.DataFrame, columns: tuple[str, ...],
                      n: int) -> np.ndarray:
        suffix = _mig_suffix(table, columns)
        if suffix is None:
            codes = np.asarray([self.metric_codes.setdefault(m, len(self.metric_codes))
                                for m in names], dtype=np.int16)
            return np.tile(codes, n)
        # MIG instance rows: per-row names (rare, small)
        full = np.tile(np.asarray(names, dtype=object), n) + np.repeat(suffix, len(names))
        local, uniq = pd.factorize(full)
        lookup = np.asarray([self.metric_codes.setdefault(str(m), len(self.metric_codes))
                             for m in uniq], dtype=np.int16)
        return lookup[local]

    def _estimate(self, lines: ChunkLines, width: int) -> int:
        """Tidy rows to allocate: the file's size / this chunk's bytes per line x width."""
        if not self.size_bytes or not len(lines):
            return 1 << 16
        per_line = len(lines.chunk) / len(lines)
        return int(self.size_bytes / per_line * width * 1.02) + 4096

    def finish(self) -> LogImport:
        """Return the LogImport of everything fed; raise for a log with no header or data."""
        source = self.source
        if self.meta is None:
            self._end_head()
        if self.lines > MAX_LOG_LINES:
            raise ValueError(f"{source}: {self.lines:,} lines, more than {MAX_LOG_LINES:,}")
        if not self.blocks and self.first_data_line is not None:
            raise LogError(f"{where(source, self.first_data_line)}: no nvidia-smi dmon header "
                           "('# gpu ...') before the first data line", kind="layout",
                           source=source, line=self.first_data_line)
        if not self.blocks or self.data_lines == 0:
            raise LogError(f"{source}: no nvidia-smi dmon data lines", kind="layout",
                           source=source)
        sink = self.sink if self.sink is not None else TidySink(0)
        sink.finish()
        firsts = []
        for k, block in enumerate(self.blocks):
            if block.first_s is not None:  # -o D / DT: seconds from the block's first time
                end = self.blocks[k + 1].sink_start if k + 1 < len(self.blocks) else sink.n
                sink.t[block.sink_start:end] -= block.first_s
                firsts.append(block.first_s)
        frame = self._frame(sink)
        if len(frame) and not firsts:  # no clock: per GPU, the k-th line is tick k
            frame["timestamp_s"] = _ticks_per_gpu(frame)
        start = ((pd.Timestamp(0) + pd.Timedelta(seconds=min(firsts))).to_pydatetime()
                 if firsts else None)
        self.unparsed.sort(key=lambda u: u.line)
        log = tidy_log(frame, source=source, fmt="nvidia-smi-dmon",
                       data_lines=self.data_lines, unparsed=self.unparsed, start=start,
                       devices={int(g): {} for g in self.gpus}, ignored=(),
                       meta=self.meta or {})
        return check_single_readings(log, "date/time, gpu, gi/ci")

    def _frame(self, sink: TidySink) -> pd.DataFrame:
        """The sink's columns as the tidy frame, text as categoricals (no copy of the numbers;
        metric categories sorted, so the row order is the tidy order)."""
        cats = sorted(self.metric_codes)
        lookup = np.empty(max(len(cats), 1), dtype=sink.metric.dtype)
        for name, code in self.metric_codes.items():
            lookup[code] = cats.index(name)
        sink.recode_metric(lookup)
        if not sink.in_tidy_order():  # e.g. a MIG instance's rows beside its GPU's
            sink.sort_tidy()
        metric = sink.metric
        return pd.DataFrame({
            "timestamp_s": sink.t, "gpu": sink.gpu,
            "metric": pd.Categorical.from_codes(metric, cats or [""]),
            "value": sink.value,
            "unit": pd.Categorical.from_codes(sink.unit, list(self.unit_codes) or [""]),
            "status": pd.Categorical.from_codes(sink.status, [str(Status.OK),
                                                              str(Status.NOT_AVAILABLE)]),
            "reason": pd.Categorical.from_codes(sink.reason, ["", "-", "not a number"])},
            copy=False)


def _mig_suffix(table: pd.DataFrame, columns: tuple[str, ...]) -> np.ndarray | None:
    if "gi" not in columns:
        return None
    gi = table["gi"].fillna("-").where(table["gi"].fillna("-") != "-", "")
    suffix = ("@mig:gi" + gi).where(gi != "", "")
    if "ci" in columns:
        ci = table["ci"].fillna("-").where(table["ci"].fillna("-") != "-", "")
        suffix = suffix + (":ci" + ci).where((ci != "") & (gi != ""), "")
    return suffix.to_numpy(dtype=object)


def read_dmon_chunks(chunks: Iterable[bytes], *, source: str,
                     size_bytes: int | None = None) -> LogImport:
    """Read an ``nvidia-smi dmon`` log given as UTF-8 chunks that end at line breaks.

    The reader of :func:`parse_nvidia_smi_dmon` (same result, same errors); memory is the
    tidy frame plus one chunk. ``size_bytes`` (the file's size) sizes the columns up front.

    Raises
    ------
    ValueError
        As :func:`parse_nvidia_smi_dmon`.
    """
    reader = _DmonReader(source, size_bytes)
    for chunk in chunks:
        reader.feed(chunk)
    return reader.finish()


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
        ``metric``, ``unit``, ``status`` and ``reason`` are categoricals, ``gpu`` the smallest
        integer type that holds the indices (int8 for up to 127 GPUs).

    Raises
    ------
    LogError
        (a ``ValueError``) naming the file and line: no header before the data, no data,
        more than half the lines unreadable; kind ``"duplicate"`` for two readings of one
        (moment, GPU, metric): two runs' lines at the same times, MIG instance lines without
        their ``gi``/``ci`` columns.

    References
    ----------
    .. [1] ``nvidia-smi`` man page, "Device Monitoring" (``dmon -s pucvmet -o DT``).

    Used in: notebooks/01_observe.ipynb
    """
    check_lines(text, source)
    data = text.encode("utf-8", "replace")  # a lone surrogate: "?"
    return read_dmon_chunks(byte_chunks(io.BytesIO(data), len(data), _no_decode)[0],
                            source=source, size_bytes=len(data))


def _no_decode(data: bytes, name: str, max_bytes: int) -> str:  # pragma: no cover
    raise AssertionError("text that was already decoded failed to decode")


def _ticks_per_gpu(frame: pd.DataFrame) -> np.ndarray:
    """Without a clock, line k of a GPU is tick k (dmon prints every GPU once per interval)."""
    seq = frame["timestamp_s"].to_numpy()
    out = np.empty(len(frame))
    for (_g, _m), idx in frame.groupby(["gpu", "metric"], sort=False).indices.items():
        order = np.argsort(seq[idx], kind="stable")
        out[idx[order]] = np.arange(len(idx), dtype=float)
    return out
