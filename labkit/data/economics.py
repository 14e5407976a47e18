"""Loaders for lessons 05-06's data (``data/economics/``): defaults, prices, power, MLPerf rows.

Every file is a tidy CSV whose rows each carry ``source``, ``as_of`` and ``reliability`` (one of
:data:`RELIABILITY`); a row without them is rejected with the file and line.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import pandas as pd

from labkit.data import Column, DataError, load_csv
from labkit.economics import SCENARIO_INPUTS, BreakEvenScenario
from labkit.validate import InputError

__all__ = [
    "DEFAULTS_PATH",
    "RELIABILITY",
    "Default",
    "Defaults",
    "load_api_prices",
    "load_cloud_prices",
    "load_defaults",
    "load_hardware_prices",
    "load_power",
    "scenario_from_defaults",
]

RELIABILITY = ("primary", "secondary", "teaching assumption")
"""How far a figure can be trusted: a primary document (vendor, MLCommons, KEPCO), a secondary
report (press, blog, aggregator), or an assumption made for teaching."""

DEFAULTS_PATH = "economics/defaults.csv"
_TAG = Column("reliability", choices=RELIABILITY)


@dataclass(frozen=True)
class Default:
    """One lesson parameter: its default, slider range and provenance.

    Used in: notebooks/05_break_even.ipynb, notebooks/06_benchmarks.ipynb
    """

    parameter: str
    value: float
    unit: str
    low: float
    high: float
    step: float
    source: str
    as_of: str
    reliability: str


class Defaults(Mapping[str, Default]):
    """The defaults of ``data/economics/defaults.csv``, by parameter name (read-only).

    Used in: notebooks/05_break_even.ipynb, notebooks/06_benchmarks.ipynb
    """

    def __init__(self, items: Mapping[str, Default], frame: pd.DataFrame) -> None:
        self._items = MappingProxyType(dict(items))
        self.frame = frame

    def __getitem__(self, key: str) -> Default:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def value(self, key: str) -> float:
        """Return the default value of ``key``."""
        return self._items[key].value


REQUIRED_DEFAULTS = (
    "server_capex_usd", "fx_krw_per_usd", "gpus_per_server", "servers", "depreciation_years",
    "cost_of_capital", "max_it_power_kw", "idle_power_fraction", "pue",
    "energy_price_krw_per_kwh", "base_charge_krw_per_kw_month", "staff_krw_per_year",
    "maintenance_fraction_per_year", "facility_krw_per_year", "api_price_usd_per_m",
    "tokens_per_s_per_gpu", "derate", "utilization", "rent_usd_per_gpu_hour", "students",
    "requests_per_day", "tokens_per_request", "days_per_month", "precision_gain_measured",
    "sparsity_gain_measured", "demand_tokens_per_s", "old_tokens_per_s_per_server",
    "old_server_kw", "new_server_kw", "claimed_speedup", "workload_speedup", "rack_kw",
    "feed_limit_tokens_per_s_per_server",
)


def load_defaults(path: str | Path = DEFAULTS_PATH) -> Defaults:
    """Load the lessons' defaults and slider ranges.

    Returns
    -------
    Defaults
        Parameter name -> :class:`Default`; ``.frame`` is the table as loaded.

    Raises
    ------
    labkit.data.DataError
        Naming the file (and line) for a schema error, a duplicate or missing parameter, or a
        value outside its own [low, high] range.

    Used in: notebooks/05_break_even.ipynb, notebooks/06_benchmarks.ipynb
    """
    schema = [Column("lesson"), Column("parameter"), Column("value", "float"), Column("unit"),
              Column("low", "float"), Column("high", "float"),
              Column("step", "float", minimum=0), _TAG]
    frame = load_csv(path, schema)
    name = frame.attrs["path"]
    items: dict[str, Default] = {}
    for i, row in frame.iterrows():
        key = str(row["parameter"])
        if key in items:
            raise DataError(f"{name}: parameter {key!r} appears twice (row {int(i) + 1})")
        if not row["low"] <= row["value"] <= row["high"]:
            raise DataError(f"{name}: parameter {key!r}: value {row['value']:g} is outside "
                            f"[{row['low']:g}, {row['high']:g}]")
        items[key] = Default(key, float(row["value"]), str(row["unit"]), float(row["low"]),
                             float(row["high"]), float(row["step"]), str(row["source"]),
                             str(row["as_of"]), str(row["reliability"]))
    missing = [k for k in REQUIRED_DEFAULTS if k not in items]
    if missing:
        raise DataError(f"{name}: missing parameter(s) {missing}")
    return Defaults(items, frame)


def scenario_from_defaults(defaults: Defaults | None = None) -> BreakEvenScenario:
    """Return lesson 05's default :class:`~labkit.economics.BreakEvenScenario`.

    Raises
    ------
    labkit.data.DataError
        If a default is invalid for the model (the model's message, with the file).

    Used in: notebooks/05_break_even.ipynb
    """
    d = defaults or load_defaults()
    try:
        values = {name: d.value(name) for name in SCENARIO_INPUTS}
        values["gpus_per_server"] = int(values["gpus_per_server"])
        values["servers"] = int(values["servers"])
        return BreakEvenScenario.from_inputs(**values)
    except InputError as err:
        raise DataError(f"{DEFAULTS_PATH}: {err}") from err


def load_power(path: str | Path = "economics/power.csv") -> pd.DataFrame:
    """Load accelerator, server and rack power (``power_w`` [W]; ``basis`` tdp/max/measured/range).

    Raises
    ------
    labkit.data.DataError
        For a schema error, naming the file and line.

    Used in: notebooks/05_break_even.ipynb, notebooks/06_benchmarks.ipynb
    """
    schema = [Column("item"), Column("kind", choices=("accelerator", "server", "rack")),
              Column("mlperf_accelerator", nullable=True),
              Column("power_w", "float", minimum=0),
              Column("power_w_high", "float", nullable=True, minimum=0),
              Column("basis", choices=("tdp", "max", "measured", "range")), _TAG]
    return load_csv(path, schema)


def load_hardware_prices(path: str | Path = "economics/hardware_prices.csv") -> pd.DataFrame:
    """Load GPU and server prices (``price_usd_low``/``price_usd_high`` [USD]).

    Raises
    ------
    labkit.data.DataError
        For a schema error, naming the file and line.

    Used in: notebooks/05_break_even.ipynb
    """
    schema = [Column("item"), Column("kind", choices=("gpu", "server")),
              Column("gpus", "int", minimum=1), Column("price_usd_low", "float", minimum=0),
              Column("price_usd_high", "float", minimum=0), _TAG]
    return load_csv(path, schema)


def load_cloud_prices(path: str | Path = "economics/cloud_gpu_prices.csv") -> pd.DataFrame:
    """Load cloud GPU rental prices (``usd_per_gpu_hour`` [USD per GPU-hour]).

    Raises
    ------
    labkit.data.DataError
        For a schema error, naming the file and line.

    Used in: notebooks/05_break_even.ipynb
    """
    schema = [Column("gpu"), Column("provider"), Column("offer"),
              Column("usd_per_gpu_hour", "float", minimum=0), _TAG]
    return load_csv(path, schema)


def load_api_prices(path: str | Path = "economics/api_prices.csv") -> pd.DataFrame:
    """Load API prices (``usd_per_m_input``/``usd_per_m_output`` [USD per 1M tokens]).

    Raises
    ------
    labkit.data.DataError
        For a schema error, naming the file and line.

    Used in: notebooks/05_break_even.ipynb
    """
    schema = [Column("model"), Column("provider"), Column("usd_per_m_input", "float", minimum=0),
              Column("usd_per_m_output", "float", minimum=0), _TAG]
    return load_csv(path, schema)
