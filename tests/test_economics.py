"""labkit.economics: the owned-cluster cost model and the API break-even (shared cases 1 and 3)."""

from __future__ import annotations

import math
from dataclasses import fields, replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from labkit import economics as econ
from labkit.data.economics import scenario_from_defaults
from labkit.validate import InputError

# Shared teaching defaults (shared/cases/economics.md; reference §9).
FX = 1_400.0                                   # KRW per USD [A]
SERVER_USD = 300_000.0                         # 8xH100 server [A]
ENERGY = ((3 * 123.3 + 5 * 86.5 + 4 * 109.3) / 12 + 9.0 + 5.0) * 1.127  # KEPCO 교육용(갑) 고압A I
BASE_ALL_IN = 5_550 * 1.127                    # KRW per kW-month, x (VAT 10% + fund 2.7%)
MLPERF_H100_SERVER = 31_106.28                 # tokens/s, 8xH100, MLPerf v5.0 Server
TPS_GPU = MLPERF_H100_SERVER / 8
MONTH_30_DAYS_S = 2_592_000.0

MONEY = 0.005   # ±0.5 % (relative)
RATIO = 0.01    # ±0.01 (absolute)


def case1_cluster(**overrides: float) -> econ.OwnedCluster:
    params = dict(
        max_it_power_kw=10.2, idle_power_fraction=0.3, pue=1.5,
        energy_price_krw_per_kwh=ENERGY, base_charge_krw_per_kw_month=BASE_ALL_IN,
        staff_krw_per_year=0.2 * 60_000_000, maintenance_fraction_per_year=0.05,
        facility_krw_per_year=40_000_000 / 10, depreciation_years=4,
    )
    params.update(overrides)
    return econ.OwnedCluster(econ.usd_to_krw(SERVER_USD, FX), 8, **params)  # type: ignore[arg-type]


def test_all_in_energy_rate_matches_case_defaults() -> None:
    assert ENERGY == pytest.approx(132.197, rel=MONEY)


# -- case 1 -----------------------------------------------------------------------------------

def test_economics_case1_owned_server_cost_per_gpu_hour() -> None:
    c = case1_cluster()
    assert c.capex_krw == 420_000_000
    assert c.peak_facility_kw == pytest.approx(15.3)
    assert c.base_charge_krw_per_year == pytest.approx(1_148_390, rel=MONEY)
    assert c.facility_power_kw(0.4) == pytest.approx(8.874)
    assert c.energy_kwh_per_year(1.0) == pytest.approx(134_028)
    assert c.energy_kwh_per_year(0.4) == pytest.approx(77_736, abs=1)
    full, forty = c.annual_cost_breakdown(1.0), c.annual_cost_breakdown(0.4)
    assert full.energy_krw == pytest.approx(17_718_113, rel=MONEY)
    assert forty.energy_krw == pytest.approx(10_276_505, rel=MONEY)
    assert full.capital_krw + full.staff_krw + full.maintenance_krw + full.facility_krw == (
        pytest.approx(142_000_000))
    assert c.annual_cost_krw(1.0) == pytest.approx(160_866_503, rel=MONEY)
    assert c.annual_cost_krw(0.4) == pytest.approx(153_424_896, rel=MONEY)
    assert c.cost_per_gpu_hour(1.0) == pytest.approx(2_295, rel=MONEY)
    assert c.cost_per_gpu_hour(0.4) == pytest.approx(5_473, rel=MONEY)
    assert c.cost_per_gpu_hour(1.0) / FX == pytest.approx(1.64, abs=RATIO)
    assert c.cost_per_gpu_hour(0.4) / FX == pytest.approx(3.91, abs=RATIO)
    # "the total annual cost falls only 4.6 %, but the cost per used hour rises 2.4x"
    assert 1 - c.annual_cost_krw(0.4) / c.annual_cost_krw(1.0) == pytest.approx(0.046, abs=0.001)
    assert c.cost_per_gpu_hour(0.4) / c.cost_per_gpu_hour(1.0) == pytest.approx(2.4, abs=0.02)


def test_economics_case1_cost_shares_at_full_utilization() -> None:
    shares = case1_cluster().annual_cost_breakdown(1.0).shares()
    assert shares["capital"] == pytest.approx(0.653, abs=0.0005)
    assert shares["maintenance"] == pytest.approx(0.131, abs=0.0005)
    assert shares["energy"] + shares["base_charge"] == pytest.approx(0.117, abs=0.0005)
    assert shares["staff"] == pytest.approx(0.075, abs=0.0005)
    assert shares["facility"] == pytest.approx(0.025, abs=0.0005)
    assert sum(shares.values()) == pytest.approx(1.0)


def test_economics_case1_cost_of_capital_variant() -> None:
    assert econ.capital_recovery_factor(0.05, 4) == pytest.approx(0.28201, abs=5e-6)
    c = case1_cluster(cost_of_capital=0.05)
    assert c.capital_krw_per_year == pytest.approx(118_444_970, rel=MONEY)
    assert c.capital_krw_per_year / 105_000_000 - 1 == pytest.approx(0.128, abs=0.001)
    assert c.cost_per_gpu_hour(1.0) == pytest.approx(2_487, rel=MONEY)
    assert c.cost_per_gpu_hour(1.0) / FX == pytest.approx(1.78, abs=RATIO)


# -- case 3 -----------------------------------------------------------------------------------

def test_economics_case3_fixed_and_marginal_cost() -> None:
    c = case1_cluster()
    assert c.annual_cost_krw(0.0) == pytest.approx(148_463_824, rel=MONEY)
    assert econ.fixed_cost_krw_per_month(c) == pytest.approx(12_371_985, rel=MONEY)
    assert c.tokens_per_year(TPS_GPU, 1.0) / 1e6 == pytest.approx(980_968, rel=MONEY)
    assert econ.marginal_cost_krw_per_token(c, TPS_GPU) * 1e6 == pytest.approx(12.64, rel=MONEY)
    capacity = econ.monthly_capacity_tokens(c, TPS_GPU, seconds_per_month=MONTH_30_DAYS_S)
    assert capacity / 1e6 == pytest.approx(80_627, rel=MONEY)


@pytest.mark.parametrize(
    ("price_usd", "n_star_m", "share"),
    [(0.60, 14_954, 0.185),    # Llama-3.3-70B on Groq, 3:1 blend ~0.64
     (0.155, 60_541, 0.751),   # Llama 3.3 70B on DeepInfra, 3:1 blend
     (3.44, 2_576, 0.032)],    # GPT-5, 3:1 blend
)
def test_economics_case3_break_even_tokens_per_month(
    price_usd: float, n_star_m: float, share: float
) -> None:
    c = case1_cluster()
    price_krw = econ.usd_to_krw(price_usd, FX)
    n_star = econ.break_even_tokens_per_month(c, price_krw, TPS_GPU)
    assert n_star / 1e6 == pytest.approx(n_star_m, rel=MONEY)
    # The case's share uses a 30-day month of capacity (2,592,000 s).
    capacity = econ.monthly_capacity_tokens(c, TPS_GPU, seconds_per_month=MONTH_30_DAYS_S)
    assert n_star / capacity == pytest.approx(share, abs=RATIO)
    # owned cost equals the API at N*
    owned = econ.owned_cost_krw_per_month(c, n_star, TPS_GPU)
    assert owned == pytest.approx(econ.api_cost_krw(0, n_star, 0, price_krw), rel=1e-9)


@pytest.mark.parametrize(("derate", "needed"), [(1.0, 0.185), (0.5, 0.371), (0.3, 0.618),
                                                (0.105, 1.77)])
def test_economics_case3_capacity_check_at_derated_throughput(derate: float, needed: float) -> None:
    # As the case computes it: N* at MLPerf throughput over the derated 30-day capacity.
    c = case1_cluster()
    n_star = econ.break_even_tokens_per_month(c, econ.usd_to_krw(0.60, FX), TPS_GPU)
    capacity = econ.monthly_capacity_tokens(c, TPS_GPU, derate, seconds_per_month=MONTH_30_DAYS_S)
    assert n_star / capacity == pytest.approx(needed, abs=RATIO)


def test_break_even_utilization_with_derate_includes_extra_energy_per_token() -> None:
    # The consistent model: a derated GPU also burns more energy per token, so N* itself rises
    # a little and the utilization needed is a bit above the case's simple N*/capacity.
    c = case1_cluster()
    price = econ.usd_to_krw(0.60, FX)
    u_full = econ.break_even_utilization(c, price, TPS_GPU)
    assert u_full == pytest.approx(0.183, abs=0.001)   # a month = a twelfth of a year
    u_03 = econ.break_even_utilization(c, price, TPS_GPU, derate=0.3)
    assert u_03 > u_full / 0.3
    assert econ.break_even_utilization(c, price, TPS_GPU, derate=0.105) > 1  # never in practice


def test_economics_case3_school_demand() -> None:
    demand = econ.monthly_demand_tokens(1_000, 50, 1_300, 30)
    assert demand == 1_950_000_000
    price = econ.usd_to_krw(0.60, FX)
    api = econ.api_cost_krw(0, demand, 0, price)
    assert api == pytest.approx(1_638_000, rel=MONEY)
    c = case1_cluster()
    assert econ.fixed_cost_krw_per_month(c) / api == pytest.approx(7.6, abs=0.05)  # "~7.6x"
    assert econ.owned_cost_krw_per_month(c, demand, TPS_GPU) / api == pytest.approx(7.6, abs=0.05)


def test_blended_price_three_to_one() -> None:
    assert econ.blended_price(0.59, 0.79) == pytest.approx(0.64, abs=0.001)
    assert econ.blended_price(0.10, 0.32) == pytest.approx(0.155, abs=0.0001)
    assert econ.blended_price(1.25, 10.0) == pytest.approx(3.44, abs=0.005)
    assert econ.blended_price(1.0, 5.0, input_per_output=0) == 5.0


def test_api_cost_prices_input_and_output_separately() -> None:
    # 3M input at 0.59 USD/M and 1M output at 0.79 USD/M, in KRW
    cost = econ.api_cost_krw(3e6, 1e6, 0.59 * FX, 0.79 * FX)
    assert cost == pytest.approx((3 * 0.59 + 0.79) * FX)


def test_rent_vs_own_break_even_utilization() -> None:
    c = case1_cluster()
    u = econ.rent_vs_own_break_even_utilization(c, econ.usd_to_krw(2.99, FX))
    assert u == pytest.approx(0.528, abs=0.001)
    assert c.cost_per_gpu_hour(u) == pytest.approx(2.99 * FX, rel=1e-9)
    assert econ.rent_vs_own_break_even_utilization(c, 0.0) == math.inf
    assert econ.rent_vs_own_break_even_utilization(c, econ.usd_to_krw(1.0, FX)) > 1


def test_rent_cost_is_gpu_hours_times_price() -> None:
    gpu_hours = 1e9 / (TPS_GPU * 3_600)
    assert econ.rent_cost_krw(1e9, 4_186, TPS_GPU) == pytest.approx(gpu_hours * 4_186)
    assert econ.rent_cost_krw(1e9, 4_186, TPS_GPU, derate=0.5) == pytest.approx(
        2 * gpu_hours * 4_186)


def test_cost_per_million_tokens_at_full_utilization() -> None:
    c = case1_cluster()
    assert c.cost_per_million_tokens(TPS_GPU, 1.0) == pytest.approx(
        160_866_503 / 980_968, rel=MONEY)
    assert c.cost_per_million_tokens(TPS_GPU, 1.0, derate=0.5) == pytest.approx(
        2 * c.cost_per_million_tokens(TPS_GPU, 1.0))


def test_break_even_is_infinite_when_api_is_cheaper_than_energy() -> None:
    c = case1_cluster()
    assert econ.break_even_tokens_per_month(c, 10.0, TPS_GPU) == math.inf
    assert econ.break_even_utilization(c, 0.0, TPS_GPU) == math.inf


def test_breakdown_with_electricity_swaps_only_those_lines() -> None:
    b = case1_cluster().annual_cost_breakdown(1.0)
    swapped = b.with_electricity(1.0, 2.0)
    assert swapped.energy_krw == 1.0 and swapped.base_charge_krw == 2.0
    assert swapped.capital_krw == b.capital_krw and swapped.staff_krw == b.staff_krw
    assert list(b.as_dict()) == [line.value for line in econ.CostLine]
    table = b.table()
    assert table["krw_per_year"].sum() == pytest.approx(b.total_krw)
    assert table["share"].sum() == pytest.approx(1.0)


def test_servers_scale_capital_power_and_gpus() -> None:
    one, two = case1_cluster(), case1_cluster(servers=2)
    assert two.gpus == 16
    assert two.capital_krw_per_year == pytest.approx(2 * one.capital_krw_per_year)
    assert two.peak_facility_kw == pytest.approx(2 * one.peak_facility_kw)
    assert two.staff_krw_per_year == one.staff_krw_per_year


# -- properties -------------------------------------------------------------------------------

@given(st.floats(0.01, 1.0), st.floats(0.01, 1.0))
def test_cost_per_used_hour_falls_monotonically_with_utilization(u1: float, u2: float) -> None:
    c = case1_cluster()
    low, high = sorted((u1, u2))
    assert c.cost_per_gpu_hour(high) <= c.cost_per_gpu_hour(low) * (1 + 1e-12)


@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_annual_cost_never_falls_with_utilization(u1: float, u2: float) -> None:
    c = case1_cluster()
    low, high = sorted((u1, u2))
    assert c.annual_cost_krw(high) >= c.annual_cost_krw(low)


@given(st.floats(20.0, 20_000.0), st.floats(20.0, 20_000.0), st.floats(0.1, 1.0))
def test_break_even_tokens_rise_as_api_price_falls(p1: float, p2: float, derate: float) -> None:
    c = case1_cluster()
    cheap, dear = sorted((p1, p2))
    assert (econ.break_even_tokens_per_month(c, cheap, TPS_GPU, derate)
            >= econ.break_even_tokens_per_month(c, dear, TPS_GPU, derate))


@given(st.floats(0.0, 1.0), st.floats(1.0, 3.0), st.floats(0.0, 1.0))
def test_breakdown_lines_sum_to_total(u: float, pue: float, idle: float) -> None:
    c = case1_cluster(pue=pue, idle_power_fraction=idle)
    b = c.annual_cost_breakdown(u)
    assert sum(b.as_dict().values()) == pytest.approx(c.annual_cost_krw(u))


# -- bad inputs -------------------------------------------------------------------------------

def owned(**changes: object) -> econ.OwnedCluster:
    args = {"server_capex_krw": 420e6, "gpus_per_server": 8, "max_it_power_kw": 10.2,
            "idle_power_fraction": 0.3, "pue": 1.5, "energy_price_krw_per_kwh": 132.0}
    return econ.OwnedCluster(**{**args, **changes})  # type: ignore[arg-type]


C = case1_cluster
BAD_INPUTS = [
    # (call, field, rule): the cluster's fields, then every function, once per kind of error
    (lambda: owned(server_capex_krw=-1), "server_capex_krw", "non_negative"),
    (lambda: owned(gpus_per_server=0), "gpus_per_server", "integer"),
    (lambda: owned(gpus_per_server=2.5), "gpus_per_server", "integer"),
    (lambda: owned(servers=0), "servers", "integer"),
    (lambda: owned(depreciation_years=0), "depreciation_years", "positive"),
    (lambda: owned(cost_of_capital=-0.01), "cost_of_capital", "fraction"),
    (lambda: owned(cost_of_capital=1.5), "cost_of_capital", "fraction"),
    (lambda: owned(max_it_power_kw=0), "max_it_power_kw", "positive"),
    (lambda: owned(idle_power_fraction=1.2), "idle_power_fraction", "fraction"),
    (lambda: owned(pue=0.9), "pue", "at_least"),
    (lambda: owned(pue=math.nan), "pue", "finite"),
    (lambda: owned(pue="1.5"), "pue", "number"),
    (lambda: owned(energy_price_krw_per_kwh=-5), "energy_price_krw_per_kwh", "non_negative"),
    (lambda: owned(base_charge_krw_per_kw_month=-1), "base_charge_krw_per_kw_month",
     "non_negative"),
    (lambda: owned(staff_krw_per_year=math.inf), "staff_krw_per_year", "finite"),
    (lambda: owned(maintenance_fraction_per_year=2), "maintenance_fraction_per_year", "fraction"),
    (lambda: owned(facility_krw_per_year=-1), "facility_krw_per_year", "non_negative"),
    (lambda: C().cost_per_gpu_hour(0), "utilization", "fraction"),
    (lambda: C().cost_per_gpu_hour(1.01), "utilization", "fraction"),
    (lambda: C().cost_per_gpu_hour(None), "utilization", "number"),  # type: ignore[arg-type]
    (lambda: C().annual_cost_krw(-0.1), "utilization", "fraction"),
    (lambda: C().annual_cost_krw(math.nan), "utilization", "finite"),
    (lambda: C().cost_per_million_tokens(TPS_GPU, 0.0), "utilization", "fraction"),
    (lambda: econ.capital_recovery_factor(0.05, 0), "depreciation_years", "positive"),
    (lambda: econ.break_even_tokens_per_month(C(), -1, TPS_GPU), "api_price_krw_per_m",
     "non_negative"),
    (lambda: econ.break_even_tokens_per_month(C(), 840, 0), "tokens_per_s_per_gpu", "positive"),
    (lambda: econ.break_even_tokens_per_month(C(), 840, TPS_GPU, 0), "derate", "fraction"),
    (lambda: econ.break_even_tokens_per_month(C(), 840, TPS_GPU, 1.5), "derate", "fraction"),
    (lambda: econ.api_cost_krw(-1, 0, 1, 1), "tokens_in", "non_negative"),
    (lambda: econ.api_cost_krw(1, 1, 1, -1), "price_out_krw_per_m", "non_negative"),
    (lambda: econ.usd_to_krw(-1, FX), "amount_usd", "non_negative"),
    (lambda: econ.usd_to_krw(1, 0), "fx_krw_per_usd", "positive"),
    (lambda: econ.rent_vs_own_break_even_utilization(C(), -1), "rent_krw_per_gpu_hour",
     "non_negative"),
    (lambda: econ.rent_cost_krw(1, 1, TPS_GPU, 0), "derate", "fraction"),
    (lambda: econ.monthly_demand_tokens(-1, 1, 1), "students", "non_negative"),
    (lambda: econ.monthly_demand_tokens(1, 1, 1, 40), "days_per_month", "at_most"),
    (lambda: econ.owned_cost_krw_per_month(C(), 1e15, TPS_GPU), "tokens_per_month", "at_most"),
    (lambda: econ.monthly_capacity_tokens(C(), TPS_GPU, 1, 0), "seconds_per_month", "positive"),
    (lambda: econ.blended_price(1, 1, -3), "input_per_output", "non_negative"),
    (lambda: econ.sensitivity(scenario_from_defaults(), {"colour": (1, 2)}), "parameter",
     "choice"),
    (lambda: econ.sensitivity(scenario_from_defaults(), {"pue": (0.5, 2.0)}), "pue",
     "at_least"),
    (lambda: replace(scenario_from_defaults(), fx_krw_per_usd=0), "fx_krw_per_usd", "positive"),
    (lambda: replace(scenario_from_defaults(), derate=0), "derate", "fraction"),
    (lambda: replace(scenario_from_defaults(), owned="a cluster"), "owned", "other"),  # type: ignore[arg-type, dict-item]  # bad input, on purpose
    (lambda: econ.BreakEvenScenario.from_inputs(fx_krw_per_usd=1_400), "server_capex_usd",
     "required"),
    (lambda: scenario_from_defaults().input("colour"), "parameter", "choice"),
]


@pytest.mark.parametrize(("call", "field", "rule"), BAD_INPUTS,
                         ids=[f"{row[1]}-{row[2]}-{i}" for i, row in enumerate(BAD_INPUTS)])
def test_bad_input_raises_a_value_error_naming_the_field_and_rule(
        call: object, field: str, rule: str) -> None:
    with pytest.raises(InputError) as err:
        call()  # type: ignore[operator]
    assert isinstance(err.value, ValueError)
    assert (err.value.field, err.value.rule) == (field, rule)


# -- sensitivity ------------------------------------------------------------------------------

def test_sensitivity_orders_inputs_by_swing() -> None:
    base = scenario_from_defaults()
    table = econ.sensitivity(base, {"pue": (1.1, 2.0), "server_capex_usd": (200_000, 450_000),
                                    "api_price_usd_per_m": (0.3, 1.2)})
    assert table.attrs["base"] == pytest.approx(base.break_even_tokens_per_month())
    assert table.loc[0, "parameter"] == "api_price_usd_per_m"
    assert table["swing"].is_monotonic_decreasing
    cheap = replace(base, api_price_usd_per_m=0.3).break_even_tokens_per_month()
    assert table.set_index("parameter").loc["api_price_usd_per_m", "result_low"] == cheap


def test_sensitivity_infinite_end_sorts_first_and_bad_names_fail() -> None:
    base = scenario_from_defaults()
    table = econ.sensitivity(base, {"pue": (1.1, 2.0), "api_price_usd_per_m": (0.001, 1.0)})
    assert table.loc[0, "parameter"] == "api_price_usd_per_m"
    assert table.loc[0, "swing"] == math.inf


def test_break_even_scenario_converts_usd_once() -> None:
    s = scenario_from_defaults()
    assert s.cluster().server_capex_krw == 300_000 * 1_400
    assert s.api_price_krw_per_m == pytest.approx(840)


def test_scenario_inputs_are_the_cluster_fields_plus_the_lesson_inputs() -> None:
    s = scenario_from_defaults()
    assert set(econ.SCENARIO_INPUTS) == set(econ.LESSON_INPUTS) | {
        f.name for f in fields(econ.OwnedCluster)} - {"server_capex_krw"}
    assert s.input("pue") == s.cluster().pue and s.input("derate") == s.derate
    # a cluster input varies the cluster; fx re-prices the USD server and the USD API price
    assert s.with_input("pue", 1.2).cluster().pue == 1.2
    dear = s.with_input("fx_krw_per_usd", 1_500)
    assert dear.cluster().server_capex_krw == 300_000 * 1_500
    assert dear.api_price_krw_per_m == pytest.approx(0.6 * 1_500)
    same = econ.BreakEvenScenario.from_inputs(**{n: s.input(n) for n in econ.SCENARIO_INPUTS})
    assert same == s
