"""Loaders for lessons 05-06's data (``data/economics/``): defaults, prices, power, MLPerf rows.

Every file is a tidy CSV whose rows each carry ``source``, ``as_of`` and ``reliability`` (one of
:data:`RELIABILITY`); a row without them is rejected with the file and line.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Literal, Self, get_args

import pandas as pd
from pydantic import model_validator

from labkit.data import DataError, load_csv
from labkit.data.schema import (
    NonNegative,
    OptionalNonNegative,
    PositiveInt,
    Row,
    Text,
)
from labkit.economics import SCENARIO_INPUTS, BreakEvenScenario
from labkit.validate import InputError

__all__ = [
    "DEFAULTS_PATH",
    "RELIABILITY",
    "ApiPriceRow",
    "CloudPriceRow",
    "Default",
    "DefaultRow",
    "Defaults",
    "EconomicsRow",
    "HardwarePriceRow",
    "ParameterRow",
    "PowerRow",
    "load_api_prices",
    "load_cloud_prices",
    "load_defaults",
    "load_hardware_prices",
    "load_power",
    "scenario_from_defaults",
]

Reliability = Literal["primary", "secondary", "teaching assumption"]
RELIABILITY: tuple[str, ...] = get_args(Reliability)
"""How far a figure can be trusted: a primary document (vendor, MLCommons, KEPCO), a secondary
report (press, blog, aggregator), or an assumption made for teaching."""

DEFAULTS_PATH = "economics/defaults.csv"


class EconomicsRow(Row):
    """A row of ``data/economics/``: ``source``, ``as_of`` and a :data:`RELIABILITY` tag."""

    reliability: Reliability


class ParameterRow(EconomicsRow):
    """A lesson parameter: its default ``value`` inside its control range [low, high]."""

    parameter: Text
    value: float
    unit: Text
    low: float
    high: float
    step: NonNegative

    @model_validator(mode="after")
    def _value_in_range(self) -> Self:
        if not self.low <= self.value <= self.high:
            raise ValueError(f"parameter {self.parameter!r}: value {self.value:g} is outside "
                             f"[{self.low:g}, {self.high:g}]")
        return self


class DefaultRow(ParameterRow):
    """A row of ``economics/defaults.csv``: a parameter of lesson 05 or 06."""

    lesson: Text


class PowerRow(EconomicsRow):
    """A row of ``power.csv``: rated or measured power [W] of an accelerator, server or rack."""

    item: Text
    kind: Literal["accelerator", "server", "rack"]
    mlperf_accelerator: Text | None = None
    power_w: NonNegative
    power_w_high: OptionalNonNegative = None
    basis: Literal["tdp", "max", "measured", "range"]


class HardwarePriceRow(EconomicsRow):
    """A row of ``hardware_prices.csv``: a GPU or server price range [USD]."""

    item: Text
    kind: Literal["gpu", "server"]
    gpus: PositiveInt
    price_usd_low: NonNegative
    price_usd_high: NonNegative


class CloudPriceRow(EconomicsRow):
    """A row of ``cloud_gpu_prices.csv``: a rental price [USD per GPU-hour]."""

    gpu: Text
    provider: Text
    offer: Text
    usd_per_gpu_hour: NonNegative


class ApiPriceRow(EconomicsRow):
    """A row of ``api_prices.csv``: an API's prices [USD per 1M tokens]."""

    model: Text
    provider: Text
    usd_per_m_input: NonNegative
    usd_per_m_output: NonNegative


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
    frame = load_csv(path, DefaultRow)
    name = frame.attrs["path"]
    items: dict[str, Default] = {}
    for i, row in frame.iterrows():
        key = str(row["parameter"])
        if key in items:
            raise DataError(f"{name}: parameter {key!r} appears twice (row {int(str(i)) + 1})")
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
    return load_csv(path, PowerRow)


def load_hardware_prices(path: str | Path = "economics/hardware_prices.csv") -> pd.DataFrame:
    """Load GPU and server prices (``price_usd_low``/``price_usd_high`` [USD]).

    Raises
    ------
    labkit.data.DataError
        For a schema error, naming the file and line.

    Used in: notebooks/05_break_even.ipynb
    """
    return load_csv(path, HardwarePriceRow)


def load_cloud_prices(path: str | Path = "economics/cloud_gpu_prices.csv") -> pd.DataFrame:
    """Load cloud GPU rental prices (``usd_per_gpu_hour`` [USD per GPU-hour]).

    Raises
    ------
    labkit.data.DataError
        For a schema error, naming the file and line.

    Used in: notebooks/05_break_even.ipynb
    """
    return load_csv(path, CloudPriceRow)


def load_api_prices(path: str | Path = "economics/api_prices.csv") -> pd.DataFrame:
    """Load API prices (``usd_per_m_input``/``usd_per_m_output`` [USD per 1M tokens]).

    Raises
    ------
    labkit.data.DataError
        For a schema error, naming the file and line.

    Used in: notebooks/05_break_even.ipynb
    """
    return load_csv(path, ApiPriceRow)
