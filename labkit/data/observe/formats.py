"""Tell the log formats apart and read any of them.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

from collections.abc import Sequence

from labkit.data.observe.common import split_meta
from labkit.data.observe.dcgm import read_dcgm_exporter
from labkit.data.observe.dmon import parse_nvidia_smi_dmon
from labkit.data.observe.smi_csv import looks_like_header, parse_nvidia_smi_csv, parse_time
from labkit.data.observe.smi_query import looks_like_query, parse_nvidia_smi_query
from labkit.data.observe.tidy import parse_tidy_csv
from labkit.observe.catalog import FRAME_COLUMNS
from labkit.observe.logs import LogError, LogImport

__all__ = ["FORMATS", "detect_format", "read_log"]

#: The formats :func:`read_log` reads (``LogImport.format`` values).
FORMATS = ("nvidia-smi-csv", "nvidia-smi-dmon", "nvidia-smi-q", "nvidia-smi-q-xml",
           "dcgm-exporter", "labkit-tidy")


def _is_dmon_header(line: str) -> bool:
    names = line.lstrip("#").lower().split()
    return line.startswith("#") and "gpu" in names and names[0] in ("gpu", "date", "time")


def detect_format(text: str) -> str:
    """Return one of :data:`FORMATS` for a log's text.

    Raises
    ------
    LogError
        (a ``ValueError``, kind "layout") if it is none of them.
    """
    query = looks_like_query(text)
    if query is not None:
        return "nvidia-smi-q-xml" if query == "xml" else "nvidia-smi-q"
    lines = text.splitlines()
    if any(_is_dmon_header(ln.strip()) for ln in lines[:50]):
        return "nvidia-smi-dmon"
    _, i = split_meta(lines)
    body = [ln for ln in lines[i:i + 200] if ln.strip()]
    if not body:
        raise LogError("empty log", kind="layout", source="<text>")
    if any(ln.lstrip().startswith(("DCGM_", "# HELP DCGM_", "# TYPE DCGM_")) for ln in body):
        return "dcgm-exporter"
    first = body[0].strip()
    if [c.strip() for c in first.split(",")] == list(FRAME_COLUMNS):
        return "labkit-tidy"
    if looks_like_header(first) or parse_time(first.split(",")[0]) is not None:
        return "nvidia-smi-csv"
    raise LogError(f"unknown log layout: first line {first[:60]!r} is not an nvidia-smi CSV "
                   "header, a dmon header, an nvidia-smi -q snapshot nor a dcgm-exporter sample",
                   kind="layout", source="<text>")


def read_log(text: str, *, source: str = "<text>", fields: Sequence[str] | str | None = None,
             gpu_column: str | None = None) -> LogImport:
    """Read a log of any supported format (:func:`detect_format`).

    An ``nvidia-smi -q`` snapshot gives its one row of readings per GPU (the snapshot itself:
    :func:`labkit.data.observe.smi_query.parse_nvidia_smi_query`). ``gpu_column`` (the
    column that tells GPUs apart) is for ``--query-gpu`` CSV logs.

    Raises
    ------
    ValueError
        Naming the file (and line): unknown layout, or the reader's own errors.

    Used in: notebooks/01_observe.ipynb
    """
    try:
        fmt = detect_format(text)
    except LogError as err:
        raise LogError(f"{source}, line 1: {err}", kind=err.kind, source=source, line=1) \
            from None
    if fmt == "dcgm-exporter":
        return read_dcgm_exporter(text, source=source)
    if fmt == "labkit-tidy":
        return parse_tidy_csv(text, source=source)
    if fmt == "nvidia-smi-dmon":
        return parse_nvidia_smi_dmon(text, source=source)
    if fmt in ("nvidia-smi-q", "nvidia-smi-q-xml"):
        return parse_nvidia_smi_query(text, source=source).log
    return parse_nvidia_smi_csv(text, source=source, fields=fields, gpu_column=gpu_column)
