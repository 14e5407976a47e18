"""Lesson 04's shared constants and helpers.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from labkit import reliability as model
from labkit import validate
from labkit.i18n import t
from labkit.ui import format as fmt

#: Per-GPU MTBF implied by Llama 3's 54-day snapshot (419 unexpected interruptions, 16,384
#: GPUs; arXiv 2407.21783 §3.3.4). [h]
LLAMA3_GPU_MTBF_H = model.observed_gpu_mtbf_h(419, 16_384, 54 * 24)
#: Cluster sizes the lesson marks: the school's 8 GPUs, the worksheet's 4,096, Llama 3's 16,384.
MARKED_SIZES = (8, 4_096, 16_384)
#: Blocking part of an asynchronous checkpoint: "several seconds" to copy GPU state to pinned
#: host memory (MegaScale, arXiv 2402.15627 §4); 5 s here. [min]
ASYNC_WRITE_MIN = 5 / 60
#: Most trials the Monte Carlo app runs per change (a browser can send any value).
UI_MAX_TRIALS = 20_000
#: Largest interval/MTBF the interval app draws (bounds the chart; the model checks the rest).
_MAX_MINUTES = 100_000.0
_MAX_GPUS = 10_000_000

_COLORS = {"young": "#e09f3e", "daly": "#9c27b0", "exact": "#2e7d32", "chosen": "#d1495b",
           "meta": "#e09f3e", "line": "#3b6fb6"}


def _minutes(x: float) -> str:
    return t("reliability.minutes", value=fmt.fixed(x, 1))  # 60분, 42.4분


def _bounded(field: str, value: Any, limit: float) -> float:
    """Check a UI value against the app's own bound (anything that sizes work is bounded)."""
    return validate.at_most(field, value, limit, "the app's limit")


def _table(rows: list[tuple[str, str]]) -> fmt.Table:
    column = t("reliability.col_item")
    return fmt.people_table(
        pd.DataFrame(rows, columns=[column, t("reliability.col_value")]).set_index(column))


#: Cluster names of data/reliability/failure_rates.csv that hold English words -> catalog keys
#: of their Korean form (the others are proper names: Meta RSC-1, Llama 3 405B, BLOOM 176B).
CLUSTER_KEYS = {"Meta 8-GPU jobs": "reliability.cluster.meta_8gpu",
                "StepFun InfiniteHBD trace": "reliability.cluster.stepfun",
                "StepFun InfiniteHBD trace (hardware)": "reliability.cluster.stepfun_hw"}


def cluster_label(name: str) -> str:
    """A failure-rate source's cluster as a student reads it.

    "Meta 8-GPU jobs" -> "Meta 8장 작업"; a proper name ("Meta RSC-1") is returned as it is.
    """
    return t(CLUSTER_KEYS[name]) if name in CLUSTER_KEYS else name
