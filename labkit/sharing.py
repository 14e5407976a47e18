"""One GPU shared by a class: whole-GPU FIFO, time-slicing, MPS and a MIG layout, compared.

Pure (numbers in, numbers out). The single-GPU view of lesson 02; the cluster view is lesson 08.

The job model
-------------
A job needs ``memory_mib`` of GPU memory and runs ``duration_h`` when it has a whole GPU to
itself; it can use at most ``max_share`` of the GPU's compute (a small class job cannot fill
an H100). Its work is ``duration_h x max_share`` GPU-hours; given a share ``s`` of the GPU it
progresses at ``min(s, max_share)`` GPU-hours per hour.

The four ways to share (NVIDIA MIG user guide, "CUDA concurrency mechanisms"; NVIDIA MPS
documentation; GPU Operator time-slicing):

- ``fifo`` — whole GPU, one job at a time, in submit order.
- ``time_slicing`` — every job starts at once; the GPU runs one context at a time, so with
  ``n`` jobs each gets ``1/n`` of the time at its own rate (``max_share / n``). No memory
  limits: a job that does not fit next to the resident ones runs out of memory. Context-switch
  cost is left out (no published figure to use), so real time-slicing is a little slower.
- ``mps`` — every job starts at once and kernels run concurrently: the GPU is shared max-min
  fairly, each job capped at its ``max_share``. No memory limit by default either; no memory
  bandwidth QoS (jobs running together are counted as interfering).
- ``mig`` — each MIG device (slot) is a separate GPU with its memory and compute share
  (``compute slices / board slices``, so 1g = 1/7); jobs wait in submit order for a free slot
  big enough (best fit: the smallest memory that holds the job).

Built on :mod:`labkit.scheduling`: a job is a :class:`labkit.scheduling.Job` (this module's
:class:`Job` is its lesson-02 constructor), FIFO runs on the cluster simulator, the sharing
modes on :mod:`labkit.scheduling.one_gpu`, and the metrics come from
:func:`labkit.scheduling.report.run_metrics`.

Metrics follow the course's scheduling conventions: JCT = completion - submit, wait = start -
submit, makespan = last completion - first submit, allocation = share held x hours held /
(1 GPU x makespan) (a 1g slice counts 1/7).

Used in: notebooks/02_mig.ipynb
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import pandas as pd

from labkit import scheduling, validate
from labkit.mig import Layout
from labkit.scheduling import one_gpu
from labkit.scheduling.one_gpu import JobRun, Slot
from labkit.scheduling.report import RunMetrics, run_metrics

__all__ = [
    "MAX_JOBS",
    "MODES",
    "Job",
    "JobRun",
    "ModeResult",
    "Slot",
    "class_jobs",
    "compare",
    "mig_slots",
    "simulate",
    "summary_table",
]

MODES = ("fifo", "time_slicing", "mps", "mig")
#: Most jobs one simulation takes (a class is 10-40 students; bounds every loop).
MAX_JOBS = 200


class Job(scheduling.Job):
    """A student's job: a one-GPU :class:`labkit.scheduling.Job` of kind ``"class_lab"``.

    Parameters
    ----------
    name : str
        Its id (``.id``; also ``.name``).
    memory_mib : float
        GPU memory it needs. [MiB]
    duration_h : float
        Run time alone on a whole GPU (``.hours``; also ``.duration_h``). [h]
    max_share : float, default 1
        Largest fraction of the GPU's compute it can use. [fraction, (0, 1]]
    submit_h : float, default 0
        When it is submitted. [h]

    Raises
    ------
    InputError
        For a negative memory, a non-positive duration, a share outside (0, 1] or a negative
        submit time.
    """

    def __init__(self, name: str, memory_mib: float, duration_h: float,
                 max_share: float = 1.0, submit_h: float = 0.0) -> None:
        validate.non_negative("memory_mib", memory_mib)
        validate.positive("duration_h", duration_h)
        super().__init__(name, submit_h, 1, duration_h, "class_lab", memory_mib=memory_mib,
                         max_share=max_share)

    @property
    def name(self) -> str:
        """The job's name (its id)."""
        return str(self.id)

    @property
    def duration_h(self) -> float:
        """Run time alone on a whole GPU. [h]"""
        return self.hours


@dataclass(frozen=True)
class ModeResult:
    """One sharing mode's outcome for a set of jobs.

    Attributes
    ----------
    mode : str
        One of :data:`MODES`.
    runs : tuple of JobRun
        In the jobs' order.
    held_gpu_h : float
        Sum of the GPU share held x hours held (the whole GPU while any job runs, for FIFO,
        time-slicing and MPS; the slot's share while busy, for MIG). [GPU-h]
    useful_gpu_h : float
        Work of the completed jobs. [GPU-h]
    """

    mode: str
    runs: tuple[JobRun, ...]
    held_gpu_h: float
    useful_gpu_h: float

    def _done(self) -> list[JobRun]:
        return [r for r in self.runs if r.outcome == "done"]

    @cached_property
    def metrics(self) -> RunMetrics:
        """Makespan, mean JCT and wait, allocation (``scheduling.report.run_metrics``)."""
        done = self._done()
        return run_metrics([r.submit_h for r in done], [r.start_h or 0.0 for r in done],
                           [r.end_h or 0.0 for r in done], held_gpu_h=self.held_gpu_h,
                           first_submit_h=min((r.submit_h for r in self.runs), default=None))

    @property
    def completed(self) -> int:
        """Jobs that finished."""
        return len(self._done())

    @property
    def makespan_h(self) -> float:
        """Last completion - first submit (0 when nothing completed). [h]"""
        return self.metrics.makespan_h

    @property
    def mean_jct_h(self) -> float:
        """Mean completion - submit of the completed jobs (NaN if none). [h]"""
        return self.metrics.mean_jct_h

    @property
    def mean_wait_h(self) -> float:
        """Mean start - submit of the completed jobs (NaN if none). [h]"""
        return self.metrics.mean_wait_h

    @property
    def allocation_frac(self) -> float:
        """Share held x hours / makespan (how busy the GPU looks). [fraction]"""
        return self.metrics.allocation

    @property
    def useful_frac(self) -> float:
        """Work done / makespan (how much of the GPU did work). [fraction]"""
        span = self.makespan_h
        return self.useful_gpu_h / span if span > 0 else 0.0

    @property
    def oom_jobs(self) -> int:
        """Jobs that ran out of memory or found no MIG device big enough."""
        return sum(1 for r in self.runs if r.outcome != "done")

    @property
    def interfering_jobs(self) -> int:
        """Jobs that shared compute and memory bandwidth with others without isolation."""
        return sum(1 for r in self.runs if r.shared)


def class_jobs(n_students: int, memory_mib: float, duration_h: float, max_share: float,
               *, stagger_h: float = 0.0) -> list[Job]:
    """Return ``n_students`` identical jobs ``S1..Sn``, submitted ``stagger_h`` apart.

    Raises
    ------
    InputError
        ``n_students`` outside 1..:data:`MAX_JOBS`, and the :class:`Job` rules.

    Used in: notebooks/02_mig.ipynb
    """
    n = validate.integer("n_students", n_students, minimum=1)
    validate.at_most("n_students", n, MAX_JOBS, "MAX_JOBS")
    validate.non_negative("stagger_h", stagger_h)
    return [Job(f"S{i + 1}", memory_mib, duration_h, max_share, i * stagger_h)
            for i in range(n)]


def mig_slots(layout: Layout) -> list[Slot]:
    """Return the MIG devices of a layout as slots (one default CI per GPU instance).

    Share = the GI's compute slices over the board's (1g = 1/7 on a 7-slice board); memory =
    the profile's ``memorySizeMB``.
    """
    total = layout.spec.compute_slices
    return [Slot(f"{gi.profile.name}@{gi.start}", gi.profile.memory_mib,
                 gi.profile.compute_slices / total) for gi in layout.sorted_instances()]


def _check(jobs: Sequence[scheduling.Job], gpu_memory_mib: float) -> list[scheduling.Job]:
    jobs = list(jobs)
    if not all(isinstance(j, scheduling.Job) for j in jobs):
        raise TypeError("jobs must be Job objects")
    validate.at_most("jobs", len(jobs), MAX_JOBS, "MAX_JOBS")
    validate.positive("gpu_memory_mib", gpu_memory_mib)
    return jobs


def simulate(jobs: Sequence[scheduling.Job], mode: str, *, gpu_memory_mib: float,
             slots: Sequence[Slot] = ()) -> ModeResult:
    """Run ``jobs`` on one GPU shared in ``mode`` (see the module docstring).

    Parameters
    ----------
    jobs : sequence of Job
        At most :data:`MAX_JOBS` (any :class:`labkit.scheduling.Job`; ``memory_mib`` None
        counts as 0).
    mode : {"fifo", "time_slicing", "mps", "mig"}
    gpu_memory_mib : float
        The whole GPU's memory. [MiB]
    slots : sequence of Slot
        The MIG devices (``mode="mig"``; see :func:`mig_slots`).

    Returns
    -------
    ModeResult

    Raises
    ------
    InputError
        For an unknown mode, too many jobs or a non-positive memory.

    Used in: notebooks/02_mig.ipynb
    """
    validate.one_of("mode", mode, MODES)
    jobs = _check(jobs, gpu_memory_mib)
    if mode == "fifo":
        run = one_gpu.run_fifo(jobs, gpu_memory_mib)
    elif mode == "mig":
        run = one_gpu.run_slots(jobs, list(slots))
    else:
        run = one_gpu.run_rate_shared(jobs, mode, gpu_memory_mib)
    return ModeResult(mode, run.runs, run.held_gpu_h, run.useful_gpu_h)


def compare(jobs: Sequence[scheduling.Job], *, gpu_memory_mib: float,
            slots: Sequence[Slot]) -> dict[str, ModeResult]:
    """Return :func:`simulate` for every mode, in :data:`MODES` order.

    Used in: notebooks/02_mig.ipynb
    """
    return {mode: simulate(jobs, mode, gpu_memory_mib=gpu_memory_mib, slots=slots)
            for mode in MODES}


def summary_table(results: dict[str, ModeResult]) -> pd.DataFrame:
    """Return one row per mode: makespan, mean JCT and wait [h], allocation and useful
    fractions, jobs that ran out of memory, jobs that interfered."""
    rows = [{
        "mode": mode, "makespan_h": r.makespan_h, "mean_jct_h": r.mean_jct_h,
        "mean_wait_h": r.mean_wait_h, "allocation_frac": r.allocation_frac,
        "useful_frac": r.useful_frac, "completed": r.completed, "oom_jobs": r.oom_jobs,
        "interfering_jobs": r.interfering_jobs,
    } for mode, r in results.items()]
    return pd.DataFrame(rows).set_index("mode")
