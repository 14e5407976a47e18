"""Widgets for lesson 08, "여러 사용자가 나눠 쓰는 클러스터": a day of the school's shared cluster.

Builders (each returns a widget or a table; the notebook only calls them):

- :func:`demand_app` — the aircraft arithmetic: the day's demand curve against installed GPUs,
  the calendar-hour cost and how much of it buys idle time;
- :func:`school_day_app` — the day under a policy, a placement and preemption: Gantt chart of
  the GPUs, queue length, occupancy, value per installed GPU, waits per workload kind;
- :func:`filler_app` — "keep the GPUs busy" with worthless filler: occupancy up, value not;
- :func:`mig_class_app` — a class on MIG slices vs on whole GPUs, and who else gets GPUs;
- :func:`policy_lab_app` — quotas, borrowing, preemption and the policy: who waits;
- :func:`specialization_app` — a smaller specialized model frees GPUs; only lending turns them
  into value;
- :func:`policy_table`, :func:`key_numbers` — tables checked by nbval;
- :func:`exercises` — 문제 with checked answers.

All numbers come from :mod:`labkit.scheduling`. The primary day is 우리 학교's own
(:func:`case_day`: the saved case's GPUs, class and timetable, through
:mod:`labkit.scheduling.class_day`): :func:`demand_app`, :func:`school_day_app`,
:func:`workload_table` and :func:`policy_table` run it. The filler, MIG-class, policy-lab and
specialization apps run the contrast, the 16-GPU shared cluster of
``data/scheduling/school_day.yaml`` (its four tenants and quotas).
"""

from __future__ import annotations

from labkit.ui.orchestration.apps import (
    DemandApp,
    SchoolDayApp,
    demand_app,
    policy_table,
    school_day_app,
    workload_table,
)
from labkit.ui.orchestration.common import CACHE_SIZE as CACHE_SIZE
from labkit.ui.orchestration.common import KIND_COLORS as KIND_COLORS
from labkit.ui.orchestration.common import TENANTS as TENANTS
from labkit.ui.orchestration.common import case_day
from labkit.ui.orchestration.experiments import (
    FillerApp,
    MigClassApp,
    PolicyLabApp,
    SpecializationApp,
    filler_app,
    mig_class_app,
    policy_lab_app,
    specialization_app,
)
from labkit.ui.orchestration.figures import demand_figure, gantt_figure, queue_figure, waits_figure
from labkit.ui.orchestration.lesson import exercise_list, exercises, key_numbers

__all__ = [
    "DemandApp",
    "FillerApp",
    "MigClassApp",
    "PolicyLabApp",
    "SchoolDayApp",
    "SpecializationApp",
    "case_day",
    "demand_app",
    "demand_figure",
    "exercise_list",
    "exercises",
    "filler_app",
    "gantt_figure",
    "key_numbers",
    "mig_class_app",
    "policy_lab_app",
    "policy_table",
    "queue_figure",
    "school_day_app",
    "specialization_app",
    "waits_figure",
    "workload_table",
]
