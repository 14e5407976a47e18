"""labkit.opex: the school room's year through the shared cost model (OwnedCluster)."""

from __future__ import annotations

import math
from dataclasses import fields, replace
from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit import economics, loadprofile, opex
from labkit.data import DataError
from labkit.data.opex import load_opex_defaults, load_servers, smallest_mig_profile
from labkit.data.school import load_school_calendar
from labkit.data.tariff import load_tariff
from labkit.opex import whatif as opex_whatif
from labkit.validate import InputError

GAP = "교육용(갑) 고압A 선택I"
#: The KEPCO table the figures below are worked from, by its effective date (a newer table in
#: data/tariffs/ does not move them).
TABLE = "2026-06-01"


@pytest.fixture(scope="module")
def tariff():  # type: ignore[no-untyped-def]
    return load_tariff(GAP, TABLE)


@pytest.fixture(scope="module")
def calendar() -> loadprofile.SchoolCalendar:
    return load_school_calendar()


@pytest.fixture(scope="module")
def h100() -> opex.ServerSpec:
    return load_servers(1400.0)["8×H100 서버"]


def flat(u: float) -> loadprofile.Usage:
    """Utilization ``u`` at every hour (an always-on share of u, nothing scheduled)."""
    return loadprofile.Usage(0, 0, 0, 24, 0, u)


def case1_design(server: opex.ServerSpec, **kw: object) -> opex.RoomDesign:
    # cases/economics.md case 1: USD 300,000 x 1,400 = 420M KRW, 4-year straight line, 10.2 kW,
    # idle 30 %, PUE 1.5, 0.2 FTE x 60M, maintenance 5 %, facility 40M over 10 years
    args: dict[str, object] = dict(pue=1.5, idle_frac=0.3, staff_fte=0.2,
                                   staff_krw_per_fte_year=60_000_000, maintenance_frac=0.05,
                                   facility_upgrade_krw=40_000_000, facility_years=10,
                                   depreciation_years=4, cost_of_capital=0.0)
    args.update(kw)
    return opex.RoomDesign(replace(server, server_capex_krw=420_000_000), **args)  # type: ignore[arg-type]


# --- shared check case 1 through the cost model ----------------------------------------------

def test_economics_case1_owned_h100_cost_per_gpu_hour(tariff, calendar, h100) -> None:  # type: ignore[no-untyped-def]
    # Case 1 uses a flat all-in energy rate of 132.197 KRW/kWh and a base charge on 15.3 kW;
    # here the electricity lines are 12 KEPCO bills of the same load. Tolerance: money +-0.5 %.
    design = case1_design(h100)
    full = opex.evaluate(design, tariff, calendar, flat(1.0))
    assert full.tco_krw == pytest.approx(160_866_503, rel=0.005)
    assert full.cost_per_used_gpu_h == pytest.approx(2_295, rel=0.005)
    assert full.used_gpu_h == pytest.approx(70_080)
    forty = opex.evaluate(design, tariff, calendar, flat(0.4))
    assert forty.used_gpu_h == pytest.approx(28_032)
    assert forty.tco_krw == pytest.approx(153_424_896, rel=0.005)
    assert forty.cost_per_used_gpu_h == pytest.approx(5_473, rel=0.005)
    # cost shares at 100 %: depreciation 65.3 %, maintenance 13.1 %, electricity 11.7 %,
    # staff 7.5 %, facility 2.5 % (ratios +-0.01)
    shares = full.breakdown.shares()
    assert shares["capital"] == pytest.approx(0.653, abs=0.01)
    assert shares["maintenance"] == pytest.approx(0.131, abs=0.01)
    assert shares["energy"] + shares["base_charge"] == pytest.approx(0.117, abs=0.01)
    assert shares["staff"] == pytest.approx(0.075, abs=0.01)
    assert shares["facility"] == pytest.approx(0.025, abs=0.01)


def test_economics_case1_cost_of_capital_variant(tariff, calendar, h100) -> None:  # type: ignore[no-untyped-def]
    # r = 5 %, n = 4: CRF 0.28201, capital 118,444,970 KRW/yr; per GPU-hour at 100 %: 2,487
    result = opex.evaluate(case1_design(h100, cost_of_capital=0.05), tariff, calendar, flat(1.0))
    assert result.breakdown.capital_krw == pytest.approx(118_444_970, rel=0.005)
    assert result.cost_per_used_gpu_h == pytest.approx(2_487, rel=0.005)


def test_evaluate_matches_owned_cluster_outside_electricity(tariff, calendar, h100) -> None:  # type: ignore[no-untyped-def]
    design = case1_design(h100)
    result = opex.evaluate(design, tariff, calendar, flat(0.4))
    cluster = design.cluster(tariff)
    assert isinstance(cluster, economics.OwnedCluster)
    plain = cluster.annual_cost_breakdown(0.4)
    b = result.breakdown
    for line in ("capital_krw", "staff_krw", "maintenance_krw", "facility_krw"):
        assert getattr(b, line) == getattr(plain, line)
    # the electricity lines are the bills: base x (1 + VAT + fund) + the rest of the amounts due
    assert b.electricity_krw == pytest.approx(result.bills["total_krw"].sum())
    assert b.base_charge_krw == pytest.approx(result.bills["base_krw"].sum() * 1.127)
    # and the flat-rate model agrees within 0.5 % on energy
    assert b.energy_krw == pytest.approx(plain.energy_krw, rel=0.005)


# --- the school year ---------------------------------------------------------------------------

def test_class_hours_scenario_is_17_percent(tariff, calendar, h100) -> None:  # type: ignore[no-untyped-def]
    only = opex.class_hours_scenario(opex.RoomDesign(h100), tariff, calendar)
    assert only.mean_utilization == pytest.approx(1520 / 8760)
    assert only.used_gpu_h == pytest.approx(1520 * 8)


def test_unit_costs_relations(tariff, calendar, h100) -> None:  # type: ignore[no-untyped-def]
    design = opex.RoomDesign(h100, students_per_gpu=7, derate=0.5)
    r = opex.evaluate(design, tariff, calendar, loadprofile.Usage())
    assert r.calendar_gpu_h == 8 * 8760
    assert r.cost_per_calendar_gpu_h == pytest.approx(r.tco_krw / (8 * 8760))
    assert r.cost_per_used_gpu_h == pytest.approx(r.cost_per_calendar_gpu_h / r.mean_utilization)
    assert r.cost_per_student_h == pytest.approx(r.cost_per_used_gpu_h / 7)
    # tokens: used GPU-hours x 3,600 s x MLPerf 3,888.3 tokens/s x derate 0.5
    assert r.tokens == pytest.approx(r.used_gpu_h * 3600 * 3888.3 * 0.5)
    assert r.cost_per_m_tokens == pytest.approx(r.tco_krw / r.tokens * 1e6)
    assert r.rent_same_work_krw == pytest.approx(r.used_gpu_h * design.rent_krw_per_gpu_hour)
    assert r.api_same_work_krw == pytest.approx(r.tokens / 1e6 * 840)
    assert r.opex_krw == pytest.approx(r.electricity_krw + 12_000_000 + 21_000_000)
    assert r.tco_krw == pytest.approx(r.opex_krw + 105_000_000 + 4_000_000)


def test_idle_share_is_zero_when_always_busy_and_large_when_idle(tariff, calendar, h100) -> None:  # type: ignore[no-untyped-def]
    busy = opex.evaluate(opex.RoomDesign(h100), tariff, calendar, flat(1.0))
    assert busy.idle_share == 0 and busy.idle_share_electricity == 0
    half = opex.evaluate(opex.RoomDesign(h100), tariff, calendar, flat(0.5))
    # half the fixed costs are idle; plus half the idle-power energy
    fixed = sum(getattr(half.breakdown, k) for k in ("capital_krw", "staff_krw",
                                                     "maintenance_krw", "facility_krw"))
    idle_total, idle_elec = half.idle_costs()
    assert idle_total - idle_elec == pytest.approx(fixed / 2)
    assert 0 < half.idle_share_electricity < half.idle_share < 1


def test_higher_pue_raises_every_bill(tariff, calendar, h100) -> None:  # type: ignore[no-untyped-def]
    low = opex.evaluate(opex.RoomDesign(h100, pue=1.2), tariff, calendar, loadprofile.Usage())
    high = opex.evaluate(opex.RoomDesign(h100, pue=2.0), tariff, calendar, loadprofile.Usage())
    assert (high.bills["total_krw"] > low.bills["total_krw"]).all()
    assert (high.bills["base_krw"] > low.bills["base_krw"]).all()
    assert high.design.contract == 21  # ceil(10.2 x 2.0)


def test_school_exception_lowers_base_when_contract_is_oversized(tariff, calendar, h100) -> None:  # type: ignore[no-untyped-def]
    big = opex.RoomDesign(h100, contract_kw=100)
    normal = opex.evaluate(big, tariff, calendar, flat(0.0))
    school = opex.evaluate(replace(big, school_exception=True), tariff, calendar, flat(0.0))
    assert normal.bills["billing_kw"].max() == 30
    assert school.bills["billing_kw"].max() == 15
    assert school.electricity_krw < normal.electricity_krw


@settings(max_examples=15, deadline=None)
@given(a=st.floats(0.01, 1.0), b=st.floats(0.01, 1.0))
def test_cost_per_used_hour_falls_as_utilization_rises(a: float, b: float) -> None:
    tariff, calendar = load_tariff(GAP, TABLE), load_school_calendar()
    server = load_servers(1400.0)["8×H100 서버"]
    lo, hi = sorted((a, b))
    r_lo = opex.evaluate(opex.RoomDesign(server), tariff, calendar, flat(lo))
    r_hi = opex.evaluate(opex.RoomDesign(server), tariff, calendar, flat(hi))
    assert r_hi.cost_per_used_gpu_h <= r_lo.cost_per_used_gpu_h * (1 + 1e-9)
    assert r_hi.tco_krw >= r_lo.tco_krw - 1e-6


# --- sensitivity ---------------------------------------------------------------------------

def test_sensitivity_sorted_and_matches_direct_evaluation(tariff, calendar, h100) -> None:  # type: ignore[no-untyped-def]
    design, usage = opex.RoomDesign(h100), loadprofile.Usage()
    table = opex.sensitivity(design, tariff, calendar, usage)
    assert list(table["swing_krw"]) == sorted(table["swing_krw"], reverse=True)
    assert table.iloc[0]["key"] == "capex_scale"  # the server's price moves the year most
    row = table.set_index("key").loc["pue"]
    direct = opex.evaluate(replace(design, pue=2.0), tariff, calendar, usage).tco_krw
    assert row["high_krw"] == pytest.approx(direct)
    # a money-only input is repriced without new bills: same as a full evaluation
    row = table.set_index("key").loc["staff_fte"]
    direct = opex.evaluate(replace(design, staff_fte=0.5), tariff, calendar, usage).tco_krw
    assert row["high_krw"] == pytest.approx(direct)


def test_sensitivity_per_used_hour_is_led_by_utilization(tariff, calendar, h100) -> None:  # type: ignore[no-untyped-def]
    table = opex.sensitivity(opex.RoomDesign(h100), tariff, calendar, loadprofile.Usage(),
                             metric=lambda r: r.cost_per_used_gpu_h)
    assert table.iloc[0]["key"] in ("class_frac", "always_on_frac")


def test_sensitivity_usage_swing_matches_a_fresh_year_of_hours(tariff, calendar, h100) -> None:  # type: ignore[no-untyped-def]
    design, usage = opex.RoomDesign(h100), loadprofile.Usage()
    opex.sensitivity(design, tariff, calendar, usage)  # fills the year-of-hours cache
    table = opex.sensitivity(replace(design, pue=1.7), tariff, calendar, usage).set_index("key")
    # oracle: the class_frac swing's high end evaluated from scratch (no cache involved)
    direct = opex.evaluate(replace(design, pue=1.7), tariff, calendar,
                           replace(usage, class_frac=1.0)).tco_krw
    assert table.loc["class_frac", "high_krw"] == pytest.approx(direct)


def test_year_of_hours_is_the_load_profile_and_a_fresh_copy(calendar) -> None:  # type: ignore[no-untyped-def]
    usage = loadprofile.Usage(class_frac=0.6)
    fresh = loadprofile.hourly_utilization(calendar, usage)
    first = opex_whatif.year_of_hours(calendar, usage)
    assert first.equals(fresh)
    first["util_frac"] = 0.0  # a caller changing its copy changes no one else's
    assert opex_whatif.year_of_hours(calendar, usage).equals(fresh)
    with pytest.raises(ValueError, match="after_school_end_h"):  # errors are raised, not cached
        opex_whatif.year_of_hours(calendar, replace(usage, after_school_end_h=10))


def test_summary_table_has_every_key_number(tariff, calendar, h100) -> None:  # type: ignore[no-untyped-def]
    result = opex.evaluate(opex.RoomDesign(h100), tariff, calendar, loadprofile.Usage())
    table = opex.summary_table(result).set_index("key")
    assert table.loc["tco_krw", "value"] == result.tco_krw
    assert table.loc["tariff_verified", "value"] is False
    assert not table["unit"].isna().any()


SUMMARY_KEYS = [  # the export's rows: (key, unit), in order
    ("tariff_class", ""), ("tariff_verified", ""), ("servers", "servers"), ("gpus", "GPUs"),
    ("pue", ""), ("contract_kw", "kW"), ("peak_facility_kw", "kW"),
    ("mean_utilization_frac", "fraction"), ("energy_kwh", "kWh"),
    ("electricity_krw", "KRW/year"), ("capital_krw", "KRW/year"), ("staff_krw", "KRW/year"),
    ("maintenance_krw", "KRW/year"), ("facility_krw", "KRW/year"), ("opex_krw", "KRW/year"),
    ("tco_krw", "KRW/year"), ("cost_per_calendar_gpu_h_krw", "KRW/GPU-h"),
    ("cost_per_used_gpu_h_krw", "KRW/GPU-h"), ("students_per_gpu", "students"),
    ("cost_per_student_h_krw", "KRW/student-h"), ("cost_per_m_tokens_krw", "KRW/1M tokens"),
    ("rent_same_work_krw", "KRW/year"), ("api_same_work_krw", "KRW/year"),
    ("idle_krw", "KRW/year"), ("idle_share_frac", "fraction"),
    ("idle_share_electricity_frac", "fraction"),
]


def test_summary_table_rows_units_and_the_design_they_came_from(tariff, calendar, h100) -> None:  # type: ignore[no-untyped-def]
    design = opex.RoomDesign(h100, n_servers=2, pue=1.4)
    result = opex.evaluate(design, tariff, calendar, loadprofile.Usage())
    table = opex.summary_table(result)
    assert list(zip(table["key"], table["unit"], strict=True)) == SUMMARY_KEYS
    v = table.set_index("key")["value"]
    # the inputs: 2 servers of 8 GPUs at PUE 1.4, the class asked for (file: not verified)
    assert (v["tariff_class"], v["tariff_verified"], v["servers"], v["gpus"], v["pue"]) == (
        GAP, False, 2, 16, 1.4)
    # the year adds up: opex = electricity + staff + maintenance; TCO adds capital + facility;
    # the electricity is the 12 bills' amounts due
    assert v["opex_krw"] == pytest.approx(v["electricity_krw"] + v["staff_krw"]
                                          + v["maintenance_krw"])
    assert v["tco_krw"] == pytest.approx(v["opex_krw"] + v["capital_krw"] + v["facility_krw"])
    assert v["electricity_krw"] == result.bills["total_krw"].sum()
    assert v["energy_kwh"] == pytest.approx(result.load_kw.sum())  # hourly kW -> kWh
    # VAT 10 % + fund levy 2.7 % (module docstring of labkit.tariff, KEPCO)
    assert result.levy_frac == pytest.approx(0.127)


def test_sensitivity_rows_name_their_range_base_and_ends(tariff, calendar, h100) -> None:  # type: ignore[no-untyped-def]
    design, usage = opex.RoomDesign(h100), loadprofile.Usage()
    table = opex.sensitivity(design, tariff, calendar, usage)
    assert list(table.columns) == ["key", "low", "high", "base_value", "low_krw", "high_krw",
                                   "base_krw", "swing_krw"]
    assert list(table.index) == list(range(len(opex.SENSITIVITY_RANGES)))
    base = opex.evaluate(design, tariff, calendar, usage).tco_krw
    rows = table.set_index("key")
    for swing in opex.SENSITIVITY_RANGES:
        row = rows.loc[swing.key]
        assert (row["low"], row["high"], row["base_krw"]) == (swing.low, swing.high, base)
        assert row["swing_krw"] == pytest.approx(abs(row["high_krw"] - row["low_krw"]))
    # where each input stands now: the server at its own price (scale 1), the design's PUE,
    # the usage's class share
    assert rows.loc["capex_scale", "base_value"] == 1.0
    assert rows.loc["pue", "base_value"] == design.pue
    assert rows.loc["class_frac", "base_value"] == usage.class_frac
    # the low end of the server price: 200/300 of it, evaluated in full
    cheap = replace(design, server=replace(
        h100, server_capex_krw=h100.server_capex_krw * 200 / 300))
    assert rows.loc["capex_scale", "low_krw"] == pytest.approx(
        opex.evaluate(cheap, tariff, calendar, usage).tco_krw)


def test_ties_keep_the_order_of_the_ranges(tariff, calendar, h100) -> None:  # type: ignore[no-untyped-def]
    # two inputs that change nothing (swing 0) stay in the order given
    still = (opex.Swing("staff_fte", 0.2, 0.2), opex.Swing("pue", 1.5, 1.5))
    design = opex.RoomDesign(h100, staff_fte=0.2, pue=1.5)
    table = opex.sensitivity(design, tariff, calendar, loadprofile.Usage(), ranges=still)
    assert list(table["key"]) == ["staff_fte", "pue"]


@pytest.mark.parametrize(("key", "value"), [
    ("derate", 0.5), ("capex_scale", 1.5), ("staff_fte", 0.5), ("depreciation_years", 6)])
def test_money_only_inputs_reprice_like_a_full_evaluation(  # type: ignore[no-untyped-def]
        tariff, calendar, h100, key: str, value: float) -> None:
    # the oracle is the full path: new load, new bills, new breakdown
    design, usage = opex.RoomDesign(h100), loadprofile.Usage()
    base = opex.evaluate(design, tariff, calendar, usage)
    d, u = opex_whatif._vary(design, usage, key, value)
    repriced = opex_whatif._reprice(base, d, tariff)
    evaluated = opex.evaluate(d, tariff, calendar, u)
    assert repriced.design == d and repriced.tokens == pytest.approx(evaluated.tokens)
    fast = opex.summary_table(repriced).set_index("key")["value"]
    full = opex.summary_table(evaluated).set_index("key")["value"]
    for k in full.index:
        assert fast[k] == pytest.approx(full[k]), k


def test_room_cluster_carries_the_room_and_the_levied_base_charge(tariff, h100) -> None:  # type: ignore[no-untyped-def]
    design = opex.RoomDesign(h100, n_servers=3, depreciation_years=5, cost_of_capital=0.04)
    c = design.cluster(tariff)
    assert (c.servers, c.depreciation_years, c.cost_of_capital) == (3, 5, 0.04)
    # the base charge is billed with VAT 10 % and the fund levy 2.7 % on top (KEPCO)
    assert c.base_charge_krw_per_kw_month == pytest.approx(tariff.base_krw_per_kw_month * 1.127)


def test_evaluate_keeps_its_usage_and_a_room_without_load_has_no_energy_line(  # type: ignore[no-untyped-def]
        tariff, calendar, h100) -> None:
    usage = flat(0.0)
    result = opex.evaluate(opex.RoomDesign(h100, idle_frac=0), tariff, calendar, usage)
    assert result.usage == usage and float(result.load_kw.sum()) == 0
    assert result.breakdown.energy_krw == 0  # no kWh; the 10-won rounding is not energy


def test_a_repeating_year_bills_each_month_at_the_ratchet_months_peak(  # type: ignore[no-untyped-def]
        tariff, calendar, h100) -> None:
    # the year repeats, so every month looks back over all the others: billing demand is the
    # largest of its own demand, the ratchet months' (Jul-Sep, Dec-Feb) and 30 % of contract
    result = opex.evaluate(opex.RoomDesign(h100, n_servers=2), tariff, calendar,
                           loadprofile.Usage())
    bills = result.bills
    ratchet = max(d for m, d in zip(bills.index.month, bills["demand_kw"], strict=True)
                  if m in (7, 8, 9, 12, 1, 2))
    floor = 0.3 * result.design.contract
    for own, billed in zip(bills["demand_kw"], bills["billing_kw"], strict=True):
        assert billed == pytest.approx(max(own, ratchet, floor))


def test_idle_costs_by_brute_force(tariff, calendar, h100) -> None:  # type: ignore[no-untyped-def]
    # hour by hour: the idle share (1 - u) of the fixed costs and of the electricity, where idle
    # electricity is the base charge spread over the hours plus the idle draw (max IT kW x
    # servers x idle share x PUE) at that month's energy price (amount due less the levied
    # base charge, per kWh)
    design = opex.RoomDesign(h100, n_servers=2, idle_frac=0.25, pue=1.6)
    r = opex.evaluate(design, tariff, calendar, loadprofile.Usage())
    b = r.breakdown
    u = r.utilization["util_frac"].to_numpy()
    hours = len(u)
    price = {}
    for month, row in r.bills.iterrows():
        price[month.month] = (row["total_krw"] - row["base_krw"] * 1.127) / row["kwh"]
    idle_kw = h100.max_it_power_kw * 2 * 0.25 * 1.6
    fixed = (b.capital_krw + b.staff_krw + b.maintenance_krw + b.facility_krw) / hours
    electricity = total = 0.0
    for stamp, ui in zip(r.utilization.index, u, strict=True):
        e = (1 - ui) * (b.base_charge_krw / hours + idle_kw * price[stamp.month])
        electricity += e
        total += (1 - ui) * fixed + e
    assert r.idle_costs() == pytest.approx((total, electricity))


def test_server_and_room_take_their_edge_values_and_normalize_types(h100) -> None:  # type: ignore[no-untyped-def]
    server = opex.ServerSpec("x", 0, 8.0, 10, 1, 7.0)  # type: ignore[arg-type]
    assert [(type(v), v) for v in (server.server_capex_krw, server.gpus_per_server,
                                   server.max_it_power_kw, server.tokens_per_s_per_gpu,
                                   server.mig_instances_per_gpu)] == [
        (float, 0.0), (int, 8), (float, 10.0), (float, 1.0), (int, 7)]
    # every boundary the docstring allows: 64 servers, PUE 1, nothing idle, free staff, ...
    room = opex.RoomDesign(h100, n_servers=64.0, pue=1, idle_frac=0, contract_kw=20,  # type: ignore[arg-type]
                           school_exception=1, staff_fte=10, staff_krw_per_fte_year=0,  # type: ignore[arg-type]
                           maintenance_frac=0, facility_upgrade_krw=0, facility_years=1,
                           depreciation_years=1, cost_of_capital=0, students_per_gpu=3.0,  # type: ignore[arg-type]
                           derate=1, rent_krw_per_gpu_hour=0, api_krw_per_m_tokens=0)
    got = {f.name: getattr(room, f.name) for f in fields(room) if f.name != "server"}
    assert got == {"n_servers": 64, "pue": 1.0, "idle_frac": 0.0, "contract_kw": 20.0,
                   "school_exception": True, "staff_fte": 10.0, "staff_krw_per_fte_year": 0.0,
                   "maintenance_frac": 0.0, "facility_upgrade_krw": 0.0, "facility_years": 1.0,
                   "depreciation_years": 1.0, "cost_of_capital": 0.0, "students_per_gpu": 3,
                   "derate": 1.0, "rent_krw_per_gpu_hour": 0.0, "api_krw_per_m_tokens": 0.0,
                   "summer_pue_add": 0.0, "winter_pue_add": 0.0}
    assert {k: type(v) for k, v in got.items()} == {
        k: (int if k in ("n_servers", "students_per_gpu") else bool if k == "school_exception"
            else float) for k in got}
    assert opex.RoomDesign(h100).contract_kw is None  # the default: from the peak
    # one GPU per server, one MIG instance, one student per GPU are the smallest allowed
    one = opex.ServerSpec("x", 1, 1, 1, 1, 1)
    assert (one.gpus_per_server, one.mig_instances_per_gpu) == (1, 1)
    assert opex.RoomDesign(one, students_per_gpu=1).students == 1
    with pytest.raises(InputError) as err:
        opex.RoomDesign(h100, pue=0.99)
    assert err.value.limit == 1.0


# --- data --------------------------------------------------------------------------------------

def test_servers_come_from_data_economics() -> None:
    servers = load_servers(1400.0)
    h100 = servers["8×H100 서버"]
    # hardware_prices.csv "8xH100 server (lesson default)" USD 300,000 x 1,400
    assert h100.server_capex_krw == 420_000_000
    assert h100.max_it_power_kw == 10.2  # power.csv DGX H100 / DGX H200, 10,200 W
    assert h100.tokens_per_s_per_gpu == pytest.approx(3888.3)  # MLPerf v5.0 Server / 8
    assert h100.mig_instances_per_gpu == 7
    assert servers["8×H200 서버"].server_capex_krw == 375_000 * 1400  # middle of 350k-400k
    assert servers["8×B200 서버"].max_it_power_kw == 14.3
    rtx = servers["4×RTX PRO 6000 서버"]
    assert (rtx.gpus_per_server, rtx.mig_instances_per_gpu) == (4, 4)


def test_students_per_gpu_is_the_smallest_mig_profile_count() -> None:
    # data/gpus (lesson 02's models): H100 1g.10gb fits 7 times; 1g.10gb+me only once
    assert smallest_mig_profile("H100-80GB") == ("1g.10gb", 7)
    assert smallest_mig_profile("RTX-PRO-6000") == ("1g.24gb", 4)
    assert smallest_mig_profile("L40S") == ("", 1)  # no MIG: one student per GPU
    with pytest.raises(DataError, match="gpu_model"):
        smallest_mig_profile("Z999")


def test_opex_defaults_cover_the_controls() -> None:
    defaults = load_opex_defaults()
    for key in ("pue", "idle_frac", "staff_fte", "depreciation_years", "fx_krw_per_usd",
                "derate", "class_frac", "always_on_frac"):
        d = defaults[key]
        assert d.low <= d.value <= d.high and d.source


def test_load_servers_names_a_missing_reference(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import shutil
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "data"
    for sub in ("economics", "opex", "gpus"):
        shutil.copytree(root / sub, tmp_path / sub)
    path = tmp_path / "opex" / "servers.csv"
    path.write_text(path.read_text(encoding="utf-8").replace(
        "8xH200 server,", "8xH201 server,"), encoding="utf-8")
    monkeypatch.setenv("LABKIT_DATA", str(tmp_path))
    with pytest.raises(DataError, match=r"servers.csv: row 2 \(8×H200 서버\): price_item"):
        load_servers(1400.0)


# --- bad input -------------------------------------------------------------------------------

ROOM_ROWS = [  # (RoomDesign keyword arguments, field, rule)
    ({"n_servers": 0}, "n_servers", "integer"), ({"n_servers": 65}, "n_servers", "at_most"),
     ({"n_servers": 1.5}, "n_servers", "integer"), ({"pue": 0.8}, "pue", "at_least"),
     ({"pue": math.nan}, "pue", "finite"), ({"idle_frac": 1.2}, "idle_frac", "fraction"),
     ({"contract_kw": 0}, "contract_kw", "positive"),
     ({"contract_kw": 1e308}, "contract_kw", "at_most"),
     ({"staff_krw_per_fte_year": 1e308}, "staff_krw_per_fte_year", "at_most"),
     ({"facility_years": 1e308}, "facility_years", "at_most"),
     ({"students_per_gpu": 10**6}, "students_per_gpu", "at_most"),
     ({"summer_pue_add": math.inf}, "summer_pue_add", "finite"),
     ({"winter_pue_add": -1.5}, "winter_pue_add", "at_most"),
     ({"staff_fte": -1}, "staff_fte", "non_negative"),
     ({"maintenance_frac": 2}, "maintenance_frac", "fraction"),
     ({"facility_years": 0}, "facility_years", "positive"),
     ({"depreciation_years": -4}, "depreciation_years", "positive"),
     ({"cost_of_capital": 1.5}, "cost_of_capital", "fraction"),
     ({"students_per_gpu": 0}, "students_per_gpu", "integer"),
     ({"derate": 0}, "derate", "fraction"),
     ({"rent_krw_per_gpu_hour": -1}, "rent_krw_per_gpu_hour", "non_negative"),
     ({"api_krw_per_m_tokens": math.inf}, "api_krw_per_m_tokens", "finite")
]
BAD_INPUTS = [
    # (call(h100, tariff, calendar), field, rule): the room's fields, then the other entries
    *[((lambda h, _t, _c, kw=kw: opex.RoomDesign(h, **kw)), field, rule)
      for kw, field, rule in ROOM_ROWS],
    (lambda h, t, c: opex.ServerSpec("x", -1, 8, 10.2, 3000), "server_capex_krw",
     "non_negative"),
    # each server figure by its own name
    (lambda h, t, c: opex.ServerSpec("x", 1, 0, 10.2, 3000), "gpus_per_server", "integer"),
    (lambda h, t, c: opex.ServerSpec("x", 1, 8, 0, 3000), "max_it_power_kw", "positive"),
    (lambda h, t, c: opex.ServerSpec("x", 1, 8, 10.2, 0), "tokens_per_s_per_gpu", "positive"),
    (lambda h, t, c: opex.ServerSpec("x", 1, 8, 10.2, 1, 0), "mig_instances_per_gpu",
     "integer"),
    (lambda h, t, c: opex.RoomDesign("8×H100"), "server", "other", "str",  # type: ignore[arg-type, dict-item]  # bad input, on purpose
     "server must be a ServerSpec"),
    # the limits, named in the message
    (lambda h, t, c: opex.RoomDesign(h, n_servers=65), "n_servers", "at_most", 65,
     "n_servers must be <= 64 (64), got 65"),
    (lambda h, t, c: opex.RoomDesign(h, staff_fte=10.5), "staff_fte", "at_most", 10.5,
     "staff_fte must be <= 10 (10), got 10.5"),
    (lambda h, t, c: opex.RoomDesign(h, pue=0.8), "pue", "at_least", 0.8,
     "pue must be >= 1, got 0.8"),
    (lambda h, t, c: opex.RoomDesign(h, staff_krw_per_fte_year=-1), "staff_krw_per_fte_year",
     "non_negative"),
    (lambda h, t, c: opex.RoomDesign(h, facility_upgrade_krw=-1), "facility_upgrade_krw",
     "non_negative"),
    (lambda h, t, c: opex.evaluate("design", t, c, loadprofile.Usage()), "design", "other",  # type: ignore[arg-type, dict-item]  # bad input, on purpose
     "str", "design must be a RoomDesign"),
    (lambda h, t, c: opex.evaluate(opex.RoomDesign(h), t, "2026", loadprofile.Usage()),  # type: ignore[arg-type, dict-item]  # bad input, on purpose
     "calendar", "other"),
]


@pytest.mark.parametrize("row", BAD_INPUTS,
                         ids=[f"{row[1]}-{row[2]}-{i}" for i, row in enumerate(BAD_INPUTS)])
def test_bad_input_raises_a_value_error_naming_the_field_and_rule(  # type: ignore[no-untyped-def]
        h100, tariff, calendar, row) -> None:
    call, field, rule, *detail = row
    with pytest.raises(InputError) as err:
        call(h100, tariff, calendar)
    assert isinstance(err.value, ValueError)
    assert (err.value.field, err.value.rule) == (field, rule)
    if detail:  # the rejected value as reported, and how the message starts
        assert err.value.value == detail[0] and str(err.value).startswith(detail[1])


def test_evaluate_leap_year_calendar(tariff, h100) -> None:  # type: ignore[no-untyped-def]
    cal = loadprofile.SchoolCalendar(2028, [loadprofile.Term("1학기", date(2028, 3, 2),
                                                             date(2028, 7, 18))])
    r = opex.evaluate(opex.RoomDesign(h100), tariff, cal, flat(1.0))
    assert r.calendar_gpu_h == 8 * 8784 and len(r.bills) == 12
    assert r.bills.loc["2028-02", "days"] == 29


def test_seasonal_pue_by_kepco_month(h100: opex.ServerSpec) -> None:
    design = opex.RoomDesign(h100, pue=1.2, summer_pue_add=0.3, winter_pue_add=-0.4)
    # KEPCO seasons: winter Nov-Feb, summer Jun-Aug; a season's PUE is at least 1
    assert design.pue_of_months() == pytest.approx(
        (1.0, 1.0, 1.2, 1.2, 1.2, 1.5, 1.5, 1.5, 1.2, 1.2, 1.0, 1.0))
    assert design.peak_pue == pytest.approx(1.5)
    assert design.contract == 16  # ceil(10.2 kW x 1.5 = 15.3)
