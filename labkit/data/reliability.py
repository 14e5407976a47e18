"""Loaders for lesson 04's data (``data/reliability/``) and for the raw InfiniteHBD fault trace.

Shipped files (each with ``source`` and ``as_of``):

- ``llama3_interruptions.csv`` — Llama 3 Table 5 (root causes, counts, printed %);
- ``failure_rates.csv`` — failures per 1,000 node-days, source by source;
- ``meta_mttf.csv`` — Meta RSC-1's MTTF by job size (measured and projected);
- ``daly_intervals.csv`` — Daly 2006's published optimum intervals;
- ``stepfun_fault_rates.csv``, ``stepfun_repair_days.csv``, ``stepfun_interarrival.csv`` —
  tables derived from StepFun's InfiniteHBD fault trace (Apache-2.0) by
  ``python -m labkit._dev.reliability_data``; the trace itself is not shipped;
- ``month_model.yaml`` — the defaults of the Monte Carlo month.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

import pandas as pd
from pydantic import Field

from labkit import fault_trace
from labkit.data import DataError, data_dir, load_csv, load_document
from labkit.data.schema import (
    Document,
    NonNegative,
    NonNegativeInt,
    Positive,
    PositiveInt,
    Row,
    Text,
)
from labkit.validate import InputError

__all__ = [
    "STEPFUN_TABLES",
    "DalyRow",
    "FailureRateRow",
    "Llama3Row",
    "MonthModel",
    "MonthModelFile",
    "MttfRow",
    "StepfunFaultRateRow",
    "StepfunRepairRow",
    "StepfunStatisticRow",
    "derive_stepfun_tables",
    "find_stepfun_trace",
    "load_daly_intervals",
    "load_failure_rates",
    "load_llama3_interruptions",
    "load_meta_mttf",
    "load_month_model",
    "load_stepfun_table",
    "read_stepfun_trace",
]

DIR = "reliability"



class Llama3Row(Row):
    """A row of ``llama3_interruptions.csv``: Llama 3 Table 5 (arXiv 2407.21783)."""

    component: Text
    category: Literal["GPU", "Dependency", "Network", "Unplanned Maintenance", "Host", "Unknown"]
    interruptions: NonNegativeInt
    printed_pct: NonNegative


class FailureRateRow(Row):
    """A row of ``failure_rates.csv``: failures per 1,000 node-days from one source."""

    cluster: Text
    hardware: Text
    period: Text
    counted: Text
    rate_per_1000_node_days: NonNegative
    kind: Literal["published", "derived", "measured", "anecdotal"]
    note: Text | None = None


class MttfRow(Row):
    """A row of ``meta_mttf.csv``: Meta RSC-1's MTTF [h] at one job size (arXiv 2410.21680)."""

    n_gpus: PositiveInt
    mttf_h: NonNegative
    kind: Literal["measured", "projected"]


class DalyRow(Row):
    """A row of ``daly_intervals.csv``: one of Daly 2006's published optimum intervals [min]."""

    checkpoint_cost_min: NonNegative
    mtbf_min: NonNegative
    restart_min: NonNegative
    published_optimum_min: NonNegative


class StepfunFaultRateRow(Row):
    """A row of ``stepfun_fault_rates.csv`` (derived from the InfiniteHBD trace)."""

    level: Text
    class_: Text = Field(alias="class")
    fault_starts: NonNegativeInt
    rate_per_1000_node_days: NonNegative


class StepfunRepairRow(Row):
    """A row of ``stepfun_repair_days.csv`` (derived from the InfiniteHBD trace) [d]."""

    group: Text
    faults: NonNegativeInt
    median_days: NonNegative
    mean_days: NonNegative
    p90_days: NonNegative
    max_days: NonNegative
    zero_length: NonNegativeInt


class StepfunStatisticRow(Row):
    """A row of ``stepfun_interarrival.csv`` (derived from the InfiniteHBD trace)."""

    statistic: Text
    value: float
    unit: Text


LLAMA3_CATEGORIES: tuple[str, ...] = get_args(Llama3Row.model_fields["category"].annotation)
RATE_KINDS: tuple[str, ...] = get_args(FailureRateRow.model_fields["kind"].annotation)

#: The derived InfiniteHBD tables: file stem -> row schema.
STEPFUN_TABLES: dict[str, type[Row]] = {
    "stepfun_fault_rates": StepfunFaultRateRow,
    "stepfun_repair_days": StepfunRepairRow,
    "stepfun_interarrival": StepfunStatisticRow,
}


class MonthModelFile(Document):
    """``month_model.yaml``: the defaults of the Monte Carlo month (checked by the model too)."""

    n_gpus: PositiveInt
    hours: Positive
    maintenance_h: NonNegative
    gpu_mtbf_h: Positive
    checkpoint_interval_h: Positive
    checkpoint_write_h: NonNegative
    restart_h: NonNegative
    straggler_slowdown: Positive
    trials: PositiveInt
    seed: NonNegativeInt


def load_llama3_interruptions() -> pd.DataFrame:
    """Load Llama 3 Table 5: ``component``, ``category``, ``interruptions``, ``printed_pct``.

    Raises
    ------
    labkit.data.DataError
        Naming the file and line for a bad row (unknown category, negative count, ...).
    """
    return load_csv(f"{DIR}/llama3_interruptions.csv", Llama3Row)


def load_failure_rates() -> pd.DataFrame:
    """Load the failure rates per 1,000 node-days, one row per source (with ``kind``)."""
    return load_csv(f"{DIR}/failure_rates.csv", FailureRateRow)


def load_meta_mttf() -> pd.DataFrame:
    """Load Meta RSC-1's MTTF by job size: ``n_gpus``, ``mttf_h`` [h], ``kind``."""
    return load_csv(f"{DIR}/meta_mttf.csv", MttfRow)


def load_daly_intervals() -> pd.DataFrame:
    """Load Daly 2006's validation cases (minutes): cost, MTBF, restart, published optimum."""
    return load_csv(f"{DIR}/daly_intervals.csv", DalyRow)


def load_stepfun_table(name: str) -> pd.DataFrame:
    """Load one shipped table derived from the InfiniteHBD trace (a key of ``STEPFUN_TABLES``).

    Raises
    ------
    labkit.data.DataError
        For an unknown name or a file that does not match its schema.
    """
    if name not in STEPFUN_TABLES:
        raise DataError(f"{DIR}/{name}.csv: unknown table; known: {sorted(STEPFUN_TABLES)}")
    return load_csv(f"{DIR}/{name}.csv", STEPFUN_TABLES[name])


@dataclass(frozen=True)
class MonthModel:
    """Defaults of the Monte Carlo month (see ``data/reliability/month_model.yaml``)."""

    n_gpus: int
    hours: float
    maintenance_h: float
    gpu_mtbf_h: float
    checkpoint_interval_h: float
    checkpoint_write_h: float
    restart_h: float
    straggler_slowdown: float
    trials: int
    seed: int
    source: str
    as_of: str

    def kwargs(self) -> dict[str, Any]:
        """Return the arguments of ``labkit.reliability.simulate_month`` / ``expected_month``."""
        keys = ("n_gpus", "hours", "gpu_mtbf_h", "checkpoint_interval_h", "checkpoint_write_h",
                "restart_h", "maintenance_h", "straggler_slowdown")
        return {k: getattr(self, k) for k in keys}


def load_month_model(path: str = f"{DIR}/month_model.yaml") -> MonthModel:
    """Load and validate the Monte Carlo month's defaults.

    Raises
    ------
    labkit.data.DataError
        Naming the file and key for a missing or mistyped key, or values the model rejects.
    """
    from labkit import reliability

    model = MonthModel(**load_document(path, MonthModelFile).model_dump())
    try:
        reliability.expected_month(**model.kwargs())
    except InputError as err:
        raise DataError(f"{path}: {err.field}: {err}") from err
    if not 1 <= model.trials <= reliability.MAX_TRIALS:
        raise DataError(f"{path}: trials must be in 1..{reliability.MAX_TRIALS}")
    return model


# -- the raw InfiniteHBD trace (not shipped) --------------------------------------------------
def find_stepfun_trace() -> Path | None:
    """Return the folder holding the raw InfiniteHBD trace, or ``None`` when it is absent.

    Looks at ``$LABKIT_STEPFUN_TRACE``, then ``shared/reference/traces/stepfun_infinitehbd``
    beside the repository (the project's reference material).
    """
    env = os.environ.get("LABKIT_STEPFUN_TRACE")
    candidates = [Path(env)] if env else []
    candidates.append(data_dir().parent.parent / "shared" / "reference" / "traces"
                      / "stepfun_infinitehbd")
    for c in candidates:
        if (c / "fault_trace.json").is_file():
            return c
    return None


def read_stepfun_trace(folder: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read ``fault_trace.json`` (a JSON list of events) from ``folder``.

    Raises
    ------
    labkit.data.DataError
        If the file is missing, not JSON, or not a list of objects.
    """
    path = Path(folder) / "fault_trace.json"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise DataError(f"{path}: cannot read ({err.strerror})") from err
    except json.JSONDecodeError as err:
        raise DataError(f"{path}:{err.lineno}: invalid JSON ({err.msg})") from err
    if not isinstance(doc, list) or not all(isinstance(e, dict) for e in doc):
        raise DataError(f"{path}: expected a list of event objects")
    return doc


def derive_stepfun_tables(folder: str | os.PathLike[str]) -> dict[str, pd.DataFrame]:
    """Derive the shipped tables from the raw trace in ``folder`` (keys of ``STEPFUN_TABLES``).

    Raises
    ------
    labkit.data.DataError
        If the trace cannot be read or its events do not pair up.
    """
    try:
        pairs = fault_trace.pair_faults(read_stepfun_trace(folder))
    except InputError as err:
        raise DataError(f"{Path(folder) / 'fault_trace.json'}: {err}") from err
    return {
        "stepfun_fault_rates": fault_trace.fault_rates(pairs),
        "stepfun_repair_days": fault_trace.repair_days(pairs),
        "stepfun_interarrival": fault_trace.interarrival_stats(pairs),
    }
