"""labkit.benchmarks: reading benchmark claims (shared case 7) and racks."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from labkit import benchmarks as bench
from labkit.data.benchmarks import benchmark_results, load_mlperf
from labkit.validate import InputError

RATIO = 0.01  # shared/cases/economics.md: ratios ±0.01
MEASURED_FP4_FP8 = 101_527 / 65_770.1  # MLPerf v5.1 B200: closed FP4 vs open FP8 (indicative)


def row(version: str, system: str, scenario: str) -> bench.BenchmarkResult:
    """One MLPerf row of data/economics (the shared reference CSV)."""
    frame = load_mlperf()
    hits = frame[(frame["version"] == version) & (frame["system"] == system)
                 & (frame["slo"] == scenario) & frame["benchmark"].str.startswith("llama2-70b")]
    assert len(hits) == 1, (version, system, scenario)
    return benchmark_results(hits.reset_index(drop=True))[0]


@pytest.fixture(scope="module")
def b200_v41() -> bench.BenchmarkResult:
    return row("v4.1", "B200-SXM-180GBx1_TRT", "Server")


@pytest.fixture(scope="module")
def h100_v41() -> bench.BenchmarkResult:
    return row("v4.1", "DGX-H100_H100-SXM-80GBx8_TRT", "Server")


# -- case 7 -----------------------------------------------------------------------------------

def test_economics_case7_inputs_from_mlperf_rows(b200_v41: bench.BenchmarkResult,
                                                 h100_v41: bench.BenchmarkResult) -> None:
    assert (b200_v41.tokens_per_s, b200_v41.accelerators, b200_v41.precision) == (
        10_755.6, 1, "FP4")
    assert b200_v41.tdp_w_per_accelerator == 1_000 and b200_v41.availability == "preview"
    assert (h100_v41.tokens_per_s, h100_v41.accelerators, h100_v41.precision) == (
        21_605.8, 8, "FP8")
    assert h100_v41.tokens_per_s_per_accelerator == pytest.approx(2_700.7, abs=0.05)
    assert MEASURED_FP4_FP8 == pytest.approx(1.544, abs=0.001)


def test_economics_case7_fp4_vs_fp8_claim_normalization(
    b200_v41: bench.BenchmarkResult, h100_v41: bench.BenchmarkResult
) -> None:
    raw = bench.normalize_claim(b200_v41, h100_v41, precision_gain=1.0)
    assert raw.step("per_accelerator").ratio == pytest.approx(3.98, abs=RATIO)  # the "4x"
    assert not raw.step("precision").applied
    assert raw.step("per_watt").ratio == pytest.approx(2.79, abs=RATIO)          # raw per watt
    measured = bench.normalize_claim(b200_v41, h100_v41, precision_gain=MEASURED_FP4_FP8)
    assert measured.step("precision").ratio == pytest.approx(2.58, abs=RATIO)    # 2a
    assert measured.step("per_watt").factor == pytest.approx(0.7)
    assert measured.ratio == pytest.approx(1.81, abs=RATIO)                      # 3 after 2a
    worst = bench.normalize_claim(b200_v41, h100_v41, precision_gain=2.0)
    assert worst.step("precision").ratio == pytest.approx(1.99, abs=RATIO)       # 2b
    assert worst.ratio == pytest.approx(1.39, abs=RATIO)                         # 3 after 2b
    assert worst.step("per_watt").detail["basis"] == "tdp"


def test_economics_case7_same_date_baseline_v50() -> None:
    b200 = row("v5.0", "B200-SXM-180GBx8_TRT", "Server")
    h100 = row("v5.0", "DGX-H100_H100-SXM-80GBx8_TRT", "Server")
    assert b200.tokens_per_s_per_accelerator == pytest.approx(12_305.4, abs=0.05)
    assert h100.tokens_per_s_per_accelerator == pytest.approx(3_888.3, abs=0.05)
    raw = bench.normalize_claim(b200, h100, precision_gain=1.0, per_watt=False)
    assert raw.ratio == pytest.approx(3.16, abs=RATIO)
    measured = bench.normalize_claim(b200, h100, precision_gain=MEASURED_FP4_FP8)
    assert measured.step("precision").ratio == pytest.approx(2.05, abs=RATIO)
    assert measured.ratio == pytest.approx(1.44, abs=RATIO)
    assert bench.normalize_claim(b200, h100, precision_gain=2.0).ratio == pytest.approx(
        1.11, abs=RATIO)


def test_software_gain_same_hardware_v41_to_v50() -> None:
    old = row("v4.1", "DGX-H100_H100-SXM-80GBx8_TRT", "Offline")
    new = row("v5.0", "DGX-H100_H100-SXM-80GBx8_TRT", "Offline")
    assert bench.normalize_claim(new, old).ratio - 1 == pytest.approx(0.277, abs=0.001)
    checklist = {i.key: i for i in bench.benchmark_checklist(new, old)}
    assert checklist["baseline"].status == "warn"
    assert checklist["precision"].status == "ok"


def test_measured_power_gives_tokens_per_joule() -> None:
    b200 = row("v5.1", "SR680a_V3_B200SXMx8_TRT", "Offline")
    h200 = row("v4.1", "H200-SXM-141GBx8_TRT_MaxQ", "Offline")
    assert b200.tokens_per_joule == pytest.approx(9.89, abs=RATIO)
    assert h200.tokens_per_joule == pytest.approx(4.11, abs=RATIO)
    result = bench.normalize_claim(b200, h200, precision_gain=1.0)
    assert result.step("per_watt").detail["basis"] == "measured"
    assert result.ratio == pytest.approx(9.894 / 4.106, abs=RATIO)  # ~2.4x tokens per joule
    assert {i.key: i.status for i in bench.benchmark_checklist(b200, h200)}["power"] == "ok"


def test_sparsity_step_and_checklist() -> None:
    sparse = row("v4.1", "H200-SXM-141GBx1_TRT_Sparse", "Offline")
    dense = row("v4.1", "H200-SXM-141GBx8_TRT", "Offline")
    assert sparse.sparsity and sparse.division == "open"
    raw = bench.normalize_claim(sparse, dense, sparsity_gain=1.0)
    assert raw.step("per_accelerator").ratio == pytest.approx(1.17, abs=RATIO)
    result = bench.normalize_claim(sparse, dense, sparsity_gain=2.0)
    assert result.step("sparsity").factor == 0.5
    status = {i.key: i.status for i in bench.benchmark_checklist(sparse, dense)}
    assert status["sparsity"] == "warn" and status["division"] == "warn"


def test_checklist_case7_pair(b200_v41: bench.BenchmarkResult,
                              h100_v41: bench.BenchmarkResult) -> None:
    status = {i.key: i.status for i in bench.benchmark_checklist(b200_v41, h100_v41)}
    assert list(status) == list(bench.CHECKLIST)
    assert status == {"baseline": "ok", "precision": "warn", "sparsity": "ok", "model": "ok",
                      "chip_vs_system": "warn", "slo": "ok", "power": "warn",
                      "division": "ok", "availability": "warn"}


def test_checklist_power_unknown_without_ratings() -> None:
    a = bench.BenchmarkResult("a", "X", 8, 100.0, "FP8")
    b = bench.BenchmarkResult("b", "Y", 8, 50.0, "FP8")
    status = {i.key: i.status for i in bench.benchmark_checklist(a, b)}
    assert status["power"] == "unknown" and status["baseline"] == "unknown"
    assert not bench.normalize_claim(a, b).step("per_watt").applied


def test_higher_precision_claimant_gains_when_normalized() -> None:
    fp16 = bench.BenchmarkResult("a", "X", 8, 100.0, "FP16")
    fp4 = bench.BenchmarkResult("b", "Y", 8, 100.0, "FP4")
    assert bench.normalize_claim(fp16, fp4, precision_gain=2.0).ratio == pytest.approx(4.0)
    assert bench.normalize_claim(fp4, fp16, precision_gain=2.0).ratio == pytest.approx(0.25)


precisions = st.sampled_from(sorted(bench.PRECISION_BITS))


@given(precisions, precisions, st.booleans(), st.floats(1.0, 4.0), st.floats(1.0, 4.0),
       st.floats(1.0, 1e6), st.floats(1.0, 1e6))
def test_normalization_never_raises_a_ratio_when_removing_an_advantage(
    pa: str, pb: str, sparse: bool, p_gain: float, s_gain: float, ta: float, tb: float
) -> None:
    a = bench.BenchmarkResult("a", "X", 8, ta, pa, sparsity=sparse)
    b = bench.BenchmarkResult("b", "Y", 8, tb, pb)
    result = bench.normalize_claim(a, b, precision_gain=p_gain, sparsity_gain=s_gain,
                                  per_watt=False)
    before = result.step("per_accelerator").ratio
    if bench.PRECISION_BITS[pa] <= bench.PRECISION_BITS[pb]:  # the claimant's advantage
        assert result.step("precision").ratio <= before * (1 + 1e-12)
    assert result.step("sparsity").ratio <= result.step("precision").ratio * (1 + 1e-12)


# -- servers and racks ------------------------------------------------------------------------

def test_servers_and_racks_under_a_rack_power_limit() -> None:
    plan = bench.servers_and_racks(300_000, 31_106.28, 10.2, 40)
    assert plan == (10, 4, pytest.approx(102.0))  # 3 servers per 40 kW rack
    servers, racks, kw = bench.servers_and_racks(300_000, 3 * 31_106.28, 14.3, 40)
    assert (servers, racks, kw) == (4, 2, pytest.approx(57.2))  # 2 per rack
    assert bench.servers_and_racks(0, 1, 1, 1) == (0, 0, 0.0)
    assert bench.servers_and_racks(3 * 31_106.28, 31_106.28, 10.2, 40).servers == 3  # exact fit


@given(st.floats(0, 1e7), st.floats(100, 1e5), st.floats(1, 20), st.floats(20, 140))
def test_servers_and_racks_cover_demand_within_rack_power(demand: float, tps: float,
                                                          kw: float, rack: float) -> None:
    servers, racks, provisioned = bench.servers_and_racks(demand, tps, kw, rack)
    assert servers * tps >= demand * (1 - 1e-9)
    assert provisioned <= racks * rack + 1e-9
    assert servers <= racks * math.floor(rack / kw + 1e-9)


def test_rack_claim_holds_only_when_all_four_conditions_do() -> None:
    check = bench.rack_claim_check(300_000, 31_106.28, 10.2, 10.2, 40)
    assert check.verdict == "holds"
    assert (check.old.racks, check.new.racks, check.target_racks) == (4, 2, 2)
    assert all(c.ok for c in check.conditions)
    assert [c.key for c in check.conditions] == list(bench.RACK_CONDITIONS)


def test_rack_claim_partly_when_power_grows() -> None:
    check = bench.rack_claim_check(300_000, 31_106.28, 10.2, 14.3, 40)
    status = {c.key: c.ok for c in check.conditions}
    assert status == {"workload": True, "power": False, "demand": True, "bottleneck": True}
    power = check.conditions[1].values
    assert (power["per_rack_old"], power["per_rack_new"]) == (3, 2)
    assert power["tokens_per_kw_gain"] == pytest.approx(3 / (14.3 / 10.2))
    assert check.verdict == "partly"


def test_rack_claim_fails_for_small_demand_one_box_either_way() -> None:
    # A school's ~750 tokens/s: one old server, one new server, one rack either way.
    check = bench.rack_claim_check(752, 31_106.28, 10.2, 10.2, 40)
    assert (check.old.servers, check.new.servers, check.old.racks, check.new.racks) == (
        1, 1, 1, 1)
    assert {c.key: c.ok for c in check.conditions}["demand"] is False
    assert check.verdict == "fails"


def test_rack_claim_workload_and_bottleneck_conditions() -> None:
    slow = bench.rack_claim_check(300_000, 31_106.28, 10.2, 10.2, 40, workload_speedup=1.5)
    assert not slow.conditions[0].ok and slow.effective_speedup == pytest.approx(1.5)
    assert slow.new.servers == 7 and slow.verdict == "partly"
    fed = bench.rack_claim_check(300_000, 31_106.28, 10.2, 10.2, 40,
                                feed_limit_tokens_per_s_per_server=50_000)
    assert not fed.conditions[3].ok
    assert fed.effective_speedup == pytest.approx(50_000 / 31_106.28)


# -- bad inputs -------------------------------------------------------------------------------

MLPERF_RECORD = {"system": "s", "accelerator": "X", "total_accel": 8, "result": 1.0,
                 "precision": "FP8"}


def result(**changes: object) -> bench.BenchmarkResult:
    base = {"system": "s", "accelerator": "X", "accelerators": 8, "tokens_per_s": 1.0,
            "precision": "FP8"}
    return bench.BenchmarkResult(**{**base, **changes})  # type: ignore[arg-type]


def without(key: str, **changes: object) -> dict[str, object]:
    return {k: v for k, v in {**MLPERF_RECORD, **changes}.items() if k != key}


def racks(**changes: object) -> bench.RackClaimCheck:
    return bench.rack_claim_check(300_000, 31_106.28, 10.2, 10.2, 40, **changes)  # type: ignore[arg-type]


BAD_INPUTS = [
    # (call, field, rule): every entry point, once per kind of error
    (lambda: bench.BenchmarkResult.from_record(without("system")), "system", "required"),
    (lambda: bench.BenchmarkResult.from_record(without("result")), "result", "required"),
    (lambda: bench.BenchmarkResult.from_record(without("", result=math.nan)), "result",
     "required"),
    (lambda: bench.BenchmarkResult.from_record(without("total_accel")), "total_accel",
     "required"),
    (lambda: bench.BenchmarkResult.from_record(without("", precision="")), "precision",
     "required"),
    (lambda: bench.BenchmarkResult.from_record(without("", accelerator="")), "accelerator",
     "required"),
    (lambda: result(tokens_per_s=-1.0), "tokens_per_s", "positive"),
    (lambda: result(accelerators=0), "accelerators", "integer"),
    (lambda: result(precision="FP3"), "precision", "choice"),
    (lambda: result(scenario="Batch"), "scenario", "choice"),
    (lambda: result(division="preview"), "division", "choice"),
    (lambda: result(power_w_system=-5.0), "power_w_system", "positive"),
    (lambda: result(tdp_w_per_accelerator=0.0), "tdp_w_per_accelerator", "positive"),
    (lambda: result(sparsity="yes"), "sparsity", "choice"),
    (lambda: bench.normalize_claim(result(), result(), precision_gain=0.5), "precision_gain",
     "at_least"),
    (lambda: bench.normalize_claim(result(), result(), precision_gain=math.nan),
     "precision_gain", "finite"),
    (lambda: bench.normalize_claim(result(), result(), sparsity_gain=-1), "sparsity_gain",
     "at_least"),
    (lambda: bench.servers_and_racks(1_000, 1_000, 14.3, 10), "server_kw", "at_most"),
    (lambda: bench.servers_and_racks(-1, 1, 1, 1), "demand_tokens_per_s", "non_negative"),
    (lambda: bench.servers_and_racks(1, 0, 1, 1), "tokens_per_s_per_server", "positive"),
    (lambda: bench.servers_and_racks(1, 1, 0, 1), "server_kw", "positive"),
    (lambda: bench.servers_and_racks(1, 1, 1, math.inf), "rack_kw", "finite"),
    (lambda: racks(claimed_speedup=0.5), "claimed_speedup", "at_least"),
    (lambda: racks(workload_speedup=0), "workload_speedup", "positive"),
    (lambda: racks(feed_limit_tokens_per_s_per_server=-1), "feed_limit_tokens_per_s_per_server",
     "positive"),
    (lambda: racks(tolerance=1.0), "tolerance", "fraction"),
]


@pytest.mark.parametrize(("call", "field", "rule"), BAD_INPUTS,
                         ids=[f"{row[1]}-{row[2]}-{i}" for i, row in enumerate(BAD_INPUTS)])
def test_bad_input_raises_a_value_error_naming_the_field_and_rule(
        call: object, field: str, rule: str) -> None:
    with pytest.raises(InputError) as err:
        call()  # type: ignore[operator]
    assert isinstance(err.value, ValueError) and field in str(err.value)
    assert (err.value.field, err.value.rule) == (field, rule)
