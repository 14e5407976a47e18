"""Reading benchmark claims (lesson 06): MLPerf results, claim normalization, racks.

Pure: numbers in, numbers out; no widgets, no I/O. A vendor's "N x faster" is normalized step by
step (same round, same precision, no sparsity, per chip, same latency class) against a baseline
result, checked against a checklist, and turned into servers and racks for a demand
(shared check case 7; MLPerf Inference rules v5.0).

A package along the seams of the old ``labkit/benchmarks.py``; this module re-exports its names:

- :mod:`labkit.benchmarks.results` -- :class:`BenchmarkResult` (one MLPerf row) and the
  vocabulary (precisions, scenarios, divisions);
- :mod:`labkit.benchmarks.claims` -- :func:`normalize_claim` and :func:`benchmark_checklist`;
- :mod:`labkit.benchmarks.racks` -- :func:`servers_and_racks` and :func:`rack_claim_check`.

Used in: notebooks/06_benchmarks.ipynb
"""

from __future__ import annotations

from labkit.benchmarks.claims import (
    CHECKLIST,
    ChecklistItem,
    ClaimNormalization,
    NormalizationStep,
    Step,
    benchmark_checklist,
    normalize_claim,
)
from labkit.benchmarks.racks import (
    RACK_CONDITIONS,
    RackClaimCheck,
    RackCondition,
    RackPlan,
    rack_claim_check,
    servers_and_racks,
)
from labkit.benchmarks.results import (
    DIVISIONS,
    PRECISION_BITS,
    SCENARIOS,
    BenchmarkResult,
)

__all__ = [
    "CHECKLIST",
    "DIVISIONS",
    "PRECISION_BITS",
    "RACK_CONDITIONS",
    "SCENARIOS",
    "BenchmarkResult",
    "ChecklistItem",
    "ClaimNormalization",
    "NormalizationStep",
    "RackClaimCheck",
    "RackCondition",
    "RackPlan",
    "Step",
    "benchmark_checklist",
    "normalize_claim",
    "rack_claim_check",
    "servers_and_racks",
]
