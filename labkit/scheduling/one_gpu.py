"""One GPU shared by several jobs: whole-GPU FIFO, time-slicing, MPS and fixed MIG devices.

Pure. The single-GPU view (lesson 02) of the cluster simulator: the jobs are
:class:`labkit.scheduling.Job` values with ``memory_mib`` and ``max_share`` set (a job
progresses at most at ``max_share`` GPU-hours per hour; its work is ``hours x max_share``).

- :func:`run_fifo` — whole GPU, one job at a time in submit order: the cluster simulator
  (:func:`labkit.scheduling.simulate`, policy ``"fifo"``) on one node of one GPU.
- :func:`run_rate_shared` — every job starts at once and the GPU's compute is divided among the
  resident jobs: ``"time_slicing"`` (one context at a time: each of ``n`` jobs runs at
  ``max_share / n``; context-switch cost left out, no published figure) or ``"mps"`` (kernels
  run together: max-min fair water-filling, each job capped at ``max_share``). No memory
  limits: a job that does not fit next to the resident ones runs out of memory (NVIDIA MIG user
  guide, "CUDA concurrency mechanisms"; NVIDIA MPS documentation; GPU Operator time-slicing).
- :func:`run_slots` — fixed MIG devices (slots): each is a separate GPU with its memory and
  compute share; jobs wait in submit order for a free slot big enough (best fit: the smallest
  memory that holds the job) and run at ``min(slot share, max_share)``.

Used in: notebooks/02_mig.ipynb
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from labkit.scheduling.jobs import EPS, Cluster, Job
from labkit.scheduling.simulator import simulate

RATE_MODES = ("time_slicing", "mps")


@dataclass(frozen=True)
class Slot:
    """A MIG device a job can run on: its memory [MiB] and its share of the GPU's compute."""

    name: str
    memory_mib: float
    share: float


@dataclass(frozen=True)
class JobRun:
    """What happened to one job.

    Attributes
    ----------
    name : str or int
        The job's id.
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
class OneGpuRun:
    """The runs of every job (in the jobs' order) and the GPU-hours held and of useful work."""

    runs: tuple[JobRun, ...]
    held_gpu_h: float
    useful_gpu_h: float


def _memory(job: Job) -> float:
    return 0.0 if job.memory_mib is None else job.memory_mib


def _order(jobs: Sequence[Job]) -> list[int]:
    return sorted(range(len(jobs)), key=lambda i: (jobs[i].submit_h, i))


def _lost(job: Job, outcome: str) -> JobRun:
    return JobRun(job.id, job.submit_h, None, None, outcome)


def run_fifo(jobs: Sequence[Job], gpu_memory_mib: float) -> OneGpuRun:
    """Run the jobs one at a time on the whole GPU, in submit order (the cluster simulator).

    A job needing more than ``gpu_memory_mib`` runs out of memory; the others run with
    :func:`labkit.scheduling.simulate` on one node of one GPU, policy ``"fifo"``.
    """
    runs: dict[int, JobRun] = {}
    fits = [i for i, j in enumerate(jobs) if _memory(j) <= gpu_memory_mib]
    for i in set(range(len(jobs))) - set(fits):
        runs[i] = _lost(jobs[i], "oom")
    held = useful = 0.0
    if fits:
        # ids are positions: lesson 02's job names need not be unique
        whole = [Job(k, jobs[i].submit_h, 1, jobs[i].hours, "class_lab")
                 for k, i in enumerate(fits)]
        result = simulate(whole, Cluster(1, 1), "fifo")
        for k, start, end in zip(result.schedule["job"], result.schedule["start_h"],
                                 result.schedule["end_h"], strict=True):
            job = jobs[fits[k]]
            runs[fits[k]] = JobRun(job.id, job.submit_h, float(start), float(end), "done")
            useful += job.work_gpu_h
        held = result.held_gpu_h()
    return OneGpuRun(tuple(runs[i] for i in range(len(jobs))), held, useful)


def run_slots(jobs: Sequence[Job], slots: Sequence[Slot]) -> OneGpuRun:
    """Run the jobs on fixed MIG devices: best-fit free slot, in submit order (skip-ahead)."""
    runs: dict[int, JobRun] = {}
    biggest = max((s.memory_mib for s in slots), default=-1.0)
    pending = [i for i in _order(jobs) if _memory(jobs[i]) <= biggest]
    for i in range(len(jobs)):
        if _memory(jobs[i]) > biggest:
            runs[i] = _lost(jobs[i], "no_slot")
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
        for k in [k for k, end in busy.items() if end <= t + EPS]:
            del busy[k]
        while pending and jobs[pending[0]].submit_h <= t + EPS:
            queue.append(pending.pop(0))
        for i in list(queue):
            s = _best_slot(slots, busy, _memory(jobs[i]))
            if s is None:
                continue
            job = jobs[i]
            end = t + job.work_gpu_h / min(slots[s].share, job.max_share)
            busy[s] = end
            held += slots[s].share * (end - t)
            useful += job.work_gpu_h
            runs[i] = JobRun(job.id, job.submit_h, t, end, "done", slot=slots[s].name)
            queue.remove(i)
    return OneGpuRun(tuple(runs[i] for i in range(len(jobs))), held, useful)


def _best_slot(slots: Sequence[Slot], busy: dict[int, float], memory_mib: float) -> int | None:
    """The free slot with the least memory that holds the job (then the larger share)."""
    free = [k for k in range(len(slots)) if k not in busy and slots[k].memory_mib >= memory_mib]
    if not free:
        return None
    return min(free, key=lambda k: (slots[k].memory_mib, -slots[k].share, k))


def rates(jobs: Sequence[Job], active: Sequence[int], mode: str) -> dict[int, float]:
    """Return each active job's progress rate under time-slicing or MPS. [GPU-h per h]"""
    if mode == "time_slicing":
        return {i: jobs[i].max_share / len(active) for i in active}
    out: dict[int, float] = {}  # MPS: max-min fair water-filling of one GPU
    left = 1.0
    todo = sorted(active, key=lambda i: jobs[i].max_share)
    for n, i in enumerate(todo):
        out[i] = min(jobs[i].max_share, left / (len(todo) - n))
        left -= out[i]
    return out


class _RateShared:
    """Processor sharing of one GPU: the resident jobs progress at :func:`rates`."""

    def __init__(self, jobs: Sequence[Job], mode: str, gpu_memory_mib: float) -> None:
        self.jobs, self.mode, self.memory = jobs, mode, gpu_memory_mib
        self.runs: dict[int, JobRun] = {}
        self.pending = _order(jobs)
        self.remaining: dict[int, float] = {}
        self.started: dict[int, float] = {}
        self.shared: set[int] = set()
        self.resident = 0.0
        self.t = 0.0
        self.held = self.useful = 0.0

    def run(self) -> OneGpuRun:
        jobs = self.jobs
        for _ in range(4 * len(jobs) + 4):  # each step ends a job or admits the next arrivals
            if not self.pending and not self.remaining:
                break
            if self.remaining:
                self._advance()
            elif self.pending:
                self.t = max(self.t, jobs[self.pending[0]].submit_h)
            self._admit()
            if len(self.remaining) > 1:
                self.shared.update(self.remaining)
        return OneGpuRun(tuple(self.runs[i] for i in range(len(jobs))), self.held, self.useful)

    def _advance(self) -> None:
        """Run the resident jobs to the next completion or arrival."""
        jobs, remaining = self.jobs, self.remaining
        r = rates(jobs, list(remaining), self.mode)
        dt = min(remaining[i] / r[i] for i in remaining)
        if self.pending:
            dt = min(dt, jobs[self.pending[0]].submit_h - self.t)
        dt = max(dt, 0.0)
        for i in remaining:
            remaining[i] -= r[i] * dt
        self.held += dt
        self.t += dt
        for i in [i for i in remaining if remaining[i] <= EPS * jobs[i].work_gpu_h]:
            del remaining[i]
            self.resident -= _memory(jobs[i])
            self.useful += jobs[i].work_gpu_h
            self.runs[i] = JobRun(jobs[i].id, jobs[i].submit_h, self.started[i], self.t, "done",
                                  shared=i in self.shared)

    def _admit(self) -> None:
        """Start the jobs that have arrived, or run them out of memory."""
        jobs = self.jobs
        while self.pending and jobs[self.pending[0]].submit_h <= self.t + EPS:
            i = self.pending.pop(0)
            job = jobs[i]
            if self.resident + _memory(job) > self.memory:
                self.runs[i] = _lost(job, "oom")
                continue
            self.resident += _memory(job)
            self.remaining[i] = job.work_gpu_h
            self.started[i] = self.t


def run_rate_shared(jobs: Sequence[Job], mode: str, gpu_memory_mib: float) -> OneGpuRun:
    """Run every job at once on the GPU under ``"time_slicing"`` or ``"mps"`` (no isolation).

    Held GPU-hours count the whole GPU while any job runs.
    """
    return _RateShared(jobs, mode, gpu_memory_mib).run()
