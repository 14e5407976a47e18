"""Loaders for lesson 07's data: server types (built from ``data/economics/``) and defaults.

``data/opex/servers.csv`` names, for each server type, the rows of lesson 05/06's tables that
give its price (``hardware_prices.csv``), its maximum power (``power.csv``) and its inference
throughput (``mlperf_inference_llm.csv``), and the GPU model (``data/gpus/``) whose smallest
MIG profile says how many students share one GPU; this module joins them into
:class:`labkit.opex.ServerSpec` values. ``data/opex/defaults.csv`` holds the lesson's defaults
and control ranges.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Self

import pandas as pd
from pydantic import model_validator

from labkit.data import DataError, load_csv
from labkit.data.benchmarks import load_mlperf
from labkit.data.economics import (
    EconomicsRow,
    ParameterRow,
    load_hardware_prices,
    load_power,
)
from labkit.data.gpus import load_gpu_model
from labkit.data.schema import OptionalNonNegative, PositiveInt, Text
from labkit.opex import ServerSpec
from labkit.validate import InputError

__all__ = [
    "OpexDefault",
    "ServerRow",
    "load_opex_defaults",
    "load_servers",
    "smallest_mig_profile",
]

SERVERS_PATH = "opex/servers.csv"
DEFAULTS_PATH = "opex/defaults.csv"


class ServerRow(EconomicsRow):
    """A row of ``servers.csv``: a server type and the rows of lesson 05/06's tables it joins.

    Power is ``power_item`` (a row of ``power.csv``) or the row's own ``max_it_power_kw``.
    """

    server: Text
    gpus_per_server: PositiveInt
    price_item: Text
    power_item: Text | None = None
    max_it_power_kw: OptionalNonNegative = None
    mlperf_version: Text
    mlperf_system: Text
    mlperf_benchmark: Text
    mlperf_scenario: Text
    gpu_model: Text

    @model_validator(mode="after")
    def _has_power(self) -> Self:
        if self.power_item is None and math.isnan(self.max_it_power_kw or math.nan):
            raise ValueError(f"({self.server}): give power_item or max_it_power_kw")
        return self


def _one(frame: pd.DataFrame, mask: Any, what: str, where: str) -> pd.Series:
    rows = frame[mask]
    if len(rows) != 1:
        raise DataError(f"{where}: {what} matches {len(rows)} rows of {frame.attrs['path']}, "
                        "expected exactly 1")
    return rows.iloc[0]


def load_servers(fx_krw_per_usd: float, path: str | Path = SERVERS_PATH) -> dict[str, ServerSpec]:
    """Return the lesson's server types, by display name, priced in KRW.

    Parameters
    ----------
    fx_krw_per_usd : float
        Exchange rate for the USD prices. [KRW/USD]

    Returns
    -------
    dict of str -> labkit.opex.ServerSpec
        In file order. Price = middle of the hardware row's low-high range x fx; power = the
        power row's watts / 1,000 (or the file's own ``max_it_power_kw``); throughput = the
        MLPerf row's ``result_per_accel``.

    Raises
    ------
    labkit.data.DataError
        Naming the file and line if a referenced row is missing or ambiguous, or a value is bad.
    """
    frame = load_csv(path, ServerRow)
    name = frame.attrs["path"]
    prices, power, mlperf = load_hardware_prices(), load_power(), load_mlperf()
    servers: dict[str, ServerSpec] = {}
    for i, row in frame.iterrows():
        where = f"{name}: row {int(str(i)) + 1} ({row['server']})"
        price = _one(prices, prices["item"] == row["price_item"], "price_item", where)
        if int(price["gpus"]) != int(row["gpus_per_server"]):
            raise DataError(f"{where}: price row has {price['gpus']} GPUs, "
                            f"server has {row['gpus_per_server']}")
        power_item = row["power_item"] if isinstance(row["power_item"], str) else ""
        if power_item:
            kw = float(_one(power, power["item"] == power_item, "power_item",
                            where)["power_w"]) / 1000
        else:
            kw = float(row["max_it_power_kw"])
        perf = _one(mlperf, (mlperf["version"] == row["mlperf_version"])
                    & (mlperf["system"] == row["mlperf_system"])
                    & (mlperf["benchmark"] == row["mlperf_benchmark"])
                    & (mlperf["scenario"] == row["mlperf_scenario"]), "mlperf row", where)
        profile, slices = smallest_mig_profile(row["gpu_model"], where)
        try:
            servers[row["server"]] = ServerSpec(
                name=row["server"],
                server_capex_krw=(price["price_usd_low"] + price["price_usd_high"]) / 2
                * fx_krw_per_usd,
                gpus_per_server=int(row["gpus_per_server"]),
                max_it_power_kw=kw,
                tokens_per_s_per_gpu=float(perf["result_per_accel"]),
                mig_instances_per_gpu=slices,
                source=(f"price: {price['source']} ({price['as_of']}); power: "
                        f"{power_item or 'this file'}; throughput: MLPerf Inference "
                        f"{perf['version']} {perf['system']} {perf['benchmark']} "
                        f"{perf['scenario']}; MIG: {profile} x {slices} "
                        f"(data/gpus/{row['gpu_model']}.yaml)"),
            )
        except InputError as err:
            raise DataError(f"{where}: {err}") from err
    if not servers:
        raise DataError(f"{name}: no server rows")
    return servers


def smallest_mig_profile(gpu_model: str, where: str = "") -> tuple[str, int]:
    """Return the smallest MIG profile of a GPU model and how many fit on one GPU.

    The smallest profile has the fewest compute slices, then the fewest memory slices (among
    equals, the one that fits most often: ``1g.10gb`` x 7 on an H100, not ``1g.10gb+me`` x 1).
    A GPU without MIG gives ``("", 1)``: one student (or class) per GPU.

    Raises
    ------
    labkit.data.DataError
        If ``gpu_model`` is not in ``data/gpus/``.
    """
    try:
        model = load_gpu_model(gpu_model)
    except DataError as err:
        raise DataError(f"{where}: gpu_model: {err}") from err
    if model.mig is None:
        return "", 1
    best = min(model.mig.profiles,
               key=lambda p: (p.compute_slices, p.memory_slices, -p.max_count))
    return best.name, best.max_count


@dataclass(frozen=True)
class OpexDefault:
    """One lesson-07 parameter: default value, control range and provenance."""

    parameter: str
    value: float
    unit: str
    low: float
    high: float
    step: float
    source: str
    as_of: str


def load_opex_defaults(path: str | Path = DEFAULTS_PATH) -> MappingProxyType[str, OpexDefault]:
    """Return lesson 07's defaults by parameter name (read-only).

    Raises
    ------
    labkit.data.DataError
        Naming the file and line for a schema error, a repeated parameter or a default outside
        its own range.
    """
    frame = load_csv(path, ParameterRow)
    name = frame.attrs["path"]
    items: dict[str, OpexDefault] = {}
    for i, row in frame.iterrows():
        where = f"{name}: row {int(str(i)) + 1} ({row['parameter']})"
        if row["parameter"] in items:
            raise DataError(f"{where}: parameter listed twice")
        items[row["parameter"]] = OpexDefault(
            row["parameter"], float(row["value"]), row["unit"], float(row["low"]),
            float(row["high"]), float(row["step"]), row["source"], row["as_of"])
    return MappingProxyType(items)
