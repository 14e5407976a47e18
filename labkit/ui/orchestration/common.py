"""Shared pieces of lesson 08's apps: the school day, labels, small tables and controls."""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Sequence
from typing import Any

import ipywidgets as widgets

from labkit import capstone, validate
from labkit import scheduling as model
from labkit.data import school as school_data
from labkit.data.scheduling import SchoolDay, load_cluster, load_school_day
from labkit.i18n import KO, t
from labkit.scheduling import class_day
from labkit.school import SchoolCase
from labkit.ui import format as fmt
from labkit.ui.components import Field

KIND_COLORS = {
    "training": "#3b6fb6", "fine_tuning": "#6a9bd8", "quantization": "#8e6bbf",
    "inference_realtime": "#d1495b", "inference_batch": "#edae49", "embedding": "#f4d35e",
    "evaluation": "#66a182", "class_lab": "#2e9c9c", "filler": "#b8b8b8",
}
TENANTS = ("service", "ai_basics", "deep_learning", "research")
#: 우리 학교's own day: its class and its club (labkit.scheduling.class_day).
SCHOOL_TENANTS = ("class", "club")
#: Results kept per app (a browser can ask for every combination; each is small).
CACHE_SIZE = 64
#: A job id: its group's name, then "-NN" when the group has more than one job.
_JOB_ID = re.compile(r"^(?P<group>.+?)(?:-(?P<n>\d+))?$")
#: A class period's lab job: ``lab-<period>-<NN>`` (``lab-<period>`` for a one-student class).
_LAB_ID = re.compile(r"^lab-(?P<period>\d+)(?:-(?P<n>\d+))?$")


@functools.cache
def _day() -> SchoolDay:
    """The 16-GPU shared cluster of data/scheduling/school_day.yaml (the contrast)."""
    return load_school_day()


def case_day(case: SchoolCase | None = None) -> SchoolDay:
    """Return 우리 학교's own day on its server, from the case every lesson uses now.

    The case's GPUs on one server (its GPU model's MIG table; more than 16 as servers of 8,
    :func:`labkit.scheduling.class_day.server_shape`), one class of ``students`` in
    every class period on the smallest MIG slice that holds one student's job (a whole GPU if
    none does), the chatbot, the club and the homework of :mod:`labkit.scheduling.class_day`;
    a GPU-hour of completed work is worth what renting it costs (``rent_usd_per_gpu_hour`` x
    ``fx_krw_per_usd``) and an installed GPU costs the server's price over 4 years.
    """
    return _case_day(case or school_data.load_case().case)


@functools.lru_cache(maxsize=8)
def _case_day(c: SchoolCase) -> SchoolDay:
    """:func:`case_day` for one case (a frozen case is its own cache key)."""
    layout = capstone.mig_layout_for(c, c.gpu_model)
    profile = next(iter(layout.counts())) if layout is not None else None
    value = c.rent_usd_per_gpu_hour * c.fx_krw_per_usd
    groups = class_day.class_day_groups(
        students=c.students, n_gpus=c.n_gpus, class_start_h=c.class_start_h,
        class_end_h=c.class_end_h, job_hours=c.job_duration_h, lab_profile=profile,
        always_on_frac=c.always_on_frac, value_krw_per_gpu_h=value)
    values = {kind: value for kind in model.KINDS if kind != "filler"} | {"filler": 0.0}
    nodes, per_node = class_day.server_shape(c.n_gpus)
    return SchoolDay(load_cluster(nodes, per_node, c.gpu_model), 24.0,
                     class_day.calendar_cost_krw_per_gpu_h(c.server_price_krw, c.n_gpus),
                     values, (), {}, groups,
                     "우리 학교 사례(data/school/case.yaml 또는 저장한 값)에서 만든 하루 [A]",
                     "2026-12-01")


def is_case_day(day: SchoolDay) -> bool:
    """Whether ``day`` is 우리 학교's own day (not the shared cluster)."""
    return any(g.tenant == "class" for g in day.groups)


def _jobs(variants: tuple[str, ...] = (), counts: tuple[tuple[str, int], ...] = (),
          day: SchoolDay | None = None) -> list[model.Job]:
    if day is None or day is _day():
        return list(_day_jobs(variants, counts))
    key = (id(day), variants, counts)
    kept = _OTHER_JOBS.get(key)
    if kept is None or kept[0] is not day:  # an id is reused only once its day is gone
        if len(_OTHER_JOBS) >= CACHE_SIZE:
            _OTHER_JOBS.clear()
        jobs = tuple(model.jobs_from_groups(day.groups, variants=variants, counts=dict(counts)))
        kept = _OTHER_JOBS[key] = (day, jobs)
    return list(kept[1])


#: Jobs of days other than the shared cluster's (우리 학교's), by day: (day, jobs).
_OTHER_JOBS: dict[tuple[int, tuple[str, ...], tuple[tuple[str, int], ...]],
                  tuple[SchoolDay, tuple[model.Job, ...]]] = {}


@functools.lru_cache(maxsize=CACHE_SIZE)
def _day_jobs(variants: tuple[str, ...], counts: tuple[tuple[str, int], ...]
              ) -> tuple[model.Job, ...]:
    return tuple(model.jobs_from_groups(_day().groups, variants=variants, counts=dict(counts)))


def _kind(kind: str) -> str:
    return t(f"orch.kind.{kind}")


def _job(job: str) -> str:
    """Return a job's Korean label: its group's name and number (``ai-lab-03`` -> ``AI 기초 실습
    03``); an id of no catalogued group (a case's ``a1``) is shown as it is."""
    lab = _LAB_ID.match(job)
    if lab is not None:
        name = t("orch.job.lab_period", period=int(lab["period"]))
        return f"{name} {lab['n']}" if lab["n"] else name
    m = _JOB_ID.match(job)
    if m is None or f"orch.job.{m['group']}" not in KO:
        return job
    name = t(f"orch.job.{m['group']}")
    return f"{name} {m['n']}" if m["n"] else name


def _clock(h: float) -> str:
    """Hours after midnight as a clock time: 9.5 -> '9:30', 9.0833 -> '9:05'; past midnight
    the hours run on (26.5 -> '26:30', as a day's schedule that runs into the next)."""
    minutes = round(h * 60)
    return f"{minutes // 60}:{minutes % 60:02d}"


def _tenant(name: str | None) -> str:
    known = name in TENANTS or name in SCHOOL_TENANTS or name == "filler"
    return t(f"orch.tenant.{name}") if known else str(name)


def _table(rows: Sequence[tuple[str, str]], css: str = "") -> str:
    body = "".join(f"<tr><td style='padding:2px 12px 2px 0'>{html.escape(k)}</td>"
                   f"<td style='text-align:right'><b>{html.escape(v)}</b></td></tr>"
                   for k, v in rows)
    return f"<table class='{css}'>{body}</table>"


def _krw(x: float) -> str:
    """Won to the unit below 100 million (values per GPU are tens of thousands)."""
    return fmt.krw(x) if abs(x) >= 1e8 else f"{'−' if x < 0 else ''}{abs(round(x)):,} 원"


def _summary_rows(result: model.SimulationResult, day: SchoolDay) -> list[tuple[str, str]]:
    s = result.summary(day.cost_krw_per_gpu_h, day.day_h)
    return [
        (t("orch.metric.occupancy"), fmt.pct(s["occupancy"])),
        (t("orch.metric.value_per_gpu"), _krw(s["value_per_gpu_krw"])),
        (t("orch.metric.net_value"), _krw(s["net_value_krw"])),
        (t("orch.metric.mean_wait"), fmt.hours(s["mean_wait_h"], 2)),
        (t("orch.metric.mean_jct"), fmt.hours(s["mean_jct_h"], 2)),
        (t("orch.metric.makespan"), fmt.hours(s["makespan_h"], 1)),
        (t("orch.metric.wasted"), f"{fmt.fixed(s['wasted_gpu_h'], 1)} GPU·h"),
        (t("orch.metric.fragmented"), fmt.count(result.mean_fragmented_gpus(), 2)),
    ]


def _choices(prefix: str, values: Sequence[str]) -> list[tuple[str, str]]:
    return [(t(f"{prefix}.{v}"), v) for v in values]


def _dropdown(key: str, label: str, options: list[tuple[str, str]], value: str) -> Field:
    control = widgets.Dropdown(options=options, value=value,
                               layout=widgets.Layout(width="260px"))
    return Field(key, label, control)


def _checkbox(key: str, label: str, value: bool) -> Field:
    control = widgets.Checkbox(value=value, indent=False, layout=widgets.Layout(width="40px"))
    return Field(key, label, control)


def _bool(field: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise validate.InputError(field, "other", value, f"{field} must be true or false")
    return value
