"""Goodput and badput from a job's event log, in the conventions of Google's ml-goodput-measurement.

Pure: a list of log records in, a breakdown out; no I/O. The records are the small mappings the
library's ``GoodputRecorder`` writes (AI-Hypercomputer/ml-goodput-measurement, v0.2.3, 2026,
Apache-2.0), times in POSIX seconds (or any seconds):

``{"job_start_time": t}``, ``{"job_end_time": t}``, ``{"step_count": k, "step_start_time": t}``,
``{"tpu_init_start_time": t}`` / ``{"tpu_init_end_time": t}``,
``{"training_prep_start_time": t}`` / ``..._end_time``,
``{"data_loading_start_time": t}`` / ``..._end_time``,
``{"custom_badput_event_type": name, "custom_badput_event_start_time": t}`` / ``..._end_time``,
and, for checkpoints (the library gets these from Orbax's logger; labkit accepts them as
records), ``{"checkpoint_save_start_time": t}`` / ``..._end_time`` and
``{"checkpoint_restore_start_time": t}`` / ``..._end_time``. Other keys (``job_name``) are ignored.

How the time is booked (the library's rules, as its README and code describe them):

1. total = last ``job_end_time`` (or ``until``) - first ``job_start_time``;
2. a step's time is the next step's start minus its own, for consecutive step numbers; the last
   step counts only when ``job_end_time`` was logged;
3. every ``job_start_time`` after the first is a restart (a disruption); steps of the attempt
   before it whose numbers are logged again after it are *wasted progress*; the time from that
   attempt's last step start to the new ``job_start_time`` is *infrastructure recovery* (the
   step that never finished lands there);
4. *program startup* (compilation): per attempt, the first step's time minus the mean of the
   attempt's other steps, if positive;
5. init, training prep and blocking data loading are their recorded intervals; after a restart
   with no data-loading record, the last recorded loading time is booked again (the library
   does this);
6. checkpoint save/restore and custom events are their recorded intervals, taken out of any
   step they fall in;
7. *other* is the remainder. A log whose parts add up to more than the total is rejected (the
   library instead zeroes such buckets with a warning).

Used in: notebooks/04_reliability.ipynb
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any

import pandas as pd

from labkit import validate

__all__ = ["Bucket", "LogGoodput", "disrupted_run_log", "job_goodput"]


class Bucket(StrEnum):
    """Where a second of the job's wall time goes (the library's ``BadputType`` + productive)."""

    PRODUCTIVE = "productive"
    TPU_INITIALIZATION = "tpu_initialization"
    TRAINING_PREP = "training_prep"
    PROGRAM_STARTUP = "program_startup"
    DATA_LOADING_SYNC = "data_loading_sync"
    CHECKPOINT_SAVE = "unproductive_checkpoint_save_time"
    CHECKPOINT_RESTORE = "unproductive_checkpoint_restore_time"
    WASTED_PROGRESS = "wasted_progress_from_disruption"
    INFRASTRUCTURE_RECOVERY = "infrastructure_recovery_from_disruption"
    CUSTOM_BADPUT = "custom_badput_events"
    OTHER = "other"


# record prefix -> bucket of its [start, end] intervals
_INTERVALS = {
    "tpu_init": Bucket.TPU_INITIALIZATION,
    "training_prep": Bucket.TRAINING_PREP,
    "data_loading": Bucket.DATA_LOADING_SYNC,
    "checkpoint_save": Bucket.CHECKPOINT_SAVE,
    "checkpoint_restore": Bucket.CHECKPOINT_RESTORE,
    "custom_badput_event": Bucket.CUSTOM_BADPUT,
}
# intervals taken out of the steps they fall in
_BLOCKING = (Bucket.CHECKPOINT_SAVE, Bucket.CHECKPOINT_RESTORE, Bucket.CUSTOM_BADPUT)
_TOLERANCE_S = 1e-9


@dataclass(frozen=True)
class LogGoodput:
    """A job's wall time split into goodput and badput buckets (see :func:`job_goodput`)."""

    total_s: float
    seconds: Mapping[str, float] = field(default_factory=dict)
    disruptions: int = 0
    last_productive_step: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "seconds", MappingProxyType(dict(self.seconds)))

    @property
    def goodput(self) -> float:
        """Productive time / total job time. [fraction, 0-1]"""
        return self.seconds[Bucket.PRODUCTIVE] / self.total_s

    def table(self) -> pd.DataFrame:
        """Return one row per bucket: ``bucket``, ``seconds`` [s], ``fraction`` [0-1].

        Rows follow ``Bucket``'s order; they sum to the total job time (fraction 1).
        """
        rows = [(b.value, self.seconds[b], self.seconds[b] / self.total_s) for b in Bucket]
        return pd.DataFrame(rows, columns=["bucket", "seconds", "fraction"])


@dataclass
class _Attempt:
    start: float
    end: float
    steps: list[tuple[int, float]] = field(default_factory=list)


def _parse(records: Iterable[Mapping[str, Any]]) -> list[tuple[float, str, dict[str, Any]]]:
    parsed = []
    for i, rec in enumerate(records):
        if not isinstance(rec, Mapping):
            raise validate.InputError(f"events[{i}]", "other", rec,
                                      f"events[{i}] must be a mapping, got {rec!r}")
        keys = [k for k in rec if str(k).endswith("_time")]
        if len(keys) != 1:
            raise validate.InputError(
                f"events[{i}]", "other", rec,
                f"events[{i}] must hold exactly one '*_time' key, got {sorted(map(str, keys))}")
        key = str(keys[0])
        t = validate.finite(f"events[{i}].{key}", rec[key])
        parsed.append((t, key, dict(rec)))
    parsed.sort(key=lambda p: p[0])
    return parsed


def _overlap(a: float, b: float, c: float, d: float) -> float:
    return max(0.0, min(b, d) - max(a, c))


def job_goodput(events: Iterable[Mapping[str, Any]], *, until: float | None = None) -> LogGoodput:
    """Return the goodput and badput breakdown of a job from its event log.

    Parameters
    ----------
    events : iterable of mapping
        Log records (see the module docstring), in any order. [s]
    until : float, optional
        End of the period for a job that has not logged ``job_end_time`` yet (the library uses
        the query time). Ignored when the log has a ``job_end_time``. [s]

    Returns
    -------
    LogGoodput
        ``total_s``; ``seconds`` per :class:`Bucket` (they sum to ``total_s``);
        ``disruptions`` (restarts); ``last_productive_step``; ``.goodput`` and ``.table()``.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For a malformed record (not one ``*_time`` key, a NaN time, an unknown record, a
        negative step), no ``job_start_time``, no end (neither ``job_end_time`` nor ``until``),
        a non-positive total, an interval start without its end, or records whose buckets add
        up to more than the total (overlapping records).

    References
    ----------
    .. [1] AI-Hypercomputer/ml-goodput-measurement, README and ``src/goodput.py`` (v0.2.3);
       its unit test "wasted progress and disruptions" gives 30.612 % goodput (see
       ``tests/test_eventlog.py``).

    Examples
    --------
    >>> log = [{"job_start_time": 0}] + [
    ...     {"step_count": k, "step_start_time": 5 + 3 * k} for k in range(5)
    ... ] + [{"job_end_time": 20}]
    >>> job_goodput(log).goodput
    0.75

    Used in: notebooks/04_reliability.ipynb
    """
    records = _parse(events)
    starts = [t for t, key, _ in records if key == "job_start_time"]
    if not starts:
        raise validate.InputError("events", "other", None, "the log has no job_start_time")
    ends = [t for t, key, _ in records if key == "job_end_time"]
    ended = bool(ends)
    if ended:
        end = max(ends)
    elif until is not None:
        end = validate.finite("until", until)
    else:
        raise validate.InputError("until", "other", None,
                                  "the log has no job_end_time: pass until= (the query time)")
    total = end - starts[0]
    if total <= 0:
        raise validate.InputError("events", "positive", total,
                                  f"total job time must be > 0, got {total!r} s")

    attempts = [_Attempt(s, e) for s, e in zip(starts, [*starts[1:], end], strict=True)]
    intervals: list[tuple[Bucket, float, float]] = []
    open_: dict[str, float] = {}
    for t, key, rec in records:
        if key in ("job_start_time", "job_end_time"):
            continue
        if key == "step_start_time":
            step = validate.integer("step_count", rec.get("step_count"), minimum=0)
            owner = [a for a in attempts if a.start <= t][-1] if t >= starts[0] else None
            if owner is None:
                raise validate.InputError("step_start_time", "other", t,
                                          f"step {step} starts before the job ({t!r} s)")
            owner.steps.append((step, t))
            continue
        prefix, _, edge = key.removesuffix("_time").rpartition("_")
        if prefix not in _INTERVALS or edge not in ("start", "end"):
            raise validate.InputError(key, "other", rec, f"unknown record {key!r}")
        if edge == "start":
            open_[prefix] = t
        elif prefix not in open_:
            raise validate.InputError(key, "other", t, f"{key} at {t!r} s without its start")
        else:
            intervals.append((_INTERVALS[prefix], open_.pop(prefix), t))
    if open_:
        prefix = next(iter(open_))
        raise validate.InputError(f"{prefix}_start_time", "other", open_[prefix],
                                  f"{prefix}_start_time at {open_[prefix]!r} s has no end")

    seconds = {b: 0.0 for b in Bucket}
    for bucket, a, b in intervals:
        seconds[bucket] += _overlap(a, b, starts[0], end)
    blocking = [(a, b) for bucket, a, b in intervals if bucket in _BLOCKING]

    last_loading = 0.0
    last_productive: int | None = None
    for i, att in enumerate(attempts):
        final = i == len(attempts) - 1
        first_step_t = att.steps[0][1] if att.steps else att.end
        loading = [b - a for bucket, a, b in intervals
                   if bucket is Bucket.DATA_LOADING_SYNC and att.start <= a < first_step_t]
        if loading:
            last_loading = loading[-1]
        elif i > 0 and last_loading > 0:
            seconds[Bucket.DATA_LOADING_SYNC] += min(last_loading, first_step_t - att.start)

        # completed steps: (number, start, net duration)
        done: list[tuple[int, float, float]] = []
        for (k, t), (k2, t2) in zip(att.steps, att.steps[1:], strict=False):
            if k2 == k + 1:
                done.append((k, t, t2 - t))
        if att.steps and final and ended:
            k, t = att.steps[-1]
            done.append((k, t, end - t))
        done = [(k, t, d - sum(_overlap(a, b, t, t + d) for a, b in blocking))
                for k, t, d in done]

        resumed = attempts[i + 1].steps[0][0] if not final and attempts[i + 1].steps else None
        wasted = [d for k, _, d in done if resumed is not None and k >= resumed]
        kept = [(k, t, d) for k, t, d in done if resumed is None or k < resumed]
        startup = 0.0
        if len(done) >= 2 and att.steps and done[0][0] == att.steps[0][0] and kept \
                and kept[0][0] == done[0][0]:
            others = [d for _, _, d in done[1:]]
            startup = max(0.0, done[0][2] - sum(others) / len(others))
        seconds[Bucket.WASTED_PROGRESS] += sum(wasted)
        seconds[Bucket.PROGRAM_STARTUP] += startup
        seconds[Bucket.PRODUCTIVE] += sum(d for _, _, d in kept) - startup
        if kept:
            top = max(k for k, _, _ in kept)
            last_productive = top if last_productive is None else max(last_productive, top)
        if not final and att.steps:
            last_start = att.steps[-1][1]
            seconds[Bucket.INFRASTRUCTURE_RECOVERY] += (
                att.end - last_start - sum(_overlap(a, b, last_start, att.end)
                                           for a, b in blocking))

    booked = sum(v for b, v in seconds.items() if b is not Bucket.OTHER)
    if booked > total + _TOLERANCE_S:
        raise validate.InputError(
            "events", "at_most", booked,
            f"the log books {booked:g} s, more than the job's {total:g} s: overlapping records",
            limit=total)
    seconds[Bucket.OTHER] = max(0.0, total - booked)
    return LogGoodput(total, {b: seconds[b] for b in Bucket}, len(attempts) - 1,
                      last_productive)


def disrupted_run_log(
    *,
    restart_s: float = 30.0,
    resume_step: int = 2,
    step_s: float = 3.0,
    first_step_extra_s: float = 5.0,
    steps: int = 5,
) -> list[dict[str, Any]]:
    """Return the event log of a short job with one crash, as the library's unit test has it.

    Attempt 1: job start at 0 s; TPU init 0-1 s, training prep 1-3 s, data loading 3-5 s; steps
    0..``steps``-1 from 5 s, the first taking ``step_s + first_step_extra_s`` (compilation), the
    others ``step_s``; the job crashes after the last step starts. Attempt 2: job start at
    ``restart_s``; 5 s later it resumes from the checkpoint at step ``resume_step`` (first step
    again slower), runs to the last step, and logs its end. The defaults give the library's
    test "wasted progress and disruptions": 49 s in all, goodput 30.612 %.

    Parameters
    ----------
    restart_s : float, default 30
        When the job starts again; must be >= the crash (last step start + ``step_s``). [s]
    resume_step : int, default 2
        The step the last checkpoint saved (the first step run again). 0 <= it < ``steps``.
    step_s : float, default 3
        Time of one step. Must be > 0. [s]
    first_step_extra_s : float, default 5
        Extra time of each attempt's first step (compilation). Must be >= 0. [s]
    steps : int, default 5
        Steps of the job. Whole number >= 2.

    Returns
    -------
    list of dict
        Log records for :func:`job_goodput`. [s]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For NaN, a non-positive step time, a negative extra, ``resume_step`` outside
        ``0..steps-1``, or a restart before the crash.

    Used in: notebooks/04_reliability.ipynb
    """
    n = validate.integer("steps", steps, minimum=2)
    step = validate.positive("step_s", step_s)
    extra = validate.non_negative("first_step_extra_s", first_step_extra_s)
    resume = validate.integer("resume_step", resume_step, minimum=0)
    validate.at_most("resume_step", resume, n - 1, "steps - 1")
    log: list[dict[str, Any]] = [
        {"job_start_time": 0.0},
        {"tpu_init_start_time": 0.0}, {"tpu_init_end_time": 1.0},
        {"training_prep_start_time": 1.0}, {"training_prep_end_time": 3.0},
        {"data_loading_start_time": 3.0}, {"data_loading_end_time": 5.0},
    ]
    t = 5.0
    for k in range(n):
        log.append({"step_count": k, "step_start_time": t})
        t += step + (extra if k == 0 else 0.0)
    crash = t  # the last step never finishes: the job crashes one step time after it starts
    restart = validate.finite("restart_s", restart_s)
    if restart < crash:
        raise validate.InputError(
            "restart_s", "at_least", restart_s,
            f"restart_s must be >= the crash at {crash:g} s, got {restart_s!r}", limit=crash)
    log.append({"job_start_time": restart})
    t = restart + 5.0
    for k in range(resume, n):
        log.append({"step_count": k, "step_start_time": t})
        t += step + (extra if k == resume else 0.0)
    log.append({"job_end_time": t})
    return log
