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

from labkit import goodput, opex, reliability
from labkit.data.school import load_case
from labkit.mig import Layout, PlacementError
from labkit.school import SchoolCase
from labkit.ui.predict import Prediction
from labkit.ui.tasks import Task, Verdict, changed_fields

__all__ = ["CLASS_WAIT_MIN", "PREDICTIONS", "TASKS", "best_policy", "case", "july_bill_krw",
           "lowest_cheaper_pct", "max_beside", "smallest_profile"]

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


# --- lesson 01: the school's GPUs over a year --------------------------------------------------

def class_share_pct(_source: Any = None) -> float:
    """Share of the year's hours that are class hours for the school. [%]

    School days of the calendar (``data/school/calendar_2026.yaml``) x the case's class hours
    per day / the hours of the year; 190 x 8 / 8,760 = 17 % for the reference year.
    """
    from labkit.data.school import load_school_calendar

    cal = load_school_calendar()
    school = case()
    days_in_year = 366 if cal.year % 4 == 0 and (cal.year % 100 or cal.year % 400 == 0) else 365
    return school.class_hours_per_day * cal.school_days / (days_in_year * 24) * 100


def _at(replay: Any, metric: str) -> float | None:
    """The replayed GPU's ``metric`` at the time slider (None where the log has no value)."""
    gpu, t_s = replay.position()
    series = replay.trace.series(gpu, metric)
    if t_s not in series.index:
        return None
    value = float(series.loc[t_s])
    return value if math.isfinite(value) else None


def _tasks_01(replay: Any) -> list[Task]:
    gpu = replay.trace.gpus[0]
    util = replay.trace.series(gpu, "gpu_util_frac")
    sm = replay.trace.series(gpu, "sm_active_frac")
    idle_util = float(util.min())
    busy = sm[util.reindex(sm.index) >= 0.9].dropna()
    sm_limit = max(1.0, math.ceil(float(busy.min()) * 200)) if len(busy) else 1.0  # [%]

    def idle(r: Any) -> Verdict:
        u = _at(r, "gpu_util_frac")
        state = f"t={r.position()[1]:g}s util={u}"
        if u is None or u > idle_util + 0.005:
            return Verdict(False, values={"now": "n/a" if u is None else f"{u * 100:.0f}"},
                           state=state[:40])
        return Verdict(True, state=state[:40])

    def hidden(r: Any) -> Verdict:
        u, a = _at(r, "gpu_util_frac"), _at(r, "sm_active_frac")
        state = f"t={r.position()[1]:g}s {u} {a}"[:40]
        if u is None or a is None or u < 0.9 or a * 100 > sm_limit:
            return Verdict(False, values={
                "util": "n/a" if u is None else f"{u * 100:.0f}",
                "sm": "n/a" if a is None else f"{a * 100:.1f}", "limit": f"{sm_limit:g}"},
                state=state)
        return Verdict(True, state=state)

    return [Task("01.idle", idle, {"util": f"{idle_util * 100:.0f}"}),
            Task("01.hidden", hidden, {"limit": f"{sm_limit:g}"})]


# --- lesson 03: the goodput worksheet -----------------------------------------------------------

def _goodput_with(ledger: Any, **losses: float) -> float:
    ws = ledger.result
    changed = {**dict(ws.losses), **losses}
    return float(goodput.Worksheet(ws.reserved_h, changed).goodput)


def _tasks_03(ledger: Any) -> list[Task]:
    base = ledger.compute({k: _model_value(f, f.default) for k, f in ledger.fields.items()})
    half = base.losses["straggler"] / 2
    target = math.floor(
        goodput.Worksheet(base.reserved_h, {**dict(base.losses), "straggler": half}).goodput
        * 1000) / 10  # [%], to 0.1 % below
    biggest = max(base.losses, key=lambda k: base.losses[k])

    def straggler(w: Any) -> Verdict:
        others = changed_fields(w, ("straggler",))
        if others:
            return Verdict(False, "task.only", {"fields": _labels(w, others)})
        g = w.result.goodput * 100
        if g < target - 1e-9:
            return Verdict(False, values={"now": f"{g:.1f}", "target": f"{target:.1f}"},
                           state=f"{g:.1f}%")
        return Verdict(True, state=f"{g:.1f}%")

    def biggest_loss(w: Any) -> Verdict:
        zeroed = [k for k in w.loss_keys if w.fields[k].value == 0]
        others = changed_fields(w, zeroed)
        state = ",".join(zeroed)[:40]
        if others or len(zeroed) != 1:
            return Verdict(False, "task.03.biggest.one", state=state)
        if zeroed[0] != biggest:
            return Verdict(False, values={"now": f"{w.result.goodput * 100:.1f}"}, state=state)
        return Verdict(True, state=state)

    return [Task("03.straggler", straggler, {"target": f"{target:.1f}"}),
            Task("03.biggest", biggest_loss, {})]


# --- lesson 04: failures and checkpoints --------------------------------------------------------

#: A GPU's mean time between failures in lesson 04's default: Llama 3 405B's 16,384 H100
#: saw 419 unexpected interruptions in 54 days (Dubey et al. 2024, §3.3.4), i.e.
#: 16,384 x 54 x 24 / 419 = 50,676 h per GPU.
LLAMA3_GPU_MTBF_H = 16_384 * 54 * 24 / 419


def school_mtbf_days(_source: Any = None) -> float:
    """The school server's MTBF with Llama 3's per-GPU failure rate. [days]"""
    return reliability.job_mtbf_h(case().n_gpus, LLAMA3_GPU_MTBF_H) / 24


def _big_mtbf_h(app: Any) -> float:
    """The 16,384-GPU job's MTBF at Llama 3's per-GPU rate, on the slider's 0.5 h steps. [h]"""
    exact = reliability.job_mtbf_h(16_384, LLAMA3_GPU_MTBF_H)  # 3.09 h
    step = float(app.fields["mtbf_h"].control.step)
    return math.floor(exact / step) * step


#: How close to the optimum interval's overhead each lesson 04 task asks for [relative]: the
#: interval task within 2 %, the asynchronous one within 5 % (its optimum is flatter).
NEAR_OPTIMUM_04 = {"interval": 0.02, "async": 0.05}


def _near_optimum(best_overhead: float, slack: float) -> float:
    """The overhead target [%] a slack above the optimum, rounded up to 0.01 %."""
    return math.ceil(best_overhead * (1 + slack) * 10_000) / 100


def _overhead_check(a: Any, slack: float) -> Verdict:
    """Met when the chosen interval's overhead is within ``slack`` of the optimum for the
    app's current inputs (whatever else the student set: only the named controls count)."""
    r = a.result
    o, target = r.chosen_overhead * 100, _near_optimum(r.best_overhead, slack)
    state = f"{a.fields['interval_min'].value:g}min {o:.2f}%"
    if o > target:
        return Verdict(False, values={"now": f"{o:.2f}", "target": f"{target:.2f}",
                                      "best": f"{r.best_overhead * 100:.2f}"}, state=state)
    return Verdict(True, state=state)


def _tasks_04(app: Any) -> list[Task]:
    # Each task looks only at the controls it names (issue 17's trial: task 2 asked to put the
    # MTBF back first). The target follows the app's other inputs: the optimum interval's
    # overhead for them, plus a slack; the question quotes it for the lesson's defaults.
    defaults = {k: _model_value(f, f.default) for k, f in app.fields.items()}
    big = _big_mtbf_h(app)
    target = _near_optimum(app.compute({**defaults, "mtbf_h": big}).best_overhead,
                           NEAR_OPTIMUM_04["interval"])
    target_async = _near_optimum(app.compute({**defaults, "async_write": True}).best_overhead,
                                 NEAR_OPTIMUM_04["async"])

    def interval(a: Any) -> Verdict:
        if abs(a.fields["mtbf_h"].value - big) > 1e-9:
            return Verdict(False, "task.04.interval.mtbf", {"mtbf": f"{big:g}"})
        return _overhead_check(a, NEAR_OPTIMUM_04["interval"])

    def async_write(a: Any) -> Verdict:
        if a.fields["async_write"].control.value is not True:
            return Verdict(False, "task.04.async.off")
        return _overhead_check(a, NEAR_OPTIMUM_04["async"])

    return [Task("04.interval", interval, {"target": f"{target:.2f}", "mtbf": f"{big:g}"}),
            Task("04.async", async_write, {"target": f"{target_async:.2f}"})]


# --- lesson 05: buy or API ----------------------------------------------------------------------

def school_util_frac() -> float:
    """The school's mean utilization from its usage plan and calendar (lesson 07's model)."""
    from labkit.data.school import load_school_calendar
    from labkit.loadprofile import hourly_utilization

    return float(hourly_utilization(load_school_calendar(), case().usage)["util_frac"].mean())


def lowest_cheaper_pct(curves: Any, values: dict[str, Any]) -> float | None:
    """The lowest utilization on the slider's grid at which buying beats the API. [%]

    Brute force over every slider position (the model's own cost lines at each); None when
    buying is dearer everywhere on the slider.
    """
    f = curves.fields["utilization"]
    lo, hi, step = float(f.control.min), float(f.control.max), float(f.control.step)
    for i in range(round((hi - lo) / step) + 1):
        pct = round(lo + i * step, 9)
        r = curves.compute({**values, "utilization": _model_value(f, pct)})
        if r.owned_at_u < r.api_at_u:
            return pct
    return None


def _lowest_check(c: Any, target: float, state: str) -> Verdict:
    """Met when buying beats the API at the slider's position and one step lower does not."""
    r = c.result
    now = f"{c.fields['utilization'].control.value:g}"
    if r.owned_at_u >= r.api_at_u:
        return Verdict(False, "task.05.api_cheaper", {"now": now}, state)
    if c.fields["utilization"].control.value > target + 1e-9:
        return Verdict(False, "task.05.lower", {"now": now}, state)
    return Verdict(True, state=state)


def _tasks_05(curves: Any) -> list[Task]:
    defaults = {k: _model_value(f, f.default) for k, f in curves.fields.items()}
    base = curves.compute(defaults)
    util = school_util_frac()
    # The state each task asks for is reached only by moving the slider: at the default (40 %)
    # buying already beats the API, so "make buying cheaper" would be met untouched (issue 17's
    # trial). The tasks ask for the LOWEST such utilization, which the default is not.
    target = lowest_cheaper_pct(curves, defaults)
    half = round(defaults["api_price_usd_per_m"] / 2, 2)
    at_half = {**defaults, "api_price_usd_per_m": half}
    u_half = curves.compute(at_half).u_star
    target_half = lowest_cheaper_pct(curves, at_half)
    if target is None or target_half is None:
        raise ValueError("lesson 05: buying never beats the API on the utilization slider")

    def utilization(c: Any) -> Verdict:
        others = changed_fields(c, ("utilization",))
        if others:
            return Verdict(False, "task.only", {"fields": _labels(c, others)})
        return _lowest_check(c, target, f"{c.result.utilization * 100:.0f}%")

    def price(c: Any) -> Verdict:
        others = changed_fields(c, ("api_price_usd_per_m", "utilization"))
        if others:
            return Verdict(False, "task.only", {"fields": _labels(c, others)})
        state = (f"{c.fields['api_price_usd_per_m'].value:g}USD "
                 f"{c.result.utilization * 100:.0f}%")
        if abs(c.fields["api_price_usd_per_m"].value - half) > 0.005:
            return Verdict(False, "task.05.price.set", {"half": f"{half:g}"}, state)
        return _lowest_check(c, target_half, state)

    start = f"{curves.fields['utilization'].default:g}"
    return [Task("05.utilization", utilization, {"start": start, "target": f"{target:g}",
                                                 "u_star": f"{base.u_star * 100:.1f}"}),
            Task("05.price", price, {"half": f"{half:g}", "util": f"{util * 100:.0f}",
                                     "target": f"{target_half:g}",
                                     "u_half": f"{u_half * 100:.1f}"})]


# --- lesson 06: reading a benchmark claim -------------------------------------------------------

def per_accelerator_ratio(claim: Any) -> float | None:
    """The claim's ratio per accelerator (the headline a vendor prints). [x]"""
    if claim.result is None:
        return None
    for step in claim.result.normalization.steps:
        if getattr(step.key, "value", step.key) == "per_accelerator":
            return float(step.ratio)
    return None


def _item(claim: Any, key: str) -> str:
    return next(str(c.status) for c in claim.result.checklist if c.key == key)


def _tasks_06(claim: Any) -> list[Task]:
    baseline = claim.fields["baseline"].default

    def same(key: str) -> Callable[[Any], Verdict]:
        def check(c: Any) -> Verdict:
            if c.fields["baseline"].control.value != baseline:
                return Verdict(False, "task.06.baseline")
            if c.fields["claimant"].control.value == baseline:
                return Verdict(False, "task.06.itself")
            status = _item(c, key)
            state = f"{c.fields['claimant'].value} {status}"
            if status != "ok":
                return Verdict(False, state=state)
            return Verdict(True, state=state)
        return check

    return [Task("06.precision", same("precision"), {}),
            Task("06.system", same("chip_vs_system"), {})]


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


#: Each numeric prediction's plausible range (``Prediction.low``/``high``; % ones are 0-100):
#: a count or a share is never negative, and the upper ends are far past any school's case:
#: 10만 days (274 years) between failures, 100x per chip, 100 GIs on one GPU (NVIDIA's
#: largest MIG split is 7), a 100억-won monthly bill.
MAX_MTBF_DAYS = 100_000.0
MAX_RATIO = 100.0
MAX_GIS = 100.0
MAX_BILL_KRW = 1e10

PREDICTIONS: dict[str, Prediction] = {p.key: p for p in (
    Prediction("01.class_share", class_share_pct, unit="%", close_frac=0.25),
    Prediction("03.goodput", lambda w: w.result.goodput * 100 if w.result else None, unit="%",
               close_frac=0.05),
    Prediction("04.school_mtbf", school_mtbf_days, unit="일", close_frac=0.25,
               extra={"n": lambda _s: str(case().n_gpus)}, high=MAX_MTBF_DAYS),
    Prediction("05.break_even", lambda c: c.result.u_star * 100 if c.result else None,
               unit="%", close_frac=0.25),
    Prediction("06.per_chip", per_accelerator_ratio, unit="배", close_frac=0.1, high=MAX_RATIO),
    Prediction("02.max_1g", _max_smallest, unit="개", high=MAX_GIS,
               extra={"model": _board_model,
                      "profile": lambda b: smallest_profile(b.mig_layout).name}),
    Prediction("08.best_policy", best_policy,
               choices=("fifo", "easy_backfill", "greedy", "priority", "fair_share")),
    Prediction("09.cheapest", lambda d: d.result.cheapest if d.result else None,
               choices=("buy", "rent", "api")),
    Prediction("07.july_bill", lambda r: july_bill_krw(r.result) if r.result else None,
               unit="원", close_frac=0.2, high=MAX_BILL_KRW),
)}

TASKS: dict[str, Callable[[Any], list[Task]]] = {
    "01": _tasks_01,
    "02": _tasks_02,
    "03": _tasks_03,
    "04": _tasks_04,
    "05": _tasks_05,
    "06": _tasks_06,
    "07": _tasks_07,
    "08": _tasks_08,
    "09": _tasks_09,
}
