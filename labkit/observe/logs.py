"""A log read into the tidy frame (:class:`LogImport`) and labkit's tidy CSV writer.

The readers of operators' files (nvidia-smi, dcgm-exporter, ...) live in
:mod:`labkit.data.observe`; they all return a :class:`LogImport`.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import pandas as pd

from labkit.observe.catalog import FRAME_COLUMNS


class LogError(ValueError):
    """A log that cannot be read: a ``ValueError`` that also says what kind of problem it is.

    ``str(err)`` is the English message (naming the file and line); ``kind`` lets the UI show
    its own (Korean) sentence and hint, e.g. "re-save the file as UTF-8" for ``"encoding"``.

    Attributes
    ----------
    kind : {"encoding", "too_large", "layout", "no_header", "timestamp", "xml"}
    source : str
        File name.
    line : int or None
        1-based line, when one line is at fault.
    """

    def __init__(self, message: str, *, kind: str, source: str, line: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.source = source
        self.line = line


@dataclass(frozen=True)
class UnparsedRow:
    """A line of a log that could not be read (kept, counted and shown, never dropped silently).

    Attributes
    ----------
    line : int
        1-based line number in the file.
    reason : str
        Why (English).
    text : str
        The line, cut to 120 characters.
    """

    line: int
    reason: str
    text: str


@dataclass(frozen=True)
class LogImport:
    """A log read into the tidy frame.

    Attributes
    ----------
    frame : pandas.DataFrame
        :data:`FRAME_COLUMNS`, sorted by time, GPU, metric. ``metric``, ``unit``, ``status``
        and ``reason`` hold str; the large-log readers (dmon, ``--query-gpu`` CSV) keep them
        as pandas categoricals of str (same values, one code per row).
    source : str
        File name (or ``"<text>"``).
    format : {"nvidia-smi-csv", "dcgm-exporter", "labkit-tidy"}
    rows : int
        Data lines read (parsed or not).
    unparsed : tuple of UnparsedRow
    start : datetime or None
        Wall-clock time of ``timestamp_s == 0`` when the log has timestamps.
    devices : mapping of int to mapping of str to str
        GPU index -> identity (``name``, ``uuid``, ``pci.bus_id``, ``modelName``, ...).
    ignored_fields : tuple of str
        Text fields that are not metrics (``pstate``, ``driver_version``, ...).
    metadata : mapping of str to str
        ``# key: value`` lines at the top of the file (source, as_of, ...).
    gpu_column : str or None
        The column that told GPUs apart when it is not nvidia-smi's ``index``/``uuid``/
        ``pci.bus_id`` (a wrapper's ``gpu`` column, found in the file or picked by the
        operator); None otherwise.
    """

    frame: pd.DataFrame
    source: str
    format: str
    rows: int
    unparsed: tuple[UnparsedRow, ...] = ()
    start: datetime | None = None
    devices: Mapping[int, Mapping[str, str]] = field(default_factory=dict)
    ignored_fields: tuple[str, ...] = ()
    metadata: Mapping[str, str] = field(default_factory=dict)
    gpu_column: str | None = None

    @property
    def unparsed_count(self) -> int:
        """Number of lines that could not be read."""
        return len(self.unparsed)


#: Most lines a log may have (a day at 1 Hz on 8 GPUs is 691,200; uploads are size-capped).
MAX_LOG_LINES = 1_000_000
#: If more than this share of the data lines cannot be read, the file is rejected.
MAX_UNPARSED_FRAC = 0.5



def export_csv(frame: pd.DataFrame, *, source: str, as_of: str,
               extra: Mapping[str, str] | None = None) -> str:
    """Return a tidy frame as CSV text, with ``# source`` / ``# as_of`` lines (a data file).

    Parameters
    ----------
    frame : pandas.DataFrame
        With :data:`FRAME_COLUMNS`.
    source : str
        Where the readings came from (GPU, driver, tool). Written as ``# source:``.
    as_of : str
        Date of the recording (ISO). Written as ``# as_of:``.
    extra : mapping, optional
        More ``# key: value`` lines (gpu, driver, rate_hz, ...).

    Raises
    ------
    ValueError
        If a column is missing, or a metadata value holds a line break.

    Used in: notebooks/01_observe.ipynb
    """
    missing = [c for c in FRAME_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"frame lacks columns {missing}")
    meta = {"source": source, "as_of": as_of, **dict(extra or {})}
    buf = io.StringIO()
    for key, value in meta.items():
        if "\n" in str(value) or "\r" in str(value) or not re.fullmatch(r"[A-Za-z_][\w.-]*", key):
            raise ValueError(f"bad metadata {key!r}: {value!r}")
        buf.write(f"# {key}: {value}\n")
    out = frame[list(FRAME_COLUMNS)].copy()
    out["value"] = [("" if not np.isfinite(v) else repr(float(v))) for v in out["value"]]
    out.to_csv(buf, index=False, lineterminator="\n")
    return buf.getvalue()


