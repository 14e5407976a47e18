"""Orchestrating a shared GPU cluster: a deterministic discrete-event scheduling simulator.

Pure: jobs in, a schedule and its metrics out; no widgets, no I/O. Time is in hours [h].

The model follows the conventions of the course's check cases (they fix the numbers):

- every job arrives at ``submit_h``; JCT = completion - submit; queue delay = first start - submit;
  makespan = last completion - first submit;
- allocation = sum(GPUs held x hours held) / (installed GPUs x makespan); a shared (fractional)
  or MIG holding counts by its share of one GPU (a ``1g`` slice of a 7-slice GPU is 1/7);
- at one timestamp: all completions first, then all arrivals, then ONE scheduling pass;
- queue order = submit time, then listing order (policies may reorder by priority or fair share);
- gang semantics: a job starts only when all of its GPUs are free on ONE node; durations are known
  exactly (oracle runtimes = time limits).

Policies (the order the queue is served in, and how a blocked job is treated):

- ``"fifo"``: only the queue head may start; if it does not fit, nothing starts.
- ``"greedy"``: start any queued job that fits, in queue order (skip-ahead, no reservation).
- ``"easy_backfill"``: EASY backfill as in Slurm's ``sched/backfill``: the first job that does not
  fit gets a reservation at its *shadow time* (the earliest time enough GPUs free up, from the
  known end times) on the GPUs it would then use; a later job may start now if it fits and either
  ends by the shadow time or leaves the reserved GPUs alone (Lifka 1995; Mu'alem & Feitelson 2001;
  SchedMD slurm.conf ``SchedulerType=sched/backfill``).
- ``"priority"``: queue ordered by ``Job.priority`` (high first), then EASY backfill.
- ``"fair_share"``: queue ordered by the tenant's classic Slurm fair-share factor
  F = 2^(-U/S) (U: the tenant's normalized, half-life-decayed GPU-hour usage; S: its normalized
  shares; SchedMD ``classic_fair_share.shtml``), then EASY backfill.

Tenant quotas follow Kueue's ClusterQueues in one cohort (kueue ``cluster_queue.md``): a tenant
with ``quota_gpus`` (nominal quota) may borrow the cohort's unused quota up to
``borrowing_limit_gpus``; a job that would exceed them is not admitted and does not block others.
With ``preemption=True`` a job that does not fit may evict running jobs of strictly lower
``priority`` (Slurm ``PreemptMode=REQUEUE``; with quotas, as in Kueue's ``withinClusterQueue:
LowerPriority``, only jobs of its own tenant) and, while its tenant is within its nominal quota,
jobs of tenants that are borrowing (Kueue ``reclaimWithinCohort: Any``). An evicted job goes
back to the queue and keeps only the work saved by its last checkpoint: work since the last
checkpoint (every ``checkpoint_interval_h`` of progress; all of it without checkpoints) is lost.
Checkpoint writes themselves are not charged here (lesson 03 books them).

Placements (where a job goes among the nodes and GPUs that can take it):

- ``"pack"``: best fit: the node (then the GPU) with the least free capacity left;
- ``"spread"``: worst fit: the node (then the GPU) with the most free capacity left;
- ``"fgd"``: fragmentation gradient descent (Weng, Yang et al., "Beware of Fragmentation:
  Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC'23): the
  placement that increases the node's expected fragmentation F_n(M) least (defined in
  :func:`node_fragmentation`).

A job asks for whole GPUs (``gpus`` a whole number), a share of one GPU (``gpus`` < 1: time
slicing/MPS, as Alibaba's ``gpu_milli`` pods), or MIG GPU instances (``mig_profile``; ``gpus``
counts the instances). MIG instances are created on free slices of a GPU whose other occupants are
MIG instances (or of an empty GPU) by the board's placement rules (``labkit.gpu.placement``, the
same rules the simulated driver applies: legal starts, no overlap, per-profile caps, media
engines); a GPU never mixes MIG instances with shared or whole-GPU jobs. Repartitioning time is
ignored.

Used in: notebooks/08_orchestration.ipynb
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from labkit import validate
from labkit.gpu.models import GiProfile, MigSpec
from labkit.gpu.placement import PlacedGi, PlacementError, check_gi

__all__ = [
    "KINDS",
    "PLACEMENTS",
    "POLICIES",
    "CapacityReport",
    "Cluster",
    "Job",
    "JobGroup",
    "SimulationResult",
    "Tenant",
    "TraceDistribution",
    "capacity_report",
    "demand_curve",
    "fair_share_factor",
    "filler_jobs",
    "jobs_from_groups",
    "mig_profile",
    "node_fragmentation",
    "quota_tenants",
    "simulate",
    "trace_jobs",
]

EPS = 1e-9
#: Workload kinds (the course's list: training, fine-tuning, quantization, real-time and batch
#: inference, embedding generation, evaluation; plus student lab sessions and worthless filler).
KINDS = ("training", "fine_tuning", "quantization", "inference_realtime", "inference_batch",
         "embedding", "evaluation", "class_lab", "filler")
POLICIES = ("fifo", "easy_backfill", "greedy", "priority", "fair_share")
PLACEMENTS = ("pack", "spread", "fgd")
#: Bounds on what sizes loops and arrays (a browser can send any value).
MAX_NODES = 256
MAX_GPUS_PER_NODE = 16
MAX_JOBS = 100_000
MAX_PRIORITY = 1_000_000
#: Slurm's default PriorityDecayHalfLife is 7-00:00:00 (slurm.conf).
DEFAULT_HALF_LIFE_H = 168.0


# --- inputs -------------------------------------------------------------------------------------


def _optional_str(field_name: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise validate.InputError(field_name, "other", value,
                                  f"{field_name} must be a non-empty string or None, got {value!r}")
    return value


@dataclass(frozen=True)
class Job:
    """One job: when it arrives, what it holds, for how long, and what its work is worth.

    Parameters
    ----------
    id : str or int
        Unique name of the job.
    submit_h : float
        Arrival time, >= 0. [h]
    gpus : float
        Whole GPUs (a whole number >= 1), a share of one GPU (0 < gpus < 1: time slicing/MPS),
        or, with ``mig_profile``, the number of MIG GPU instances (a whole number >= 1). [GPU]
    hours : float
        Run time when it runs uninterrupted, > 0. [h]
    kind : str, default "training"
        One of :data:`KINDS`.
    tenant : str, optional
        Who it belongs to (a course, a research group, a service).
    priority : int, default 0
        Higher runs first under ``"priority"`` and may preempt lower with preemption on.
    value_per_gpu_h : float, default 0.0
        What one GPU-hour of this job's completed work is worth, >= 0. [KRW per GPU-h]
    mig_profile : str, optional
        A MIG GPU-instance profile of the cluster's GPU model (e.g. ``"1g.10gb"``).
    checkpoint_interval_h : float, optional
        Progress between checkpoints, > 0; None: no checkpoints (preemption loses everything). [h]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        Naming the field: negative or non-finite times, ``gpus`` <= 0 or above 1 but not whole,
        an unknown ``kind``, a negative or fractional ``priority``, a negative value, a
        non-positive checkpoint interval.

    Used in: notebooks/08_orchestration.ipynb
    """

    id: Any
    submit_h: float
    gpus: float
    hours: float
    kind: str = "training"
    tenant: str | None = None
    priority: int = 0
    value_per_gpu_h: float = 0.0
    mig_profile: str | None = None
    checkpoint_interval_h: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, (str, int)) or isinstance(self.id, bool):
            raise validate.InputError("id", "other", self.id,
                                      f"id must be a string or an integer, got {self.id!r}")
        s = object.__setattr__
        s(self, "submit_h", validate.non_negative("submit_h", self.submit_h))
        gpus = validate.positive("gpus", self.gpus)
        if self.mig_profile is not None:
            gpus = float(validate.integer("gpus", gpus, minimum=1))
        elif gpus > 1 and gpus != int(gpus):
            raise validate.InputError(
                "gpus", "integer", self.gpus,
                f"gpus must be a share of one GPU (< 1) or a whole number, got {self.gpus!r}",
                limit=1)
        s(self, "gpus", gpus)
        s(self, "hours", validate.positive("hours", self.hours))
        s(self, "kind", validate.one_of("kind", self.kind, KINDS))
        s(self, "tenant", _optional_str("tenant", self.tenant))
        prio = validate.integer("priority", self.priority, minimum=0)
        s(self, "priority", int(validate.at_most("priority", prio, MAX_PRIORITY, "the maximum")))
        s(self, "value_per_gpu_h", validate.non_negative("value_per_gpu_h", self.value_per_gpu_h))
        s(self, "mig_profile", _optional_str("mig_profile", self.mig_profile))
        if self.checkpoint_interval_h is not None:
            s(self, "checkpoint_interval_h",
              validate.positive("checkpoint_interval_h", self.checkpoint_interval_h))


@dataclass(frozen=True)
class Cluster:
    """Identical nodes of identical GPUs.

    Parameters
    ----------
    nodes : int
        Number of nodes, 1 to :data:`MAX_NODES`.
    gpus_per_node : int
        GPUs per node, 1 to :data:`MAX_GPUS_PER_NODE`.
    gpu_model : str, default "A100-80GB"
        The GPU model's short name (as in ``data/gpus/``).
    mig : labkit.gpu.models.MigSpec, optional
        The model's MIG table (``labkit.data.gpus.load_gpu_model(gpu_model).mig``; or
        ``labkit.data.scheduling.load_cluster``); needed for jobs with a MIG profile. None: the
        cluster runs no MIG instances.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For a count that is not a whole number in range, or a ``mig`` that is not a MigSpec.

    Used in: notebooks/08_orchestration.ipynb
    """

    nodes: int
    gpus_per_node: int
    gpu_model: str = "A100-80GB"
    mig: MigSpec | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        nodes = validate.integer("nodes", self.nodes, minimum=1)
        gpn = validate.integer("gpus_per_node", self.gpus_per_node, minimum=1)
        object.__setattr__(self, "nodes", int(validate.at_most("nodes", nodes, MAX_NODES,
                                                              "the maximum node count")))
        object.__setattr__(self, "gpus_per_node", int(validate.at_most(
            "gpus_per_node", gpn, MAX_GPUS_PER_NODE, "the maximum GPUs per node")))
        if not isinstance(self.gpu_model, str) or not self.gpu_model:
            raise validate.InputError("gpu_model", "other", self.gpu_model,
                                      f"gpu_model must be a model name, got {self.gpu_model!r}")
        if self.mig is not None and not isinstance(self.mig, MigSpec):
            raise validate.InputError("mig", "other", self.mig, "mig must be a MigSpec or None")

    @property
    def installed_gpus(self) -> int:
        """Installed GPUs: nodes x GPUs per node. [GPU]"""
        return self.nodes * self.gpus_per_node


@dataclass(frozen=True)
class Tenant:
    """A tenant's fair-share weight and (optional) Kueue-style quota.

    Parameters
    ----------
    name : str
        The tenant name used in :attr:`Job.tenant`.
    share : float, default 1.0
        Fair-share shares (Slurm ``Shares``), > 0; normalized over all tenants.
    quota_gpus : float, optional
        Nominal quota (Kueue ``nominalQuota``), >= 0; None: no quota (never limited, never
        lends). [GPU]
    borrowing_limit_gpus : float, optional
        How far above its nominal quota the tenant may borrow the cohort's unused quota
        (Kueue ``borrowingLimit``), >= 0; None: no limit; 0: no borrowing. [GPU]
    lending_limit_gpus : float, optional
        How much of its unused nominal quota others may borrow (Kueue ``lendingLimit``), >= 0;
        None: all of it; 0: its idle quota stays idle (a static partition). [GPU]

    Used in: notebooks/08_orchestration.ipynb
    """

    name: str
    share: float = 1.0
    quota_gpus: float | None = None
    borrowing_limit_gpus: float | None = None
    lending_limit_gpus: float | None = None

    def __post_init__(self) -> None:
        if _optional_str("name", self.name) is None:
            raise validate.InputError("name", "other", self.name, "a tenant needs a name")
        object.__setattr__(self, "share", validate.positive("share", self.share))
        if self.quota_gpus is not None:
            object.__setattr__(self, "quota_gpus", validate.non_negative("quota_gpus",
                                                                         self.quota_gpus))
        for name in ("borrowing_limit_gpus", "lending_limit_gpus"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, validate.non_negative(name, getattr(self, name)))


def fair_share_factor(usage: float, shares: float) -> float:
    """Return Slurm's classic fair-share factor F = 2^(-U/S).

    Parameters
    ----------
    usage : float
        U: the tenant's normalized (fraction of all) decayed usage, in [0, 1].
    shares : float
        S: the tenant's normalized shares, in (0, 1].

    Returns
    -------
    float
        F in (0, 1]: 0.5 means "used exactly its share", above 0.5 under-served.

    References
    ----------
    .. [1] SchedMD, Slurm documentation, "Classic Fairshare Algorithm" (classic_fair_share.shtml).

    Used in: notebooks/08_orchestration.ipynb
    """
    u = validate.fraction("usage", usage, allow_zero=True)
    s = validate.fraction("shares", shares)
    return float(2.0 ** (-u / s))


def mig_profile(spec: MigSpec | None, name: Any, field_name: str = "mig_profile",
                gpu_model: str = "this GPU model") -> GiProfile:
    """Return the GPU-instance profile ``name`` of a board's MIG table.

    Parameters
    ----------
    spec : labkit.gpu.models.MigSpec or None
        The board's MIG table (None: the board has no MIG, or none was given).
    name : str
        NVIDIA's profile name, e.g. ``"1g.10gb"``.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        Rule ``choice`` (naming ``field_name``) for a profile the board does not have, or when
        there is no MIG table.

    Used in: notebooks/08_orchestration.ipynb
    """
    if spec is None:
        raise validate.InputError(
            field_name, "choice", name,
            f"{field_name}: MIG profile {name!r} needs the cluster's MIG table, and "
            f"{gpu_model} has none here (Cluster(..., mig=load_gpu_model(model).mig))", limit=())
    profile = spec.by_name(name) if isinstance(name, str) else None
    if profile is None:
        validate.one_of(field_name, name, [p.name for p in spec.profiles])
    assert profile is not None
    return profile


# --- cluster state ------------------------------------------------------------------------------

# A holding: (global GPU index, share of that GPU, MIG memory-unit mask or 0, MIG compute slices,
# MIG profile or None).
Holding = tuple[int, float, int, int, GiProfile | None]
_WHOLE, _FRAC, _MIG = 0, 1, 2
_EMPTY, _SHARED, _MIGMODE = 0, 1, 2


@dataclass(frozen=True)
class _Demand:
    kind: int
    count: int  # whole GPUs, or MIG instances; 1 for a share
    share: float  # per unit: 1.0 whole; s for a share; c/C for a MIG instance
    profile: GiProfile | None
    key: tuple[Any, ...]

    @property
    def total(self) -> float:
        return self.count * self.share


class _State:
    """Per-GPU occupancy of the cluster (lists indexed by global GPU index)."""

    __slots__ = ("cmp", "gis", "gpn", "mem", "mode", "n", "node_empty", "node_used", "occ",
                 "slices", "spec", "used")

    def __init__(self, nodes: int, gpn: int, spec: MigSpec | None) -> None:
        self.n, self.gpn, self.spec = nodes, gpn, spec
        self.slices = spec.compute_slices if spec is not None else 7
        total = nodes * gpn
        self.gis: list[list[PlacedGi]] = [[] for _ in range(total)]
        self.used = [0.0] * total
        self.mode = [_EMPTY] * total
        self.mem = [0] * total
        self.cmp = [0] * total
        self.occ = [0] * total
        self.node_empty = [gpn] * nodes
        self.node_used = [0.0] * nodes

    def copy(self) -> _State:
        other = _State.__new__(_State)
        other.n, other.gpn, other.slices, other.spec = self.n, self.gpn, self.slices, self.spec
        other.gis = [gis[:] for gis in self.gis]
        other.used, other.mode = self.used[:], self.mode[:]
        other.mem, other.cmp, other.occ = self.mem[:], self.cmp[:], self.occ[:]
        other.node_empty, other.node_used = self.node_empty[:], self.node_used[:]
        return other

    def apply(self, holdings: Iterable[Holding]) -> None:
        for g, share, mask, c, profile in holdings:
            n = g // self.gpn
            if profile is not None:
                self.gis[g].append(PlacedGi(profile, (mask & -mask).bit_length() - 1))
            if self.occ[g] == 0:
                self.node_empty[n] -= 1
                self.mode[g] = _MIGMODE if mask else _SHARED
            self.occ[g] += 1
            self.used[g] += share
            self.node_used[n] += share
            self.mem[g] |= mask
            self.cmp[g] += c

    def release(self, holdings: Iterable[Holding]) -> None:
        for g, share, mask, c, profile in holdings:
            n = g // self.gpn
            if profile is not None:
                start = (mask & -mask).bit_length() - 1
                self.gis[g] = [gi for gi in self.gis[g] if gi.start != start]
            self.occ[g] -= 1
            self.mem[g] &= ~mask
            self.cmp[g] -= c
            if self.occ[g] == 0:
                self.used[g] = 0.0
                self.mode[g] = _EMPTY
                self.node_empty[n] += 1
            else:
                self.used[g] -= share
            self.node_used[n] -= share
            if self.node_empty[n] == self.gpn:
                self.node_used[n] = 0.0

    def free(self, g: int) -> float:
        return max(0.0, 1.0 - self.used[g])

    # -- per-GPU feasibility --------------------------------------------------------------------
    def mig_starts(self, g: int, profile: GiProfile, every: bool = False) -> list[int]:
        """Legal free placement starts of ``profile`` on GPU ``g`` (labkit.gpu.placement rules).

        With ``every`` False, only the start the driver would pick (its default order); else
        every start where a GPU instance could be created now.
        """
        if self.mode[g] == _SHARED or self.cmp[g] + profile.compute_slices > self.slices:
            return []
        assert self.spec is not None
        try:
            if not every:
                return [check_gi(self.spec, self.gis[g], profile.id).start]
        except PlacementError:
            return []
        out = []
        for start in profile.placements:
            try:
                out.append(check_gi(self.spec, self.gis[g], profile.id, start).start)
            except PlacementError:
                continue
        return out

    def can_host_unit(self, g: int, d: _Demand) -> bool:
        if d.kind == _WHOLE:
            return self.mode[g] == _EMPTY
        if d.kind == _FRAC:
            return self.mode[g] != _MIGMODE and self.used[g] + d.share <= 1.0 + EPS
        assert d.profile is not None
        return bool(self.mig_starts(g, d.profile))


def node_fragmentation(state: _State, node: int, targets: Sequence[tuple[_Demand, float]]) -> float:
    """Return the FGD expected fragmentation F_n(M) of one node. [GPU]

    For each task class m of the target workload M (popularity p_m): if m cannot run on the node
    at all, all of the node's unallocated GPU capacity counts as fragmented; otherwise only the
    free capacity of GPUs that cannot host m does (for a whole-GPU class, GPUs partly used; for
    a shared class, GPUs with less free share than d_m; for a MIG class, GPUs without a legal
    free placement). F_n(M) = sum_m p_m F_n(m).

    References
    ----------
    .. [1] Weng, Yang et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with
       Fragmentation Gradient Descent", USENIX ATC'23; simulator ``pkg/utils/frag.go``
       (hkust-adsl/kubernetes-scheduler-simulator).

    Used in: notebooks/08_orchestration.ipynb
    """
    gpn = state.gpn
    gpus = range(node * gpn, node * gpn + gpn)
    frees = [state.free(g) for g in gpus]
    total_free = sum(frees)
    if total_free <= EPS:
        return 0.0
    frag = 0.0
    for d, p in targets:
        if d.kind == _WHOLE:
            if state.node_empty[node] < d.count:
                f = total_free
            else:
                f = sum(fr for g, fr in zip(gpus, frees, strict=True) if state.mode[g] != _EMPTY)
        else:
            f = sum(fr for g, fr in zip(gpus, frees, strict=True)
                    if not state.can_host_unit(g, d))
        frag += p * f
    return frag


# --- the simulator ------------------------------------------------------------------------------


@dataclass
class _Alloc:
    node: int
    holdings: list[Holding]
    start: float
    end: float


@dataclass(frozen=True)
class _Attempt:
    job: int
    node: int
    holdings: tuple[Holding, ...]
    start: float
    end: float
    preempted: bool
    lost_h: float


class _Sim:
    def __init__(self, jobs: Sequence[Job], cluster: Cluster, policy: str, placement: str,
                 preemption: bool, tenants: Sequence[Tenant], half_life_h: float | None) -> None:
        self.jobs = jobs
        self.cluster = cluster
        self.policy = policy
        self.placement = placement
        self.preemption = preemption
        self.half_life_h = half_life_h
        self.N, self.G = cluster.nodes, cluster.gpus_per_node
        self.mig = cluster.mig
        self.state = _State(self.N, self.G, cluster.mig)
        self.demand = [self._demand(i, j) for i, j in enumerate(jobs)]
        n = len(jobs)
        self.remaining = [j.hours for j in jobs]
        self.done = [0.0] * n
        self.attempt_no = [0] * n
        self.first_start = [math.nan] * n
        self.completion = [math.nan] * n
        self.running: dict[int, _Alloc] = {}
        self.attempts: list[_Attempt] = []
        self.timeline: list[tuple[float, int, float]] = []
        self.seq = 0
        self.completions: list[tuple[float, int, int, int]] = []
        # tenants
        names = {j.tenant or "" for j in jobs}
        self.tenant_cfg = {t.name: t for t in tenants}
        names |= set(self.tenant_cfg)
        self.tenant_names = sorted(names)
        total_shares = sum(self.tenant_cfg[t].share if t in self.tenant_cfg else 1.0
                           for t in self.tenant_names)
        self.norm_share = {t: (self.tenant_cfg[t].share if t in self.tenant_cfg else 1.0)
                           / total_shares for t in self.tenant_names}
        self.tenant_of = [j.tenant or "" for j in jobs]
        self.held = dict.fromkeys(self.tenant_names, 0.0)
        self.usage = dict.fromkeys(self.tenant_names, 0.0)
        self.usage_t = 0.0
        self.quota = {t.name: t.quota_gpus for t in tenants if t.quota_gpus is not None}
        self.borrow = {t.name: (math.inf if t.borrowing_limit_gpus is None
                                else t.borrowing_limit_gpus)
                       for t in tenants if t.quota_gpus is not None}
        self.lend = {t.name: (math.inf if t.lending_limit_gpus is None
                              else min(t.lending_limit_gpus, t.quota_gpus))
                     for t in tenants if t.quota_gpus is not None}
        self._check_admissible()
        # FGD target workload: job classes by popularity (at most 32 most popular)
        counts = Counter(d.key for d in self.demand)
        top = counts.most_common(32)
        by_key = {d.key: d for d in self.demand}
        total = sum(c for _, c in top)
        self.targets = [(by_key[k], c / total) for k, c in top]
        # queue: buckets of pending jobs in (submit, index) order
        self.buckets: dict[tuple[Any, ...], list[int]] = {}
        self.bucket_of: list[tuple[Any, ...]] = [self._bucket_key(i) for i in range(n)]
        self.pending = 0
        self.requeue: list[int] = []
        self.version = 0  # bumped on every start and stop (for the shadow cache)
        self.preemptions = 0
        self.shadow_cache: dict[tuple[Any, ...], tuple[float, frozenset[int]]] = {}

    # -- setup ------------------------------------------------------------------------------------
    def _demand(self, i: int, job: Job) -> _Demand:
        gpn = self.G
        if job.mig_profile is not None:
            profile = mig_profile(self.mig, job.mig_profile, f"jobs[{i}].mig_profile",
                                  self.cluster.gpu_model)
            assert self.mig is not None
            per_gpu = min(profile.max_count, self.mig.compute_slices // profile.compute_slices,
                          len(profile.placements))
            count = int(job.gpus)
            validate.at_most(f"jobs[{i}].gpus", count, per_gpu * gpn,
                             f"the {profile.name} instances that fit on one node")
            share = profile.compute_slices / self.mig.compute_slices
            return _Demand(_MIG, count, share, profile, ("mig", profile.name, count))
        if job.gpus < 1:
            return _Demand(_FRAC, 1, job.gpus, None, ("frac", job.gpus))
        count = int(job.gpus)
        validate.at_most(f"jobs[{i}].gpus", count, gpn, "the GPUs of one node")
        return _Demand(_WHOLE, count, 1.0, None, ("whole", count))

    def _check_admissible(self) -> None:
        for i, t in enumerate(self.tenant_of):
            if t not in self.quota:
                continue
            others = sum(min(self.lend[n], q) for n, q in self.quota.items() if n != t)
            limit = self.quota[t] + min(self.borrow[t], others)
            validate.at_most(f"jobs[{i}].gpus", round(self.demand[i].total, 9), limit + EPS,
                             f"tenant {t}'s quota plus borrowing limit")

    def _bucket_key(self, i: int) -> tuple[Any, ...]:
        job = self.jobs[i]
        key: tuple[Any, ...] = (self.demand[i].key,)
        if self.policy == "priority":
            key = (job.priority, *key)
        elif self.policy == "fair_share":
            key = (self.tenant_of[i], *key)
        if self.preemption:
            key = (*key, job.priority, self.tenant_of[i])
        return key

    def _enqueue(self, i: int) -> None:
        bucket = self.buckets.setdefault(self.bucket_of[i], [])
        job = self.jobs[i]
        if not bucket or (self.jobs[bucket[-1]].submit_h, bucket[-1]) < (job.submit_h, i):
            bucket.append(i)
        else:
            keys = [(self.jobs[b].submit_h, b) for b in bucket]
            bucket.insert(bisect.bisect(keys, (job.submit_h, i)), i)
        self.pending += 1

    # -- fair share -------------------------------------------------------------------------------
    def _advance_usage(self, t: float) -> None:
        dt = t - self.usage_t
        if dt <= 0:
            return
        h = self.half_life_h
        if h is None:
            for name, rate in self.held.items():
                if rate:
                    self.usage[name] += rate * dt
        else:
            decay = 2.0 ** (-dt / h)
            gain = h / math.log(2) * (1 - decay)
            for name in self.tenant_names:
                self.usage[name] = self.usage[name] * decay + self.held[name] * gain
        self.usage_t = t

    def _group_key(self) -> dict[Any, float]:
        if self.policy == "fair_share":
            total = sum(self.usage.values())
            return {t: -(2.0 ** (-(self.usage[t] / total if total > 0 else 0.0)
                                / self.norm_share[t])) for t in self.tenant_names}
        return {}

    # -- quotas -----------------------------------------------------------------------------------
    def _admissible(self, i: int, freed: Mapping[str, float] | None = None) -> bool:
        """Kueue admission: within nominal quota + borrowing limit, and what all tenants borrow
        fits in what the others lend (unused nominal quota, up to each lending limit)."""
        t = self.tenant_of[i]
        if t not in self.quota:
            return True
        d = self.demand[i].total
        freed = freed or {}
        used = self.held[t] - freed.get(t, 0.0) + d
        if used > self.quota[t] + self.borrow[t] + EPS:
            return False
        borrowed = lendable = 0.0
        for name, quota in self.quota.items():
            u = used if name == t else self.held[name] - freed.get(name, 0.0)
            borrowed += max(0.0, u - quota)
            lendable += min(self.lend[name], max(0.0, quota - u))
        return borrowed <= lendable + EPS

    # -- placement --------------------------------------------------------------------------------
    def _score(self, st: _State, node: int, g: int, frag_before: float | None) -> tuple[Any, ...]:
        """Score a placement already applied to ``st`` (lower is better)."""
        node_free = self.G - st.node_used[node]
        gpu_free = st.free(g)
        if frag_before is None:
            return self._fit_score(node_free, gpu_free, node, g)
        delta = node_fragmentation(st, node, self.targets) - frag_before
        return (round(delta, 9), round(node_free, 9), round(gpu_free, 9), node, g)

    def _fit_score(self, node_free: float, gpu_free: float, node: int, g: int
                   ) -> tuple[Any, ...]:
        """Best fit (pack) or worst fit (spread) from the free capacity left after placing."""
        if self.placement == "pack":
            return (round(node_free, 9), round(gpu_free, 9), node, g)
        return (-round(node_free, 9), -round(gpu_free, 9), node, g)

    def _place(self, st: _State, d: _Demand, mask: frozenset[int] | None = None,
               only_node: int | None = None) -> list[Holding] | None:
        """Choose where ``d`` goes on ``st`` (not applied); None if it does not fit."""
        G = self.G
        nodes = range(self.N) if only_node is None else (only_node,)
        fgd = self.placement == "fgd"
        best: tuple[tuple[Any, ...], list[Holding]] | None = None
        if d.kind == _WHOLE:
            k = d.count
            for n in nodes:
                if st.node_empty[n] < k:
                    continue
                gs = [g for g in range(n * G, n * G + G)
                      if st.mode[g] == _EMPTY and (mask is None or g not in mask)][:k]
                if len(gs) < k:
                    continue
                hold: list[Holding] = [(g, 1.0, 0, 0, None) for g in gs]
                if fgd:
                    whole_before = node_fragmentation(st, n, self.targets)
                    st.apply(hold)
                    score = self._score(st, n, gs[0], whole_before)
                    st.release(hold)
                else:
                    score = self._fit_score(G - st.node_used[n] - k, 0.0, n, gs[0])
                if best is None or score < best[0]:
                    best = (score, hold)
            return None if best is None else best[1]
        if d.kind == _FRAC:
            s = d.share
            for n in nodes:
                if G - st.node_used[n] < s - EPS:
                    continue
                before = node_fragmentation(st, n, self.targets) if fgd else None
                for g in range(n * G, n * G + G):
                    if st.mode[g] == _MIGMODE or st.used[g] + s > 1.0 + EPS:
                        continue
                    if mask is not None and g in mask:
                        continue
                    hold = [(g, s, 0, 0, None)]
                    if fgd:
                        st.apply(hold)
                        score = self._score(st, n, g, before)
                        st.release(hold)
                    else:
                        score = self._fit_score(G - st.node_used[n] - s, 1.0 - st.used[g] - s,
                                                n, g)
                    if best is None or score < best[0]:
                        best = (score, hold)
            return None if best is None else best[1]
        # MIG: place the instances one by one on the same node
        profile = d.profile
        assert profile is not None
        for n in nodes:
            if G - st.node_used[n] < d.total - EPS:
                continue
            before = node_fragmentation(st, n, self.targets) if fgd else None
            placed: list[Holding] = []
            for _ in range(d.count):
                pick: tuple[tuple[Any, ...], Holding] | None = None
                for g in range(n * G, n * G + G):
                    if mask is not None and g in mask:
                        continue
                    for start in st.mig_starts(g, profile, every=fgd):
                        mask_bits = ((1 << profile.memory_slices) - 1) << start
                        h: Holding = (g, d.share, mask_bits, profile.compute_slices, profile)
                        st.apply([h])
                        score = self._score(st, n, g, before)
                        st.release([h])
                        if pick is None or score < pick[0]:
                            pick = (score, h)
                if pick is None:
                    break
                placed.append(pick[1])
                st.apply([pick[1]])
            st.release(placed)
            if len(placed) < d.count:
                continue
            st.apply(placed)
            score = self._score(st, n, placed[0][0], before)
            st.release(placed)
            if best is None or score < best[0]:
                best = (score, placed)
        return None if best is None else best[1]

    # -- start / stop -----------------------------------------------------------------------------
    def _start(self, i: int, hold: list[Holding], t: float) -> None:
        self.version += 1
        self.state.apply(hold)
        end = t + self.remaining[i]
        self.running[i] = _Alloc(hold[0][0] // self.G, hold, t, end)
        self.seq += 1
        heapq.heappush(self.completions, (end, self.seq, i, self.attempt_no[i]))
        share = self.demand[i].total
        tenant = self.tenant_of[i]
        self.held[tenant] += share
        if math.isnan(self.first_start[i]):
            self.first_start[i] = t
        self.pending -= 1

    def _stop(self, i: int, t: float, preempted: bool) -> None:
        self.version += 1
        alloc = self.running.pop(i)
        self.state.release(alloc.holdings)
        share = self.demand[i].total
        tenant = self.tenant_of[i]
        self.held[tenant] -= share
        lost = 0.0
        if preempted:
            elapsed = t - alloc.start
            interval = self.jobs[i].checkpoint_interval_h
            saved = 0.0 if interval is None else math.floor(elapsed / interval + EPS) * interval
            saved = min(saved, elapsed)
            lost = elapsed - saved
            self.done[i] += saved
            self.remaining[i] = self.jobs[i].hours - self.done[i]
            self.attempt_no[i] += 1
            self.requeue.append(i)
        else:
            self.done[i] = self.jobs[i].hours
            self.remaining[i] = 0.0
            self.completion[i] = t
        self.attempts.append(_Attempt(i, alloc.node, tuple(alloc.holdings), alloc.start, t,
                                      preempted, lost))

    # -- preemption -------------------------------------------------------------------------------
    def _victims_for(self, i: int) -> list[tuple[int, bool]]:
        """Running jobs ``i`` may evict, and whether each may go by priority (else: reclaim)."""
        job = self.jobs[i]
        tenant = self.tenant_of[i]
        reclaim = (tenant in self.quota
                   and self.held[tenant] + self.demand[i].total <= self.quota[tenant] + EPS)
        quotas = bool(self.quota)
        out = []
        for v in self.running:
            tv = self.tenant_of[v]
            # with quotas, priority acts inside a tenant only (Kueue): a borrower evicted by a
            # reclaim must not win its GPUs back by priority, or the two would evict each other
            by_priority = self.jobs[v].priority < job.priority and (not quotas or tv == tenant)
            by_reclaim = (reclaim and tv in self.quota and tv != tenant
                          and self.held[tv] > self.quota[tv] + EPS)
            if by_priority or by_reclaim:
                out.append((v, by_priority))
        # Kueue/Slurm heuristics: lowest priority first, then the most recently started
        out.sort(key=lambda vp: (self.jobs[vp[0]].priority, -self.running[vp[0]].start, -vp[0]))
        return out

    def _try_preempt(self, i: int, t: float, mask: frozenset[int] | None) -> list[Holding] | None:
        victims = self._victims_for(i)
        if not victims:
            return None
        d = self.demand[i]
        best: tuple[tuple[float, ...], int, list[int]] | None = None
        for n in range(self.N):
            on_node = [(v, p) for v, p in victims if self.running[v].node == n]
            if not on_node:
                continue
            st = self.state.copy()
            chosen: list[int] = []
            freed: dict[str, float] = {}
            fits = False
            for v, by_priority in on_node:
                tv = self.tenant_of[v]
                if not by_priority and self.held[tv] - freed.get(tv, 0.0) <= (
                        self.quota[tv] + EPS):
                    continue  # Kueue: reclaim only while the victim's tenant is borrowing
                st.release(self.running[v].holdings)
                chosen.append(v)
                freed[tv] = freed.get(tv, 0.0) + self.demand[v].total
                if (self._place(st, d, mask, only_node=n) is not None
                        and self._admissible(i, freed)):
                    fits = True
                    break
            if not fits:
                continue
            for v in reversed(chosen[:-1]):  # fill back victims that need not go
                st.apply(self.running[v].holdings)
                tv = self.tenant_of[v]
                freed[tv] -= self.demand[v].total
                if (self._place(st, d, mask, only_node=n) is not None
                        and self._admissible(i, freed)):
                    chosen.remove(v)
                else:
                    st.release(self.running[v].holdings)
                    freed[tv] += self.demand[v].total
            lost = sum((t - self.running[v].start) * self.demand[v].total for v in chosen)
            cost = (len(chosen), round(lost, 9), n)
            if best is None or cost < best[0]:
                best = (cost, n, chosen)
        if best is None:
            return None
        _, n, chosen = best
        self.preemptions += len(chosen)
        if self.preemptions > 100 * len(self.jobs) + 1000:
            raise RuntimeError("preemption does not converge (jobs keep evicting each other)")
        for v in chosen:
            self._stop(v, t, preempted=True)
        return self._place(self.state, d, mask, only_node=n)

    # -- EASY reservation -------------------------------------------------------------------------
    def _shadow(self, d: _Demand) -> tuple[float, frozenset[int]]:
        """Earliest time ``d`` fits if the running jobs end as known, and the GPUs it gets."""
        key = (d.key, self.version)
        if key not in self.shadow_cache:
            if len(self.shadow_cache) > 64:
                self.shadow_cache.clear()
            self.shadow_cache[key] = self._compute_shadow(d)
        return self.shadow_cache[key]

    def _compute_shadow(self, d: _Demand) -> tuple[float, frozenset[int]]:
        if d.kind == _WHOLE:
            # a GPU is whole again when the last of its occupants ends
            empty_at = [0.0] * (self.N * self.G)
            for a in self.running.values():
                end = a.end
                for h in a.holdings:
                    if empty_at[h[0]] < end:
                        empty_at[h[0]] = end
            k, G = d.count, self.G
            best: tuple[float, list[tuple[float, int]]] | None = None
            for n in range(self.N):
                first = sorted(zip(empty_at[n * G:n * G + G], range(n * G, n * G + G),
                                   strict=True))[:k]
                if best is None or first[-1][0] < best[0] - EPS:
                    best = (first[-1][0], first)
            assert best is not None
            return best[0], frozenset(g for _, g in best[1])
        st = self.state.copy()
        releases = sorted((a.end, v) for v, a in self.running.items())
        k = 0
        while k < len(releases):
            te = releases[k][0]
            while k < len(releases) and releases[k][0] <= te + EPS:
                st.release(self.running[releases[k][1]].holdings)
                k += 1
            hold = self._place(st, d)
            if hold is not None:
                return te, frozenset(g for g, *_ in hold)
        return math.inf, frozenset()

    # -- one scheduling pass ----------------------------------------------------------------------
    def _pass(self, t: float) -> None:
        if not self.pending:
            return
        if not self.preemption and sum(self.state.node_used) >= self.N * self.G - EPS:
            return  # every GPU is fully held: nothing can start
        policy = self.policy
        group = self._group_key()
        heap: list[tuple[Any, ...]] = []
        ptr: dict[tuple[Any, ...], int] = {}

        def gkey(b: tuple[Any, ...]) -> float:
            if policy == "priority":
                return -float(b[0])
            if policy == "fair_share":
                return group[b[0]]
            return 0.0

        def push(b: tuple[Any, ...]) -> None:
            items = self.buckets[b]
            p = ptr[b]
            if p < len(items):
                j = items[p]
                heapq.heappush(heap, (gkey(b), self.jobs[j].submit_h, j, b))

        for b in [b for b, items in self.buckets.items() if not items]:
            del self.buckets[b]
        for b in self.buckets:
            ptr[b] = 0
            push(b)
        dead: set[tuple[Any, ...]] = set()
        masked_dead: set[tuple[Any, ...]] = set()
        dead_buckets: set[tuple[Any, ...]] = set()
        no_victims: set[tuple[Any, ...]] = set()
        reservation: tuple[float, frozenset[int]] | None = None
        easy = policy in ("easy_backfill", "priority", "fair_share")
        while heap:
            _, _, i, b = heapq.heappop(heap)
            items = self.buckets[b]
            d = self.demand[i]
            cls = d.key
            admissible = self._admissible(i)
            if not admissible and not self.preemption:
                ptr[b] += 1  # not admitted (quota): it waits without blocking others
                push(b)
                continue
            hold: list[Holding] | None = None
            short = False
            if reservation is not None:
                short = t + self.remaining[i] <= reservation[0] + EPS
            if admissible and cls not in dead:
                if reservation is None or short:
                    hold = self._place(self.state, d)
                    if hold is None:
                        dead.add(cls)
                elif cls not in masked_dead:
                    hold = self._place(self.state, d, reservation[1])
                    if hold is None:
                        if self._place(self.state, d) is None:
                            dead.add(cls)
                        else:
                            masked_dead.add(cls)
            if hold is None and self.preemption and b not in no_victims:
                mask = None if reservation is None else reservation[1]
                hold = self._try_preempt(i, t, mask)
                if hold is None:
                    no_victims.add(b)
                else:  # resources were freed: offer them to every bucket again
                    dead.clear()
                    masked_dead.clear()
                    no_victims.clear()
                    revived, dead_buckets = dead_buckets, set()
                    for rb in revived:
                        push(rb)
            if hold is not None:
                self._start(i, hold, t)
                del items[ptr[b]]
                push(b)
                continue
            if not admissible:  # not admitted and nothing to reclaim: skip, do not block
                ptr[b] += 1
                push(b)
                continue
            # i is blocked
            if policy == "fifo":
                return
            if easy and reservation is None:
                reservation = self._shadow(d)
            if cls in dead and (b in no_victims or not self.preemption):
                dead_buckets.add(b)  # nothing else in this bucket fits this pass
                continue
            ptr[b] += 1
            if cls in masked_dead and reservation is not None and not self.preemption:
                # only jobs that end by the shadow time may still start from this bucket
                limit = reservation[0] - t + EPS
                p = ptr[b]
                rem = self.remaining
                while p < len(items) and rem[items[p]] > limit:
                    p += 1
                ptr[b] = p
            push(b)

    # -- main loop --------------------------------------------------------------------------------
    def run(self) -> None:
        jobs = self.jobs
        order = sorted(range(len(jobs)), key=lambda i: (jobs[i].submit_h, i))
        ap = 0
        comp = self.completions
        while ap < len(order) or comp:
            t = min(jobs[order[ap]].submit_h if ap < len(order) else math.inf,
                    comp[0][0] if comp else math.inf)
            self._advance_usage(t)
            while comp and comp[0][0] <= t + EPS:
                end, _, i, attempt = heapq.heappop(comp)
                if attempt == self.attempt_no[i] and i in self.running:
                    self._stop(i, end, preempted=False)
            while ap < len(order) and jobs[order[ap]].submit_h <= t + EPS:
                self._enqueue(order[ap])
                ap += 1
            self._pass(t)
            for v in self.requeue:
                self._enqueue(v)
            self.requeue.clear()
            self.timeline.append((t, self.pending, self.state_used()))
            if not comp and ap >= len(order) and self.pending:
                raise RuntimeError("scheduler stalled with jobs queued and nothing running")

    def state_used(self) -> float:
        return float(sum(self.state.node_used))


# --- the result ---------------------------------------------------------------------------------


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
    _attempts: tuple[_Attempt, ...] = field(repr=False)
    _targets: tuple[tuple[_Demand, float], ...] = field(repr=False)
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
        st = _State(c.nodes, c.gpus_per_node, c.mig)
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


def simulate(jobs: Sequence[Job], cluster: Cluster, policy: str = "fifo",
             placement: str = "pack", preemption: bool = False, *,
             tenants: Sequence[Tenant] = (),
             half_life_h: float | None = DEFAULT_HALF_LIFE_H) -> SimulationResult:
    """Run the jobs on the cluster under a policy and a placement; return the schedule.

    Parameters
    ----------
    jobs : sequence of Job
        1 to :data:`MAX_JOBS` jobs with unique ids; listing order breaks submit-time ties.
    cluster : Cluster
        Nodes x GPUs per node of one GPU model.
    policy : {"fifo", "easy_backfill", "greedy", "priority", "fair_share"}, default "fifo"
        How the queue is served (see the module docstring).
    placement : {"pack", "spread", "fgd"}, default "pack"
        Where a job goes among the places that can take it.
    preemption : bool, default False
        Let a blocked job evict lower-priority jobs, and let a tenant within its quota reclaim
        from borrowing tenants; evicted jobs lose the work since their last checkpoint.
    tenants : sequence of Tenant, optional
        Fair-share shares and quotas; a tenant named by a job but not listed has share 1 and no
        quota.
    half_life_h : float or None, default 168
        Half-life of the usage decay for fair share (Slurm ``PriorityDecayHalfLife``, default
        7 days); None: no decay. [h]

    Returns
    -------
    SimulationResult
        ``.makespan_h``, ``.mean_jct_h``, ``.allocation``, ``.schedule`` and more metrics.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For an unknown policy or placement, no jobs or too many, a duplicate job id, a job
        wider than one node (``jobs[i].gpus``), an unknown MIG profile or one on a GPU without
        MIG (``jobs[i].mig_profile``), a job larger than its tenant's quota plus borrowing
        limit, or a duplicate tenant.

    Examples
    --------
    >>> jobs = [Job("J1", 0, 6, 4), Job("J2", 0, 8, 2), Job("J3", 0, 2, 4), Job("J4", 0, 2, 2)]
    >>> r = simulate(jobs, Cluster(1, 8), "easy_backfill")
    >>> r.makespan_h, r.mean_jct_h, r.allocation
    (8.0, 5.5, 0.8125)

    References
    ----------
    .. [1] Check cases: Lifka, "The ANL/IBM SP scheduling system" (EASY), JSSPP 1995;
       Mu'alem & Feitelson, IEEE TPDS 12(6), 2001; SchedMD Slurm documentation
       (sched/backfill, classic fair share); Kueue ``cluster_queue.md``; Weng, Yang et al.,
       USENIX ATC'23 (FGD).

    Used in: notebooks/08_orchestration.ipynb
    """
    policy = validate.one_of("policy", policy, POLICIES)
    placement = validate.one_of("placement", placement, PLACEMENTS)
    if not isinstance(cluster, Cluster):
        raise validate.InputError("cluster", "other", cluster, "cluster must be a Cluster")
    jobs = list(jobs)
    if not jobs:
        raise validate.InputError("jobs", "other", jobs, "simulate needs at least one job")
    validate.at_most("jobs", len(jobs), MAX_JOBS, "the maximum job count")
    seen: set[Any] = set()
    for i, j in enumerate(jobs):
        if not isinstance(j, Job):
            raise validate.InputError(f"jobs[{i}]", "other", j, f"jobs[{i}] must be a Job")
        if j.id in seen:
            raise validate.InputError(f"jobs[{i}].id", "other", j.id,
                                      f"job id {j.id!r} is used twice")
        seen.add(j.id)
    tenants = list(tenants)
    names = [t.name for t in tenants]
    for t in tenants:
        if not isinstance(t, Tenant):
            raise validate.InputError("tenants", "other", t, "tenants must be Tenant values")
    if len(set(names)) != len(names):
        raise validate.InputError("tenants", "other", names, "tenant names must be unique")
    if half_life_h is not None:
        half_life_h = validate.positive("half_life_h", half_life_h)
    sim = _Sim(jobs, cluster, policy, placement, bool(preemption), tenants, half_life_h)
    sim.run()
    return _result(sim)


def _result(sim: _Sim) -> SimulationResult:
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
    makespan = float(end.max()) - t0
    held = float((schedule["gpus"] * (schedule["end_h"] - schedule["start_h"])).sum())
    timeline = pd.DataFrame(sim.timeline, columns=["t_h", "queued", "gpus_held"])
    return SimulationResult(
        cluster=sim.cluster, policy=sim.policy, placement=sim.placement,
        preemption=sim.preemption, schedule=schedule, jobs=table, timeline=timeline,
        makespan_h=makespan, mean_jct_h=float((end - submit).mean()),
        allocation=held / (sim.cluster.installed_gpus * makespan) if makespan > 0 else 0.0,
        _attempts=tuple(attempts), _targets=tuple(sim.targets), _t0=t0,
    )


# --- workloads ----------------------------------------------------------------------------------


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


def demand_curve(jobs: Sequence[Job], mig: MigSpec | None = None, *, step_h: float = 0.25,
                 until_h: float | None = None) -> pd.DataFrame:
    """Return the GPUs the jobs would hold if each ran from its submit time, by kind.

    The demand a cluster sized "for the peak" must meet: no queue, every job running from the
    moment it arrives for its ``hours``.

    Parameters
    ----------
    jobs : sequence of Job
        The workload.
    mig : labkit.gpu.models.MigSpec, optional
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


def quota_tenants(quotas: Mapping[str, float], *, borrowing: bool = True,
                  lending: bool = True, shares: Mapping[str, float] | None = None
                  ) -> list[Tenant]:
    """Return tenants with nominal quotas, for a policy lab.

    Parameters
    ----------
    quotas : mapping of str to float
        Nominal quota per tenant, each 0 to 10,000 (errors name the field ``quota_<tenant>``).
        [GPU]
    borrowing : bool, default True
        Whether tenants may borrow the cohort's unused quota (False: borrowing limit 0).
    lending : bool, default True
        Whether tenants lend their unused quota (False: lending limit 0, a static partition).
    shares : mapping of str to float, optional
        Fair-share shares (default 1 each; errors name ``share_<tenant>``).

    Used in: notebooks/08_orchestration.ipynb
    """
    out = []
    for name, q in quotas.items():
        quota = validate.at_most(f"quota_{name}", validate.non_negative(f"quota_{name}", q),
                                 10_000, "10,000 GPUs")
        share = 1.0 if shares is None or name not in shares else validate.positive(
            f"share_{name}", shares[name])
        out.append(Tenant(name, share, quota, None if borrowing else 0.0,
                          None if lending else 0.0))
    return out
