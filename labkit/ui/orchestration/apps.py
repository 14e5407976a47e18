"""The day's demand (:func:`demand_app`) and the day under a policy (:func:`school_day_app`).

Both default to 우리 학교's own day (:func:`~labkit.ui.orchestration.common.case_day`).
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

from labkit import scheduling as model
from labkit import validate
from labkit.data import school as school_data
from labkit.data.scheduling import SchoolDay
from labkit.i18n import t
from labkit.ui import format as fmt
from labkit.ui.components import FigureOutput, LiveApp, number_field
from labkit.ui.orchestration.common import (
    CACHE_SIZE,
    _bool,
    _checkbox,
    _choices,
    _clock,
    _dropdown,
    _jobs,
    _kind,
    _krw,
    _summary_rows,
    _table,
    _tenant,
    case_day,
    is_case_day,
)
from labkit.ui.orchestration.figures import demand_figure, gantt_figure, queue_figure, waits_figure

# --- 1. the aircraft arithmetic -----------------------------------------------------------------


#: The most a GPU-hour may cost in the demand app (100만 원, ~200x a cloud H100). [KRW/GPU-h]
MAX_COST_KRW_PER_GPU_H = 1_000_000.0


class DemandApp(LiveApp[model.CapacityReport]):
    """The day's demand against installed GPUs (see :func:`demand_app`)."""

    def __init__(self, day: SchoolDay) -> None:
        self.day = day
        jobs = _jobs(day=day)
        self.curve = model.demand_curve(jobs, day.cluster.mig, step_h=0.25, until_h=day.day_h)
        self.curve = self.curve.iloc[:-1]  # the window [0, day_h)
        fields = [
            number_field("installed_gpus", t("orch.demand.installed_label"),
                         day.cluster.installed_gpus, unit=t("orch.unit.gpu")),
            number_field("cost_krw_per_gpu_h", t("orch.demand.cost_label"),
                         # whole won in the box (the trial saw 1498.2876712328766)
                         float(round(day.cost_krw_per_gpu_h)), unit=t("orch.unit.krw_per_gpu_h"),
                         step=100),
        ]
        super().__init__("demand", fields, error_prefix="orch")
        self.summary = widgets.HTML()
        self.summary.add_class("lk-demand-summary")
        self.chart = FigureOutput("lk-demand-chart")
        self.children = [*(f.box for f in self.fields.values()), self.status, self.summary,
                         self.chart]
        self.update()

    def compute(self, values: dict[str, Any]) -> model.CapacityReport:
        cost = values["cost_krw_per_gpu_h"]
        if isinstance(cost, (int, float)) and cost > MAX_COST_KRW_PER_GPU_H:
            # 1e308 would make the day's cost inf, shown as a silent "n/a"
            raise validate.InputError("cost_krw_per_gpu_h", "at_most", cost,
                                      f"cost_krw_per_gpu_h must be <= "
                                      f"{MAX_COST_KRW_PER_GPU_H:,.0f}, got {cost!r}",
                                      limit=f"{MAX_COST_KRW_PER_GPU_H:,.0f}")
        return model.capacity_report(self.curve, values["installed_gpus"], cost)

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
    """Return the demand-vs-capacity app for 우리 학교's day (or ``day``)."""
    return DemandApp(day or case_day())


# --- 2. the school day under a policy -----------------------------------------------------------


class SchoolDayApp(LiveApp[model.SimulationResult]):
    """The day under a policy, a placement and preemption (see :func:`school_day_app`)."""

    def __init__(self, day: SchoolDay, policy: str = "fifo") -> None:
        self.day = day
        self.jobs = _jobs(day=day)
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
            result = model.simulate(self.jobs, self.day.cluster, *key)
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
    """Return the day app (policy, placement, preemption -> Gantt, queue, metrics).

    ``day`` defaults to 우리 학교's own day (:func:`case_day`: the case's GPUs, class and
    timetable); the 16-GPU shared cluster of ``data/scheduling/school_day.yaml`` is
    ``school_day_app(day=labkit.data.scheduling.load_school_day())``.
    """
    return SchoolDayApp(day or case_day(), policy)


def workload_table(day: SchoolDay | None = None) -> fmt.Table:
    """Return the day's job groups as a Korean table: who, what, when, how big, how long.

    ``day`` defaults to 우리 학교's own day (:func:`case_day`).
    """
    day = day or case_day()
    rows = []
    for g in day.groups:
        size = g.mig_profile if g.mig_profile else (
            t("orch.work.share", share=f"{g.gpus:g}") if g.gpus < 1 else f"{g.gpus:g} GPU")
        first, last = g.submit_h
        when = _clock(first) if first == last else f"{_clock(first)}–{_clock(last)}"
        rows.append((_kind(g.kind), _tenant(g.tenant), g.count, when, size, f"{g.hours:g}",
                     g.priority, _krw(g.value_per_gpu_h)))
    cols = [t("orch.work.kind"), t("orch.work.tenant"), t("orch.work.count"),
            t("orch.work.submit"), t("orch.work.size"), t("orch.work.hours"),
            t("orch.work.priority"), t("orch.work.value")]
    return fmt.rows_table(rows, cols, text_columns=2)


def policy_table(day: SchoolDay | None = None) -> fmt.Table:
    """Return the school day under every policy (pack, no preemption) as a Korean table.

    Columns: occupancy over the day, value per installed GPU over the day, mean wait, mean wait
    of the class labs and of the work that gives way to them (the school's grading batch; the
    shared cluster's fine-tuning), makespan. ``day`` defaults to the *default* 우리 학교's
    day (``data/school/case.yaml``, not a saved copy): nbval checks this table, so it is the
    same on every machine; :func:`school_day_app` shows the saved case.
    """
    day = day or case_day(school_data.load_default_case())
    jobs = _jobs(day=day)
    # the work that gives way to the class: on the school's server its grading batch (the
    # club's fine-tuning runs from before class), on the shared cluster the fine-tuning
    other = "inference_batch" if is_case_day(day) else "fine_tuning"
    rows = []
    for policy in model.POLICIES:
        r = model.simulate(jobs, day.cluster, policy)
        s = r.summary(day.cost_krw_per_gpu_h, day.day_h)
        w = r.waits("kind")["mean_wait_h"]
        rows.append((t(f"orch.policy.{policy}"), fmt.pct(s["occupancy"]),
                     _krw(s["value_per_gpu_krw"]), fmt.hours(s["mean_wait_h"], 2),
                     fmt.hours(w.get("class_lab", 0.0), 2), fmt.hours(w.get(other, 0.0), 2),
                     fmt.hours(s["makespan_h"], 2)))
    cols = [t("orch.table.policy"), t("orch.metric.occupancy"), t("orch.metric.value_per_gpu"),
            t("orch.metric.mean_wait"), t("orch.table.wait_class"), t(f"orch.table.wait_{other}"),
            t("orch.metric.makespan")]
    return fmt.rows_table(rows, cols)
