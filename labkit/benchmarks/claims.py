"""A vendor's "N x faster", normalized step by step against a baseline, and the checklist.

Pure. Shared check case 7; MLPerf Inference rules v5.0.

Used in: notebooks/06_benchmarks.ipynb
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import pandas as pd

from labkit import validate
from labkit.benchmarks.results import PRECISION_BITS, BenchmarkResult


class Step(StrEnum):
    """The normalization steps, in order.

    Used in: notebooks/06_benchmarks.ipynb
    """

    PER_SYSTEM = "per_system"
    PER_ACCELERATOR = "per_accelerator"
    PRECISION = "precision"
    SPARSITY = "sparsity"
    PER_WATT = "per_watt"


@dataclass(frozen=True)
class NormalizationStep:
    """One visible step of :func:`normalize_claim`.

    Attributes
    ----------
    key : Step
    factor : float
        What this step multiplied the ratio by (1.0 when not applied). [unitless]
    ratio : float
        The claimant / baseline ratio after this step. [unitless]
    applied : bool
        Whether the step changed anything (False: not needed, or not possible).
    detail : mapping
        The numbers behind the step, for the lesson's explanation.

    Used in: notebooks/06_benchmarks.ipynb
    """

    key: Step
    factor: float
    ratio: float
    applied: bool
    detail: Mapping[str, Any]


@dataclass(frozen=True)
class ClaimNormalization:
    """A claim taken apart: the headline ratio and each adjustment (see :func:`normalize_claim`).

    Used in: notebooks/06_benchmarks.ipynb
    """

    claimant: BenchmarkResult
    baseline: BenchmarkResult
    steps: tuple[NormalizationStep, ...]

    @property
    def ratio(self) -> float:
        """The ratio after the last step. [unitless]"""
        return self.steps[-1].ratio

    def step(self, key: str) -> NormalizationStep:
        """Return the step named ``key`` (a :class:`Step` value)."""
        for s in self.steps:
            if s.key == key:
                return s
        raise KeyError(key)

    def table(self) -> pd.DataFrame:
        """Return the steps as a frame: ``step``, ``factor``, ``ratio``, ``applied``."""
        return pd.DataFrame([(s.key.value, s.factor, s.ratio, s.applied) for s in self.steps],
                            columns=["step", "factor", "ratio", "applied"])


def normalize_claim(
    claimant: BenchmarkResult,
    baseline: BenchmarkResult,
    *,
    precision_gain: float = 2.0,
    sparsity_gain: float = 2.0,
    per_watt: bool = True,
) -> ClaimNormalization:
    """Take a "X times faster" claim apart, one visible adjustment at a time.

    Steps (each a :class:`NormalizationStep`; a step that is not needed or not possible keeps
    the ratio and says why):

    1. ``per_system`` — the published results, system against system.
    2. ``per_accelerator`` — divided by the accelerator counts (a 72-GPU rack is one "system").
    3. ``precision`` — the claimant's lower-precision advantage removed: the ratio is divided
       by ``precision_gain`` per halving of bits (FP8 -> FP4 is one halving); multiplied when
       the baseline ran at the lower precision.
    4. ``sparsity`` — divided by ``sparsity_gain`` if only the claimant used 2:4 sparsity
       (multiplied if only the baseline did).
    5. ``per_watt`` — multiplied by (baseline watts / claimant watts) per accelerator: measured
       system power when both results state it (tokens per joule), else rated power (TDP),
       else not possible.

    Parameters
    ----------
    claimant, baseline : BenchmarkResult
        The result making the claim and the one it is compared with.
    precision_gain : float, default 2.0
        Speed-up from one halving of bits, >= 1. 2.0 is the peak-FLOPS worst case; MLPerf
        v5.1 measured ~1.54 on B200 (FP4 closed 101,527 vs FP8 open 65,770 tokens/s,
        Llama2-70B vs Llama 3.1 70B substituted: indicative). 1.0 skips the step.
    sparsity_gain : float, default 2.0
        Speed-up from 2:4 sparsity, >= 1 (peak 2.0; NVIDIA's open-division H200 "Sparse"
        run gained ~1.17, MLPerf v4.1). 1.0 skips the step.
    per_watt : bool, default True
        Whether to end with the per-watt step.

    Returns
    -------
    ClaimNormalization

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        If a gain is not a finite number >= 1.

    References
    ----------
    .. [1] MLCommons, MLPerf Inference v4.1 (2024-08-28), v5.0 (2025-04-02), v5.1 (2025-09-09)
       results repositories, ``summary_results.json`` / ``mlperf_log_summary.txt``.

    Used in: notebooks/06_benchmarks.ipynb
    """
    p_gain = validate.at_least("precision_gain", precision_gain, 1.0)
    s_gain = validate.at_least("sparsity_gain", sparsity_gain, 1.0)
    a, b = claimant, baseline
    steps: list[NormalizationStep] = []

    ratio = a.tokens_per_s / b.tokens_per_s
    steps.append(NormalizationStep(Step.PER_SYSTEM, ratio, ratio, True, {
        "claimant_tokens_per_s": a.tokens_per_s, "baseline_tokens_per_s": b.tokens_per_s}))

    factor = b.accelerators / a.accelerators
    ratio *= factor
    steps.append(NormalizationStep(Step.PER_ACCELERATOR, factor, ratio, factor != 1.0, {
        "claimant_accelerators": a.accelerators, "baseline_accelerators": b.accelerators,
        "claimant_per_accelerator": a.tokens_per_s_per_accelerator,
        "baseline_per_accelerator": b.tokens_per_s_per_accelerator}))

    halvings = math.log2(PRECISION_BITS[b.precision] / PRECISION_BITS[a.precision])
    factor = p_gain ** (-halvings)
    ratio *= factor
    steps.append(NormalizationStep(Step.PRECISION, factor, ratio, factor != 1.0, {
        "claimant_precision": a.precision, "baseline_precision": b.precision,
        "halvings": halvings, "gain": p_gain}))

    factor = 1.0
    if a.sparsity and not b.sparsity:
        factor = 1.0 / s_gain
    elif b.sparsity and not a.sparsity:
        factor = s_gain
    ratio *= factor
    steps.append(NormalizationStep(Step.SPARSITY, factor, ratio, factor != 1.0, {
        "claimant_sparsity": a.sparsity, "baseline_sparsity": b.sparsity, "gain": s_gain}))

    if per_watt:
        wa, wb = a.watts_per_accelerator(), b.watts_per_accelerator()
        basis = None
        factor = 1.0
        if a.power_w_system is not None and b.power_w_system is not None:
            basis = "measured"
        elif a.tdp_w_per_accelerator is not None and b.tdp_w_per_accelerator is not None:
            basis = "tdp"
            wa = (a.tdp_w_per_accelerator, "tdp")
            wb = (b.tdp_w_per_accelerator, "tdp")
        if basis is not None and wa is not None and wb is not None:
            factor = wb[0] / wa[0]
        ratio *= factor
        steps.append(NormalizationStep(Step.PER_WATT, factor, ratio, basis is not None, {
            "basis": basis, "claimant_w_per_accelerator": wa[0] if wa else None,
            "baseline_w_per_accelerator": wb[0] if wb else None}))
    return ClaimNormalization(a, b, tuple(steps))


@dataclass(frozen=True)
class ChecklistItem:
    """One question of the benchmark checklist, answered for a pair of results.

    ``status`` is ``"ok"`` (comparable as stated), ``"warn"`` (the figures differ in a way
    that moves the ratio) or ``"unknown"`` (the data does not say); ``values`` holds what the
    lesson shows.

    Used in: notebooks/06_benchmarks.ipynb
    """

    key: str
    status: str
    values: Mapping[str, Any]


CHECKLIST = ("baseline", "precision", "sparsity", "model", "chip_vs_system", "slo", "power",
             "division", "availability")
"""The checklist questions a pair of results can answer (course notes "벤치마크 읽는 법";
demand and other bottlenecks are checked with :func:`rack_claim_check`)."""


def benchmark_checklist(claimant: BenchmarkResult,
                        baseline: BenchmarkResult) -> tuple[ChecklistItem, ...]:
    """Answer the checklist for a claim "claimant is X times baseline".

    Returns
    -------
    tuple of ChecklistItem
        One per :data:`CHECKLIST` key, in order: the same round (software moves results: the
        same DGX-H100 gained 27.7 % from v4.1 to v5.0), the same precision, no sparsity, the same
        benchmark, accelerator counts, the same scenario (SLO), power stated, closed division,
        available hardware.

    Used in: notebooks/06_benchmarks.ipynb
    """
    a, b = claimant, baseline

    def item(key: str, ok: bool | None, **values: Any) -> ChecklistItem:
        status = "unknown" if ok is None else ("ok" if ok else "warn")
        return ChecklistItem(key, status, {"claimant": None, "baseline": None, **values})

    both_power = a.power_w_system is not None and b.power_w_system is not None
    both_tdp = a.tdp_w_per_accelerator is not None and b.tdp_w_per_accelerator is not None
    return (
        item("baseline", a.version == b.version if a.version and b.version else None,
             claimant=a.version, baseline=b.version),
        item("precision", a.precision == b.precision, claimant=a.precision,
             baseline=b.precision),
        item("sparsity", not (a.sparsity or b.sparsity), claimant=a.sparsity,
             baseline=b.sparsity),
        item("model", a.benchmark == b.benchmark if a.benchmark and b.benchmark else None,
             claimant=a.benchmark, baseline=b.benchmark),
        item("chip_vs_system", a.accelerators == b.accelerators, claimant=a.accelerators,
             baseline=b.accelerators),
        item("slo", a.scenario == b.scenario, claimant=a.scenario, baseline=b.scenario),
        item("power", True if both_power else (None if not both_tdp else False),
             claimant=a.power_w_system, baseline=b.power_w_system),
        item("division", a.division == b.division == "closed", claimant=a.division,
             baseline=b.division),
        item("availability", a.availability == b.availability == "available",
             claimant=a.availability, baseline=b.availability),
    )


