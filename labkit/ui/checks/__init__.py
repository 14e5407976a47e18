"""Every lesson's prediction (predict → try → check) and widget-state tasks, on 우리 학교.

:data:`PREDICTIONS` holds one :class:`~labkit.ui.predict.Prediction` per lesson, asked before
its main simulator; :data:`TASKS` maps a lesson to a builder of its
:class:`~labkit.ui.tasks.Task` list for the linked app. Every target is computed here by the
models, from the school case (:func:`labkit.data.school.load_case`) and the app's own inputs
(the app's public ``inputs``/``values``/``fields``), never typed by hand.

Used in: notebooks/01-09 (through ``ui.predict.ask`` and ``ui.tasks.lesson``)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from labkit.ui.checks.common import case
from labkit.ui.checks.economics import (
    _tasks_05,
    _tasks_06,
    lowest_cheaper_pct,
    per_accelerator_ratio,
    school_util_frac,
)
from labkit.ui.checks.goodput_reliability import (
    LLAMA3_GPU_MTBF_H,
    NEAR_OPTIMUM_04,
    _tasks_03,
    _tasks_04,
    school_mtbf_days,
)
from labkit.ui.checks.observe_mig import (
    _board_model,
    _max_smallest,
    _tasks_01,
    _tasks_02,
    class_share_pct,
    lab_gpu_model,
    max_beside,
    smallest_profile,
    tiny_kernel_sm_pct,
)
from labkit.ui.checks.operations import (
    CLASS_WAIT_MIN,
    OVERSIZED_KW,
    _room_result,
    _tasks_07,
    _tasks_08,
    _tasks_09,
    best_policy,
    july_bill_krw,
)
from labkit.ui.predict import Prediction
from labkit.ui.tasks import Task

__all__ = [
    "CLASS_WAIT_MIN",
    "LLAMA3_GPU_MTBF_H",
    "MAX_BILL_KRW",
    "MAX_GIS",
    "MAX_MTBF_DAYS",
    "MAX_RATIO",
    "NEAR_OPTIMUM_04",
    "OVERSIZED_KW",
    "PREDICTIONS",
    "TASKS",
    "_room_result",
    "best_policy",
    "case",
    "class_share_pct",
    "july_bill_krw",
    "lab_gpu_model",
    "lowest_cheaper_pct",
    "max_beside",
    "per_accelerator_ratio",
    "school_mtbf_days",
    "school_util_frac",
    "smallest_profile",
    "tiny_kernel_sm_pct",
]

#: Each numeric prediction's plausible range (``Prediction.low``/``high``; % ones are 0-100):
#: a count or a share is never negative, and the upper ends are far past any school's case:
#: 10만 days (274 years) between failures, 100x per chip, 100 GIs on one GPU (NVIDIA's
#: largest MIG split is 7), a 100억-won monthly bill.
MAX_MTBF_DAYS = 100_000.0
MAX_RATIO = 100.0
MAX_GIS = 100.0
MAX_BILL_KRW = 1e10

PREDICTIONS: dict[str, Prediction] = {p.key: p for p in (
    Prediction("01.tiny_kernel_sm", tiny_kernel_sm_pct, unit="%", close_frac=0.3,
               extra={"model": lambda _s: lab_gpu_model().name,
                      "sms": lambda _s: str(lab_gpu_model().sm_count)}, reveal=True),
    Prediction("03.goodput", lambda w: w.result.goodput * 100 if w.result else None, unit="%",
               close_frac=0.05, reveal=True),
    Prediction("04.school_mtbf", school_mtbf_days, unit="일", close_frac=0.25,
               extra={"n": lambda _s: str(case().n_gpus)}, high=MAX_MTBF_DAYS, reveal=True),
    Prediction("05.break_even", lambda c: c.result.u_star * 100 if c.result else None,
               unit="%", close_frac=0.25, reveal=True),
    Prediction("06.per_chip", per_accelerator_ratio, unit="배", close_frac=0.1, high=MAX_RATIO,
               reveal=True),
    Prediction("02.max_1g", _max_smallest, unit="개", high=MAX_GIS,
               extra={"model": _board_model,
                      "profile": lambda b: smallest_profile(b.mig_layout).name}),
    Prediction("08.best_policy", best_policy,
               choices=("fifo", "easy_backfill", "greedy", "priority", "fair_share")),
    Prediction("09.cheapest", lambda d: d.result.cheapest if d.result else None,
               choices=("buy", "rent", "api"), reveal=True),
    Prediction("07.july_bill", lambda r: july_bill_krw(r.result) if r.result else None,
               unit="원", close_frac=0.2, high=MAX_BILL_KRW, reveal=True),
)}

TASKS: dict[str, Callable[[Any], list[Task]]] = {
    "01": _tasks_01,
    "02": _tasks_02,
    "03": _tasks_03,
    "04": _tasks_04,
    "05": _tasks_05,
    "06": _tasks_06,
    "07": _tasks_07,
    "08": _tasks_08,
    "09": _tasks_09,
}
