"""Lessons 07, 08 and 09: the room's bills, the school day under a policy, the
capstone's decision.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from labkit import opex
from labkit.ui.checks.common import (
    JULY,
    _labels,
    _model_value,
    _options,
    _won,
    case,
)
from labkit.ui.tasks import Task, Verdict, changed_fields

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
        # the task starts from the oversized contract: the box's own value, the school's
        # contract, is already under the target (the teacher's trial passed that way)
        if r.fields["contract_kw"].value == r.fields["contract_kw"].default:
            return Verdict(False, "task.07.contract.same",
                           {"kw": f"{r.fields['contract_kw'].value:g}",
                            "big": f"{OVERSIZED_KW:g}"})
        res = r.result
        bill = july_bill_krw(res)
        state = f"{r.fields['contract_kw'].value:g} kW {bill:,.0f}"
        # the peak is rounded up in the hint: 15.03 kW shown as "15.0" read as "15 is enough"
        if bool(res.bills["over_contract"].any()):
            return Verdict(False, "task.07.contract.over",
                           {"peak": f"{math.ceil(peak * 10) / 10:.1f}",
                            "kw": f"{r.fields['contract_kw'].value:g}"},
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


# --- lesson 09: the capstone's decision --------------------------------------------------------

_USAGE = ("class_frac", "after_school_frac", "vacation_frac", "always_on_frac")


def _tasks_09(decision: Any) -> list[Task]:
    def cheapest(option: str, allowed: tuple[str, ...]) -> Callable[[Any], Verdict]:
        def check(d: Any) -> Verdict:
            others = changed_fields(d, allowed)
            if others:
                return Verdict(False, "task.only", {"fields": _labels(d, others)})
            now = d.result.cheapest
            state = f"{now} {d.result.utilization * 100:.0f}%"
            if now != option:
                return Verdict(False, values={"now": _option_label(now)}, state=state)
            return Verdict(True, state=state)
        return check

    return [Task("09.buy", cheapest("buy", _USAGE), {}),
            Task("09.api", cheapest("api", ("api_usd_per_m_tokens",)), {})]


def _option_label(option: str) -> str:
    from labkit.i18n import t

    return t(f"capstone.option.{option}")
