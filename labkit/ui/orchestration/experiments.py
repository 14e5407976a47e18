"""What-if apps: filler, MIG for a class, the policy lab, specialization."""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets

from labkit import scheduling as model
from labkit import validate
from labkit.data.scheduling import SchoolDay
from labkit.i18n import t
from labkit.ui import format as fmt
from labkit.ui.components import FigureOutput, LiveApp, number_field
from labkit.ui.orchestration.common import (
    CACHE_SIZE,
    TENANTS,
    _bool,
    _checkbox,
    _choices,
    _day,
    _dropdown,
    _jobs,
    _krw,
    _tenant,
)
from labkit.ui.orchestration.figures import gantt_figure, waits_figure

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
        head = (f"<tr><th>{t('common.table.item')}</th>"
                f"<th style='padding:0 12px'>{t('orch.filler.without')}</th>"
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
            return [f"{fmt.fixed(held, 1)} GPU·h",
                    fmt.hours(float(w.get("class_lab", 0.0)), 2),
                    fmt.hours(float(w.get("fine_tuning", 0.0)), 2),
                    _krw(s["value_per_gpu_krw"])]

        labels = [t("orch.mig.class_gpu_h"), t("orch.mig.class_wait"), t("orch.mig.ft_wait"),
                  t("orch.metric.value_per_gpu")]
        a, b = col(result.base), col(result.other)
        head = (f"<tr><th>{t('common.table.item')}</th>"
                f"<th style='padding:0 12px'>{t('orch.mig.mode.mig')}</th>"
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
        # a GPU count shows as one: 4, not 4.0 (a box holding a float echoes "4.0")
        quotas = {x.name: _whole(x.quota_gpus or 0.0) for x in day.tenants}
        fields = [_dropdown("policy", t("orch.field.policy"),
                            _choices("orch.policy", model.POLICIES), "fair_share")]
        fields += [number_field(f"quota_{name}", t("orch.lab.quota", tenant=_tenant(name)),
                                quotas.get(name, 0), unit=t("orch.unit.gpu"), step=1)
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
            t("common.table.item"), t("orch.lab.quota_col"), t("orch.lab.used_col"),
            t("orch.waits.mean"),
            t("orch.waits.p95")))
        body = ""
        for name in TENANTS:
            q = self.fields[f"quota_{name}"].value
            body += (f"<tr><td>{html.escape(_tenant(name))}</td>"
                     f"<td style='text-align:right'>{fmt.number(q)}</td>"
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
        head = (f"<tr><th>{t('common.table.item')}</th>"
                f"<th style='padding:0 12px'>{t('orch.spec.no_lending')}</th>"
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


def _whole(x: float) -> float | int:
    """A whole-valued count as an int (4.0 -> 4), anything else as it is (0.5 stays)."""
    return int(x) if float(x).is_integer() else x
