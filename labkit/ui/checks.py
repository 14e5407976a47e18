"""Every lesson's prediction (predict → try → check) and widget-state tasks, on 우리 학교.

:data:`PREDICTIONS` holds one :class:`~labkit.ui.predict.Prediction` per lesson, asked before
its main simulator; :data:`TASKS` maps a lesson to a builder of its
:class:`~labkit.ui.tasks.Task` list for the linked app. Every target is computed here by the
models, from the school case (:func:`labkit.data.school.load_case`) and the app's own inputs
(the app's public ``inputs``/``values``/``fields``), never typed by hand.

Used in: notebooks/01-09 (through ``ui.predict.ask`` and ``ui.tasks.lesson``)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from labkit import opex
from labkit.data.school import load_case
from labkit.mig import Layout, PlacementError
from labkit.school import SchoolCase
from labkit.ui.predict import Prediction
from labkit.ui.tasks import Task, Verdict, changed_fields

__all__ = ["CLASS_WAIT_MIN", "PREDICTIONS", "TASKS", "best_policy", "case", "july_bill_krw",
           "max_beside", "smallest_profile"]

JULY = 7


def case() -> SchoolCase:
    """The school case the lessons use now (the saved copy, else the default)."""
    return load_case().case


# --- lesson 02: the MIG board -------------------------------------------------------------------

def smallest_profile(layout: Layout) -> Any:
    """The board model's smallest GI profile (fewest compute, then memory slices; no +me)."""
    plain = [p for p in layout.spec.profiles if "+" not in p.name]
    return min(plain, key=lambda p: (p.compute_slices, p.memory_slices))


def max_beside(model: str, big: str, small: str) -> int:
    """Most ``small`` GIs that fit beside one ``big`` GI on an empty ``model`` board.

    Brute force over every legal start of ``big``; ``small`` is then placed where the driver
    would until it no longer fits.

    Raises
    ------
    ValueError
        If ``big`` cannot be placed at all.
    """
    best = -1
    empty = Layout(model)
    for start in empty.legal_starts(big):
        lay = Layout(model)
        lay.place(big, start)
        n = 0
        while True:
            try:
                lay.place(small, None)
            except (PlacementError, ValueError):
                break
            n += 1
        best = max(best, n)
    if best < 0:
        raise ValueError(f"{big} cannot be placed on {model}")
    return best


def _board_model(board: Any) -> str:
    return str(board.mig_layout.model.short_name)


def _max_smallest(board: Any) -> float:
    return float(smallest_profile(board.mig_layout).max_count)


def _tasks_02(board: Any) -> list[Task]:
    school = case()
    model = _board_model(board)
    small = smallest_profile(board.mig_layout).name
    big = "3g.40gb" if "3g.40gb" in {p.name for p in board.mig_layout.spec.profiles} else (
        max(board.mig_layout.spec.profiles, key=lambda p: p.compute_slices).name)
    n_small = max_beside(model, big, small)
    need = math.ceil(school.students / school.n_gpus)
    mem_gb = school.job_memory_gb

    def teacher_demo(b: Any) -> Verdict:
        if _board_model(b) != model:
            return Verdict(False, "task.02.model", {"model": model})
        counts = b.mig_layout.counts()
        state = b.describe()[:40]
        want = {big: 1, small: n_small}
        if counts == want:
            return Verdict(True, state=state)
        return Verdict(False, values={"big": big, "small": small, "n": n_small,
                                      "have_big": counts.get(big, 0),
                                      "have_small": counts.get(small, 0)}, state=state)

    def class_slices(b: Any) -> Verdict:
        gis = b.mig_layout.sorted_instances()
        state = b.describe()[:40]
        small_gis = [gi.profile.name for gi in gis if gi.profile.memory_mib * 2**20 / 1e9 < mem_gb]
        if small_gis:
            return Verdict(False, "task.02.slices.too_small",
                           {"profile": small_gis[0], "gb": _num(mem_gb)}, state)
        if len(gis) < need:
            return Verdict(False, values={"have": len(gis), "need": need}, state=state)
        return Verdict(True, state=state)

    return [
        Task("02.demo", teacher_demo, {"big": big, "small": small, "model": model}),
        Task("02.slices", class_slices, {"students": school.students, "n": school.n_gpus,
                                         "need": need, "gb": _num(mem_gb), "model": model}),
    ]


# --- lesson 07: the room and its bills ----------------------------------------------------------

def july_bill_krw(result: opex.OpexResult) -> float:
    """The July bill (amount due) of a room result. [KRW]"""
    bills = result.bills
    return float(bills.loc[[p.month == JULY for p in bills.index], "total_krw"].iloc[0])


def _room_result(room: Any, **changes: Any) -> opex.OpexResult:
    """The room's model run on its default inputs with ``changes`` (control values)."""
    values = {k: _model_value(f, f.default) for k, f in room.fields.items()}
    for key, value in changes.items():
        values[key] = _model_value(room.fields[key], value)
    return opex.evaluate(*room.inputs(values))


def _model_value(f: Any, control_value: Any) -> Any:
    """A control value as the model takes it (``Field.value``'s rule: divided by ``scale``)."""
    if isinstance(control_value, bool) or not isinstance(control_value, (int, float)):
        return control_value
    return round(control_value / f.scale, 9) if f.scale != 1 else control_value


#: The old, oversized contract the school starts from in task 07.contract [kW]: five times the
#: room's 20 kW, a contract sized for a whole building (a teaching scenario).
OVERSIZED_KW = 100.0


def _tasks_07(room: Any) -> list[Task]:
    big = _room_result(room, contract_auto=False, contract_kw=OVERSIZED_KW)
    peak = float(big.bills["demand_kw"].max())
    right = _room_result(room, contract_auto=False, contract_kw=float(math.ceil(peak)))
    bill_big, bill_right = july_bill_krw(big), july_bill_krw(right)
    target_bill = round((bill_big + bill_right) / 2, -3)  # between the two, to 1,000 won

    default_cls = room.fields["tariff_class"].default
    family = default_cls.split(" 선택")[0]
    options = [c for c in room.fields["tariff_class"].control.options if c.startswith(family)]
    base_year = _room_result(room).electricity_krw
    best_year = min(_room_result(room, tariff_class=c, school_exception=e).electricity_krw
                    for c in options for e in (False, True))
    target_year = round((base_year + best_year) / 2, -4)  # to 10,000 won

    def contract(r: Any) -> Verdict:
        others = changed_fields(r, ("contract_auto", "contract_kw"))
        if others:
            return Verdict(False, "task.only", {"fields": _labels(r, others)})
        if r.fields["contract_auto"].control.value:
            return Verdict(False, "task.07.contract.auto")
        res = r.result
        bill = july_bill_krw(res)
        state = f"{r.fields['contract_kw'].value:g} kW {bill:,.0f}"
        if bool(res.bills["over_contract"].any()):
            return Verdict(False, "task.07.contract.over",
                           {"peak": f"{peak:.1f}", "kw": f"{r.fields['contract_kw'].value:g}"},
                           state)
        if bill >= target_bill:
            return Verdict(False, values={"bill": _won(bill), "target": _won(target_bill)},
                           state=state)
        return Verdict(True, state=state)

    def tariff(r: Any) -> Verdict:
        others = changed_fields(r, ("tariff_class", "school_exception"))
        if others:
            return Verdict(False, "task.only", {"fields": _labels(r, others)})
        year = r.result.electricity_krw
        state = f"{r.fields['tariff_class'].value[:24]} {year:,.0f}"
        if year >= target_year:
            return Verdict(False, values={"year": _won(year), "target": _won(target_year)},
                           state=state)
        return Verdict(True, state=state)

    return [
        Task("07.contract", contract, {"big": f"{OVERSIZED_KW:g}", "bill_big": _won(bill_big),
                                       "target": _won(target_bill)}),
        Task("07.tariff", tariff, {"family": family, "base": _won(base_year),
                                   "target": _won(target_year)}),
    ]


# --- lesson 08: the school day under a policy --------------------------------------------------

#: The class's service level in task 08.wait: a student waits under 10 minutes on average
#: for a lab job (a class period is 45-50 minutes; a longer wait loses the period).
CLASS_WAIT_MIN = 10.0
CLASS_KIND = "class_lab"


def _class_wait_min(result: Any) -> float:
    return float(result.waits("kind").loc[CLASS_KIND, "mean_wait_h"]) * 60


def _day_values(day: Any, **changes: Any) -> dict[str, Any]:
    values = {k: _model_value(f, f.default) for k, f in day.fields.items()}
    values.update(changes)
    return values


def best_policy(day: Any, placement: str = "pack") -> str:
    """The policy with the shortest mean class wait, without preemption (brute force)."""
    policies = list(day.fields["policy"].control.options)
    keys = [v for _label, v in policies] if isinstance(policies[0], tuple) else policies
    waits = {p: _class_wait_min(day.compute(_day_values(day, policy=p, placement=placement,
                                                        preemption=False))) for p in keys}
    return min(waits, key=lambda p: (waits[p], keys.index(p)))


def _best_setting_min(day: Any) -> float:
    """Shortest mean class wait over every policy and placement without preemption. [min]"""
    cached = getattr(day, "_lk_best_wait_min", None)
    if cached is not None:
        return float(cached)
    best = math.inf
    for _pl_label, pl in _options(day, "placement"):
        for _label, pol in _options(day, "policy"):
            values = _day_values(day, policy=pol, placement=pl, preemption=False)
            best = min(best, _class_wait_min(day.compute(values)))
    day._lk_best_wait_min = best
    return best


def _options(app: Any, key: str) -> list[tuple[str, Any]]:
    opts = list(app.fields[key].control.options)
    return [o if isinstance(o, tuple) else (str(o), o) for o in opts]


def _tasks_08(day: Any) -> list[Task]:
    school = case()

    def wait(d: Any) -> Verdict:
        w = _class_wait_min(d.result)
        state = f"{d.fields['policy'].value} {w:.1f}min"
        if w >= CLASS_WAIT_MIN:
            return Verdict(False, values={"wait": f"{w:,.1f}", "target": f"{CLASS_WAIT_MIN:g}"},
                           state=state)
        return Verdict(True, state=state)

    def no_preemption(d: Any) -> Verdict:
        if d.fields["preemption"].control.value:
            return Verdict(False, "task.08.best.preemption")
        w = _class_wait_min(d.result)
        best = _best_setting_min(d)
        state = f"{d.fields['policy'].value} {w:.1f}min"
        if w > best + 1e-6:
            return Verdict(False, values={"wait": f"{w:,.1f}"}, state=state)
        return Verdict(True, state=state)

    return [
        Task("08.wait", wait, {"target": f"{CLASS_WAIT_MIN:g}", "students": school.students}),
        Task("08.best", no_preemption, {}),
    ]


# --- shared -----------------------------------------------------------------------------------

def _won(x: float) -> str:
    """Exact won, as a bill prints it (fmt.krw rounds to 만, too coarse for a target)."""
    return f"{x:,.0f}원"


def _num(x: float) -> str:
    return f"{x:,.2f}".rstrip("0").rstrip(".")


def _labels(app: Any, keys: list[str]) -> str:
    """The Korean labels of fields ``keys`` (their label HTML without tags)."""
    import re

    return ", ".join(re.sub(r"<[^>]+>", "", app.fields[k].label.value) for k in keys[:4])


PREDICTIONS: dict[str, Prediction] = {p.key: p for p in (
    Prediction("02.max_1g", _max_smallest, unit="개",
               extra={"model": _board_model,
                      "profile": lambda b: smallest_profile(b.mig_layout).name}),
    Prediction("08.best_policy", best_policy,
               choices=("fifo", "easy_backfill", "greedy", "priority", "fair_share")),
    Prediction("07.july_bill", lambda r: july_bill_krw(r.result) if r.result else None,
               unit="원", close_frac=0.2),
)}

TASKS: dict[str, Callable[[Any], list[Task]]] = {
    "02": _tasks_02,
    "07": _tasks_07,
    "08": _tasks_08,
}
