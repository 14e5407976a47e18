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
from typing import Any

from labkit import validate
from labkit.data import Column, DataError, get_field, load_csv, load_yaml
from labkit.data.gpus import available_models, load_gpu_model
from labkit.scheduling import KINDS, Cluster, JobGroup, Tenant, TraceDistribution
from labkit.validate import InputError

__all__ = ["SchoolDay", "load_cluster", "load_school_day", "load_trace_distribution"]

SCHOOL_DAY = "scheduling/school_day.yaml"
SIZES = "scheduling/philly_job_sizes.csv"
DURATIONS = "scheduling/philly_durations.csv"
SHARES = "scheduling/alibaba_gpu_shares.csv"

_GROUP_KEYS = {"name": str, "kind": str, "count": int, "submit_h": list, "gpus": float,
               "hours": float}
_GROUP_OPTIONAL = {"tenant", "priority", "value_per_gpu_h", "mig_profile",
                   "checkpoint_interval_h", "hours_jitter", "variants"}


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


def _group(raw: Any, where: str, values: dict[str, float]) -> JobGroup:
    if not isinstance(raw, dict):
        raise DataError(f"{where}: must be a mapping")
    unknown = sorted(set(raw) - set(_GROUP_KEYS) - _GROUP_OPTIONAL)
    if unknown:
        raise DataError(f"{where}: unknown key(s) {unknown}")
    fields = {k: get_field(raw, k, kind, where=where) for k, kind in _GROUP_KEYS.items()}
    submit = fields["submit_h"]
    if len(submit) != 2:
        raise DataError(f"{where}: submit_h must be [first, last], got {submit!r}")
    fields["submit_h"] = (submit[0], submit[1])
    fields.update({k: raw[k] for k in _GROUP_OPTIONAL if k in raw})
    kind = fields["kind"]
    if kind not in KINDS:
        raise DataError(f"{where}: kind must be one of {KINDS}, got {kind!r}")
    fields.setdefault("value_per_gpu_h", values.get(kind, 0.0))
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
    doc: dict[str, Any] = load_yaml(path)
    where = path
    c = get_field(doc, "cluster", dict, where=where)
    cost = get_field(doc, "calendar_cost", dict, where=where)
    values_doc = get_field(doc, "values", dict, where=where)
    values_raw = get_field(values_doc, "krw_per_gpu_h", dict, where=f"{where}: values")
    values = {k: get_field(values_raw, k, float, where=f"{where}: values") for k in values_raw}
    unknown = sorted(set(values) - set(KINDS))
    if unknown:
        raise DataError(f"{where}: values for unknown kind(s) {unknown}")
    try:
        cluster = load_cluster(get_field(c, "nodes", int, where=f"{where}: cluster"),
                               get_field(c, "gpus_per_node", int, where=f"{where}: cluster"),
                               get_field(c, "gpu_model", str, where=f"{where}: cluster"))
        tenants = tuple(
            Tenant(**t) if isinstance(t, dict) else Tenant(t)
            for t in get_field(doc, "tenants", list, where=where))
    except (InputError, TypeError) as err:
        raise DataError(f"{where}: {err}") from err
    groups = tuple(_group(g, f"{where}: groups[{i}]", values)
                   for i, g in enumerate(get_field(doc, "groups", list, where=where)))
    spec = get_field(doc, "specialization_quotas", dict, where=where)
    spec_quotas = {k: get_field(spec, k, float, where=f"{where}: specialization_quotas")
                   for k in spec}
    day_h = get_field(doc, "day_h", float, where=where)
    krw = get_field(cost, "krw_per_gpu_h", float, where=f"{where}: calendar_cost")
    if day_h <= 0 or krw < 0:
        raise DataError(f"{where}: day_h must be > 0 and calendar cost >= 0")
    return SchoolDay(cluster, day_h, krw, values, tenants, spec_quotas, groups,
                     str(doc["source"]), str(doc["as_of"]))


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
    sizes = load_csv(SIZES, [Column("num_gpu", "int", minimum=1), Column("jobs", "int", minimum=0),
                             Column("job_frac", "float", minimum=0)])
    durations = load_csv(DURATIONS, [Column("num_gpu", "int", minimum=1),
                                     Column("quantile", "float", minimum=0),
                                     Column("duration_h", "float", minimum=0)])
    shares = load_csv(SHARES, [Column("gpu_share", "float", minimum=0),
                               Column("pods", "int", minimum=0),
                               Column("pod_frac", "float", minimum=0)])
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
