"""Loader for the goodput lesson's seed worksheet (``data/goodput/worksheet.yaml``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from labkit.data import DataError, get_field, load_yaml
from labkit.goodput import Loss, Worksheet
from labkit.validate import InputError

__all__ = ["WorksheetSeed", "load_worksheet_seed"]

PATH = "goodput/worksheet.yaml"


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
    doc: dict[str, Any] = load_yaml(path)
    where = path
    losses = get_field(doc, "losses", dict, where=where)
    unknown = [k for k in losses if k not in {m.value for m in Loss}]
    if unknown:
        known = [m.value for m in Loss]
        raise DataError(f"{where}: unknown loss line(s) {unknown}; known: {known}")
    price = get_field(doc, "gpu_price", dict, where=where)
    try:
        ws = Worksheet(get_field(doc, "reserved_h", float, where=where),
                       {k: get_field(losses, k, float, where=f"{where}: losses") for k in losses})
        seed = WorksheetSeed(
            worksheet=ws,
            cluster_gpus=get_field(doc, "cluster_gpus", int, where=where),
            comparison_goodput=get_field(doc, "comparison_goodput", float, where=where),
            gpu_price_krw=get_field(price, "krw_per_gpu", float, where=f"{where}: gpu_price"),
            source=str(doc["source"]),
            as_of=str(doc["as_of"]),
        )
    except InputError as err:
        raise DataError(f"{where}: {err}") from err
    return seed
