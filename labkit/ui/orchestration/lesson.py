"""Lesson 08's checked numbers and exercises."""

from __future__ import annotations

import ipywidgets as widgets

from labkit import scheduling as model
from labkit.data.scheduling import load_cluster
from labkit.i18n import t
from labkit.ui import format as fmt
from labkit.ui.exercises import Exercise, exercise_set

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


def key_numbers() -> fmt.Table:
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
                     f"{r.makespan_h:g} h", f"{r.mean_jct_h:.4g} h", fmt.pct(r.allocation, 1),
                     first))
    cols = [t("orch.key.col_case"), t("orch.metric.makespan"), t("orch.metric.mean_jct"),
            t("orch.key.col_alloc"), t("orch.key.col_starts")]
    return fmt.rows_table(rows, cols)


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
