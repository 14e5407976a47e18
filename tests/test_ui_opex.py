"""Lesson 07's widgets, server side: live bills, linked views, Korean errors, export."""

from __future__ import annotations

import csv
import io
import math
import tempfile
from pathlib import Path

import pytest

from labkit.data.tariff import load_tariff
from labkit.tariff import Band, Season
from labkit.ui import opex as ui
from labkit.ui.components import find_by_class


@pytest.fixture
def room() -> ui.RoomApp:
    return ui.room_app()


def _totals(room: ui.RoomApp) -> list[float]:
    return list(room.chart.figure.data[-1].y)


def test_room_app_shows_twelve_bills_and_unverified_warning(room: ui.RoomApp) -> None:
    result = room.result
    assert result is not None and len(result.bills) == 12
    fig = room.chart.figure
    assert [tr.name for tr in fig.data[:4]] == ["기본요금", "전력량요금", "기후환경·연료비조정",
                                               "부가세·전력기금"]
    assert len(fig.data[0].x) == 12 and fig.layout.barmode == "stack"
    # each month's stacked parts add up to the amount due (within the 10-won truncation)
    for i in range(12):
        parts = sum(tr.y[i] for tr in fig.data[:4])
        assert 0 <= parts - fig.data[-1].y[i] < 10
    assert "한전 공식 요금표와 아직 대조하지 않았습니다" in room.tariff_note.value
    assert "연간 전기요금" in room.summary.value


def test_pue_change_changes_every_monthly_bill(room: ui.RoomApp) -> None:
    before = _totals(room)
    room.fields["pue"].control.value = 2.0
    after = _totals(room)
    assert all(a > b for a, b in zip(after, before, strict=True))
    # the school's contract stays 20 kW (data/opex/defaults.csv, the card's value); the
    # automatic one follows the PUE: ceil(10.2 kW x (2.0 + summer 0.2)) = ceil(22.44) = 23 kW
    assert room.result.design.pue == 2.0 and room.result.design.contract == 20
    assert "lk-contract-auto" not in room.tariff_note.value
    room.fields["contract_auto"].control.value = True
    assert room.result.design.contract == 23
    # the disabled box still holds 20: the page says which one the bills use
    assert room.fields["contract_kw"].control.disabled
    assert ("PUE가 가장 높은 달에 맞춘 23 kW로 계산합니다(계약전력 칸의 20 kW는 쓰지 않습니다)"
            in room.tariff_note.value)


def test_linked_views_follow_the_room(room: ui.RoomApp) -> None:
    cost, unit = ui.cost_view(room), ui.unit_costs_view(room)
    sens, hours = ui.sensitivity_app(room), ui.class_hours_view(room)
    tco = room.result.tco_krw
    assert "총소유비용" in cost.summary.value
    assert "학생 7명" in unit.summary.value
    assert sens.table is not None and hours.scenario is not None
    room.fields["staff_fte"].control.value = 0.5
    assert room.result.tco_krw == pytest.approx(tco + 0.3 * 60_000_000)
    assert cost.chart.figure.data[0].x[3] == pytest.approx(30_000_000)  # staff line
    assert sens.table["base_krw"].iloc[0] == pytest.approx(room.result.tco_krw)
    assert hours.scenario.design.staff_fte == 0.5


def test_pue_step_redraws_the_bills_but_not_the_class_hours_chart(room: ui.RoomApp) -> None:
    hours = ui.class_hours_view(room)
    bills, months = room.chart.outputs, hours.chart.outputs
    room.fields["pue"].control.value = 1.7
    assert room.chart.outputs != bills  # the bills follow the PUE
    assert hours.chart.outputs is months  # the hours in use do not: the chart is not redrawn
    assert hours.scenario is not None and hours.scenario.design.pue == 1.7  # its table does
    room.fields["class_frac"].control.value = 40
    assert hours.chart.outputs is not months


@pytest.mark.parametrize(
    ("key", "value", "text"),
    [("pue", 0.9, "1 이상"), ("n_servers", 0, "정수"), ("idle_frac", -10, "허용 범위"),
     ("staff_krw_per_fte_year", -1, "0 이상"), ("fx_krw_per_usd", 0, "0보다 커야"),
     ("students_per_gpu", 2.5, "정수"), ("derate", math.nan, "유한한"),
     ("class_end_h", 30, "수업 시간은"), ("after_school_end_h", 12, "방과 후 사용은"),
     ("terms", "3월 3일부터 1학기", "학기를 확인하세요"),
     ("terms", "2026-03-02 ~ 2026-07-17 1학기\n2026-07-01 ~ 2026-08-31 겹침", "학기를 확인하세요"),
     ("exams", "2026-08-01 ~ 2026-08-03 방학 중 시험", "시험 기간을 확인하세요"),
     ("closures", "2027-01-05 내년", "휴업일을 확인하세요")],
)
def test_bad_input_shows_korean_error_and_keeps_last_bills(room: ui.RoomApp, key: str,
                                                           value: object, text: str) -> None:
    good, good_fig = room.result, room.chart.figure
    control = room.fields[key].control
    if hasattr(control, "min"):  # a browser can move a slider's limits with its value
        control.min, control.max = -1e9, 1e9
    control.value = value
    assert text in room.fields[key].error.value, room.fields[key].error.value
    assert room.result is good and room.chart.figure is good_fig
    assert "마지막으로 올바른 결과" in room.status.value
    room.fields[key].control.value = room.fields[key].default
    assert room.fields[key].error.value == ""
    assert room.result is not good


def test_browser_forced_values_are_validated(room: ui.RoomApp) -> None:
    good = room.result
    slider = room.fields["n_servers"].control
    slider.max = 1e6  # a comm message can move max and value together
    slider.value = 100_000
    assert room.result is good and "이하" in room.fields["n_servers"].error.value
    slider.value = 1
    # a value the model does not know reaches compute (the dropdown is only a convenience)
    for key, bad in (("server", "9×Z999 서버"), ("tariff_class", "가정용")):
        control = room.fields[key].control
        first = control.value
        control.options = [*control.options, bad]
        control.value = first
        kept = room.result
        control.value = bad
        assert room.result is kept and "알 수 없는 값" in room.fields[key].error.value
        control.value = first
    kept = room.result
    room.fields["terms"].control.value = "2026-03-03\n" * 5_000  # too long: rejected unparsed
    assert room.result is kept and "4,000 이하" in room.fields["terms"].error.value


def test_server_choice_brings_its_price_and_mig_slices(room: ui.RoomApp) -> None:
    room.fields["server"].control.value = "4×RTX PRO 6000 서버"
    assert room.fields["server_price_usd"].control.value == 55_000
    assert room.fields["students_per_gpu"].control.value == 4
    result = room.result
    assert result.design.server.name == "4×RTX PRO 6000 서버" and result.design.gpus == 4
    assert result.design.server.server_capex_krw == 55_000 * 1400
    assert result.design.students == 4


def test_contract_and_tariff_controls(room: ui.RoomApp) -> None:
    room.fields["contract_auto"].control.value = False
    room.fields["contract_kw"].control.value = 100
    assert room.result.bills["billing_kw"].max() == 30
    room.fields["school_exception"].control.value = True
    # this month's demand only, floor 15 % of 100 kW: the class-hours peak 10.2 x (0.3 + 0.7 x
    # 0.81) = 8.8434 kW IT x PUE is below it in spring/fall (x 1.5 = 13.27) and winter (x 1.4),
    # above it in summer (x 1.7 = 15.03378)
    billing = room.result.bills["billing_kw"]
    assert billing.iloc[5:8].tolist() == pytest.approx([15.03378] * 3)
    assert billing.drop(billing.index[5:8]).tolist() == pytest.approx([15.0] * 9)
    room.fields["tariff_class"].control.value = "교육용(을) 고압A 선택I"
    assert "energy_peak_krw" in room.result.bills.columns
    room.fields["contract_kw"].control.value = 5
    assert "계약전력 5 kW를 넘습니다" in room.tariff_note.value


def test_calendar_edit_changes_the_year(room: ui.RoomApp) -> None:
    before = room.result.mean_utilization
    room.fields["terms"].control.value = "2026-03-03 ~ 2026-07-17 1학기"
    # the 2nd-term exam weeks are now outside every term: said beside the exams box
    assert "시험 기간을 확인하세요" in room.fields["exams"].error.value
    room.fields["exams"].control.value = "2026-04-27 ~ 2026-04-30 중간고사"
    assert room.fields["exams"].error.value == ""
    assert room.result.mean_utilization < before
    room.fields["closures"].control.value = "2026-04-06 ~ 2026-04-10 봄 방학"
    day = room.result.utilization.loc["2026-04-07 10:00", "day_type"]
    assert day == "closed"


def test_sensitivity_metric_switch_and_bad_value(room: ui.RoomApp) -> None:
    sens = ui.sensitivity_app(room)
    assert sens.table.iloc[0]["key"] == "capex_scale"
    # a bad room input keeps the last good inputs for the followers
    room.fields["after_school_end_h"].control.value = 12
    sens.metric.value = "used_gpu_h"
    assert sens.table.iloc[0]["key"] in ("class_frac", "always_on_frac")
    assert "GPU-시간" in sens.chart.figure.layout.title.text
    assert sens.table is not None
    assert sens.table["base_krw"].iloc[0] == pytest.approx(room.result.cost_per_used_gpu_h)
    # the per-hour cost in whole won, as §4 shows it (the trial read "지금: 1만 원")
    assert f"(지금: {room.result.cost_per_used_gpu_h:,.0f} 원 / GPU-시간)" in \
        sens.chart.figure.layout.title.text
    labels = list(sens.chart.figure.data[0].y)
    assert any(label.endswith("(0원↔1억원)") for label in labels), labels
    sens.metric.options = [*sens.metric.options, ("?", "nonsense")]
    sens.metric.value = "nonsense"  # a browser can send any value
    assert "알 수 없는 값" in sens.status.value


def test_export_writes_csv_and_html_to_a_session_temp_folder(room: ui.RoomApp) -> None:
    panel = ui.export_panel(room)
    find_by_class(panel, "lk-export-button").click()
    files = panel.files
    assert set(files) == {"opex_scenario.csv", "opex_summary.html"}
    folder = panel.folder
    assert folder is not None and folder.parent == Path(tempfile.gettempdir())
    assert folder.name.startswith("labkit-opex-")
    assert all(p.parent == folder and p.stat().st_size > 0 for p in files.values())
    assert sorted(p.name for p in folder.iterdir()) == sorted(files)
    rows = list(csv.reader(io.StringIO(files["opex_scenario.csv"].read_text("utf-8-sig"))))
    assert rows[0] == ["section", "key", "value", "unit"]
    keys = {(r[0], r[1]): r[2] for r in rows[1:]}
    assert keys[("input", "pue")] == "1.5"
    assert float(keys[("result", "tco_krw")]) == pytest.approx(room.result.tco_krw)
    assert ("bill", "2026-07.total_krw") in keys
    assert keys[("source", "tariff_verified")] == "False"
    page = files["opex_summary.html"].read_text("utf-8")
    assert page.startswith("<!DOCTYPE html>") and 'lang="ko"' in page
    assert "연간 운영비 요약" in page and "<svg" in page and "<script" not in page
    assert "한전 공식 요금표와 아직 대조하지 않았습니다" in page
    assert "download=\"opex_summary.html\"" in panel.links.value
    assert "data:text/csv" in panel.links.value
    # a second export reuses the same session folder
    panel.export()
    assert panel.folder == folder


def test_export_escapes_user_text(room: ui.RoomApp) -> None:
    from dataclasses import replace

    result = room.result
    assert result is not None
    server = replace(result.design.server, name="<script>alert(1)</script>")
    evil = replace(result, design=replace(result.design, server=server))
    page = ui.summary_html(evil)
    assert "<script>" not in page and "&lt;script&gt;" in page
    inputs = {"terms": "=HYPERLINK(\"http://x\")", "pue": 1.5}
    rows = list(csv.reader(io.StringIO(ui.csv_text(result, inputs))))
    assert ["input", "terms", "'=HYPERLINK(\"http://x\")", ""] in rows
    assert ["input", "pue", "1.5", ""] in rows


def test_key_numbers_table_holds_case1_values() -> None:
    text = ui.key_numbers().to_string()
    for value in ("1억 6,086만 원", "2,295 원", "190 일", "17.4 %"):
        assert value in text


def test_exercises_are_answered_by_the_models() -> None:
    from labkit.ui.exercises import check_answer

    box = ui.exercises()
    assert len(box.children) == 4
    answer = find_by_class(box, "lk-opex-ex1-answer")
    # 10 kW for January's 744 h at the newest table's winter rate, truncated to the won:
    # 7,440 kWh x 109.3 = 813,192원 on the 2026-06-01 table
    gap = load_tariff("교육용(갑) 고압A 선택I")
    answer.value = f"{math.floor(7_440 * gap.energy_krw_per_kwh[Season.WINTER][Band.PEAK]):,}원"
    find_by_class(box, "lk-opex-ex1-check").click()
    assert "정답" in find_by_class(box, "lk-opex-ex1-feedback").value
    from labkit.ui.exercises import Exercise

    assert check_answer(Exercise("opex.ex2", 30.0, 0.05, "kW"), "30")[0] is True
    class_only = Exercise("opex.ex3", 1520 / 8760 * 100, 0.05, "%")  # 17.35 %
    assert check_answer(class_only, "17.4")[0] is True
    assert check_answer(class_only, "17.3")[0] is False  # one decimal place: 17.4


# --- billing demand through the seasons (KEPCO 기본공급약관 제68조, data/tariffs) -----------------

#: The default room's class-hours peak: 1 x 10.2 kW x (0.3 idle + 0.7 x 0.81 util), where
#: util = 0.05 always-on + 0.95 x 0.8 class (data/opex/defaults.csv). [kW, IT]
PEAK_IT_KW = 10.2 * (0.3 + 0.7 * 0.81)
#: February has no class day (vacation weekdays at 0.1): 10.2 x (0.3 + 0.7 x 0.145). [kW, IT]
FEB_IT_KW = 10.2 * (0.3 + 0.7 * (0.05 + 0.95 * 0.1))
#: PUE by month: spring/fall 1.5, summer (Jun-Aug) +0.2, winter (Nov-Feb) -0.1.
PUE = [1.4, 1.4, 1.5, 1.5, 1.5, 1.7, 1.7, 1.7, 1.5, 1.5, 1.4, 1.4]


def test_demand_follows_the_seasons_and_the_ratchet_holds_the_summer_peak(
        room: ui.RoomApp) -> None:
    bills = room.result.bills
    demand = [PEAK_IT_KW * p for p in PUE]
    demand[1] = FEB_IT_KW * PUE[1]
    assert bills["demand_kw"].tolist() == pytest.approx(demand)       # 12.38 ... 15.03 ... 12.38
    # 요금적용전력: the highest of this month's peak and the Dec/Jan/Feb/Jul/Aug/Sep peaks of the
    # last 12 months (the year repeats), at least 30 % of contract power (20 kW -> 6 kW)
    ratchet = max(demand[m - 1] for m in (12, 1, 2, 7, 8, 9))
    expected = [max(d, ratchet, 0.3 * 20) for d in demand]
    assert expected == pytest.approx([15.03378] * 12)
    assert bills["billing_kw"].tolist() == pytest.approx(expected)
    assert room.result.design.contract == 20  # the school's contract, as its card says
    # the chart shows both: bars of each month's peak, the billing demand as a line
    fig = room.demand_chart.figure
    assert list(fig.data[0].y) == pytest.approx(demand)
    assert list(fig.data[1].y) == pytest.approx(expected)
    assert len(set(round(y, 3) for y in fig.data[0].y)) == 4  # four levels: Feb, winter, ...


def test_school_exception_bills_each_months_own_peak(room: ui.RoomApp) -> None:
    room.fields["school_exception"].control.value = True
    demand = [PEAK_IT_KW * p for p in PUE]
    demand[1] = FEB_IT_KW * PUE[1]
    # K-12 rule (data/tariffs school_exception): no ratchet, floor 15 % of 20 kW = 3 kW
    assert room.result.bills["billing_kw"].tolist() == pytest.approx(
        [max(d, 0.15 * 20) for d in demand])
    winter, spring, summer = (room.result.bills["billing_kw"].iloc[m] for m in (0, 3, 6))
    assert winter < spring < summer  # billing demand changes between the seasons


def test_flat_pue_gives_the_flat_demand_of_before(room: ui.RoomApp) -> None:
    room.fields["summer_pue_add"].control.value = 0
    room.fields["winter_pue_add"].control.value = 0
    bills = room.result.bills
    assert bills["demand_kw"].drop(bills.index[1]).tolist() == pytest.approx(
        [PEAK_IT_KW * 1.5] * 11)                                    # 13.2651 kW
    assert bills["billing_kw"].tolist() == pytest.approx([PEAK_IT_KW * 1.5] * 12)


def test_huge_numbers_get_a_message_beside_their_control(room: ui.RoomApp) -> None:
    room.fields["contract_auto"].control.value = False
    for key in ("contract_kw", "staff_krw_per_fte_year", "facility_upgrade_krw",
                "server_price_usd", "fx_krw_per_usd", "rent_usd_per_gpu_hour",
                "students_per_gpu"):
        field = room.fields[key]
        old, good = field.control.value, room.result
        field.control.value = 1e308
        assert "(입력: 1경 이상)" in field.error.value, key   # echoes the input, not "nan"
        assert "nan" not in field.error.value and "⚠" not in room.status.value, key
        assert room.result is good
        field.control.value = old
        assert field.error.value == ""


def test_the_rooms_contract_is_the_one_the_school_card_shows(room: ui.RoomApp) -> None:
    """Issue 25's trial: the card said 계약전력 20 kW and the demand chart's line 18 kW (the
    automatic contract); both now read the school's contract."""
    from labkit.data.school import load_default_case

    school = load_default_case()
    assert room.result.design.contract == school.contract_kw == 20.0
    assert not room.fields["contract_auto"].control.value
    line = room.demand_chart.figure.data[-1]
    assert f"{school.contract_kw:g} kW" in line.name and set(line.y) == {school.contract_kw}
