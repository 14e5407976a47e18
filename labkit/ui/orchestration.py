"""Widgets for lesson 08, "여러 사용자가 나눠 쓰는 클러스터": a day of the school's shared cluster.

Builders (each returns a widget or a table; the notebook only calls them):

- :func:`demand_app` — the aircraft arithmetic: the day's demand curve against installed GPUs,
  the calendar-hour cost and how much of it buys idle time;
- :func:`school_day_app` — the day under a policy, a placement and preemption: Gantt chart of
  the GPUs, queue length, occupancy, value per installed GPU, waits per workload kind;
- :func:`filler_app` — "keep the GPUs busy" with worthless filler: occupancy up, value not;
- :func:`mig_class_app` — a class on MIG slices vs on whole GPUs, and who else gets GPUs;
- :func:`policy_lab_app` — quotas, borrowing, preemption and the policy: who waits;
- :func:`specialization_app` — a smaller specialized model frees GPUs; only lending turns them
  into value;
- :func:`policy_table`, :func:`key_numbers` — tables checked by nbval;
- :func:`exercises` — 문제 with checked answers.

All numbers come from :mod:`labkit.scheduling`; the day comes from
``data/scheduling/school_day.yaml``.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go

from labkit import scheduling as model
from labkit import validate
from labkit.data.scheduling import SchoolDay, load_cluster, load_school_day
from labkit.i18n import t
from labkit.ui import format as fmt
from labkit.ui.components import Field, FigureOutput, LiveApp, number_field, styled_figure
from labkit.ui.exercises import Exercise, exercise_set

__all__ = [
    "DemandApp",
    "FillerApp",
    "MigClassApp",
    "PolicyLabApp",
    "SchoolDayApp",
    "SpecializationApp",
    "demand_app",
    "demand_figure",
    "exercise_list",
    "exercises",
    "filler_app",
    "gantt_figure",
    "key_numbers",
    "mig_class_app",
    "policy_lab_app",
    "policy_table",
    "queue_figure",
    "school_day_app",
    "specialization_app",
    "waits_figure",
    "workload_table",
]

KIND_COLORS = {
    "training": "#3b6fb6", "fine_tuning": "#6a9bd8", "quantization": "#8e6bbf",
    "inference_realtime": "#d1495b", "inference_batch": "#edae49", "embedding": "#f4d35e",
    "evaluation": "#66a182", "class_lab": "#2e9c9c", "filler": "#b8b8b8",
}
TENANTS = ("service", "ai_basics", "deep_learning", "research")
#: Results kept per app (a browser can ask for every combination; each is small).
CACHE_SIZE = 64


@functools.cache
def _day() -> SchoolDay:
    return load_school_day()


def _jobs(variants: tuple[str, ...] = (), counts: tuple[tuple[str, int], ...] = ()
          ) -> list[model.Job]:
    return list(_day_jobs(variants, counts))


@functools.lru_cache(maxsize=CACHE_SIZE)
def _day_jobs(variants: tuple[str, ...], counts: tuple[tuple[str, int], ...]
              ) -> tuple[model.Job, ...]:
    return tuple(model.jobs_from_groups(_day().groups, variants=variants, counts=dict(counts)))


def _kind(kind: str) -> str:
    return t(f"orch.kind.{kind}")


def _tenant(name: str | None) -> str:
    return t(f"orch.tenant.{name}") if name in TENANTS or name == "filler" else str(name)


# --- figures ------------------------------------------------------------------------------------


def _lanes(rows: pd.DataFrame, memory_units: int) -> list[tuple[float, float]]:
    """Return (low, height) within its GPU row, in [0, 1], for every row of ``gpu_schedule``.

    MIG instances sit at their memory slices; shared-GPU jobs are stacked first-fit among the
    shares live on that GPU (display only: time slicing has no position on the GPU).
    """
    share = rows["share"].tolist()
    gpu = rows["gpu"].tolist()
    start = rows["start_h"].tolist()
    end = rows["end_h"].tolist()
    s_start = rows["slice_start"].tolist()
    s_size = rows["slice_size"].tolist()
    out: list[tuple[float, float]] = [(0.0, 1.0)] * len(share)
    active: dict[int, list[tuple[float, float, float]]] = {}
    for k in sorted(range(len(share)), key=lambda k: (start[k], end[k], k)):
        if s_size[k] > 0:
            out[k] = (s_start[k] / memory_units, s_size[k] / memory_units)
            continue
        if share[k] >= 1 - 1e-9:
            continue
        live = [a for a in active.get(gpu[k], []) if a[0] > start[k] + 1e-9]
        low = 0.0
        for cand in sorted([0.0] + [a[2] for a in live]):
            if cand + share[k] <= 1 + 1e-9 and all(
                    cand + share[k] <= a[1] + 1e-9 or cand >= a[2] - 1e-9 for a in live):
                low = cand
                break
        live.append((end[k], low, low + share[k]))
        active[gpu[k]] = live
        out[k] = (low, share[k])
    return out


def gantt_figure(result: model.SimulationResult, title: str, *, day_h: float | None = None,
                 height: int | None = None, until_h: float | None = None) -> go.Figure:
    """Return a Gantt chart: one row per GPU, one bar per job run on it, coloured by kind.

    Shared-GPU jobs and MIG instances take part of their GPU's row (MIG by memory slices).
    ``until_h`` ends the time axis (default: the last run).
    """
    per_gpu = result.gpu_schedule()
    cluster = result.cluster
    gpn = cluster.gpus_per_node
    mem = cluster.mig.memory_units if cluster.mig else 8
    lanes = _lanes(per_gpu, mem)
    per_gpu = per_gpu.assign(low=[a for a, _ in lanes], size=[b for _, b in lanes])
    fig = styled_figure(title=title, xaxis_title=t("orch.axis.time"), barmode="overlay",
                        height=height or max(320, 130 + 20 * cluster.installed_gpus),
                        legend={"orientation": "h", "y": -0.2, "yanchor": "top"}, bargap=0,
                        margin={"l": 110, "r": 20, "t": 50, "b": 100})
    for kind in model.KINDS:
        sel = per_gpu[per_gpu["kind"] == kind]
        if sel.empty:
            continue
        center = sel["gpu"] - 0.45 + 0.9 * (sel["low"] + sel["size"] / 2)
        text = [f"{job} · {_kind(kind)}<br>{s:.2f}–{e:.2f} h" + (" ✂" if p else "")
                for job, s, e, p in zip(sel["job"], sel["start_h"], sel["end_h"],
                                        sel["preempted"], strict=True)]
        fig.add_trace(go.Bar(
            orientation="h", y=center, x=sel["end_h"] - sel["start_h"], base=sel["start_h"],
            width=0.9 * sel["size"], name=_kind(kind), hovertext=text, hoverinfo="text",
            marker={"color": KIND_COLORS[kind], "line": {"color": "white", "width": 0.5}},
        ))
    ticks = list(range(cluster.installed_gpus))
    fig.update_yaxes(tickvals=ticks, autorange="reversed",
                     ticktext=[t("orch.axis.gpu", node=g // gpn + 1, gpu=g % gpn) for g in ticks])
    if day_h is not None:
        fig.add_vline(x=day_h, line={"dash": "dash", "color": "#555"})
    if until_h is not None:
        fig.update_xaxes(range=[0, until_h])
    return fig


def queue_figure(result: model.SimulationResult, *, day_h: float | None = None) -> go.Figure:
    """Return the queue length and the GPUs held over time (step lines)."""
    tl = result.timeline
    fig = styled_figure(title=t("orch.queue.title"), xaxis_title=t("orch.axis.time"),
                        yaxis_title=t("orch.queue.queued"), height=300,
                        yaxis2={"title": t("orch.queue.held"), "overlaying": "y",
                                "side": "right", "showgrid": False, "tickmode": "linear",
                                "tick0": 0, "dtick": max(1, result.installed_gpus // 4),
                                "range": [0, result.installed_gpus * 1.1]},
                        legend={"orientation": "h", "y": -0.3},
                        margin={"l": 60, "r": 70, "t": 50, "b": 50})
    fig.add_trace(go.Scatter(x=tl["t_h"], y=tl["queued"], mode="lines", line_shape="hv",
                             name=t("orch.queue.queued"), line={"color": "#d1495b"}))
    fig.add_trace(go.Scatter(x=tl["t_h"], y=tl["gpus_held"], mode="lines", line_shape="hv",
                             name=t("orch.queue.held"), yaxis="y2", line={"color": "#3b6fb6"}))
    fig.add_hline(y=result.installed_gpus, yref="y2", line={"dash": "dot", "color": "#3b6fb6"},
                  annotation_text=t("orch.queue.installed"), annotation_position="top left")
    if day_h is not None:
        fig.add_vline(x=day_h, line={"dash": "dash", "color": "#555"})
    return fig


def waits_figure(result: model.SimulationResult, by: str = "kind") -> go.Figure:
    """Return the mean queue delay and the mean total delay per workload kind (or tenant)."""
    w = result.waits(by)
    labels = [_kind(k) if by == "kind" else _tenant(k) for k in w.index]
    fig = styled_figure(title=t(f"orch.waits.title_{by}"), xaxis_title=t("orch.waits.axis"),
                        height=max(260, 60 + 34 * len(w)), barmode="group",
                        legend={"orientation": "h", "y": -0.25}, margin={"l": 150})
    fig.add_trace(go.Bar(orientation="h", y=labels, x=w["mean_wait_h"],
                         name=t("orch.waits.mean"), marker={"color": "#3b6fb6"},
                         text=[fmt.hours(x, 1) for x in w["mean_wait_h"]],
                         textposition="outside"))
    fig.add_trace(go.Bar(orientation="h", y=labels, x=w["mean_delay_h"],
                         name=t("orch.waits.delay"), marker={"color": "#d1495b"}))
    fig.update_yaxes(autorange="reversed")
    return fig


def demand_figure(curve: pd.DataFrame, installed_gpus: float) -> go.Figure:
    """Return the demand curve stacked by kind, with the installed capacity as a line."""
    fig = styled_figure(title=t("orch.demand.title"), xaxis_title=t("orch.axis.time"),
                        yaxis_title=t("orch.demand.axis"), height=360,
                        legend={"orientation": "h", "y": -0.25})
    for kind in curve.columns:
        fig.add_trace(go.Scatter(x=curve.index, y=curve[kind], name=_kind(kind),
                                 stackgroup="d", line={"width": 0, "shape": "hv"},
                                 fillcolor=KIND_COLORS[kind], mode="lines"))
    fig.add_hline(y=installed_gpus, line={"color": "#222", "dash": "dash"},
                  annotation_text=t("orch.demand.installed", gpus=fmt.count(installed_gpus)),
                  annotation_position="top left")
    return fig


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
        (t("orch.metric.wasted"), f"{fmt.count(s['wasted_gpu_h'], 1)} GPU-h"),
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


# --- 1. the aircraft arithmetic -----------------------------------------------------------------


class DemandApp(LiveApp[model.CapacityReport]):
    """The day's demand against installed GPUs (see :func:`demand_app`)."""

    def __init__(self, day: SchoolDay) -> None:
        self.day = day
        jobs = _jobs()
        self.curve = model.demand_curve(jobs, day.cluster.mig, step_h=0.25, until_h=day.day_h)
        self.curve = self.curve.iloc[:-1]  # the window [0, day_h)
        fields = [
            number_field("installed_gpus", t("orch.demand.installed_label"),
                         day.cluster.installed_gpus, unit=t("orch.unit.gpu")),
            number_field("cost_krw_per_gpu_h", t("orch.demand.cost_label"),
                         day.cost_krw_per_gpu_h, unit=t("orch.unit.krw_per_gpu_h"), step=100),
        ]
        super().__init__("demand", fields, error_prefix="orch")
        self.summary = widgets.HTML()
        self.summary.add_class("lk-demand-summary")
        self.chart = FigureOutput("lk-demand-chart")
        self.children = [*(f.box for f in self.fields.values()), self.status, self.summary,
                         self.chart]
        self.update()

    def compute(self, values: dict[str, Any]) -> model.CapacityReport:
        return model.capacity_report(self.curve, values["installed_gpus"],
                                     values["cost_krw_per_gpu_h"])

    def render(self, result: model.CapacityReport) -> None:
        self.summary.value = _table([
            (t("orch.demand.peak"), fmt.count(result.peak_gpus, 1)),
            (t("orch.demand.mean"), fmt.count(result.mean_gpus, 1)),
            (t("orch.demand.over"), fmt.hours(result.over_capacity_h, 2)),
            (t("orch.demand.best_occupancy"), fmt.pct(result.best_occupancy)),
            (t("orch.demand.cost"), _krw(result.calendar_cost_krw)),
            (t("orch.demand.idle_cost"), _krw(result.idle_cost_krw)),
        ], "lk-demand-table")
        self.chart.show(demand_figure(self.curve, result.installed_gpus))


def demand_app(day: SchoolDay | None = None) -> DemandApp:
    """Return the demand-vs-capacity app for the school day."""
    return DemandApp(day or _day())


# --- 2. the school day under a policy -----------------------------------------------------------


class SchoolDayApp(LiveApp[model.SimulationResult]):
    """The day under a policy, a placement and preemption (see :func:`school_day_app`)."""

    def __init__(self, day: SchoolDay, policy: str = "fifo") -> None:
        self.day = day
        fields = [
            _dropdown("policy", t("orch.field.policy"), _choices("orch.policy", model.POLICIES),
                      policy),
            _dropdown("placement", t("orch.field.placement"),
                      _choices("orch.placement", model.PLACEMENTS), "pack"),
            _checkbox("preemption", t("orch.field.preemption"), False),
        ]
        super().__init__("day", fields, error_prefix="orch")
        self.cache: dict[tuple[Any, ...], model.SimulationResult] = {}
        self.metrics = widgets.HTML()
        self.metrics.add_class("lk-day-metrics")
        self.gantt = FigureOutput("lk-gantt")
        self.queue = FigureOutput("lk-queue")
        self.waits = FigureOutput("lk-waits")
        self.children = [*(f.box for f in self.fields.values()), self.status,
                         widgets.HBox([self.metrics], layout=widgets.Layout(margin="6px 0")),
                         self.gantt, self.queue, self.waits]
        self.update()

    def compute(self, values: dict[str, Any]) -> model.SimulationResult:
        key = (values["policy"], values["placement"], _bool("preemption", values["preemption"]))
        result = self.cache.get(key)
        if result is None:
            if len(self.cache) >= CACHE_SIZE:
                self.cache.clear()
            result = model.simulate(_jobs(), self.day.cluster, *key)
            self.cache[key] = result
        return result

    def render(self, result: model.SimulationResult) -> None:
        self.metrics.value = _table(_summary_rows(result, self.day), "lk-day-table")
        title = t("orch.gantt.title", policy=t(f"orch.policy.{result.policy}"),
                  placement=t(f"orch.placement.{result.placement}"))
        self.gantt.show(gantt_figure(result, title, day_h=self.day.day_h))
        self.queue.show(queue_figure(result, day_h=self.day.day_h))
        self.waits.show(waits_figure(result, "kind"))


def school_day_app(policy: str = "fifo", day: SchoolDay | None = None) -> SchoolDayApp:
    """Return the school-day app (policy, placement, preemption -> Gantt, queue, metrics)."""
    return SchoolDayApp(day or _day(), policy)


def workload_table(day: SchoolDay | None = None) -> pd.DataFrame:
    """Return the day's job groups as a Korean table: who, what, when, how big, how long."""
    day = day or _day()
    rows = []
    for g in day.groups:
        size = g.mig_profile if g.mig_profile else (
            t("orch.work.share", share=f"{g.gpus:g}") if g.gpus < 1 else f"{g.gpus:g} GPU")
        first, last = g.submit_h
        when = f"{first:g}" if first == last else f"{first:g}–{last:g}"
        rows.append((_kind(g.kind), _tenant(g.tenant), g.count, when, size, f"{g.hours:g}",
                     g.priority, _krw(g.value_per_gpu_h)))
    cols = [t("orch.work.kind"), t("orch.work.tenant"), t("orch.work.count"),
            t("orch.work.submit"), t("orch.work.size"), t("orch.work.hours"),
            t("orch.work.priority"), t("orch.work.value")]
    return pd.DataFrame(rows, columns=cols)


def policy_table(day: SchoolDay | None = None) -> pd.DataFrame:
    """Return the school day under every policy (pack, no preemption) as a Korean table.

    Columns: occupancy over the day, value per installed GPU over the day, mean wait, mean wait
    of the class labs and of fine-tuning, makespan.
    """
    day = day or _day()
    rows = []
    for policy in model.POLICIES:
        r = model.simulate(_jobs(), day.cluster, policy)
        s = r.summary(day.cost_krw_per_gpu_h, day.day_h)
        w = r.waits("kind")["mean_wait_h"]
        rows.append((t(f"orch.policy.{policy}"), fmt.pct(s["occupancy"]),
                     _krw(s["value_per_gpu_krw"]), fmt.hours(s["mean_wait_h"], 2),
                     fmt.hours(w.get("class_lab", 0.0), 2), fmt.hours(w.get("fine_tuning", 0.0), 2),
                     fmt.hours(s["makespan_h"], 2)))
    cols = [t("orch.table.policy"), t("orch.metric.occupancy"), t("orch.metric.value_per_gpu"),
            t("orch.metric.mean_wait"), t("orch.table.wait_class"), t("orch.table.wait_ft"),
            t("orch.metric.makespan")]
    return pd.DataFrame(rows, columns=cols).set_index(cols[0])


# --- 3. filler ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Pair:
    """Two runs of the day to compare, and which one is selected."""

    base: model.SimulationResult
    other: model.SimulationResult
    selected: model.SimulationResult


class FillerApp(LiveApp[_Pair]):
    """The day with and without worthless filler work (see :func:`filler_app`)."""

    def __init__(self, day: SchoolDay) -> None:
        self.day = day
        fields = [_checkbox("filler", t("orch.filler.field"), True),
                  _checkbox("preemption", t("orch.filler.preemption"), False)]
        super().__init__("filler", fields, error_prefix="orch")
        self.cache: dict[tuple[bool, bool], model.SimulationResult] = {}
        self.table = widgets.HTML()
        self.table.add_class("lk-filler-table")
        self.gantt = FigureOutput("lk-filler-gantt")
        self.children = [*(f.box for f in self.fields.values()), self.status, self.table,
                         self.gantt]
        self.update()

    def _run(self, filler: bool, preemption: bool) -> model.SimulationResult:
        key = (filler, preemption)
        if key not in self.cache:
            jobs = _jobs()
            if filler:
                jobs += model.filler_jobs(self.day.cluster.installed_gpus, self.day.day_h)
            self.cache[key] = model.simulate(jobs, self.day.cluster, "priority", "pack",
                                             preemption)
        return self.cache[key]

    def compute(self, values: dict[str, Any]) -> _Pair:
        filler = _bool("filler", values["filler"])
        pre = _bool("preemption", values["preemption"])
        base, other = self._run(False, pre), self._run(True, pre)
        return _Pair(base, other, other if filler else base)

    def render(self, result: _Pair) -> None:
        day = self.day

        def col(r: model.SimulationResult) -> list[str]:
            s = r.summary(day.cost_krw_per_gpu_h, day.day_h)
            real = r.jobs[r.jobs["kind"] != "filler"]
            return [fmt.pct(s["occupancy"]), _krw(s["value_per_gpu_krw"]),
                    _krw(s["net_value_krw"]), fmt.hours(float(real["wait_h"].mean()), 2)]

        labels = [t("orch.metric.occupancy"), t("orch.metric.value_per_gpu"),
                  t("orch.metric.net_value"), t("orch.filler.real_wait")]
        a, b = col(result.base), col(result.other)
        head = (f"<tr><th></th><th style='padding:0 12px'>{t('orch.filler.without')}</th>"
                f"<th style='padding:0 12px'>{t('orch.filler.with')}</th></tr>")
        body = "".join(f"<tr><td>{html.escape(k)}</td><td style='text-align:right'>{x}</td>"
                       f"<td style='text-align:right'><b>{y}</b></td></tr>"
                       for k, x, y in zip(labels, a, b, strict=True))
        self.table.value = f"<table>{head}{body}</table>"
        title = t("orch.filler.gantt", which=t("orch.filler.with") if result.selected is
                  result.other else t("orch.filler.without"))
        # the filler backlog drains after the day: show the day and the real work only
        real = result.selected.jobs[result.selected.jobs["kind"] != "filler"]
        until = max(day.day_h, float(real["end_h"].max())) + 0.5
        self.gantt.show(gantt_figure(result.selected, title, day_h=day.day_h, until_h=until))


def filler_app(day: SchoolDay | None = None) -> FillerApp:
    """Return the "keep busy with filler" app."""
    return FillerApp(day or _day())


# --- 4. MIG for a class ---------------------------------------------------------------------------


class MigClassApp(LiveApp[_Pair]):
    """A class on 1g MIG slices vs on whole GPUs (see :func:`mig_class_app`)."""

    def __init__(self, day: SchoolDay) -> None:
        self.day = day
        base = next(g for g in day.groups if g.name == "ai-lab")
        fields = [
            number_field("students", t("orch.mig.students"), base.count,
                         unit=t("orch.unit.people")),
            _dropdown("mode", t("orch.mig.mode"), _choices("orch.mig.mode", ("mig", "whole")),
                      "mig"),
        ]
        super().__init__("mig", fields, error_prefix="orch",
                         field_map={"count_ai-lab": "students"})
        self.cache: dict[tuple[int, str], model.SimulationResult] = {}
        self.table = widgets.HTML()
        self.table.add_class("lk-mig-table")
        self.gantt = FigureOutput("lk-mig-gantt")
        self.children = [*(f.box for f in self.fields.values()), self.status, self.table,
                         self.gantt]
        self.update()

    def _run(self, students: int, mode: str) -> model.SimulationResult:
        key = (students, mode)
        if key not in self.cache:
            if len(self.cache) >= CACHE_SIZE:
                self.cache.clear()
            variants = ("whole_gpu",) if mode == "whole" else ()
            jobs = _jobs(variants, (("ai-lab", students),))
            self.cache[key] = model.simulate(jobs, self.day.cluster, "priority")
        return self.cache[key]

    def compute(self, values: dict[str, Any]) -> _Pair:
        mode = validate.one_of("mode", values["mode"], ("mig", "whole"))
        students = validate.integer("count_ai-lab", values["students"], minimum=1)
        validate.at_most("count_ai-lab", students, 200, "200 students")
        mig, whole = self._run(students, "mig"), self._run(students, "whole")
        return _Pair(mig, whole, mig if mode == "mig" else whole)

    def render(self, result: _Pair) -> None:
        day = self.day

        def col(r: model.SimulationResult) -> list[str]:
            s = r.summary(day.cost_krw_per_gpu_h, day.day_h)
            w = r.waits("kind")["mean_wait_h"]
            lab = r.schedule[r.schedule["kind"] == "class_lab"]
            held = float((lab["gpus"] * (lab["end_h"] - lab["start_h"])).sum())
            return [f"{fmt.count(held, 1)} GPU-h",
                    fmt.hours(float(w.get("class_lab", 0.0)), 2),
                    fmt.hours(float(w.get("fine_tuning", 0.0)), 2),
                    _krw(s["value_per_gpu_krw"])]

        labels = [t("orch.mig.class_gpu_h"), t("orch.mig.class_wait"), t("orch.mig.ft_wait"),
                  t("orch.metric.value_per_gpu")]
        a, b = col(result.base), col(result.other)
        head = (f"<tr><th></th><th style='padding:0 12px'>{t('orch.mig.mode.mig')}</th>"
                f"<th style='padding:0 12px'>{t('orch.mig.mode.whole')}</th></tr>")
        body = "".join(f"<tr><td>{html.escape(k)}</td><td style='text-align:right'>{x}</td>"
                       f"<td style='text-align:right'>{y}</td></tr>"
                       for k, x, y in zip(labels, a, b, strict=True))
        self.table.value = f"<table>{head}{body}</table>"
        mode = "mig" if result.selected is result.base else "whole"
        self.gantt.show(gantt_figure(result.selected, t("orch.mig.gantt",
                                                        mode=t(f"orch.mig.mode.{mode}")),
                                     day_h=day.day_h))


def mig_class_app(day: SchoolDay | None = None) -> MigClassApp:
    """Return the MIG-for-a-class app."""
    return MigClassApp(day or _day())


# --- 5. policy lab --------------------------------------------------------------------------------


class PolicyLabApp(LiveApp[model.SimulationResult]):
    """Quotas, borrowing, preemption, policy -> who waits (see :func:`policy_lab_app`)."""

    def __init__(self, day: SchoolDay) -> None:
        self.day = day
        quotas = {x.name: x.quota_gpus or 0.0 for x in day.tenants}
        fields = [_dropdown("policy", t("orch.field.policy"),
                            _choices("orch.policy", model.POLICIES), "fair_share")]
        fields += [number_field(f"quota_{name}", t("orch.lab.quota", tenant=_tenant(name)),
                                quotas.get(name, 0.0), unit=t("orch.unit.gpu"), step=1)
                   for name in TENANTS]
        fields += [_checkbox("borrowing", t("orch.lab.borrowing"), True),
                   _checkbox("preemption", t("orch.field.preemption"), False)]
        super().__init__("lab", fields, error_prefix="orch.lab")
        self.cache: dict[tuple[Any, ...], model.SimulationResult] = {}
        self.table = widgets.HTML()
        self.table.add_class("lk-lab-table")
        self.waits = FigureOutput("lk-lab-waits")
        self.gantt = FigureOutput("lk-lab-gantt")
        self.children = [*(f.box for f in self.fields.values()), self.status, self.table,
                         self.waits, self.gantt]
        self.update()

    def compute(self, values: dict[str, Any]) -> model.SimulationResult:
        policy = validate.one_of("policy", values["policy"], model.POLICIES)
        tenants = model.quota_tenants({n: values[f"quota_{n}"] for n in TENANTS},
                                      borrowing=_bool("borrowing", values["borrowing"]))
        pre = _bool("preemption", values["preemption"])
        key = (policy, tuple(x.quota_gpus for x in tenants), values["borrowing"], pre)
        if key not in self.cache:
            if len(self.cache) >= CACHE_SIZE:
                self.cache.clear()
            self.cache[key] = model.simulate(_jobs(), self.day.cluster, policy, "pack", pre,
                                             tenants=tenants)
        return self.cache[key]

    def render(self, result: model.SimulationResult) -> None:
        w = result.waits("tenant")
        held = result.schedule.assign(gpu_h=result.schedule["gpus"] * (
            result.schedule["end_h"] - result.schedule["start_h"]))
        used = held.groupby(held["tenant"].fillna(""))["gpu_h"].sum()
        head = "".join(f"<th style='padding:0 10px'>{html.escape(c)}</th>" for c in (
            "", t("orch.lab.quota_col"), t("orch.lab.used_col"), t("orch.waits.mean"),
            t("orch.waits.p95")))
        body = ""
        for name in TENANTS:
            q = self.fields[f"quota_{name}"].value
            body += (f"<tr><td>{html.escape(_tenant(name))}</td>"
                     f"<td style='text-align:right'>{fmt.count(q, 1)}</td>"
                     f"<td style='text-align:right'>{fmt.count(float(used.get(name, 0.0)), 1)}</td>"
                     f"<td style='text-align:right'><b>"
                     f"{fmt.hours(float(w['mean_wait_h'].get(name, 0.0)), 2)}</b></td>"
                     f"<td style='text-align:right'>"
                     f"{fmt.hours(float(w['p95_wait_h'].get(name, 0.0)), 2)}</td></tr>")
        s = result.summary(self.day.cost_krw_per_gpu_h, self.day.day_h)
        line = t("orch.lab.line", occupancy=fmt.pct(s["occupancy"]),
                 value=_krw(s["value_per_gpu_krw"]),
                 wasted=fmt.count(s["wasted_gpu_h"], 1))
        self.table.value = f"<table><tr>{head}</tr>{body}</table><p>{html.escape(line)}</p>"
        self.waits.show(waits_figure(result, "tenant"))
        self.gantt.show(gantt_figure(result, t("orch.lab.gantt"), day_h=self.day.day_h,
                                     height=420))


def policy_lab_app(day: SchoolDay | None = None) -> PolicyLabApp:
    """Return the policy lab (quotas per tenant, borrowing, preemption, policy)."""
    return PolicyLabApp(day or _day())


# --- 6. specialization ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Grid:
    """The four runs of the specialization scenario and the selected one."""

    runs: Mapping[tuple[bool, bool], model.SimulationResult]
    selected: tuple[bool, bool]


class SpecializationApp(LiveApp[_Grid]):
    """A smaller specialized model, with and without lending (see :func:`specialization_app`)."""

    def __init__(self, day: SchoolDay) -> None:
        self.day = day
        fields = [_checkbox("specialized", t("orch.spec.specialized"), False),
                  _checkbox("lending", t("orch.spec.lending"), False)]
        super().__init__("spec", fields, error_prefix="orch")
        self.runs: dict[tuple[bool, bool], model.SimulationResult] = {}
        self.table = widgets.HTML()
        self.table.add_class("lk-spec-table")
        self.gantt = FigureOutput("lk-spec-gantt")
        self.children = [*(f.box for f in self.fields.values()), self.status, self.table,
                         self.gantt]
        self.update()

    def _run(self, specialized: bool, lending: bool) -> model.SimulationResult:
        key = (specialized, lending)
        if key not in self.runs:
            quotas = self.day.specialization_quotas
            tenants = [model.Tenant(n, 1.0, q, None,
                                    None if lending or n != "service" else 0.0)
                       for n, q in quotas.items()]
            jobs = _jobs(("specialized",) if specialized else ())
            self.runs[key] = model.simulate(jobs, self.day.cluster, "priority", tenants=tenants)
        return self.runs[key]

    def compute(self, values: dict[str, Any]) -> _Grid:
        sel = (_bool("specialized", values["specialized"]), _bool("lending", values["lending"]))
        runs = {(s, lend): self._run(s, lend) for s in (False, True) for lend in (False, True)}
        return _Grid(runs, sel)

    def render(self, result: _Grid) -> None:
        day = self.day
        head = (f"<tr><th></th><th style='padding:0 12px'>{t('orch.spec.no_lending')}</th>"
                f"<th style='padding:0 12px'>{t('orch.spec.with_lending')}</th></tr>")
        body = ""
        for spec in (False, True):
            cells = ""
            for lend in (False, True):
                s = result.runs[(spec, lend)].summary(day.cost_krw_per_gpu_h, day.day_h)
                text = (f"{_krw(s['value_per_gpu_krw'])}<br><small>"
                        f"{t('orch.metric.occupancy')} {fmt.pct(s['occupancy'])}</small>")
                style = "background:#fff3c4;" if (spec, lend) == result.selected else ""
                cells += f"<td style='text-align:right;padding:4px 12px;{style}'>{text}</td>"
            label = t("orch.spec.big") if not spec else t("orch.spec.small")
            body += f"<tr><td>{html.escape(label)}</td>{cells}</tr>"
        caption = f"<caption style='text-align:left'>{t('orch.spec.caption')}</caption>"
        self.table.value = f"<table>{caption}{head}{body}</table>"
        selected = result.runs[result.selected]
        self.gantt.show(gantt_figure(selected, t("orch.spec.gantt"), day_h=day.day_h,
                                     height=420))


def specialization_app(day: SchoolDay | None = None) -> SpecializationApp:
    """Return the specialization app (smaller model x lending of idle quota)."""
    return SpecializationApp(day or _day())


# --- numbers checked by nbval, exercises ----------------------------------------------------------


def _case_jobs(case: str) -> list[model.Job]:
    if case == "1a":
        return [model.Job(f"S{k}", 0, 1, 1, "class_lab") for k in range(1, 8)]
    if case == "1b":
        return [model.Job(f"S{k}", 0, 1, 1, "class_lab", mig_profile="1g.10gb")
                for k in range(1, 8)]
    j3 = 4 if case == "2a" else 5
    return [model.Job("J1", 0, 6, 4), model.Job("J2", 0, 8, 2), model.Job("J3", 0, 2, j3),
            model.Job("J4", 0, 2, 2)]


def key_numbers() -> pd.DataFrame:
    """Return the check cases' makespan, mean JCT and allocation as a Korean table.

    Rows: case 1a (7 students, whole GPU, FIFO), 1b (MIG 7 x 1g.10gb), 2a FIFO / EASY,
    2b EASY / greedy (../shared/cases/scheduling.md).
    """
    one = load_cluster(1, 1, "A100-80GB")  # with its MIG table (data/gpus)
    node = model.Cluster(1, 8)
    runs = [("1a", one, "fifo"), ("1b", one, "fifo"), ("2a", node, "fifo"),
            ("2a", node, "easy_backfill"), ("2b", node, "easy_backfill"), ("2b", node, "greedy")]
    rows = []
    for case, cluster, policy in runs:
        r = model.simulate(_case_jobs(case), cluster, policy)
        first = ", ".join(f"{j}:{s:g}" for j, s in zip(r.schedule["job"], r.schedule["start_h"],
                                                         strict=True))
        rows.append((t("orch.key.case", case=case, policy=t(f"orch.policy.{policy}")),
                     f"{r.makespan_h:g} h", f"{r.mean_jct_h:.4g} h", fmt.pct(r.allocation, 2),
                     first))
    cols = [t("orch.key.col_case"), t("orch.metric.makespan"), t("orch.metric.mean_jct"),
            t("orch.key.col_alloc"), t("orch.key.col_starts")]
    return pd.DataFrame(rows, columns=cols).set_index(cols[0])


def exercise_list() -> list[Exercise]:
    """Return the lesson's exercises; answers come from :mod:`labkit.scheduling`."""
    one = load_cluster(1, 1, "A100-80GB")  # with its MIG table (data/gpus)
    node = model.Cluster(1, 8)
    case2b = model.simulate(_case_jobs("2b"), node, "greedy")
    low = [model.Job("train", 0, 1, 6, checkpoint_interval_h=1.0),
           model.Job("class", 2.5, 1, 1, priority=5)]
    preempted = model.simulate(low, one, "priority", preemption=True)
    return [
        Exercise("orch.ex1", model.simulate(_case_jobs("1a"), one).mean_jct_h, 0.01, "h"),
        Exercise("orch.ex2", model.simulate(_case_jobs("2a"), node, "easy_backfill").allocation
                 * 100, 0.06, "%"),
        Exercise("orch.ex3", float(case2b.jobs.set_index("job").loc["J2", "wait_h"]), 0.01, "h"),
        Exercise("orch.ex4", model.fair_share_factor(0.25, 0.5), 0.0006),
        Exercise("orch.ex5", preempted.wasted_gpu_h, 0.01, "h"),
    ]


def exercises() -> widgets.VBox:
    """Return the lesson's exercises as widgets (see :func:`exercise_list`)."""
    return exercise_set(exercise_list())
