"""Workloads: a school day's job groups, filler work, trace-derived jobs, tenant quotas.

Pure (seeded numpy ``default_rng``). The data files behind them are read by
``labkit.data.scheduling``.

Used in: notebooks/08_orchestration.ipynb
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from labkit import validate
from labkit.scheduling.jobs import EPS, KINDS, MAX_JOBS, Job


@dataclass(frozen=True)
class JobGroup:
    """A batch of similar jobs in a day's workload (a class session, a night of evaluations).

    Parameters
    ----------
    name : str
        Id prefix: jobs are ``<name>-01``, ``<name>-02``, ... (just ``<name>`` when count is 1).
    kind : str
        One of :data:`KINDS`.
    count : int
        Number of jobs, 1 to 1,000.
    submit_h : tuple of float
        (first, last) submit time; submits are drawn uniformly in it (``first`` when equal). [h]
    gpus, hours, tenant, priority, value_per_gpu_h, mig_profile, checkpoint_interval_h
        As in :class:`Job`; ``hours`` is the median run time. [GPU], [h], [KRW per GPU-h]
    hours_jitter : float, default 0
        Sigma of the lognormal spread of run times around ``hours`` (0: all equal).
    variants : mapping, optional
        Named overrides of the fields above, e.g. ``{"whole_gpu": {"mig_profile": None}}``.
    """

    name: str
    kind: str
    count: int
    submit_h: tuple[float, float]
    gpus: float
    hours: float
    tenant: str | None = None
    priority: int = 0
    value_per_gpu_h: float = 0.0
    mig_profile: str | None = None
    checkpoint_interval_h: float | None = None
    hours_jitter: float = 0.0
    variants: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        count = validate.integer("count", self.count, minimum=1)
        object.__setattr__(self, "count", int(validate.at_most("count", count, 1000,
                                                               "1,000 jobs per group")))
        first, last = (validate.non_negative("submit_h", x) for x in self.submit_h)
        if last < first:
            raise validate.InputError("submit_h", "other", self.submit_h,
                                      "submit_h must be (first, last) with first <= last")
        object.__setattr__(self, "submit_h", (first, last))
        object.__setattr__(self, "hours_jitter", validate.non_negative("hours_jitter",
                                                                       self.hours_jitter))
        Job(self.name, first, self.gpus, self.hours, self.kind, self.tenant, self.priority,
            self.value_per_gpu_h, self.mig_profile, self.checkpoint_interval_h)  # validates

    def with_variants(self, names: Iterable[str]) -> JobGroup:
        """Return the group with the overrides of every variant in ``names`` that it has."""
        changes: dict[str, Any] = {}
        for name in names:
            changes.update(self.variants.get(name, {}))
        return self.with_overrides(changes) if changes else self

    def with_overrides(self, changes: Mapping[str, Any], field_name: str | None = None
                       ) -> JobGroup:
        """Return the group with some fields replaced (validated; errors name ``field_name``)."""
        allowed = {"kind", "count", "submit_h", "gpus", "hours", "tenant", "priority",
                   "value_per_gpu_h", "mig_profile", "checkpoint_interval_h", "hours_jitter"}
        unknown = sorted(set(changes) - allowed)
        if unknown:
            raise validate.InputError("variants", "other", unknown,
                                      f"unknown fields in variants of {self.name}: {unknown}")
        fields = {f: getattr(self, f) for f in allowed}
        fields.update(changes)
        try:
            return JobGroup(name=self.name, variants=self.variants, **fields)
        except validate.InputError as err:
            if field_name is None:
                raise
            raise validate.InputError(field_name, err.rule, err.value, str(err),
                                      limit=err.limit) from err


def jobs_from_groups(groups: Sequence[JobGroup], *, seed: int = 0,
                     variants: Iterable[str] = (),
                     counts: Mapping[str, int] | None = None) -> list[Job]:
    """Expand job groups into jobs, with seeded submit times and run-time spread.

    Parameters
    ----------
    groups : sequence of JobGroup
        The day's workload (the school day of ``labkit.data.scheduling``).
    seed : int, default 0
        Seed of the random generator (numpy ``default_rng``): the same seed gives the same jobs.
    variants : iterable of str
        Scenario switches applied to every group that defines them (e.g. ``"whole_gpu"``,
        ``"specialized"``).
    counts : mapping of str to int, optional
        Job counts replacing those of the named groups (e.g. ``{"ai-lab": 30}``), each 1 to
        1,000; a name no group has is an error.

    Returns
    -------
    list of Job
        Grouped in order, each group's jobs by submit time; times rounded to the minute. [h]

    Used in: notebooks/08_orchestration.ipynb
    """
    seed = validate.integer("seed", seed, minimum=0)
    rng = np.random.default_rng(seed)
    names = tuple(variants)
    counts = dict(counts or {})
    unknown = sorted(set(counts) - {g.name for g in groups})
    if unknown:
        raise validate.InputError("counts", "other", unknown, f"no group named {unknown}")
    out: list[Job] = []
    for base in groups:
        g = base.with_variants(names)
        if g.name in counts:
            g = g.with_overrides({"count": counts[g.name]}, field_name=f"count_{g.name}")
        first, last = g.submit_h
        submits = np.sort(rng.uniform(first, last, g.count)) if last > first else np.full(
            g.count, first)
        spread = np.exp(rng.normal(0.0, g.hours_jitter, g.count)) if g.hours_jitter else (
            np.ones(g.count))
        for k in range(g.count):
            hours = max(round(g.hours * float(spread[k]) * 60) / 60, 1 / 60)
            job_id = g.name if g.count == 1 else f"{g.name}-{k + 1:02d}"
            out.append(Job(job_id, round(float(submits[k]) * 60) / 60, g.gpus, hours, g.kind,
                           g.tenant, g.priority, g.value_per_gpu_h, g.mig_profile,
                           g.checkpoint_interval_h))
    return out


def filler_jobs(gpus: int, day_h: float = 24.0, job_h: float = 1.0) -> list[Job]:
    """Return worthless filler work: ``gpus`` one-GPU jobs of ``job_h`` every ``job_h`` hours.

    The "keep the GPUs busy" trick: value 0, priority 0, tenant ``"filler"``. Enough of them
    to occupy every installed GPU all day; what the scheduler does not fit, waits.

    Parameters
    ----------
    gpus : int
        GPUs to keep busy, 1 to 4,096. [GPU]
    day_h : float, default 24
        The day's length, > 0 and <= 168. [h]
    job_h : float, default 1
        Each filler job's run time, > 0. [h]

    Used in: notebooks/08_orchestration.ipynb
    """
    n = validate.integer("gpus", gpus, minimum=1)
    validate.at_most("gpus", n, 4096, "4,096 GPUs")
    day = validate.at_most("day_h", validate.positive("day_h", day_h), 168, "one week")
    step = validate.positive("job_h", job_h)
    slots = math.ceil(day / step - EPS)
    validate.at_most("job_h", n * slots, MAX_JOBS // 2, "filler jobs the simulator takes")
    return [Job(f"filler-{s:03d}-{k:03d}", s * step, 1, step, "filler", "filler", 0, 0.0)
            for s in range(slots) for k in range(n)]


@dataclass(frozen=True)
class TraceDistribution:
    """Job sizes and durations derived from public cluster traces (``data/scheduling/``).

    Parameters
    ----------
    gpu_counts : tuple of int
        GPU counts of whole-GPU jobs (Philly: 1, 2, 4, 8).
    gpu_weights : tuple of float
        Share of jobs with each count (sums to 1).
    duration_quantiles : mapping int -> tuple of (quantile, hours)
        Run-time quantiles per GPU count, quantiles 0 to 1 increasing. [h]
    shares : tuple of float
        Requested shares of single-GPU pods (Alibaba openb; 1.0 = the whole GPU). [GPU]
    share_weights : tuple of float
        Share of single-GPU pods at each requested share (sums to 1).
    source : str
        Where the numbers come from.
    """

    gpu_counts: tuple[int, ...]
    gpu_weights: tuple[float, ...]
    duration_quantiles: Mapping[int, tuple[tuple[float, float], ...]]
    shares: tuple[float, ...] = (1.0,)
    share_weights: tuple[float, ...] = (1.0,)
    source: str = ""

    def __post_init__(self) -> None:
        for name, weights in (("gpu_weights", self.gpu_weights),
                              ("share_weights", self.share_weights)):
            if not weights or any(w < 0 for w in weights) or abs(sum(weights) - 1) > 1e-3:
                raise validate.InputError(name, "other", weights,
                                          f"{name} must be >= 0 and sum to 1")
        if len(self.gpu_counts) != len(self.gpu_weights) or len(self.shares) != len(
                self.share_weights):
            raise validate.InputError("gpu_counts", "other", self.gpu_counts,
                                      "values and weights must have the same length")
        for count in self.gpu_counts:
            q = self.duration_quantiles.get(count)
            if not q or q[0][0] != 0 or q[-1][0] != 1 or any(
                    b[0] <= a[0] or b[1] < a[1] or a[1] <= 0 for a, b in itertools.pairwise(q)):
                raise validate.InputError(
                    "duration_quantiles", "other", count,
                    f"duration quantiles for {count} GPUs must run from 0 to 1, increasing")


def trace_jobs(n: int, dist: TraceDistribution, *, jobs_per_hour: float, seed: int = 0,
               tenants: Sequence[str] = ("a", "b", "c", "d"), max_gpus: int = 8,
               max_hours: float | None = None, kind: str = "training",
               value_per_gpu_h: float = 0.0, start_h: float = 0.0) -> list[Job]:
    """Sample ``n`` jobs from trace-derived distributions with Poisson arrivals.

    GPU counts follow ``dist.gpu_weights`` (counts above ``max_gpus`` are not drawn); run times
    are drawn from the count's quantiles (interpolated in log hours); a single-GPU job asks for a
    share of its GPU drawn from ``dist.share_weights`` (shares below 1 become shared-GPU jobs);
    tenants are drawn uniformly.

    Parameters
    ----------
    n : int
        Number of jobs, 1 to :data:`MAX_JOBS`.
    dist : TraceDistribution
        Sizes and durations (``labkit.data.scheduling.load_trace_distribution``).
    jobs_per_hour : float
        Mean arrival rate, > 0. [1/h]
    seed : int, default 0
        numpy ``default_rng`` seed.
    tenants : sequence of str
        Tenant names drawn uniformly (empty: no tenant).
    max_gpus : int, default 8
        The widest job drawn (one node). [GPU]
    max_hours : float, optional
        Cap on run times (e.g. a queue's time limit). [h]
    kind : str, default "training"
        Kind of every job.
    value_per_gpu_h : float, default 0
        Value of every job. [KRW per GPU-h]
    start_h : float, default 0
        Time of the first possible arrival. [h]

    Returns
    -------
    list of Job
        Ids ``t00000``, ... in submit order.

    References
    ----------
    .. [1] Jeon et al., "Analysis of Large-Scale Multi-Tenant GPU Clusters for DNN Training
       Workloads", USENIX ATC'19 (Philly); Weng, Yang et al., USENIX ATC'23 (Alibaba openb).

    Used in: notebooks/08_orchestration.ipynb
    """
    count = validate.integer("n", n, minimum=1)
    validate.at_most("n", count, MAX_JOBS, "the maximum job count")
    rate = validate.positive("jobs_per_hour", jobs_per_hour)
    seed = validate.integer("seed", seed, minimum=0)
    widest = validate.integer("max_gpus", max_gpus, minimum=1)
    cap = math.inf if max_hours is None else validate.positive("max_hours", max_hours)
    validate.one_of("kind", kind, KINDS)
    rng = np.random.default_rng(seed)
    counts = np.array([c for c in dist.gpu_counts if c <= widest])
    if counts.size == 0:
        raise validate.InputError("max_gpus", "other", max_gpus, "no GPU count fits max_gpus")
    weights = np.array([w for c, w in zip(dist.gpu_counts, dist.gpu_weights, strict=True)
                        if c <= widest])
    arrivals = start_h + np.cumsum(rng.exponential(1 / rate, count))
    gpus = rng.choice(counts, size=count, p=weights / weights.sum())
    u = rng.uniform(0, 1, count)
    hours = np.empty(count)
    for c in counts:
        sel = gpus == c
        q = np.array(dist.duration_quantiles[int(c)])
        hours[sel] = np.exp(np.interp(u[sel], q[:, 0], np.log(q[:, 1])))
    hours = np.clip(hours, 1 / 3600, cap)
    share = rng.choice(np.array(dist.shares), size=count, p=np.array(dist.share_weights))
    names = list(tenants)
    who = rng.integers(0, len(names), count) if names else None
    out = []
    for k in range(count):
        g = float(gpus[k])
        if g == 1 and share[k] < 1:
            g = float(share[k])
        out.append(Job(f"t{k:05d}", float(arrivals[k]), g, float(hours[k]), kind,
                       names[int(who[k])] if who is not None else None, 0, value_per_gpu_h))
    return out
