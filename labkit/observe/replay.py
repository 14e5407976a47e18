"""Replay: a tidy frame indexed so the dashboard can show every metric at time t.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from labkit.observe.catalog import FRAME_COLUMNS
from labkit.observe.readings import Reading, Status


class Trace:
    """A tidy frame indexed for replay: the value of every metric of a GPU at time t.

    Parameters
    ----------
    frame : pandas.DataFrame
        :data:`FRAME_COLUMNS` (from a reader or :meth:`History.frame`).

    Raises
    ------
    ValueError
        If columns are missing or the frame is empty.
    """

    def __init__(self, frame: pd.DataFrame) -> None:
        missing = [c for c in FRAME_COLUMNS if c not in frame.columns]
        if missing:
            raise ValueError(f"frame lacks columns {missing}")
        if frame.empty:
            raise ValueError("empty trace")
        self.frame = frame.sort_values(["timestamp_s", "gpu", "metric"], kind="stable")
        self.times = np.unique(self.frame["timestamp_s"].to_numpy(dtype=float))
        self.gpus = tuple(int(g) for g in sorted(self.frame["gpu"].unique()))
        self.metrics = tuple(sorted(self.frame["metric"].unique()))
        self._by: dict[tuple[int, str], tuple[np.ndarray, list[Reading]]] = {}
        for (g, m), part in self.frame.groupby(["gpu", "metric"], sort=False):
            readings = [
                Reading(None if not np.isfinite(v) else float(v), Status(s), r or None)
                if s != "ok" or np.isfinite(v) else
                Reading.missing(Status.NOT_AVAILABLE, r or "empty")
                for v, s, r in zip(part["value"], part["status"], part["reason"], strict=True)]
            self._by[(int(g), str(m))] = (part["timestamp_s"].to_numpy(dtype=float), readings)

    @property
    def duration_s(self) -> float:
        """Time from the first to the last reading. [s]"""
        return float(self.times[-1] - self.times[0])

    def view(self, gpu: int, t_s: float) -> dict[str, Reading]:
        """Return the latest reading of every metric of ``gpu`` at or before ``t_s``."""
        out: dict[str, Reading] = {}
        for (g, m), (times, readings) in self._by.items():
            if g != gpu:
                continue
            k = int(np.searchsorted(times, t_s, side="right")) - 1
            if k >= 0:
                out[m] = readings[k]
        return out

    def series(self, gpu: int, metric: str) -> pd.Series:
        """Return one metric of one GPU over time (NaN where missing)."""
        item = self._by.get((gpu, metric))
        if item is None:
            return pd.Series([], dtype=float, name=metric)
        times, readings = item
        return pd.Series([np.nan if r.value is None else r.value for r in readings],
                         index=pd.Index(times, name="timestamp_s"), name=metric)

    def summary(self, gpu: int, metrics: Sequence[str],
                segments: Sequence[tuple[str, float, float]]) -> pd.DataFrame:
        """Return the mean of ``metrics`` per named time segment ``(name, start_s, end_s)``.

        Raises
        ------
        ValueError
            For a segment with end <= start.
        """
        rows = []
        for name, start, end in segments:
            if not end > start:
                raise ValueError(f"segment {name!r}: end must be > start")
            row: dict[str, Any] = {"segment": name}
            for m in metrics:
                s = self.series(gpu, m)
                part = s[(s.index >= start) & (s.index < end)]
                row[m] = float(part.mean()) if part.notna().any() else math.nan
            rows.append(row)
        return pd.DataFrame(rows).set_index("segment")
