"""labkit.scheduling: the shared cases exactly, invariants, preemption, quotas, bad inputs."""

from __future__ import annotations

import itertools
import math

import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from labkit import scheduling as sched
from labkit.data.gpus import load_gpu_model
from labkit.data.scheduling import load_cluster
from labkit.scheduling import Cluster, Job, Tenant, simulate
from labkit.validate import InputError

# MIG profiles and placement rules come from the lab GPU layer's model data (data/gpus/)
A100_MIG = load_gpu_model("A100-80GB").mig
ONE_A100 = load_cluster(1, 1, "A100-80GB")
ONE_NODE = Cluster(1, 8)


def starts(result: sched.SimulationResult) -> dict[object, float]:
    return dict(zip(result.schedule["job"], result.schedule["start_h"], strict=True))


# Case 1 of ../shared/cases/scheduling.md (seven students on one A100-80GB) is lesson 02's and is
# tested once, in tests/test_sharing.py (labkit.sharing runs its FIFO on this simulator).

# --- case 2: FIFO vs EASY backfill vs greedy on one 8-GPU node ---------------------------------

def case2(j3_hours: float) -> list[Job]:
    return [Job("J1", 0, 6, 4), Job("J2", 0, 8, 2), Job("J3", 0, 2, j3_hours), Job("J4", 0, 2, 2)]


def test_scheduling_case2a_fifo() -> None:
    r = simulate(case2(4), ONE_NODE, "fifo")
    assert (r.makespan_h, r.mean_jct_h, r.allocation) == (10, 7.0, 0.65)
    assert starts(r) == {"J1": 0, "J2": 4, "J3": 6, "J4": 6}
    assert r.allocation == 52 / (8 * 10)


def test_scheduling_case2a_easy_backfill() -> None:
    r = simulate(case2(4), ONE_NODE, "easy_backfill")
    assert (r.makespan_h, r.mean_jct_h, r.allocation) == (8, 5.5, 0.8125)
    assert starts(r) == {"J1": 0, "J3": 0, "J2": 4, "J4": 6}


def test_scheduling_case2a_greedy_same_as_easy() -> None:
    easy = simulate(case2(4), ONE_NODE, "easy_backfill")
    greedy = simulate(case2(4), ONE_NODE, "greedy")
    assert starts(greedy) == starts(easy)
    assert greedy.makespan_h == 8


def test_scheduling_case2b_fifo() -> None:
    r = simulate(case2(5), ONE_NODE, "fifo")
    assert (r.makespan_h, r.mean_jct_h) == (11, 7.25)
    assert round(r.allocation, 4) == 0.6136
    assert r.allocation == 54 / 88


def test_scheduling_case2b_easy_backfill_keeps_reservation() -> None:
    r = simulate(case2(5), ONE_NODE, "easy_backfill")
    assert (r.makespan_h, r.mean_jct_h) == (11, 5.75)
    assert starts(r) == {"J1": 0, "J4": 0, "J2": 4, "J3": 6}
    assert round(r.allocation, 4) == 0.6136


def test_scheduling_case2b_greedy_starves_the_wide_job() -> None:
    r = simulate(case2(5), ONE_NODE, "greedy")
    assert (r.makespan_h, r.mean_jct_h) == (8, 5.75)
    assert round(r.allocation, 4) == 0.8438
    assert r.allocation == 54 / 64
    wait = r.jobs.set_index("job")["wait_h"]
    assert wait["J2"] == 6


@pytest.mark.parametrize("policy", ["priority", "fair_share"])
def test_scheduling_case2b_ordered_policies_backfill_like_easy(policy: str) -> None:
    r = simulate(case2(5), ONE_NODE, policy)
    assert starts(r) == {"J1": 0, "J4": 0, "J2": 4, "J3": 6}


# --- conventions ---------------------------------------------------------------------------------

def test_simulate_completions_before_arrivals_at_equal_time() -> None:
    # J1 ends at 2 exactly when J2 arrives: J2 starts at 2 on the freed GPU
    r = simulate([Job("J1", 0, 1, 2), Job("J2", 2, 1, 1)], Cluster(1, 1))
    assert starts(r) == {"J1": 0, "J2": 2}
    assert r.mean_jct_h == (2 + 1) / 2


def test_simulate_queue_order_is_submit_then_listing() -> None:
    jobs = [Job("late", 1, 1, 1), Job("b", 0, 1, 1), Job("a", 0, 1, 1)]
    r = simulate(jobs, Cluster(1, 1))
    assert starts(r) == {"b": 0, "a": 1, "late": 2}


def test_simulate_gang_needs_all_gpus_on_one_node() -> None:
    # 4 GPUs free in total (2 + 2) but not on one node: the 4-GPU job waits
    jobs = [Job("x", 0, 6, 3), Job("y", 0, 6, 5), Job("wide", 0, 4, 1)]
    r = simulate(jobs, Cluster(2, 8), "greedy")
    assert starts(r)["wide"] == 3


def test_priority_policy_orders_by_priority() -> None:
    jobs = [Job("run", 0, 1, 1), Job("low", 0, 1, 1, priority=0),
            Job("high", 0, 1, 1, priority=5)]
    r = simulate(jobs, Cluster(1, 1), "priority")
    assert starts(r) == {"high": 0, "run": 1, "low": 2}
    assert starts(simulate(jobs, Cluster(1, 1), "fifo")) == {"run": 0, "low": 1, "high": 2}


# --- placement -----------------------------------------------------------------------------------

def test_pack_fills_one_node_and_spread_uses_both() -> None:
    jobs = [Job("a", 0, 1, 1), Job("b", 0, 1, 1)]
    pack = simulate(jobs, Cluster(2, 4), placement="pack")
    spread = simulate(jobs, Cluster(2, 4), placement="spread")
    assert set(pack.schedule["node"]) == {0}
    assert set(spread.schedule["node"]) == {0, 1}


def test_shared_gpu_jobs_stack_on_one_gpu_with_pack() -> None:
    jobs = [Job(f"s{k}", 0, 0.25, 1, "embedding") for k in range(4)]
    r = simulate(jobs, Cluster(1, 2), placement="pack")
    assert set(r.schedule["gpu_ids"]) == {(0,)}
    assert r.allocation == pytest.approx(1 / 2)


def test_fgd_keeps_room_for_the_popular_class() -> None:
    # GPU0 is 0.6 used, GPU1 0.2 used (free 0.4 / 0.8). A 0.3 job arrives; the workload's
    # popular class asks 0.4. Best fit takes GPU0 (free 0.4 -> 0.1, then 0.1 + 0.8 free, one
    # 0.4 slot lost); FGD takes GPU1 (free 0.4 and 0.5: both still fit a 0.4 job).
    jobs = [Job("x", 0, 0.6, 10), Job("y", 0, 0.2, 10), Job("new", 1, 0.3, 1)]
    jobs += [Job(f"p{k}", 20, 0.4, 1) for k in range(6)]
    base = simulate(jobs, Cluster(1, 2), "fifo", "spread")
    assert dict(zip(base.schedule["job"], base.schedule["gpu_ids"], strict=True))["y"] == (1,)
    pack = simulate(jobs, Cluster(1, 2), "fifo", "pack")
    fgd = simulate(jobs, Cluster(1, 2), "fifo", "fgd")
    where_fgd = dict(zip(fgd.schedule["job"], fgd.schedule["gpu_ids"], strict=True))
    where_pack = dict(zip(pack.schedule["job"], pack.schedule["gpu_ids"], strict=True))
    # x and y: pack stacks them on GPU0; FGD splits them so each GPU keeps a 0.4 slot
    assert where_pack["x"] == where_pack["y"] == (0,)
    assert where_fgd["x"] != where_fgd["y"]
    frag_fgd = fgd.fragmentation().set_index("t_h")["fragmented_gpus"]
    frag_pack = pack.fragmentation().set_index("t_h")["fragmented_gpus"]
    assert frag_fgd.loc[1.0] <= frag_pack.loc[1.0]


def test_node_fragmentation_counts_free_share_too_small_for_the_target() -> None:
    # free 0.3 and 0.4 on two GPUs, target workload: 0.5-GPU tasks -> 0.7 GPU fragmented
    jobs = [Job("a", 0, 0.7, 1), Job("b", 0, 0.6, 1), Job("t", 5, 0.5, 1)]
    r = simulate(jobs, Cluster(1, 2), "fifo", "spread")
    frag = r.fragmentation()
    first = frag.iloc[0]
    assert first["free_gpus"] == pytest.approx(0.7)
    targets = {round(d.share, 2): p for d, p in r._targets}
    assert targets == {0.7: pytest.approx(1 / 3), 0.6: pytest.approx(1 / 3),
                       0.5: pytest.approx(1 / 3)}
    # class 0.7: both too small -> 0.7; class 0.6: both -> 0.7; class 0.5: both -> 0.7
    assert first["fragmented_gpus"] == pytest.approx(0.7)
    assert first["fragmentation_rate"] == pytest.approx(1.0)


def test_mig_instances_follow_placement_rules() -> None:
    # 3g.40gb may start at memory unit 0 or 4 only: with a 1g instance on the GPU, only one 3g
    # fits beside it; the second waits until the first 3g ends
    jobs = [Job("one", 0, 1, 5, mig_profile="1g.10gb"), Job("a", 0, 1, 1, mig_profile="3g.40gb"),
            Job("b", 0, 1, 1, mig_profile="3g.40gb")]
    r = simulate(jobs, ONE_A100, "greedy")
    assert starts(r) == {"one": 0, "a": 0, "b": 1}
    slices = r.gpu_schedule().set_index("job")
    a = range(slices.loc["a", "slice_start"], slices.loc["a", "slice_start"] + 4)
    one = slices.loc["one", "slice_start"]
    assert a.start in (0, 4) and slices.loc["a", "slice_size"] == 4 and one not in a


@pytest.mark.parametrize(("profile", "per_gpu"), [
    # instances per A100-80GB: ../shared/reference/mig.md (NVIDIA MIG user guide profile table)
    ("1g.10gb", 7),
    ("1g.20gb", 4),  # 2 memory slices each, placements 0, 2, 4, 6
    ("2g.20gb", 3),
    ("3g.40gb", 2),
    ("1g.10gb+me", 1),  # takes the media engines: one per GPU, though 7 slices are free
])
def test_mig_profile_caps_come_from_the_board(profile: str, per_gpu: int) -> None:
    jobs = [Job(f"m{k}", 0, 1, 1, mig_profile=profile) for k in range(per_gpu + 1)]
    r = simulate(jobs, ONE_A100, "greedy")
    assert sorted(starts(r).values()) == [0.0] * per_gpu + [1.0]


def test_mig_and_shared_jobs_never_mix_on_one_gpu() -> None:
    jobs = [Job("m", 0, 1, 2, mig_profile="1g.10gb"), Job("s", 0, 0.5, 1)]
    r = simulate(jobs, ONE_A100, "greedy")
    assert starts(r) == {"m": 0, "s": 2}


def test_mig_profile_lookup_and_non_mig_models() -> None:
    profile = sched.mig_profile(A100_MIG, "1g.20gb")
    assert profile.placements == (0, 2, 4, 6) and profile.compute_slices == 1
    assert load_cluster(1, 8, "L40S").mig is None
    assert load_cluster(1, 8, "H100-80GB").mig is not None
    with pytest.raises(InputError) as err:
        sched.mig_profile(A100_MIG, "9g.99gb")
    assert err.value.rule == "choice" and "1g.10gb" in err.value.limit
    with pytest.raises(InputError):
        load_cluster(1, 8, "TPU-v5")


# --- preemption and checkpoints -------------------------------------------------------------------

def test_preemption_loses_work_since_last_checkpoint() -> None:
    jobs = [Job("low", 0, 1, 5, checkpoint_interval_h=1.0),
            Job("high", 2.5, 1, 1, priority=5)]
    r = simulate(jobs, Cluster(1, 1), "priority", preemption=True)
    s = r.schedule.set_index(["job", "start_h"])
    first = s.loc[("low", 0.0)]
    assert bool(first["preempted"]) and first["end_h"] == 2.5
    assert first["lost_h"] == pytest.approx(0.5)
    assert starts(r)["high"] == 2.5
    last = r.jobs.set_index("job").loc["low"]
    # resumed at 3.5 from the checkpoint at 2 h of progress: 3 h left
    assert last["end_h"] == pytest.approx(3.5 + 3)
    assert r.wasted_gpu_h == pytest.approx(0.5)


def test_preemption_without_checkpoint_loses_everything() -> None:
    jobs = [Job("low", 0, 1, 5), Job("high", 2.5, 1, 1, priority=5)]
    r = simulate(jobs, Cluster(1, 1), "priority", preemption=True)
    assert r.wasted_gpu_h == pytest.approx(2.5)
    assert r.jobs.set_index("job").loc["low", "end_h"] == pytest.approx(3.5 + 5)


def test_no_preemption_means_the_high_priority_job_waits() -> None:
    jobs = [Job("low", 0, 1, 5), Job("high", 2.5, 1, 1, priority=5)]
    r = simulate(jobs, Cluster(1, 1), "priority", preemption=False)
    assert starts(r)["high"] == 5 and not r.schedule["preempted"].any()


# --- quotas: borrowing and reclaim ----------------------------------------------------------------

def quota_jobs() -> list[Job]:
    a = [Job(f"a{k}", 0, 1, 10, tenant="A", checkpoint_interval_h=0.5) for k in range(8)]
    b = [Job(f"b{k}", 1, 1, 2, tenant="B") for k in range(2)]
    return a + b


def test_quota_borrowing_lets_a_tenant_use_idle_quota() -> None:
    tenants = [Tenant("A", quota_gpus=4), Tenant("B", quota_gpus=4)]
    r = simulate(quota_jobs(), Cluster(1, 8), "easy_backfill", tenants=tenants)
    assert all(starts(r)[f"a{k}"] == 0 for k in range(8))  # A borrows B's idle 4 GPUs
    assert starts(r)["b0"] == 10  # ... and B waits: no reclaim without preemption


def test_quota_reclaim_evicts_borrowers_with_preemption() -> None:
    tenants = [Tenant("A", quota_gpus=4), Tenant("B", quota_gpus=4)]
    r = simulate(quota_jobs(), Cluster(1, 8), "easy_backfill", preemption=True, tenants=tenants)
    assert starts(r)["b0"] == 1 and starts(r)["b1"] == 1
    evicted = r.schedule[r.schedule["preempted"]]
    assert len(evicted) == 2 and set(evicted["tenant"]) == {"A"}
    assert evicted["lost_h"].tolist() == pytest.approx([0.0, 0.0])  # 1 h = 2 checkpoints


def test_quota_without_lending_keeps_idle_quota_idle() -> None:
    tenants = [Tenant("A", quota_gpus=4), Tenant("B", quota_gpus=4, lending_limit_gpus=0)]
    r = simulate(quota_jobs(), Cluster(1, 8), "easy_backfill", tenants=tenants)
    assert sum(1 for k in range(8) if starts(r)[f"a{k}"] == 0) == 4
    assert starts(r)["b0"] == 1


def test_quota_without_borrowing_is_a_static_partition() -> None:
    tenants = [Tenant("A", quota_gpus=4, borrowing_limit_gpus=0), Tenant("B", quota_gpus=4)]
    r = simulate(quota_jobs(), Cluster(1, 8), "easy_backfill", tenants=tenants)
    assert sum(1 for k in range(8) if starts(r)[f"a{k}"] == 0) == 4
    assert starts(r)["b0"] == 1  # B's quota stayed free
    assert r.occupancy(1.0) == pytest.approx(0.5)


def test_reclaim_and_priority_do_not_evict_each_other_forever() -> None:
    # A (within quota) reclaims from B (borrowing); B's job has the higher priority but, with
    # quotas, priority acts only inside a tenant: it waits instead of evicting A back
    jobs = [Job("a", 0.5, 0.5, 2.0, tenant="A", checkpoint_interval_h=1.0),
            Job("b", 2.25, 2, 1.0, tenant="B", priority=1, checkpoint_interval_h=0.5)]
    tenants = [Tenant("A", quota_gpus=1.0), Tenant("B", quota_gpus=1.0, share=2.0)]
    r = simulate(jobs, Cluster(1, 2), "fair_share", "spread", preemption=True, tenants=tenants)
    assert not r.schedule["preempted"].any()
    assert starts(r) == {"a": 0.5, "b": 2.5}


# --- fair share -----------------------------------------------------------------------------------

def test_fair_share_factor_is_slurm_classic() -> None:
    assert sched.fair_share_factor(0.5, 0.5) == pytest.approx(0.5)
    assert sched.fair_share_factor(0.0, 0.25) == 1.0
    assert sched.fair_share_factor(0.25, 0.5) == pytest.approx(2 ** -0.5)
    with pytest.raises(ValueError):
        sched.fair_share_factor(0.5, 0)


def test_fair_share_serves_the_tenant_that_used_less() -> None:
    # A used the GPU for 10 h; then A and B queue behind a running job: B goes first
    jobs = [Job("a-old", 0, 1, 10, tenant="A"), Job("blocker", 10, 1, 1, tenant="C"),
            Job("a-new", 10.5, 1, 1, tenant="A"), Job("b-new", 10.6, 1, 1, tenant="B")]
    fifo = simulate(jobs, Cluster(1, 1), "easy_backfill")
    fair = simulate(jobs, Cluster(1, 1), "fair_share")
    assert starts(fifo)["a-new"] < starts(fifo)["b-new"]
    assert starts(fair)["b-new"] < starts(fair)["a-new"]


# --- metrics --------------------------------------------------------------------------------------

def test_value_occupancy_and_net_value() -> None:
    jobs = [Job("w", 0, 2, 3, value_per_gpu_h=1000), Job("f", 0, 2, 3, "filler")]
    r = simulate(jobs, Cluster(1, 4))
    assert r.value_krw() == 2 * 3 * 1000
    assert r.occupancy() == 1.0
    assert r.occupancy(6.0) == pytest.approx(0.5)
    assert r.net_value_krw(200, 6.0) == pytest.approx(6000 - 200 * 4 * 6)
    assert r.value_per_gpu_krw() == 1500
    s = r.summary(200, 6.0)
    assert s["occupancy"] == pytest.approx(0.5) and s["cost_krw"] == 4800


def test_waits_by_kind_and_tenant() -> None:
    jobs = [Job("a", 0, 1, 2, "training", "x"), Job("b", 0, 1, 1, "evaluation", "y")]
    r = simulate(jobs, Cluster(1, 1))
    by_kind = r.waits("kind")
    assert by_kind.loc["evaluation", "mean_wait_h"] == 2
    assert r.waits("tenant").loc["x", "jobs"] == 1
    with pytest.raises(ValueError):
        r.waits("colour")


def test_demand_curve_sums_requests_by_kind() -> None:
    jobs = [Job("a", 0, 2, 2, "training"), Job("b", 1, 1, 1, "class_lab", mig_profile="1g.10gb")]
    curve = sched.demand_curve(jobs, A100_MIG, step_h=0.5)
    assert curve.loc[0.0, "training"] == 2 and curve.loc[2.0, "training"] == 0
    assert curve.loc[1.0, "class_lab"] == pytest.approx(1 / 7)
    assert list(curve.columns) == ["training", "class_lab"]


def test_timeline_records_queue_length() -> None:
    r = simulate([Job(f"S{k}", 0, 1, 1, "class_lab") for k in range(3)], ONE_A100)
    assert r.timeline["queued"].tolist() == [2, 1, 0, 0]


# --- workload generators --------------------------------------------------------------------------

def test_jobs_from_groups_is_seeded_and_applies_variants() -> None:
    g = sched.JobGroup("lab", "class_lab", 3, (9, 10), 1, 2, mig_profile="1g.10gb",
                       hours_jitter=0.2, variants={"whole_gpu": {"mig_profile": None}})
    a = sched.jobs_from_groups([g], seed=1)
    assert a == sched.jobs_from_groups([g], seed=1)
    assert a != sched.jobs_from_groups([g], seed=2)
    assert [j.id for j in a] == ["lab-01", "lab-02", "lab-03"]
    assert all(9 <= j.submit_h <= 10 and j.mig_profile == "1g.10gb" for j in a)
    whole = sched.jobs_from_groups([g], seed=1, variants=["whole_gpu"])
    assert all(j.mig_profile is None for j in whole)
    with pytest.raises(ValueError):
        sched.JobGroup("x", "training", 1, (2, 1), 1, 1)


def test_filler_jobs_occupy_every_gpu() -> None:
    jobs = sched.filler_jobs(4, day_h=3)
    assert len(jobs) == 12 and {j.value_per_gpu_h for j in jobs} == {0.0}
    r = simulate(jobs, Cluster(1, 4))
    assert r.occupancy(3.0) == 1.0 and r.value_krw() == 0


def test_trace_jobs_follow_the_distribution() -> None:
    dist = sched.TraceDistribution((1, 8), (0.5, 0.5), {1: ((0, 1.0), (1, 1.0)),
                                                        8: ((0, 2.0), (1, 2.0))},
                                   shares=(0.5, 1.0), share_weights=(0.5, 0.5))
    jobs = sched.trace_jobs(400, dist, jobs_per_hour=10, seed=3, tenants=("a", "b"))
    assert len(jobs) == 400
    assert {j.gpus for j in jobs} == {0.5, 1.0, 8.0}
    assert {j.hours for j in jobs if j.gpus == 8} == {2.0}
    assert all(b.submit_h >= a.submit_h for a, b in itertools.pairwise(jobs))
    mean_gap = jobs[-1].submit_h / 400
    assert 0.08 < mean_gap < 0.12  # Poisson at 10/h
    assert sched.trace_jobs(5, dist, jobs_per_hour=1, seed=3) == sched.trace_jobs(
        5, dist, jobs_per_hour=1, seed=3)


# --- invariants (hypothesis) ----------------------------------------------------------------------

PROFILES = ("1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb")


@st.composite
def workloads(draw: st.DrawFn) -> tuple[list[Job], Cluster, list[Tenant]]:
    nodes = draw(st.integers(1, 3))
    gpn = draw(st.sampled_from([1, 2, 4]))
    n = draw(st.integers(1, 14))
    jobs = []
    for k in range(n):
        form = draw(st.sampled_from(["whole", "share", "mig"]))
        mig = None
        if form == "whole":
            gpus: float = draw(st.integers(1, gpn))
        elif form == "share":
            gpus = draw(st.sampled_from([0.25, 0.3, 0.5, 0.7]))
        else:
            gpus = 1
            mig = draw(st.sampled_from(PROFILES))
        jobs.append(Job(
            k, draw(st.sampled_from([0, 0, 0.5, 1, 2.25, 3])), gpus,
            draw(st.sampled_from([0.5, 1, 1.5, 2, 3.75])),
            tenant=draw(st.sampled_from(["A", "B", None])),
            priority=draw(st.integers(0, 3)), mig_profile=mig,
            checkpoint_interval_h=draw(st.sampled_from([None, 0.5, 1.0])),
            value_per_gpu_h=draw(st.sampled_from([0, 1000]))))
    tenants = []
    if draw(st.booleans()):
        capacity = nodes * gpn
        tenants = [Tenant("A", quota_gpus=capacity / 2,
                          borrowing_limit_gpus=draw(st.sampled_from([None, capacity / 2]))),
                   Tenant("B", quota_gpus=capacity / 2, share=2.0,
                          lending_limit_gpus=draw(st.sampled_from([None, 0, capacity / 4])))]
    return jobs, Cluster(nodes, gpn, "A100-80GB", A100_MIG), tenants


def assert_invariants(r: sched.SimulationResult, jobs: list[Job], tenants: list[Tenant]) -> None:
    gpn = r.cluster.gpus_per_node
    by_id = {j.id: j for j in jobs}
    # gang: every run's GPUs on its node
    for node, ids in zip(r.schedule["node"], r.schedule["gpu_ids"], strict=True):
        assert {g // gpn for g in ids} == {node}
    # no GPU over-committed at any time; MIG slices disjoint; MIG never mixed with shares
    per_gpu = r.gpu_schedule()
    times = sorted(set(per_gpu["start_h"]))
    for t in times:
        live = per_gpu[(per_gpu["start_h"] <= t + 1e-9) & (per_gpu["end_h"] > t + 1e-9)]
        for _, rows in live.groupby("gpu"):
            assert rows["share"].sum() <= 1 + 1e-9
            mig = rows[rows["slice_size"] > 0]
            if len(mig):
                assert len(mig) == len(rows)
                used = 0
                for start, size in zip(mig["slice_start"], mig["slice_size"], strict=True):
                    bits = ((1 << size) - 1) << start
                    assert not used & bits
                    used |= bits
        if tenants:
            quotas = {x.name: x for x in tenants}
            live_runs = r.schedule[(r.schedule["start_h"] <= t + 1e-9)
                                   & (r.schedule["end_h"] > t + 1e-9)]
            held = live_runs.groupby(live_runs["tenant"].fillna(""))["gpus"].sum()
            for name, q in quotas.items():
                assert q.quota_gpus is not None  # the strategy gives every tenant a quota
                limit = q.quota_gpus + (math.inf if q.borrowing_limit_gpus is None
                                        else q.borrowing_limit_gpus)
                assert held.get(name, 0.0) <= limit + 1e-9
            # Kueue: what tenants borrow fits in what the others lend
            borrowed = sum(max(0.0, held.get(n, 0.0) - q.quota_gpus) for n, q in quotas.items())
            lendable = sum(min(math.inf if q.lending_limit_gpus is None else q.lending_limit_gpus,
                               max(0.0, q.quota_gpus - held.get(n, 0.0)))
                           for n, q in quotas.items())
            assert borrowed <= lendable + 1e-9
    # each job: starts after submit, runs its hours of kept work, lost = time since checkpoint
    for job_id, runs in r.schedule.groupby("job"):
        job = by_id[job_id]
        runs = runs.sort_values("start_h")
        assert runs["start_h"].min() >= job.submit_h - 1e-9
        assert not runs["preempted"].iloc[-1]
        kept = (runs["end_h"] - runs["start_h"] - runs["lost_h"]).sum()
        assert kept == pytest.approx(job.hours, abs=1e-6)
        for _, run in runs[runs["preempted"]].iterrows():
            elapsed = run["end_h"] - run["start_h"]
            c = job.checkpoint_interval_h
            expected = elapsed if c is None else elapsed - math.floor(elapsed / c + 1e-9) * c
            assert run["lost_h"] == pytest.approx(expected, abs=1e-6)
            assert run["lost_h"] < (c if c is not None else math.inf) + 1e-9
        # runs of one job never overlap
        assert (runs["start_h"].iloc[1:].to_numpy()
                >= runs["end_h"].iloc[:-1].to_numpy() - 1e-9).all()
    assert r.value_krw() == pytest.approx(sum(j.value_per_gpu_h * float(r.jobs.set_index(
        "job").loc[j.id, "gpus"]) * j.hours for j in jobs))
    assert 0 < r.allocation <= 1 + 1e-9


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads(), st.sampled_from(sched.POLICIES), st.sampled_from(sched.PLACEMENTS),
       st.booleans())
def test_simulate_invariants(data: tuple[list[Job], Cluster, list[Tenant]], policy: str,
                             placement: str, preemption: bool) -> None:
    jobs, cluster, tenants = data
    try:
        r = simulate(jobs, cluster, policy, placement, preemption, tenants=tenants)
    except InputError as err:  # a job larger than its tenant can ever be admitted with
        assert "quota" in str(err) and tenants
        assume(False)
    assert_invariants(r, jobs, tenants)
    if not preemption:
        assert not r.schedule["preempted"].any()
    if policy == "fifo" and not preemption and not tenants:
        # strict FIFO: jobs start in queue order
        order = sorted(range(len(jobs)), key=lambda i: (jobs[i].submit_h, i))
        first = r.jobs["start_h"].to_numpy()
        assert all(first[a] <= first[b] + 1e-9 for a, b in itertools.pairwise(order))
    again = simulate(jobs, cluster, policy, placement, preemption, tenants=tenants)
    pd.testing.assert_frame_equal(again.schedule, r.schedule)  # deterministic


# --- bad inputs -----------------------------------------------------------------------------------

def job(**kwargs: object) -> Job:
    args: dict[str, object] = {"id": "j", "submit_h": 0, "gpus": 1, "hours": 1}
    return Job(**{**args, **kwargs})  # type: ignore[arg-type]


TRACE = sched.TraceDistribution((1,), (1.0,), {1: ((0, 1.0), (1, 2.0))})
ONE_JOB = [Job("a", 0, 1, 1)]
BAD_INPUTS = [
    # (call, field, rule[, words of the message]) -- every entry point, once per kind of error
    (lambda: job(hours=-1), "hours", "positive"),
    (lambda: job(hours=math.nan), "hours", "finite"),
    (lambda: job(submit_h=-0.5), "submit_h", "non_negative"),
    (lambda: job(gpus=0), "gpus", "positive"),
    (lambda: job(gpus=1.5), "gpus", "integer"),
    (lambda: job(gpus=math.inf), "gpus", "finite"),
    (lambda: job(kind="mining"), "kind", "choice"),
    (lambda: job(priority=-1), "priority", "integer"),
    (lambda: job(priority=1.5), "priority", "integer"),
    (lambda: job(priority=10**7), "priority", "at_most"),
    (lambda: job(value_per_gpu_h=-3), "value_per_gpu_h", "non_negative"),
    (lambda: job(checkpoint_interval_h=0), "checkpoint_interval_h", "positive"),
    (lambda: job(tenant=""), "tenant", "other"),
    (lambda: job(mig_profile="1g.10gb", gpus=0.5), "gpus", "integer"),
    (lambda: job(id=None), "id", "other"),
    (lambda: job(id=True), "id", "other"),
    (lambda: job(memory_mib=-1), "memory_mib", "non_negative"),
    (lambda: job(max_share=0), "max_share", "fraction"),
    (lambda: job(max_share=1.5), "max_share", "fraction"),
    (lambda: Cluster(0, 8), "nodes", "integer"),
    (lambda: Cluster(1.5, 8), "nodes", "integer"),  # type: ignore[arg-type]
    (lambda: Cluster(10_000, 8), "nodes", "at_most"),
    (lambda: Cluster(1, 0), "gpus_per_node", "integer"),
    (lambda: Cluster(1, 64), "gpus_per_node", "at_most"),
    (lambda: Cluster(1, 8, ""), "gpu_model", "other"),
    (lambda: Cluster(1, 8, mig="table"), "mig", "other"),  # type: ignore[arg-type]
    (lambda: Tenant("x", share=0), "share", "positive"),
    (lambda: Tenant("x", quota_gpus=-1), "quota_gpus", "non_negative"),
    (lambda: Tenant("x", lending_limit_gpus=-1), "lending_limit_gpus", "non_negative"),
    (lambda: Tenant(""), "name", "other"),
    (lambda: sched.fair_share_factor(1.5, 0.5), "usage", "fraction"),
    (lambda: sched.fair_share_factor(0.5, 0), "shares", "fraction"),
    (lambda: simulate([Job("wide", 0, 16, 1)], Cluster(4, 8)), "jobs[0].gpus", "at_most",
     "the GPUs of one node"),
    (lambda: simulate(ONE_JOB, ONE_NODE, "lottery"), "policy", "choice"),
    (lambda: simulate(ONE_JOB, ONE_NODE, placement="random"), "placement", "choice"),
    (lambda: simulate(ONE_JOB, ONE_NODE, half_life_h=0), "half_life_h", "positive"),
    (lambda: simulate(ONE_JOB, "8 GPUs"), "cluster", "other"),  # type: ignore[arg-type]
    (lambda: simulate([], ONE_NODE), "jobs", "other"),
    (lambda: simulate([Job("a", 0, 1, 1), Job("a", 1, 1, 1)], ONE_NODE), "jobs[1].id", "other",
     "used twice"),
    (lambda: simulate(["not a job"], ONE_NODE), "jobs[0]", "other"),  # type: ignore[list-item]
    (lambda: simulate(ONE_JOB, ONE_NODE, tenants=[Tenant("x"), Tenant("x")]), "tenants",
     "other", "unique"),
    (lambda: simulate(ONE_JOB, ONE_NODE, tenants=["x"]), "tenants", "other"),  # type: ignore[list-item]
    # a job that can never be admitted: wider than its quota plus what it may borrow
    (lambda: simulate([Job("a", 0, 4, 1, tenant="x")], ONE_NODE,
                      tenants=[Tenant("x", quota_gpus=2, borrowing_limit_gpus=0)]),
     "jobs[0].gpus", "at_most", "quota plus borrowing limit"),
    (lambda: simulate([Job("a", 0, 1, 1, mig_profile="9g.99gb")], ONE_A100),
     "jobs[0].mig_profile", "choice"),
    (lambda: simulate([Job("a", 0, 1, 1, mig_profile="1g.10gb")], load_cluster(1, 1, "L40S")),
     "jobs[0].mig_profile", "choice", "MIG table"),
    # a Cluster built without its MIG table
    (lambda: simulate([Job("a", 0, 1, 1, mig_profile="1g.10gb")], Cluster(1, 1, "A100-80GB")),
     "jobs[0].mig_profile", "choice", "MIG table"),
    # 8 x 7g.80gb instances do not fit a 1-GPU node
    (lambda: simulate([Job("a", 0, 8, 1, mig_profile="7g.80gb")], ONE_A100), "jobs[0].gpus",
     "at_most", "7g.80gb instances that fit on one node"),
    (lambda: simulate(ONE_JOB, ONE_NODE).occupancy(0), "window_h", "positive"),
    (lambda: simulate(ONE_JOB, ONE_NODE).net_value_krw(-5), "cost_krw_per_gpu_h",
     "non_negative"),
    (lambda: simulate(ONE_JOB, ONE_NODE).waits("node"), "by", "choice"),
    (lambda: sched.demand_curve(ONE_JOB, step_h=1e-6), "step_h", "at_most"),
    (lambda: sched.demand_curve([]), "jobs", "other"),
    (lambda: sched.capacity_report(sched.demand_curve(ONE_JOB), 0, 1), "installed_gpus",
     "positive"),
    (lambda: sched.filler_jobs(0), "gpus", "integer"),
    (lambda: sched.filler_jobs(8, day_h=200), "day_h", "at_most"),
    (lambda: sched.trace_jobs(0, TRACE, jobs_per_hour=1), "n", "integer"),
    (lambda: sched.trace_jobs(5, TRACE, jobs_per_hour=0), "jobs_per_hour", "positive"),
    (lambda: sched.trace_jobs(5, TRACE, jobs_per_hour=1, max_gpus=0), "max_gpus", "integer"),
    (lambda: sched.TraceDistribution((1,), (0.5,), {1: ((0, 1.0), (1, 2.0))}), "gpu_weights",
     "other"),
    (lambda: sched.jobs_from_groups([], counts={"nobody": 3}), "counts", "other"),
    (lambda: sched.JobGroup("g", "training", 0, (0, 1), 1, 1), "count", "integer"),
    (lambda: sched.JobGroup("g", "training", 2, (3, 1), 1, 1), "submit_h", "other"),
    (lambda: sched.quota_tenants({"a": -1}), "quota_a", "non_negative"),
    (lambda: sched.quota_tenants({"a": 1}, shares={"a": 0}), "share_a", "positive"),
]


@pytest.mark.parametrize("row", BAD_INPUTS,
                         ids=[f"{row[1]}-{row[2]}-{i}" for i, row in enumerate(BAD_INPUTS)])
def test_bad_input_raises_a_value_error_naming_the_field_and_rule(row: tuple) -> None:  # type: ignore[type-arg]
    call, field, rule, *words = row
    with pytest.raises(InputError) as err:
        call()
    assert isinstance(err.value, ValueError)
    assert (err.value.field, err.value.rule) == (field, rule)
    assert all(w in str(err.value) for w in words)
