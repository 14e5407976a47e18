"""Sampler ticks (:class:`Snapshot`) and the bounded ring buffer that keeps them (:class:`History`).

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from labkit import validate
from labkit.observe.catalog import CATALOG, FRAME_COLUMNS
from labkit.observe.readings import Reading, Status

# --------------------------------------------------------------------------------------------
# Snapshots and the ring buffer
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    """What one sampler tick read.

    Attributes
    ----------
    t_s : float
        Time of the tick since sampling began. [s]
    readings : mapping of (int, str) to Reading
        (gpu, metric) -> reading, for the metrics read this tick (slow and GPM metrics are not
        read every tick).
    duration_s : float
        How long the tick's NVML calls took. [s]
    interval_s : float or None
        Time since the previous tick began (the actual sample interval). [s]
    """

    t_s: float
    readings: Mapping[tuple[int, str], Reading]
    duration_s: float = 0.0
    interval_s: float | None = None

    def get(self, gpu: int, metric: str) -> Reading | None:
        """Return the reading of ``metric`` on ``gpu`` from this tick, if it was read."""
        return self.readings.get((gpu, metric))

    def to_frame(self) -> pd.DataFrame:
        """Return this tick as a tidy frame (:data:`FRAME_COLUMNS`)."""
        rows = [(self.t_s, g, m, np.nan if r.value is None else r.value, _unit(m),
                 str(r.status), r.reason or "") for (g, m), r in self.readings.items()]
        return pd.DataFrame(rows, columns=list(FRAME_COLUMNS))


def _unit(metric: str) -> str:
    m = CATALOG.get(metric)
    return m.unit if m else ""


_STATUSES: tuple[Status, ...] = tuple(Status)
_STATUS_CODE = {s: i for i, s in enumerate(_STATUSES)}
_NOT_READ = -1


class History:
    """A bounded ring buffer of sampler ticks (thread-safe when given a ``lock``).

    Stores, per tick, one float64 value, one status code and one reason code per (gpu, metric):
    ``capacity x gpus x metrics x 11`` bytes plus the timestamps. The oldest tick is dropped
    when full.

    Parameters
    ----------
    gpus : sequence of int
    metrics : sequence of str
    capacity : int
        Ticks kept (3,600 = one hour at 1 Hz). Must be 1..1,000,000.

    Raises
    ------
    labkit.validate.InputError
        For a capacity outside 1..1,000,000.
    """

    MAX_CAPACITY = 1_000_000

    def __init__(self, gpus: Sequence[int], metrics: Sequence[str], capacity: int, *,
                 lock: AbstractContextManager[Any] | None = None) -> None:
        capacity = validate.integer("capacity", capacity, minimum=1)
        validate.at_most("capacity", capacity, self.MAX_CAPACITY, "History.MAX_CAPACITY")
        self.gpus = tuple(gpus)
        self.metrics = tuple(metrics)
        self.capacity = capacity
        self._g = {g: i for i, g in enumerate(self.gpus)}
        self._m = {m: i for i, m in enumerate(self.metrics)}
        shape = (capacity, len(self.gpus), len(self.metrics))
        self._t = np.full(capacity, np.nan)
        self._values = np.full(shape, np.nan)
        self._status = np.full(shape, _NOT_READ, dtype=np.int8)
        self._reason = np.zeros(shape, dtype=np.int16)
        self._reasons: list[str] = [""]
        self._reason_index: dict[str, int] = {"": 0}
        self._latest: dict[tuple[int, str], tuple[float, Reading]] = {}
        self._next = 0
        self._count = 0
        # The pure model starts no thread; a caller that shares the buffer across threads (the
        # sampler in labkit.gpu.sampler) hands in its lock. Without one, access is unguarded.
        self._lock: AbstractContextManager[Any] = lock if lock is not None else nullcontext()

    def __len__(self) -> int:
        return self._count

    @property
    def nbytes(self) -> int:
        """Bytes held by the buffer's arrays."""
        return int(self._t.nbytes + self._values.nbytes + self._status.nbytes
                   + self._reason.nbytes)

    def _reason_code(self, reason: str | None) -> int:
        if not reason:
            return 0
        code = self._reason_index.get(reason)
        if code is None:
            if len(self._reasons) >= np.iinfo(np.int16).max:
                return 0
            code = len(self._reasons)
            self._reasons.append(reason)
            self._reason_index[reason] = code
        return code

    def append(self, snapshot: Snapshot) -> None:
        """Add one tick (readings of unknown GPUs or metrics are ignored)."""
        with self._lock:
            i = self._next
            self._t[i] = snapshot.t_s
            self._values[i] = np.nan
            self._status[i] = _NOT_READ
            self._reason[i] = 0
            for (g, m), r in snapshot.readings.items():
                gi, mi = self._g.get(g), self._m.get(m)
                if gi is None or mi is None:
                    continue
                if r.value is not None:
                    self._values[i, gi, mi] = r.value
                self._status[i, gi, mi] = _STATUS_CODE[r.status]
                self._reason[i, gi, mi] = self._reason_code(r.reason)
                self._latest[(g, m)] = (snapshot.t_s, r)
            self._next = (i + 1) % self.capacity
            self._count = min(self._count + 1, self.capacity)

    def clear(self) -> None:
        """Forget every tick."""
        with self._lock:
            self._next = self._count = 0
            self._latest.clear()

    def _order(self) -> np.ndarray:
        start = (self._next - self._count) % self.capacity
        return (start + np.arange(self._count)) % self.capacity

    def latest(self, gpu: int) -> dict[str, Reading]:
        """Return the last reading of every metric of ``gpu`` (slow metrics keep their last)."""
        with self._lock:
            return {m: r for (g, m), (_, r) in self._latest.items() if g == gpu}

    def latest_time(self, gpu: int, metric: str) -> float | None:
        """Return when ``metric`` of ``gpu`` was last read. [s]"""
        with self._lock:
            item = self._latest.get((gpu, metric))
        return None if item is None else item[0]

    def times(self) -> np.ndarray:
        """Return the tick times, oldest first. [s]"""
        with self._lock:
            return self._t[self._order()].copy()

    def series(self, gpu: int, metrics: Sequence[str], since_s: float | None = None
               ) -> pd.DataFrame:
        """Return a wide frame of ``metrics`` of ``gpu`` (index ``timestamp_s``), oldest first.

        Ticks where a metric was not read or had no value are NaN. ``since_s`` keeps the ticks
        at or after that time.
        """
        with self._lock:
            order = self._order()
            t = self._t[order]
            gi = self._g[gpu]
            cols = {m: self._values[order, gi, self._m[m]].copy() for m in metrics}
        frame = pd.DataFrame(cols, index=pd.Index(t, name="timestamp_s"))
        if since_s is not None:
            frame = frame[frame.index >= since_s]
        return frame

    def frame(self) -> pd.DataFrame:
        """Return every stored reading as a tidy frame (:data:`FRAME_COLUMNS`)."""
        with self._lock:
            order = self._order()
            t = self._t[order]
            values = self._values[order]
            status = self._status[order]
            reason = self._reason[order]
            reasons = list(self._reasons)
        ti, gi, mi = np.nonzero(status != _NOT_READ)
        # text by numpy indexing into small tables (no Python loop per reading)
        units = np.asarray([_unit(m) for m in self.metrics] or [""], dtype=object)
        names = np.asarray([str(s) for s in _STATUSES], dtype=object)
        return pd.DataFrame({
            "timestamp_s": t[ti],
            "gpu": np.asarray(self.gpus, dtype=int)[gi] if len(self.gpus) else gi,
            "metric": np.asarray(self.metrics, dtype=object)[mi],
            "value": values[ti, gi, mi],
            "unit": units[mi],
            "status": names[status[ti, gi, mi]],
            "reason": np.asarray(reasons, dtype=object)[reason[ti, gi, mi]],
        }, columns=list(FRAME_COLUMNS))


