"""Read a large ``nvidia-smi --query-gpu`` CSV log chunk by chunk (lesson 01's upload).

The whole-text reader (:mod:`labkit.data.observe.smi_csv`) decides the header, the GPU column
and the refusals; this module streams the rows of a log that needs none of its whole-text
checks (:class:`NotStreamable` sends the rest back to it).

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence

from labkit.data.observe.common import meta_interval, split_meta
from labkit.data.observe.smi_csv import (
    GPU_COLUMNS,
    _checked,
    _doubled,
    _Layout,
    _resolve_header,
    _stream_layout,
)
from labkit.data.observe.smi_csv_stream import NotStreamable, read_csv_chunks
from labkit.observe.logs import LogImport

__all__ = ["read_nvidia_smi_csv_chunks"]


def read_nvidia_smi_csv_chunks(chunks: Iterator[bytes], *, source: str,
                               fields: Sequence[str] | str | None = None,
                               size_bytes: int | None = None,
                               gpu_column: str | None = None) -> LogImport:
    """Read a ``--query-gpu`` CSV log given as UTF-8 chunks cut at line ends (a large file).

    The same result and errors as :func:`parse_nvidia_smi_csv` (not ``strict``); the
    metadata and header must be in the first chunk.

    Raises
    ------
    NotStreamable
        When the log needs the whole-text reader (a quoted cell, the header not in the first
        chunk, a problem with the header: that reader names it in its own order; two readings
        of one moment, GPU and metric: that reader resolves or refuses them with the line).
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
        layout = _Layout.of(header, source, i, gpu_column)
        interval_s = meta_interval(meta, source)
    except ValueError:
        raise NotStreamable("the header needs the whole-text reader") from None
    if gpu_column is None and set(GPU_COLUMNS) & set(layout.names):
        raise NotStreamable("a wrapper's GPU column: the whole text says which is the GPU")
    stream_layout = _stream_layout(layout, header_text, fields, interval_s)
    log = read_csv_chunks(itertools.chain([first], chunks), layout=stream_layout,
                          source=source, first_line=i, meta=meta, size_bytes=size_bytes)
    if _doubled(log.frame):
        raise NotStreamable("two readings of one moment, GPU and metric")
    return _checked(log, layout)
