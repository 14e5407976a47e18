"""Scheduling results: the schedule, per-job table, metrics; demand curves and capacity.

Pure. Metrics follow the course's check cases (``shared/cases/scheduling.md``): JCT =
completion - submit, queue delay = first start - submit, makespan = last completion - first
submit, allocation = GPU-hours held / (installed GPUs x makespan).

Used in: notebooks/08_orchestration.ipynb
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from labkit import validate
from labkit.gpumodels import MigSpec
from labkit.scheduling.jobs import EPS, KINDS, Cluster, Job, mig_profile
from labkit.scheduling.state import ClusterState, Demand, Holding, node_fragmentation

if TYPE_CHECKING:
    from labkit.scheduling.simulator import Sim


@dataclass(frozen=True)
class Attempt:
    """One run of a job: where, when, and whether (and how much work) it lost to preemption."""

    job: int
    node: int
    holdings: tuple[Holding, ...]
    start: float
    end: float
    preempted: bool
    lost_h: float


@dataclass(frozen=True)
class RunMetrics:
    """The headline numbers of a schedule (the course's conventions).

    Attributes
    ----------
    makespan_h : float
        Last completion - first submit (0 when nothing completed). [h]
    mean_jct_h, mean_wait_h : float
        Mean completion - submit and mean first start - submit of the completed jobs (NaN
        when none completed). [h]
    allocation : float
        GPU-hours held / (installed GPUs x makespan); 0 for a zero makespan. [fraction]
    """

    makespan_h: float
    mean_jct_h: float
    mean_wait_h: float
    allocation: float


def run_metrics(submit_h: Sequence[float] | np.ndarray, start_h: Sequence[float] | np.ndarray,
                end_h: Sequence[float] | np.ndarray, *, held_gpu_h: float,
                installed_gpus: float = 1.0,
                first_submit_h: float | None = None) -> RunMetrics:
    """Return makespan, mean JCT, mean wait and allocation of the completed jobs.

    The one metrics path of the cluster simulator (lesson 08) and of one shared GPU (lesson 02).

    Parameters
    ----------
    submit_h, start_h, end_h : sequence of float, shape (n,)
        Submit, first start and completion of each completed job. [h]
    held_gpu_h : float
        GPU-hours held (shares and MIG slices by their share). [GPU-h]
    installed_gpus : float, default 1
        GPUs installed. [GPU]
    first_submit_h : float, optional
        The first submit of all jobs, completed or not (default: the first of ``submit_h``). [h]
    """
    submit = np.asarray(submit_h, dtype=float)
    if submit.size == 0:
        return RunMetrics(0.0, math.nan, math.nan, 0.0)
    start, end = np.asarray(start_h, dtype=float), np.asarray(end_h, dtype=float)
    t0 = float(submit.min()) if first_submit_h is None else first_submit_h
    makespan = float(end.max()) - t0
    return RunMetrics(
        makespan_h=makespan, mean_jct_h=float((end - submit).mean()),
        mean_wait_h=float((start - submit).mean()),
        allocation=held_gpu_h / (installed_gpus * makespan) if makespan > 0 else 0.0)


@dataclass(frozen=True, eq=False)
class SimulationResult:
    """The outcome of :func:`simulate`: the schedule, per-job results and the metrics.

    Attributes
    ----------
    schedule : pandas.DataFrame
        One row per run of a job (a preempted job has several), ordered by start: ``job``,
        ``node``, ``gpus`` (GPUs held; a share or MIG instances count by their share) [GPU],
        ``start_h``, ``end_h`` [h], ``preempted`` (bool), then ``kind``, ``tenant``, ``lost_h``
        (work lost at this preemption) [h] and ``gpu_ids`` (tuple of global GPU indices,
        node x gpus_per_node + local index).
    jobs : pandas.DataFrame
        One row per job, in listing order: ``job``, ``kind``, ``tenant``, ``priority``,
        ``submit_h``, ``start_h`` (first start), ``end_h`` (completion), ``wait_h``
        (first start - submit), ``jct_h``, ``gpus`` [GPU], ``hours``, ``lost_h``,
        ``preemptions``, ``value_krw``.
    timeline : pandas.DataFrame
        After each scheduling pass: ``t_h``, ``queued`` (jobs waiting) and ``gpus_held`` [GPU].
    makespan_h, mean_jct_h : float
        Last completion - first submit; mean of completion - submit. [h]
    allocation : float
        GPU-hours held / (installed GPUs x makespan). [fraction, 0-1]
    """

    cluster: Cluster
    policy: str
    placement: str
    preemption: bool
    schedule: pd.DataFrame
    jobs: pd.DataFrame
    timeline: pd.DataFrame
    makespan_h: float
    mean_jct_h: float
    allocation: float
    _attempts: tuple[Attempt, ...] = field(repr=False)
    _targets: tuple[tuple[Demand, float], ...] = field(repr=False)
    _t0: float = field(repr=False)

    @property
    def installed_gpus(self) -> int:
        """Installed GPUs. [GPU]"""
        return self.cluster.installed_gpus

    @property
    def wasted_gpu_h(self) -> float:
        """GPU-hours of work lost to preemption (badput). [GPU-h]"""
        return float((self.schedule["lost_h"] * self.schedule["gpus"]).sum())

    def _window(self, window_h: float | None) -> tuple[float, float]:
        if window_h is None:
            return self._t0, self._t0 + self.makespan_h
        w = validate.positive("window_h", window_h)
        return self._t0, self._t0 + w

    def held_gpu_h(self, window_h: float | None = None) -> float:
        """Return the GPU-hours held inside the window [t0, t0 + window_h]. [GPU-h]"""
        a, b = self._window(window_h)
        s = self.schedule
        overlap = (np.minimum(s["end_h"], b) - np.maximum(s["start_h"], a)).clip(lower=0)
        return float((overlap * s["gpus"]).sum())

    def occupancy(self, window_h: float | None = None) -> float:
        """Return GPU-hours held / installed GPU-hours in the window (default: the makespan).

        Over the makespan this equals :attr:`allocation`; over a calendar window (a 24 h day)
        it is what a utilization dashboard shows. [fraction, 0-1]
        """
        a, b = self._window(window_h)
        return self.held_gpu_h(window_h) / (self.installed_gpus * (b - a))

    def value_krw(self, window_h: float | None = None) -> float:
        """Return the value of the work done inside the window (default: all of it). [KRW]

        Each run contributes ``value_per_gpu_h`` x GPUs x the hours of its progress that were
        kept (a preempted run's tail since its last checkpoint is worth nothing).
        """
        a, b = (self._t0, math.inf) if window_h is None else self._window(window_h)
        s = self.schedule
        kept_end = s["end_h"] - s["lost_h"]
        overlap = (np.minimum(kept_end, b) - np.maximum(s["start_h"], a)).clip(lower=0)
        rate = s["job"].map(dict(zip(self.jobs["job"], self.jobs["value_per_gpu_h"],
                                     strict=True)))
        return float((overlap * s["gpus"] * rate).sum())

    def value_per_gpu_krw(self, window_h: float | None = None) -> float:
        """Return the value of the work in the window per installed GPU. [KRW per GPU]"""
        return self.value_krw(window_h) / self.installed_gpus

    def net_value_krw(self, cost_krw_per_gpu_h: float, window_h: float | None = None) -> float:
        """Return value minus the calendar-hour cost of every installed GPU in the window.

        Parameters
        ----------
        cost_krw_per_gpu_h : float
            What one installed GPU costs per calendar hour, busy or idle (depreciation, power,
            space), >= 0. [KRW per GPU-h]
        window_h : float, optional
            The calendar window (default: the makespan). [h]
        """
        cost = validate.non_negative("cost_krw_per_gpu_h", cost_krw_per_gpu_h)
        a, b = self._window(window_h)
        return self.value_krw(window_h) - cost * self.installed_gpus * (b - a)

    def waits(self, by: str = "kind") -> pd.DataFrame:
        """Return queue delays grouped by ``"kind"`` or ``"tenant"``.

        Returns
        -------
        pandas.DataFrame
            Indexed by the group: ``jobs``, ``mean_wait_h``, ``p95_wait_h``, ``max_wait_h``
            (queue delay = first start - submit), ``mean_delay_h`` (JCT - run time: all the
            time a job spent not making kept progress, including re-queueing and lost work
            after preemption), ``mean_jct_h`` [h], ``gpu_h`` (GPU-hours of work) [GPU-h].
        """
        key = validate.one_of("by", by, ("kind", "tenant"))
        j = self.jobs.assign(gpu_h=self.jobs["gpus"] * self.jobs["hours"],
                             delay_h=self.jobs["jct_h"] - self.jobs["hours"])
        j[key] = j[key].fillna("")
        g = j.groupby(key, sort=True)
        return pd.DataFrame({
            "jobs": g.size(),
            "mean_wait_h": g["wait_h"].mean(),
            "p95_wait_h": g["wait_h"].quantile(0.95),
            "max_wait_h": g["wait_h"].max(),
            "mean_delay_h": g["delay_h"].mean(),
            "mean_jct_h": g["jct_h"].mean(),
            "gpu_h": g["gpu_h"].sum(),
        })

    def gpu_schedule(self) -> pd.DataFrame:
        """Return the schedule per GPU: one row per run and GPU it held (for Gantt charts).

        Columns: ``job``, ``kind``, ``gpu`` (global index), ``node``, ``share`` [GPU],
        ``start_h``, ``end_h`` [h], ``preempted``, ``slice_start`` and ``slice_size`` (MIG
        memory units; -1 when not MIG).
        """
        rows = []
        jobs = self.jobs
        kinds = jobs["kind"].to_numpy()
        names = jobs["job"].to_numpy()
        for a in self._attempts:
            for g, share, mask, _c, _p in a.holdings:
                if mask:
                    start = (mask & -mask).bit_length() - 1
                    size = bin(mask).count("1")
                else:
                    start = size = -1
                rows.append((names[a.job], kinds[a.job], g, a.node, share, a.start, a.end,
                             a.preempted, start, size))
        return pd.DataFrame(rows, columns=["job", "kind", "gpu", "node", "share", "start_h",
                                           "end_h", "preempted", "slice_start", "slice_size"])

    def fragmentation(self) -> pd.DataFrame:
        """Return the FGD fragmentation of the cluster after every change of occupancy.

        Computed once per result (replaying the schedule); a copy is returned.

        Returns
        -------
        pandas.DataFrame
            ``t_h``; ``free_gpus`` (unallocated capacity) [GPU]; ``fragmented_gpus``
            (F(M) = sum over nodes of F_n(M), for the target workload M = this run's job
            classes by popularity) [GPU]; ``fragmentation_rate`` = fragmented / free
            [fraction, 0-1; 0 when nothing is free].
        """
        return self._fragmentation.copy()

    @cached_property
    def _fragmentation(self) -> pd.DataFrame:
        c = self.cluster
        st = ClusterState(c.nodes, c.gpus_per_node, c.mig)
        events: list[tuple[float, int, int]] = []
        for k, a in enumerate(self._attempts):
            events.append((a.start, 1, k))
            events.append((a.end, 0, k))
        events.sort()
        rows = []
        targets = list(self._targets)
        idx = 0
        while idx < len(events):
            t = events[idx][0]
            while idx < len(events) and events[idx][0] <= t + EPS:
                _, kind, k = events[idx]
                (st.apply if kind == 1 else st.release)(self._attempts[k].holdings)
                idx += 1
            free = sum(st.free(g) for g in range(c.installed_gpus))
            frag = sum(node_fragmentation(st, n, targets) for n in range(c.nodes))
            rows.append((t, free, frag, frag / free if free > EPS else 0.0))
        return pd.DataFrame(rows, columns=["t_h", "free_gpus", "fragmented_gpus",
                                           "fragmentation_rate"])

    def mean_fragmented_gpus(self) -> float:
        """Return the time-weighted mean of :meth:`fragmentation` over the makespan. [GPU]"""
        frag = self.fragmentation()
        t = frag["t_h"].to_numpy()
        if len(t) < 2:
            return 0.0
        dt = np.diff(t)
        return float((frag["fragmented_gpus"].to_numpy()[:-1] * dt).sum() / (t[-1] - t[0]))

    def summary(self, cost_krw_per_gpu_h: float = 0.0,
                window_h: float | None = None) -> dict[str, float]:
        """Return the headline numbers in one dict (window default: the makespan).

        Keys: ``makespan_h``, ``mean_jct_h``, ``mean_wait_h``, ``allocation``, ``occupancy``,
        ``value_krw``, ``value_per_gpu_krw``, ``cost_krw``, ``net_value_krw``,
        ``wasted_gpu_h``, ``preemptions``.
        """
        a, b = self._window(window_h)
        value = self.value_krw(window_h)
        cost = validate.non_negative("cost_krw_per_gpu_h", cost_krw_per_gpu_h) * (
            self.installed_gpus * (b - a))
        return {
            "makespan_h": self.makespan_h,
            "mean_jct_h": self.mean_jct_h,
            "mean_wait_h": float(self.jobs["wait_h"].mean()),
            "allocation": self.allocation,
            "occupancy": self.occupancy(window_h),
            "value_krw": value,
            "value_per_gpu_krw": value / self.installed_gpus,
            "cost_krw": cost,
            "net_value_krw": value - cost,
            "wasted_gpu_h": self.wasted_gpu_h,
            "preemptions": float(self.schedule["preempted"].sum()),
        }



def result_of(sim: Sim) -> SimulationResult:
    jobs = sim.jobs
    names = [j.id for j in jobs]
    attempts = sorted(sim.attempts, key=lambda a: (a.start, a.job, a.end))
    schedule = pd.DataFrame({
        "job": [names[a.job] for a in attempts],
        "node": [a.node for a in attempts],
        "gpus": [sim.demand[a.job].total for a in attempts],
        "start_h": [a.start for a in attempts],
        "end_h": [a.end for a in attempts],
        "preempted": [a.preempted for a in attempts],
        "kind": [jobs[a.job].kind for a in attempts],
        "tenant": [jobs[a.job].tenant for a in attempts],
        "lost_h": [a.lost_h for a in attempts],
        "gpu_ids": [tuple(h[0] for h in a.holdings) for a in attempts],
    })
    lost = [0.0] * len(jobs)
    preempted = [0] * len(jobs)
    for a in attempts:
        if a.preempted:
            lost[a.job] += a.lost_h
            preempted[a.job] += 1
    submit = np.array([j.submit_h for j in jobs])
    end = np.array(sim.completion)
    start = np.array(sim.first_start)
    gpus = np.array([d.total for d in sim.demand])
    hours = np.array([j.hours for j in jobs])
    value_rate = np.array([j.value_per_gpu_h for j in jobs])
    table = pd.DataFrame({
        "job": names,
        "kind": [j.kind for j in jobs],
        "tenant": [j.tenant for j in jobs],
        "priority": [j.priority for j in jobs],
        "submit_h": submit,
        "start_h": start,
        "end_h": end,
        "wait_h": start - submit,
        "jct_h": end - submit,
        "gpus": gpus,
        "hours": hours,
        "lost_h": lost,
        "preemptions": preempted,
        "value_per_gpu_h": value_rate,
        "value_krw": value_rate * gpus * hours,
    })
    t0 = float(submit.min())
    held = float((schedule["gpus"] * (schedule["end_h"] - schedule["start_h"])).sum())
    timeline = pd.DataFrame(sim.timeline, columns=["t_h", "queued", "gpus_held"])
    metrics = run_metrics(submit, start, end, held_gpu_h=held,
                          installed_gpus=sim.cluster.installed_gpus)
    return SimulationResult(
        cluster=sim.cluster, policy=sim.policy, placement=sim.placement,
        preemption=sim.preemption, schedule=schedule, jobs=table, timeline=timeline,
        makespan_h=metrics.makespan_h, mean_jct_h=metrics.mean_jct_h,
        allocation=metrics.allocation,
        _attempts=tuple(attempts), _targets=tuple(sim.targets), _t0=t0,
    )



def demand_curve(jobs: Sequence[Job], mig: MigSpec | None = None, *, step_h: float = 0.25,
                 until_h: float | None = None) -> pd.DataFrame:
    """Return the GPUs the jobs would hold if each ran from its submit time, by kind.

    The demand a cluster sized "for the peak" must meet: no queue, every job running from the
    moment it arrives for its ``hours``.

    Parameters
    ----------
    jobs : sequence of Job
        The workload.
    mig : labkit.gpumodels.MigSpec, optional
        The board's MIG table for jobs with a MIG profile (their share = compute slices /
        slices); required if any job has one.
    step_h : float, default 0.25
        Sampling step, > 0. [h]
    until_h : float, optional
        End of the curve (default: the last job end). At most 10,000 steps. [h]

    Returns
    -------
    pandas.DataFrame
        Indexed by ``t_h`` [h]; one column per kind present, in :data:`KINDS` order: GPUs
        requested at that time [GPU].

    Used in: notebooks/08_orchestration.ipynb
    """
    step = validate.positive("step_h", step_h)
    jobs = list(jobs)
    if not jobs:
        raise validate.InputError("jobs", "other", jobs, "demand_curve needs at least one job")
    end = max(j.submit_h + j.hours for j in jobs) if until_h is None else validate.positive(
        "until_h", until_h)
    steps = math.ceil(end / step - EPS) + 1
    validate.at_most("step_h", steps, 10_000, "10,000 steps")
    t = np.arange(steps) * step
    out: dict[str, np.ndarray] = {}
    for kind in KINDS:
        diff = np.zeros(steps + 1)
        for j in jobs:
            if j.kind != kind:
                continue
            if j.mig_profile is not None:
                profile = mig_profile(mig, j.mig_profile, "mig_profile")
                assert mig is not None
                share = j.gpus * profile.compute_slices / mig.compute_slices
            else:
                share = j.gpus
            a = min(math.ceil(j.submit_h / step - EPS), steps)
            b = min(math.ceil((j.submit_h + j.hours) / step - EPS), steps)
            diff[a] += share
            diff[b] -= share
        if diff.any():
            out[kind] = np.cumsum(diff)[:steps]
    frame = pd.DataFrame(out, index=pd.Index(t, name="t_h"))
    return frame


@dataclass(frozen=True)
class CapacityReport:
    """A day's demand against installed capacity (see :func:`capacity_report`).

    Attributes
    ----------
    installed_gpus : float
        GPUs installed. [GPU]
    window_h : float
        Calendar hours of the window. [h]
    peak_gpus, mean_gpus : float
        Highest and mean demand. [GPU]
    demand_gpu_h : float
        GPU-hours asked for in the window (each job running from its submit time). [GPU-h]
    served_gpu_h : float
        Of those, the GPU-hours the installed GPUs could hold at that moment. [GPU-h]
    idle_gpu_h : float
        Installed GPU-hours that no demand could use. [GPU-h]
    over_capacity_h : float
        Hours in which demand exceeds the installed GPUs. [h]
    best_occupancy : float
        served / installed GPU-hours: the occupancy a perfect scheduler could reach without
        moving any work in time. [fraction, 0-1]
    calendar_cost_krw : float
        Installed GPUs x window x calendar-hour cost, busy or idle. [KRW]
    idle_cost_krw : float
        The part of that cost spent on idle GPU-hours. [KRW]
    """

    installed_gpus: float
    window_h: float
    peak_gpus: float
    mean_gpus: float
    demand_gpu_h: float
    served_gpu_h: float
    idle_gpu_h: float
    over_capacity_h: float
    best_occupancy: float
    calendar_cost_krw: float
    idle_cost_krw: float


def capacity_report(curve: pd.DataFrame, installed_gpus: float,
                    cost_krw_per_gpu_h: float) -> CapacityReport:
    """Return how a day's demand curve meets a fixed installed capacity.

    The aircraft arithmetic of the course notes: a GPU costs money every calendar hour and
    earns only in the hours it is used; a cluster sized for the peak sits idle off-peak.

    Parameters
    ----------
    curve : pandas.DataFrame
        :func:`demand_curve` output (index ``t_h`` evenly spaced, columns GPUs by kind).
    installed_gpus : float
        GPUs installed, > 0 and at most 100,000. [GPU]
    cost_krw_per_gpu_h : float
        Calendar-hour cost of one GPU, >= 0. [KRW per GPU-h]

    Returns
    -------
    CapacityReport

    Used in: notebooks/08_orchestration.ipynb
    """
    cap = validate.at_most("installed_gpus", validate.positive("installed_gpus", installed_gpus),
                           100_000, "100,000 GPUs")
    cost = validate.non_negative("cost_krw_per_gpu_h", cost_krw_per_gpu_h)
    if len(curve.index) < 2:
        raise validate.InputError("curve", "other", len(curve.index),
                                  "a demand curve needs at least two samples")
    t = curve.index.to_numpy(dtype=float)
    step = float(t[1] - t[0])
    demand = curve.sum(axis=1).to_numpy(dtype=float)
    window = step * len(t)
    served = np.minimum(demand, cap)
    installed_gpu_h = cap * window
    served_gpu_h = float(served.sum() * step)
    return CapacityReport(
        installed_gpus=cap, window_h=window, peak_gpus=float(demand.max()),
        mean_gpus=float(demand.mean()), demand_gpu_h=float(demand.sum() * step),
        served_gpu_h=served_gpu_h, idle_gpu_h=installed_gpu_h - served_gpu_h,
        over_capacity_h=float((demand > cap + EPS).sum() * step),
        best_occupancy=served_gpu_h / installed_gpu_h,
        calendar_cost_krw=cost * installed_gpu_h,
        idle_cost_krw=cost * (installed_gpu_h - served_gpu_h),
    )
