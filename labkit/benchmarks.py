"""Reading benchmark claims (lesson 06): MLPerf results, claim normalization, racks.

Pure: numbers in, numbers out; no widgets, no I/O. A vendor's "N x faster" is normalized step by
step (same round, same precision, no sparsity, per chip, same latency class) against a baseline
result, checked against a checklist, and turned into servers and racks for a demand
(shared check case 7; MLPerf Inference rules v5.0).

Used in: notebooks/06_benchmarks.ipynb
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Any, NamedTuple

import pandas as pd

from labkit import validate

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

PRECISION_BITS: Mapping[str, int] = MappingProxyType(
    {"FP4": 4, "FP6": 6, "FP8": 8, "INT8": 8, "FP16": 16, "BF16": 16, "FP32": 32})
"""Bits per weight/activation of each number format (peak math rate doubles per halving)."""
SCENARIOS = ("Offline", "Server", "Interactive")
"""MLPerf Inference LLM scenarios: no latency limit; TTFT <= 2 s and TPOT <= 200 ms;
TTFT <= 450 ms and TPOT <= 40 ms (Llama2-70B, MLPerf Inference v5.0 rules)."""
DIVISIONS = ("closed", "open")


def _optional_positive(field: str, value: Any) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return validate.positive(field, value)


def _required(field: str, record: Mapping[str, Any]) -> Any:
    value = record.get(field)
    if value is None or (isinstance(value, float) and math.isnan(value)) or value == "":
        raise validate.InputError(field, "required", value, f"{field} is required, got {value!r}")
    return value


@dataclass(frozen=True)
class BenchmarkResult:
    """One published inference result (an MLPerf row, or a vendor's claim).

    Parameters
    ----------
    system : str
        Name of the system as submitted. Non-empty.
    accelerator : str
        Accelerator name (``"H100-SXM-80GB"``). Non-empty.
    accelerators : int
        Accelerators the result was measured on (all nodes), >= 1. [count]
    tokens_per_s : float
        The result, output tokens per second for the whole system, > 0. [tokens/s]
    precision : str
        Number format of the run, one of :data:`PRECISION_BITS`.
    sparsity : bool, default False
        Whether structured (2:4) sparsity was used.
    scenario : str, default "Offline"
        One of :data:`SCENARIOS`.
    benchmark : str, default ""
        Benchmark / model (``"llama2-70b-99"``).
    division : str, default "closed"
        ``"closed"`` (same model and accuracy) or ``"open"`` (model may be changed).
    version : str, default ""
        Round (``"v5.0"``).
    availability : str, default "available"
        ``"available"``, ``"preview"`` or ``"rdi"``.
    power_w_system : float or None, default None
        Measured whole-system power (MLPerf Power), > 0. [W]
    tdp_w_per_accelerator : float or None, default None
        Rated accelerator power, > 0 (H100 SXM 700 W, B200 1,000 W). [W]
    submitter : str, default ""

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        Naming the field, for an empty name, a bad count, result, precision, scenario, division
        or power.

    Used in: notebooks/06_benchmarks.ipynb
    """

    system: str
    accelerator: str
    accelerators: int
    tokens_per_s: float
    precision: str
    sparsity: bool = False
    scenario: str = "Offline"
    benchmark: str = ""
    division: str = "closed"
    version: str = ""
    availability: str = "available"
    power_w_system: float | None = None
    tdp_w_per_accelerator: float | None = None
    submitter: str = ""

    def __post_init__(self) -> None:
        for name in ("system", "accelerator"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise validate.InputError(name, "required", value, f"{name} must be a name")
        object.__setattr__(self, "accelerators",
                           validate.integer("accelerators", self.accelerators, minimum=1))
        object.__setattr__(self, "tokens_per_s",
                           validate.positive("tokens_per_s", self.tokens_per_s))
        validate.one_of("precision", self.precision, PRECISION_BITS)
        validate.one_of("scenario", self.scenario, SCENARIOS)
        validate.one_of("division", self.division, DIVISIONS)
        if not isinstance(self.sparsity, bool):
            raise validate.InputError("sparsity", "choice", self.sparsity,
                                      "sparsity must be True or False", limit=(True, False))
        object.__setattr__(self, "power_w_system",
                           _optional_positive("power_w_system", self.power_w_system))
        object.__setattr__(self, "tdp_w_per_accelerator",
                           _optional_positive("tdp_w_per_accelerator",
                                              self.tdp_w_per_accelerator))

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> BenchmarkResult:
        """Build a result from one row of the MLPerf table (``data/economics/mlperf_...csv``).

        Uses the columns ``system``, ``accelerator``, ``total_accel``, ``result``,
        ``precision`` (required) and ``sparsity``, ``scenario``, ``benchmark``, ``division``,
        ``version``, ``availability``, ``power_w_system``, ``tdp_w``, ``submitter``.

        Raises
        ------
        labkit.validate.InputError (a ValueError)
            Rule ``required`` naming the column when a required field is missing or empty;
            otherwise as the constructor.
        """
        return cls(
            system=str(_required("system", record)),
            accelerator=str(_required("accelerator", record)),
            accelerators=_required("total_accel", record),
            tokens_per_s=_required("result", record),
            precision=str(_required("precision", record)),
            sparsity=bool(record.get("sparsity", False)),
            scenario=str(record.get("scenario") or "Offline"),
            benchmark=str(record.get("benchmark") or ""),
            division=str(record.get("division") or "closed"),
            version=str(record.get("version") or ""),
            availability=str(record.get("availability") or "available"),
            power_w_system=record.get("power_w_system"),
            tdp_w_per_accelerator=record.get("tdp_w"),
            submitter=str(record.get("submitter") or ""),
        )

    @property
    def tokens_per_s_per_accelerator(self) -> float:
        """The result divided by the accelerator count. [tokens/s per accelerator]"""
        return self.tokens_per_s / self.accelerators

    @property
    def tokens_per_joule(self) -> float | None:
        """Tokens per joule of measured system power, or None when power was not measured."""
        if self.power_w_system is None:
            return None
        return self.tokens_per_s / self.power_w_system

    def watts_per_accelerator(self) -> tuple[float, str] | None:
        """Return (watts per accelerator, basis): measured system power / count, else TDP."""
        if self.power_w_system is not None:
            return self.power_w_system / self.accelerators, "measured"
        if self.tdp_w_per_accelerator is not None:
            return self.tdp_w_per_accelerator, "tdp"
        return None


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


# -- "3x faster = a third of the racks" ---------------------------------------------------------

def _ceil(x: float) -> int:
    """Ceiling that treats float noise next to a whole number (3.0000000001) as that number."""
    n = round(x)
    return int(n) if abs(x - n) <= 1e-9 * max(1.0, abs(x)) else math.ceil(x)


def _floor(x: float) -> int:
    """Floor with the same tolerance as :func:`_ceil`."""
    n = round(x)
    return int(n) if abs(x - n) <= 1e-9 * max(1.0, abs(x)) else math.floor(x)


class RackPlan(NamedTuple):
    """Servers and racks for a demand (see :func:`servers_and_racks`).

    Used in: notebooks/06_benchmarks.ipynb
    """

    servers: int
    racks: int
    provisioned_kw: float


def servers_and_racks(demand_tokens_per_s: float, tokens_per_s_per_server: float,
                      server_kw: float, rack_kw: float) -> RackPlan:
    """Return the servers and racks a demand needs under a rack power limit.

    ``servers = ceil(demand / throughput)``; a rack holds ``floor(rack_kw / server_kw)``
    servers; ``racks = ceil(servers / per rack)``; provisioned power = servers x server_kw.

    Parameters
    ----------
    demand_tokens_per_s : float
        Peak demand to serve, >= 0. [tokens/s]
    tokens_per_s_per_server : float
        What one server sustains on this workload, > 0. [tokens/s]
    server_kw : float
        One server's maximum power, > 0 and <= ``rack_kw``. [kW]
    rack_kw : float
        Power (and cooling) a rack can supply, > 0 (enterprise average < 8-10 kW; air-cooled
        H100/H200 racks 20-40 kW; Uptime Institute survey 2024). [kW]

    Returns
    -------
    RackPlan
        (servers, racks, provisioned kW); (0, 0, 0.0) for no demand.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For NaN/inf, non-numbers, negative demand, throughput or power <= 0, or a server that
        needs more power than a rack supplies.

    Used in: notebooks/06_benchmarks.ipynb
    """
    demand = validate.non_negative("demand_tokens_per_s", demand_tokens_per_s)
    tps = validate.positive("tokens_per_s_per_server", tokens_per_s_per_server)
    rack = validate.positive("rack_kw", rack_kw)
    kw = validate.at_most("server_kw", validate.positive("server_kw", server_kw), rack,
                          "rack_kw")
    servers = max(_ceil(demand / tps), 1) if demand > 0 else 0
    per_rack = _floor(rack / kw)
    racks = math.ceil(servers / per_rack)
    return RackPlan(servers, racks, servers * kw)


@dataclass(frozen=True)
class RackCondition:
    """One of the four conditions of "3x faster = a third of the racks", evaluated.

    Used in: notebooks/06_benchmarks.ipynb
    """

    key: str
    ok: bool
    values: Mapping[str, Any]


@dataclass(frozen=True)
class RackClaimCheck:
    """The result of :func:`rack_claim_check`.

    Used in: notebooks/06_benchmarks.ipynb
    """

    old: RackPlan
    new: RackPlan
    claimed_speedup: float
    effective_speedup: float
    target_racks: int
    conditions: tuple[RackCondition, ...]

    @property
    def rack_ratio(self) -> float:
        """New racks / old racks (nan without demand). [unitless]"""
        return self.new.racks / self.old.racks if self.old.racks else math.nan

    @property
    def verdict(self) -> str:
        """``"holds"`` (a third of the racks, all four conditions met), ``"partly"`` (fewer
        racks, but not the claimed cut or not every condition) or ``"fails"`` (no fewer racks).
        """
        if self.new.racks <= self.target_racks and all(c.ok for c in self.conditions):
            return "holds"
        if self.new.racks < self.old.racks:
            return "partly"
        return "fails"


RACK_CONDITIONS = ("workload", "power", "demand", "bottleneck")
"""The four conditions (course notes, "3배 성능 = 랙 수 1/3이 성립하려면")."""


def rack_claim_check(
    demand_tokens_per_s: float,
    old_tokens_per_s_per_server: float,
    old_server_kw: float,
    new_server_kw: float,
    rack_kw: float,
    *,
    claimed_speedup: float = 3.0,
    workload_speedup: float | None = None,
    feed_limit_tokens_per_s_per_server: float | None = None,
    tolerance: float = 0.05,
) -> RackClaimCheck:
    """Check "N times faster, so 1/N of the racks" for a demand, condition by condition.

    Conditions (:data:`RACK_CONDITIONS`):

    1. ``workload`` — the speed-up holds on my workload: ``workload_speedup >= claimed x
       (1 - tolerance)``;
    2. ``power`` — server (hence rack) power did not grow: ``new_kw <= old_kw x (1 +
       tolerance)``; otherwise fewer servers fit per rack and energy per token falls less;
    3. ``demand`` — there is demand to fill it: the old fleet has at least ``claimed_speedup``
       servers (one box stays one box, whatever its speed);
    4. ``bottleneck`` — storage, network or host can feed the faster server: its throughput
       ``old x workload_speedup`` is at most ``feed_limit_tokens_per_s_per_server``.

    The new server's throughput is ``old x workload_speedup``, capped at the feed limit.

    Parameters
    ----------
    demand_tokens_per_s : float
        Peak demand, >= 0. [tokens/s]
    old_tokens_per_s_per_server, old_server_kw : float
        Today's server: throughput (> 0) [tokens/s] and power (> 0) [kW].
    new_server_kw : float
        The faster server's power, > 0. [kW]
    rack_kw : float
        Rack power limit, > 0, at least each server's power. [kW]
    claimed_speedup : float, default 3.0
        The advertised speed-up, >= 1. [unitless]
    workload_speedup : float, optional
        The speed-up measured on my workload, > 0; defaults to the claim. [unitless]
    feed_limit_tokens_per_s_per_server : float, optional
        Most tokens/s the rest of the system can feed one server, > 0; None = no limit.
        [tokens/s]
    tolerance : float, default 0.05
        Slack for conditions 1 and 2, in [0, 1). [fraction]

    Returns
    -------
    RackClaimCheck
        Old and new :class:`RackPlan`, the racks the claim promises (``ceil(old / N)``), the
        conditions and a verdict.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        Naming the field, for any bad value (see :func:`servers_and_racks`).

    Used in: notebooks/06_benchmarks.ipynb
    """
    claimed = validate.at_least("claimed_speedup", claimed_speedup, 1.0)
    workload = (claimed if workload_speedup is None
                else validate.positive("workload_speedup", workload_speedup))
    tol = validate.finite("tolerance", tolerance)
    if not 0 <= tol < 1:
        raise validate.InputError("tolerance", "fraction", tolerance,
                                  f"tolerance must be in [0, 1), got {tolerance!r}",
                                  limit="[0, 1)")
    old_tps = validate.positive("old_tokens_per_s_per_server", old_tokens_per_s_per_server)
    rack = validate.positive("rack_kw", rack_kw)
    for name, value in (("old_server_kw", old_server_kw), ("new_server_kw", new_server_kw)):
        validate.at_most(name, validate.positive(name, value), rack, "rack_kw")
    feed = (None if feed_limit_tokens_per_s_per_server is None
            else validate.positive("feed_limit_tokens_per_s_per_server",
                                   feed_limit_tokens_per_s_per_server))
    wanted_tps = old_tps * workload
    new_tps = min(wanted_tps, feed) if feed is not None else wanted_tps
    old = servers_and_racks(demand_tokens_per_s, old_tps, old_server_kw, rack_kw)
    new = servers_and_racks(demand_tokens_per_s, new_tps, new_server_kw, rack_kw)
    old_kw = validate.positive("old_server_kw", old_server_kw)
    new_kw = validate.positive("new_server_kw", new_server_kw)
    per_rack_old = _floor(rack_kw / old_kw)
    per_rack_new = _floor(rack_kw / new_kw)
    power_ratio = new_kw / old_kw
    effective = new_tps / old_tps
    demand = validate.non_negative("demand_tokens_per_s", demand_tokens_per_s)
    conditions = (
        RackCondition("workload", workload >= claimed * (1 - tol),
                      {"claimed": claimed, "workload": workload}),
        RackCondition("power", new_kw <= old_kw * (1 + tol),
                      {"old_kw": old_kw, "new_kw": new_kw, "power_ratio": power_ratio,
                       "tokens_per_kw_gain": effective / power_ratio,
                       "per_rack_old": per_rack_old, "per_rack_new": per_rack_new}),
        RackCondition("demand", old.servers >= claimed,
                      {"old_servers": old.servers, "new_servers": new.servers,
                       "claimed": claimed,
                       "new_utilization": (demand / (new.servers * new_tps)
                                           if new.servers else 0.0)}),
        RackCondition("bottleneck", feed is None or wanted_tps <= feed,
                      {"wanted_tokens_per_s": wanted_tps, "feed_limit": feed,
                       "effective_tokens_per_s": new_tps}),
    )
    return RackClaimCheck(old, new, claimed, effective, _ceil(old.racks / claimed),
                          conditions)
