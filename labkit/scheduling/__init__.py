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
MIG instances (or of an empty GPU) by the board's placement rules (``labkit.mig.placement``, the
same rules the simulated driver applies: legal starts, no overlap, per-profile caps, media
engines); a GPU never mixes MIG instances with shared or whole-GPU jobs. Repartitioning time is
ignored.

The package, one idea per module: :mod:`~labkit.scheduling.jobs` (inputs),
:mod:`~labkit.scheduling.state` (per-GPU occupancy, FGD fragmentation),
:mod:`~labkit.scheduling.placement` (pack, spread, FGD), :mod:`~labkit.scheduling.policies`
(queue order, fair share, quotas), :mod:`~labkit.scheduling.simulator` (the event loop),
:mod:`~labkit.scheduling.report` (results, demand curves, capacity, the metrics),
:mod:`~labkit.scheduling.workloads` (job groups, filler, trace-derived jobs),
:mod:`~labkit.scheduling.class_day` (우리 학교's own day from the school case's figures) and
:mod:`~labkit.scheduling.one_gpu` (one GPU shared by FIFO, time-slicing, MPS or fixed MIG devices:
lesson 02's engine, used by :mod:`labkit.sharing`).

Used in: notebooks/02_mig.ipynb (through :mod:`labkit.sharing`), notebooks/08_orchestration.ipynb
"""

from labkit.scheduling.class_day import (
    calendar_cost_krw_per_gpu_h,
    class_day_groups,
    class_periods,
)
from labkit.scheduling.jobs import (
    DEFAULT_HALF_LIFE_H,
    EPS,
    KINDS,
    MAX_GPUS_PER_NODE,
    MAX_JOBS,
    MAX_NODES,
    MAX_PRIORITY,
    PLACEMENTS,
    POLICIES,
    Cluster,
    Job,
    Tenant,
    mig_profile,
)
from labkit.scheduling.policies import fair_share_factor, quota_tenants
from labkit.scheduling.report import (
    CapacityReport,
    SimulationResult,
    capacity_report,
    demand_curve,
)
from labkit.scheduling.simulator import simulate
from labkit.scheduling.state import node_fragmentation
from labkit.scheduling.workloads import (
    JobGroup,
    TraceDistribution,
    filler_jobs,
    jobs_from_groups,
    trace_jobs,
)

__all__ = [
    "DEFAULT_HALF_LIFE_H",
    "EPS",
    "KINDS",
    "MAX_GPUS_PER_NODE",
    "MAX_JOBS",
    "MAX_NODES",
    "MAX_PRIORITY",
    "PLACEMENTS",
    "POLICIES",
    "CapacityReport",
    "Cluster",
    "Job",
    "JobGroup",
    "SimulationResult",
    "Tenant",
    "TraceDistribution",
    "calendar_cost_krw_per_gpu_h",
    "capacity_report",
    "class_day_groups",
    "class_periods",
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
