"""Lessons 05 and 06 widgets, server side: linked apps, Korean errors, last good result kept."""

from __future__ import annotations

import math

import ipywidgets as widgets
import pytest

from labkit.ui import economics as ui
from labkit.ui.components import find_by_class


@pytest.fixture
def server() -> ui.ClusterApp:
    return ui.cluster_app()


@pytest.fixture
def curves(server: ui.ClusterApp) -> ui.CostCurvesApp:
    return ui.cost_curves_app(server)


def test_cluster_app_shows_case1_year(server: ui.ClusterApp) -> None:
    assert server.result is not None
    assert server.result.breakdown_full.total_krw == pytest.approx(160_866_503, rel=0.005)
    assert "1억 6,086만 원" in server.big.value and "11.7 %" in server.big.value
    bars = server.chart.figure.data[0]
    assert len(bars.y) == 6 and max(bars.x) == pytest.approx(10_500)


def test_cluster_app_rejects_pue_below_one_and_keeps_last_result(server: ui.ClusterApp) -> None:
    good, fig = server.result, server.chart.figure
    slider = server.fields["pue"].control
    slider.min = 0.1  # a browser can move a slider's limits too
    slider.value = 0.9
    assert "PUE는 1 이상" in server.fields["pue"].error.value
    assert server.result is good and server.chart.figure is fig
    assert "마지막으로 올바른 결과" in server.status.value
    slider.value = 1.5
    assert server.fields["pue"].error.value == "" and server.result is not good
    server.fields["staff_krw_per_year"].control.value = math.nan
    assert "유한한" in server.fields["staff_krw_per_year"].error.value


def test_aircraft_app_case1_and_follows_the_cluster(server: ui.ClusterApp) -> None:
    plane = ui.aircraft_app(server)
    assert plane.result.per_used_h == pytest.approx(5_473, rel=0.005)
    assert "5,473원" in plane.big.value and "2.4배" in plane.big.value
    plane.fields["utilization"].control.value = 100
    assert plane.result.per_used_h == pytest.approx(2_295, rel=0.005)
    server.fields["server_capex_usd"].control.value = 400_000
    assert plane.result.per_used_h > 2_295 * 1.2


def test_aircraft_app_rejects_zero_utilization(server: ui.ClusterApp) -> None:
    plane = ui.aircraft_app(server)
    good = plane.result
    slider = plane.fields["utilization"].control
    slider.min = 0
    slider.value = 0
    assert "가동률은 0 %보다 크고" in plane.fields["utilization"].error.value
    assert plane.result is good


def test_cost_curves_crossover_case3(curves: ui.CostCurvesApp) -> None:
    r = curves.result
    assert r.n_star / 1e6 == pytest.approx(14_954, rel=0.005)
    assert "149.5억" in curves.big.value and "18.3 %" in curves.big.value
    names = [trace.name for trace in curves.chart.figure.data]
    assert "손익분기점" in names
    cross = curves.chart.figure.data[names.index("손익분기점")]
    assert cross.x[0] == pytest.approx(149.536, abs=0.01)


def test_cost_curves_api_price_moves_the_crossover_utilization_moves_the_point(
    curves: ui.CostCurvesApp,
) -> None:
    before = curves.result
    curves.fields["utilization"].control.value = 10
    assert curves.result.n_star == before.n_star          # the crossover stays
    assert curves.result.tokens_at_u < before.tokens_at_u  # the operating point moves
    assert "API가" in curves.big.value                      # 10 % < 18.3 %: the API is cheaper
    curves.fields["api_price_usd_per_m"].control.value = 0.3
    assert curves.result.n_star > 2 * before.n_star         # cheaper API: break-even moves out


def test_cost_curves_low_derate_puts_break_even_beyond_capacity(curves: ui.CostCurvesApp) -> None:
    curves.fields["derate"].control.value = 10
    assert curves.result.n_star > curves.result.capacity_tokens
    assert "넘습니다" in curves.big.value


def test_cost_curves_forced_negative_price_shows_error(curves: ui.CostCurvesApp) -> None:
    good = curves.result
    slider = curves.fields["api_price_usd_per_m"].control
    slider.min = -5
    slider.value = -1
    assert "0 이상" in curves.fields["api_price_usd_per_m"].error.value
    assert curves.result is good


def test_demand_app_school_case3(curves: ui.CostCurvesApp) -> None:
    demand = ui.demand_app(curves)
    assert demand.result.tokens == 1_950_000_000
    assert demand.result.api_krw == pytest.approx(1_638_000, rel=0.005)
    assert "7.6배" in demand.big.value and "API가" in demand.big.value
    demand.fields["students"].control.value = 20_000
    demand.fields["tokens_per_request"].control.value = 5_000
    assert demand.result.servers_needed == 2 and "자체 GPU가" in demand.big.value
    kept = demand.result
    for bad, text in ((-3, "0보다 커야"), (0, "0보다 커야"), (1e15, "너무 커서"),
                      (1e308, "너무 커서")):
        demand.fields["students"].control.value = bad
        assert text in demand.fields["students"].error.value, bad
        assert demand.result is kept and "∞" not in demand.big.value


def test_cluster_app_overflowing_cost_says_so_and_keeps_last_result(
        server: ui.ClusterApp) -> None:
    good = server.result
    for key in ("base_charge_krw_per_kw_month",):
        server.fields[key].control.value = 1e308
        assert "너무 커서" in server.status.value, key
        assert "inf" not in server.status.value and server.result is good
        server.fields[key].control.value = server.fields[key].default
        assert server.status.value == "" and server.result is not good


def test_rent_app_break_even_utilization(server: ui.ClusterApp) -> None:
    rent = ui.rent_app(server)
    assert rent.result.u_star == pytest.approx(0.528, abs=0.001)
    assert "52.8 %" in rent.big.value and "빌리는 쪽이" in rent.big.value
    rent.fields["rent_usd_per_gpu_hour"].control.value = 1.0
    assert rent.result.u_star > 1 and "100 %여도" in rent.big.value


def test_tornado_app_modes(curves: ui.CostCurvesApp) -> None:
    tornado = ui.tornado_app(curves)
    assert tornado.result.loc[0, "parameter"] == "api_price_usd_per_m"
    assert "API 가격" in tornado.big.value
    tornado.fields["mode"].control.value = "range"
    top = tornado.result.loc[0]
    assert top["parameter"] == "api_price_usd_per_m"
    assert top["result_low"] > 10 * tornado.result.attrs["base"]  # 0.05 USD: far beyond capacity
    tornado.fields["mode"].control.value = "relative"
    curves.fields["derate"].control.value = 15            # energy: ~84 KRW per 1M tokens
    curves.fields["api_price_usd_per_m"].control.value = 0.1  # 140 KRW; half of it is below
    tornado.fields["spread"].control.value = 50
    assert math.isinf(tornado.result.loc[0, "swing"])   # one end never breaks even
    texts = [*tornado.chart.figure.data[0].text, *tornado.chart.figure.data[1].text]
    assert "∞" in texts
    slider = tornado.fields["spread"].control
    slider.max = 1e6
    slider.value = 5e5
    assert tornado.fields["spread"].error.value != ""


def test_tornado_follows_the_curves(curves: ui.CostCurvesApp) -> None:
    tornado = ui.tornado_app(curves)
    base = tornado.result.attrs["base"]
    curves.fields["api_price_usd_per_m"].control.value = 2.0
    assert tornado.result.attrs["base"] < base


def test_case_numbers_05_hold_the_shared_case_values() -> None:
    text = ui.case_numbers_05().to_string()
    for value in ("1억 6,086만 원", "1억 5,342만 원", "2,295원", "5,473원", "11.7 %",
                  "1,237만 원", "12.64원", "149.5억", "19.5억", "163만 원", "7.6배"):
        assert value in text, value


def test_exercises_05_answers_come_from_the_model() -> None:
    box = ui.exercises_05()
    assert len(box.children) == 3
    answer = find_by_class(box, "lk-econ-ex05_3-answer")
    button = find_by_class(box, "lk-econ-ex05_3-check")
    feedback = find_by_class(box, "lk-econ-ex05_3-feedback")
    answer.value = "81.2"
    button.click()
    assert "정답" in feedback.value


def test_tables_carry_provenance() -> None:
    assert {"기준일", "신뢰도", "출처"} <= set(ui.defaults_table("05").columns)
    assert "신뢰도" in ui.cloud_prices().columns
    api = ui.api_prices().data
    groq = api[api["모델"] == "Llama-3.3-70B"].iloc[0]
    assert groq["혼합 USD/100만 (3:1)"] == pytest.approx(0.64, abs=0.001)  # case 3's 3:1 blend
    assert len(ui.hardware_prices()) == 14


def test_tornado_value_labels_have_room_beside_the_bars(curves: ui.CostCurvesApp) -> None:
    fig = ui.tornado_app(curves).chart.figure
    low, high = fig.layout.xaxis.range
    ends = [b + x for trace in fig.data for b, x in zip([trace.base] * len(trace.x), trace.x,
                                                        strict=True)]
    span = max(ends) - min(ends)
    # a label ("124.3억", ~7 characters) needs ~15 % of the bars' span at this chart's width;
    # the longest bars (API price, server price) used to put theirs on the parameter names
    assert min(ends) - low >= 0.2 * span and high - max(ends) >= 0.2 * span


def test_slider_readouts_show_the_decimals_their_step_has(server: ui.ClusterApp,
                                                          curves: ui.CostCurvesApp) -> None:
    # issue 17's trial read "감가상각 기간 4.0 년", "가동률 40.0 %" on whole-number steps
    from labkit.ui import benchmarks

    apps = [server, curves, benchmarks.rack_app()]
    sliders = [f.control for app in apps for f in app.fields.values()
               if isinstance(f.control, widgets.FloatSlider)]
    assert len(sliders) >= 10
    for s in sliders:
        step = round(s.step, 9)
        whole = step == int(step)
        assert s.readout_format.endswith(".0f") == whole, (s.description, step, s.readout_format)
    assert curves.fields["utilization"].control.readout_format == ".0f"  # "40 %", not "40.0 %"


@pytest.mark.parametrize(("ratio", "shown"), [(1.04, "1.04"), (1.0, "1"), (1.1, "1.1"),
                                              (7.6, "7.6"), (math.inf, "n/a")])
def test_how_many_times_cheaper_keeps_two_decimals_near_one(ratio: float, shown: str) -> None:
    # the trial: "자체 GPU가 1.0배 쌉니다" for 1.04 read as "not cheaper at all"
    from labkit.ui.economics.common import times

    assert times(ratio) == shown
