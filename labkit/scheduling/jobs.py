"""Scheduling inputs: a job, a cluster, a tenant, and the MIG profile lookup.

Pure: validated frozen dataclasses, no I/O. Time in hours [h]. See :mod:`labkit.scheduling`.

Used in: notebooks/08_orchestration.ipynb
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from labkit import validate
from labkit.gpumodels import GiProfile, MigSpec

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
    memory_mib : float, optional
        GPU memory it needs, >= 0 (lesson 02's one-GPU sharing modes check it; the cluster
        simulator does not). None: not modelled. [MiB]
    max_share : float, default 1
        Largest fraction of one GPU's compute it can use, in (0, 1] (a small class job cannot
        fill an H100; lesson 02's sharing modes run it at most at this rate). [fraction]

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
    memory_mib: float | None = None
    max_share: float = 1.0

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
        if self.memory_mib is not None:
            s(self, "memory_mib", validate.non_negative("memory_mib", self.memory_mib))
        s(self, "max_share", validate.fraction("max_share", self.max_share))

    @property
    def work_gpu_h(self) -> float:
        """GPU-hours of work of a one-GPU job: ``hours x max_share``. [GPU-h]"""
        return self.hours * self.max_share


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
    mig : labkit.gpumodels.MigSpec, optional
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


def mig_profile(spec: MigSpec | None, name: Any, field_name: str = "mig_profile",
                gpu_model: str = "this GPU model") -> GiProfile:
    """Return the GPU-instance profile ``name`` of a board's MIG table.

    Parameters
    ----------
    spec : labkit.gpumodels.MigSpec or None
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
