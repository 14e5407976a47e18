"""Column-wise reading of ``nvidia-smi --query-gpu`` CSV (the fast path for large logs).

The same cells, units and errors as the line-by-line reader in :mod:`~labkit.data.observe.smi_csv`,
but each column is split by pandas' C parser and each *distinct* cell is interpreted once
(``pd.factorize``): a day of 1 Hz logging repeats "1980 MHz", "81559 MiB", "[N/A]" hundreds of
thousands of times. Used when no cell is quoted (nvidia-smi never quotes).

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd

from labkit.data.observe.common import tidy_log, where
from labkit.observe.logs import LogImport, UnparsedRow

__all__ = ["read_by_columns"]

Interpret = Callable[..., tuple[str, float | None, Any, str | None, str]]


def _data_lines(lines: list[str], first: int, width: int, header_text: str | None,
                is_header: Callable[[str], bool], source: str, strict: bool,
                unparsed: list[UnparsedRow]) -> tuple[list[int], list[str], int]:
    """Return (line numbers, lines, data lines counted) of the rows with the header's width."""
    numbers: list[int] = []
    body: list[str] = []
    data = 0
    for n in range(first, len(lines)):
        raw = lines[n]
        if not raw or raw.isspace() or raw.startswith("#"):
            continue
        if (header_text is not None and raw.strip() == header_text) or (
                raw.lstrip()[:1].isalpha() and is_header(raw)):
            continue  # a header repeated by a concatenated run
        data += 1
        commas = raw.count(",")
        if commas != width - 1:
            reason = f"{commas + 1} cells, the header has {width}"
            if strict:
                raise ValueError(f"{where(source, n + 1)}: {reason}")
            unparsed.append(UnparsedRow(n + 1, reason, raw[:120]))
            continue
        numbers.append(n + 1)
        body.append(raw)
    return numbers, body, data


def _mark(bad: np.ndarray, why: np.ndarray, rows: np.ndarray, reason: str) -> None:
    fresh = rows & ~bad
    why[fresh] = reason
    bad |= rows


def read_by_columns(lines: list[str], first: int, *, header: Sequence[tuple[str, str | None]],
                    header_text: str | None, text_fields: frozenset[str],
                    shadowed: frozenset[str], time_col: int | None, id_col: int | None,
                    id_kind: str | None, identity: Mapping[str, int],
                    interpret: Interpret, known: Callable[[str], bool],
                    parse_time: Callable[[str], datetime | None],
                    is_header: Callable[[str], bool], source: str, strict: bool,
                    meta: Mapping[str, str], interval_s: float) -> LogImport:
    """Read the data lines from ``first`` (0-based) column by column; see module docstring.

    Raises
    ------
    ValueError
        As :func:`labkit.data.observe.smi_csv.parse_nvidia_smi_csv` (file and line named).
    """
    names = [n for n, _ in header]
    unparsed: list[UnparsedRow] = []
    numbers, body, data_lines = _data_lines(lines, first, len(header), header_text, is_header,
                                            source, strict, unparsed)
    # bytes, not a StringIO: CPython keeps a StringIO's text as 4 bytes per character
    table = pd.read_csv(io.BytesIO("\n".join(body).encode()), header=None,
                        names=range(len(names)), dtype=str, keep_default_na=False,
                        na_filter=False, engine="c", quoting=csv.QUOTE_NONE,
                        skip_blank_lines=False) if body else \
        pd.DataFrame(columns=range(len(names)))
    rows = len(table)
    bad = np.zeros(rows, dtype=bool)
    why = np.empty(rows, dtype=object)
    seconds, start = _times(table, time_col, parse_time, bad, why, interval_s, source)
    ignored: set[str] = set()
    columns = []  # (metric, value, unit, status, reason) arrays per value column
    for k, (name, unit) in enumerate(header):
        if name in text_fields:
            continue
        codes, uniq = pd.factorize(table[k])
        got: list[Any] = []
        failed: dict[int, str] = {}
        for j, cell in enumerate(uniq):
            try:
                got.append(interpret(cell, name, unit, alias=name not in shadowed))
            except ValueError as err:
                failed[j] = str(err)
                got.append(None)
        if failed and not known(name):
            ignored.add(name)  # a text field labkit does not know (e.g. a mode)
            continue
        for j, reason in failed.items():
            _mark(bad, why, codes == j, reason)
        columns.append((codes, got))
    gpus = _gpus(table, id_col, id_kind, bad, why)
    _report(bad, why, numbers, body, source, strict, unparsed)
    keep = ~bad
    devices = _devices(table, identity, gpus, keep)
    frame = _long_frame(columns, keep, seconds, gpus)
    ignored |= {n for n in names if n in text_fields and n not in
                ("timestamp", "index", "uuid", "pci.bus_id", "name")}
    unparsed.sort(key=lambda u: u.line)
    return tidy_log(frame, source=source, fmt="nvidia-smi-csv", data_lines=data_lines,
                    unparsed=unparsed, start=start, devices=devices,
                    ignored=tuple(sorted(ignored)), meta=meta)


def _times(table: pd.DataFrame, time_col: int | None,
           parse_time: Callable[[str], datetime | None], bad: np.ndarray, why: np.ndarray,
           interval_s: float, source: str) -> tuple[np.ndarray, datetime | None]:
    """Return seconds per row (from the earliest stamp, or row order) and the start."""
    rows = len(table)
    if time_col is None:
        return np.arange(rows, dtype=float) * interval_s, None
    codes, uniq = pd.factorize(table[time_col])
    stamps = [parse_time(u) for u in uniq]
    for j, s in enumerate(stamps):
        if s is None:
            _mark(bad, why, codes == j,
                  f"timestamp not in a known format: {str(uniq[j]).strip()[:30]!r}")
    good = [s for s in stamps if s is not None]
    if not good:
        return np.zeros(rows), None
    if len({s.tzinfo is not None for s in good}) > 1:
        raise ValueError(f"{source}: some timestamps carry a UTC offset and some do not")
    start = min(good)
    per = np.asarray([(s - start).total_seconds() if s is not None else np.nan
                      for s in stamps])
    return np.round(per[codes], 3), start


def _gpus(table: pd.DataFrame, id_col: int | None, id_kind: str | None, bad: np.ndarray,
          why: np.ndarray) -> np.ndarray:
    rows = len(table)
    if id_col is None:
        return np.zeros(rows, dtype=np.int64)
    ident = table[id_col].str.strip()
    if id_kind == "index":
        codes, uniq = pd.factorize(ident)
        ids = []
        for j, u in enumerate(uniq):
            try:
                ids.append(int(u))
            except ValueError:
                _mark(bad, why, codes == j, f"index {u!r} is not an integer")
                ids.append(-1)
        return np.asarray(ids, dtype=np.int64)[codes] if rows else np.zeros(0, np.int64)
    out = np.full(rows, -1, dtype=np.int64)  # uuid / bus id: numbered in order of appearance
    codes, _ = pd.factorize(ident[~bad])
    out[~bad] = codes
    return out


def _report(bad: np.ndarray, why: np.ndarray, numbers: list[int], body: list[str],
            source: str, strict: bool, unparsed: list[UnparsedRow]) -> None:
    for k in np.flatnonzero(bad):
        if strict:
            raise ValueError(f"{where(source, numbers[k])}: {why[k]}")
        unparsed.append(UnparsedRow(numbers[k], str(why[k]), body[k][:120]))


def _devices(table: pd.DataFrame, identity: Mapping[str, int], gpus: np.ndarray,
             keep: np.ndarray) -> dict[int, dict[str, str]]:
    devices: dict[int, dict[str, str]] = {}
    for g in pd.unique(gpus[keep]):
        row = int(np.flatnonzero(keep & (gpus == g))[0])
        devices[int(g)] = {key: str(table.iat[row, col]).strip() for key, col in identity.items()}
    return devices


def _long_frame(columns: list[tuple[np.ndarray, list[Any]]], keep: np.ndarray,
                seconds: np.ndarray, gpus: np.ndarray) -> pd.DataFrame:
    """One row per (line, value column), line by line, the metrics of a line sorted."""
    n = int(keep.sum())
    metrics = [next((g[0] for g in got if g is not None), "") for _, got in columns]
    order = sorted(range(len(columns)), key=lambda k: metrics[k])
    text: dict[str, dict[str, int]] = {"unit": {}, "status": {}, "reason": {}}
    values: list[Any] = []
    codes: dict[str, list[int]] = {c: [] for c in text}
    for k in order:
        col_codes, got = columns[k]
        kept = col_codes[keep]
        values.append(np.asarray([np.nan if g is None or g[1] is None else g[1]
                                  for g in got] or [np.nan], dtype=float)[kept])
        for c, pos in (("unit", 4), ("status", 2), ("reason", 3)):
            lookup = text[c]
            mapped = [lookup.setdefault("" if g is None or g[pos] is None else str(g[pos]),
                                        len(lookup)) for g in got] or [0]
            codes[c].append(np.asarray(mapped, dtype=np.int32)[kept])
    width = len(order)
    sorted_metrics = sorted(set(metrics))

    def cat(c: str) -> pd.Categorical:
        cats = list(text[c]) or [""]
        return pd.Categorical.from_codes(np.column_stack(codes[c]).ravel() if width else
                                         np.zeros(0, np.int32), cats)

    metric_codes = np.asarray([sorted_metrics.index(metrics[k]) for k in order], dtype=np.int32)
    return pd.DataFrame({
        "timestamp_s": np.repeat(seconds[keep], width),
        "gpu": np.repeat(gpus[keep], width),
        "metric": pd.Categorical.from_codes(np.tile(metric_codes, n), sorted_metrics or [""]),
        "value": np.column_stack(values).ravel() if width else np.zeros(0),
        "unit": cat("unit"), "status": cat("status"), "reason": cat("reason")})
