"""``nvidia-smi --query-gpu`` CSV read chunk by chunk (a 100 MB log in ~3x its size).

The same cells, units, line numbers and errors as the line-by-line reader in
:mod:`~labkit.data.observe.smi_csv` (kept for quoted cells and ``strict``), but column by
column and in chunks (:mod:`~labkit.data.observe.chunks`): numpy counts each line's commas
and finds the blank, ``#`` and repeated-header lines; pandas' C parser splits one chunk's
data lines into columns; each *distinct* cell is interpreted once for the whole file (a
cache per column: "1980 MHz" and "[N/A]" repeat hundreds of thousands of times); the
nvidia-smi timestamps are parsed with numpy; the tidy columns go straight into
preallocated arrays. Only the columns themselves and one chunk are alive.

A log this reader cannot take (a quoted cell, metadata or header beyond the first chunk, a
header problem) raises :class:`NotStreamable` before anything is returned; the caller then
reads the whole text.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import pandas as pd

from labkit.data.observe.chunks import ChunkLines, TidySink, classify
from labkit.data.observe.common import tidy_log
from labkit.observe.logs import MAX_LOG_LINES, LogImport, UnparsedRow
from labkit.observe.readings import Status

__all__ = ["CsvLayout", "NotStreamable", "read_csv_chunks"]

_US = timedelta(microseconds=1)


class NotStreamable(Exception):
    """This log needs the whole-text reader (quoted cells, a header not in the first chunk)."""


@dataclass(frozen=True)
class CsvLayout:
    """What the header says, and how to read a cell (the callables of ``smi_csv``)."""

    header: tuple[tuple[str, str | None], ...]
    header_text: str | None
    text_fields: frozenset[str]
    shadowed: frozenset[str]
    time_col: int | None
    id_col: int | None
    id_kind: str | None
    identity: Mapping[str, int]
    interpret: Callable[..., tuple[str, float | None, Any, str | None, str]]
    known: Callable[[str], bool]
    parse_time: Callable[[str], datetime | None]
    is_header: Callable[[str], bool]
    interval_s: float


@dataclass
class _Column:
    """One value column: each distinct cell seen -> index into ``results`` (None: garbage)."""

    k: int
    name: str
    unit: str | None
    index: dict[str, int] = field(default_factory=dict)
    results: list[tuple[str, float | None, Any, str | None, str] | None] = field(
        default_factory=list)
    errors: dict[int, str] = field(default_factory=dict)
    metric: str | None = None
    ignored: bool = False


class _CsvReader:
    def __init__(self, layout: CsvLayout, source: str, size_bytes: int | None) -> None:
        self.layout = layout
        self.source = source
        self.size_bytes = size_bytes
        self.width = len(layout.header)
        self.columns = [_Column(k, n, u) for k, (n, u) in enumerate(layout.header)
                        if n not in layout.text_fields]
        self.unparsed: list[UnparsedRow] = []
        self.lines = 0
        self.data_lines = 0
        self.rows = 0  # lines with the header's width (the clock without a timestamp column)
        self.sink: TidySink | None = None
        self.metric_codes: dict[str, int] = {}
        self.texts: dict[str, dict[str, int]] = {"unit": {}, "status": {}, "reason": {}}
        self.stamps: dict[str, int | None] = {}  # cell -> microseconds since ref (None: bad)
        self.ref: datetime | None = None
        self.low_us: int | None = None
        self.ids: dict[str, int] = {}  # uuid / bus id -> GPU number (order of appearance)
        self.index_ids: dict[str, int | None] = {}
        self.devices: dict[int, dict[str, str]] = {}
        self.dropped: set[int] = set()  # metric codes of columns found to be text later
        self.bytes_per_line = 100.0  # of the first chunk: sizes the columns

    def feed(self, lines: ChunkLines, first: int) -> None:
        """Read the lines ``first..`` of one chunk."""
        a = np.frombuffer(lines.chunk, dtype=np.uint8)
        n = len(lines)
        head = np.zeros(n, dtype=np.uint8)
        some = lines.ends > lines.starts
        head[some] = a[lines.starts[some]]
        skip = (lines.cells == 0) | (head == ord("#"))
        skip[:first] = True
        # a header repeated by a concatenated run starts with a letter or "_" (255: not ASCII)
        lead = lines.lead | 0x20
        maybe = ~skip & (((lead >= ord("a")) & (lead <= ord("z"))) | (lines.lead == ord("_"))
                         | (lines.lead == 255))
        ht = self.layout.header_text
        for k in np.flatnonzero(maybe).tolist():
            raw = lines.text(k)
            if (ht is not None and raw.strip() == ht) or (
                    raw.lstrip()[:1].isalpha() and self.layout.is_header(raw)):
                skip[k] = True
        data = np.flatnonzero(~skip)
        self.data_lines += len(data)
        commas = np.diff(np.searchsorted(np.flatnonzero(a == ord(",")), lines.ends),
                         prepend=0)
        good = commas[data] == self.width - 1
        for k in data[~good].tolist():
            self.unparsed.append(UnparsedRow(self.lines + k + 1, f"{commas[k] + 1} cells, the "
                                             f"header has {self.width}", lines.text(k)[:120]))
        rows = data[good]
        if len(rows):
            self._read_rows(lines, rows)
        self.lines += n

    def _read_rows(self, lines: ChunkLines, rows: np.ndarray) -> None:
        table = pd.read_csv(io.BytesIO(lines.join(rows)), header=None,
                            names=range(self.width), dtype=str, keep_default_na=False,
                            na_filter=False, engine="c", quoting=csv.QUOTE_NONE,
                            skip_blank_lines=False)
        n = len(table)
        numbers = self.lines + rows + 1
        bad = np.zeros(n, dtype=bool)
        why = np.empty(n, dtype=object)
        t = self._times(table, bad, why)
        self.rows += n
        picked: list[tuple[_Column, np.ndarray]] = []
        for col in self.columns:
            if col.ignored:
                continue
            codes = self._cells(col, table[col.k])
            if col.ignored:
                continue
            for j, reason in col.errors.items():
                hit = codes == j
                if hit.any():
                    _mark(bad, why, hit, reason)
            picked.append((col, codes))
        gpus = self._gpus(table, bad, why)
        for k in np.flatnonzero(bad).tolist():
            self.unparsed.append(UnparsedRow(int(numbers[k]), str(why[k]),
                                             lines.text(int(rows[k]))[:120]))
        keep = ~bad
        self._note_devices(table, gpus, keep)
        self._write(picked, keep, t, gpus)

    def _cells(self, col: _Column, cells: pd.Series) -> np.ndarray:
        """Codes of a chunk's cells into ``col.results`` (new distinct cells interpreted)."""
        local, uniq = pd.factorize(cells)
        lookup = np.empty(len(uniq), dtype=np.int64)
        for j, cell in enumerate(uniq.tolist()):
            g = col.index.get(cell)
            if g is None:
                g = col.index[cell] = len(col.results)
                try:
                    got = self.layout.interpret(cell, col.name, col.unit,
                                                alias=col.name not in self.layout.shadowed)
                    col.results.append(got)
                    if col.metric is None:
                        col.metric = got[0]
                except ValueError as err:
                    col.results.append(None)
                    col.errors[g] = str(err)
                    if not self.layout.known(col.name):
                        self._ignore(col)  # a text field labkit does not know (a mode)
                        return local
            lookup[j] = g
        return lookup[local] if len(uniq) else local.astype(np.int64)

    def _ignore(self, col: _Column) -> None:
        col.ignored = True
        if col.metric is not None and col.metric in self.metric_codes:
            self.dropped.add(self.metric_codes[col.metric])

    def _times(self, table: pd.DataFrame, bad: np.ndarray, why: np.ndarray) -> np.ndarray:
        """Microseconds since the first good stamp (NaN if bad), or the row's order."""
        n = len(table)
        tc = self.layout.time_col
        if tc is None:
            return np.arange(self.rows, self.rows + n, dtype=float) * self.layout.interval_s
        local, uniq = pd.factorize(table[tc])
        cells = uniq.tolist()
        us = np.empty(len(cells))
        fast, fast_us = self._fast_stamps(cells)
        us[fast] = fast_us
        for j in np.flatnonzero(~fast).tolist():
            cell = cells[j]
            if cell not in self.stamps:
                self.stamps[cell] = self._stamp_us(cell)
            v = self.stamps[cell]
            if v is None:
                _mark(bad, why, local == j,
                      f"timestamp not in a known format: {str(cell).strip()[:30]!r}")
                us[j] = np.nan
            else:
                us[j] = v
        return us[local] if len(cells) else np.zeros(0)

    def _fast_stamps(self, cells: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """nvidia-smi's own ``YYYY/MM/DD HH:MM:SS.mmm`` stamps, vectorised: (which cells,
        their microseconds since ``ref``). Only cells with digits and separators exactly in
        place and a valid date and time; the others go through ``parse_time`` one by one."""
        stripped = [c.strip() for c in cells]
        ok = np.fromiter((len(c) == 23 for c in stripped), dtype=bool, count=len(cells))
        if not ok.any():
            return ok, np.empty(0)
        text = np.array([c for c, k in zip(stripped, ok, strict=True) if k], dtype="S23")
        b = text.view(np.uint8).reshape(-1, 23).astype(np.int64)
        seps = {4: "/", 7: "/", 10: " ", 13: ":", 16: ":", 19: "."}
        shape = np.ones(len(b), dtype=bool)
        for pos in range(23):
            if pos in seps:
                shape &= b[:, pos] == ord(seps[pos])
            else:
                shape &= (b[:, pos] >= ord("0")) & (b[:, pos] <= ord("9"))
        d = b - ord("0")

        def num(a: int, z: int) -> np.ndarray:
            out = np.zeros(len(d), dtype=np.int64)
            for pos in range(a, z):
                out = out * 10 + d[:, pos]
            return out

        year, month, day = num(0, 4), num(5, 7), num(8, 10)
        hour, minute, second, milli = num(11, 13), num(14, 16), num(17, 19), num(20, 23)
        shape &= (year >= 1) & (month >= 1) & (month <= 12) & (day >= 1) & (hour < 24) & \
            (minute < 60) & (second < 60)
        months = (np.where(shape, year, 1970) - 1970).astype("datetime64[Y]").astype(
            "datetime64[M]") + (np.where(shape, month, 1) - 1).astype("timedelta64[M]")
        days = months.astype("datetime64[D]") + (np.where(shape, day, 1) - 1).astype(
            "timedelta64[D]")
        shape &= days.astype("datetime64[M]") == months  # no 31 June
        idx = np.flatnonzero(ok)
        ok[idx[~shape]] = False
        if not shape.any():
            return ok, np.empty(0)
        micros = (days[shape].astype("datetime64[us]").astype(np.int64)
                  + ((hour * 3600 + minute * 60 + second) * 1_000_000 + milli * 1000)[shape])
        if self.ref is None:
            self.ref = datetime(1970, 1, 1) + timedelta(microseconds=int(micros[0]))
        elif self.ref.tzinfo is not None:
            raise ValueError(f"{self.source}: some timestamps carry a UTC offset and some "
                             "do not")
        rel = micros - (self.ref - datetime(1970, 1, 1)) // _US
        low = int(rel.min())
        self.low_us = low if self.low_us is None else min(self.low_us, low)
        return ok, rel.astype(float)

    def _stamp_us(self, cell: str) -> int | None:
        stamp = self.layout.parse_time(cell)
        if stamp is None:
            return None
        if self.ref is None:
            self.ref = stamp
        elif (stamp.tzinfo is None) != (self.ref.tzinfo is None):
            raise ValueError(f"{self.source}: some timestamps carry a UTC offset and some "
                             "do not")
        us = (stamp - self.ref) // _US
        self.low_us = us if self.low_us is None else min(self.low_us, us)
        return us

    def _gpus(self, table: pd.DataFrame, bad: np.ndarray, why: np.ndarray) -> np.ndarray:
        n = len(table)
        ic = self.layout.id_col
        if ic is None:
            return np.zeros(n, dtype=np.int64)
        raw, spelled = pd.factorize(table[ic])  # strip each distinct cell, not each cell
        local, uniq = pd.factorize(pd.Series([str(u).strip() for u in spelled.tolist()],
                                             dtype=object))
        local = local[raw] if len(spelled) else raw
        if self.layout.id_kind == "index":
            ids = np.empty(len(uniq), dtype=np.int64)
            for j, u in enumerate(uniq.tolist()):
                if u not in self.index_ids:
                    try:
                        self.index_ids[u] = int(u)
                    except ValueError:
                        self.index_ids[u] = None
                got = self.index_ids[u]
                if got is None:
                    _mark(bad, why, local == j, f"index {u!r} is not an integer")
                    ids[j] = -1
                else:
                    ids[j] = got
            return ids[local] if len(uniq) else np.zeros(0, dtype=np.int64)
        out = np.full(n, -1, dtype=np.int64)  # uuid / bus id: numbered in order of appearance
        ok = ~bad
        firsts = pd.unique(local[ok])
        for j in firsts.tolist():
            self.ids.setdefault(uniq[j], len(self.ids))
        lookup = np.asarray([self.ids.get(u, -1) for u in uniq.tolist()], dtype=np.int64)
        out[ok] = lookup[local[ok]] if len(uniq) else out[ok]
        return out

    def _note_devices(self, table: pd.DataFrame, gpus: np.ndarray, keep: np.ndarray) -> None:
        for g in pd.unique(gpus[keep]).tolist():
            if int(g) not in self.devices:
                row = int(np.flatnonzero(keep & (gpus == g))[0])
                self.devices[int(g)] = {key: str(table.iat[row, col]).strip()
                                        for key, col in self.layout.identity.items()}

    def _code(self, kind: str, text: str) -> int:
        lookup = self.texts[kind]
        return lookup.setdefault(text, len(lookup))

    def _write(self, picked: list[tuple[_Column, np.ndarray]], keep: np.ndarray,
               t: np.ndarray, gpus: np.ndarray) -> None:
        n = int(keep.sum())
        cols = [(col, codes) for col, codes in picked if col.metric is not None]
        if not n or not cols:
            return
        cols.sort(key=lambda item: str(item[0].metric))  # the metrics of a line, sorted
        width = len(cols)
        value = np.empty((n, width))
        metric = np.empty(width, dtype=np.int64)
        unit = np.empty((n, width), dtype=np.int64)
        status = np.empty((n, width), dtype=np.int64)
        reason = np.empty((n, width), dtype=np.int64)
        for j, (col, codes) in enumerate(cols):
            kept = codes[keep]
            res = col.results
            metric[j] = self.metric_codes.setdefault(str(col.metric), len(self.metric_codes))
            value[:, j] = np.asarray([np.nan if r is None or r[1] is None else r[1]
                                      for r in res], dtype=float)[kept]
            for arr, pos, kind in ((unit, 4, "unit"), (status, 2, "status"),
                                   (reason, 3, "reason")):
                # an unreadable cell (r None) is on a dropped line; its code must still be a
                # valid status (a '' category made Trace raise: issue 16)
                blank = str(Status.NOT_AVAILABLE) if kind == "status" else ""
                arr[:, j] = np.asarray([self._code(kind, blank if r is None or r[pos] is None
                                                   else str(r[pos])) for r in res],
                                       dtype=np.int64)[kept]
        if self.sink is None:
            est = (int(self.size_bytes / max(self.bytes_per_line, 1.0) * width * 1.02) + 4096
                   if self.size_bytes else 1 << 16)
            self.sink = TidySink(est)
        self.sink.add(np.repeat(t[keep], width), np.repeat(gpus[keep], width),
                      np.tile(metric, n), value.ravel(), unit.ravel(), status.ravel(),
                      reason.ravel())

    def finish(self, meta: Mapping[str, str], ignored: set[str]) -> LogImport:
        if self.lines > MAX_LOG_LINES:
            raise ValueError(f"{self.source}: {self.lines:,} lines, more than "
                             f"{MAX_LOG_LINES:,}")
        sink = self.sink if self.sink is not None else TidySink(0)
        sink.finish()
        if self.dropped:
            _compact(sink, self.dropped)
        if self.layout.time_col is not None and sink.n:
            low = float(self.low_us or 0)
            step = 1 << 20
            for a in range(0, sink.n, step):
                part = sink.t[a:a + step]
                part -= low
                part /= 1e6
                np.round(part, 3, out=part)
        start = (self.ref + timedelta(microseconds=self.low_us or 0)
                 if self.ref is not None else None)
        frame = self._frame(sink)
        ignored = set(ignored) | {c.name for c in self.columns if c.ignored}
        ignored |= {n for n, _ in self.layout.header if n in self.layout.text_fields and n not in
                    ("timestamp", "index", "uuid", "pci.bus_id", "name")}
        self.unparsed.sort(key=lambda u: u.line)
        return tidy_log(frame, source=self.source, fmt="nvidia-smi-csv",
                        data_lines=self.data_lines, unparsed=self.unparsed, start=start,
                        devices=self.devices, ignored=tuple(sorted(ignored)), meta=meta)

    def _frame(self, sink: TidySink) -> pd.DataFrame:
        cats = sorted(self.metric_codes)
        lookup = np.empty(max(len(cats), 1), dtype=sink.metric.dtype)
        for name, code in self.metric_codes.items():
            lookup[code] = cats.index(name)
        sink.recode_metric(lookup)
        if not sink.in_tidy_order():  # a clock that goes back: sorted in place
            sink.sort_tidy()

        def cat(codes: np.ndarray, kind: str) -> pd.Categorical:
            return pd.Categorical.from_codes(codes, list(self.texts[kind]) or [""])

        return pd.DataFrame({
            "timestamp_s": sink.t, "gpu": sink.gpu,
            "metric": pd.Categorical.from_codes(sink.metric, cats or [""]),
            "value": sink.value, "unit": cat(sink.unit, "unit"),
            "status": cat(sink.status, "status"), "reason": cat(sink.reason, "reason")},
            copy=False)


def _mark(bad: np.ndarray, why: np.ndarray, rows: np.ndarray, reason: str) -> None:
    fresh = rows & ~bad
    why[fresh] = reason
    bad |= rows


def _compact(sink: TidySink, dropped: set[int]) -> None:
    """Drop the rows of ``dropped`` metric codes (a column found to hold text late), in place."""
    out = 0
    step = 1 << 20
    names = ("t", "gpu", "metric", "value", "unit", "status", "reason")
    for a in range(0, sink.n, step):
        b = min(a + step, sink.n)
        keep = ~np.isin(sink.metric[a:b], list(dropped))
        k = int(keep.sum())
        for name in names:
            arr = getattr(sink, name)
            arr[out:out + k] = arr[a:b][keep]
        out += k
    sink.n = out
    sink.finish()


def read_csv_chunks(chunks: Iterable[bytes], *, layout: CsvLayout, source: str,
                    first_line: int, meta: Mapping[str, str], size_bytes: int | None
                    ) -> LogImport:
    """Read ``--query-gpu`` CSV chunks (UTF-8, cut at line ends); data from ``first_line``
    (0-based, in the first chunk). Same result and errors as the whole-text reader.

    Raises
    ------
    NotStreamable
        For a quoted cell (the caller reads the whole text).
    ValueError
        As :func:`labkit.data.observe.smi_csv.parse_nvidia_smi_csv`.
    """
    reader = _CsvReader(layout, source, size_bytes)
    first = first_line
    for chunk in chunks:
        if b'"' in chunk:
            raise NotStreamable("a quoted cell")
        lines = classify(chunk)
        if reader.sink is None and len(lines):
            reader.bytes_per_line = len(chunk) / len(lines)
        reader.feed(lines, first)
        first = 0
    return reader.finish(meta, set())
