"""Policies: queue order (FIFO, priority, fair share), Kueue-style quotas and admission.

Pure. The classic Slurm fair-share factor F = 2^(-U/S) orders tenants under ``"fair_share"``
(SchedMD ``classic_fair_share.shtml``); tenant quotas follow Kueue's ClusterQueues in one cohort
(kueue ``cluster_queue.md``: nominal quota, borrowing and lending limits).

Used in: notebooks/08_orchestration.ipynb
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping, Sequence
from typing import Any

from labkit import validate
from labkit.scheduling.jobs import EPS, Job, Tenant
from labkit.scheduling.state import Demand

#: Policies that reserve the blocked head's GPUs at its shadow time and backfill (EASY).
EASY_POLICIES = ("easy_backfill", "priority", "fair_share")


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



class TenantBook:
    """What each tenant holds, its decayed usage (fair share) and its quota (admission).

    Parameters
    ----------
    jobs : sequence of Job
        The workload (a job without a tenant belongs to the tenant ``""``).
    tenants : sequence of Tenant
        Configured tenants; one named by a job but not listed has share 1 and no quota.
    half_life_h : float or None
        Usage decay half-life (Slurm ``PriorityDecayHalfLife``); None: no decay. [h]
    """

    def __init__(self, jobs: Sequence[Job], tenants: Sequence[Tenant],
                 half_life_h: float | None) -> None:
        self.half_life_h = half_life_h
        cfg = {t.name: t for t in tenants}
        self.names = sorted({j.tenant or "" for j in jobs} | set(cfg))
        shares = {t: cfg[t].share if t in cfg else 1.0 for t in self.names}
        total_shares = sum(shares.values())
        self.norm_share = {t: shares[t] / total_shares for t in self.names}
        self.tenant_of = [j.tenant or "" for j in jobs]
        self.held = dict.fromkeys(self.names, 0.0)
        self.usage = dict.fromkeys(self.names, 0.0)
        self.usage_t = 0.0
        quoted = [t for t in tenants if t.quota_gpus is not None]
        self.quota: dict[str, float] = {t.name: t.quota_gpus for t in quoted}  # type: ignore[misc]
        self.borrow = {t.name: math.inf if t.borrowing_limit_gpus is None
                       else t.borrowing_limit_gpus for t in quoted}
        self.lend = {t.name: math.inf if t.lending_limit_gpus is None
                     else min(t.lending_limit_gpus, self.quota[t.name]) for t in quoted}

    # -- quotas -----------------------------------------------------------------------------------
    def check_admissible(self, demand: Sequence[Demand]) -> None:
        """Raise if a job can never be admitted: wider than its quota plus what it may borrow."""
        for i, t in enumerate(self.tenant_of):
            if t not in self.quota:
                continue
            others = sum(min(self.lend[n], q) for n, q in self.quota.items() if n != t)
            limit = self.quota[t] + min(self.borrow[t], others)
            validate.at_most(f"jobs[{i}].gpus", round(demand[i].total, 9), limit + EPS,
                             f"tenant {t}'s quota plus borrowing limit")

    def admissible(self, i: int, gpus: float, freed: Mapping[str, float] | None = None) -> bool:
        """Kueue admission of job ``i`` asking ``gpus``: within nominal quota + borrowing limit,
        and what all tenants borrow fits in what the others lend (unused nominal quota, up to
        each lending limit). ``freed``: GPUs per tenant that would be released first."""
        t = self.tenant_of[i]
        if t not in self.quota:
            return True
        freed = freed or {}
        used = self.held[t] - freed.get(t, 0.0) + gpus
        if used > self.quota[t] + self.borrow[t] + EPS:
            return False
        borrowed = lendable = 0.0
        for name, quota in self.quota.items():
            u = used if name == t else self.held[name] - freed.get(name, 0.0)
            borrowed += max(0.0, u - quota)
            lendable += min(self.lend[name], max(0.0, quota - u))
        return borrowed <= lendable + EPS

    def borrowing(self, tenant: str, freed: float = 0.0) -> bool:
        """Whether ``tenant`` (less ``freed`` GPUs) holds more than its nominal quota."""
        return tenant in self.quota and self.held[tenant] - freed > self.quota[tenant] + EPS

    # -- fair share -------------------------------------------------------------------------------
    def advance_usage(self, t: float) -> None:
        """Accumulate (and decay) every tenant's usage up to time ``t``. [h]"""
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
            for name in self.names:
                self.usage[name] = self.usage[name] * decay + self.held[name] * gain
        self.usage_t = t

    def fair_share_keys(self) -> dict[str, float]:
        """Queue keys per tenant: minus its fair-share factor (the most under-served first)."""
        total = sum(self.usage.values())
        return {t: -(2.0 ** (-(self.usage[t] / total if total > 0 else 0.0)
                            / self.norm_share[t])) for t in self.names}


class JobQueue:
    """Pending jobs in buckets of interchangeable jobs, each bucket in (submit, index) order.

    A bucket holds jobs of one demand class (and, where the policy orders by them, one priority
    or tenant), so a pass can skip a whole bucket once its class does not fit.
    """

    def __init__(self, jobs: Sequence[Job], demand: Sequence[Demand], tenant_of: Sequence[str],
                 policy: str, preemption: bool) -> None:
        self.jobs = jobs
        self.policy = policy
        self.buckets: dict[tuple[Any, ...], list[int]] = {}
        self.bucket_of = [self._key(j, d, t, policy, preemption)
                          for j, d, t in zip(jobs, demand, tenant_of, strict=True)]
        self.pending = 0

    @staticmethod
    def _key(job: Job, d: Demand, tenant: str, policy: str, preemption: bool
             ) -> tuple[Any, ...]:
        key: tuple[Any, ...] = (d.key,)
        if policy == "priority":
            key = (job.priority, *key)
        elif policy == "fair_share":
            key = (tenant, *key)
        if preemption:
            key = (*key, job.priority, tenant)
        return key

    def enqueue(self, i: int) -> None:
        """Add job ``i`` to its bucket, keeping (submit, index) order."""
        bucket = self.buckets.setdefault(self.bucket_of[i], [])
        job = self.jobs[i]
        if not bucket or (self.jobs[bucket[-1]].submit_h, bucket[-1]) < (job.submit_h, i):
            bucket.append(i)
        else:
            keys = [(self.jobs[b].submit_h, b) for b in bucket]
            bucket.insert(bisect.bisect(keys, (job.submit_h, i)), i)
        self.pending += 1

    def drop_empty(self) -> None:
        """Forget the buckets with no job left."""
        for b in [b for b, items in self.buckets.items() if not items]:
            del self.buckets[b]

    def group_keys(self, book: TenantBook) -> dict[Any, float]:
        """Per bucket-group key (fair share: per tenant); empty for the other policies."""
        return book.fair_share_keys() if self.policy == "fair_share" else {}

    def bucket_rank(self, b: tuple[Any, ...], groups: Mapping[Any, float]) -> float:
        """The bucket's rank in the queue (lower first): priority, fair share or none."""
        if self.policy == "priority":
            return -float(b[0])
        if self.policy == "fair_share":
            return groups[b[0]]
        return 0.0


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
