"""Failures at scale and how operators answer them: MTBF, checkpoint intervals, ETTR, a month.

Pure: numbers in, numbers out; no widgets, no I/O. Times are hours unless a function says "same
unit in and out" (the checkpoint-interval formulas work in any one time unit).

The model throughout: every GPU fails independently at a constant rate (exponential lifetimes),
so a job on ``n_gpus`` GPUs sees a Poisson stream of interruptions with rate
``lambda = n_gpus / gpu_mtbf_h`` and mean time between failures ``gpu_mtbf_h / n_gpus``
(Google Cloud, "Introducing ML Productivity Goodput", 2024: cluster MTBF falls linearly with
scale; Kokolis et al., "Revisiting Reliability in Large-Scale Machine Learning Research
Clusters", HPCA 2025 / arXiv 2410.21680: MTTF = 1 / (N_nodes r_f)). A job computes for
``tau`` hours, writes a checkpoint for ``delta`` hours, and repeats; after an interruption it
restarts for ``R`` hours and resumes from the last complete checkpoint. Interruptions strike at
any moment, also during a write or a restart (Daly 2006's complete model).

Sections:

- failure scaling: :func:`job_mtbf_h`, :func:`expected_interruptions`,
  :func:`interruption_free_probability`, rate conversions;
- checkpoint interval: :func:`young_interval`, :func:`daly_interval`, :func:`optimal_interval`,
  :func:`overhead`;
- ETTR: :func:`expected_ettr` (Meta's closed form or the exact expectation);
- the worksheet's month: :func:`expected_month` (exact long-run ledger) and
  :func:`simulate_month` (Monte Carlo, vectorised);
- published tables: :func:`interruption_shares` (Llama 3 Table 5's arithmetic).

Used in: notebooks/04_reliability.ipynb
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy.special import lambertw

from labkit import validate
from labkit.goodput import Loss, Worksheet

__all__ = [
    "LEDGER_COLUMNS",
    "MAX_EVENTS",
    "MAX_TRIALS",
    "daly_interval",
    "expected_ettr",
    "expected_interruptions",
    "expected_month",
    "gpu_mtbf_h_from_rate",
    "interruption_free_probability",
    "interruption_shares",
    "job_mtbf_h",
    "month_worksheet",
    "observed_gpu_mtbf_h",
    "optimal_interval",
    "overhead",
    "rate_per_1000_node_days",
    "simulate_month",
    "young_interval",
]

HOURS_PER_DAY = 24.0
#: GPUs per server (node) in the clusters the sources describe: DGX A100 (Meta RSC), 8 x H100
#: per server (Llama 3 §3.3.1), 8-GPU servers (InfiniteHBD trace).
GPUS_PER_NODE = 8
#: Ledger columns of :func:`simulate_month`, in the worksheet's order (``labkit.goodput.Loss``).
LEDGER_COLUMNS: tuple[str, ...] = tuple(m.value for m in Loss)
#: Largest ``trials`` :func:`simulate_month` accepts (memory and time stay bounded).
MAX_TRIALS = 100_000
#: Largest expected number of simulated interruptions over all trials (~2 s, ~0.2 GB peak).
MAX_EVENTS = 20_000_000
_CHUNK_TRIALS = 2_000
_CHUNK_EVENTS = 1_000_000

RateUnit = Literal["per_gpu_day", "per_1000_node_days"]
EttrMethod = Literal["meta", "exact"]


# -- failure scaling -------------------------------------------------------------------------
def _n_gpus(value: Any) -> int:
    return validate.integer("n_gpus", value, minimum=1)


def job_mtbf_h(n_gpus: int, gpu_mtbf_h: float) -> float:
    """Return the mean time between interruptions of a job spread over ``n_gpus`` GPUs.

    Independent GPUs with exponential lifetimes: the job's interruption rate is the sum of the
    GPUs' rates, so its MTBF is ``gpu_mtbf_h / n_gpus`` (falls as 1/N).

    Parameters
    ----------
    n_gpus : int
        GPUs the job needs, all of them at once. Whole number >= 1. [GPUs]
    gpu_mtbf_h : float
        Mean time between job-interrupting failures of one GPU (with its share of the host,
        network and software). Must be > 0. [h]

    Returns
    -------
    float
        Job MTBF. [h]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        If ``n_gpus`` is not a whole number >= 1, or ``gpu_mtbf_h`` is NaN, infinite or <= 0.

    References
    ----------
    .. [1] Kokolis et al., "Revisiting Reliability in Large-Scale Machine Learning Research
       Clusters", HPCA 2025 (arXiv 2410.21680): MTTF = (N_nodes r_f)^-1.
    .. [2] Llama Team, "The Llama 3 Herd of Models", arXiv 2407.21783 (2024), §3.3.4: 419
       unexpected interruptions in 54 days on 16,384 GPUs, i.e. one per 3.09 h.

    Examples
    --------
    >>> round(job_mtbf_h(16_384, 16_384 * 54 * 24 / 419), 3)
    3.093

    Used in: notebooks/04_reliability.ipynb
    """
    n = _n_gpus(n_gpus)
    return validate.positive("gpu_mtbf_h", gpu_mtbf_h) / n


def expected_interruptions(n_gpus: int, gpu_mtbf_h: float, hours: float) -> float:
    """Return the expected number of interruptions of an ``n_gpus`` job in ``hours``.

    The count is Poisson with this mean (its standard deviation is the square root).

    Parameters
    ----------
    n_gpus : int
        GPUs of the job. Whole number >= 1. [GPUs]
    gpu_mtbf_h : float
        Per-GPU MTBF. Must be > 0. [h]
    hours : float
        Length of the period. Must be >= 0. [h]

    Returns
    -------
    float
        ``hours * n_gpus / gpu_mtbf_h``. [interruptions]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For a bad ``n_gpus``/``gpu_mtbf_h`` (see :func:`job_mtbf_h`) or a negative/NaN ``hours``.

    Used in: notebooks/04_reliability.ipynb
    """
    mtbf = job_mtbf_h(n_gpus, gpu_mtbf_h)
    return validate.non_negative("hours", hours) / mtbf


def interruption_free_probability(n_gpus: int, gpu_mtbf_h: float, hours: float) -> float:
    """Return the probability that an ``n_gpus`` job runs ``hours`` without an interruption.

    Poisson stream: ``P = exp(-hours * n_gpus / gpu_mtbf_h)``.

    Parameters
    ----------
    n_gpus : int
        GPUs of the job. Whole number >= 1. [GPUs]
    gpu_mtbf_h : float
        Per-GPU MTBF. Must be > 0. [h]
    hours : float
        Window length. Must be >= 0. [h]

    Returns
    -------
    float
        Probability of no interruption in the window. [fraction, 0-1]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        As :func:`expected_interruptions`.

    Examples
    --------
    Llama 3 (16,384 GPUs, 419 interruptions in 1,296 h): one hour without an interruption
    happens with probability 0.724.

    >>> round(interruption_free_probability(16_384, 16_384 * 1_296 / 419, 1), 4)
    0.7238

    Used in: notebooks/04_reliability.ipynb
    """
    return math.exp(-expected_interruptions(n_gpus, gpu_mtbf_h, hours))


def gpu_mtbf_h_from_rate(
    rate: float, unit: RateUnit = "per_gpu_day", gpus_per_node: int = GPUS_PER_NODE
) -> float:
    """Return the per-GPU MTBF that a published failure rate means.

    Parameters
    ----------
    rate : float
        Failures per GPU-day (``unit="per_gpu_day"``) or per 1,000 node-days
        (``unit="per_1000_node_days"``, as Meta and the InfiniteHBD trace report). Must be > 0.
    unit : {"per_gpu_day", "per_1000_node_days"}, default "per_gpu_day"
        The rate's unit.
    gpus_per_node : int, default 8
        GPUs per node, for node rates. Whole number >= 1. [GPUs]

    Returns
    -------
    float
        Per-GPU MTBF: ``24 / rate`` for GPU-day rates, ``24 * gpus_per_node * 1000 / rate``
        for node rates. [h]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For a rate that is NaN or <= 0, an unknown unit, or a bad ``gpus_per_node``.

    Examples
    --------
    Meta RSC-1's 6.50 failures per 1,000 node-days:

    >>> round(gpu_mtbf_h_from_rate(6.50, "per_1000_node_days"), 1)
    29538.5

    Used in: notebooks/04_reliability.ipynb
    """
    r = validate.positive("rate", rate)
    validate.one_of("unit", unit, ("per_gpu_day", "per_1000_node_days"))
    per_node = validate.integer("gpus_per_node", gpus_per_node, minimum=1)
    if unit == "per_gpu_day":
        return HOURS_PER_DAY / r
    return HOURS_PER_DAY * per_node * 1000 / r


def observed_gpu_mtbf_h(interruptions: int, n_gpus: int, hours: float) -> float:
    """Return the per-GPU MTBF implied by ``interruptions`` seen on ``n_gpus`` GPUs in ``hours``.

    ``n_gpus * hours / interruptions`` (GPU-hours per interruption), assuming every GPU ran the
    whole period.

    Parameters
    ----------
    interruptions : int
        Interruptions counted. Whole number >= 1.
    n_gpus : int
        GPUs of the job. Whole number >= 1. [GPUs]
    hours : float
        Observation period. Must be > 0. [h]

    Returns
    -------
    float
        Per-GPU MTBF. [h]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For a count < 1 or not whole, a bad ``n_gpus``, or ``hours`` <= 0 / NaN.

    Examples
    --------
    Llama 3's 54-day snapshot: 419 unexpected interruptions on 16,384 GPUs.

    >>> round(observed_gpu_mtbf_h(419, 16_384, 54 * 24))
    50677

    Used in: notebooks/04_reliability.ipynb
    """
    count = validate.integer("interruptions", interruptions, minimum=1)
    n = _n_gpus(n_gpus)
    return n * validate.positive("hours", hours) / count


def rate_per_1000_node_days(gpu_mtbf_h: float, gpus_per_node: int = GPUS_PER_NODE) -> float:
    """Return the failures per 1,000 node-days that a per-GPU MTBF means.

    Inverse of :func:`gpu_mtbf_h_from_rate` with ``unit="per_1000_node_days"``.

    Parameters
    ----------
    gpu_mtbf_h : float
        Per-GPU MTBF. Must be > 0. [h]
    gpus_per_node : int, default 8
        GPUs per node. Whole number >= 1.

    Returns
    -------
    float
        ``24 * gpus_per_node * 1000 / gpu_mtbf_h``. [failures per 1,000 node-days]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For a bad MTBF or ``gpus_per_node``.

    Used in: notebooks/04_reliability.ipynb
    """
    mtbf = validate.positive("gpu_mtbf_h", gpu_mtbf_h)
    per_node = validate.integer("gpus_per_node", gpus_per_node, minimum=1)
    return HOURS_PER_DAY * per_node * 1000 / mtbf


# -- checkpoint interval --------------------------------------------------------------------
def _cost_and_mtbf(checkpoint_cost: Any, mtbf: Any, *, allow_zero: bool) -> tuple[float, float]:
    m = validate.positive("mtbf", mtbf)
    if allow_zero:
        c = validate.non_negative("checkpoint_cost", checkpoint_cost)
    else:
        c = validate.positive("checkpoint_cost", checkpoint_cost)
    if c >= m:
        raise validate.InputError(
            "checkpoint_cost", "at_most", checkpoint_cost,
            f"checkpoint_cost must be < mtbf ({m:g}), got {checkpoint_cost!r}", limit=m,
        )
    return c, m


def young_interval(checkpoint_cost: float, mtbf: float) -> float:
    """Return Young's first-order optimum checkpoint interval, ``sqrt(2 * delta * M)``.

    Minimises the first-order loss per unit time ``delta/tau + tau/(2M)``: the write overhead
    plus half an interval of rework per failure.

    Parameters
    ----------
    checkpoint_cost : float
        Time to write one checkpoint (delta); the job is blocked meanwhile. Must be > 0 and
        < ``mtbf``. [any time unit]
    mtbf : float
        Mean time between interruptions of the job (M). Must be > 0. [same unit]

    Returns
    -------
    float
        Compute time between checkpoints (tau). [same unit]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        If a value is NaN/inf, ``checkpoint_cost <= 0``, ``mtbf <= 0`` or
        ``checkpoint_cost >= mtbf``.

    References
    ----------
    .. [1] J. W. Young, "A first order approximation to the optimum checkpoint interval",
       Commun. ACM 17(9):530-531, 1974, doi:10.1145/361147.361115.

    Examples
    --------
    >>> young_interval(5, 1_440)
    120.0

    Used in: notebooks/04_reliability.ipynb
    """
    c, m = _cost_and_mtbf(checkpoint_cost, mtbf, allow_zero=False)
    return math.sqrt(2 * c * m)


def daly_interval(checkpoint_cost: float, mtbf: float) -> float:
    """Return Daly's higher-order estimate of the optimum checkpoint interval.

    ``tau = sqrt(2 delta M) [1 + (1/3) sqrt(delta/(2M)) + (1/9) (delta/(2M))] - delta``
    (Daly 2006, eq. 37, the form LLNL SCR implements in ``scr_ckpt_interval.py``; the restart
    time drops out of the optimum). Daly's ``tau = M`` branch for ``delta >= 2M`` is out of
    reach: a checkpoint that costs the MTBF or more is rejected.

    Parameters
    ----------
    checkpoint_cost : float
        Time to write one checkpoint (delta). Must be > 0 and < ``mtbf``. [any time unit]
    mtbf : float
        Mean time between interruptions (M). Must be > 0. [same unit]

    Returns
    -------
    float
        Compute time between checkpoints (tau). [same unit]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        As :func:`young_interval`.

    References
    ----------
    .. [1] J. T. Daly, "A higher order estimate of the optimum checkpoint interval for restart
       dumps", Future Generation Computer Systems 22(3):303-312, 2006,
       doi:10.1016/j.future.2004.11.016. Its figures: delta = 5 min, M = 24 h -> 117 min.

    Examples
    --------
    >>> round(daly_interval(5, 1_440), 2)
    116.69

    Used in: notebooks/04_reliability.ipynb
    """
    c, m = _cost_and_mtbf(checkpoint_cost, mtbf, allow_zero=False)
    x = c / (2 * m)
    return math.sqrt(2 * c * m) * (1 + math.sqrt(x) / 3 + x / 9) - c


def optimal_interval(checkpoint_cost: float, mtbf: float) -> float:
    """Return the exact minimiser of the expected overhead (:func:`overhead`).

    Setting the derivative of Daly's complete model to zero gives, with
    ``eta = (tau + delta) / M``, ``exp(-eta) + eta = 1 + delta/M``, solved by the principal
    branch of the Lambert W function:
    ``tau = M (1 + delta/M + W0(-exp(-1 - delta/M))) - delta``. The restart time drops out.

    Parameters
    ----------
    checkpoint_cost : float
        Time to write one checkpoint (delta). Must be > 0 and < ``mtbf``. [any time unit]
    mtbf : float
        Mean time between interruptions (M). Must be > 0. [same unit]

    Returns
    -------
    float
        Compute time between checkpoints (tau) at the minimum expected overhead. [same unit]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        As :func:`young_interval`.

    References
    ----------
    .. [1] J. T. Daly, FGCS 22(3):303-312, 2006 (the complete model for Poisson failures that
       also strike during writes and restarts).
    .. [2] R. M. Corless et al., "On the Lambert W function", Adv. Comput. Math. 5:329-359,
       1996 (``scipy.special.lambertw``).

    Examples
    --------
    >>> round(optimal_interval(5, 1_440), 3)
    116.69

    Used in: notebooks/04_reliability.ipynb
    """
    c, m = _cost_and_mtbf(checkpoint_cost, mtbf, allow_zero=False)
    a = c / m
    w = float(lambertw(-math.exp(-1 - a), 0).real)
    return m * (1 + a + w) - c


def overhead(interval: float, checkpoint_cost: float, mtbf: float, restart: float = 0.0) -> float:
    """Return the expected overhead of checkpointing every ``interval``: wall time / work - 1.

    Daly's complete model for Poisson interruptions that may also strike during a write or a
    restart: the expected wall time to finish ``T_s`` of work is
    ``T_w = M exp(R/M) (exp((tau + delta)/M) - 1) T_s / tau``; this returns ``T_w/T_s - 1``.
    The curve is convex in ``tau`` with its one minimum at :func:`optimal_interval`. To first
    order it is Young's ``delta/tau + tau/(2M) + R/M``.

    Parameters
    ----------
    interval : float
        Compute time between checkpoints (tau). Must be > 0. [any time unit]
    checkpoint_cost : float
        Blocking time of one checkpoint write (delta). Must be >= 0 and < ``mtbf``. [same unit]
    mtbf : float
        Mean time between interruptions (M). Must be > 0. [same unit]
    restart : float, default 0
        Time from an interruption until the job computes again (R): detection, rescheduling,
        reloading the checkpoint. Must be >= 0. [same unit]

    Returns
    -------
    float
        Expected extra wall time per unit of useful work, >= 0 (0.0958 = 9.58 % extra). The
        job's expected ETTR is ``1 / (1 + overhead)``. [fraction]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        If a value is NaN/inf, ``interval <= 0``, ``mtbf <= 0``, a negative cost or restart,
        or ``checkpoint_cost >= mtbf``.

    References
    ----------
    .. [1] J. T. Daly, FGCS 22(3):303-312, 2006.

    Examples
    --------
    Daly's M = 24 h, delta = 5 min, R = 10 min at its optimum (116.69 min):

    >>> round(overhead(116.69, 5, 1_440, 10), 4)
    0.0958

    Used in: notebooks/04_reliability.ipynb
    """
    tau = validate.positive("interval", interval)
    c, m = _cost_and_mtbf(checkpoint_cost, mtbf, allow_zero=True)
    r = validate.non_negative("restart", restart)
    log_ratio = math.log(m / tau) + r / m + _log_expm1((tau + c) / m)
    return math.exp(log_ratio) - 1 if log_ratio < 700 else math.inf


def _log_expm1(x: float) -> float:
    """log(exp(x) - 1) for x > 0, without overflow."""
    return x + math.log(-math.expm1(-x)) if x > 30 else math.log(math.expm1(x))


def _expm1_minus_x(x: float) -> float:
    """exp(x) - 1 - x, accurate for small x."""
    if abs(x) < 1e-3:
        return x * x / 2 * (1 + x / 3 * (1 + x / 4))
    return math.expm1(x) - x


# -- ETTR -----------------------------------------------------------------------------------
def _job_inputs(
    n_gpus: Any, gpu_mtbf_h: Any, checkpoint_interval_h: Any, checkpoint_write_h: Any,
    restart_h: Any,
) -> tuple[float, float, float, float]:
    """Validate the job's inputs; return (lambda [1/h], tau, delta, R)."""
    mtbf = job_mtbf_h(n_gpus, gpu_mtbf_h)
    tau = validate.positive("checkpoint_interval_h", checkpoint_interval_h)
    delta = validate.non_negative("checkpoint_write_h", checkpoint_write_h)
    restart = validate.non_negative("restart_h", restart_h)
    if delta >= mtbf:
        raise validate.InputError(
            "checkpoint_write_h", "at_most", checkpoint_write_h,
            f"checkpoint_write_h must be < the job MTBF ({mtbf:g} h), got {checkpoint_write_h!r}",
            limit=mtbf,
        )
    return 1 / mtbf, tau, delta, restart


def expected_ettr(
    n_gpus: int,
    gpu_mtbf_h: float,
    checkpoint_interval_h: float,
    checkpoint_write_h: float = 0.0,
    restart_h: float = 0.0,
    method: EttrMethod = "meta",
) -> float:
    """Return a job's expected effective training time ratio (ETTR).

    ETTR = productive time / wall-clock time of the run (Kokolis et al. 2025). Two methods:

    - ``"meta"``: Meta's closed form
      ``(1 - lambda (R + tau/2)) / (1 + delta/tau)``, ``lambda = n_gpus / gpu_mtbf_h``
      (the paper's ``N_nodes r_f``; ``R`` is its u0, ``tau`` its checkpoint interval, ``delta``
      its write time w_cp). A first-order expansion: each interruption costs a restart plus half
      an interval of rework. It turns negative when ``lambda (R + tau/2) > 1``; that is reported
      as 0 (no expected progress). The paper states it within 5 % of its simulations for
      ``1/lambda >= 0.1 day``.
    - ``"exact"``: the exact long-run expectation for Poisson interruptions that strike at any
      moment, also during writes and restarts (renewal argument; Daly 2006's complete model):
      ``lambda tau exp(-lambda R) / (exp(lambda (tau + delta)) - 1)`` = ``1 / (1 + overhead)``.

    The closed form is pessimistic where interruptions are frequent: the exact expected loss
    per interruption is less than half an interval (a failure is more likely early in a long
    segment than the uniform first-order picture assumes, and several may hit one segment).

    Parameters
    ----------
    n_gpus : int
        GPUs of the job. Whole number >= 1. [GPUs]
    gpu_mtbf_h : float
        Per-GPU MTBF. Must be > 0. [h]
    checkpoint_interval_h : float
        Compute time between checkpoints (tau). Must be > 0. [h]
    checkpoint_write_h : float, default 0
        Blocking time of one checkpoint write (delta); 0 for a fully asynchronous save. Must be
        >= 0 and < the job MTBF. [h]
    restart_h : float, default 0
        Time from an interruption until the job computes again (R, Meta's u0). Must be
        >= 0. [h]
    method : {"meta", "exact"}, default "meta"
        Which expectation.

    Returns
    -------
    float
        Expected ETTR. [fraction, 0-1]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For NaN/inf, ``n_gpus`` not a whole number >= 1, ``gpu_mtbf_h <= 0``,
        ``checkpoint_interval_h <= 0``, a negative write or restart time, a write time >= the
        job MTBF, or an unknown method.

    References
    ----------
    .. [1] Kokolis et al., "Revisiting Reliability in Large-Scale Machine Learning Research
       Clusters", HPCA 2025, arXiv 2410.21680 (closed form, as reproduced by two independent
       implementations of the paper; RSC-1 as one 16k-GPU job: E[ETTR] ~ 0.7 at a 60-min
       interval, 0.93 at 5 min, u0 = 5 min).
    .. [2] J. T. Daly, FGCS 22(3):303-312, 2006 (complete model behind ``"exact"``).

    Examples
    --------
    >>> mtbf = gpu_mtbf_h_from_rate(6.50, "per_1000_node_days")   # Meta RSC-1
    >>> round(expected_ettr(16_000, mtbf, 1.0, restart_h=5 / 60), 3)
    0.684
    >>> round(expected_ettr(16_000, mtbf, 1.0, restart_h=5 / 60, method="exact"), 3)
    0.72

    Used in: notebooks/04_reliability.ipynb
    """
    lam, tau, delta, restart = _job_inputs(n_gpus, gpu_mtbf_h, checkpoint_interval_h,
                                           checkpoint_write_h, restart_h)
    validate.one_of("method", method, ("meta", "exact"))
    if method == "meta":
        return max(0.0, 1 - lam * (restart + tau / 2)) / (1 + delta / tau)
    log_ettr = math.log(lam * tau) - lam * restart - _log_expm1(lam * (tau + delta))
    return math.exp(log_ettr)


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


# -- published tables -----------------------------------------------------------------------
def interruption_shares(table: pd.DataFrame, digits: int = 1) -> pd.DataFrame:
    """Check a published table of interruption counts and printed percentages.

    Parameters
    ----------
    table : pandas.DataFrame
        Columns ``interruptions`` (counts, >= 0) and ``printed_pct`` (the percentages as
        printed) [%], plus any others (kept).
    digits : int, default 1
        Decimals the source printed.

    Returns
    -------
    pandas.DataFrame
        The table with ``computed_pct`` = 100 x count / total [%] and ``pct_matches`` (bool:
        ``round(computed_pct, digits) == printed_pct``). ``.attrs`` holds ``total``
        (sum of counts) and ``printed_total_pct`` (sum of printed percentages).

    Raises
    ------
    ValueError
        If a column is missing, or the counts are negative or sum to 0.

    Examples
    --------
    Llama 3 Table 5 (arXiv 2407.21783): 419 interruptions, printed shares summing to 94.9 %, and
    one row that does not match its count (Faulty GPU, 148/419 = 35.3 % printed as 30.1 %).

    Used in: notebooks/04_reliability.ipynb
    """
    for column in ("interruptions", "printed_pct"):
        if column not in table.columns:
            raise validate.InputError(column, "other", None, f"table has no {column!r} column")
    counts = table["interruptions"].astype(float)
    if (counts < 0).any() or counts.sum() <= 0:
        raise validate.InputError("interruptions", "non_negative", counts.min(),
                                  "interruption counts must be >= 0 and sum to more than 0")
    total = float(counts.sum())
    out = table.copy()
    out["computed_pct"] = 100 * counts / total
    scale = 10**digits
    rounded = np.floor(out["computed_pct"] * scale + 0.5) / scale  # half up, as printed
    out["pct_matches"] = np.isclose(rounded, out["printed_pct"].astype(float))
    out.attrs["total"] = total
    out.attrs["printed_total_pct"] = round(float(out["printed_pct"].sum()), 6)
    return out
