"""labkit.sharing: one GPU shared by a class under FIFO, time-slicing, MPS and MIG.

Case 1 of shared/cases/scheduling.md (seven students on one A100-80GB), with its variants.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit import scheduling, sharing
from labkit.mig import Layout
from labkit.sharing import Job, Slot
from labkit.validate import InputError

A100_MIB = 81920
SMALL_MIB = 8 * 1024  # "needs <= 10 GB": fits a 1g.10gb (9728 MiB)
MID_MIB = 15 * 1000**3 / 2**20  # 15 GB: too big for 1g.10gb, fits 1g.20gb (19968 MiB)
ONE_SLICE = 1 / 7


def seven_1g() -> list[Slot]:
    return sharing.mig_slots(Layout.from_profiles("A100-80GB", ["1g.10gb"] * 7))


def run(jobs: list[Job], slots: list[Slot] | None = None) -> dict[str, sharing.ModeResult]:
    return sharing.compare(jobs, gpu_memory_mib=A100_MIB, slots=slots or seven_1g())


def test_scheduling_case1a_whole_gpu_fifo() -> None:
    fifo = run(sharing.class_jobs(7, SMALL_MIB, 1.0, ONE_SLICE))["fifo"]
    assert fifo.makespan_h == 7 and fifo.mean_jct_h == 4 and fifo.mean_wait_h == 3
    assert fifo.held_gpu_h == 7 and fifo.useful_gpu_h == pytest.approx(1)
    assert fifo.allocation_frac == 1 and fifo.useful_frac == pytest.approx(1 / 7)


def test_scheduling_case1b_mig_seven_1g() -> None:
    m = run(sharing.class_jobs(7, SMALL_MIB, 1.0, ONE_SLICE))["mig"]
    assert (m.makespan_h, m.mean_jct_h, m.mean_wait_h) == pytest.approx((1, 1, 0))
    assert m.allocation_frac == pytest.approx(1.00)
    assert {r.slot for r in m.runs} == {f"1g.10gb@{s}" for s in range(7)}


def test_scheduling_case1c_eight_students_on_seven_slices() -> None:
    m = run(sharing.class_jobs(8, SMALL_MIB, 1.0, ONE_SLICE))["mig"]
    assert m.makespan_h == pytest.approx(2) and m.mean_jct_h == pytest.approx(1.125)
    assert round(m.allocation_frac, 3) == 0.571
    assert m.runs[-1].start_h == pytest.approx(1)


def test_scheduling_case1d_fifteen_gb_jobs_need_1g_20gb() -> None:
    jobs = sharing.class_jobs(8, MID_MIB, 1.0, ONE_SLICE)
    assert run(jobs)["mig"].oom_jobs == 8  # none fits a 1g.10gb
    four = sharing.mig_slots(Layout.from_profiles("A100-80GB", ["1g.20gb"] * 4))
    result = run(jobs, four)
    assert result["mig"].makespan_h == pytest.approx(2)
    assert result["mig"].mean_jct_h == pytest.approx(1.5)
    assert result["fifo"].makespan_h == 8 and result["fifo"].mean_jct_h == 4.5


def test_scheduling_case1e_jobs_that_fill_a_gpu_gain_nothing_from_mig() -> None:
    result = run(sharing.class_jobs(7, SMALL_MIB, 1 / 7, 1.0))
    assert result["fifo"].makespan_h == pytest.approx(1)
    assert round(result["fifo"].mean_jct_h, 4) == 0.5714
    assert result["mig"].mean_jct_h == pytest.approx(1)


def test_time_slicing_runs_one_context_at_a_time_mps_runs_them_together() -> None:
    result = run(sharing.class_jobs(7, SMALL_MIB, 1.0, ONE_SLICE))
    ts, mps = result["time_slicing"], result["mps"]
    assert ts.makespan_h == pytest.approx(7) and ts.mean_jct_h == pytest.approx(7)
    assert ts.mean_wait_h == 0 and ts.interfering_jobs == 7
    assert mps.makespan_h == pytest.approx(1) and mps.interfering_jobs == 7
    assert result["mig"].interfering_jobs == 0 and result["fifo"].interfering_jobs == 0


def test_without_memory_limits_the_jobs_that_do_not_fit_run_out_of_memory() -> None:
    jobs = sharing.class_jobs(8, MID_MIB, 1.0, ONE_SLICE)  # 8 x 14,305 MiB > 81,920 MiB
    result = run(jobs)
    fits = math.floor(A100_MIB / MID_MIB)
    for mode in ("time_slicing", "mps"):
        assert result[mode].oom_jobs == 8 - fits
        assert [r.outcome for r in result[mode].runs] == ["done"] * fits + ["oom"] * (8 - fits)
    assert result["fifo"].oom_jobs == 0
    huge = run([Job("big", 90_000, 1.0)])
    assert huge["fifo"].runs[0].outcome == "oom" and huge["mig"].runs[0].outcome == "no_slot"
    assert math.isnan(huge["fifo"].mean_jct_h) and huge["fifo"].makespan_h == 0


def test_mps_shares_max_min_fairly_and_caps_each_job() -> None:
    jobs = [Job("a", 1, 1.0, 0.2), Job("b", 1, 1.0, 1.0)]  # a: 0.2 GPU-h, b: 1 GPU-h
    mps = sharing.simulate(jobs, "mps", gpu_memory_mib=A100_MIB)
    # a runs at 0.2 (its cap), b at 0.8 until a ends at 1 h; b then has 0.2 left at 1.0
    assert mps.runs[0].end_h == pytest.approx(1.0) and mps.runs[1].end_h == pytest.approx(1.2)


def test_later_submissions_wait_in_order_and_best_fit_slots_are_used() -> None:
    slots = sharing.mig_slots(Layout.from_profiles("H100-80GB", ["3g.40gb", "1g.10gb"]))
    jobs = [Job("small", 5000, 1.0, ONE_SLICE), Job("big", 30000, 1.0, 0.5, submit_h=0.5)]
    m = sharing.simulate(jobs, "mig", gpu_memory_mib=81559, slots=slots)
    assert m.runs[0].slot.startswith("1g.10gb") and m.runs[1].slot.startswith("3g.40gb")
    assert m.runs[1].start_h == 0.5 and m.runs[1].end_h == pytest.approx(0.5 + 0.5 / (3 / 7))
    fifo = sharing.simulate(jobs, "fifo", gpu_memory_mib=81559)
    assert fifo.runs[1].start_h == 1.0


CLASS = {"n_students": 7, "memory_mib": SMALL_MIB, "duration_h": 1.0, "max_share": 0.5}
BAD_INPUTS = [
    # (call, field, rule)
    (lambda: sharing.class_jobs(**{**CLASS, "n_students": 0}), "n_students", "integer"),  # type: ignore[arg-type, dict-item]  # bad input, on purpose
    (lambda: sharing.class_jobs(**{**CLASS, "n_students": 201}), "n_students", "at_most"),  # type: ignore[arg-type, dict-item]  # bad input, on purpose
    (lambda: sharing.class_jobs(**{**CLASS, "n_students": 2.5}), "n_students", "integer"),  # type: ignore[arg-type, dict-item]  # bad input, on purpose
    (lambda: sharing.class_jobs(**CLASS, stagger_h=-1), "stagger_h", "non_negative"),  # type: ignore[arg-type, dict-item]  # bad input, on purpose
    (lambda: Job("a", -1, 1.0), "memory_mib", "non_negative"),
    (lambda: Job("a", 1, 0), "duration_h", "positive"),
    (lambda: Job("a", 1, math.nan), "duration_h", "finite"),
    (lambda: Job("a", 1, 1.0, 0), "max_share", "fraction"),
    (lambda: Job("a", 1, 1.0, 1.5), "max_share", "fraction"),
    (lambda: Job("a", 1, 1.0, 0.5, -1), "submit_h", "non_negative"),
    (lambda: sharing.simulate([], "magic", gpu_memory_mib=1), "mode", "choice"),
    (lambda: sharing.simulate([Job("x", 1, 1)] * 201, "fifo", gpu_memory_mib=1), "jobs",
     "at_most"),
    (lambda: sharing.simulate([], "fifo", gpu_memory_mib=0), "gpu_memory_mib", "positive"),
]


@pytest.mark.parametrize(("call", "field", "rule"), BAD_INPUTS,
                         ids=[f"{row[1]}-{row[2]}-{i}" for i, row in enumerate(BAD_INPUTS)])
def test_bad_input_raises_a_value_error_naming_the_field_and_rule(
        call: object, field: str, rule: str) -> None:
    with pytest.raises(InputError) as err:
        call()  # type: ignore[operator]
    assert isinstance(err.value, ValueError) and field in str(err.value)
    assert (err.value.field, err.value.rule) == (field, rule)


def test_simulate_takes_only_jobs() -> None:
    with pytest.raises(TypeError):
        sharing.simulate(["S1"], "fifo", gpu_memory_mib=1)  # type: ignore[list-item]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 30_000), st.floats(0.1, 5), st.floats(0.05, 1),
                          st.floats(0, 3)), min_size=1, max_size=12))
def test_every_mode_finishes_every_job_it_can_and_conserves_work(
        specs: list[tuple[float, float, float, float]]) -> None:
    jobs = [Job(f"J{i}", m, d, s, t) for i, (m, d, s, t) in enumerate(specs)]
    slots = sharing.mig_slots(Layout.from_profiles("H100-80GB", ["3g.40gb", "2g.20gb",
                                                                 "1g.10gb", "1g.10gb"]))
    for mode, r in sharing.compare(jobs, gpu_memory_mib=81559, slots=slots).items():
        assert r.completed + r.oom_jobs == len(jobs)
        done = [j for j, run_ in zip(jobs, r.runs, strict=True) if run_.outcome == "done"]
        assert r.useful_gpu_h == pytest.approx(sum(j.work_gpu_h for j in done))
        for j, run_ in zip(jobs, r.runs, strict=True):
            if run_.outcome == "done":
                assert run_.start_h is not None and run_.end_h is not None
                assert run_.start_h >= j.submit_h - 1e-9
                # nobody runs faster than alone on a whole GPU
                assert run_.end_h - run_.start_h >= j.duration_h - 1e-6
        if mode in ("fifo", "mig") and r.completed:
            assert r.allocation_frac <= 1 + 1e-9
        assert r.useful_frac <= 1 + 1e-9


def test_a_class_job_is_a_scheduling_job_and_any_one_gpu_job_runs() -> None:
    job = Job("S1", SMALL_MIB, 2.0, 0.25, submit_h=1.0)
    assert isinstance(job, scheduling.Job)
    assert (job.id, job.name, job.hours, job.duration_h, job.gpus) == ("S1", "S1", 2.0, 2.0, 1)
    assert job.work_gpu_h == 0.5 and job.kind == "class_lab"
    plain = scheduling.Job("p", 0, 1, 2.0, memory_mib=SMALL_MIB, max_share=0.25)
    r = sharing.simulate([plain, job], "fifo", gpu_memory_mib=A100_MIB)
    # p 0-2, then S1 (submitted at 1) 2-4: brute force of "one at a time, in submit order"
    assert [(x.start_h, x.end_h) for x in r.runs] == [(0, 2), (2, 4)]
    assert r.mean_wait_h == (0 + 1) / 2 and r.held_gpu_h == 4 and r.useful_gpu_h == 1
