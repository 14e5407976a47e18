"""Read labkit's own tidy CSV (written by :func:`labkit.observe.export_csv`).

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import csv
import math
from types import MappingProxyType
from typing import Any

import pandas as pd

from labkit.data.observe.common import check_lines, split_meta, where
from labkit.observe.catalog import FRAME_COLUMNS
from labkit.observe.logs import LogImport
from labkit.observe.readings import Status


def parse_tidy_csv(text: str, *, source: str = "<text>") -> LogImport:
    """Read a tidy CSV written by :func:`export_csv` (labkit's trace files).

    Raises
    ------
    ValueError
        Naming the file and line: missing columns, a bad number, an unknown status.

    Used in: notebooks/01_observe.ipynb
    """
    lines = check_lines(text, source)
    meta, i = split_meta(lines)
    if i >= len(lines):
        raise ValueError(f"{source}: no header")
    header = [c.strip() for c in next(csv.reader([lines[i]]))]
    if header != list(FRAME_COLUMNS):
        raise ValueError(f"{where(source, i + 1)}: header must be {','.join(FRAME_COLUMNS)}")
    rows: list[tuple[Any, ...]] = []
    statuses = {str(s) for s in Status}
    devices: dict[int, dict[str, str]] = {}
    for lineno in range(i + 2, len(lines) + 1):
        raw = lines[lineno - 1]
        if not raw.strip():
            continue
        cells = next(csv.reader([raw]))
        try:
            if len(cells) != len(FRAME_COLUMNS):
                raise ValueError(f"{len(cells)} cells, expected {len(FRAME_COLUMNS)}")
            t, gpu = float(cells[0]), int(cells[1])
            value = float(cells[3]) if cells[3] else math.nan
            if cells[5] not in statuses:
                raise ValueError(f"unknown status {cells[5]!r}")
            if not math.isfinite(t) or gpu < 0:
                raise ValueError("timestamp_s must be finite and gpu >= 0")
        except ValueError as err:
            raise ValueError(f"{where(source, lineno)}: {err}") from None
        devices.setdefault(gpu, {})
        rows.append((t, gpu, cells[2], value, cells[4], cells[5], cells[6]))
    if not rows:
        raise ValueError(f"{source}: no data rows")
    frame = pd.DataFrame(rows, columns=list(FRAME_COLUMNS))
    return LogImport(frame, source, "labkit-tidy", len(rows), (), None,
                     MappingProxyType({g: MappingProxyType(v) for g, v in devices.items()}),
                     (), MappingProxyType(dict(meta)))


