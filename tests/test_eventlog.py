"""labkit.eventlog: goodput from an event log in ml-goodput-measurement's conventions (case 11)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from labkit.eventlog import Bucket, disrupted_run_log, job_goodput
from labkit.validate import InputError

# ../shared/cases/goodput.md, case 11 (the library's own unit tests, v0.2.3); tolerance 0.001 pp
STARTUP_S, STEP_S, STEPS = 5, 3, 5


def clean_run() -> list[dict[str, Any]]:
    log: list[dict[str, Any]] = [{"job_name": "t", "job_start_time": 0.0}]
    log += [{"step_count": k, "step_start_time": STARTUP_S + STEP_S * k} for k in range(STEPS)]
    log.append({"job_end_time": STARTUP_S + STEP_S * STEPS})
    return log


def test_eventlog_case11a_clean_run() -> None:
    result = job_goodput(clean_run())
    assert result.total_s == 20
    assert 100 * result.goodput == pytest.approx(75.0, abs=1e-3)
    assert 100 * result.seconds[Bucket.OTHER] / result.total_s == pytest.approx(25.0, abs=1e-3)
    assert result.seconds[Bucket.PROGRAM_STARTUP] == 0
    assert result.last_productive_step == 4
    assert result.disruptions == 0


CASE_11B = {  # bucket: % of the 49-s job
    Bucket.PRODUCTIVE: 30.612, Bucket.TPU_INITIALIZATION: 2.041, Bucket.TRAINING_PREP: 4.082,
    Bucket.DATA_LOADING_SYNC: 8.163, Bucket.PROGRAM_STARTUP: 20.408,
    Bucket.WASTED_PROGRESS: 12.245, Bucket.INFRASTRUCTURE_RECOVERY: 16.327, Bucket.OTHER: 6.122,
}


def test_eventlog_case11b_one_disruption() -> None:
    log = disrupted_run_log()
    starts = [r["step_start_time"] for r in log if "step_start_time" in r]
    assert starts == [5, 13, 16, 19, 22, 35, 43, 46]  # the case's timeline
    assert {"job_start_time": 30.0} in log and {"job_end_time": 49.0} in log
    result = job_goodput(log)
    assert result.total_s == 49
    table = result.table().set_index("bucket")
    for bucket, pct in CASE_11B.items():
        assert 100 * table.loc[bucket.value, "fraction"] == pytest.approx(pct, abs=1e-3), bucket
    assert table["seconds"].sum() == pytest.approx(49)
    seconds = result.seconds
    assert (seconds[Bucket.PRODUCTIVE], seconds[Bucket.PROGRAM_STARTUP],
            seconds[Bucket.WASTED_PROGRESS], seconds[Bucket.INFRASTRUCTURE_RECOVERY],
            seconds[Bucket.DATA_LOADING_SYNC], seconds[Bucket.OTHER]) == (15, 10, 6, 8, 4, 3)
    assert result.disruptions == 1
    assert result.last_productive_step == 4


def test_eventlog_order_of_records_does_not_matter() -> None:
    log = disrupted_run_log()
    assert job_goodput(log[::-1]).seconds == job_goodput(log).seconds


def test_eventlog_later_restart_goes_to_infrastructure_recovery() -> None:
    base, late = job_goodput(disrupted_run_log()), job_goodput(disrupted_run_log(restart_s=40))
    assert late.total_s == base.total_s + 10
    assert late.seconds[Bucket.INFRASTRUCTURE_RECOVERY] == \
        base.seconds[Bucket.INFRASTRUCTURE_RECOVERY] + 10
    assert late.seconds[Bucket.PRODUCTIVE] == base.seconds[Bucket.PRODUCTIVE] == 15
    assert 100 * late.goodput == pytest.approx(100 * 15 / 59)


@pytest.mark.parametrize(
    ("resume", "wasted", "productive"),
    [(0, 8 + 3 + 3 + 3, 15), (1, 9, 15), (2, 6, 15), (3, 3, 15),
     # one step after the restart: no other step to compare with, so its compilation
     # (5 s) cannot be told apart and counts as productive
     (4, 0, 15 + 5)],
)
def test_eventlog_older_checkpoint_wastes_more(resume: int, wasted: float,
                                               productive: float) -> None:
    result = job_goodput(disrupted_run_log(resume_step=resume))
    assert result.seconds[Bucket.WASTED_PROGRESS] == wasted
    assert result.seconds[Bucket.PRODUCTIVE] == productive
    assert sum(result.seconds.values()) == pytest.approx(result.total_s)


def test_eventlog_checkpoint_save_inside_a_step_is_taken_out_of_it() -> None:
    log = [*clean_run(), {"checkpoint_save_start_time": 12.0},
           {"checkpoint_save_end_time": 13.0}]
    result = job_goodput(log)
    assert result.seconds[Bucket.CHECKPOINT_SAVE] == 1
    # step 2 keeps 2 s of its 3; the other steps now average 2.75 s, so step 0 (3 s) shows
    # 0.25 s of "program startup"
    assert result.seconds[Bucket.PROGRAM_STARTUP] == pytest.approx(3 - (3 + 2 + 3 + 3) / 4)
    assert result.seconds[Bucket.PRODUCTIVE] == pytest.approx(15 - 1 - 0.25)
    assert sum(result.seconds.values()) == pytest.approx(20)


def test_eventlog_custom_badput_and_restore() -> None:
    log = [
        *clean_run(),
        {"checkpoint_restore_start_time": 1.0}, {"checkpoint_restore_end_time": 3.0},
        {"custom_badput_event_type": "eval", "custom_badput_event_start_time": 15.0},
        {"custom_badput_event_type": "eval", "custom_badput_event_end_time": 16.0},
    ]
    result = job_goodput(log)
    assert result.seconds[Bucket.CHECKPOINT_RESTORE] == 2
    assert result.seconds[Bucket.CUSTOM_BADPUT] == 1
    assert result.seconds[Bucket.PRODUCTIVE] == pytest.approx(15 - 1 - 0.25)  # as above
    assert result.seconds[Bucket.OTHER] == 3  # the 5 s before step 0, less the 2-s restore


def test_eventlog_running_job_needs_until() -> None:
    log = clean_run()[:-1]
    result = job_goodput(log, until=20)
    assert result.seconds[Bucket.PRODUCTIVE] == 12  # the last step is not counted yet
    with pytest.raises(InputError, match="until"):
        job_goodput(log)


@pytest.mark.parametrize(
    ("log", "message"),
    [
        ([{"step_count": 0, "step_start_time": 1.0}, {"job_end_time": 2.0}], "job_start_time"),
        ([{"job_start_time": 5.0}, {"job_end_time": 5.0}], "> 0"),
        ([{"job_start_time": 0.0}, {"job_end_time": math.nan}], "finite"),
        ([{"job_start_time": 0.0}, {"foo_time": 1.0}, {"job_end_time": 2.0}], "unknown record"),
        ([{"job_start_time": 0.0}, {"job_start_time": 1.0, "job_end_time": 2.0}], "exactly one"),
        (["job_start_time=0"], "mapping"),
        ([{"job_start_time": 0.0}, {"step_count": -1, "step_start_time": 1.0},
          {"job_end_time": 2.0}], "whole number"),
        ([{"job_start_time": 0.0}, {"tpu_init_start_time": 0.5}, {"job_end_time": 2.0}],
         "has no end"),
        ([{"job_start_time": 0.0}, {"tpu_init_end_time": 0.5}, {"job_end_time": 2.0}],
         "without its start"),
        ([{"job_start_time": 0.0}, {"tpu_init_start_time": 0.0}, {"tpu_init_end_time": 2.0},
          {"training_prep_start_time": 0.0}, {"training_prep_end_time": 2.0},
          {"job_end_time": 2.0}], "overlapping"),
    ],
)
def test_eventlog_rejects_bad_logs(log: list[Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        job_goodput(log)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"restart_s": 20}, "restart_s"), ({"resume_step": 5}, "resume_step"),
     ({"step_s": 0}, "step_s"), ({"first_step_extra_s": -1}, "first_step_extra_s"),
     ({"steps": 1}, "steps"), ({"restart_s": math.nan}, "restart_s")],
)
def test_disrupted_run_log_rejects_bad_inputs(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(InputError) as err:
        disrupted_run_log(**kwargs)
    assert err.value.field == field
