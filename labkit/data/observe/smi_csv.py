"""Read ``nvidia-smi --query-gpu=... --format=csv`` logs into the tidy frame.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from labkit.data.observe.chunks import CHUNK_BYTES, cut_lines, normalize_breaks
from labkit.data.observe.common import (
    check_lines,
    finish_log,
    first_doubled,
    meta_interval,
    split_meta,
    where,
)
from labkit.data.observe.smi_csv_stream import CsvLayout, read_csv_chunks
from labkit.observe.catalog import CATALOG, SMI_ALIASES, Metric
from labkit.observe.logs import LogError, LogImport, UnparsedRow
from labkit.observe.readings import Status

#: nvidia-smi tokens for a missing value -> status.
_SMI_MISSING = {
    "[n/a]": Status.NOT_AVAILABLE, "n/a": Status.NOT_AVAILABLE,
    "[not supported]": Status.NOT_SUPPORTED, "not supported": Status.NOT_SUPPORTED,
    "[unknown error]": Status.NOT_AVAILABLE, "[insufficient permissions]": Status.NO_PERMISSION,
    "[no permission]": Status.NO_PERMISSION, "[gpu is lost]": Status.GPU_LOST,
    "[gpu requires reset]": Status.GPU_LOST, "": Status.NOT_AVAILABLE,
}
#: Units nvidia-smi prints -> (labkit unit, factor).
_SMI_UNITS = {
    "%": ("frac", 0.01), "W": ("W", 1.0), "mW": ("W", 1e-3), "MiB": ("MiB", 1.0),
    "MB": ("MiB", 1.0), "GiB": ("MiB", 1024.0), "KiB": ("MiB", 1 / 1024), "MHz": ("MHz", 1.0),
    "C": ("degC", 1.0), "J": ("J", 1.0), "mJ": ("J", 1e-3), "KB/s": ("KB/s", 1.0),
}
_SMI_IDENTITY = ("index", "uuid", "pci.bus_id", "gpu_bus_id", "gpu_uuid")
_SMI_TIME_FORMATS = ("%Y/%m/%d %H:%M:%S.%f", "%Y/%m/%d %H:%M:%S", "%Y-%m-%d %H:%M:%S.%f",
                     "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S.%f", "%Y-%m-%dT%H:%M:%S",
                     "%a %b %d %H:%M:%S %Y")
#: Epoch seconds (9-10 digits, optional fraction) or milliseconds (12-13 digits).
_EPOCH = re.compile(r"^(?:\d{9,10}(?:\.\d+)?|\d{12,13})$")
_SMI_FLAGS = {"active": 1.0, "not active": 0.0, "yes": 1.0, "no": 0.0, "enabled": 1.0,
              "disabled": 0.0}
_HEADER_FIELD = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*(?:\[([^\]]*)\])?\s*$")
_NUMBER_UNIT = re.compile(r"^([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z%/]*)$")
_SMI_BY_FIELD: Mapping[str, Metric] = MappingProxyType(
    {m.smi_field: m for m in CATALOG.values() if m.smi_field})



def _parse_header(line: str, source: str, lineno: int) -> list[tuple[str, str | None]]:
    fields = []
    for cell in next(csv.reader([line], skipinitialspace=True)):
        match = _HEADER_FIELD.match(cell)
        if not match:
            raise ValueError(f"{where(source, lineno)}: not an nvidia-smi CSV header "
                             f"(field {cell.strip()[:40]!r})")
        fields.append((match.group(1), match.group(2)))
    return fields


def looks_like_header(line: str) -> bool:
    cells = [c.strip() for c in line.split(",")]
    return bool(cells) and all(_HEADER_FIELD.match(c) for c in cells) and any(
        "." in c or c in ("timestamp", "index", "name", "uuid", "pstate") for c in cells)


#: The ``--query-gpu`` field lists operators use most, for the upload panel's field picker
#: (a ``noheader`` log names no columns). From ``nvidia-smi --help-query-gpu`` and the logging
#: examples NVIDIA gives (``nvidia-smi --query-gpu=timestamp,name,pci.bus_id,driver_version,
#: pstate,pcie.link.gen.max,pcie.link.gen.current,temperature.gpu,utilization.gpu,
#: utilization.memory,memory.total,memory.free,memory.used --format=csv -l 5``, NVIDIA
#: "Useful nvidia-smi Queries").
COMMON_FIELD_SETS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "nvidia_logging": ("timestamp", "name", "pci.bus_id", "driver_version", "pstate",
                       "pcie.link.gen.max", "pcie.link.gen.current", "temperature.gpu",
                       "utilization.gpu", "utilization.memory", "memory.total", "memory.free",
                       "memory.used"),
    "util_power": ("timestamp", "index", "utilization.gpu", "utilization.memory", "memory.used",
                   "power.draw", "temperature.gpu", "clocks.sm"),
    "power_clocks": ("timestamp", "index", "power.draw", "enforced.power.limit", "clocks.sm",
                     "clocks.max.sm", "clocks_event_reasons.active", "temperature.gpu"),
    "memory": ("timestamp", "index", "memory.total", "memory.used", "memory.free",
               "utilization.memory"),
})


def preview_rows(text: str, *, rows: int = 5) -> list[list[str]]:
    """Return the first ``rows`` data lines of a CSV log split into cells (for the picker).

    Skips ``#`` metadata and blank lines; cells are stripped. Never raises on odd text.
    """
    out: list[list[str]] = []
    for raw in text.splitlines():
        if not raw.strip() or raw.startswith("#"):
            continue
        out.append([c.strip() for c in next(csv.reader([raw], skipinitialspace=True), [])])
        if len(out) >= rows:
            break
    return out


def header_fields(text: str, fields: Sequence[str] | str | None = None) -> list[str]:
    """Return the field names of a CSV log's header (or of ``fields``), units dropped.

    For the field picker's "which column is the GPU" list; [] when the text has no header
    and no ``fields`` are given. Never raises on odd text.
    """
    if fields is not None:
        names = fields.split(",") if isinstance(fields, str) else list(fields)
        return [n.strip() for n in names if n.strip()][:400]
    lines = text[:262144].splitlines()
    _, i = split_meta(lines)
    if i >= len(lines) or not looks_like_header(lines[i]):
        return []
    out = []
    for cell in next(csv.reader([lines[i]], skipinitialspace=True), []):
        match = _HEADER_FIELD.match(cell)
        if match:
            out.append(match.group(1))
    return out[:400]


def parse_time(text: str) -> datetime | None:
    """Return the time a log cell names, or None if it is not a timestamp.

    Understood: nvidia-smi's ``2025/09/08 17:26:50.123`` (and without ms), the same with
    ``-``; ISO-8601 as wrappers write it (``2025-09-08T17:26:50+08:00``, ``...Z``, with or
    without fractions; an offset gives an aware datetime); ``date``'s ``Mon Sep  8 17:26:50
    2025``; epoch seconds (``1757323610``, ``1757323610.5``) or milliseconds
    (``1757323610123``; 12-13 digits), read as UTC.
    """
    s = text.strip()
    if len(s) == 23 and s[4] == "/" and s[10] == " " and s[19] == ".":  # nvidia-smi's own
        try:
            return datetime(int(s[0:4]), int(s[5:7]), int(s[8:10]), int(s[11:13]),
                            int(s[14:16]), int(s[17:19]), int(s[20:23]) * 1000)
        except ValueError:
            return None
    if _EPOCH.match(s):
        value = float(s)
        return datetime.fromtimestamp(value / 1000.0 if value >= 1e11 else value, tz=UTC)
    for fmt in _SMI_TIME_FORMATS:
        try:
            return datetime.strptime(s, fmt)
        except ValueError:
            continue
    if len(s) >= 10 and s[4] == "-":
        try:
            return datetime.fromisoformat(s)
        except ValueError:
            return None
    return None


def _shadowed(names: list[str]) -> frozenset[str]:
    """Return the header's alias fields whose metric another column already gives.

    A full ``--query-gpu`` list has ``power.draw`` and ``power.draw.average``, ``clocks.sm`` and
    ``clocks.current.graphics``: the exact field wins, the alias keeps its own name (one value
    per metric and time).
    """
    taken = {n for n in names if n in _SMI_BY_FIELD}
    out = set()
    for n in names:
        target = SMI_ALIASES.get(n)
        if target is not None:
            if target in taken:
                out.add(n)
            taken.add(target)
    return frozenset(out)


def _smi_value(raw: str, field_name: str, header_unit: str | None, *, alias: bool = True
               ) -> tuple[str, float | None, Status, str | None, str]:
    """Return (metric, value, status, reason, unit) for one cell; raise ValueError if garbage."""
    metric = _SMI_BY_FIELD.get(SMI_ALIASES.get(field_name, field_name) if alias else field_name)
    key = metric.key if metric else field_name
    token = raw.strip()
    missing = _SMI_MISSING.get(token.lower())
    if missing is not None:
        return key, None, missing, token or "empty", metric.unit if metric else ""
    if metric is not None and metric.unit == "bitmask":
        try:
            return key, float(int(token, 16 if token.lower().startswith("0x") else 10)), \
                Status.OK, None, "bitmask"
        except ValueError:
            raise ValueError(f"{field_name}: not a bitmask: {token[:30]!r}") from None
    flag = _SMI_FLAGS.get(token.lower())
    if flag is not None:
        return key, flag, Status.OK, None, metric.unit if metric else "flag"
    match = _NUMBER_UNIT.match(token)
    if not match:
        raise ValueError(f"{field_name}: not a number: {token[:30]!r}")
    number, unit = float(match.group(1)), match.group(2) or (header_unit or "")
    if header_unit and match.group(2) and match.group(2) != header_unit:
        raise ValueError(f"{field_name}: unit {match.group(2)!r} but the header says "
                         f"{header_unit!r}")
    if metric is None:
        target, factor = _SMI_UNITS.get(unit, (unit, 1.0))
        return key, number * factor, Status.OK, None, target
    if unit == "" and metric.unit in ("degC", "count", "flag", "bitmask", "xid"):
        return key, number, Status.OK, None, metric.unit
    if unit == "" and metric.smi_unit:  # nounits without the header's unit: nvidia-smi's unit
        unit = metric.smi_unit
    target, factor = _SMI_UNITS.get(unit, ("", 0.0))
    if target != metric.unit:
        raise ValueError(f"{field_name}: unit {unit!r} does not fit {metric.unit}")
    return key, number * factor, Status.OK, None, metric.unit


#: Fields that hold text (identity, modes): never a metric.
_TEXT_FIELDS = frozenset({
    "name", "driver_version", "pstate", "uuid", "pci.bus_id", "serial", "vbios_version",
    "compute_mode", "persistence_mode", "gpu_name", "gpu_uuid", "gpu_bus_id", "display_mode",
    "display_active", "mig.mode.current", "mig.mode.pending", "timestamp", "index",
    "power.management", "accounting.mode", "count"})
_IDENTITY_KEYS = ("name", "uuid", "pci.bus_id", "driver_version", "gpu_name", "gpu_uuid")
#: Distinct cell values remembered per column before the cache is emptied (memory bound).
_CACHE_MAX = 200_000
#: Columns wrapper scripts add to tell GPUs apart (not nvidia-smi fields): never a metric;
#: the GPU when the file shows it (they cycle where ``index`` does not) or the operator says so.
GPU_COLUMNS = ("gpu", "gpu_index", "gpu_id", "device")
#: ``--query-gpu`` fields without a dot (``nvidia-smi --help-query-gpu``, R535-R580); every
#: other nvidia-smi field has one (``memory.used``, ``clocks.sm``).
_SMI_DOTLESS = frozenset({
    "timestamp", "driver_version", "count", "name", "gpu_name", "serial", "gpu_serial", "uuid",
    "gpu_uuid", "index", "gpu_bus_id", "vbios_version", "display_mode", "display_active",
    "display_attached", "persistence_mode", "addressing_mode", "pstate", "compute_mode",
    "compute_cap", "driver_model"})


def is_smi_field(name: str) -> bool:
    """Whether a header column is an nvidia-smi ``--query-gpu`` field (or one labkit reads).

    A column that is not (a wrapper's ``gpu``, ``host``, ``step``) is never read as a metric:
    it is listed in ``ignored_fields`` (or tells GPUs apart, :data:`GPU_COLUMNS`).
    """
    return (name in _SMI_BY_FIELD or name in SMI_ALIASES or name in _SMI_DOTLESS
            or ("." in name and name not in GPU_COLUMNS))


def _resolve_header(lines: list[str], i: int, fields: Sequence[str] | str | None,
                    source: str) -> tuple[list[tuple[str, str | None]], str | None, int]:
    """Return (header fields, the header line's text or None, index of the header line)."""
    if i >= len(lines):
        raise LogError(f"{where(source, max(1, i))}: no data (empty nvidia-smi log)",
                       kind="layout", source=source, line=max(1, i))
    header_line = lines[i]
    if fields is not None:
        names = fields.split(",") if isinstance(fields, str) else list(fields)
        if looks_like_header(header_line):  # a header after all: trust the file
            return _parse_header(header_line, source, i + 1), header_line.strip(), i + 1
        return _parse_header(",".join(n.strip() for n in names), source, i + 1), None, i
    if not looks_like_header(header_line):
        raise LogError(
            f"{where(source, i + 1)}: no nvidia-smi CSV header (a 'noheader' log needs the "
            f"--query-gpu field list: fields=...); line starts {header_line[:60]!r}",
            kind="no_header", source=source, line=i + 1)
    return _parse_header(header_line, source, i + 1), header_line.strip(), i + 1


@dataclass(frozen=True)
class _Layout:
    """What a header says: fields, which column is the time, which tells GPUs apart."""

    header: tuple[tuple[str, str | None], ...]
    names: tuple[str, ...]
    shadowed: frozenset[str]
    time_col: int | None
    id_col: int | None
    id_kind: str | None
    identity: Mapping[str, int]

    @property
    def skipped(self) -> frozenset[str]:
        """Columns that are not nvidia-smi fields (never metrics)."""
        return frozenset(n for n in self.names if not is_smi_field(n))

    @property
    def gpu_column(self) -> str | None:
        """The GPU column when it is not one of nvidia-smi's own."""
        name = self.names[self.id_col] if self.id_col is not None else None
        return name if name is not None and name not in _SMI_IDENTITY else None

    @staticmethod
    def of(header: list[tuple[str, str | None]], source: str, line: int,
           gpu_column: str | None = None) -> _Layout:
        names = tuple(n for n, _ in header)
        if len(set(names)) != len(names):
            raise ValueError(f"{where(source, line)}: a field appears twice in the header")
        id_col = next((names.index(n) for n in _SMI_IDENTITY if n in names), None)
        kind = names[id_col] if id_col is not None else None
        if gpu_column is not None:
            if gpu_column not in names:
                raise LogError(f"{where(source, line)}: no column {gpu_column[:40]!r} to tell "
                               f"GPUs apart (the header has {', '.join(names)[:200]})",
                               kind="layout", source=source, line=line)
            id_col, kind = names.index(gpu_column), "index"
        return _Layout(tuple(header), names, _shadowed(list(names)),
                       names.index("timestamp") if "timestamp" in names else None, id_col,
                       kind, {k: names.index(k) for k in _IDENTITY_KEYS if k in names})


def _read_cells(raw: str, layout: _Layout, ignored: set[str],
                cache: dict[tuple[int, str], tuple[str, float | None, Status, str | None, str]]
                ) -> tuple[list[str], datetime | None, list[tuple[Any, ...]]]:
    """Return (cells, time, values) of one data line; raise ValueError if unreadable."""
    cells = (raw.split(",") if '"' not in raw
             else next(csv.reader([raw], skipinitialspace=True)))
    if len(cells) != len(layout.header):
        raise ValueError(f"{len(cells)} cells, the header has {len(layout.header)}")
    stamp: datetime | None = None
    if layout.time_col is not None:
        stamp = parse_time(cells[layout.time_col])
        if stamp is None:
            raise ValueError(f"timestamp not in a known format: "
                             f"{cells[layout.time_col].strip()[:30]!r}")
    if len(cache) > _CACHE_MAX:
        cache.clear()
    values = []
    for k, ((name, unit), cell) in enumerate(zip(layout.header, cells, strict=True)):
        if name in _TEXT_FIELDS or name in ignored or not is_smi_field(name):
            continue
        got = cache.get((k, cell))
        if got is None:
            try:
                got = cache[(k, cell)] = _smi_value(cell, name, unit,
                                                    alias=name not in layout.shadowed)
            except ValueError:
                if name in _SMI_BY_FIELD or (SMI_ALIASES.get(name) in _SMI_BY_FIELD
                                             and name not in layout.shadowed):
                    raise
                ignored.add(name)  # a text field labkit does not know (e.g. a mode)
                continue
        values.append(got)
    return cells, stamp, values


def _gpu_of(cells: list[str], layout: _Layout, id_map: dict[str, int]) -> int:
    """Return the GPU index of a line (``index`` column, else the order of uuid/bus ids)."""
    ident = cells[layout.id_col].strip() if layout.id_col is not None else "0"
    if layout.id_kind == "index":
        try:
            return int(ident)
        except ValueError:
            raise ValueError(f"index {ident!r} is not an integer") from None
    return id_map.setdefault(ident, len(id_map))


def parse_nvidia_smi_csv(text: str, *, source: str = "<text>",
                         fields: Sequence[str] | str | None = None,
                         strict: bool = False, gpu_column: str | None = None) -> LogImport:
    """Read an ``nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]`` log.

    Handles: units in the header (``power.draw [W]``) or in the values (``250.00 W``),
    ``nounits``, ``[N/A]`` / ``[Not Supported]`` / ``[GPU is lost]`` cells (missing readings
    with that reason), several GPUs per timestamp (told apart by ``index``, ``uuid`` or
    ``pci.bus_id``; without those, all rows are GPU 0; a wrapper's ``gpu``/``gpu_index``/
    ``gpu_id``/``device`` column when the file shows it is the GPU, see below), nvidia-smi's
    timestamp formats
    (``2024/06/01 11:27:05.177``), any field subset and order, header lines repeated by
    concatenated runs, and leading ``# key: value`` metadata lines (labkit's data files).

    Parameters
    ----------
    text : str
        The file's content.
    source : str
        File name for messages.
    fields : sequence of str or str, optional
        The ``--query-gpu`` list, for a ``noheader`` log (``"timestamp,index,utilization.gpu"``).
    strict : bool, default False
        Raise at the first row that cannot be read instead of counting it.
    gpu_column : str, optional
        The column that tells GPUs apart (the operator's choice in lesson 01's field picker),
        instead of nvidia-smi's ``index``/``uuid``/``pci.bus_id``.

    A wrapper's :data:`GPU_COLUMNS` column that cycles where nvidia-smi's ``index`` does not
    (its ``gpu`` counting 0..7 beside an ``index`` that is 0 on every row) is the GPU
    (``gpu_column`` of the result says so). Never two readings of one (moment, GPU, metric)
    otherwise: such a log is refused (``LogError`` kind ``"duplicate"``, naming the columns
    and the line).

    Returns
    -------
    LogImport
        Known fields become :data:`CATALOG` metrics in labkit units (``utilization.gpu`` ->
        ``gpu_util_frac`` 0-1, ``power.draw`` -> ``power_usage_w``); other numeric fields keep
        their nvidia-smi name; text fields and columns that are not nvidia-smi fields
        (:func:`is_smi_field`) are listed in ``ignored_fields``, never read as metrics.

    Raises
    ------
    ValueError
        Naming the file and line: an empty file, no header (and no ``fields``), an unknown
        layout, a row with the wrong number of cells or a bad value when ``strict``, more than
        half the rows unreadable, more than :data:`MAX_LOG_LINES` lines, two readings of one
        (moment, GPU, metric) the file does not resolve (kind ``"duplicate"``), or a
        ``gpu_column`` the header lacks.

    Used in: notebooks/01_observe.ipynb
    """
    lines = check_lines(text, source)
    meta, i = split_meta(lines)
    header, header_text, i = _resolve_header(lines, i, fields, source)
    layout = _Layout.of(header, source, i, gpu_column)
    if gpu_column is None and set(GPU_COLUMNS) & set(layout.names):
        found = _gpu_column_in(lines, i, header_text, layout)
        if found is not None:
            layout = _Layout.of(header, source, i, found)
    log = _checked(_parse(text, lines, meta, i, header_text, layout, fields, strict, source),
                   layout)
    if _doubled(log.frame):
        raise _doubled_error(lines, i, header_text, layout, source)
    return log


def _parse(text: str, lines: list[str], meta: dict[str, str], i: int, header_text: str | None,
           layout: _Layout, fields: Sequence[str] | str | None, strict: bool, source: str
           ) -> LogImport:
    """Read the data lines after the header (line ``i``) with ``layout``."""
    if '"' not in text and not strict:  # nvidia-smi never quotes: column by column, chunked
        data = text.encode("utf-8", "replace")  # a lone surrogate: "?"
        pieces = (normalize_breaks(c) for c in cut_lines(
            data[k:k + CHUNK_BYTES] for k in range(0, len(data), CHUNK_BYTES)))
        return read_csv_chunks(pieces, layout=_stream_layout(
            layout, header_text, fields, meta_interval(meta, source)), source=source,
            first_line=i, meta=meta, size_bytes=len(data))
    rows: list[tuple[Any, ...]] = []
    unparsed: list[UnparsedRow] = []
    devices: dict[int, dict[str, str]] = {}
    id_map: dict[str, int] = {}
    ignored: set[str] = set()
    cache: dict[tuple[int, str], tuple[str, float | None, Status, str | None, str]] = {}
    data_lines = 0
    seq = 0  # row order, the clock when there is no timestamp column
    for lineno in range(i + 1, len(lines) + 1):
        raw = lines[lineno - 1]
        if not raw.strip() or raw.startswith("#"):
            continue
        if (header_text is not None and raw.strip() == header_text) or (
                fields is None and raw.lstrip()[:1].isalpha() and looks_like_header(raw)):
            continue  # a header repeated by a concatenated run
        data_lines += 1
        try:
            cells, stamp, values = _read_cells(raw, layout, ignored, cache)
            gpu = _gpu_of(cells, layout, id_map)
        except ValueError as err:
            if strict:
                raise ValueError(f"{where(source, lineno)}: {err}") from None
            unparsed.append(UnparsedRow(lineno, str(err), raw[:120]))
            continue
        info = devices.setdefault(gpu, {})
        if not info:
            info.update({k: cells[c].strip() for k, c in layout.identity.items()})
        for metric, value, status, reason, unit in values:
            rows.append((seq, stamp, gpu, metric, value, unit, status, reason))
        seq += 1
    ignored |= {n for n in layout.names if n in _TEXT_FIELDS and n not in
                ("timestamp", "index", "uuid", "pci.bus_id", "name")}
    return finish_log(rows, unparsed, data_lines, source, "nvidia-smi-csv", devices,
                      tuple(sorted(ignored)), meta,
                      time_mode="stamp" if layout.time_col is not None else "seq",
                      interval_s=meta_interval(meta, source))




def _checked(log: LogImport, layout: _Layout) -> LogImport:
    """Name what was not read as a metric (text and non-nvidia-smi columns) and the GPU column."""
    ignored = set(log.ignored_fields) | layout.skipped
    column = layout.gpu_column
    if column is not None:
        ignored.discard(column)
        ignored |= {"index"} & set(layout.names)
    return replace(log, ignored_fields=tuple(sorted(ignored)), gpu_column=column)


def _doubled(frame: Any) -> bool:
    return first_doubled(frame) is not None


def _data_cells(lines: list[str], i: int, header_text: str | None, width: int
                ) -> Iterator[tuple[int, list[str]]]:
    """Yield (line number, stripped cells) of the data lines with the header's width."""
    for lineno in range(i + 1, len(lines) + 1):
        raw = lines[lineno - 1]
        if not raw.strip() or raw.startswith("#") or (
                header_text is not None and raw.strip() == header_text) or (
                raw.lstrip()[:1].isalpha() and looks_like_header(raw)):
            continue
        cells = next(csv.reader([raw], skipinitialspace=True), [])
        if len(cells) == width:
            yield lineno, [c.strip() for c in cells]


def _first_repeat(lines: list[str], i: int, header_text: str | None, layout: _Layout,
                  col: int | None) -> tuple[int, int] | None:
    """Return (first line, repeating line) of the first (time, ``col``) pair seen twice."""
    if layout.time_col is None:
        return None  # rows are the clock: no two share a moment
    seen: dict[tuple[str, str], int] = {}
    for lineno, cells in _data_cells(lines, i, header_text, len(layout.names)):
        key = (cells[layout.time_col], cells[col] if col is not None else "")
        if key in seen:
            return seen[key], lineno
        seen[key] = lineno
    return None


def _gpu_column_in(lines: list[str], i: int, header_text: str | None, layout: _Layout
                   ) -> str | None:
    """Return the :data:`GPU_COLUMNS` column that tells this file's GPUs apart, or None.

    One whose cells are small integers that take several values and never repeat at a
    moment, where nvidia-smi's GPU column (``index``/``uuid``/``pci.bus_id``) is absent, holds
    one value on every row, or repeats at a moment: the file then says which GPU a row is.
    """
    rows = [c for _, c in _data_cells(lines, i, header_text, len(layout.names))]
    own = layout.id_col
    if own is not None and len({c[own] for c in rows}) > 1 and \
            _first_repeat(lines, i, header_text, layout, own) is None:
        return None  # nvidia-smi's own column tells the GPUs apart
    for name in GPU_COLUMNS:
        if name not in layout.names or layout.names.index(name) == own:
            continue
        col = layout.names.index(name)
        cells = {c[col] for c in rows}
        if len(cells) > 1 and all(re.fullmatch(r"\d{1,4}", c) for c in cells) and \
                _first_repeat(lines, i, header_text, layout, col) is None:
            return name
    return None


def _doubled_error(lines: list[str], i: int, header_text: str | None, layout: _Layout,
                   source: str) -> LogError:
    """The refusal of a log with two readings of one (moment, GPU, metric), naming the columns
    and the line (the field picker then asks which column is the GPU)."""
    time = layout.names[layout.time_col] if layout.time_col is not None else "-"
    gpu = layout.names[layout.id_col] if layout.id_col is not None else "-"
    repeat = _first_repeat(lines, i, header_text, layout, layout.id_col)
    if repeat is None:
        return LogError(f"{source}: two readings of one moment, GPU and metric (time column "
                        f"{time}, GPU column {gpu}); say which column is the GPU",
                        kind="duplicate", source=source)
    first, line = repeat
    return LogError(f"{where(source, line)}: line {line} repeats the moment and GPU of line "
                    f"{first} (time column {time}, GPU column {gpu}); say which column is "
                    "the GPU", kind="duplicate", source=source, line=line)


def _stream_layout(layout: _Layout, header_text: str | None,
                   fields: Sequence[str] | str | None, interval_s: float) -> CsvLayout:
    shadowed = layout.shadowed
    return CsvLayout(
        header=layout.header, header_text=header_text,
        text_fields=_TEXT_FIELDS | layout.skipped,
        shadowed=shadowed, time_col=layout.time_col, id_col=layout.id_col,
        id_kind=layout.id_kind, identity=layout.identity, interpret=_smi_value,
        known=lambda name: name in _SMI_BY_FIELD or (
            SMI_ALIASES.get(name) in _SMI_BY_FIELD and name not in shadowed),
        parse_time=parse_time,
        is_header=(looks_like_header if fields is None else lambda _line: False),
        interval_s=interval_s)
