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


def _lesson(**changes: float) -> dict[str, float]:
    """Lesson 05's own inputs (case 1), for BreakEvenScenario.from_inputs."""
    lesson = {"server_capex_usd": SERVER_USD, "fx_krw_per_usd": FX, "api_price_usd_per_m": 0.6,
              "tokens_per_s_per_gpu": TPS_GPU, "derate": 1.0}
    return {**lesson, **changes}


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
    # every other validated field by name, once
    (lambda: econ.api_cost_krw(0, -1, 1, 1), "tokens_out", "non_negative"),
    (lambda: econ.api_cost_krw(0, 0, -1, 1), "price_in_krw_per_m", "non_negative"),
    (lambda: econ.blended_price(-1, 1), "price_in", "non_negative"),
    (lambda: econ.blended_price(1, -1), "price_out", "non_negative"),
    (lambda: econ.monthly_demand_tokens(1, -1, 1), "requests_per_day", "non_negative"),
    (lambda: econ.monthly_demand_tokens(1, 1, -1), "tokens_per_request", "non_negative"),
    (lambda: econ.monthly_demand_tokens(1, 1, 1, -1), "days_per_month", "non_negative"),
    (lambda: econ.monthly_demand_tokens(1, 1, 1, 31.5), "days_per_month", "at_most"),
    (lambda: econ.monthly_capacity_tokens(C(), 0), "tokens_per_s_per_gpu", "positive"),
    (lambda: econ.monthly_capacity_tokens(C(), TPS_GPU, 0), "derate", "fraction"),
    (lambda: econ.monthly_capacity_tokens(C(), TPS_GPU, 1, 31 * 86_400 + 1), "seconds_per_month",
     "at_most"),
    (lambda: econ.owned_cost_krw_per_month(C(), -1, TPS_GPU), "tokens_per_month", "non_negative"),
    (lambda: econ.rent_cost_krw(-1, 1, TPS_GPU), "tokens", "non_negative"),
    (lambda: econ.rent_cost_krw(1, -1, TPS_GPU), "rent_krw_per_gpu_hour", "non_negative"),
    (lambda: econ.rent_cost_krw(1, 1, 0), "tokens_per_s_per_gpu", "positive"),
    (lambda: econ.capital_recovery_factor(-0.1, 4), "cost_of_capital", "fraction"),
    (lambda: econ.CostBreakdown(-1, 0, 0, 0, 0, 0), "capital_krw", "non_negative"),
    (lambda: C().tokens_per_year(TPS_GPU, -0.1), "utilization", "fraction"),
    (lambda: replace(scenario_from_defaults(), server_capex_usd=-1), "server_capex_usd",
     "non_negative"),
    (lambda: replace(scenario_from_defaults(), api_price_usd_per_m=-1), "api_price_usd_per_m",
     "non_negative"),
    (lambda: replace(scenario_from_defaults(), tokens_per_s_per_gpu=0), "tokens_per_s_per_gpu",
     "positive"),
    (lambda: econ.BreakEvenScenario.from_inputs(colour=1), "parameter", "choice"),
    (lambda: econ.BreakEvenScenario.from_inputs(**_lesson(server_capex_usd=-1)),
     "server_capex_usd", "non_negative"),
    (lambda: econ.BreakEvenScenario.from_inputs(**_lesson(fx_krw_per_usd=0)), "fx_krw_per_usd",
     "positive"),
    (lambda: scenario_from_defaults().with_input("colour", 1), "parameter", "choice"),
    (lambda: econ.sensitivity(scenario_from_defaults(), {"pue": (math.nan, 2.0)}), "pue",
     "finite"),
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


MESSAGES = [
    # (call, value, limit, the message): the error's details, not only its field
    (lambda: econ.monthly_demand_tokens(1, 1, 1, 31.5), 31.5, 31.0,
     "days_per_month must be <= 31 days (31), got 31.5"),
    (lambda: econ.monthly_capacity_tokens(C(), TPS_GPU, 1, 2_678_401), 2_678_401.0, 2_678_400.0,
     "seconds_per_month must be <= 31 days (2.6784e+06), got 2678401.0"),
    (lambda: econ.owned_cost_krw_per_month(C(), 1e15, TPS_GPU), 1e15,
     TPS_GPU * 8 * econ.SECONDS_PER_MONTH,
     "tokens_per_month must be <= monthly capacity (8.17473e+10), got 1000000000000000.0"),
    (lambda: replace(scenario_from_defaults(), owned="a cluster"), "a cluster", None,  # type: ignore[arg-type, dict-item]  # bad input, on purpose
     "owned must be an OwnedCluster"),
    (lambda: econ.BreakEvenScenario.from_inputs(fx_krw_per_usd=1_400), None, None,
     "server_capex_usd is required"),
]


@pytest.mark.parametrize(("call", "value", "limit", "message"), MESSAGES)
def test_bad_input_names_its_value_limit_and_message(
        call: object, value: object, limit: object, message: str) -> None:
    with pytest.raises(InputError) as err:
        call()  # type: ignore[operator]
    assert err.value.value == value and str(err.value) == message
    assert err.value.limit == pytest.approx(limit) if limit is not None else err.value.limit is None


# -- edges the mutation run found untested (make mutation) --------------------------------------
# the energy of one more token at full utilization, by hand: busy minus idle power of one
# server, 10.2 kW x (1 - 0.3) x PUE 1.5, for a year, over the tokens of that year
M_HAND = 10.2 * 0.7 * 1.5 * 8_760 * ENERGY / (TPS_GPU * 8 * 31_536_000)  # ~12.64e-6 KRW


def test_monthly_sizes_at_their_bounds_and_defaults() -> None:
    assert econ.monthly_demand_tokens(1, 1, 1) == 30  # 30 days by default
    assert econ.monthly_demand_tokens(1, 1, 1, 31) == 31  # 31 days allowed
    month_31 = econ.monthly_capacity_tokens(C(), 1.0, seconds_per_month=31 * 86_400)
    assert month_31 == 8 * 31 * 86_400  # 8 GPUs at 1 token/s
    # a derated cluster makes less: derate 0.5 halves the capacity a month may use
    half_cap = econ.monthly_capacity_tokens(C(), TPS_GPU, 0.5)
    with pytest.raises(InputError):
        econ.owned_cost_krw_per_month(C(), half_cap * 1.01, TPS_GPU, 0.5)


def test_owned_cost_at_a_derate_uses_the_derated_energy_per_token() -> None:
    c = C()
    n = 1e9
    owned = econ.owned_cost_krw_per_month(c, n, TPS_GPU, 0.5)
    assert owned - econ.fixed_cost_krw_per_month(c) == pytest.approx(n * M_HAND / 0.5, rel=1e-9)


def test_break_even_at_free_energy_and_a_free_api_is_never() -> None:
    free = C(energy_price_krw_per_kwh=0)
    # price 0 = marginal cost 0: owning never breaks even (not a division by zero)
    assert econ.break_even_tokens_per_month(free, 0.0, TPS_GPU) == math.inf
    # rent 0 against no energy: renting costs no more than the owned energy, never
    assert econ.rent_vs_own_break_even_utilization(free, 0.0) == math.inf


def test_rent_vs_own_with_a_small_denominator() -> None:
    # no energy, staff, maintenance, base charge or facility: the fixed cost is the capital,
    # 420,000,000 / 4 = 105,000,000 a year; rent x 8 GPUs x 8,760 h = 0.5 KRW a year
    bare = owned(energy_price_krw_per_kwh=0)
    u = econ.rent_vs_own_break_even_utilization(bare, 0.5 / 70_080)
    assert u == pytest.approx(105_000_000 / 0.5, rel=1e-9)


def test_breakdown_of_one_and_zero_krw() -> None:
    one = econ.CostBreakdown(1, 0, 0, 0, 0, 0)
    assert one.shares() == {"capital": 1.0, "energy": 0.0, "base_charge": 0.0, "staff": 0.0,
                            "maintenance": 0.0, "facility": 0.0}
    assert list(one.table().columns) == ["line", "krw_per_year", "share"]
    assert list(one.table()["share"]) == [1.0, 0, 0, 0, 0, 0]
    zero = econ.CostBreakdown(0, 0, 0, 0, 0, 0)
    with pytest.raises(ValueError, match="^the breakdown totals 0 KRW; shares are undefined$"):
        zero.shares()
    assert zero.table()["share"].isna().all()


def test_owned_cluster_stores_the_validated_values_and_nothing_else() -> None:
    # ints for the money and power fields become floats, whole floats for counts become ints
    given: dict[str, object] = dict(
        servers=2.0, depreciation_years=4, cost_of_capital=0, max_it_power_kw=10,
        idle_power_fraction=0, pue=1, energy_price_krw_per_kwh=132,
        base_charge_krw_per_kw_month=0, staff_krw_per_year=0, maintenance_fraction_per_year=0,
        facility_krw_per_year=0)
    c = econ.OwnedCluster(420_000_000, 8.0, **given)  # type: ignore[arg-type]
    assert set(vars(c)) == {f.name for f in fields(econ.OwnedCluster)} - {"_"}
    for f in fields(econ.OwnedCluster):
        if f.name != "_":
            want = int if f.name in ("gpus_per_server", "servers") else float
            assert type(getattr(c, f.name)) is want, f.name
    assert owned(gpus_per_server=1).gpus == 1  # a one-GPU server


def test_power_and_tokens_by_hand() -> None:
    two = C(servers=2)
    assert two.it_power_kw(0.5) == pytest.approx(10.2 * 2 * (0.3 + 0.7 * 0.5))  # 13.26 kW
    c = C()
    assert c.tokens_per_year(TPS_GPU, 0.0) == 0.0
    assert c.tokens_per_year(TPS_GPU, 0.5) == pytest.approx(TPS_GPU * 8 * 31_536_000 * 0.5)
    # at half utilization: 142,000,000 fixed lines + 15.3 kW x base x 12 + energy of
    # 10.2 x (0.3 + 0.7 x 0.5) x 1.5 x 8,760 = 87,118.2 kWh
    annual = 142_000_000 + 15.3 * BASE_ALL_IN * 12 + 87_118.2 * ENERGY
    assert c.cost_per_million_tokens(TPS_GPU, 0.5) == pytest.approx(
        annual / (TPS_GPU * 8 * 31_536_000 * 0.5) * 1e6, rel=1e-9)
    # per calendar GPU-hour: 160,866,503 / (8 x 8,760) = 2,295.5 at u = 1
    assert c.cost_per_calendar_gpu_hour(1.0) == pytest.approx(160_866_503 / 70_080, rel=MONEY)
    assert c.cost_per_calendar_gpu_hour(0.4) == pytest.approx(153_424_896 / 70_080, rel=MONEY)


def test_scenario_break_even_with_a_derate_and_its_utilization() -> None:
    s = econ.BreakEvenScenario.from_inputs(**_lesson(derate=0.5), **{
        f: getattr(C(), f) for f in econ.CLUSTER_INPUTS})
    f_month = econ.fixed_cost_krw_per_month(s.cluster())
    # N* = F / (P - m / derate), P = 0.6 USD x 1,400 per 1M
    n_star = f_month / (840 / 1e6 - M_HAND / 0.5)
    assert s.break_even_tokens_per_month() == pytest.approx(n_star, rel=1e-9)
    capacity = TPS_GPU * 0.5 * 8 * econ.SECONDS_PER_MONTH
    assert s.break_even_utilization() == pytest.approx(n_star / capacity, rel=1e-9)


def test_sensitivity_table_columns_ties_and_infinite_ends() -> None:
    base = scenario_from_defaults()
    # API prices below the energy per token (~0.009 USD per 1M) at both ends: inf and inf,
    # a swing of 0
    table = econ.sensitivity(base, {"api_price_usd_per_m": (0.001, 0.005),
                                    "pue": (1.1, 2.0)})
    assert list(table.columns) == ["parameter", "low", "high", "result_low", "result_high",
                                   "swing"]
    assert list(table.index) == [0, 1]
    row = table.set_index("parameter").loc["api_price_usd_per_m"]
    assert row["result_low"] == row["result_high"] == math.inf and row["swing"] == 0.0
    pue = table.set_index("parameter").loc["pue"]
    low = replace(base, owned=replace(base.owned, pue=1.1)).break_even_tokens_per_month()
    high = replace(base, owned=replace(base.owned, pue=2.0)).break_even_tokens_per_month()
    assert pue["swing"] == pytest.approx(high - low) and (pue["low"], pue["high"]) == (1.1, 2.0)
    # every input at its own value: all swings 0, kept in the order given (a stable sort)
    names = list(econ.SCENARIO_INPUTS)
    flat = econ.sensitivity(base, {n: (base.input(n), base.input(n)) for n in names})
    assert list(flat["parameter"]) == names
    # ties of two kinds: four inputs whose one end never breaks even (an API below the energy
    # per token, a 0.1 % derate, 1 token/s, 10,000 KRW/kWh) swing inf; the rest swing 0.
    # A stable sort keeps each group in the order given.
    ends = {"api_price_usd_per_m": (0.001, 0.6), "derate": (0.001, 1.0),
            "tokens_per_s_per_gpu": (1.0, TPS_GPU), "energy_price_krw_per_kwh": (132.0, 1e4)}
    mixed = {n: ends.get(n, (base.input(n), base.input(n))) for n in reversed(names)}
    table = econ.sensitivity(base, mixed)
    infinite = [n for n in mixed if n in ends]
    assert list(table["parameter"]) == infinite + [n for n in mixed if n not in ends]
    assert (table["swing"][:4] == math.inf).all() and (table["swing"][4:] == 0).all()
