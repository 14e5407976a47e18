"""Read ``nvidia-smi --query-gpu=... --format=csv`` logs into the tidy frame.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import csv
import itertools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from labkit.data.observe.chunks import CHUNK_BYTES, cut_lines, normalize_breaks
from labkit.data.observe.common import check_lines, finish_log, meta_interval, split_meta, where
from labkit.data.observe.smi_csv_stream import CsvLayout, NotStreamable, read_csv_chunks
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

    @staticmethod
    def of(header: list[tuple[str, str | None]], source: str, line: int) -> _Layout:
        names = tuple(n for n, _ in header)
        if len(set(names)) != len(names):
            raise ValueError(f"{where(source, line)}: a field appears twice in the header")
        id_col = next((names.index(n) for n in _SMI_IDENTITY if n in names), None)
        return _Layout(tuple(header), names, _shadowed(list(names)),
                       names.index("timestamp") if "timestamp" in names else None, id_col,
                       names[id_col] if id_col is not None else None,
                       {k: names.index(k) for k in _IDENTITY_KEYS if k in names})


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
        if name in _TEXT_FIELDS or name in ignored:
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
                         strict: bool = False) -> LogImport:
    """Read an ``nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]`` log.

    Handles: units in the header (``power.draw [W]``) or in the values (``250.00 W``),
    ``nounits``, ``[N/A]`` / ``[Not Supported]`` / ``[GPU is lost]`` cells (missing readings
    with that reason), several GPUs per timestamp (told apart by ``index``, ``uuid`` or
    ``pci.bus_id``; without those, all rows are GPU 0), nvidia-smi's timestamp formats
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

    Returns
    -------
    LogImport
        Known fields become :data:`CATALOG` metrics in labkit units (``utilization.gpu`` ->
        ``gpu_util_frac`` 0-1, ``power.draw`` -> ``power_usage_w``); other numeric fields keep
        their nvidia-smi name; text fields are listed in ``ignored_fields``.

    Raises
    ------
    ValueError
        Naming the file and line: an empty file, no header (and no ``fields``), an unknown
        layout, a row with the wrong number of cells or a bad value when ``strict``, more than
        half the rows unreadable, or more than :data:`MAX_LOG_LINES` lines.

    Used in: notebooks/01_observe.ipynb
    """
    lines = check_lines(text, source)
    meta, i = split_meta(lines)
    header, header_text, i = _resolve_header(lines, i, fields, source)
    layout = _Layout.of(header, source, i)
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




def read_nvidia_smi_csv_chunks(chunks: Iterator[bytes], *, source: str,
                               fields: Sequence[str] | str | None = None,
                               size_bytes: int | None = None) -> LogImport:
    """Read a ``--query-gpu`` CSV log given as UTF-8 chunks cut at line ends (a large file).

    The same result and errors as :func:`parse_nvidia_smi_csv` (not ``strict``); the
    metadata and header must be in the first chunk.

    Raises
    ------
    NotStreamable
        When the log needs the whole-text reader (a quoted cell, the header not in the first
        chunk, a problem with the header: that reader names it in its own order).
    ValueError
        As :func:`parse_nvidia_smi_csv`.
    """
    first = next(chunks, b"")
    if b'"' in first:
        raise NotStreamable("a quoted cell")
    lines = first.decode("utf-8").split("\n")[:-1]
    meta, i = split_meta(lines)
    if i >= len(lines):
        raise NotStreamable("no header in the first chunk")
    try:
        header, header_text, i = _resolve_header(lines, i, fields, source)
        layout = _Layout.of(header, source, i)
        interval_s = meta_interval(meta, source)
    except ValueError:
        raise NotStreamable("the header needs the whole-text reader") from None
    stream_layout = _stream_layout(layout, header_text, fields, interval_s)
    return read_csv_chunks(itertools.chain([first], chunks), layout=stream_layout,
                           source=source, first_line=i, meta=meta, size_bytes=size_bytes)


def _stream_layout(layout: _Layout, header_text: str | None,
                   fields: Sequence[str] | str | None, interval_s: float) -> CsvLayout:
    shadowed = layout.shadowed
    return CsvLayout(
        header=layout.header, header_text=header_text, text_fields=_TEXT_FIELDS,
        shadowed=shadowed, time_col=layout.time_col, id_col=layout.id_col,
        id_kind=layout.id_kind, identity=layout.identity, interpret=_smi_value,
        known=lambda name: name in _SMI_BY_FIELD or (
            SMI_ALIASES.get(name) in _SMI_BY_FIELD and name not in shadowed),
        parse_time=parse_time,
        is_header=(looks_like_header if fields is None else lambda _line: False),
        interval_s=interval_s)
