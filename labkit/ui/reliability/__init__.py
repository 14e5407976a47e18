"""Widgets for lesson 04, "장애를 전제로 한 운영": failures at scale, checkpoints, ETTR, a month.

Builders (each returns a widget or a table; the notebook only calls them):

- :func:`scaling_app` — job MTBF vs cluster size (log-log), 8 / 4,096 / 16,384 GPUs marked;
- :func:`interval_app` — overhead vs checkpoint interval, Young / Daly / exact optimum marked;
- :func:`ettr_app` — Meta's closed form vs the exact ETTR as the cluster grows;
- :func:`month_app` — Monte Carlo of the worksheet's month: goodput histogram, a sampled month's
  ledger as lesson 03's waterfall;
- :func:`eventlog_app` — goodput and badput from a job's event log;
- :func:`llama3_causes`, :func:`failure_rates` — real failure data;
- ``*_numbers`` — the lesson's key numbers as tables (checked by nbval);
- :func:`exercises` — 문제 with checked answers.

The numbers all come from :mod:`labkit.reliability`, :mod:`labkit.eventlog` and
:mod:`labkit.fault_trace`.
"""

from __future__ import annotations

from labkit.ui.reliability.base import (
    ASYNC_WRITE_MIN,
    LLAMA3_GPU_MTBF_H,
    MARKED_SIZES,
    UI_MAX_TRIALS,
)
from labkit.ui.reliability.cluster import (
    EttrApp,
    IntervalApp,
    ScalingApp,
    ettr_app,
    ettr_numbers,
    interval_app,
    interval_numbers,
    scaling_app,
    scaling_numbers,
)
from labkit.ui.reliability.failures import (
    exercises,
    failure_rates,
    llama3_causes,
    llama3_numbers,
    stepfun_numbers,
)
from labkit.ui.reliability.month import (
    EventLogApp,
    MonthApp,
    eventlog_app,
    eventlog_numbers,
    month_app,
    month_numbers,
)

__all__ = [
    "ASYNC_WRITE_MIN",
    "LLAMA3_GPU_MTBF_H",
    "MARKED_SIZES",
    "UI_MAX_TRIALS",
    "EttrApp",
    "EventLogApp",
    "IntervalApp",
    "MonthApp",
    "ScalingApp",
    "ettr_app",
    "ettr_numbers",
    "eventlog_app",
    "eventlog_numbers",
    "exercises",
    "failure_rates",
    "interval_app",
    "interval_numbers",
    "llama3_causes",
    "llama3_numbers",
    "month_app",
    "month_numbers",
    "scaling_app",
    "scaling_numbers",
    "stepfun_numbers",
]
