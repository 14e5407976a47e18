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

Metrics follow the course's scheduling conventions: JCT = completion - submit, wait = start -
submit, makespan = last completion - first submit, allocation = share held x hours held /
(1 GPU x makespan) (a 1g slice counts 1/7).

Used in: notebooks/02_mig.ipynb
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from labkit import validate
from labkit.mig import Layout

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
_EPS = 1e-9


@dataclass(frozen=True)
class Job:
    """A student's job.

    Parameters
    ----------
    name : str
    memory_mib : float
        GPU memory it needs. [MiB]
    duration_h : float
        Run time alone on a whole GPU. [h]
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

    name: str
    memory_mib: float
    duration_h: float
    max_share: float = 1.0
    submit_h: float = 0.0

    def __post_init__(self) -> None:
        validate.non_negative("memory_mib", self.memory_mib)
        validate.positive("duration_h", self.duration_h)
        validate.fraction("max_share", self.max_share)
        validate.non_negative("submit_h", self.submit_h)

    @property
    def work_gpu_h(self) -> float:
        """GPU-hours of work: ``duration_h x max_share``. [GPU-h]"""
        return self.duration_h * self.max_share


@dataclass(frozen=True)
class Slot:
    """A MIG device a job can run on: its memory and its share of the GPU's compute."""

    name: str
    memory_mib: float
    share: float


@dataclass(frozen=True)
class JobRun:
    """What happened to one job.

    Attributes
    ----------
    name : str
    submit_h : float
    start_h, end_h : float or None
        None when it never ran. [h]
    outcome : str
        ``"done"``, ``"oom"`` (out of memory next to the others, or bigger than the GPU) or
        ``"no_slot"`` (bigger than every MIG device of the layout).
    slot : str
        The MIG device it ran on (MIG only).
    shared : bool
        Whether it ran alongside another job without isolation (time-slicing, MPS).
    """

    name: str
    submit_h: float
    start_h: float | None
    end_h: float | None
    outcome: str
    slot: str = ""
    shared: bool = False

    @property
    def jct_h(self) -> float | None:
        """Completion - submit. [h]"""
        return None if self.end_h is None else self.end_h - self.submit_h

    @property
    def wait_h(self) -> float | None:
        """Start - submit. [h]"""
        return None if self.start_h is None else self.start_h - self.submit_h


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

    @property
    def completed(self) -> int:
        """Jobs that finished."""
        return len(self._done())

    @property
    def makespan_h(self) -> float:
        """Last completion - first submit (0 when nothing completed). [h]"""
        done = self._done()
        if not done:
            return 0.0
        return max(r.end_h or 0.0 for r in done) - min(r.submit_h for r in self.runs)

    @property
    def mean_jct_h(self) -> float:
        """Mean completion - submit of the completed jobs (NaN if none). [h]"""
        done = self._done()
        return sum(r.jct_h or 0.0 for r in done) / len(done) if done else math.nan

    @property
    def mean_wait_h(self) -> float:
        """Mean start - submit of the completed jobs (NaN if none). [h]"""
        done = self._done()
        return sum(r.wait_h or 0.0 for r in done) / len(done) if done else math.nan

    @property
    def allocation_frac(self) -> float:
        """Share held x hours / makespan (how busy the GPU looks). [fraction]"""
        span = self.makespan_h
        return self.held_gpu_h / span if span > 0 else 0.0

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


def _check(jobs: Sequence[Job], gpu_memory_mib: float) -> list[Job]:
    jobs = list(jobs)
    if not all(isinstance(j, Job) for j in jobs):
        raise TypeError("jobs must be Job objects")
    validate.at_most("jobs", len(jobs), MAX_JOBS, "MAX_JOBS")
    validate.positive("gpu_memory_mib", gpu_memory_mib)
    return jobs


def simulate(jobs: Sequence[Job], mode: str, *, gpu_memory_mib: float,
             slots: Sequence[Slot] = ()) -> ModeResult:
    """Run ``jobs`` on one GPU shared in ``mode`` (see the module docstring).

    Parameters
    ----------
    jobs : sequence of Job
        At most :data:`MAX_JOBS`.
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
        return _fifo(jobs, gpu_memory_mib)
    if mode == "mig":
        return _mig(jobs, list(slots))
    return _shared(jobs, mode, gpu_memory_mib)


def _order(jobs: Sequence[Job]) -> list[int]:
    return sorted(range(len(jobs)), key=lambda i: (jobs[i].submit_h, i))


def _fifo(jobs: list[Job], memory: float) -> ModeResult:
    runs: dict[int, JobRun] = {}
    t = 0.0
    held = useful = 0.0
    for i in _order(jobs):
        job = jobs[i]
        if job.memory_mib > memory:
            runs[i] = JobRun(job.name, job.submit_h, None, None, "oom")
            continue
        start = max(t, job.submit_h)
        t = start + job.duration_h
        held += job.duration_h
        useful += job.work_gpu_h
        runs[i] = JobRun(job.name, job.submit_h, start, t, "done")
    return ModeResult("fifo", tuple(runs[i] for i in range(len(jobs))), held, useful)


def _mig(jobs: list[Job], slots: list[Slot]) -> ModeResult:
    runs: dict[int, JobRun] = {}
    biggest = max((s.memory_mib for s in slots), default=-1.0)
    pending = [i for i in _order(jobs) if jobs[i].memory_mib <= biggest]
    for i in range(len(jobs)):
        if jobs[i].memory_mib > biggest:
            runs[i] = JobRun(jobs[i].name, jobs[i].submit_h, None, None, "no_slot")
    busy: dict[int, float] = {}  # slot index -> end time
    queue: list[int] = []
    t = 0.0
    held = useful = 0.0
    for _ in range(4 * len(jobs) + 4):  # each pass ends a job or admits one
        if not pending and not queue:
            break
        times = list(busy.values())
        if pending:
            times.append(jobs[pending[0]].submit_h)
        if times:
            t = max(t, min(times))
        for k in [k for k, end in busy.items() if end <= t + _EPS]:
            del busy[k]
        while pending and jobs[pending[0]].submit_h <= t + _EPS:
            queue.append(pending.pop(0))
        for i in list(queue):
            job = jobs[i]
            free = [k for k in range(len(slots)) if k not in busy
                    and slots[k].memory_mib >= job.memory_mib]
            if not free:
                continue
            k = min(free, key=lambda k: (slots[k].memory_mib, -slots[k].share, k))
            rate = min(slots[k].share, job.max_share)
            end = t + job.work_gpu_h / rate
            busy[k] = end
            held += slots[k].share * (end - t)
            useful += job.work_gpu_h
            runs[i] = JobRun(job.name, job.submit_h, t, end, "done", slot=slots[k].name)
            queue.remove(i)
    return ModeResult("mig", tuple(runs[i] for i in range(len(jobs))), held, useful)


def _rates(jobs: list[Job], active: list[int], mode: str) -> dict[int, float]:
    if mode == "time_slicing":
        return {i: jobs[i].max_share / len(active) for i in active}
    rates: dict[int, float] = {}  # MPS: max-min fair water-filling of one GPU
    left = 1.0
    todo = sorted(active, key=lambda i: jobs[i].max_share)
    for n, i in enumerate(todo):
        rates[i] = min(jobs[i].max_share, left / (len(todo) - n))
        left -= rates[i]
    return rates


def _shared(jobs: list[Job], mode: str, memory: float) -> ModeResult:
    runs: dict[int, JobRun] = {}
    pending = _order(jobs)
    remaining: dict[int, float] = {}
    started: dict[int, float] = {}
    shared: set[int] = set()
    resident = 0.0
    t = 0.0
    held = useful = 0.0
    for _ in range(4 * len(jobs) + 4):
        if not pending and not remaining:
            break
        if remaining:
            rates = _rates(jobs, list(remaining), mode)
            dt = min(remaining[i] / rates[i] for i in remaining)
            if pending:
                dt = min(dt, jobs[pending[0]].submit_h - t)
            dt = max(dt, 0.0)
            for i in remaining:
                remaining[i] -= rates[i] * dt
            held += dt
            t += dt
            for i in [i for i in remaining if remaining[i] <= _EPS * jobs[i].work_gpu_h]:
                del remaining[i]
                resident -= jobs[i].memory_mib
                useful += jobs[i].work_gpu_h
                runs[i] = JobRun(jobs[i].name, jobs[i].submit_h, started[i], t, "done",
                                 shared=i in shared)
        elif pending:
            t = max(t, jobs[pending[0]].submit_h)
        while pending and jobs[pending[0]].submit_h <= t + _EPS:
            i = pending.pop(0)
            job = jobs[i]
            if resident + job.memory_mib > memory:
                runs[i] = JobRun(job.name, job.submit_h, None, None, "oom")
                continue
            resident += job.memory_mib
            remaining[i] = job.work_gpu_h
            started[i] = t
        if len(remaining) > 1:
            shared.update(remaining)
    return ModeResult(mode, tuple(runs[i] for i in range(len(jobs))), held, useful)


def compare(jobs: Sequence[Job], *, gpu_memory_mib: float,
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
