"""Loaders for the orchestration lesson: the school day and the trace-derived distributions.

Files (``data/scheduling/``):

- ``school_day.yaml`` — the cluster, the calendar-hour cost, the value of work by kind, the
  tenants and the day's job groups;
- ``philly_job_sizes.csv``, ``philly_durations.csv`` — job counts and run-time quantiles per
  GPU count, derived from the Philly trace (CC-BY-4.0);
- ``alibaba_gpu_shares.csv`` — requested shares of single-GPU pods, derived from Alibaba's 2023
  openb trace.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field

from labkit import validate
from labkit.data import DataError, load_csv, load_document
from labkit.data.gpus import available_models, load_gpu_model
from labkit.data.schema import (
    Document,
    IsoDate,
    Lax,
    NonNegative,
    NonNegativeInt,
    Positive,
    PositiveInt,
    Row,
    Schema,
    Text,
    one_of,
)
from labkit.scheduling import KINDS, Cluster, JobGroup, Tenant, TraceDistribution
from labkit.validate import InputError

__all__ = [
    "DurationRow",
    "GpuShareRow",
    "GroupEntry",
    "JobSizeRow",
    "SchoolDay",
    "SchoolDayFile",
    "TenantEntry",
    "load_cluster",
    "load_school_day",
    "load_trace_distribution",
]

SCHOOL_DAY = "scheduling/school_day.yaml"
SIZES = "scheduling/philly_job_sizes.csv"
DURATIONS = "scheduling/philly_durations.csv"
SHARES = "scheduling/alibaba_gpu_shares.csv"

Kind = Annotated[str, one_of(KINDS)]


class Sourced(Schema):
    """A section of a YAML file with its own ``source`` and ``as_of``."""

    source: Text
    as_of: IsoDate


class ClusterSection(Schema):
    """``cluster``: nodes x GPUs per node of one GPU model of ``data/gpus/``."""

    nodes: PositiveInt
    gpus_per_node: PositiveInt
    gpu_model: Text


class CalendarCost(Sourced):
    """``calendar_cost``: what one installed GPU costs per calendar hour [KRW per GPU-h]."""

    krw_per_gpu_h: NonNegative


class WorkValues(Sourced):
    """``values``: the value of one GPU-hour of completed work, by kind [KRW per GPU-h]."""

    krw_per_gpu_h: dict[Kind, float]


class TenantEntry(Schema):
    """One of ``tenants``: the fields of :class:`labkit.scheduling.Tenant`."""

    name: Text
    share: float = 1.0
    quota_gpus: float | None = None
    borrowing_limit_gpus: float | None = None
    lending_limit_gpus: float | None = None


class GroupEntry(Schema):
    """One of ``groups``: the fields of :class:`labkit.scheduling.JobGroup`.

    ``value_per_gpu_h`` defaults to the group's kind's value in ``values``.
    """

    name: Text
    kind: Kind
    count: int
    submit_h: Annotated[tuple[float, float], Lax]
    gpus: float
    hours: float
    tenant: str | None = None
    priority: int = 0
    value_per_gpu_h: float | None = None
    mig_profile: str | None = None
    checkpoint_interval_h: float | None = None
    hours_jitter: float = 0.0
    variants: dict[str, dict[str, Any]] = Field(default_factory=dict)


class SchoolDayFile(Document):
    """``school_day.yaml``: the lesson-08 scenario."""

    cluster: ClusterSection
    day_h: Positive
    calendar_cost: CalendarCost
    values: WorkValues
    tenants: list[TenantEntry | Text]
    specialization_quotas: dict[str, NonNegative]
    groups: list[GroupEntry]


class JobSizeRow(Row):
    """A row of ``philly_job_sizes.csv``: jobs per GPU count (Philly trace, CC-BY-4.0)."""

    num_gpu: PositiveInt
    jobs: NonNegativeInt
    job_frac: NonNegative


class DurationRow(Row):
    """A row of ``philly_durations.csv``: one run-time quantile [h] per GPU count."""

    num_gpu: PositiveInt
    quantile: NonNegative
    duration_h: NonNegative


class GpuShareRow(Row):
    """A row of ``alibaba_gpu_shares.csv``: a requested GPU share of single-GPU pods."""

    gpu_share: NonNegative
    pods: NonNegativeInt
    pod_frac: NonNegative


def load_cluster(nodes: int, gpus_per_node: int, gpu_model: str = "A100-80GB") -> Cluster:
    """Return a :class:`~labkit.scheduling.Cluster` with its GPU model's MIG table.

    The MIG profiles and placement rules come from the lab GPU layer's model data
    (``data/gpus/<gpu_model>.yaml`` through :func:`labkit.data.gpus.load_gpu_model`); a model
    without MIG gives a cluster that runs no MIG instances.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For a bad node or GPU count, or a model that ``data/gpus/`` does not have (field
        ``gpu_model``, rule ``choice``).
    """
    if gpu_model not in available_models():
        validate.one_of("gpu_model", gpu_model, available_models())
    return Cluster(nodes, gpus_per_node, gpu_model, load_gpu_model(gpu_model).mig)


@dataclass(frozen=True)
class SchoolDay:
    """The school day scenario as loaded from ``data/scheduling/school_day.yaml``.

    Attributes
    ----------
    cluster : Cluster
        The school cluster (2 nodes x 8 A100-80GB).
    day_h : float
        The calendar window the lesson measures. [h]
    cost_krw_per_gpu_h : float
        Calendar-hour cost of one installed GPU. [KRW per GPU-h]
    values_krw_per_gpu_h : dict
        Value of one GPU-hour of completed work, by kind. [KRW per GPU-h]
    tenants : tuple of Tenant
        Shares and nominal quotas (the policy lab's defaults).
    specialization_quotas : dict
        Nominal quotas of the specialization scenario, by tenant. [GPU]
    groups : tuple of JobGroup
        The day's workload; each group's value is its kind's value unless it sets one.
    """

    cluster: Cluster
    day_h: float
    cost_krw_per_gpu_h: float
    values_krw_per_gpu_h: dict[str, float]
    tenants: tuple[Tenant, ...]
    specialization_quotas: dict[str, float]
    groups: tuple[JobGroup, ...]
    source: str
    as_of: str


def _group(entry: GroupEntry, where: str, values: dict[str, float]) -> JobGroup:
    fields = entry.model_dump()
    if fields["value_per_gpu_h"] is None:
        fields["value_per_gpu_h"] = values.get(entry.kind, 0.0)
    try:
        return JobGroup(**fields)
    except (InputError, TypeError) as err:
        raise DataError(f"{where}: {err}") from err


def load_school_day(path: str = SCHOOL_DAY) -> SchoolDay:
    """Load and validate the school day scenario.

    Returns
    -------
    SchoolDay

    Raises
    ------
    labkit.data.DataError
        Naming the file and the key or group when something is missing, mistyped or invalid.
    """
    doc = load_document(path, SchoolDayFile)
    where = path
    values = dict(doc.values.krw_per_gpu_h)
    c = doc.cluster
    try:
        cluster = load_cluster(c.nodes, c.gpus_per_node, c.gpu_model)
        tenants = tuple(Tenant(**t.model_dump()) if isinstance(t, TenantEntry) else Tenant(t)
                        for t in doc.tenants)
    except (InputError, TypeError) as err:
        raise DataError(f"{where}: {err}") from err
    groups = tuple(_group(g, f"{where}: groups[{i}]", values) for i, g in enumerate(doc.groups))
    return SchoolDay(cluster, doc.day_h, doc.calendar_cost.krw_per_gpu_h, values, tenants,
                     dict(doc.specialization_quotas), groups, doc.source, doc.as_of)


def load_trace_distribution() -> TraceDistribution:
    """Load the trace-derived job sizes, run times and GPU shares.

    Returns
    -------
    TraceDistribution
        GPU counts 1/2/4/8 with their job shares and run-time quantiles (Philly), and the
        requested shares of single-GPU pods (Alibaba openb).

    Raises
    ------
    labkit.data.DataError
        Naming the file and line of a bad row, or the file whose rows do not form a
        distribution.
    """
    sizes = load_csv(SIZES, JobSizeRow)
    durations = load_csv(DURATIONS, DurationRow)
    shares = load_csv(SHARES, GpuShareRow)
    quantiles = {
        int(g): tuple((float(q), float(h)) for q, h in zip(grp["quantile"], grp["duration_h"],
                                                           strict=True))
        for g, grp in durations.groupby("num_gpu")
    }
    jobs = sizes["jobs"].astype(float)
    pods = shares["pods"].astype(float)
    source = "; ".join(str(f.attrs["meta"].get("source", "")) for f in (sizes, shares))
    try:
        return TraceDistribution(
            gpu_counts=tuple(int(g) for g in sizes["num_gpu"]),
            gpu_weights=tuple(float(w) for w in jobs / jobs.sum()),
            duration_quantiles=quantiles,
            shares=tuple(float(s) for s in shares["gpu_share"]),
            share_weights=tuple(float(w) for w in pods / pods.sum()),
            source=source,
        )
    except InputError as err:
        raise DataError(f"{DURATIONS} / {SIZES} / {SHARES}: {err}") from err
