"""labkit.reliability: check cases 2, 3 and 7, Meta's ETTR figures, properties, Monte Carlo."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from labkit import reliability as rel
from labkit.data.reliability import load_llama3_interruptions
from labkit.goodput import Loss, Worksheet
from labkit.validate import InputError

# ../shared/cases/goodput.md, case 2 (Llama 3 §3.3.4: 54 days, 16,384 GPUs, 419 + 47)
DAYS, GPUS, UNEXPECTED, PLANNED = 54, 16_384, 419, 47
HOURS = DAYS * 24
GPU_MTBF_H = GPUS * HOURS / UNEXPECTED  # 50,677 h


def test_reliability_case2_llama3_rates() -> None:
    mtbf = rel.observed_gpu_mtbf_h(UNEXPECTED, GPUS, HOURS)
    assert mtbf == pytest.approx(GPU_MTBF_H, rel=1e-12)
    assert round(mtbf) == 50_677
    assert round(mtbf / 24, 1) == 2_111.5
    assert round(mtbf / 24 / 365.25, 2) == 5.78  # Julian years
    assert rel.expected_interruptions(GPUS, mtbf, 24) == pytest.approx(419 / 54, rel=1e-12)
    assert round(rel.expected_interruptions(GPUS, mtbf, 24), 3) == 7.759
    assert round(rel.job_mtbf_h(GPUS, mtbf), 3) == 3.093
    all_mtbf = rel.observed_gpu_mtbf_h(UNEXPECTED + PLANNED, GPUS, HOURS)
    assert round(rel.job_mtbf_h(GPUS, all_mtbf), 3) == 2.781
    assert 24 / mtbf == pytest.approx(4.7359e-4, abs=5e-9)
    assert round(rel.rate_per_1000_node_days(mtbf), 3) == 3.789
    assert round(rel.expected_interruptions(4_096, mtbf, 24), 3) == 1.940
    assert round(rel.job_mtbf_h(4_096, mtbf), 2) == 12.37
    month = rel.expected_interruptions(4_096, mtbf, 720)
    assert round(month, 2) == 58.19
    assert round(math.sqrt(month), 2) == 7.63
    assert round(rel.interruption_free_probability(GPUS, mtbf, 1), 4) == 0.7238
    assert rel.interruption_free_probability(GPUS, mtbf, 24) == pytest.approx(4.27e-4, abs=5e-7)
    assert round(rel.interruption_free_probability(4_096, mtbf, 12), 3) == 0.379


def test_reliability_case2_epoch_ai_cross_check() -> None:
    # Epoch AI: 50,000 h per GPU -> every 30 min at 100k GPUs, every 3 min at 1M GPUs
    assert rel.job_mtbf_h(100_000, 50_000) * 60 == pytest.approx(30)
    assert rel.job_mtbf_h(1_000_000, 50_000) * 60 == pytest.approx(3)


def test_reliability_case2_monte_carlo_counts_and_probability() -> None:
    mtbf = GPU_MTBF_H
    month = rel.simulate_month(4_096, 720, mtbf, 0.5, 0.004, 0.4, 0, trials=4_000, seed=11)
    counts = month["interruptions"]
    expected = rel.expected_interruptions(4_096, mtbf, 720)  # 58.19
    se = math.sqrt(expected / len(counts))
    assert abs(counts.mean() - expected) < 3 * se
    assert counts.var() == pytest.approx(expected, rel=0.1)  # Poisson: variance = mean
    half_day = rel.simulate_month(4_096, 12, mtbf, 0.5, 0.004, 0.4, 0, trials=20_000, seed=12)
    p = rel.interruption_free_probability(4_096, mtbf, 12)  # 0.379
    share = (half_day["interruptions"] == 0).mean()
    assert abs(share - p) < 3 * math.sqrt(p * (1 - p) / len(half_day))


def test_reliability_case2_gpu_mtbf_from_published_rates() -> None:
    assert rel.gpu_mtbf_h_from_rate(24 / GPU_MTBF_H) == pytest.approx(GPU_MTBF_H)
    rsc1 = rel.gpu_mtbf_h_from_rate(6.50, "per_1000_node_days")
    # Meta: 16,384 GPUs = 2,048 nodes at 6.50 / 1,000 node-days -> 1.80 h; 131,072 -> 0.225 h
    assert round(rel.job_mtbf_h(16_384, rsc1), 2) == 1.80
    assert round(rel.job_mtbf_h(131_072, rsc1), 3) == 0.225
    assert rel.rate_per_1000_node_days(rsc1) == pytest.approx(6.50)
    assert rel.gpu_mtbf_h_from_rate(6.5, "per_1000_node_days", gpus_per_node=4) == \
        pytest.approx(rsc1 / 2)


# ../shared/cases/goodput.md, case 7 (Daly 2006; exact arithmetic, captions to half a digit)
CASE7 = [  # delta, M, Young, Daly, exact, published caption (or None)
    (5, 1_440, 120.00, 116.69, 116.690, 117),
    (5, 360, 60.00, 56.71, 56.714, 57),
    (5, 15, 12.25, 9.14, 9.167, 9.1),
    (6, 240, 53.67, 49.74, 49.742, None),
]


@pytest.mark.parametrize(("delta", "m", "young", "daly", "exact", "caption"), CASE7)
def test_reliability_case7_checkpoint_intervals(
    delta: float, m: float, young: float, daly: float, exact: float, caption: float | None
) -> None:
    assert round(rel.young_interval(delta, m), 2) == young
    assert round(rel.daly_interval(delta, m), 2) == daly
    assert round(rel.optimal_interval(delta, m), 3) == exact
    if caption is not None:
        half_digit = 0.5 if caption == round(caption) else 0.05
        assert abs(rel.daly_interval(delta, m) - caption) <= half_digit


def test_reliability_case7_worked_example_and_brief_correction() -> None:
    x = 5 / (2 * 1_440)
    assert round(1 + math.sqrt(x) / 3 + x / 9, 6) == 1.014082
    assert round(math.sqrt(2 * 10 * 240), 2) == 69.28  # the brief's 69 min is delta = 10 min


@pytest.mark.parametrize(("m", "efficiency"), [(1_440, 1.0958), (360, 1.2204), (15, 5.008)])
def test_reliability_case7_efficiency_at_optimum(m: float, efficiency: float) -> None:
    tau = rel.optimal_interval(5, m)
    digits = len(str(efficiency).split(".")[1])
    assert round(1 + rel.overhead(tau, 5, m, 10), digits) == efficiency
    # Daly's complete model written out, R = 10 min
    direct = m * math.exp(10 / m) * math.expm1((tau + 5) / m) / tau
    assert 1 + rel.overhead(tau, 5, m, 10) == pytest.approx(direct, rel=1e-12)


def test_optimal_interval_is_the_minimum_and_restart_drops_out() -> None:
    tau = rel.optimal_interval(5, 360)
    for restart in (0, 10, 60):
        here = rel.overhead(tau, 5, 360, restart)
        assert here <= rel.overhead(tau * 0.99, 5, 360, restart)
        assert here <= rel.overhead(tau * 1.01, 5, 360, restart)


def test_overhead_first_order_is_young() -> None:
    # delta << M: overhead ~ delta/tau + tau/(2M) + R/M
    delta, m, r, tau = 0.1, 10_000.0, 1.0, 40.0
    assert rel.overhead(tau, delta, m, r) == pytest.approx(delta / tau + tau / (2 * m) + r / m,
                                                           rel=5e-3)


# Meta (Kokolis et al., HPCA 2025): RSC-1 rate 6.50, u0 = 5 min, w = 0 [published, rounded]
RSC1 = rel.gpu_mtbf_h_from_rate(6.50, "per_1000_node_days")


@pytest.mark.parametrize(("n", "interval_min", "reported", "half_digit"),
                         [(16_000, 60, 0.7, 0.05), (16_000, 5, 0.93, 0.005),
                          (8_000, 30, 0.9, 0.05)])
def test_expected_ettr_meta_reproduces_published_figures(
    n: int, interval_min: float, reported: float, half_digit: float
) -> None:
    ettr = rel.expected_ettr(n, RSC1, interval_min / 60, 0.0, 5 / 60)
    assert abs(ettr - reported) <= half_digit


def test_expected_ettr_meta_closed_form_and_exact_differ_at_scale() -> None:
    lam = 16_000 / RSC1
    meta = rel.expected_ettr(16_000, RSC1, 1.0, 0.0, 5 / 60)
    assert meta == pytest.approx(1 - lam * (5 / 60 + 0.5), rel=1e-12)
    exact = rel.expected_ettr(16_000, RSC1, 1.0, 0.0, 5 / 60, method="exact")
    assert exact == pytest.approx(lam * math.exp(-lam * 5 / 60) / math.expm1(lam), rel=1e-12)
    assert exact - meta == pytest.approx(0.036, abs=0.002)  # "about 5 % low at lambda ~ 0.54"
    # small jobs: the two agree
    small = [rel.expected_ettr(64, RSC1, 1.0, 0.01, 0.1, method=m) for m in ("meta", "exact")]
    assert small[0] == pytest.approx(small[1], abs=1e-4)


def test_expected_ettr_exact_is_one_over_one_plus_overhead() -> None:
    mtbf = rel.job_mtbf_h(4_096, GPU_MTBF_H)
    ettr = rel.expected_ettr(4_096, GPU_MTBF_H, 0.5, 0.01, 0.4, method="exact")
    assert ettr == pytest.approx(1 / (1 + rel.overhead(0.5, 0.01, mtbf, 0.4)), rel=1e-12)


def test_expected_ettr_meta_floors_at_zero_when_failures_outpace_progress() -> None:
    assert rel.expected_ettr(20_000, 1_000, 1.0, 0.0, 0.5) == 0.0  # 1 - 20 x (0.5 + 0.5) < 0
    assert rel.expected_ettr(20_000, 1_000, 1.0, 0.0, 0.5, method="exact") > 0.0


# -- properties ------------------------------------------------------------------------------
@given(n=st.integers(1, 10**7), mtbf=st.floats(1, 1e7), k=st.integers(2, 64))
def test_job_mtbf_falls_as_one_over_n(n: int, mtbf: float, k: int) -> None:
    assert rel.job_mtbf_h(n * k, mtbf) == pytest.approx(rel.job_mtbf_h(n, mtbf) / k, rel=1e-12)
    assert rel.job_mtbf_h(n, mtbf) * n == pytest.approx(mtbf, rel=1e-12)


@settings(max_examples=60)
@given(delta_frac=st.floats(1e-4, 0.5), m=st.floats(1, 1e4), r_frac=st.floats(0, 2))
def test_overhead_curve_is_convex_with_one_minimum(
    delta_frac: float, m: float, r_frac: float
) -> None:
    delta, restart = delta_frac * m, r_frac * m
    best = rel.optimal_interval(delta, m)
    grid = best * np.geomspace(0.05, 20, 401)
    y = np.array([rel.overhead(float(x), delta, m, restart) for x in grid])
    assert np.all(y >= 0)
    slopes = np.diff(y) / np.diff(grid)
    assert np.all(np.diff(slopes) >= -1e-9 * (1 + np.abs(slopes[1:])))  # convex
    sign_changes = np.count_nonzero(np.diff(np.sign(slopes)))
    assert sign_changes <= 1  # falls, then rises: one minimum
    assert abs(int(np.argmin(y)) - 200) <= 1  # at the exact optimum (the grid's middle)
    assert rel.young_interval(delta, m) >= rel.daly_interval(delta, m) > 0


@settings(max_examples=80)
@given(n=st.integers(1, 200_000), mtbf=st.floats(100, 1e6), tau=st.floats(0.01, 100),
       write_frac=st.floats(0, 0.99), restart=st.floats(0, 10),
       method=st.sampled_from(["meta", "exact"]))
def test_expected_ettr_within_zero_one(
    n: int, mtbf: float, tau: float, write_frac: float, restart: float, method: str
) -> None:
    write = write_frac * rel.job_mtbf_h(n, mtbf)
    ettr = rel.expected_ettr(n, mtbf, tau, write, restart, method=method)  # type: ignore[arg-type]
    assert 0.0 <= ettr <= 1.0


@settings(max_examples=40)
@given(n=st.integers(1, 50_000), mtbf=st.floats(1_000, 1e6), tau=st.floats(0.05, 10),
       write=st.floats(0, 0.1), restart=st.floats(0, 2), maintenance=st.floats(0, 100),
       s=st.floats(1, 2))
def test_expected_month_ledger_adds_up_and_matches_ettr(
    n: int, mtbf: float, tau: float, write: float, restart: float, maintenance: float, s: float
) -> None:
    assume(write < rel.job_mtbf_h(n, mtbf))
    ws = rel.expected_month(n, 720, mtbf, tau, write, restart, maintenance, s)
    assert list(ws.losses) == list(rel.LEDGER_COLUMNS)
    stepping = ws.effective_h + ws.losses[Loss.STRAGGLER]
    assert stepping == pytest.approx(
        (720 - maintenance) * rel.expected_ettr(n, mtbf, tau, write, restart, method="exact"),
        rel=1e-9, abs=1e-9)
    assert ws.losses[Loss.FAILURE_STOPS] == pytest.approx(
        (720 - maintenance) * -math.expm1(-n / mtbf * restart), rel=1e-9, abs=1e-12)


# -- Monte Carlo vs the exact expectation ----------------------------------------------------
MONTHS = [  # n_gpus, hours, gpu_mtbf_h, tau, delta, R, maintenance, S
    (4_096, 720, GPU_MTBF_H, 0.5, 15 / 3600, 23 / 60, 8, 670 / 640),  # the worksheet's month
    (16_384, 720, GPU_MTBF_H, 2.0, 0.3, 1.0, 0, 1.0),  # interruptions often cut segments
    (64, 100, 500, 3, 1, 2, 10, 1.1),  # long segments, many interruptions per segment
    # a 2 h month of a job failing once an hour: much of it hangs on the interruptions just
    # before and just after the month (the restart it starts in, the segment cut after it)
    (1, 2, 1.0, 1.0, 0.25, 0.5, 0, 1.0),
]


@pytest.mark.parametrize("args", MONTHS)
def test_simulate_month_means_agree_with_expected_month_within_3_se(
        args: tuple[int, float, float, float, float, float, float, float]) -> None:
    month, s = args[:7], args[7]
    expected = rel.expected_month(*month, straggler_slowdown=s)
    frame = rel.simulate_month(*month, trials=10_000, seed=2026, straggler_slowdown=s)
    mean, se = frame.mean(), frame.sem()
    for name in rel.LEDGER_COLUMNS:
        if name == Loss.PLANNED_MAINTENANCE:
            assert (frame[name] == expected.losses[name]).all()
            continue
        assert abs(mean[name] - expected.losses[name]) <= 3 * se[name] + 1e-9, name
    assert abs(mean["goodput"] - expected.goodput) < 3 * se["goodput"]
    lam_a = month[0] / month[2] * (month[1] - month[6])
    assert abs(mean["interruptions"] - lam_a) < 3 * math.sqrt(lam_a / len(frame))


def test_simulate_month_frame_shape_and_rows_add_up() -> None:
    frame = rel.simulate_month(4_096, 720, GPU_MTBF_H, 0.5, 0.004, 0.4, 8, trials=500, seed=1,
                               straggler_slowdown=1.05)
    assert list(frame.columns) == ["goodput", *rel.LEDGER_COLUMNS, "effective_h",
                                   "interruptions"]
    assert frame.index.name == "trial" and len(frame) == 500
    total = frame[[*rel.LEDGER_COLUMNS, "effective_h"]].sum(axis=1)
    assert np.allclose(total, 720, atol=1e-9)
    assert ((frame["goodput"] >= 0) & (frame["goodput"] <= 1)).all()
    assert np.allclose(frame["goodput"], frame["effective_h"] / 720)
    assert (frame[list(rel.LEDGER_COLUMNS)] >= -1e-12).all().all()
    assert frame["interruptions"].dtype == np.int64


def test_simulate_month_is_reproducible_and_seed_matters() -> None:
    args = (1_024, 720, GPU_MTBF_H, 1.0, 0.01, 0.2, 0)
    a = rel.simulate_month(*args, trials=300, seed=5)
    pd.testing.assert_frame_equal(a, rel.simulate_month(*args, trials=300, seed=5))
    assert not a.equals(rel.simulate_month(*args, trials=300, seed=6))


def test_simulate_month_reports_progress_in_chunks() -> None:
    seen: list[tuple[int, int]] = []
    rel.simulate_month(4_096, 720, GPU_MTBF_H, 0.5, 0.004, 0.4, 0, trials=5_000, seed=0,
                       progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (5_000, 5_000) and len(seen) >= 3
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_simulate_month_without_failures_in_reach_keeps_everything() -> None:
    frame = rel.simulate_month(1, 720, 1e12, 1.0, 0.1, 1.0, 20, trials=50, seed=0)
    assert (frame["interruptions"] == 0).all()
    assert frame["rewind"].max() < 1e-6 and frame["failure_stops"].max() < 1e-6
    # 700 h of 1.1-h segments: 1/1.1 of it computing
    assert frame["effective_h"].mean() == pytest.approx(700 / 1.1, abs=0.1)


def test_month_worksheet_is_lesson_03s_ledger() -> None:
    frame = rel.simulate_month(4_096, 720, GPU_MTBF_H, 0.5, 0.004, 0.4, 8, trials=10, seed=3)
    ws = rel.month_worksheet(frame, 4, 720)
    assert isinstance(ws, Worksheet)
    assert ws.goodput == pytest.approx(frame.loc[4, "goodput"])
    assert list(ws.losses) == list(rel.LEDGER_COLUMNS)
    with pytest.raises(InputError) as err:
        rel.month_worksheet(frame, 10, 720)
    assert err.value.field == "trial"


# -- case 3: Llama 3 Table 5 ------------------------------------------------------------------
def test_reliability_case3_llama3_table_arithmetic() -> None:
    table = rel.interruption_shares(load_llama3_interruptions())
    assert len(table) == 18
    assert table.attrs["total"] == 419
    assert table.attrs["printed_total_pct"] == pytest.approx(94.9, abs=1e-9)
    bad = table[~table["pct_matches"]]
    assert list(bad["component"]) == ["Faulty GPU"]
    assert round(float(bad["computed_pct"].iloc[0]), 1) == 35.3
    assert float(bad["printed_pct"].iloc[0]) == 30.1
    gpu = table[table["category"] == "GPU"]
    assert int(gpu["interruptions"].sum()) == 268
    assert 100 * 268 / 419 == pytest.approx(64.0, abs=0.05)
    assert float(gpu["printed_pct"].sum()) == pytest.approx(58.7, abs=0.05)
    soft = table["component"].isin(["Software Bug", "Dependency", "NCCL Watchdog Timeouts"])
    hardware = table.loc[~soft, "interruptions"].sum()
    assert hardware == 356 and 100 * hardware / 419 == pytest.approx(85.0, abs=0.05)
    no_host = hardware - table.loc[table["component"] == "Host Maintenance",
                                   "interruptions"].sum()
    assert no_host == 324 and 100 * no_host / 419 == pytest.approx(77.3, abs=0.05)


def test_interruption_shares_rejects_bad_tables() -> None:
    with pytest.raises(ValueError, match="printed_pct"):
        rel.interruption_shares(pd.DataFrame({"interruptions": [1]}))
    with pytest.raises(ValueError):
        rel.interruption_shares(pd.DataFrame({"interruptions": [0, 0], "printed_pct": [0, 0]}))
    with pytest.raises(ValueError):
        rel.interruption_shares(pd.DataFrame({"interruptions": [-1, 3], "printed_pct": [0, 0]}))


# -- every bad input -> ValueError (an InputError naming the field) ---------------------------
NAN, INF = math.nan, math.inf
BAD_CALLS = [
    # zero / negative MTBF
    ("gpu_mtbf_h", lambda: rel.job_mtbf_h(8, 0)),
    ("gpu_mtbf_h", lambda: rel.job_mtbf_h(8, -5)),
    ("gpu_mtbf_h", lambda: rel.expected_ettr(8, 0, 1)),
    ("gpu_mtbf_h", lambda: rel.simulate_month(8, 720, -1, 1, 0, 0, 0, 10, 0)),
    ("gpu_mtbf_h", lambda: rel.rate_per_1000_node_days(0)),
    ("mtbf", lambda: rel.young_interval(1, 0)),
    ("mtbf", lambda: rel.daly_interval(1, -1)),
    ("mtbf", lambda: rel.optimal_interval(1, 0)),
    ("mtbf", lambda: rel.overhead(1, 1, 0, 0)),
    # interval <= 0
    ("interval", lambda: rel.overhead(0, 1, 10, 0)),
    ("interval", lambda: rel.overhead(-1, 1, 10, 0)),
    ("checkpoint_interval_h", lambda: rel.expected_ettr(8, 1e4, 0)),
    ("checkpoint_interval_h", lambda: rel.expected_month(8, 720, 1e4, -1, 0, 0, 0)),
    ("checkpoint_interval_h", lambda: rel.simulate_month(8, 720, 1e4, 0, 0, 0, 0, 10, 0)),
    # write cost >= MTBF (and <= 0 where an interval is derived from it)
    ("checkpoint_cost", lambda: rel.young_interval(10, 10)),
    ("checkpoint_cost", lambda: rel.daly_interval(11, 10)),
    ("checkpoint_cost", lambda: rel.optimal_interval(30, 10)),
    ("checkpoint_cost", lambda: rel.overhead(1, 10, 10, 0)),
    ("checkpoint_cost", lambda: rel.young_interval(0, 10)),
    ("checkpoint_cost", lambda: rel.overhead(1, -1, 10, 0)),
    ("checkpoint_write_h", lambda: rel.expected_ettr(1_000, 1_000, 1, 1.0)),
    ("checkpoint_write_h", lambda: rel.expected_ettr(8, 1e4, 1, -0.1)),
    ("checkpoint_write_h", lambda: rel.simulate_month(1_000, 720, 1_000, 1, 2, 0, 0, 10, 0)),
    # NaN / inf / non-numbers
    ("gpu_mtbf_h", lambda: rel.job_mtbf_h(8, NAN)),
    ("gpu_mtbf_h", lambda: rel.job_mtbf_h(8, INF)),
    ("hours", lambda: rel.interruption_free_probability(8, 1e4, NAN)),
    ("hours", lambda: rel.expected_interruptions(8, 1e4, -1)),
    ("checkpoint_cost", lambda: rel.young_interval(NAN, 10)),
    ("mtbf", lambda: rel.daly_interval(1, NAN)),
    ("interval", lambda: rel.overhead(NAN, 1, 10, 0)),
    ("restart", lambda: rel.overhead(1, 1, 10, NAN)),
    ("restart", lambda: rel.overhead(1, 1, 10, -1)),
    ("restart_h", lambda: rel.expected_ettr(8, 1e4, 1, 0, NAN)),
    ("checkpoint_interval_h", lambda: rel.expected_ettr(8, 1e4, "1h")),  # type: ignore[arg-type]
    ("rate", lambda: rel.gpu_mtbf_h_from_rate(NAN)),
    ("rate", lambda: rel.gpu_mtbf_h_from_rate(0)),
    # counts and choices
    ("n_gpus", lambda: rel.job_mtbf_h(0, 1e4)),
    ("n_gpus", lambda: rel.job_mtbf_h(2.5, 1e4)),  # type: ignore[arg-type]
    ("n_gpus", lambda: rel.job_mtbf_h(True, 1e4)),  # type: ignore[arg-type]
    ("interruptions", lambda: rel.observed_gpu_mtbf_h(0, 8, 10)),
    ("hours", lambda: rel.observed_gpu_mtbf_h(3, 8, 0)),
    ("unit", lambda: rel.gpu_mtbf_h_from_rate(1, "per_year")),  # type: ignore[arg-type]
    ("gpus_per_node", lambda: rel.gpu_mtbf_h_from_rate(1, "per_1000_node_days", 0)),
    ("method", lambda: rel.expected_ettr(8, 1e4, 1, method="young")),  # type: ignore[arg-type]
    # the month
    ("hours", lambda: rel.expected_month(8, 0, 1e4, 1, 0, 0, 0)),
    ("maintenance_h", lambda: rel.expected_month(8, 720, 1e4, 1, 0, 0, 720)),
    ("maintenance_h", lambda: rel.expected_month(8, 720, 1e4, 1, 0, 0, -1)),
    ("straggler_slowdown", lambda: rel.expected_month(8, 720, 1e4, 1, 0, 0, 0, 0.9)),
    ("straggler_slowdown", lambda: rel.expected_month(8, 720, 1e4, 1, 0, 0, 0, NAN)),
    ("checkpoint_cost", lambda: rel.daly_interval(0, 10)),
    ("checkpoint_cost", lambda: rel.optimal_interval(0, 10)),
    ("trials", lambda: rel.simulate_month(8, 720, 1e4, 1, 0, 0, 0, 0, 0)),
    ("trials", lambda: rel.simulate_month(8, 720, 1e4, 1, 0, 0, 0, 10**9, 0)),
    ("trials", lambda: rel.simulate_month(8, 720, 1e4, 1, 0, 0, 0, 10.5, 0)),  # type: ignore[arg-type]
    ("trials", lambda: rel.simulate_month(100_000, 720, 100, 1e-3, 0, 0, 0, 100, 0)),
    ("n_gpus", lambda: rel.simulate_month(10**7, 720, 1, 1e-3, 0, 0, 0, 1, 0)),
    ("seed", lambda: rel.simulate_month(8, 720, 1e4, 1, 0, 0, 0, 10, -1)),
]


@pytest.mark.parametrize(("field", "call"), BAD_CALLS)
def test_every_bad_input_raises_value_error_naming_the_field(field: str, call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError) as err:
        call()
    assert isinstance(err.value, InputError)
    assert err.value.field == field


_THREE = pd.DataFrame({"trial": [0, 1, 2]})
LIMIT_CALLS = [
    # (call, field, rule, value, limit, how the message starts)
    # 10**7 GPUs at a 1 h MTBF over 720 h: 1,000,000 simulated interruptions at most, so
    # floor(1e6 x 1 / 720) = 1,388 GPUs
    (lambda: rel.simulate_month(10**7, 720, 1, 1e-3, 0, 0, 0, 1, 0), "n_gpus", "at_most",
     10**7, 1388, "n_gpus=10000000 means 7,200,000,000 interruptions per month, more than the "
     "simulation's 1,000,000; at most 1,388 GPUs at this MTBF"),
    # 100,000 GPUs x 720 h / 100 h = 720,000 interruptions a month; 20,000,000 in all allow
    # floor(2e7 / 720,000) = 27 trials
    (lambda: rel.simulate_month(100_000, 720, 100, 1e-3, 0, 0, 0, 100, 0), "trials", "at_most",
     100, 27, "trials must be <= 27 here (at most 100,000, and 20,000,000 simulated "
     "interruptions in all), got 100"),
    (lambda: rel.month_worksheet(_THREE, 3, 720), "trial", "at_most", 3, 2,
     "trial must be < 3, got 3"),
    (lambda: rel.month_worksheet(_THREE, -1, 720), "trial", "integer", -1, 0,
     "trial must be a whole number >= 0, got -1"),
    # 10**7 GPUs at a 10 h MTBF: 10**6 interruptions an hour, 7.2e8 a month; at most
    # floor(1e6 x 10 / 720) = 13,888 GPUs
    (lambda: rel.simulate_month(10**7, 720, 10, 1e-3, 0, 0, 0, 1, 0), "n_gpus", "at_most",
     10**7, 13_888, "n_gpus=10000000 means 720,000,000 interruptions per month, more than the "
     "simulation's 1,000,000; at most 13,888 GPUs at this MTBF"),
    (lambda: rel.young_interval(10, 10), "checkpoint_cost", "at_most", 10, 10.0,
     "checkpoint_cost must be < mtbf (10), got 10"),
    # 1,000 GPUs at 1,000 h each: a job MTBF of 1 h
    (lambda: rel.expected_ettr(1_000, 1_000, 1, 1.0), "checkpoint_write_h", "at_most", 1.0, 1.0,
     "checkpoint_write_h must be < the job MTBF (1 h), got 1.0"),
    (lambda: rel.expected_month(8, 720, 1e4, 1, 0, 0, 720), "maintenance_h", "at_most", 720,
     720.0, "maintenance_h must be < hours (720), got 720"),
    (lambda: rel.expected_month(8, 720, 1e4, 1, 0, 0, 0, 0.9), "straggler_slowdown",
     "at_least", 0.9, 1.0, "straggler_slowdown must be >= 1, got 0.9"),
    (lambda: rel.rate_per_1000_node_days(1e4, 0), "gpus_per_node", "integer", 0, 1,
     "gpus_per_node must be a whole number >= 1, got 0"),
    (lambda: rel.interruption_shares(pd.DataFrame({"interruptions": [1]})), "printed_pct",
     "other", None, None, "table has no 'printed_pct' column"),
    (lambda: rel.interruption_shares(pd.DataFrame({"interruptions": [-1, 3],
                                                   "printed_pct": [0, 0]})),
     "interruptions", "non_negative", -1.0, None,
     "interruption counts must be >= 0 and sum to more than 0"),
]


@pytest.mark.parametrize("row", LIMIT_CALLS, ids=[f"{r[1]}-{i}" for i, r in enumerate(LIMIT_CALLS)])
def test_limits_name_the_rule_value_and_limit(row) -> None:  # type: ignore[no-untyped-def]
    call, field, rule, value, limit, words = row
    with pytest.raises(InputError) as err:
        call()
    assert (err.value.field, err.value.rule, err.value.value) == (field, rule, value)
    assert err.value.limit == limit and str(err.value).startswith(words), str(err.value)


def test_smallest_counts_are_valid() -> None:
    # one trial, seed 0, one GPU per node, one interruption
    assert len(rel.simulate_month(8, 720, 1e4, 1, 0, 0, 0, 1, 0)) == 1
    # 1,000 nodes of 1 GPU for a day each at a 10,000 h MTBF: 1000 x 24 / 1e4 = 2.4
    assert rel.rate_per_1000_node_days(1e4, 1) == pytest.approx(2.4)
    assert rel.gpu_mtbf_h_from_rate(2.4, "per_1000_node_days", 1) == pytest.approx(1e4)
    # one interruption in 10 h on 8 GPUs: 80 GPU-hours per interruption
    assert rel.observed_gpu_mtbf_h(1, 8, 10) == pytest.approx(80)


def test_meta_ettr_by_hand() -> None:
    # Meta's closed form, lambda = 8 / 1e4 = 8e-4 /h:
    # no write, no restart (the defaults), tau = 1: 1 - 8e-4 x 0.5 = 0.9996
    assert rel.expected_ettr(8, 1e4, 1, method="meta") == pytest.approx(0.9996)
    # tau = 2, delta = 0.5: (1 - 8e-4 x (0 + 1)) / (1 + 0.5 / 2) = 0.9992 / 1.25 = 0.79936
    assert rel.expected_ettr(8, 1e4, 2, 0.5, method="meta") == pytest.approx(0.79936)


# -- edges the mutation run found untested (make mutation) --------------------------------------
def test_overhead_without_a_write_or_restart_is_dalys_formula() -> None:
    # Daly's complete model with delta = 0 and R = 0 (the default): M/tau (e^(tau/M) - 1) - 1;
    # tau = 1, M = 10: 10 x (e^0.1 - 1) - 1 = 10 x 0.1051709181 - 1 = 0.051709181
    assert rel.overhead(1, 0, 10) == pytest.approx(0.051709181, rel=1e-8)


def test_overhead_past_the_overflow_guard_is_infinite() -> None:
    # tau = 800 M: log(M/tau) + log(e^800 - 1) = 800 - 6.68 = 793 > 700 -> inf (exp would overflow)
    assert rel.overhead(800, 0, 1) == math.inf
    # M = tau = 1, no write: log(1) + R + log(e - 1); the guard reports inf from log 700 on
    lx = math.log(math.expm1(1))
    at_700 = 700 - lx
    assert math.log(1.0) + at_700 / 1 + lx == 700.0  # the float sum the guard sees
    assert rel.overhead(1, 0, 1, at_700) == math.inf
    assert rel.overhead(1, 0, 1, 700.5 - lx) == math.inf
    below = rel.overhead(1, 0, 1, 699 - lx)  # exp(699) - 1, finite
    assert math.isfinite(below) and below == pytest.approx(math.exp(699), rel=1e-12)


def test_overhead_for_intervals_past_thirty_mtbfs_keeps_full_precision() -> None:
    # tau = 31 M (the overflow-safe branch of log(e^x - 1)): M/tau (e^31 - 1) - 1, to 2e-14
    assert rel.overhead(31, 0, 1) == pytest.approx(math.expm1(31) / 31 - 1, rel=2e-14)


def _expm1_minus_x_exact(x: float) -> Fraction:
    """e^x - 1 - x for the float x, by its Taylor series in exact rationals (|x| <= 1e-2)."""
    q, term, total = Fraction(x), Fraction(1), Fraction(0)
    for k in range(1, 30):
        term = term * q / k
        if k >= 2:
            total += term
    return total


# x = lambda T at 1e-3 (expm1(x) - x, good to ~1e-12 here) and below it (the code's 3-term
# series, whose first dropped term x^5/120 is x^3/60 = 1.2e-11 of the whole at 9e-4)
@pytest.mark.parametrize(("tau", "tol"), [(1.0, 5e-12), (0.9, 5e-11), (0.5, 5e-11)])
def test_expected_month_rewind_for_small_lambda_t_matches_the_exact_series(
        tau: float, tol: float) -> None:
    # one GPU at a 1,000 h MTBF: lambda = 1/1000, so x = lambda tau; no write, no restart:
    # rewind share = A (e^x - 1 - x)/lambda / wall, wall = tau + (e^x - 1 - x)/lambda
    lam = 1 / 1000.0
    x = lam * tau
    rewind = _expm1_minus_x_exact(x) / Fraction(lam)
    expected = float(720 * rewind / (Fraction(tau) + rewind))
    ws = rel.expected_month(1, 720, 1000, tau, 0, 0, 0)
    assert ws.losses[Loss.REWIND] == pytest.approx(expected, rel=tol)
    assert ws.losses[Loss.STRAGGLER] == 0.0  # straggler_slowdown defaults to 1: no straggler line


def test_simulate_month_bounds_are_inclusive() -> None:
    # 1,000 GPUs at a 1 h MTBF over 1,000 h: exactly 1,000,000 interruptions a month, allowed
    one = rel.simulate_month(1_000, 1_000, 1, 1e-4, 0, 0, 0, 1, 0)
    assert len(one) == 1
    # MAX_TRIALS months at a tiny failure rate are allowed too
    assert len(rel.simulate_month(1, 10, 1e12, 1.0, 0, 0, 0, rel.MAX_TRIALS, 0)) == rel.MAX_TRIALS


def test_simulate_month_chunks_by_interruptions() -> None:
    # 600,000 GPUs at 720 h: 600,000 interruptions a month; a chunk holds <= 1,000,000 of them,
    # so floor(1e6 / 6e5) = 1 trial per chunk
    seen: list[tuple[int, int]] = []
    rel.simulate_month(600_000, 720, 720, 1e-3, 0, 0, 0, 2, 0,
                       progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 2), (2, 2)]


def test_interruption_shares_accepts_zero_counts_and_other_digits() -> None:
    # a component with no interruption, one with 1: 0 % and 100 %
    table = rel.interruption_shares(pd.DataFrame({"interruptions": [0, 1],
                                                  "printed_pct": [0.0, 100.0]}))
    assert list(table["computed_pct"]) == [0.0, 100.0] and table["pct_matches"].all()
    assert table.attrs["total"] == 1
    # 1/3 and 2/3 printed to 2 decimals: 33.33, 66.67 (33.3, 66.7 do not match at 2 decimals)
    thirds = pd.DataFrame({"interruptions": [1, 2], "printed_pct": [33.33, 66.67]})
    assert rel.interruption_shares(thirds, digits=2)["pct_matches"].all()
    assert not rel.interruption_shares(thirds.assign(printed_pct=[33.3, 66.7]),
                                       digits=2)["pct_matches"].any()
    # printed to whole percent: 33, 67
    assert rel.interruption_shares(thirds.assign(printed_pct=[33, 67]), digits=0)[
        "pct_matches"].all()
    # the printed total is the sum to a millionth (float noise dropped): 50.00000012 +
    # 49.99999997 = 100.00000009 -> 100.0
    noisy = thirds.assign(printed_pct=[50.00000012, 49.99999997])
    assert rel.interruption_shares(noisy).attrs["printed_total_pct"] == 100.0
