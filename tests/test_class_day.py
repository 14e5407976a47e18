"""우리 학교's own day (labkit.scheduling.class_day) and lesson 08's simulation of it.

Expected values come from the case's own figures (data/school/case.yaml: 8 H100 on one server,
a class of 28, class hours 09-17, 1-h lab jobs of 8 GB, 5 % always-on chatbot), worked out
here by hand.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from labkit import scheduling as model
from labkit.scheduling import class_day
from labkit.school import SchoolCase
from labkit.validate import InputError


@pytest.fixture(autouse=True)
def _no_saved_case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LABKIT_HOME", str(tmp_path / "lk"))  # the default case, always


def default_groups() -> dict[str, model.JobGroup]:
    c = SchoolCase()
    groups = class_day.class_day_groups(
        students=c.students, n_gpus=c.n_gpus, class_start_h=c.class_start_h,
        class_end_h=c.class_end_h, job_hours=c.job_duration_h, lab_profile="1g.10gb",
        always_on_frac=c.always_on_frac, value_krw_per_gpu_h=2.99 * 1_400)
    return {g.name: g for g in groups}


def test_class_periods_one_an_hour() -> None:
    assert class_day.class_periods(9, 17) == [9, 10, 11, 12, 13, 14, 15, 16]
    assert class_day.class_periods(9, 15.5) == [9, 10, 11, 12, 13, 14]  # a last half hour: none
    assert class_day.class_periods(9, 9.5) == [9]  # shorter than an hour: still one lab


def test_default_day_from_the_case() -> None:
    g = default_groups()
    labs = [x for name, x in g.items() if name.startswith("lab-")]
    assert len(labs) == 17 - 9 and {x.count for x in labs} == {28}
    assert [x.submit_h[0] for x in labs] == list(range(9, 17))
    assert all(x.mig_profile == "1g.10gb" and x.priority == 3 for x in labs)
    # the chatbot: 5 % of 8 GPUs = 0.4 of one GPU, all day, the highest priority
    chat = g["school-chatbot"]
    assert (chat.gpus, chat.hours, chat.priority) == (pytest.approx(0.4), 24, 4)
    # the club's fine-tuning holds half the server from an hour before class
    assert (g["club-finetune"].gpus, g["club-finetune"].submit_h) == (4, (8, 8))
    assert g["school-grading"].gpus == 2 and g["school-homework"].count == 14
    assert g["club-eval"].count == 8


def test_calendar_cost_is_the_server_over_four_years() -> None:
    # 300,000 USD x 1,400 won / 8 GPUs / (4 x 8,760 h)
    assert class_day.calendar_cost_krw_per_gpu_h(420_000_000, 8) == pytest.approx(
        420_000_000 / 8 / 35_040)
    assert round(class_day.calendar_cost_krw_per_gpu_h(420_000_000, 8)) == 1_498


@pytest.mark.parametrize(("changes", "field", "rule"), [
    ({"students": 0}, "students", "integer"),
    ({"n_gpus": 0}, "n_gpus", "integer"),
    ({"class_end_h": 8}, "class_end_h", "at_least"),
    ({"class_end_h": 25}, "class_end_h", "at_most"),
    ({"always_on_frac": 1.5}, "always_on_frac", "fraction"),
    ({"value_krw_per_gpu_h": -1}, "value_krw_per_gpu_h", "non_negative"),
    ({"job_hours": 0}, "hours", "positive"),
])
def test_bad_input(changes: dict[str, object], field: str, rule: str) -> None:
    values: dict[str, object] = {"students": 28, "n_gpus": 8, "class_start_h": 9,
                                 "class_end_h": 17, "job_hours": 1.0, "lab_profile": None,
                                 "always_on_frac": 0.05, "value_krw_per_gpu_h": 0}
    values.update(changes)
    with pytest.raises(InputError) as err:
        class_day.class_day_groups(**values)  # type: ignore[arg-type]
    assert (err.value.field, err.value.rule) == (field, rule)


# --- lesson 08's day app on the school's day ---------------------------------------------------

@pytest.fixture(scope="module")
def runs() -> dict[tuple[str, str, bool], float]:
    """Mean class-lab wait [min] of every policy x placement x preemption on the default day."""
    from labkit.ui import orchestration

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LABKIT_HOME", "/nonexistent/labkit-home")
        app = orchestration.school_day_app()
    out = {}
    for pre in (False, True):
        for policy in model.POLICIES:
            for placement in model.PLACEMENTS:
                r = app.compute({"policy": policy, "placement": placement, "preemption": pre})
                out[policy, placement, pre] = float(
                    r.waits("kind").loc["class_lab", "mean_wait_h"]) * 60
    return out


def test_day_app_runs_the_school_server() -> None:
    from labkit.ui import orchestration

    app = orchestration.school_day_app()
    assert (app.day.cluster.nodes, app.day.cluster.installed_gpus) == (1, 8)
    assert app.day.cluster.gpu_model == "H100-80GB"
    assert len(app.gantt.figure.layout.yaxis.tickvals) == 8
    labs = [j for j in app.jobs if j.kind == "class_lab"]
    assert len(labs) == 8 * 28 + 14  # eight periods of 28, and 14 homework jobs


def test_without_preemption_some_students_wait_under_every_policy(
        runs: dict[tuple[str, str, bool], float]) -> None:
    # at 09:00: 8 GPUs - 1 (the chatbot's shared GPU holds no MIG) - 4 (the club's fine-tuning,
    # running since 08:00 for 6 h) = 3 GPUs x 7 slices = 21 places for 28 students: 7 wait
    # until the first jobs end (>= 09:55), out of 8 x 28 + 14 class jobs
    free = (8 - 1 - 4) * 7
    waiting = 28 - free
    floor_min = waiting * (60 - 5) / (8 * 28 + 14)
    for (_policy, _placement, pre), wait in runs.items():
        if not pre:
            assert wait >= floor_min - 1e-6


def test_preemption_makes_room_for_the_class(runs: dict[tuple[str, str, bool], float]) -> None:
    # with preemption the class (priority 3) evicts the fine-tuning (2) and the grading (1):
    # 7 GPUs x 7 slices = 49 >= 28 students, so under priority nobody waits
    assert 7 * 7 >= 28
    assert runs["priority", "pack", True] == pytest.approx(0, abs=1e-9)
    # the task "keep the class's wait under 10 min" is reachable, and not by FIFO alone
    assert min(runs.values()) < 10 <= runs["fifo", "pack", False]


def test_best_policy_without_preemption_is_unique(runs: dict[tuple[str, str, bool], float]
                                                  ) -> None:
    best = {p: min(runs[p, pl, False] for pl in model.PLACEMENTS) for p in model.POLICIES}
    ranked = sorted(best, key=best.__getitem__)
    assert best[ranked[0]] < best[ranked[1]]  # the prediction has one right answer
    assert ranked[0] == "priority"


def test_case_day_follows_an_edited_case() -> None:
    from labkit.ui.orchestration import case_day

    day = case_day(SchoolCase(n_gpus=2, students=10, job_memory_gb=30.0, always_on_frac=0.0))
    assert day.cluster.installed_gpus == 2
    names = {g.name for g in day.groups}
    assert "school-chatbot" not in names  # no always-on share: no chatbot
    lab = next(g for g in day.groups if g.name == "lab-1")
    # 30 GB: the smallest H100 slice that holds it is 3g.40gb (1g.10gb, 1g.20gb and 2g.20gb
    # are too small)
    assert (lab.count, lab.mig_profile) == (10, "3g.40gb")
    assert math.isclose(day.cost_krw_per_gpu_h, 300_000 * 1_400 / (2 * 35_040))


@pytest.mark.parametrize(("n", "shape"), [
    (1, (1, 1)), (8, (1, 8)), (16, (1, 16)), (24, (3, 8)), (64, (8, 8)), (20, (2, 10)),
    (17, (17, 1)),
])
def test_server_shape(n: int, shape: tuple[int, int]) -> None:
    nodes, per = class_day.server_shape(n)
    assert (nodes, per) == shape and nodes * per == n


def test_a_big_class_keeps_its_first_periods_and_jobs_fit_one_server() -> None:
    groups = {g.name: g for g in class_day.class_day_groups(
        students=200, n_gpus=17, class_start_h=0, class_end_h=24, job_hours=1.0,
        lab_profile=None, always_on_frac=1.0, value_krw_per_gpu_h=0)}
    labs = [g for name, g in groups.items() if name.startswith("lab-")]
    assert len(labs) == class_day.MAX_LAB_JOBS // 200 == 3  # 600 // 200 periods of 24
    # homework still starts after the timetable's last class (24:00), not after period 3
    assert groups["school-homework"].submit_h[0] == 24
    # 17 GPUs are 17 one-GPU servers: no job is wider than one
    assert max(g.gpus for g in groups.values()) == 1
