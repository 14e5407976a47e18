"""labkit.tariff: KEPCO bills against hand-computed bills, bands, seasons, demand, bad input.

Rates are those of data/tariffs/kepco_2026-06-01.yaml (KEPCO table effective 2026-06-01, as
transcribed; unverified), loaded by that date (:data:`TABLE`), so a newer table added by
docs/architecture.md's "how to add a tariff" leaves these bills as they are. Every expected bill
below is worked by hand in the comments: each charge truncated to the won, VAT rounded half up,
fund levy and total truncated to 10 won.
"""

from __future__ import annotations

import math
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit import tariff as T
from labkit.data import DataError
from labkit.data.tariff import load_tariff, tariff_classes, tariff_files
from labkit.validate import InputError

GAP = "교육용(갑) 고압A 선택I"
EUL = "교육용(을) 고압A 선택I"
#: The table the bills below are worked from (its effective date: load_tariff picks it, not a
#: newer one).
TABLE = "2026-06-01"


def hourly(start: str, values: list[float] | float, periods: int | None = None) -> pd.Series:
    """A kW series at hourly steps from ``start`` (Asia/Seoul)."""
    if isinstance(values, list):
        periods = len(values)
    index = pd.date_range(start, periods=periods, freq="h", tz="Asia/Seoul")
    return pd.Series(values, index=index, dtype=float)


@pytest.fixture(scope="module")
def gap() -> T.Tariff:
    return load_tariff(GAP, TABLE)


@pytest.fixture(scope="module")
def eul() -> T.Tariff:
    return load_tariff(EUL, TABLE)


# --- loading ---------------------------------------------------------------------------------

def test_load_tariff_reads_kepco_class_names_and_flags_unverified(gap: T.Tariff) -> None:
    names = tariff_classes()
    for name in (GAP, EUL, "교육용(갑) 저압", "교육용(을) 고압B 선택I", "일반용(갑)I 고압A 선택I",
                 "일반용(을) 고압A 선택I", "산업용(갑)I 고압A 선택I", "산업용(을) 고압A 선택I"):
        assert name in names
    assert gap.base_krw_per_kw_month == 5550
    assert gap.energy_krw_per_kwh[T.Season.SUMMER][T.Band.PEAK] == 123.3
    assert gap.verified is False and gap.effective_date == "2026-06-01"
    # what a student reads is a Korean description; the transcription's URL stays in the file
    assert gap.source.startswith("한국전력 전기요금표(2026-06-01 시행)의 공개 정리본")
    assert "kwise" not in gap.source and "github" not in gap.source and gap.as_of == "2026-11-30"
    text = (Path(__file__).resolve().parents[1] / "data" / "tariffs" /
            "kepco_2026-06-01.yaml").read_text(encoding="utf-8")
    assert ("https://github.com/bakjeucar-boop/kwise/blob/0198b753/data/tariff_kr_20260601.json"
            in text)
    assert not gap.tou and gap.bands == ()


def test_load_tariff_tou_class_has_three_bands(eul: T.Tariff) -> None:
    assert eul.tou and eul.bands == (T.Band.LIGHT, T.Band.MID, T.Band.PEAK)
    assert eul.energy_krw_per_kwh[T.Season.WINTER] == {
        T.Band.LIGHT: 80.5, T.Band.MID: 119.7, T.Band.PEAK: 158.4}
    assert eul.schedule.hours_per_band(T.Season.SUMMER) == {
        T.Band.LIGHT: 10, T.Band.MID: 8, T.Band.PEAK: 6}


def test_load_tariff_rejects_unknown_class_naming_the_field() -> None:
    with pytest.raises(InputError) as err:
        load_tariff("교육용(병)")
    assert err.value.field == "class_name" and err.value.rule == "choice"
    assert GAP in err.value.limit


@pytest.mark.parametrize("as_of", ["2026-06-01", "2026-12-31", "2027-01-01"])
def test_load_tariff_as_of_picks_the_table_in_effect(as_of: str) -> None:
    expected = max(d for d in tariff_files() if d <= as_of)
    assert load_tariff(GAP, as_of).effective_date == expected
    assert load_tariff(GAP).effective_date == max(tariff_files())


@pytest.mark.parametrize(("as_of", "rule"), [("2026-05-31", "at_least"), ("someday", "other")])
def test_load_tariff_rejects_as_of_before_any_table(as_of: str, rule: str) -> None:
    with pytest.raises(InputError) as err:
        load_tariff(GAP, as_of)
    assert err.value.field == "as_of" and err.value.rule == rule


@pytest.fixture
def data_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    src = Path(__file__).resolve().parents[1] / "data" / "tariffs"
    shutil.copytree(src, tmp_path / "tariffs")
    monkeypatch.setenv("LABKIT_DATA", str(tmp_path))
    return tmp_path / "tariffs" / "kepco_2026-06-01.yaml"


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("base_krw_per_kw_month: 5550,", "base_krw_per_kw_month: lots,", "must be float"),
        ("  fund_levy_frac: 0.027", "  fund_levy_frac: 2.7", "fund_levy_frac"),
        ('summer:      {light: ["22-08"]', 'summer:      {light: ["22-09"]', "hour 8"),
        ("summer: [6, 7, 8]", "summer: [6, 7]", "months 1-12"),
        ("tou: reform_2026\n    base_krw_per_kw_month: 6090",
         "tou: nosuch\n    base_krw_per_kw_month: 6090", "unknown tou schedule"),
    ],
)
def test_load_tariff_bad_file_names_file_and_key(data_copy: Path, old: str, new: str,
                                                 message: str) -> None:
    text = data_copy.read_text(encoding="utf-8")
    assert old in text
    data_copy.write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(DataError, match=message) as err:
        load_tariff(GAP if "5550" in old else EUL, TABLE)
    assert "kepco_2026-06-01.yaml" in str(err.value)


def test_the_add_a_tariff_recipe_is_enough(data_copy: Path) -> None:
    """docs/architecture.md "how to add a tariff", followed in a copy of data/: copy the table
    to a file named for its effective date, update source, as_of, effective_date and a rate;
    the loader picks it from that date on, the old table before, and a bill worked by hand from
    the new rate matches."""
    text = data_copy.read_text(encoding="utf-8")
    for old, new in [("effective_date: 2026-06-01", "effective_date: 2027-01-01"),
                     ("as_of: 2026-11-30", "as_of: 2026-12-15"),
                     ("source: >-\n", "source: >-\n  A test table (base rate 6,000). "),
                     ("base_krw_per_kw_month: 5550,", "base_krw_per_kw_month: 6000,")]:
        assert old in text
        text = text.replace(old, new, 1)
    (data_copy.parent / "kepco_2027-01-01.yaml").write_text(text, encoding="utf-8")
    new_table = load_tariff(GAP)
    assert (new_table.effective_date, new_table.base_krw_per_kw_month) == ("2027-01-01", 6000)
    assert load_tariff(GAP, "2026-12-31").base_krw_per_kw_month == 5550
    # January 2027 as January 2026 below, base 15 kW x 6,000 = 90,000: subtotal 90,000 +
    # 813,192 + 66,960 + 37,200 = 1,007,352; VAT 100,735.2 -> 100,735; fund 27,198.504 ->
    # 27,190; total 1,135,277 -> 1,135,270
    bill = T.monthly_bill(new_table, hourly("2027-01-01", 10.0, 744), 50).iloc[0]
    assert (bill["base_krw"], bill["subtotal_krw"], bill["total_krw"]) == (
        90_000, 1_007_352, 1_135_270)


# --- hand-computed bills ---------------------------------------------------------------------

def test_monthly_bill_flat_class_january_by_hand(gap: T.Tariff) -> None:
    # 10 kW for all of January 2026 (744 h), contract 50 kW:
    #   kWh = 744 x 10 = 7,440; demand 10 kW < floor 0.30 x 50 = 15 kW -> billing 15 kW
    #   base    = 15 x 5,550                  =    83,250
    #   energy  = 7,440 x 109.3 (winter)      =   813,192
    #   climate = 7,440 x 9.0                 =    66,960
    #   fuel    = 7,440 x 5.0                 =    37,200
    #   subtotal                              = 1,000,602
    #   VAT     = 100,060.2 -> 100,060;  fund = 27,016.254 -> 27,010 (10-won truncation)
    #   total   = 1,000,602 + 100,060 + 27,010 = 1,127,672 -> 1,127,670
    bill = T.monthly_bill(gap, hourly("2026-01-01", 10.0, 744), 50)
    row = bill.loc[pd.Period("2026-01", "M")]
    assert list(bill.index.astype(str)) == ["2026-01"]
    assert row["days"] == 31 and row["kwh"] == pytest.approx(7440)
    assert row["demand_kw"] == 10 and row["billing_kw"] == 15
    assert (row["base_krw"], row["energy_krw"], row["climate_krw"], row["fuel_krw"]) == (
        83_250, 813_192, 66_960, 37_200)
    assert (row["subtotal_krw"], row["vat_krw"], row["fund_levy_krw"], row["total_krw"]) == (
        1_000_602, 100_060, 27_010, 1_127_670)
    assert "energy_light_krw" not in bill.columns


@pytest.mark.parametrize(
    ("start", "hours", "energy", "total"),
    [
        # July, summer: 7,440 x 123.3 = 917,352; subtotal 83,250 + 917,352 + 66,960 + 37,200
        # = 1,104,762; VAT 110,476.2 -> 110,476; fund 29,828.574 -> 29,820;
        # total 1,245,058 -> 1,245,050
        ("2026-07-01", 744, 917_352, 1_245_050),
        # April, spring/fall, 720 h: kWh 7,200; energy 7,200 x 86.5 = 622,800; climate 64,800;
        # fuel 36,000; subtotal 83,250 + 622,800 + 64,800 + 36,000 = 806,850; VAT 80,685;
        # fund 21,784.95 -> 21,780; total 909,315 -> 909,310
        ("2026-04-01", 720, 622_800, 909_310),
        # November, winter, 720 h: energy 7,200 x 109.3 = 786,960; subtotal 83,250 + 786,960
        # + 64,800 + 36,000 = 971,010; VAT 97,101; fund 26,217.27 -> 26,210;
        # total 1,094,321 -> 1,094,320
        ("2026-11-01", 720, 786_960, 1_094_320),
    ],
)
def test_monthly_bill_flat_class_each_season_by_hand(gap: T.Tariff, start: str, hours: int,
                                                     energy: float, total: float) -> None:
    row = T.monthly_bill(gap, hourly(start, 10.0, hours), 50).iloc[0]
    assert row["energy_krw"] == energy
    assert row["total_krw"] == total


def test_monthly_bill_tou_class_summer_weekday_by_hand(eul: T.Tariff) -> None:
    # Wednesday 2026-07-15, 10 kW every hour, contract 100 kW. Summer bands (2026 reform):
    #   light 22-08 (10 h) 100 kWh x  76.5 =  7,650
    #   mid   08-15, 21-22 (8 h) 80 kWh x 121.2 =  9,696
    #   peak  15-21 (6 h) 60 kWh x 187.1 = 11,226        energy = 28,572
    #   billing demand = max(10, 0.30 x 100) = 30 kW; one day of 31:
    #   base = 30 x 6,090 x 1/31 = 5,893.55 -> 5,893
    #   climate 240 x 9 = 2,160; fuel 240 x 5 = 1,200
    #   subtotal = 5,893 + 28,572 + 2,160 + 1,200 = 37,825
    #   VAT 3,782.5 -> 3,783 (half up); fund 1,021.275 -> 1,020; total 42,628 -> 42,620
    row = T.monthly_bill(eul, hourly("2026-07-15", 10.0, 24), 100).iloc[0]
    assert (row["kwh_light"], row["kwh_mid"], row["kwh_peak"]) == (100, 80, 60)
    assert (row["energy_light_krw"], row["energy_mid_krw"], row["energy_peak_krw"]) == (
        7_650, 9_696, 11_226)
    assert row["energy_krw"] == 28_572 and row["base_krw"] == 5_893
    assert row["subtotal_krw"] == 37_825
    assert (row["vat_krw"], row["fund_levy_krw"], row["total_krw"]) == (3_783, 1_020, 42_620)


def test_monthly_bill_tou_class_winter_weekday_by_hand(eul: T.Tariff) -> None:
    # Tuesday 2026-12-15, 10 kW: winter bands light 22-08 (10 h), mid 08-09, 12-16, 19-22
    # (8 h), peak 09-12, 16-19 (6 h): 100 x 80.5 + 80 x 119.7 + 60 x 158.4
    #   = 8,050 + 9,576 + 9,504 = 27,130
    row = T.monthly_bill(eul, hourly("2026-12-15", 10.0, 24), 100).iloc[0]
    assert (row["energy_light_krw"], row["energy_mid_krw"], row["energy_peak_krw"]) == (
        8_050, 9_576, 9_504)


def test_monthly_bill_saturday_peak_bills_as_mid_and_sunday_holiday_as_light(
    eul: T.Tariff,
) -> None:
    sat = T.monthly_bill(eul, hourly("2026-07-18", 10.0, 24), 100).iloc[0]  # a Saturday
    # peak hours 15-21 move to mid: light 100, mid 80 + 60 = 140, peak 0
    assert (sat["kwh_light"], sat["kwh_mid"], sat["kwh_peak"]) == (100, 140, 0)
    sun = T.monthly_bill(eul, hourly("2026-07-19", 10.0, 24), 100).iloc[0]
    assert (sun["kwh_light"], sun["kwh_mid"], sun["kwh_peak"]) == (240, 0, 0)
    # Monday 2026-08-17, 광복절 대체공휴일: light all day only when listed as a holiday
    workday = T.monthly_bill(eul, hourly("2026-08-17", 10.0, 24), 100).iloc[0]
    holiday = T.monthly_bill(eul, hourly("2026-08-17", 10.0, 24), 100,
                             holidays=["2026-08-17"]).iloc[0]
    assert workday["kwh_peak"] == 60 and holiday["kwh_light"] == 240


@pytest.mark.parametrize(
    ("stamp", "band"),
    [
        ("2026-07-15 07:59", "light"), ("2026-07-15 08:00", "mid"), ("2026-07-15 14:30", "mid"),
        ("2026-07-15 15:00", "peak"), ("2026-07-15 20:59", "peak"), ("2026-07-15 21:00", "mid"),
        ("2026-07-15 22:00", "light"), ("2026-07-15 23:59", "light"),
        ("2026-07-16 00:00", "light"), ("2026-07-16 03:00", "light"),
        ("2026-12-15 09:00", "peak"), ("2026-12-15 12:00", "mid"), ("2026-12-15 16:00", "peak"),
        ("2026-12-15 19:00", "mid"), ("2026-12-15 22:00", "light"),
    ],
)
def test_band_of_across_midnight_and_seasons(eul: T.Tariff, stamp: str, band: str) -> None:
    assert T.band_of(eul, pd.Timestamp(stamp, tz="Asia/Seoul")) == band


@pytest.mark.parametrize(
    ("stamp", "holiday", "band"),
    [  # data/tariffs: Saturdays bill peak hours at mid; Sundays and public holidays all light
        ("2026-07-18 15:00", False, "mid"),  # Saturday, a weekday peak hour
        ("2026-07-18 03:00", False, "light"),  # Saturday, light stays light
        ("2026-07-18 09:00", False, "mid"),  # Saturday, mid stays mid
        ("2026-07-19 15:00", False, "light"),  # Sunday
        ("2026-07-15 15:00", True, "light"),  # a Wednesday holiday
        ("2026-07-15 15:00", False, "peak"),  # the same hour, a working day
        ("2026-07-18 15:00", True, "light"),  # a Saturday holiday
    ],
)
def test_band_of_weekends_and_holidays(eul: T.Tariff, stamp: str, holiday: bool,
                                       band: str) -> None:
    assert T.band_of(eul, stamp, holiday=holiday) == band


def test_band_of_converts_other_time_zones(eul: T.Tariff) -> None:
    # 2026-07-15 06:00 UTC is 15:00 in Seoul: peak
    assert T.band_of(eul, pd.Timestamp("2026-07-15 06:00", tz="UTC")) == T.Band.PEAK


def test_tou_across_midnight_in_a_bill(eul: T.Tariff) -> None:
    # Wed 2026-07-15 20:00 -> Thu 08:00 (12 h): 20 peak, 21 mid, 22..07 light (10 h);
    # loads 1..12 kW in order: peak 1, mid 2, light 3+...+12 = 75
    bill = T.monthly_bill(eul, hourly("2026-07-15 20:00", [float(i) for i in range(1, 13)]), 100)
    row = bill.iloc[0]
    assert (row["kwh_peak"], row["kwh_mid"], row["kwh_light"]) == (1, 2, 75)


def test_tou_before_2026_schedule_crosses_midnight_at_23(eul: T.Tariff) -> None:
    from labkit.data import load_document
    from labkit.data.tariff import TariffFile, _schedule  # the older bands, for comparison

    doc = load_document("tariffs/kepco_2026-06-01.yaml", TariffFile)
    old = T.Tariff(**{**eul.__dict__, "schedule": _schedule(doc, "before_2026", "t")})
    assert T.band_of(old, "2026-07-15 22:00") == T.Band.MID
    assert T.band_of(old, "2026-07-15 23:00") == T.Band.LIGHT
    assert T.band_of(old, "2026-07-16 08:59") == T.Band.LIGHT
    assert T.band_of(old, "2026-07-16 10:00") == T.Band.PEAK


def test_season_boundaries_split_months_and_prices(gap: T.Tariff) -> None:
    # 10 kW from Sun 2026-05-31 23:00 to Mon 2026-06-01 01:00: 1 h in May (spring/fall 86.5),
    # 1 h in June (summer 123.3)
    bill = T.monthly_bill(gap, hourly("2026-05-31 23:00", [10.0, 10.0]), 50)
    assert list(bill.index.astype(str)) == ["2026-05", "2026-06"]
    assert bill["energy_krw"].tolist() == [865, 1_233]


@pytest.mark.parametrize("start", ["2026-03-02 09:05", "2026-03-02 09:00", "2026-03-02 09:10"])
def test_demand_is_the_largest_clock_aligned_15_minute_mean(gap: T.Tariff, start: str) -> None:
    # 5-minute samples that start off the quarter hour: KEPCO's demand windows are clock
    # quarters (:00, :15, :30, :45), whatever the first sample's time
    load = pd.Series([60.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12.0],
                     index=pd.date_range(start, periods=12, freq="5min", tz="Asia/Seoul"))
    bill = T.monthly_bill(gap, load, 100)
    assert bill.index.name == "month" and list(bill.index.astype(str)) == ["2026-03"]
    # brute force: mean of the samples inside each clock quarter that has any
    quarters: dict[pd.Timestamp, list[float]] = {}
    for stamp, kw in load.items():
        quarters.setdefault(stamp.floor("15min"), []).append(kw)
    assert bill["demand_kw"].iloc[0] == max(sum(v) / len(v) for v in quarters.values())


@pytest.mark.parametrize(
    ("prior", "billing_kw"),
    [  # 20 kW on Mon 2026-08-03, contract 100 kW: floor 30 kW; ratchet months 7-9, 12-2 of the
       # 12 months that end with this one (KEPCO 기본공급약관 제68조; data/tariffs)
        ({"2026-07": 80}, 80),  # last month, a ratchet month
        ({"2025-09": 80}, 80),  # 11 months back, a ratchet month
        ({"2025-08": 80}, 30),  # 12 months back: outside the window
        ({"2026-05": 80}, 30),  # not a ratchet month
        ({}, 30),
    ],
)
def test_ratchet_looks_back_eleven_months_at_ratchet_months_only(
        gap: T.Tariff, prior: dict[str, float], billing_kw: float) -> None:
    load = hourly("2026-08-03 09:00", 20.0, 24)
    bill = T.monthly_bill(gap, load, 100, prior_demand_kw=prior)
    assert bill["billing_kw"].tolist() == [billing_kw]


def test_tou_energy_lines_add_up_per_month(eul: T.Tariff) -> None:
    # 10 kW at 23:00 on 2026-05-31 and 20 kW at 00:00 on 2026-06-01, both light hours: each
    # month's energy is its own band lines, not the series' total
    bill = T.monthly_bill(eul, hourly("2026-05-31 23:00", [10.0, 20.0]), 100)
    lines = bill[["energy_light_krw", "energy_mid_krw", "energy_peak_krw"]].sum(axis=1)
    assert bill["energy_krw"].tolist() == lines.tolist()
    assert bill["energy_krw"].iloc[1] > bill["energy_krw"].iloc[0] > 0


@pytest.mark.parametrize(
    ("start", "bands"),
    [  # two hours at 10 kW on a Monday; data/tariffs' 2026 TOU bands by season
        ("2026-11-02 15:00", (0, 10, 10)),  # winter: 12-16 mid, 16-19 peak
        ("2026-10-26 15:00", (0, 0, 20)),  # spring/fall: 15-21 peak
        ("2026-03-02 11:00", (0, 20, 0)),  # spring/fall: 11-12 and 12-13 mid
        ("2026-02-02 11:00", (0, 10, 10)),  # winter: 09-12 peak, 12-16 mid
    ],
)
def test_tou_bill_uses_each_months_season(eul: T.Tariff, start: str,
                                          bands: tuple[int, int, int]) -> None:
    row = T.monthly_bill(eul, hourly(start, [10.0, 10.0]), 100).iloc[0]
    assert (row["kwh_light"], row["kwh_mid"], row["kwh_peak"]) == bands


def test_season_of_every_month(gap: T.Tariff) -> None:
    # data/tariffs: summer June-August, winter November-February, spring/fall the rest
    winter, spring, summer = T.Season.WINTER, T.Season.SPRING_FALL, T.Season.SUMMER
    expected = [winter, winter, spring, spring, spring, summer, summer, summer, spring, spring,
                winter, winter]
    assert [gap.season(m) for m in range(1, 13)] == expected


def test_season_boundary_autumn_to_winter_tou(eul: T.Tariff) -> None:
    # 15:00 on Fri 2026-10-30 is spring/fall peak (111.4); 15:00 on Mon 2026-11-02 is winter
    # mid (12-16, 119.7); 16:00 the same day winter peak (158.4)
    assert T.band_of(eul, "2026-10-30 15:00") == T.Band.PEAK
    assert eul.season(10) == T.Season.SPRING_FALL and eul.season(11) == T.Season.WINTER
    assert T.band_of(eul, "2026-11-02 15:00") == T.Band.MID
    assert T.band_of(eul, "2026-11-02 16:00") == T.Band.PEAK


def test_leap_year_february_has_29_days(gap: T.Tariff) -> None:
    load = hourly("2028-01-01", 10.0, 8784)
    bill = T.monthly_bill(gap, load, 50)
    assert len(bill) == 12
    feb = bill.loc[pd.Period("2028-02", "M")]
    assert feb["days"] == 29 and feb["kwh"] == pytest.approx(29 * 24 * 10)
    # a whole month pays the whole base charge: 15 kW floor x 5,550
    assert feb["base_krw"] == 83_250
    assert bill["kwh"].sum() == pytest.approx(8784 * 10)


# --- billing demand --------------------------------------------------------------------------

def test_billing_demand_floor_and_school_exception(gap: T.Tariff) -> None:
    load = hourly("2026-04-01", 10.0, 720)
    assert T.monthly_bill(gap, load, 100).iloc[0]["billing_kw"] == 30  # 30 % of 100
    school = gap.with_school_exception()
    assert school.school_exception and school.floor_frac == 0.15
    assert T.monthly_bill(school, load, 100).iloc[0]["billing_kw"] == 15  # 15 % of 100
    assert T.monthly_bill(school, load, 50).iloc[0]["billing_kw"] == 10  # demand above floor


def test_billing_demand_ignores_light_hours_and_holidays(gap: T.Tariff) -> None:
    # 60 kW at night (light 22-08), 5 kW in the day: demand counts day hours only
    day = [60.0 if (h >= 22 or h < 8) else 5.0 for h in range(24)]
    load = hourly("2026-04-06", day * 5)  # Mon-Fri
    row = T.monthly_bill(gap, load, 100).iloc[0]
    assert row["demand_kw"] == 5 and row["billing_kw"] == 30
    # a 60 kW Sunday is all light hours
    sunday = hourly("2026-04-05", 60.0, 24)
    assert T.monthly_bill(gap, sunday, 100).iloc[0]["demand_kw"] == 0


def test_billing_demand_averages_fifteen_minutes(gap: T.Tariff) -> None:
    # one-minute data, Monday 2026-04-06 10:00-10:59: 60 kW for 5 minutes, 0 otherwise:
    # the 15-minute window 10:00-10:15 averages 60 x 5 / 15 = 20 kW
    index = pd.date_range("2026-04-06 10:00", periods=60, freq="min", tz="Asia/Seoul")
    load = pd.Series([60.0] * 5 + [0.0] * 55, index=index)
    row = T.monthly_bill(gap, load, 10).iloc[0]
    assert row["demand_kw"] == pytest.approx(20) and row["kwh"] == pytest.approx(5)
    assert bool(row["over_contract"])


def test_billing_demand_averages_each_window_not_only_the_first(gap: T.Tariff) -> None:
    # one-minute data, Monday 2026-04-06 10:00-10:59 at 10 kW but 100 kW for the minute 10:20:
    # the window 10:15-10:30 averages (100 + 14 x 10) / 15 = 16 kW, the others 10 kW
    index = pd.date_range("2026-04-06 10:00", periods=60, freq="min", tz="Asia/Seoul")
    load = pd.Series([100.0 if i == 20 else 10.0 for i in range(60)], index=index)
    assert T.monthly_bill(gap, load, 100).iloc[0]["demand_kw"] == pytest.approx(16)


def test_bill_names_its_tariff_class_and_whether_the_table_is_verified(gap: T.Tariff) -> None:
    frame = T.monthly_bill(gap, DAY, 10)
    assert frame.attrs == {"class_name": GAP, "verified": False}  # the 2026-06-01 file: false
    checked = T.monthly_bill(replace(gap, verified=True), DAY, 10)
    assert checked.attrs == {"class_name": GAP, "verified": True}


def test_zero_levies_floors_and_a_one_minute_demand_interval_are_valid(gap: T.Tariff) -> None:
    # no VAT, no fund levy, no floor, 1-minute demand: a Monday at 4 kW on a 100 kW contract
    # bills billing demand 4 kW (no 30 % floor) and no VAT or levy
    free = replace(gap, vat_frac=0, fund_levy_frac=0, floor_frac=0, school_floor_frac=0,
                   demand_interval_min=1)
    row = T.monthly_bill(free, hourly("2026-04-06", 4.0, 24), 100).iloc[0]
    assert (row["billing_kw"], row["vat_krw"], row["fund_levy_krw"]) == (4, 0, 0)
    assert row["total_krw"] == row["subtotal_krw"] - row["subtotal_krw"] % 10


def test_demand_at_contract_power_is_not_over_it(gap: T.Tariff) -> None:
    # a Monday at 10 kW on a 10 kW contract: demand equals contract power, not above it
    row = T.monthly_bill(gap, hourly("2026-04-06", 10.0, 24), 10).iloc[0]
    assert row["demand_kw"] == 10 and not bool(row["over_contract"])
    assert bool(T.monthly_bill(gap, hourly("2026-04-06", 10.5, 24), 10).iloc[0]["over_contract"])


def test_rounding_counts_float_noise_under_a_millionth_as_the_next_won() -> None:
    # a charge is truncated to the won after removing float noise (below 1e-6 of the unit):
    # 0.29 x 100 is 28.999999999999996 in floats and bills 29; 2.9999996 is 3; 2.999 is 2;
    # to 10 won, 1239.999996 -> 1240 and 1239.9 -> 1230
    from labkit.tariff.bill import _round_half_up, _trunc
    assert _trunc(np.array([0.29 * 100, 2.9999996, 2.999])).tolist() == [29, 3, 2]
    assert _trunc(np.array([1239.999996, 1239.9]), 10).tolist() == [1240, 1230]
    # VAT rounds half away from zero after the same clean-up: 2.4999996 is 2.5 -> 3
    assert _round_half_up(np.array([2.4999996, 2.4999, 2.5, -2.5])).tolist() == [3, 2, 3, -3]


def test_billing_demand_ratchet_carries_summer_peak(gap: T.Tariff) -> None:
    # July at 40 kW, Aug-Oct at 10 kW (contract 100, floor 30): the July peak bills until June
    load = pd.concat([hourly("2026-07-01", 40.0, 744), hourly("2026-08-01", 10.0, 31 * 24),
                      hourly("2026-09-01", 10.0, 30 * 24), hourly("2026-10-01", 10.0, 31 * 24)])
    bill = T.monthly_bill(gap, load, 100)
    assert bill["demand_kw"].tolist() == [40, 10, 10, 10]
    assert bill["billing_kw"].tolist() == [40, 40, 40, 40]
    school = T.monthly_bill(gap.with_school_exception(), load, 100)
    assert school["billing_kw"].tolist() == [40, 15, 15, 15]


def test_billing_demand_spring_peak_does_not_carry(gap: T.Tariff) -> None:
    # March is not a ratchet month: April pays on its own demand (floor 30 kW)
    load = pd.concat([hourly("2026-03-01", 40.0, 744), hourly("2026-04-01", 35.0, 720)])
    assert T.monthly_bill(gap, load, 100)["billing_kw"].tolist() == [40, 35]


def test_billing_demand_prior_months_and_repeat_year(gap: T.Tariff) -> None:
    load = hourly("2026-01-01", 10.0, 8760)
    load[(load.index.month == 12)] = 50.0
    plain = T.monthly_bill(gap, load, 100)
    assert plain["billing_kw"].iloc[0] == 30  # January: December not seen yet
    repeated = T.monthly_bill(gap, load, 100, repeat_year=True)
    assert repeated["billing_kw"].tolist() == [50.0] * 12  # December's peak, a year round
    prior = T.monthly_bill(gap, load, 100, prior_demand_kw={"2025-12": 45.0})
    assert prior["billing_kw"].iloc[0] == 45 and prior["billing_kw"].iloc[11] == 50


def test_contract_based_class_bills_contract_power(gap: T.Tariff) -> None:
    from dataclasses import replace

    flat = replace(gap, base_basis="contract")
    assert T.monthly_bill(flat, hourly("2026-04-01", 10.0, 720), 80).iloc[0]["billing_kw"] == 80


# --- the shared check case -------------------------------------------------------------------

def test_tariff_case1_flat_load_year_matches_all_in_rate(gap: T.Tariff) -> None:
    # cases/economics.md case 1 at u = 100 %: 15.3 kW all year. The case uses the all-in rate
    # ((3 x 123.3 + 5 x 86.5 + 4 x 109.3) / 12 + 14.0) x 1.127 = 132.197 KRW/kWh and
    # 15.3 x 5,550 x 12 x 1.127 = 1,148,390 KRW of base charge a year.
    assert T.average_energy_rate_krw_per_kwh(gap) == pytest.approx(132.197, abs=5e-4)
    bill = T.monthly_bill(gap, hourly("2026-01-01", 15.3, 8760), 20, repeat_year=True)
    base_with_levies = bill["base_krw"].sum() * 1.127
    assert base_with_levies == pytest.approx(1_148_390, rel=0.005)
    energy_with_levies = bill["total_krw"].sum() - base_with_levies
    assert energy_with_levies == pytest.approx(17_718_113, rel=0.005)  # 134,028 kWh x 132.197
    assert bill["total_krw"].sum() == pytest.approx(160_866_503 - 142_000_000, rel=0.005)


def test_average_rate_tou_education_b_about_134(eul: T.Tariff) -> None:
    # weekday weights 10/8/6 h: summer 119.05, spring/fall 90.025, winter 113.04;
    # (3 x 119.05 + 5 x 90.025 + 4 x 113.04) / 12 = 104.95; (104.95 + 14) x 1.127 = 134.06
    assert T.average_energy_rate_krw_per_kwh(eul) == pytest.approx(134.06, abs=0.01)
    assert T.all_in_rate_krw_per_kwh(eul, "summer", "peak") == pytest.approx(
        (187.1 + 14) * 1.127)


# --- properties ------------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(kw=st.lists(st.floats(0, 500), min_size=2, max_size=200),
       start_h=st.integers(0, 24 * 365 - 200), contract=st.floats(1, 1000))
def test_bill_lines_add_up_and_never_go_negative(kw: list[float], start_h: int,
                                                 contract: float) -> None:
    tariff = load_tariff(EUL, TABLE)
    start = pd.Timestamp("2026-01-01", tz="Asia/Seoul") + pd.Timedelta(hours=start_h)
    load = pd.Series(kw, index=pd.date_range(start, periods=len(kw), freq="h"))
    bill = T.monthly_bill(tariff, load, contract)
    assert bill["kwh"].sum() == pytest.approx(sum(kw), abs=1e-6)
    bands = bill[["energy_light_krw", "energy_mid_krw", "energy_peak_krw"]].sum(axis=1)
    assert (bands == bill["energy_krw"]).all()
    assert (bill["subtotal_krw"] == bill[["base_krw", "energy_krw", "climate_krw",
                                          "fuel_krw"]].sum(axis=1)).all()
    due = bill["subtotal_krw"] + bill["vat_krw"] + bill["fund_levy_krw"]
    assert ((due - bill["total_krw"] >= 0) & (due - bill["total_krw"] < 10)).all()
    assert (bill["total_krw"] % 10 == 0).all() and (bill.select_dtypes("number") >= 0).all().all()
    assert (bill["billing_kw"] >= 0.3 * contract - 1e-9).all()


@settings(max_examples=30, deadline=None)
@given(scale=st.floats(1.01, 3))
def test_more_load_never_costs_less(scale: float) -> None:
    tariff = load_tariff(GAP, TABLE)
    rng = np.random.default_rng(0)
    load = hourly("2026-03-01", rng.uniform(0, 20, 24 * 30).tolist())
    a = T.monthly_bill(tariff, load, 50)["total_krw"].sum()
    b = T.monthly_bill(tariff, load * scale, 50)["total_krw"].sum()
    assert b >= a


# --- bad input -------------------------------------------------------------------------------

def _gap_series() -> pd.Series:
    s = hourly("2026-01-01", 10.0, 48)
    return s.drop(s.index[5])


def bill(load: object, contract: float = 10, **kwargs: object) -> pd.DataFrame:
    return T.monthly_bill(load_tariff(GAP, TABLE), load, contract, **kwargs)  # type: ignore[arg-type]


DAY = hourly("2026-01-01", 1.0, 24)
H = pd.Timedelta(hours=1)
T0 = pd.Timestamp("2026-01-01", tz="Asia/Seoul")


def stamps(values: list[float], *offsets: pd.Timedelta) -> pd.Series:
    """A kW series at ``T0 + offset`` for each offset (to build uneven or unsorted series)."""
    return pd.Series(values, index=pd.DatetimeIndex([T0 + o for o in offsets]), dtype=float)


NS = pd.Timedelta(1, "ns")
BILL_ROWS = [
    # (load_kw, contract_kw, field, rule, the value reported, how the message starts): the bad
    # sample is never the first, so the message must name the right one
    (hourly("2026-01-01", [1.0, 2.0, -2.0]), 10, "load_kw", "non_negative", -2.0,
     "load_kw must be >= 0 kW; 2026-01-01 02:00:00+09:00 is -2.0"),
    (hourly("2026-01-01", [1.0, math.nan]), 10, "load_kw", "finite", math.nan,
     "load_kw must be finite; 2026-01-01 01:00:00+09:00 is nan"),
    (hourly("2026-01-01", [1.0, 3.0, math.inf]), 10, "load_kw", "finite", math.inf,
     "load_kw must be finite; 2026-01-01 02:00:00+09:00 is inf"),
    (pd.Series([1.0, 2.0], index=pd.date_range("2026-01-01", periods=2, freq="h")), 10,
     "load_kw", "other", "index", "load_kw needs a tz-aware DatetimeIndex (Asia/Seoul)"),
    # 05:00 missing: the step changes at 06:00
    (_gap_series(), 10, "load_kw", "other", "2026-01-01 06:00:00+09:00",
     "load_kw must be evenly spaced in time (no gaps, duplicates or unsorted stamps); the step "
     "changes at 2026-01-01 06:00:00+09:00"),
    # unsorted (the first step goes back) and a duplicate (the first step is 0): the second
    # stamp is named
    (stamps([1.0, 2.0, 3.0], H, 0 * H, 2 * H), 10, "load_kw", "other",
     "2026-01-01 00:00:00+09:00", "load_kw must be evenly spaced"),
    (stamps([1.0, 2.0, 3.0], 0 * H, 0 * H, H), 10, "load_kw", "other",
     "2026-01-01 00:00:00+09:00", "load_kw must be evenly spaced"),
    # two stamps alike: a step of 0
    (stamps([1.0, 2.0], H, H), 10, "load_kw", "other", "2026-01-01 01:00:00+09:00",
     "load_kw must be evenly spaced"),
    # even 1 ns steps are even, but finer than a second
    (stamps([1.0, 2.0, 3.0], 0 * NS, NS, 2 * NS), 10, "load_kw", "other", "1e-09 s",
     "load_kw must be hourly or finer"),
    # steps of 1 ns then 2 ns: the change is at the third stamp
    (stamps([1.0, 2.0, 3.0], 0 * NS, NS, 3 * NS), 10, "load_kw", "other",
     str(T0 + 3 * NS), "load_kw must be evenly spaced"),
    (pd.Series(1.0, index=pd.date_range("2026-01-01", periods=5, freq="2h",
                                        tz="Asia/Seoul")), 10, "load_kw", "other", "7200 s",
     "load_kw must be hourly or finer, with a step that divides one hour; got 7200 s"),
    (pd.Series(1.0, index=pd.date_range("2026-01-01", periods=5, freq="7min",
                                        tz="Asia/Seoul")), 10, "load_kw", "other", "420 s",
     "load_kw must be hourly or finer"),
    (pd.Series(1.0, index=pd.date_range("2026-01-01", periods=5, freq="1500ms",
                                        tz="Asia/Seoul")), 10, "load_kw", "other", "1.5 s",
     "load_kw must be hourly or finer"),
    (hourly("2026-01-01", [1.0]), 10, "load_kw", "other", 1,
     "load_kw needs at least two samples to show its step"),
    ([1.0, 2.0], 10, "load_kw", "other", "list",
     "load_kw must be a pandas Series of kW with a DatetimeIndex"),
    (pd.Series(["a", "b"], index=pd.date_range("2026-01-01", periods=2, freq="h",
                                               tz="Asia/Seoul")), 10, "load_kw", "number",
     pd.Series(["a"]).dtype, "load_kw must hold numbers (kW)"),  # the input's own dtype
    (hourly("2026-01-01", [1.0, 2.0]), 0, "contract_kw", "positive", 0,
     "contract_kw must be > 0, got 0"),
    (hourly("2026-01-01", [1.0, 2.0]), -5, "contract_kw", "positive", -5,
     "contract_kw must be > 0, got -5"),
    (hourly("2026-01-01", [1.0, 2.0]), math.nan, "contract_kw", "finite", math.nan,
     "contract_kw must be finite"),
]
BAD_INPUTS = [
    # (call, field, rule): monthly_bill's load and contract rows above, then the rest
    *[((lambda load=load, contract=contract: bill(load, contract)), field, rule, value, words)
      for load, contract, field, rule, value, words in BILL_ROWS],
    (lambda: T.monthly_bill("교육용(갑)", DAY, 10), "tariff", "other", "str",  # type: ignore[arg-type]
     "tariff must be a labkit.tariff.Tariff (see load_tariff)"),
    (lambda: bill(pd.Series([1.0], index=pd.date_range("2026-01-01", periods=1, freq="h"))),
     "load_kw", "other", "index",
     "load_kw needs a tz-aware DatetimeIndex (Asia/Seoul), e.g. pd.date_range('2026-01-01', "
     "periods=8760, freq='h', tz='Asia/Seoul')"),
    (lambda: bill(hourly("2026-01-01", [])), "load_kw", "other", 0, "load_kw is empty"),
    (lambda: bill(DAY, holidays=["not a day"]), "holidays", "other",
     "Unknown datetime string format, unable to parse: not a day",
     "holidays must be dates: Unknown datetime string format"),
    *[((lambda kw=kw: replace(load_tariff(GAP, TABLE), **kw)), field, rule, *detail)  # type: ignore[var-annotated]
      for kw, field, rule, *detail in [
        ({"base_krw_per_kw_month": -1}, "base_krw_per_kw_month", "non_negative"),
        ({"energy_krw_per_kwh": {}}, "energy_krw_per_kwh.summer", "other", None,
         f"{GAP}: no energy rates for summer"),
        ({"energy_krw_per_kwh": {s: 5 for s in T.Season}}, "energy_krw_per_kwh.summer", "other",
         5, f"{GAP}: no energy rates for summer"),
        ({"energy_krw_per_kwh": {s: {b: -1 for b in T.Band} for s in T.Season}},
         "energy_krw_per_kwh.summer.light", "non_negative"),
        ({"season_of_month": ("winter",) * 11}, "season_of_month", "other", ("winter",) * 11,
         "season_of_month needs 12 entries"),
        # a flat class bills one rate: the bands may not differ
        ({"energy_krw_per_kwh": {s: {"light": 90, "mid": 100, "peak": 100} for s in T.Season}},
         "energy_krw_per_kwh.summer", "other", {"light": 90, "mid": 100, "peak": 100},
         f"{GAP}: a flat class has one energy rate per season, the same for every band"),
        ({"climate_krw_per_kwh": math.nan}, "climate_krw_per_kwh", "finite"),
        ({"fuel_krw_per_kwh": math.inf}, "fuel_krw_per_kwh", "finite"),
        ({"fund_levy_frac": 2}, "fund_levy_frac", "fraction"),
        ({"vat_frac": -0.1}, "vat_frac", "fraction"),
        ({"floor_frac": 1.5}, "floor_frac", "fraction"),
        ({"school_floor_frac": 2}, "school_floor_frac", "fraction"),
        ({"demand_interval_min": 0}, "demand_interval_min", "integer"),
        ({"demand_interval_min": 7}, "demand_interval_min", "other", 7,
         "demand_interval_min must divide 60"),
        ({"ratchet_months": (13,)}, "ratchet_months", "at_most", 13,
         "ratchet_months must be <= 12 (12), got 13"),
        ({"ratchet_months": (0,)}, "ratchet_months", "integer"),
        ({"base_basis": "kwh"}, "base_basis", "choice"),
    ]],
    (lambda: load_tariff(GAP, TABLE).season(0), "month", "integer"),
    # a TOU schedule needs 24 hourly bands per season, by season
    (lambda: T.TouSchedule("s", ("light",) * 24), "weekday.summer", "other", None,  # type: ignore[arg-type]
     "schedule s: summer needs 24 hourly bands"),
    (lambda: T.TouSchedule("s", {x: ("light",) * 23 for x in T.Season}), "weekday.summer",  # type: ignore[misc]
     "other", ("light",) * 23, "schedule s: summer needs 24 hourly bands"),
    (lambda: load_tariff(GAP, TABLE).season(13), "month", "at_most", 13,
     "month must be <= 12 (12), got 13"),
    (lambda: bill(DAY, repeat_year=True), "repeat_year", "other", 1,
     "repeat_year needs exactly 12 consecutive months, the series has 1"),
    (lambda: bill(DAY, prior_demand_kw={"soon": 3}), "prior_demand_kw", "other", "soon",
     "prior_demand_kw keys must be months"),
    (lambda: bill(DAY, prior_demand_kw={"2025-12": -1}), "prior_demand_kw.2025-12",
     "non_negative"),
    # hours 15-21 in no band; hour 7 twice; hour 25; not a range; no such band
    (lambda: T.parse_hour_ranges("t", {"light": ["22-08"], "mid": ["08-15"]}), "t", "other",
     [15, 16, 17, 18, 19, 20, 21], "t: hours [15, 16, 17, 18, 19, 20, 21] are in no band"),
    (lambda: T.parse_hour_ranges("t", {"light": ["22-08", "07-09"], "mid": ["09-22"]}),
     "t.light", "other", "07-09", "t.light: hour 7 is already in band light"),
    (lambda: T.parse_hour_ranges("t", {"light": ["25-08"]}), "t.light", "other", "25-08",
     "t.light: bad hour range '25-08'"),
    # hour 24 starts nothing; a range ends at 24 at the latest; an empty range
    (lambda: T.parse_hour_ranges("t", {"light": ["24-08"]}), "t.light", "other", "24-08",
     "t.light: bad hour range '24-08'"),
    (lambda: T.parse_hour_ranges("t", {"light": ["22-25"]}), "t.light", "other", "22-25",
     "t.light: bad hour range '22-25'"),
    (lambda: T.parse_hour_ranges("t", {"light": ["05-05"]}), "t.light", "other", "05-05",
     "t.light: bad hour range '05-05'"),
    (lambda: T.parse_hour_ranges("t", {"light": ["22"]}), "t.light", "other", "22",
     "t.light: hour range must look like '22-08', got '22'"),
    (lambda: T.parse_hour_ranges("t", {"dark": ["00-24"]}), "t.dark", "choice"),
]


@pytest.mark.parametrize("row", BAD_INPUTS,
                         ids=[f"{row[1]}-{row[2]}-{i}" for i, row in enumerate(BAD_INPUTS)])
def test_bad_input_raises_a_value_error_naming_the_field_and_rule(row: tuple) -> None:  # type: ignore[type-arg]
    call, field, rule, *detail = row
    with pytest.raises(InputError) as err:
        call()
    assert isinstance(err.value, ValueError)
    assert (err.value.field, err.value.rule) == (field, rule)
    if detail:  # the rejected value as reported, and how the message starts
        value, words = detail
        reported = err.value.value
        assert reported == value or (reported != reported and value != value)  # NaN is NaN
        assert str(err.value).startswith(words), str(err.value)


def test_tou_schedule_from_plain_strings_holds_bands_read_only() -> None:
    weekday = {x: ("light",) * 8 + ("mid",) * 16 for x in T.Season}
    sched = T.TouSchedule("s", weekday, "peak", "mid")  # type: ignore[arg-type]
    assert {type(b) for h in sched.weekday.values() for b in h} == {T.Band}
    assert type(sched.saturday_peak_band) is T.Band and type(sched.sunday_holiday_band) is T.Band
    assert sched.hours_per_band(T.Season.SUMMER) == {T.Band.LIGHT: 8, T.Band.MID: 16,
                                                     T.Band.PEAK: 0}
    with pytest.raises(TypeError):
        sched.weekday[T.Season.SUMMER] = ()  # type: ignore[index]
    weekday[T.Season.SUMMER] = ("peak",) * 24  # the caller's dict is copied, not kept
    assert sched.weekday[T.Season.SUMMER][0] == T.Band.LIGHT


def test_parse_hour_ranges_whole_day_and_midnight() -> None:
    assert T.parse_hour_ranges("t", {"light": ["00-24"]}) == (T.Band.LIGHT,) * 24
    # "22-00" is 22:00-24:00 (two hours)
    hours = T.parse_hour_ranges("t", {"light": ["22-00", "00-08"], "mid": ["08-22"]})
    assert [h for h, b in enumerate(hours) if b == T.Band.LIGHT] == [*range(8), 22, 23]
    hours = T.parse_hour_ranges("t", {"light": ["22-08"], "mid": ["08-22"]})
    assert hours[23] == hours[0] == hours[7] == T.Band.LIGHT and hours[8] == T.Band.MID
