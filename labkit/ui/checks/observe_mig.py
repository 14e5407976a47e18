"""Lessons 01 and 02: the school's GPUs over a year, the MIG board.
"""

from __future__ import annotations

import math
from typing import Any

from labkit.mig import Layout, PlacementError
from labkit.ui.checks.common import (
    _num,
    case,
)
from labkit.ui.tasks import Task, Verdict

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
        if counts.get(big, 0) == 0:  # nothing to count from yet: no number to give away
            return Verdict(False, "task.02.demo.first", {"big": big, "small": small}, state)
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


def lab_gpu_model(_source: Any = None) -> Any:
    """The lab GPU's model (:class:`labkit.gpumodels.GpuModel`): the simulated one, or the
    course's H100 where the lessons run on a real GPU (no scenario is run there)."""
    from labkit.data.gpus import load_gpu_model
    from labkit.gpu import backend

    status = backend.status()
    names = backend.parse_spec(status.spec) if status.kind == "sim" else []
    return load_gpu_model(names[0] if names else "H100-80GB")


def tiny_kernel_sm_pct(source: Any = None) -> float:
    """SM activity of a one-thread kernel in a loop: one busy SM of the GPU's SMs. [%]

    The simulator's ``tiny_kernel`` scenario (``busy_sms=1``, labkit.gpu.sim.activity); on the
    H100 (132 SMs) 1/132 = 0.76 %, while util.gpu reads about 100 %.
    """
    return 100.0 / lab_gpu_model(source).sm_count


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
    # the replay opens on the trace's first sample, which is often idle (before the job starts):
    # the idle moment to find is one after the GPU first got busy, so the untouched app is not
    # already right (issue 17's exercise guard); a trace never busy keeps any idle moment
    started = util[util >= 0.5]
    job_start = float(started.index[0]) if len(started) else -math.inf
    busy = sm[util.reindex(sm.index) >= 0.9].dropna()
    sm_limit = max(1.0, math.ceil(float(busy.min()) * 200)) if len(busy) else 1.0  # [%]

    def idle(r: Any) -> Verdict:
        u = _at(r, "gpu_util_frac")
        state = f"t={r.position()[1]:g}s util={u}"
        if u is None or u > idle_util + 0.005:
            return Verdict(False, values={"now": "n/a" if u is None else f"{u * 100:.0f}"},
                           state=state[:40])
        if r.position()[1] < job_start:
            return Verdict(False, hint="task.01.idle.before", state=state[:40])
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
