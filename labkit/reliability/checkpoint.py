"""The checkpoint interval (Young, Daly, the exact optimum), its overhead, and ETTR.

Pure; the interval formulas work in any one time unit. Sources in each function.

Used in: notebooks/04_reliability.ipynb
"""

from __future__ import annotations

import math
from typing import Any, Literal

from scipy.special import lambertw

from labkit import validate
from labkit.reliability.scaling import job_mtbf_h

EttrMethod = Literal["meta", "exact"]
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


