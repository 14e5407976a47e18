"""Loaders for lesson 06's data: the MLPerf Inference LLM table, as benchmark results.

Moved from :mod:`labkit.data.economics` (bodies unchanged); the power ratings joined in still
come from ``data/economics/power.csv`` (:func:`labkit.data.economics.load_power`).

Used in: notebooks/06_benchmarks.ipynb
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Literal, Self

import pandas as pd
from pydantic import model_validator

from labkit.benchmarks import DIVISIONS, PRECISION_BITS, SCENARIOS, BenchmarkResult
from labkit.data import DataError, load_csv
from labkit.data.economics import EconomicsRow, load_power
from labkit.data.schema import NonNegative, OptionalNonNegative, PositiveInt, Text, one_of
from labkit.validate import InputError

__all__ = ["MLPERF_PATH", "MlperfRow", "benchmark_results", "load_mlperf"]

MLPERF_PATH = "economics/mlperf_inference_llm.csv"


class MlperfRow(EconomicsRow):
    """A row of ``mlperf_inference_llm.csv``: one MLPerf Inference LLM result (lesson 06).

    ``total_accel`` must be ``accel_per_node x nodes``. ``system`` is the id as submitted;
    ``label`` is the same system as people read it (what the lesson shows).
    """

    version: Text
    division: Annotated[str, one_of(DIVISIONS)]
    submitter: Text
    system: Text
    label: Text
    accelerator: Text
    accel_per_node: PositiveInt
    nodes: PositiveInt
    total_accel: PositiveInt
    benchmark: Text
    scenario: Annotated[str, one_of(SCENARIOS)]
    slo: Annotated[str, one_of(SCENARIOS)]
    result: NonNegative
    unit: Literal["tokens/s"]
    result_per_accel: NonNegative
    power_w_system: OptionalNonNegative = None
    tokens_per_joule: OptionalNonNegative = None
    precision: Annotated[str, one_of(tuple(PRECISION_BITS))]
    sparsity: bool
    precision_note: Text | None = None
    availability: Literal["available", "preview", "rdi"]
    notes: Text | None = None

    @model_validator(mode="after")
    def _total(self) -> Self:
        if self.total_accel != self.accel_per_node * self.nodes:
            raise ValueError(f"({self.system}): total_accel {self.total_accel} != "
                             f"accel_per_node x nodes = {self.accel_per_node * self.nodes}")
        return self


def load_mlperf(path: str | Path = MLPERF_PATH,
                power_path: str | Path = "economics/power.csv") -> pd.DataFrame:
    """Load the MLPerf Inference LLM table, with each accelerator's rated power joined in.

    Returns
    -------
    pandas.DataFrame
        One row per result (39 in the shipped file): ``version``, ``as_of``, ``division``,
        ``submitter``, ``system``, ``label`` (the system as people read it), ``accelerator``,
        ``accel_per_node``, ``nodes``,
        ``total_accel``, ``benchmark``, ``scenario``, ``slo``, ``result`` [tokens/s],
        ``result_per_accel``, ``power_w_system`` [W, NaN if not measured],
        ``tokens_per_joule``, ``precision``, ``sparsity``, ``availability``, ``source``,
        ``reliability``, ``notes``, plus ``tdp_w`` [W, NaN where ``power.csv`` has no rating].

    Raises
    ------
    labkit.data.DataError
        Naming the file and line for a schema error, a row whose ``total_accel`` is not
        ``accel_per_node x nodes``, or a label that is empty, differs between rows of one
        system, or names two systems of one submitter.

    Used in: notebooks/06_benchmarks.ipynb
    """
    frame = load_csv(path, MlperfRow)
    name = frame.attrs["path"]
    _check_labels(frame, name)
    power = load_power(power_path)
    tdp = power[(power["kind"] == "accelerator") & (power["basis"] == "tdp")
                & power["mlperf_accelerator"].notna()]
    ratings = dict(zip(tdp["mlperf_accelerator"], tdp["power_w"], strict=True))
    frame["tdp_w"] = [ratings.get(a, math.nan) for a in frame["accelerator"]]
    frame.attrs["path"] = name
    return frame


def _check_labels(frame: pd.DataFrame, name: str) -> None:
    """Raise DataError unless each submitted system has one label and no two share one.

    A system is (submitter, system id): NVIDIA's and Nebius' ``H200-SXM-141GBx8_TRT`` are two
    submissions and may read alike; within one submitter a label names one system.
    """
    first: dict[tuple[str, str], tuple[int, str]] = {}
    owner: dict[tuple[str, str], str] = {}
    for i, (submitter, system, label) in enumerate(
            zip(frame["submitter"], frame["system"], frame["label"], strict=True)):
        line = f"{name}: row {i + 1}"
        seen = first.setdefault((submitter, system), (i + 1, label))
        if seen[1] != label:
            raise DataError(f"{line}: label {label!r} of {submitter} {system} differs from "
                            f"row {seen[0]}'s {seen[1]!r} (one label per system)")
        other = owner.setdefault((submitter, label), system)
        if other != system:
            raise DataError(f"{line}: label {label!r} of {submitter} {system} is already "
                            f"{other}'s (a label names one system)")


def benchmark_results(frame: pd.DataFrame | None = None) -> list[BenchmarkResult]:
    """Return every MLPerf row as a :class:`~labkit.economics.BenchmarkResult` (row order).

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
