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
from typing import Any

import pandas as pd

from labkit import fault_trace
from labkit.data import Column, DataError, data_dir, get_field, load_csv, load_yaml
from labkit.validate import InputError

__all__ = [
    "STEPFUN_TABLES",
    "MonthModel",
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
LLAMA3_CATEGORIES = ("GPU", "Dependency", "Network", "Unplanned Maintenance", "Host", "Unknown")
RATE_KINDS = ("published", "derived", "measured", "anecdotal")

_LLAMA3 = [Column("component"), Column("category", choices=LLAMA3_CATEGORIES),
           Column("interruptions", "int", minimum=0), Column("printed_pct", "float", minimum=0)]
_RATES = [Column("cluster"), Column("hardware"), Column("period"), Column("counted"),
          Column("rate_per_1000_node_days", "float", minimum=0),
          Column("kind", choices=RATE_KINDS), Column("note", nullable=True)]
_MTTF = [Column("n_gpus", "int", minimum=1), Column("mttf_h", "float", minimum=0),
         Column("kind", choices=("measured", "projected"))]
_DALY = [Column("checkpoint_cost_min", "float", minimum=0), Column("mtbf_min", "float", minimum=0),
         Column("restart_min", "float", minimum=0),
         Column("published_optimum_min", "float", minimum=0)]

#: The derived InfiniteHBD tables: file stem -> schema.
STEPFUN_TABLES: dict[str, list[Column]] = {
    "stepfun_fault_rates": [Column("level"), Column("class"),
                            Column("fault_starts", "int", minimum=0),
                            Column("rate_per_1000_node_days", "float", minimum=0)],
    "stepfun_repair_days": [Column("group"), Column("faults", "int", minimum=0),
                            Column("median_days", "float", minimum=0),
                            Column("mean_days", "float", minimum=0),
                            Column("p90_days", "float", minimum=0),
                            Column("max_days", "float", minimum=0),
                            Column("zero_length", "int", minimum=0)],
    "stepfun_interarrival": [Column("statistic"), Column("value", "float"), Column("unit")],
}


def load_llama3_interruptions() -> pd.DataFrame:
    """Load Llama 3 Table 5: ``component``, ``category``, ``interruptions``, ``printed_pct``.

    Raises
    ------
    labkit.data.DataError
        Naming the file and line for a bad row (unknown category, negative count, ...).
    """
    return load_csv(f"{DIR}/llama3_interruptions.csv", _LLAMA3)


def load_failure_rates() -> pd.DataFrame:
    """Load the failure rates per 1,000 node-days, one row per source (with ``kind``)."""
    return load_csv(f"{DIR}/failure_rates.csv", _RATES)


def load_meta_mttf() -> pd.DataFrame:
    """Load Meta RSC-1's MTTF by job size: ``n_gpus``, ``mttf_h`` [h], ``kind``."""
    return load_csv(f"{DIR}/meta_mttf.csv", _MTTF)


def load_daly_intervals() -> pd.DataFrame:
    """Load Daly 2006's validation cases (minutes): cost, MTBF, restart, published optimum."""
    return load_csv(f"{DIR}/daly_intervals.csv", _DALY)


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

    doc = load_yaml(path)
    floats = ("hours", "maintenance_h", "gpu_mtbf_h", "checkpoint_interval_h",
              "checkpoint_write_h", "restart_h", "straggler_slowdown")
    values: dict[str, Any] = {k: get_field(doc, k, float, where=path) for k in floats}
    for k in ("n_gpus", "trials", "seed"):
        values[k] = get_field(doc, k, int, where=path)
    model = MonthModel(**values, source=str(doc["source"]), as_of=str(doc["as_of"]))
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
