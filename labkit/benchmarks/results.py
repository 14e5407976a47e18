"""One MLPerf Inference result (:class:`BenchmarkResult`) and the vocabulary it is read in.

Pure. MLPerf Inference rules v5.0.

Used in: notebooks/06_benchmarks.ipynb
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from labkit import validate

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


