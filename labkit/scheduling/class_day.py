"""우리 학교's own day on its one server: the class timetable, its chatbot, its after-school work.

Pure. The school case (``labkit.school.SchoolCase``, read by the UI layer) gives the figures;
this module turns them into the day's job groups (:class:`~labkit.scheduling.JobGroup`) and the
calendar-hour cost of one installed GPU, so that lesson 08 simulates the school's own server
(8 GPUs on one server by default, or what the school saved) and the 16-GPU shared cluster of
``data/scheduling/school_day.yaml`` stays the contrast.

The day's shape [A] (a teaching assumption, every figure from the case except where named):

- ``school-chatbot``: the always-on school chatbot, ``always_on_frac`` x GPUs, all day, priority 4
  (as the shared cluster's service; ``data/opex/defaults.csv``'s always-on share);
- ``club-finetune``: a club's or teacher's fine-tuning run on half the server's GPUs, submitted
  an hour before the first class, :data:`CLUB_HOURS` long, checkpointing every 30 minutes,
  priority 2 (the shared cluster's research fine-tuning: 2-8 GPUs, checkpoint 0.5 h);
- ``school-grading``: the school service's automatic grading of yesterday's assignments, a
  quarter of the GPUs for :data:`GRADING_HOURS`, submitted half an hour into the first period,
  priority 1 (the shared cluster's grading batch, 4 of 16 GPUs);
- ``lab-P``: one class of ``students`` in every class period P (``class_start_h`` to
  ``class_end_h``, one period an hour, as calendar_2026.yaml's class hours); each student
  submits one lab job of ``job_duration_h`` on the smallest MIG slice that holds it in the
  first :data:`SUBMIT_SPREAD_H` of the period, priority 3 (at most :data:`MAX_LAB_JOBS` lab
  jobs: a large class keeps its first periods);
- ``school-homework``: half the class's jobs again after school, in the :data:`HOMEWORK_H` after
  ``class_end_h``, priority 2;
- ``club-eval``: one evaluation job per GPU at night (18-23 h), priority 1.

Used in: notebooks/08_orchestration.ipynb
"""

from __future__ import annotations

import math

from labkit import validate
from labkit.scheduling.jobs import MAX_GPUS_PER_NODE
from labkit.scheduling.workloads import JobGroup

__all__ = ["CLUB_HOURS", "GRADING_HOURS", "HOMEWORK_H", "MAX_LAB_JOBS", "SUBMIT_SPREAD_H", "YEARS",
           "calendar_cost_krw_per_gpu_h", "class_day_groups", "class_periods", "server_shape"]

#: The club's fine-tuning run [h, A]: a working day's run, as the shared cluster's 4-h jobs x 1.5.
CLUB_HOURS = 6.0
#: The grading batch's run time [h, A]: a third of the shared cluster's 6-h grading (a smaller
#: school's assignments).
GRADING_HOURS = 2.0
#: Students submit their lab job in the first 5 minutes of a period [h, A].
SUBMIT_SPREAD_H = 5 / 60
#: After-school homework window [h, A]: clubs and homework until 3 h after the last class.
HOMEWORK_H = 3.0
#: Most class-lab jobs the day simulates [jobs]: a big class in a long timetable keeps its
#: first periods only (200 students: 3 periods), so that every policy x placement of lesson
#: 08's tasks runs in seconds on a 2-core machine (the default day: 8 x 28 = 224).
MAX_LAB_JOBS = 600
#: Straight-line depreciation of the server [years]: 4 years, as the shared cluster's
#: calendar cost (data/scheduling/school_day.yaml; Epoch AI training-cost-trends, 3-4 years).
YEARS = 4
_HOURS_PER_YEAR = 8_760


def server_shape(n_gpus: int) -> tuple[int, int]:
    """Return (servers, GPUs per server) for the school's ``n_gpus``.

    Up to 16 GPUs (the simulator's widest node) are one server, as the case says; a room of
    more is servers of 8 (HGX/DGX boards) when 8 divides the count, else of the largest
    divisor of it up to 16 (24 -> 3 x 8, 20 -> 2 x 10, 17 -> 17 x 1).

    Raises
    ------
    labkit.validate.InputError
        If ``n_gpus`` is not a positive integer.
    """
    n = validate.integer("n_gpus", n_gpus, minimum=1)
    if n <= MAX_GPUS_PER_NODE:
        return 1, n
    per = 8 if n % 8 == 0 else max(d for d in range(1, MAX_GPUS_PER_NODE + 1) if n % d == 0)
    return n // per, per


def class_periods(class_start_h: float, class_end_h: float) -> list[float]:
    """Return the start of every one-hour class period from ``class_start_h`` to ``class_end_h``.

    A period starts on the hour after the start (09:00, 10:00, ..., 16:00 for 9-17 h); a last
    part-hour shorter than one period is not a period, but class hours shorter than an hour
    are still one period. [h, local time]

    Raises
    ------
    labkit.validate.InputError
        If the times are not 0 <= start < end <= 24.
    """
    start = validate.non_negative("class_start_h", class_start_h)
    end = validate.at_most("class_end_h", validate.positive("class_end_h", class_end_h), 24.0,
                           "hours in a day")
    if end <= start:
        raise validate.InputError("class_end_h", "at_least", end,
                                  f"class_end_h must be after class_start_h ({start})",
                                  limit=start)
    return [start + k for k in range(max(math.floor(end - start + 1e-9), 1))]


def class_day_groups(*, students: int, n_gpus: int, class_start_h: float, class_end_h: float,
                     job_hours: float, lab_profile: str | None, always_on_frac: float,
                     value_krw_per_gpu_h: float) -> tuple[JobGroup, ...]:
    """Return 우리 학교's day as job groups (the module docstring lists them).

    Parameters
    ----------
    students : int
        One class's students; one lab job each per period. [1-200]
    n_gpus : int
        GPUs in the school's one server. [GPUs]
    class_start_h, class_end_h : float
        Class hours. [h, local time]
    job_hours : float
        One lab job's run time. [h, > 0]
    lab_profile : str or None
        MIG profile one lab job runs on ("1g.10gb"); None: a whole GPU each.
    always_on_frac : float
        Share of the server the always-on chatbot uses; 0: no chatbot. [fraction]
    value_krw_per_gpu_h : float
        What one GPU-hour of completed work is worth: what renting it would cost. [KRW/GPU-h]

    Returns
    -------
    tuple of JobGroup
        ``school-chatbot`` (when ``always_on_frac`` > 0), ``club-finetune``,
        ``school-grading``, ``lab-1`` ... ``lab-P``, ``school-homework``, ``club-eval``.

    Raises
    ------
    labkit.validate.InputError
        For a count or time out of range.
    """
    n = validate.integer("students", students, minimum=1)
    gpus = validate.integer("n_gpus", n_gpus, minimum=1)
    on = validate.fraction("always_on_frac", always_on_frac, allow_zero=True)
    value = validate.non_negative("value_krw_per_gpu_h", value_krw_per_gpu_h)
    timetable = class_periods(class_start_h, class_end_h)
    periods = timetable[:max(MAX_LAB_JOBS // n, 1)]
    widest = server_shape(gpus)[1]  # a job runs on one server
    groups: list[JobGroup] = []
    if on > 0:
        share = on * gpus
        chat = share if share < 1 else float(min(math.ceil(share - 1e-9), widest))
        groups.append(JobGroup("school-chatbot", "inference_realtime", 1, (0.0, 0.0), chat, 24.0,
                               "service", 4, value))
    groups.append(JobGroup("club-finetune", "fine_tuning", 1,
                           (max(periods[0] - 1, 0.0),) * 2, float(max(min(gpus // 2, widest), 1)),
                           CLUB_HOURS, "club", 2, value, checkpoint_interval_h=0.5))
    groups.append(JobGroup("school-grading", "inference_batch", 1, (periods[0] + 0.5,) * 2,
                           float(max(min(gpus // 4, widest), 1)), GRADING_HOURS, "service", 1,
                           value))
    for k, p in enumerate(periods, start=1):
        groups.append(JobGroup(f"lab-{k}", "class_lab", n, (p, p + SUBMIT_SPREAD_H), 1.0,
                               job_hours, "class", 3, value, lab_profile, hours_jitter=0.1))
    last = timetable[-1] + 1  # after the last class of the timetable
    groups.append(JobGroup("school-homework", "class_lab", max(n // 2, 1),
                           (last, max(min(last + HOMEWORK_H, 23.0), last)), 1.0, job_hours,
                           "class", 2, value, lab_profile, hours_jitter=0.3))
    groups.append(JobGroup("club-eval", "evaluation", gpus, (18.0, 23.0), 1.0, 0.5, "club", 1,
                           value, hours_jitter=0.4))
    return tuple(groups)


def calendar_cost_krw_per_gpu_h(server_price_krw: float, n_gpus: int) -> float:
    """Return what one installed GPU costs per calendar hour, busy or idle. [KRW/GPU-h]

    The server's price spread over its GPUs and :data:`YEARS` years of 8,760 h (straight-line
    depreciation; power is billed in lesson 07): 4.2억 원 / 8 GPUs / 35,040 h = 1,498 원.

    Raises
    ------
    labkit.validate.InputError
        For a negative price or a GPU count below 1.
    """
    price = validate.non_negative("server_price_krw", server_price_krw)
    gpus = validate.integer("n_gpus", n_gpus, minimum=1)
    return price / (gpus * YEARS * _HOURS_PER_YEAR)
