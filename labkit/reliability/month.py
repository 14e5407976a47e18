"""The worksheet's month: the exact long-run ledger and the Monte Carlo (:func:`simulate_month`).

Pure (a seeded ``numpy`` generator, no clock).

Used in: notebooks/04_reliability.ipynb
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from labkit import validate
from labkit.goodput import Loss, Worksheet
from labkit.reliability.checkpoint import _expm1_minus_x, _job_inputs

#: Ledger columns of :func:`simulate_month`, in the worksheet's order (``labkit.goodput.Loss``).
LEDGER_COLUMNS: tuple[str, ...] = tuple(m.value for m in Loss)
#: Largest ``trials`` :func:`simulate_month` accepts (memory and time stay bounded).
MAX_TRIALS = 100_000
#: Largest expected number of simulated interruptions over all trials (~2 s, ~0.2 GB peak).
MAX_EVENTS = 20_000_000
_CHUNK_TRIALS = 2_000
_CHUNK_EVENTS = 1_000_000
# -- the month: exact expectation and Monte Carlo -------------------------------------------
def _month_inputs(
    n_gpus: Any, hours: Any, gpu_mtbf_h: Any, checkpoint_interval_h: Any,
    checkpoint_write_h: Any, restart_h: Any, maintenance_h: Any, straggler_slowdown: Any,
) -> tuple[float, float, float, float, float, float, float]:
    """Validate a month; return (lambda, hours, available, tau, delta, R, S)."""
    lam, tau, delta, restart = _job_inputs(n_gpus, gpu_mtbf_h, checkpoint_interval_h,
                                           checkpoint_write_h, restart_h)
    total = validate.positive("hours", hours)
    maintenance = validate.non_negative("maintenance_h", maintenance_h)
    if maintenance >= total:
        raise validate.InputError(
            "maintenance_h", "at_most", maintenance_h,
            f"maintenance_h must be < hours ({total:g}), got {maintenance_h!r}", limit=total,
        )
    s = validate.finite("straggler_slowdown", straggler_slowdown)
    if s < 1:
        raise validate.InputError(
            "straggler_slowdown", "at_least", straggler_slowdown,
            f"straggler_slowdown must be >= 1, got {straggler_slowdown!r}", limit=1.0,
        )
    return lam, total, total - maintenance, tau, delta, restart, s


def expected_month(
    n_gpus: int,
    hours: float,
    gpu_mtbf_h: float,
    checkpoint_interval_h: float,
    checkpoint_write_h: float,
    restart_h: float,
    maintenance_h: float,
    straggler_slowdown: float = 1.0,
) -> Worksheet:
    """Return the month's expected ledger (lesson 03's worksheet) under the Poisson model.

    The job runs ``A = hours - maintenance_h`` hours of a long training run in steady state
    (planned maintenance is announced and taken right after a checkpoint: it costs nothing
    beyond itself). Shares from the renewal argument, per completed segment of ``tau`` compute +
    ``delta`` write, with ``T = tau + delta`` and ``E = (exp(lambda T) - 1) exp(lambda R) /
    lambda`` its expected wall time (Daly 2006):

    - checkpoint writes ``delta / E``;
    - rewind (work and writes later thrown away by an interruption)
      ``((exp(lambda T) - 1)/lambda - T) / E``;
    - failure stops (restarts, including restarts cut short by another interruption)
      ``(exp(lambda T) - 1)(exp(lambda R) - 1) / lambda / E``, which is ``1 - exp(-lambda R)``;
    - stepping ``tau / E``, of which a step slowdown ``S`` books ``(1 - 1/S)`` as the straggler
      line (lesson 03).

    In steady state these are also the exact expectations over a finite month, so they are
    the means that :func:`simulate_month` must reproduce within sampling error.

    Parameters
    ----------
    n_gpus, gpu_mtbf_h, checkpoint_interval_h, checkpoint_write_h, restart_h
        As in :func:`expected_ettr`. [GPUs, h]
    hours : float
        Reserved wall-clock hours (720 for a 30-day month). Must be > 0. [h]
    maintenance_h : float
        Planned maintenance in the period. Must be >= 0 and < ``hours``. [h]
    straggler_slowdown : float, default 1
        Step slowdown S = actual / ideal step time, >= 1 (lesson 03). [unitless]

    Returns
    -------
    labkit.goodput.Worksheet
        ``reserved_h = hours`` and the five ``Loss`` lines (planned_maintenance, failure_stops,
        checkpoint_writes, rewind, straggler), in expected hours. [h]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        As :func:`expected_ettr`, plus ``hours <= 0``, ``maintenance_h`` < 0 or >= ``hours``,
        and ``straggler_slowdown < 1``.

    Used in: notebooks/04_reliability.ipynb
    """
    lam, total, available, tau, delta, restart, s = _month_inputs(
        n_gpus, hours, gpu_mtbf_h, checkpoint_interval_h, checkpoint_write_h, restart_h,
        maintenance_h, straggler_slowdown)
    seg = tau + delta
    grow = math.expm1(lam * seg)
    per_segment = {
        "stepping": tau,
        Loss.CHECKPOINT_WRITES.value: delta,
        Loss.REWIND.value: _expm1_minus_x(lam * seg) / lam,
        Loss.FAILURE_STOPS.value: grow * math.expm1(lam * restart) / lam,
    }
    wall = sum(per_segment.values())
    share = {k: available * v / wall for k, v in per_segment.items()}
    stepping = share.pop("stepping")
    return Worksheet(total, {
        Loss.PLANNED_MAINTENANCE.value: total - available,
        Loss.FAILURE_STOPS.value: share[Loss.FAILURE_STOPS.value],
        Loss.CHECKPOINT_WRITES.value: share[Loss.CHECKPOINT_WRITES.value],
        Loss.REWIND.value: share[Loss.REWIND.value],
        Loss.STRAGGLER.value: stepping * (1 - 1 / s),
    })


def simulate_month(
    n_gpus: int,
    hours: float,
    gpu_mtbf_h: float,
    checkpoint_interval_h: float,
    checkpoint_write_h: float,
    restart_h: float,
    maintenance_h: float,
    trials: int,
    seed: int,
    *,
    straggler_slowdown: float = 1.0,
    progress: Callable[[int, int], None] | None = None,
) -> pd.DataFrame:
    """Simulate ``trials`` months of one job and return each month's goodput ledger.

    The month is ``A = hours - maintenance_h`` running hours of a long job in steady state
    (maintenance is a pause taken right after a checkpoint). Each trial draws the month's
    interruptions as a Poisson process (count ~ Poisson(lambda A), times uniform), plus the last
    one before the month and the first one after it (exponential gaps), then walks the timeline
    in closed form, all trials at once (numpy): after each interruption the job restarts for
    ``restart_h`` (an interruption during a restart starts it over), then repeats ``tau``
    compute + ``delta`` write; the segment in progress at an interruption is thrown away
    (rewind). Time is booked by its fate: work done this month and thrown away by an
    interruption early next month is rewind too. With that steady-state start and booking,
    the expected ledger is exactly :func:`expected_month`'s.

    Parameters
    ----------
    n_gpus, hours, gpu_mtbf_h, checkpoint_interval_h, checkpoint_write_h, restart_h,
    maintenance_h
        As in :func:`expected_month`. [GPUs, h]
    trials : int
        Months to simulate. Whole number, 1 <= trials <= ``MAX_TRIALS`` (100,000), and
        ``trials * lambda * A <= MAX_EVENTS`` (20 million interruptions in all).
    seed : int
        Seed of numpy's ``default_rng``; the same inputs and seed give the same frame. Whole
        number >= 0.
    straggler_slowdown : float, default 1
        Step slowdown S >= 1 booked as the straggler line (lesson 03). [unitless]
    progress : callable, optional
        Called as ``progress(done, trials)`` after each chunk of trials (for a progress bar).

    Returns
    -------
    pandas.DataFrame
        One row per trial (index ``trial``), columns: ``goodput`` [fraction, 0-1]; the ledger
        in hours, ``planned_maintenance``, ``failure_stops``, ``checkpoint_writes``, ``rewind``,
        ``straggler`` (``LEDGER_COLUMNS``) [h]; ``effective_h`` [h]; ``interruptions`` [count].
        Each row's ledger plus ``effective_h`` sums to ``hours``.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        As :func:`expected_month`, plus a bad ``trials``/``seed`` or a run larger than the
        bounds above (field ``trials``, or ``n_gpus`` when one month alone is too large).

    Notes
    -----
    Expected interruptions per month are exactly ``lambda A`` (Poisson s.d. sqrt(lambda A));
    the ledger means agree with :func:`expected_month` within sampling error
    (``tests/test_reliability.py`` checks 3 standard errors). 4,096 GPUs x 720 h
    x 10,000 trials runs in well under a second (``benchmarks/bench_reliability.py``).

    Used in: notebooks/04_reliability.ipynb
    """
    lam, total, available, tau, delta, restart, s = _month_inputs(
        n_gpus, hours, gpu_mtbf_h, checkpoint_interval_h, checkpoint_write_h, restart_h,
        maintenance_h, straggler_slowdown)
    per_trial = lam * available
    if per_trial > _CHUNK_EVENTS:
        n_max = math.floor(_CHUNK_EVENTS * float(gpu_mtbf_h) / available)
        raise validate.InputError(
            "n_gpus", "at_most", n_gpus,
            f"n_gpus={n_gpus!r} means {per_trial:,.0f} interruptions per month, more than "
            f"the simulation's {_CHUNK_EVENTS:,}; at most {n_max:,} GPUs at this MTBF",
            limit=n_max,
        )
    n_trials = validate.integer("trials", trials, minimum=1)
    limit = min(MAX_TRIALS, math.floor(MAX_EVENTS / max(per_trial, 1e-12)))
    if n_trials > limit:
        raise validate.InputError(
            "trials", "at_most", trials,
            f"trials must be <= {limit:,} here (at most {MAX_TRIALS:,}, and "
            f"{MAX_EVENTS:,} simulated interruptions in all), got {trials!r}", limit=limit,
        )
    rng = np.random.default_rng(validate.integer("seed", seed, minimum=0))
    chunk = max(1, min(_CHUNK_TRIALS, math.floor(_CHUNK_EVENTS / max(per_trial, 1.0))))
    parts = []
    done = 0
    while done < n_trials:
        size = min(chunk, n_trials - done)
        parts.append(_simulate_chunk(rng, size, lam, available, tau, delta, restart))
        done += size
        if progress is not None:
            progress(done, n_trials)
    cols = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    stepping = cols.pop("stepping")
    effective = stepping / s
    frame = pd.DataFrame({
        "goodput": effective / total,
        Loss.PLANNED_MAINTENANCE.value: np.full(n_trials, total - available),
        Loss.FAILURE_STOPS.value: cols[Loss.FAILURE_STOPS.value],
        Loss.CHECKPOINT_WRITES.value: cols[Loss.CHECKPOINT_WRITES.value],
        Loss.REWIND.value: cols[Loss.REWIND.value],
        Loss.STRAGGLER.value: stepping - effective,
        "effective_h": effective,
        "interruptions": cols["interruptions"].astype(np.int64),
    })
    frame.index.name = "trial"
    return frame


def _simulate_chunk(
    rng: np.random.Generator, size: int, lam: float, available: float, tau: float,
    delta: float, restart: float,
) -> dict[str, np.ndarray]:
    """Simulate ``size`` trials; return per-trial sums (hours) and interruption counts.

    Every trial's timeline is cut into intervals between consecutive interruptions: the last
    one before the month (at ``-Exp(lambda)``), those inside it, and the first one after it (at
    ``A + Exp(lambda)``). Each interval is a restart, then whole segments (kept), then the
    segment in progress (lost); each part is clipped to the month ``[0, A]``.
    """
    seg = tau + delta
    counts = rng.poisson(lam * available, size=size)
    before = rng.exponential(1 / lam, size=size)
    after = rng.exponential(1 / lam, size=size)
    inside_trial = np.repeat(np.arange(size), counts)
    # uniform order statistics within each trial: sort trial + U (U in [0, 1)) once
    key = inside_trial + rng.random(inside_trial.size)
    key.sort()
    inside = (key - inside_trial) * available

    n_intervals = counts + 1
    first = np.cumsum(n_intervals) - n_intervals
    is_first = np.zeros(int(n_intervals.sum()), dtype=bool)
    is_first[first] = True
    is_last = np.zeros_like(is_first)
    is_last[first + counts] = True
    starts = np.empty(is_first.size)
    starts[is_first] = -before
    starts[~is_first] = inside
    ends = np.empty(is_first.size)
    ends[is_last] = available + after
    ends[~is_last] = inside
    trial = np.repeat(np.arange(size), n_intervals)

    def clip(x: np.ndarray) -> np.ndarray:
        return np.clip(x, 0.0, available)

    def stepping(x: np.ndarray) -> np.ndarray:  # compute time in [0, x) of back-to-back segments
        whole = np.floor(x / seg)
        return whole * tau + np.minimum(x - whole * seg, tau)

    work_start = np.minimum(starts + restart, ends)
    stop = clip(work_start) - clip(starts)
    kept = np.floor((ends - work_start) / seg) * seg
    x1 = np.clip(-work_start, 0.0, kept)
    x2 = np.clip(available - work_start, 0.0, kept)
    step = stepping(x2) - stepping(x1)
    write = (x2 - x1) - step
    lost = clip(ends) - clip(work_start + kept)

    def per_trial(values: np.ndarray) -> np.ndarray:
        return np.bincount(trial, weights=values, minlength=size)

    return {
        "stepping": per_trial(step),
        Loss.CHECKPOINT_WRITES.value: per_trial(write),
        Loss.REWIND.value: per_trial(lost),
        Loss.FAILURE_STOPS.value: per_trial(stop),
        "interruptions": counts,
    }


def month_worksheet(frame: pd.DataFrame, trial: int, hours: float) -> Worksheet:
    """Return one simulated month (a row of :func:`simulate_month`) as lesson 03's worksheet.

    Parameters
    ----------
    frame : pandas.DataFrame
        A :func:`simulate_month` result.
    trial : int
        The row (``trial`` index value).
    hours : float
        The month's reserved hours, as simulated. [h]

    Returns
    -------
    labkit.goodput.Worksheet
        The trial's five loss lines. [h]

    Raises
    ------
    ValueError
        If ``trial`` is not in the frame (an ``InputError`` on field ``trial``) or the ledger
        does not fit ``hours``.

    Used in: notebooks/04_reliability.ipynb
    """
    index = validate.integer("trial", trial, minimum=0)
    if index not in frame.index:
        raise validate.InputError("trial", "at_most", trial,
                                  f"trial must be < {len(frame)}, got {trial!r}",
                                  limit=len(frame) - 1)
    row = frame.loc[index]
    return Worksheet(hours, {name: float(row[name]) for name in LEDGER_COLUMNS})


