"""Loader for the goodput lesson's seed worksheet (``data/goodput/worksheet.yaml``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from labkit.data import DataError, load_document
from labkit.data.schema import (
    Document,
    IsoDate,
    Lax,
    NonNegative,
    Positive,
    PositiveInt,
    Schema,
    Text,
)
from labkit.goodput import Loss, Worksheet
from labkit.validate import InputError

__all__ = ["WorksheetFile", "WorksheetSeed", "load_worksheet_seed"]

PATH = "goodput/worksheet.yaml"


class GpuPrice(Schema):
    """``gpu_price``: the teaching price of one GPU [KRW], with its own provenance."""

    krw_per_gpu: NonNegative
    source: Text
    as_of: IsoDate


class WorksheetFile(Document):
    """``worksheet.yaml``: the course worksheet (hours per loss line) and the lesson's defaults."""

    cluster_gpus: PositiveInt
    reserved_h: Positive
    losses: dict[Annotated[Loss, Lax], NonNegative]
    comparison_goodput: float
    gpu_price: GpuPrice


@dataclass(frozen=True)
class WorksheetSeed:
    """The course worksheet and the lesson's defaults, as loaded from ``data/``."""

    worksheet: Worksheet
    cluster_gpus: int
    comparison_goodput: float
    gpu_price_krw: float
    source: str
    as_of: str


def load_worksheet_seed(path: str = PATH) -> WorksheetSeed:
    """Load and validate the seed worksheet.

    Returns
    -------
    WorksheetSeed
        The worksheet (720 h, five loss lines), 4,096 GPUs, comparison goodput 0.70 and the
        teaching GPU price [KRW].

    Raises
    ------
    labkit.data.DataError
        Naming the file and key if a key is missing, mistyped, or a value is invalid.
    """
    doc = load_document(path, WorksheetFile)
    try:
        ws = Worksheet(doc.reserved_h, {k.value: v for k, v in doc.losses.items()})
    except InputError as err:
        raise DataError(f"{path}: {err}") from err
    return WorksheetSeed(worksheet=ws, cluster_gpus=doc.cluster_gpus,
                         comparison_goodput=doc.comparison_goodput,
                         gpu_price_krw=doc.gpu_price.krw_per_gpu, source=doc.source,
                         as_of=doc.as_of)
