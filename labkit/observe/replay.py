"""Replay: a tidy frame indexed so the dashboard can show every metric at time t.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from labkit.observe.catalog import FRAME_COLUMNS
from labkit.observe.readings import Reading, Status


class Trace:
    """A tidy frame indexed for replay: the value of every metric of a GPU at time t.

    The index holds, per (GPU, metric), numpy arrays of the times, values and status/reason
    codes (a day of 8 GPUs is about a million readings: no Python object per reading); a
    :class:`Reading` is made only for what :meth:`view` returns.

    Parameters
    ----------
    frame : pandas.DataFrame
        :data:`FRAME_COLUMNS` (from a reader or :meth:`History.frame`).

    Raises
    ------
    ValueError
        If columns are missing or the frame is empty. A status that is not a :class:`Status`
        (a reader's blank) reads as :attr:`Status.NOT_AVAILABLE`: a reader's frame never
        makes the replay fail (issue 16).
    """

    def __init__(self, frame: pd.DataFrame) -> None:
        missing = [c for c in FRAME_COLUMNS if c not in frame.columns]
        if missing:
            raise ValueError(f"frame lacks columns {missing}")
        if frame.empty:
            raise ValueError("empty trace")
        self.frame = _sorted(frame)
        t = self.frame["timestamp_s"].to_numpy(dtype=float)
        self.times = np.unique(t)
        value = self.frame["value"].to_numpy(dtype=float)
        status_codes, statuses = _codes(self.frame["status"])
        self._statuses = tuple(_status(s) for s in statuses)
        reason_codes, reasons = _codes(self.frame["reason"])
        self._reasons = tuple(str(r) for r in reasons)
        gpu_codes, gpus = pd.factorize(self.frame["gpu"])
        metric_codes, metrics = _codes(self.frame["metric"])
        ok = (gpu_codes >= 0) & (metric_codes >= 0)  # groupby's dropna: no NaN gpu or metric
        key = np.where(ok, gpu_codes.astype(np.int64) * max(len(metrics), 1) + metric_codes, -1)
        order = np.argsort(key, kind="stable")
        order = order[key[order] >= 0]
        cuts = np.flatnonzero(np.diff(key[order])) + 1
        groups = [g for g in np.split(order, cuts) if len(g)]
        groups.sort(key=lambda idx: int(idx[0]))  # in order of first appearance, as groupby
        self._by: dict[int, dict[str, _Series]] = {}
        for idx in groups:
            g, m = int(gpus[gpu_codes[idx[0]]]), str(metrics[metric_codes[idx[0]]])
            self._by.setdefault(g, {})[m] = _Series(t[idx], value[idx], status_codes[idx],
                                                    reason_codes[idx])
        self.gpus = tuple(sorted(self._by))
        self.metrics = tuple(sorted({m for per in self._by.values() for m in per}))

    def _reading(self, series: _Series, k: int) -> Reading:
        """The reading at position ``k`` of one series (the rule of the tidy frame: a status
        ``ok`` without a finite value is a missing reading, reason "empty" if none)."""
        v = float(series.value[k])
        code = int(series.status[k])
        status = self._statuses[code] if code >= 0 else Status.NOT_AVAILABLE
        rcode = int(series.reason[k])
        reason = self._reasons[rcode] if rcode >= 0 else ""
        if status is not Status.OK or math.isfinite(v):
            return Reading(v if math.isfinite(v) else None, status, reason or None)
        return Reading.missing(Status.NOT_AVAILABLE, reason or "empty")

    @property
    def duration_s(self) -> float:
        """Time from the first to the last reading. [s]"""
        return float(self.times[-1] - self.times[0])

    def view(self, gpu: int, t_s: float) -> dict[str, Reading]:
        """Return the latest reading of every metric of ``gpu`` at or before ``t_s``."""
        out: dict[str, Reading] = {}
        for m, series in self._by.get(gpu, {}).items():
            k = int(np.searchsorted(series.times, t_s, side="right")) - 1
            if k >= 0:
                out[m] = self._reading(series, k)
        return out

    def series(self, gpu: int, metric: str) -> pd.Series:
        """Return one metric of one GPU over time (NaN where missing)."""
        item = self._by.get(gpu, {}).get(metric)
        if item is None:
            return pd.Series([], dtype=float, name=metric)
        values = np.where(np.isfinite(item.value), item.value, np.nan)
        return pd.Series(values, index=pd.Index(item.times, name="timestamp_s"), name=metric)

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


class _Series(NamedTuple):
    """One (GPU, metric) of a :class:`Trace`: times [s], values, status and reason codes."""

    times: np.ndarray
    value: np.ndarray
    status: np.ndarray
    reason: np.ndarray


def _status(value: Any) -> Status:
    """Return the :class:`Status` of a status cell; anything else is ``NOT_AVAILABLE``."""
    try:
        return Status(str(value))
    except ValueError:
        return Status.NOT_AVAILABLE


def _codes(column: pd.Series) -> tuple[np.ndarray, Sequence[Any]]:
    """Return (codes, the values they stand for) of a text column (categorical or not);
    code -1 is a missing cell."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy(), list(column.cat.categories)
    codes, uniques = pd.factorize(column)
    return codes, list(uniques)


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    """Return ``frame`` by time, GPU, metric (stable; as ``sort_values``, a categorical metric
    by its categories' order); a frame already in that order is returned as it is."""
    metric = frame["metric"]
    if isinstance(metric.dtype, pd.CategoricalDtype):
        m = metric.cat.codes.to_numpy()
    else:
        m = pd.factorize(metric, sort=True)[0]
    t = frame["timestamp_s"].to_numpy(dtype=float)
    g = frame["gpu"].to_numpy()
    if len(frame) > 1 and not np.isnan(t).any() and (m >= 0).all():
        dt, dg, dm = np.diff(t), np.diff(g), np.diff(m)
        if bool(np.all((dt > 0) | ((dt == 0) & ((dg > 0) | ((dg == 0) & (dm >= 0)))))):
            return frame
    return frame.sort_values(["timestamp_s", "gpu", "metric"], kind="stable")
