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

A package along the seams of the old ``labkit/reliability.py``; this module re-exports its names
(each submodule imported on first use of one of its names):

- :mod:`labkit.reliability.scaling` -- failure scaling: :func:`job_mtbf_h`,
  :func:`expected_interruptions`, :func:`interruption_free_probability`, rate conversions;
- :mod:`labkit.reliability.checkpoint` -- the checkpoint interval: :func:`young_interval`,
  :func:`daly_interval`, :func:`optimal_interval`, :func:`overhead`; ETTR:
  :func:`expected_ettr` (Meta's closed form or the exact expectation);
- :mod:`labkit.reliability.month` -- the worksheet's month: :func:`expected_month` (exact
  long-run ledger) and :func:`simulate_month` (Monte Carlo, vectorised);
- :mod:`labkit.reliability.tables` -- published tables: :func:`interruption_shares` (Llama 3
  Table 5's arithmetic).

Used in: notebooks/04_reliability.ipynb
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from labkit.reliability.checkpoint import (
        EttrMethod,
        daly_interval,
        expected_ettr,
        optimal_interval,
        overhead,
        young_interval,
    )
    from labkit.reliability.month import (
        LEDGER_COLUMNS,
        MAX_EVENTS,
        MAX_TRIALS,
        expected_month,
        month_worksheet,
        simulate_month,
    )
    from labkit.reliability.scaling import (
        GPUS_PER_NODE,
        HOURS_PER_DAY,
        RateUnit,
        expected_interruptions,
        gpu_mtbf_h_from_rate,
        interruption_free_probability,
        job_mtbf_h,
        observed_gpu_mtbf_h,
        rate_per_1000_node_days,
    )
    from labkit.reliability.tables import (
        interruption_shares,
    )

__all__ = [
    "GPUS_PER_NODE",
    "HOURS_PER_DAY",
    "LEDGER_COLUMNS",
    "MAX_EVENTS",
    "MAX_TRIALS",
    "EttrMethod",
    "RateUnit",
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

#: Each public name's submodule: imported on first use (PEP 562), so that a lesson that needs only
#: the failure scaling (``job_mtbf_h``) does not import scipy (``checkpoint``'s Lambert W).
_SUBMODULE = {
    "EttrMethod": "checkpoint",
    "daly_interval": "checkpoint",
    "expected_ettr": "checkpoint",
    "optimal_interval": "checkpoint",
    "overhead": "checkpoint",
    "young_interval": "checkpoint",
    "LEDGER_COLUMNS": "month",
    "MAX_EVENTS": "month",
    "MAX_TRIALS": "month",
    "expected_month": "month",
    "month_worksheet": "month",
    "simulate_month": "month",
    "GPUS_PER_NODE": "scaling",
    "HOURS_PER_DAY": "scaling",
    "RateUnit": "scaling",
    "expected_interruptions": "scaling",
    "gpu_mtbf_h_from_rate": "scaling",
    "interruption_free_probability": "scaling",
    "job_mtbf_h": "scaling",
    "observed_gpu_mtbf_h": "scaling",
    "rate_per_1000_node_days": "scaling",
    "interruption_shares": "tables",
}
_SUBMODULES = frozenset(_SUBMODULE.values())


def __getattr__(name: str) -> Any:
    if name not in _SUBMODULES and name not in _SUBMODULE:
        raise AttributeError(f"module 'labkit.reliability' has no attribute {name!r}")
    # plain import statements (not importlib): the pure layer's rule. ``import a.b`` binds the
    # submodule as an attribute of this package, so the next lookup of it skips this function;
    # only the submodule asked for is imported (``checkpoint`` and ``month`` bring scipy)
    where = name if name in _SUBMODULES else _SUBMODULE[name]
    if where == "checkpoint":
        import labkit.reliability.checkpoint
    elif where == "month":
        import labkit.reliability.month
    elif where == "scaling":
        import labkit.reliability.scaling
    else:
        import labkit.reliability.tables
    module = getattr(labkit.reliability, where)
    return module if where == name else getattr(module, name)
