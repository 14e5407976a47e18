"""Failure scaling: a job's MTBF on N GPUs, expected interruptions, the chance of none, rates.

Pure; hours. The model and its sources are in :mod:`labkit.reliability`.

Used in: notebooks/04_reliability.ipynb
"""

from __future__ import annotations

import math
from typing import Any, Literal

from labkit import validate

HOURS_PER_DAY = 24.0
#: GPUs per server (node) in the clusters the sources describe: DGX A100 (Meta RSC), 8 x H100
#: per server (Llama 3 §3.3.1), 8-GPU servers (InfiniteHBD trace).
GPUS_PER_NODE = 8

RateUnit = Literal["per_gpu_day", "per_1000_node_days"]


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


