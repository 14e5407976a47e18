"""The discrete-event simulator: arrivals, completions, one scheduling pass per timestamp.

Pure. The semantics (gang placement, EASY reservations, preemption with checkpoints, Kueue
admission) are described in :mod:`labkit.scheduling`; this module runs them.

Used in: notebooks/08_orchestration.ipynb
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from labkit import validate
from labkit.scheduling.jobs import (
    DEFAULT_HALF_LIFE_H,
    EPS,
    MAX_JOBS,
    PLACEMENTS,
    POLICIES,
    Cluster,
    Job,
    Tenant,
    mig_profile,
)
from labkit.scheduling.placement import Placer
from labkit.scheduling.policies import EASY_POLICIES, JobQueue, TenantBook
from labkit.scheduling.report import Attempt, SimulationResult, result_of
from labkit.scheduling.state import FRAC, MIG, WHOLE, ClusterState, Demand, Holding

Bucket = tuple[Any, ...]
#: FGD's target workload: the most popular job classes (at most this many).
FGD_TARGET_CLASSES = 32


@dataclass
class Alloc:
    """A running job's holdings and its planned end."""

    node: int
    holdings: list[Holding]
    start: float
    end: float


def job_demand(i: int, job: Job, cluster: Cluster) -> Demand:
    """Return what job ``i`` asks of the cluster (whole GPUs, a share, or MIG instances).

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For a job wider than one node, or a MIG profile the board does not have.
    """
    gpn = cluster.gpus_per_node
    if job.mig_profile is not None:
        spec = cluster.mig
        profile = mig_profile(spec, job.mig_profile, f"jobs[{i}].mig_profile", cluster.gpu_model)
        assert spec is not None
        per_gpu = min(profile.max_count, spec.compute_slices // profile.compute_slices,
                      len(profile.placements))
        count = int(job.gpus)
        validate.at_most(f"jobs[{i}].gpus", count, per_gpu * gpn,
                         f"the {profile.name} instances that fit on one node")
        share = profile.compute_slices / spec.compute_slices
        return Demand(MIG, count, share, profile, ("mig", profile.name, count))
    if job.gpus < 1:
        return Demand(FRAC, 1, job.gpus, None, ("frac", job.gpus))
    count = int(job.gpus)
    validate.at_most(f"jobs[{i}].gpus", count, gpn, "the GPUs of one node")
    return Demand(WHOLE, count, 1.0, None, ("whole", count))


def fgd_targets(demand: Sequence[Demand]) -> list[tuple[Demand, float]]:
    """Return FGD's target workload: the job classes by popularity (the most popular 32)."""
    counts = Counter(d.key for d in demand)
    top = counts.most_common(FGD_TARGET_CLASSES)
    by_key = {d.key: d for d in demand}
    total = sum(c for _, c in top)
    return [(by_key[k], c / total) for k, c in top]


class Sim:
    """One simulation run: the cluster state, the queue, the tenants and what happened."""

    def __init__(self, jobs: Sequence[Job], cluster: Cluster, policy: str, placement: str,
                 preemption: bool, tenants: Sequence[Tenant], half_life_h: float | None) -> None:
        self.jobs = jobs
        self.cluster = cluster
        self.policy = policy
        self.placement = placement
        self.preemption = preemption
        self.N, self.G = cluster.nodes, cluster.gpus_per_node
        self.state = ClusterState(self.N, self.G, cluster.mig)
        self.demand = [job_demand(i, j, cluster) for i, j in enumerate(jobs)]
        n = len(jobs)
        self.remaining = [j.hours for j in jobs]
        self.done = [0.0] * n
        self.attempt_no = [0] * n
        self.first_start = [math.nan] * n
        self.completion = [math.nan] * n
        self.running: dict[int, Alloc] = {}
        self.attempts: list[Attempt] = []
        self.timeline: list[tuple[float, int, float]] = []
        self.seq = 0
        self.completions: list[tuple[float, int, int, int]] = []
        self.book = TenantBook(jobs, tenants, half_life_h)
        self.tenant_of = self.book.tenant_of
        self.book.check_admissible(self.demand)
        self.targets = fgd_targets(self.demand)
        self.placer = Placer(self.N, self.G, placement, self.targets)
        self.queue = JobQueue(jobs, self.demand, self.tenant_of, policy, preemption)
        self.requeue: list[int] = []
        self.version = 0  # bumped on every start and stop (for the shadow cache)
        self.preemptions = 0
        self.shadow_cache: dict[tuple[Any, ...], tuple[float, frozenset[int]]] = {}

    def place(self, st: ClusterState, d: Demand, mask: frozenset[int] | None = None,
              only_node: int | None = None) -> list[Holding] | None:
        """Where ``d`` would go on ``st`` (see :meth:`Placer.place`)."""
        return self.placer.place(st, d, mask, only_node)

    def admissible(self, i: int, freed: dict[str, float] | None = None) -> bool:
        """Kueue admission of job ``i`` (see :meth:`TenantBook.admissible`)."""
        return self.book.admissible(i, self.demand[i].total, freed)

    # -- start / stop -----------------------------------------------------------------------------
    def start(self, i: int, hold: list[Holding], t: float) -> None:
        """Start job ``i`` on ``hold`` at ``t``."""
        self.version += 1
        self.state.apply(hold)
        end = t + self.remaining[i]
        self.running[i] = Alloc(hold[0][0] // self.G, hold, t, end)
        self.seq += 1
        heapq.heappush(self.completions, (end, self.seq, i, self.attempt_no[i]))
        self.book.held[self.tenant_of[i]] += self.demand[i].total
        if math.isnan(self.first_start[i]):
            self.first_start[i] = t
        self.queue.pending -= 1

    def stop(self, i: int, t: float, preempted: bool) -> None:
        """Stop job ``i`` at ``t``: completed, or evicted (back to the queue, keeping the work
        saved by its last checkpoint)."""
        self.version += 1
        alloc = self.running.pop(i)
        self.state.release(alloc.holdings)
        self.book.held[self.tenant_of[i]] -= self.demand[i].total
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
        self.attempts.append(Attempt(i, alloc.node, tuple(alloc.holdings), alloc.start, t,
                                     preempted, lost))

    # -- preemption -------------------------------------------------------------------------------
    def victims_for(self, i: int) -> list[tuple[int, bool]]:
        """Running jobs ``i`` may evict, and whether each may go by priority (else: reclaim)."""
        job = self.jobs[i]
        tenant = self.tenant_of[i]
        book = self.book
        reclaim = (tenant in book.quota
                   and book.held[tenant] + self.demand[i].total <= book.quota[tenant] + EPS)
        quotas = bool(book.quota)
        out = []
        for v in self.running:
            tv = self.tenant_of[v]
            # with quotas, priority acts inside a tenant only (Kueue): a borrower evicted by a
            # reclaim must not win its GPUs back by priority, or the two would evict each other
            by_priority = self.jobs[v].priority < job.priority and (not quotas or tv == tenant)
            by_reclaim = reclaim and tv != tenant and book.borrowing(tv)
            if by_priority or by_reclaim:
                out.append((v, by_priority))
        # Kueue/Slurm heuristics: lowest priority first, then the most recently started
        out.sort(key=lambda vp: (self.jobs[vp[0]].priority, -self.running[vp[0]].start, -vp[0]))
        return out

    def _fits_after(self, i: int, st: ClusterState, n: int, mask: frozenset[int] | None,
                    freed: dict[str, float]) -> bool:
        return (self.place(st, self.demand[i], mask, only_node=n) is not None
                and self.admissible(i, freed))

    def _evict_on_node(self, i: int, n: int, victims: list[tuple[int, bool]],
                       mask: frozenset[int] | None) -> list[int] | None:
        """The fewest victims on node ``n`` whose eviction lets ``i`` start; None: none do."""
        st = self.state.copy()
        chosen: list[int] = []
        freed: dict[str, float] = {}
        for v, by_priority in victims:
            tv = self.tenant_of[v]
            if not by_priority and not self.book.borrowing(tv, freed.get(tv, 0.0)):
                continue  # Kueue: reclaim only while the victim's tenant is borrowing
            st.release(self.running[v].holdings)
            chosen.append(v)
            freed[tv] = freed.get(tv, 0.0) + self.demand[v].total
            if self._fits_after(i, st, n, mask, freed):
                break
        else:
            return None
        for v in reversed(chosen[:-1]):  # fill back victims that need not go
            st.apply(self.running[v].holdings)
            tv = self.tenant_of[v]
            freed[tv] -= self.demand[v].total
            if self._fits_after(i, st, n, mask, freed):
                chosen.remove(v)
            else:
                st.release(self.running[v].holdings)
                freed[tv] += self.demand[v].total
        return chosen

    def try_preempt(self, i: int, t: float, mask: frozenset[int] | None) -> list[Holding] | None:
        """Evict the cheapest set of victims on one node so that ``i`` starts; its holdings."""
        victims = self.victims_for(i)
        if not victims:
            return None
        best: tuple[tuple[float, ...], int, list[int]] | None = None
        for n in range(self.N):
            on_node = [(v, p) for v, p in victims if self.running[v].node == n]
            chosen = self._evict_on_node(i, n, on_node, mask) if on_node else None
            if chosen is None:
                continue
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
            self.stop(v, t, preempted=True)
        return self.place(self.state, self.demand[i], mask, only_node=n)

    # -- EASY reservation -------------------------------------------------------------------------
    def shadow(self, d: Demand) -> tuple[float, frozenset[int]]:
        """Earliest time ``d`` fits if the running jobs end as known, and the GPUs it gets."""
        key = (d.key, self.version)
        if key not in self.shadow_cache:
            if len(self.shadow_cache) > 64:
                self.shadow_cache.clear()
            self.shadow_cache[key] = (self._whole_shadow(d) if d.kind == WHOLE
                                      else self._replay_shadow(d))
        return self.shadow_cache[key]

    def _whole_shadow(self, d: Demand) -> tuple[float, frozenset[int]]:
        # a GPU is whole again when the last of its occupants ends
        empty_at = [0.0] * (self.N * self.G)
        for a in self.running.values():
            for h in a.holdings:
                empty_at[h[0]] = max(empty_at[h[0]], a.end)
        k, G = d.count, self.G
        best: tuple[float, list[tuple[float, int]]] | None = None
        for n in range(self.N):
            first = sorted(zip(empty_at[n * G:n * G + G], range(n * G, n * G + G),
                               strict=True))[:k]
            if best is None or first[-1][0] < best[0] - EPS:
                best = (first[-1][0], first)
        assert best is not None
        return best[0], frozenset(g for _, g in best[1])

    def _replay_shadow(self, d: Demand) -> tuple[float, frozenset[int]]:
        # release the running jobs in end order until d fits
        st = self.state.copy()
        releases = sorted((a.end, v) for v, a in self.running.items())
        k = 0
        while k < len(releases):
            te = releases[k][0]
            while k < len(releases) and releases[k][0] <= te + EPS:
                st.release(self.running[releases[k][1]].holdings)
                k += 1
            hold = self.place(st, d)
            if hold is not None:
                return te, frozenset(g for g, *_ in hold)
        return math.inf, frozenset()

    # -- main loop --------------------------------------------------------------------------------
    def run(self) -> None:
        """Run every job to completion."""
        jobs = self.jobs
        order = sorted(range(len(jobs)), key=lambda i: (jobs[i].submit_h, i))
        ap = 0
        comp = self.completions
        while ap < len(order) or comp:
            t = min(jobs[order[ap]].submit_h if ap < len(order) else math.inf,
                    comp[0][0] if comp else math.inf)
            self.book.advance_usage(t)
            while comp and comp[0][0] <= t + EPS:
                end, _, i, attempt = heapq.heappop(comp)
                if attempt == self.attempt_no[i] and i in self.running:
                    self.stop(i, end, preempted=False)
            while ap < len(order) and jobs[order[ap]].submit_h <= t + EPS:
                self.queue.enqueue(order[ap])
                ap += 1
            self.schedule_pass(t)
            for v in self.requeue:
                self.queue.enqueue(v)
            self.requeue.clear()
            self.timeline.append((t, self.queue.pending, self.state_used()))
            if not comp and ap >= len(order) and self.queue.pending:
                raise RuntimeError("scheduler stalled with jobs queued and nothing running")

    def schedule_pass(self, t: float) -> None:
        """Run one scheduling pass at time ``t`` (see :class:`SchedulingPass`)."""
        if not self.queue.pending:
            return
        if not self.preemption and sum(self.state.node_used) >= self.N * self.G - EPS:
            return  # every GPU is fully held: nothing can start
        SchedulingPass(self, t).run()

    def state_used(self) -> float:
        """GPUs held now (shares and MIG instances by their share). [GPU]"""
        return float(sum(self.state.node_used))


class SchedulingPass:
    """One pass over the queue at one timestamp: start what the policy lets start.

    Buckets are served in policy order (a heap of each bucket's head). Within a pass a demand
    class that does not fit is ``dead`` (no later job of that class is tried), one that only
    fits on the reserved GPUs is ``masked_dead``; a successful preemption frees resources and
    revives everything.
    """

    def __init__(self, sim: Sim, t: float) -> None:
        self.sim, self.t = sim, t
        self.queue = sim.queue
        self.groups = self.queue.group_keys(sim.book)
        self.heap: list[tuple[Any, ...]] = []
        self.ptr: dict[Bucket, int] = {}
        self.dead: set[Bucket] = set()
        self.masked_dead: set[Bucket] = set()
        self.dead_buckets: set[Bucket] = set()
        self.no_victims: set[Bucket] = set()
        self.reservation: tuple[float, frozenset[int]] | None = None
        self.easy = sim.policy in EASY_POLICIES

    def push(self, b: Bucket) -> None:
        """Offer bucket ``b``'s next job to the heap."""
        items = self.queue.buckets[b]
        p = self.ptr[b]
        if p < len(items):
            j = items[p]
            rank = self.queue.bucket_rank(b, self.groups)
            heapq.heappush(self.heap, (rank, self.sim.jobs[j].submit_h, j, b))

    def skip(self, b: Bucket) -> None:
        """Leave bucket ``b``'s head waiting and offer its next job."""
        self.ptr[b] += 1
        self.push(b)

    def run(self) -> None:
        """Serve the queue until nothing more can start (or FIFO's head is blocked)."""
        self.queue.drop_empty()
        for b in self.queue.buckets:
            self.ptr[b] = 0
            self.push(b)
        while self.heap:
            _, _, i, b = heapq.heappop(self.heap)
            if not self.serve(i, b):
                return

    def serve(self, i: int, b: Bucket) -> bool:
        """Try to start job ``i`` (the head of bucket ``b``); False ends the pass."""
        sim = self.sim
        admissible = sim.admissible(i)
        if not admissible and not sim.preemption:
            self.skip(b)  # not admitted (quota): it waits without blocking others
            return True
        hold = self.fit(i) if admissible else None
        if hold is None and sim.preemption and b not in self.no_victims:
            hold = self.preempt(i, b)
        if hold is not None:
            sim.start(i, hold, self.t)
            del self.queue.buckets[b][self.ptr[b]]
            self.push(b)
            return True
        if not admissible:  # not admitted and nothing to reclaim: skip, do not block
            self.skip(b)
            return True
        return self.blocked(i, b)

    def fit(self, i: int) -> list[Holding] | None:
        """Where ``i`` starts now without preemption, honouring the EASY reservation."""
        sim = self.sim
        d = sim.demand[i]
        cls = d.key
        if cls in self.dead:
            return None
        res = self.reservation
        if res is None or self.t + sim.remaining[i] <= res[0] + EPS:
            hold = sim.place(sim.state, d)  # no reservation, or ends by the shadow time
            if hold is None:
                self.dead.add(cls)
            return hold
        if cls in self.masked_dead:
            return None
        hold = sim.place(sim.state, d, res[1])
        if hold is None:
            if sim.place(sim.state, d) is None:
                self.dead.add(cls)
            else:
                self.masked_dead.add(cls)
        return hold

    def preempt(self, i: int, b: Bucket) -> list[Holding] | None:
        """Evict victims so that ``i`` starts; on success, revive every bucket."""
        mask = None if self.reservation is None else self.reservation[1]
        hold = self.sim.try_preempt(i, self.t, mask)
        if hold is None:
            self.no_victims.add(b)
            return None
        # resources were freed: offer them to every bucket again
        self.dead.clear()
        self.masked_dead.clear()
        self.no_victims.clear()
        revived, self.dead_buckets = self.dead_buckets, set()
        for rb in revived:
            self.push(rb)
        return hold

    def blocked(self, i: int, b: Bucket) -> bool:
        """Job ``i`` cannot start: reserve (EASY), give up on its bucket, or stop (FIFO)."""
        sim = self.sim
        if sim.policy == "fifo":
            return False
        d = sim.demand[i]
        if self.easy and self.reservation is None:
            self.reservation = sim.shadow(d)
        if d.key in self.dead and (b in self.no_victims or not sim.preemption):
            self.dead_buckets.add(b)  # nothing else in this bucket fits this pass
            return True
        self.ptr[b] += 1
        if d.key in self.masked_dead and self.reservation is not None and not sim.preemption:
            # only jobs that end by the shadow time may still start from this bucket
            limit = self.reservation[0] - self.t + EPS
            items = self.queue.buckets[b]
            p = self.ptr[b]
            while p < len(items) and sim.remaining[items[p]] > limit:
                p += 1
            self.ptr[b] = p
        self.push(b)
        return True


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
    jobs = _checked_jobs(jobs)
    tenants = _checked_tenants(tenants)
    if half_life_h is not None:
        half_life_h = validate.positive("half_life_h", half_life_h)
    sim = Sim(jobs, cluster, policy, placement, bool(preemption), tenants, half_life_h)
    sim.run()
    return result_of(sim)


def _checked_jobs(jobs: Sequence[Job]) -> list[Job]:
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
    return jobs


def _checked_tenants(tenants: Sequence[Tenant]) -> list[Tenant]:
    tenants = list(tenants)
    for t in tenants:
        if not isinstance(t, Tenant):
            raise validate.InputError("tenants", "other", t, "tenants must be Tenant values")
    names = [t.name for t in tenants]
    if len(set(names)) != len(names):
        raise validate.InputError("tenants", "other", names, "tenant names must be unique")
    return tenants
