"""Loaders for lesson 06's data: the MLPerf Inference LLM table, as benchmark results.

Moved from :mod:`labkit.data.economics` (bodies unchanged); the power ratings joined in still
come from ``data/economics/power.csv`` (:func:`labkit.data.economics.load_power`).

Used in: notebooks/06_benchmarks.ipynb
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from labkit.benchmarks import DIVISIONS, PRECISION_BITS, SCENARIOS, BenchmarkResult
from labkit.data import Column, DataError, load_csv
from labkit.data.economics import RELIABILITY, load_power
from labkit.validate import InputError

__all__ = ["MLPERF_PATH", "benchmark_results", "load_mlperf"]

MLPERF_PATH = "economics/mlperf_inference_llm.csv"
_TAG = Column("reliability", choices=RELIABILITY)


def load_mlperf(path: str | Path = MLPERF_PATH,
                power_path: str | Path = "economics/power.csv") -> pd.DataFrame:
    """Load the MLPerf Inference LLM table, with each accelerator's rated power joined in.

    Returns
    -------
    pandas.DataFrame
        One row per result (39 in the shipped file): ``version``, ``as_of``, ``division``,
        ``submitter``, ``system``, ``accelerator``, ``accel_per_node``, ``nodes``,
        ``total_accel``, ``benchmark``, ``scenario``, ``slo``, ``result`` [tokens/s],
        ``result_per_accel``, ``power_w_system`` [W, NaN if not measured],
        ``tokens_per_joule``, ``precision``, ``sparsity``, ``availability``, ``source``,
        ``reliability``, ``notes``, plus ``tdp_w`` [W, NaN where ``power.csv`` has no rating].

    Raises
    ------
    labkit.data.DataError
        Naming the file and line for a schema error, or a row whose ``total_accel`` is not
        ``accel_per_node x nodes``.

    Used in: notebooks/06_benchmarks.ipynb
    """
    schema = [
        Column("version"), Column("division", choices=DIVISIONS), Column("submitter"),
        Column("system"), Column("accelerator"), Column("accel_per_node", "int", minimum=1),
        Column("nodes", "int", minimum=1), Column("total_accel", "int", minimum=1),
        Column("benchmark"), Column("scenario", choices=SCENARIOS),
        Column("slo", choices=SCENARIOS), Column("result", "float", minimum=0),
        Column("unit", choices=("tokens/s",)), Column("result_per_accel", "float", minimum=0),
        Column("power_w_system", "float", nullable=True, minimum=0),
        Column("tokens_per_joule", "float", nullable=True, minimum=0),
        Column("precision", choices=tuple(PRECISION_BITS)), Column("sparsity", "bool"),
        Column("precision_note", nullable=True),
        Column("availability", choices=("available", "preview", "rdi")), _TAG,
        Column("notes", nullable=True),
    ]
    frame = load_csv(path, schema)
    name = frame.attrs["path"]
    for i, row in frame.iterrows():
        if row["total_accel"] != row["accel_per_node"] * row["nodes"]:
            raise DataError(f"{name}: row {int(i) + 1} ({row['system']}): total_accel "
                            f"{row['total_accel']} != accel_per_node x nodes")
    power = load_power(power_path)
    tdp = power[(power["kind"] == "accelerator") & (power["basis"] == "tdp")
                & power["mlperf_accelerator"].notna()]
    ratings = dict(zip(tdp["mlperf_accelerator"], tdp["power_w"], strict=True))
    frame["tdp_w"] = [ratings.get(a, math.nan) for a in frame["accelerator"]]
    frame.attrs["path"] = name
    return frame


def benchmark_results(frame: pd.DataFrame | None = None) -> list[BenchmarkResult]:
    """Return every MLPerf row as a :class:`~labkit.benchmarks.BenchmarkResult` (row order).

    Raises
    ------
    labkit.data.DataError
        If a row does not make a valid result (naming the row and the field).

    Used in: notebooks/06_benchmarks.ipynb
    """
    table = load_mlperf() if frame is None else frame
    results = []
    for i, row in table.iterrows():
        record = row.to_dict()
        record["scenario"] = record.get("slo") or record.get("scenario")
        try:
            results.append(BenchmarkResult.from_record(record))
        except InputError as err:
            raise DataError(f"{table.attrs.get('path', 'mlperf')}: row {int(i) + 1}: {err}"
                            ) from err
    return results
