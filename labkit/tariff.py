"""KEPCO electricity bills: seasons, time-of-use bands, billing demand, levies and rounding.

Pure: numbers in, numbers out; no widgets, no I/O. The tariff tables themselves are data
(one file per table in ``data/tariffs/``), loaded by :func:`labkit.data.tariff.load_tariff`.

How KEPCO bills a month (KEPCO 기본공급약관 and its 시행세칙; KEPCO bill calculation guide):

- **기본요금** (base charge) = 요금적용전력 (billing demand) [kW] x base rate [KRW/kW·month].
  Billing demand is the largest 15-minute average demand measured in mid/peak hours (light
  hours excluded) of this month and of the Dec/Jan/Feb/Jul/Aug/Sep bills within the last
  12 months, but at least ``floor_frac`` (30 %) of contract power (약관 제68조). K-12 schools may
  apply for the special rule: this month only, 15 % floor (시행세칙 별표4 8.).
- **전력량요금** (energy charge) = kWh x the rate of the season (summer Jun-Aug, spring/fall
  Mar-May and Sep-Oct, winter Nov-Feb) and, for time-of-use classes, of the band (경부하 light,
  중간부하 mid, 최대부하 peak). Saturdays bill peak hours at the mid rate; Sundays and public
  holidays bill every hour at the light rate.
- **기후환경요금** (climate/environment) and **연료비조정요금** (fuel-cost adjustment): KRW/kWh.
- 전기요금계 (subtotal) = base + energy + climate + fuel; **부가가치세** (VAT) = 10 % of it;
  **전력산업기반기금** (fund levy) = 2.7 % of it (from 2025-07-01).

Rounding, as on a KEPCO bill: each charge (base, energy per band, climate, fuel) is truncated to
the won (원 미만 절사); VAT is rounded half up to the won (원 미만 4사5입); the fund levy and the
amount due are truncated to 10 won (10원 미만 절사). kWh are not rounded.

Simplifications (documented, not hidden): a "month" is the calendar month in Asia/Seoul time,
not the meter-reading cycle (검침일); a partial month's base charge is prorated by the time the
series covers (KEPCO prorates by days, 일할계산); power-factor charges, excess-demand penalties
and the K-12 seasonal discounts are not modelled.

Used in: notebooks/07_opex_lab.ipynb
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import date
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Literal

import numpy as np
import pandas as pd

from labkit import validate

__all__ = [
    "TZ",
    "Band",
    "Season",
    "Tariff",
    "TouSchedule",
    "all_in_rate_krw_per_kwh",
    "average_energy_rate_krw_per_kwh",
    "band_of",
    "monthly_bill",
    "parse_hour_ranges",
]

TZ = "Asia/Seoul"
_BANDS: tuple[str, ...] = ("light", "mid", "peak")
_NS_PER_S = 1_000_000_000


class Season(StrEnum):
    """KEPCO's seasons for energy charges (계절)."""

    SUMMER = "summer"
    SPRING_FALL = "spring_fall"
    WINTER = "winter"


class Band(StrEnum):
    """KEPCO's time-of-use load bands (계시별 부하 시간대), cheapest first."""

    LIGHT = "light"
    MID = "mid"
    PEAK = "peak"


def parse_hour_ranges(field_name: str, ranges: Mapping[str, Iterable[str]]) -> tuple[Band, ...]:
    """Turn ``{"light": ["22-08"], "mid": [...], "peak": [...]}`` into 24 hourly bands.

    Parameters
    ----------
    field_name : str
        Name used in errors (e.g. ``"tou_schedules.reform_2026.winter"``).
    ranges : mapping of band name -> iterable of "HH-HH"
        Hour ranges [start, end) in local time; a range may cross midnight ("22-08" is 22:00
        to 08:00). Every hour of the day must belong to exactly one band.

    Returns
    -------
    tuple of Band
        24 entries, entry ``h`` the band of the hour starting at h:00.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For an unknown band, a malformed range, an hour in two bands or an hour in none.
    """
    hours: list[Band | None] = [None] * 24
    for band_name, spans in ranges.items():
        band = Band(validate.one_of(f"{field_name}.{band_name}", band_name, _BANDS))
        for span in spans:
            where = f"{field_name}.{band_name}"
            parts = str(span).split("-")
            if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
                raise validate.InputError(
                    where, "other", span,
                    f"{where}: hour range must look like '22-08', got {span!r}")
            start, end = (int(p) for p in parts)
            length = (end - start) % 24 or (24 if (start, end) == (0, 24) else 0)
            if not (0 <= start <= 23 and 0 <= end <= 24) or length == 0:
                raise validate.InputError(where, "other", span,
                                          f"{where}: bad hour range {span!r}")
            for h in ((start + i) % 24 for i in range(length)):
                if hours[h] is not None:
                    raise validate.InputError(
                        where, "other", span,
                        f"{where}: hour {h} is already in band {hours[h]}")
                hours[h] = band
    missing = [h for h, b in enumerate(hours) if b is None]
    if missing:
        raise validate.InputError(field_name, "other", missing,
                                  f"{field_name}: hours {missing} are in no band")
    return tuple(b for b in hours if b is not None)


@dataclass(frozen=True)
class TouSchedule:
    """Which load band each hour is in, per season, with the weekend/holiday rules.

    Parameters
    ----------
    name : str
        The schedule's name in the tariff file (``"reform_2026"``, ``"before_2026"``).
    weekday : mapping of Season -> 24 Bands
        Band of each hour on Monday-Friday (see :func:`parse_hour_ranges`).
    saturday_peak_band : Band, default MID
        What peak hours count as on Saturdays.
    sunday_holiday_band : Band, default LIGHT
        The band of every hour on Sundays and public holidays.

    Used in: notebooks/07_opex_lab.ipynb
    """

    name: str
    weekday: Mapping[Season, tuple[Band, ...]]
    saturday_peak_band: Band = Band.MID
    sunday_holiday_band: Band = Band.LIGHT

    def __post_init__(self) -> None:
        clean = {}
        for season in Season:
            hours = self.weekday.get(season) if isinstance(self.weekday, Mapping) else None
            if hours is None or len(hours) != 24:
                raise validate.InputError(f"weekday.{season}", "other", hours,
                                          f"schedule {self.name}: {season} needs 24 hourly bands")
            clean[season] = tuple(Band(b) for b in hours)
        object.__setattr__(self, "weekday", MappingProxyType(clean))
        object.__setattr__(self, "saturday_peak_band", Band(self.saturday_peak_band))
        object.__setattr__(self, "sunday_holiday_band", Band(self.sunday_holiday_band))

    def hours_per_band(self, season: Season) -> dict[Band, int]:
        """Return how many weekday hours each band has in ``season`` (light/mid/peak: 10/8/6)."""
        hours = self.weekday[season]
        return {b: sum(1 for h in hours if h == b) for b in Band}


@dataclass(frozen=True)
class Tariff:
    """One KEPCO tariff class with its adders and billing-demand rules.

    Build it with :func:`labkit.data.tariff.load_tariff` (from the YAML file); the fields are
    those of a KEPCO tariff table.

    Parameters
    ----------
    class_name : str
        KEPCO's own name, e.g. ``"교육용(갑) 고압A 선택I"``.
    tou : bool
        True for time-of-use classes (energy rate by band); False for flat classes (one rate
        per season; the schedule still defines the hours in which demand is measured).
    base_krw_per_kw_month : float
        기본요금 rate. [KRW/kW per month]
    energy_krw_per_kwh : mapping of Season -> mapping of Band -> float
        전력량요금 rates (all three bands equal for a flat class). [KRW/kWh]
    schedule : TouSchedule
        Load bands by hour.
    season_of_month : tuple of 12 Season
        Entry ``m - 1`` is the season of month ``m``.
    climate_krw_per_kwh, fuel_krw_per_kwh : float
        기후환경요금 and 연료비조정요금 (the latter may be negative). [KRW/kWh]
    fund_levy_frac, vat_frac : float
        전력산업기반기금 and VAT, fractions of the subtotal. [fraction]
    demand_bands : tuple of Band, default (MID, PEAK)
        Bands in which billing demand is measured (light hours excluded).
    demand_interval_min : int, default 15
        Demand is the average over this many minutes. [min]
    ratchet_months : tuple of int, default (7, 8, 9, 12, 1, 2)
        Months whose demand counts for the next 11 months' bills; empty: this month only.
    floor_frac : float, default 0.30
        Billing demand floor as a fraction of contract power. [fraction]
    school_floor_frac : float, default 0.15
        The floor under the K-12 special rule (:meth:`with_school_exception`). [fraction]
    base_basis : {"billing_demand", "contract"}, default "billing_demand"
        What the base charge is billed on ("contract": customers without a demand meter).
    holiday_kinds : tuple of str, default ("public", "substitute")
        Kinds of calendar holidays that bill at the holiday band.
    effective_date, source, as_of : str
        Provenance of the table.
    verified : bool
        False while the figures are not checked against KEPCO's official table.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        Naming the field for a negative or non-finite rate, a fraction outside [0, 1], a month
        outside 1-12 or an unknown band.

    Used in: notebooks/07_opex_lab.ipynb
    """

    class_name: str
    tou: bool
    base_krw_per_kw_month: float
    energy_krw_per_kwh: Mapping[Season, Mapping[Band, float]]
    schedule: TouSchedule
    season_of_month: tuple[Season, ...]
    climate_krw_per_kwh: float
    fuel_krw_per_kwh: float
    fund_levy_frac: float
    vat_frac: float
    demand_bands: tuple[Band, ...] = (Band.MID, Band.PEAK)
    demand_interval_min: int = 15
    ratchet_months: tuple[int, ...] = (7, 8, 9, 12, 1, 2)
    floor_frac: float = 0.30
    school_floor_frac: float = 0.15
    base_basis: Literal["billing_demand", "contract"] = "billing_demand"
    holiday_kinds: tuple[str, ...] = ("public", "substitute")
    effective_date: str = ""
    source: str = ""
    as_of: str = ""
    verified: bool = False
    school_exception: bool = field(default=False)

    def __post_init__(self) -> None:
        validate.non_negative("base_krw_per_kw_month", self.base_krw_per_kw_month)
        rates: dict[Season, MappingProxyType[Band, float]] = {}
        for season in Season:
            per_band = self.energy_krw_per_kwh.get(season)
            if not isinstance(per_band, Mapping):
                raise validate.InputError(f"energy_krw_per_kwh.{season}", "other", per_band,
                                          f"{self.class_name}: no energy rates for {season}")
            rates[season] = MappingProxyType({
                b: validate.non_negative(f"energy_krw_per_kwh.{season}.{b}", per_band.get(b))
                for b in Band})
        object.__setattr__(self, "energy_krw_per_kwh", MappingProxyType(rates))
        if len(self.season_of_month) != 12:
            raise validate.InputError("season_of_month", "other", self.season_of_month,
                                      "season_of_month needs 12 entries")
        object.__setattr__(self, "season_of_month",
                           tuple(Season(s) for s in self.season_of_month))
        validate.finite("climate_krw_per_kwh", self.climate_krw_per_kwh)
        validate.finite("fuel_krw_per_kwh", self.fuel_krw_per_kwh)
        validate.fraction("fund_levy_frac", self.fund_levy_frac, allow_zero=True)
        validate.fraction("vat_frac", self.vat_frac, allow_zero=True)
        validate.fraction("floor_frac", self.floor_frac, allow_zero=True)
        validate.fraction("school_floor_frac", self.school_floor_frac, allow_zero=True)
        interval = validate.integer("demand_interval_min", self.demand_interval_min, minimum=1)
        if 60 % interval:
            raise validate.InputError("demand_interval_min", "other", interval,
                                      "demand_interval_min must divide 60")
        for m in self.ratchet_months:
            validate.at_most("ratchet_months", validate.integer("ratchet_months", m, minimum=1),
                             12, "12")
        object.__setattr__(self, "demand_bands", tuple(Band(b) for b in self.demand_bands))
        validate.one_of("base_basis", self.base_basis, ("billing_demand", "contract"))

    @property
    def bands(self) -> tuple[Band, ...]:
        """The bands the bill shows energy lines for: three for TOU, none for flat classes."""
        return tuple(Band) if self.tou else ()

    def season(self, month: int) -> Season:
        """Return the season of calendar month ``month`` (1-12)."""
        m = validate.integer("month", month, minimum=1)
        return self.season_of_month[int(validate.at_most("month", m, 12, "12")) - 1]

    def with_school_exception(self) -> Tariff:
        """Return this tariff under the K-12 special rule (시행세칙 별표4 8., on application).

        Billing demand becomes this month's demand only (no ratchet) with a floor of
        ``school_floor_frac`` (15 %) of contract power. The rule's seasonal discounts are not
        modelled.
        """
        return replace(self, floor_frac=self.school_floor_frac, ratchet_months=(),
                       school_exception=True)


def band_of(tariff: Tariff, when: pd.Timestamp | str, *, holiday: bool = False) -> Band:
    """Return the load band ``when`` (local Asia/Seoul time) bills at.

    Parameters
    ----------
    tariff : Tariff
        Gives the schedule and the seasons.
    when : pandas.Timestamp or str
        A moment; tz-aware values are converted to Asia/Seoul, naive ones are taken as local.
    holiday : bool, default False
        Whether the day is a public holiday (bills at the holiday band).

    Returns
    -------
    Band
    """
    ts = pd.Timestamp(when)
    if ts.tzinfo is not None:
        ts = ts.tz_convert(TZ)
    sched = tariff.schedule
    if holiday or ts.day_of_week == 6:
        return sched.sunday_holiday_band
    band = sched.weekday[tariff.season(ts.month)][ts.hour]
    if ts.day_of_week == 5 and band == Band.PEAK:
        return sched.saturday_peak_band
    return band


def all_in_rate_krw_per_kwh(tariff: Tariff, season: Season | str,
                            band: Band | str = Band.MID) -> float:
    """Return one kWh's full price: (energy + climate + fuel) x (1 + VAT + fund levy).

    The marginal price of a kWh in ``season``/``band``, rounding ignored. [KRW/kWh]
    """
    rate = tariff.energy_krw_per_kwh[Season(season)][Band(band)]
    adders = tariff.climate_krw_per_kwh + tariff.fuel_krw_per_kwh
    return (rate + adders) * (1 + tariff.vat_frac + tariff.fund_levy_frac)


def average_energy_rate_krw_per_kwh(tariff: Tariff) -> float:
    """Return the all-in energy rate of a flat 24/7 load, base charge excluded. [KRW/kWh]

    Seasons are weighted by their number of months (3 summer, 5 spring/fall, 4 winter) and, for
    a TOU class, bands by their weekday hours (weekends, which are cheaper, are ignored), as in
    the course's reference table: 교육용(갑) 고압A 선택I gives
    ((3 x 123.3 + 5 x 86.5 + 4 x 109.3) / 12 + 9.0 + 5.0) x 1.127 = 132.197 KRW/kWh.

    References
    ----------
    .. [1] KEPCO tariff table effective 2026-06-01 (see the tariff's ``source``).

    Used in: notebooks/07_opex_lab.ipynb
    """
    total = 0.0
    for month in range(1, 13):
        season = tariff.season(month)
        hours = tariff.schedule.hours_per_band(season)
        total += sum(hours[b] * tariff.energy_krw_per_kwh[season][b] for b in Band) / 24
    energy = total / 12
    adders = tariff.climate_krw_per_kwh + tariff.fuel_krw_per_kwh
    return (energy + adders) * (1 + tariff.vat_frac + tariff.fund_levy_frac)


# --- the bill -------------------------------------------------------------------------------

def _trunc(x: np.ndarray, unit: float = 1.0) -> np.ndarray:
    """Truncate toward zero to a multiple of ``unit`` (절사), float noise removed first."""
    return np.trunc(np.round(x / unit, 6)) * unit


def _round_half_up(x: np.ndarray) -> np.ndarray:
    """Round to the won, halves away from zero (4사5입)."""
    y = np.round(x, 6)
    return np.sign(y) * np.floor(np.abs(y) + 0.5)


def _check_load(load_kw: Any) -> tuple[pd.DatetimeIndex, np.ndarray, int]:
    """Validate the load series; return its local index, values and step [s]."""
    if not isinstance(load_kw, pd.Series):
        raise validate.InputError("load_kw", "other", type(load_kw).__name__,
                                  "load_kw must be a pandas Series of kW with a DatetimeIndex")
    index = load_kw.index
    if not isinstance(index, pd.DatetimeIndex) or index.tz is None:
        raise validate.InputError(
            "load_kw", "other", "index",
            "load_kw needs a tz-aware DatetimeIndex (Asia/Seoul), e.g. "
            "pd.date_range('2026-01-01', periods=8760, freq='h', tz='Asia/Seoul')")
    if len(index) < 1:
        raise validate.InputError("load_kw", "other", 0, "load_kw is empty")
    try:
        values = load_kw.to_numpy(dtype=float)
    except (TypeError, ValueError):
        raise validate.InputError("load_kw", "number", load_kw.dtype,
                                  "load_kw must hold numbers (kW)") from None
    bad = ~np.isfinite(values)
    if bad.any():
        i = int(np.argmax(bad))
        raise validate.InputError("load_kw", "finite", values[i],
                                  f"load_kw must be finite; {index[i]} is {values[i]!r}")
    neg = values < 0
    if neg.any():
        i = int(np.argmax(neg))
        raise validate.InputError("load_kw", "non_negative", values[i],
                                  f"load_kw must be >= 0 kW; {index[i]} is {values[i]!r}")
    local = index.tz_convert(TZ).tz_localize(None).as_unit("ns")
    if len(index) == 1:
        raise validate.InputError("load_kw", "other", 1,
                                  "load_kw needs at least two samples to show its step")
    ns = local.asi8
    steps = np.diff(ns)
    step_ns = int(steps[0])
    if step_ns <= 0 or (steps != step_ns).any():
        where = int(np.argmax(steps != step_ns)) if step_ns > 0 else 0
        raise validate.InputError(
            "load_kw", "other", str(index[where + 1]),
            f"load_kw must be evenly spaced in time (no gaps, duplicates or unsorted stamps); "
            f"the step changes at {index[where + 1]}")
    step_s = step_ns / _NS_PER_S
    if step_s != int(step_s) or step_s > 3600 or 3600 % int(step_s):
        raise validate.InputError(
            "load_kw", "other", f"{step_s:g} s",
            f"load_kw must be hourly or finer, with a step that divides one hour; got {step_s:g} s")
    return local, values, int(step_s)


def monthly_bill(
    tariff: Tariff,
    load_kw: pd.Series,
    contract_kw: float,
    *,
    holidays: Iterable[date | str | pd.Timestamp] = (),
    prior_demand_kw: Mapping[str | pd.Period, float] | None = None,
    repeat_year: bool = False,
) -> pd.DataFrame:
    """Return the KEPCO bill of every month a load series covers, line by line.

    Parameters
    ----------
    tariff : Tariff
        The tariff class (:func:`labkit.data.tariff.load_tariff`).
    load_kw : pandas.Series, shape (n,)
        Facility power drawn from the grid, one value per step, with a tz-aware
        DatetimeIndex (converted to Asia/Seoul). Evenly spaced, hourly or finer (the step must
        divide one hour); each value holds for its step. [kW]
    contract_kw : float
        Contract power (계약전력), > 0. [kW]
    holidays : iterable of dates, default ()
        Public holidays (bill at the holiday band, and are light hours for demand).
    prior_demand_kw : mapping of month -> kW, optional
        Demand of months before the series (``"2025-08"`` -> 15.3), for the ratchet.
    repeat_year : bool, default False
        Treat the series as one year that repeats: months before it are the same calendar
        months of the series (the steady state). Needs exactly 12 consecutive months.

    Returns
    -------
    pandas.DataFrame, shape (n_months, ...)
        Indexed by ``month`` (a monthly PeriodIndex), columns:

        - ``days`` covered [d], ``kwh`` [kWh], and for TOU classes ``kwh_light/mid/peak``;
        - ``demand_kw``: the month's largest demand in the demand bands; ``billing_kw``:
          요금적용전력 after the ratchet and the floor (contract power for a contract-based
          class) [kW]; ``over_contract``: demand above contract power (KEPCO charges extra);
        - ``base_krw``; for TOU classes ``energy_light_krw``, ``energy_mid_krw``,
          ``energy_peak_krw``; ``energy_krw``; ``climate_krw``; ``fuel_krw``; ``subtotal_krw``
          (전기요금계); ``vat_krw``; ``fund_levy_krw``; ``total_krw`` (amount due) [KRW],
          rounded as the module docstring says.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        Naming the field: ``load_kw`` that is not a Series, has a naive index, holds NaN/inf
        or negative kW, has gaps, duplicates or an uneven step, or is coarser than hourly;
        ``contract_kw`` <= 0; ``tariff`` not a Tariff; ``holidays`` that are not dates;
        ``prior_demand_kw`` negative; ``repeat_year`` without exactly 12 consecutive months.

    References
    ----------
    .. [1] KEPCO 기본공급약관 제68조 (요금적용전력) and 시행세칙 별표4; KEPCO tariff table
       effective 2026-06-01; KEPCO bill calculation guide (rounding).

    Used in: notebooks/07_opex_lab.ipynb
    """
    if not isinstance(tariff, Tariff):
        raise validate.InputError("tariff", "other", type(tariff).__name__,
                                  "tariff must be a labkit.tariff.Tariff (see load_tariff)")
    contract = validate.positive("contract_kw", contract_kw)
    local, kw, step_s = _check_load(load_kw)
    try:
        holiday_days = np.array(sorted({pd.Timestamp(d).normalize().value for d in holidays}),
                                dtype=np.int64)
    except (TypeError, ValueError) as err:
        raise validate.InputError("holidays", "other", str(err),
                                  f"holidays must be dates: {err}") from None
    ns = local.asi8
    n = len(ns)
    step_h = step_s / 3600

    # calendar features of every sample
    day_ns = ns - ns % (86_400 * _NS_PER_S)
    days_since_epoch = day_ns // (86_400 * _NS_PER_S)
    dow = (days_since_epoch + 3) % 7  # 1970-01-01 was a Thursday (3); Monday = 0
    hour = (ns // (3600 * _NS_PER_S)) % 24
    month_num = np.asarray(local.month)
    year = np.asarray(local.year)
    month_key = year * 12 + month_num - 1

    season_code = np.array([list(Season).index(s) for s in tariff.season_of_month])[month_num - 1]
    band_codes = {b: i for i, b in enumerate(Band)}
    weekday_table = np.array([[band_codes[b] for b in tariff.schedule.weekday[s]]
                              for s in Season])
    band = weekday_table[season_code, hour]
    saturday = dow == 5
    band = np.where(saturday & (band == band_codes[Band.PEAK]),
                    band_codes[tariff.schedule.saturday_peak_band], band)
    off = (dow == 6) | np.isin(day_ns, holiday_days)
    band = np.where(off, band_codes[tariff.schedule.sunday_holiday_band], band)

    # months are contiguous blocks of the sorted series
    starts = np.flatnonzero(np.r_[True, month_key[1:] != month_key[:-1]])
    keys = month_key[starts]
    n_months = len(starts)
    kwh = kw * step_h
    kwh_band = np.stack([np.add.reduceat(np.where(band == i, kwh, 0.0), starts)
                         for i in range(3)], axis=1)
    kwh_month = kwh_band.sum(axis=1)

    # demand: average over demand_interval_min windows, in the demand bands only
    window_s = tariff.demand_interval_min * 60
    eligible = np.isin(band, [band_codes[b] for b in tariff.demand_bands])
    if step_s >= window_s:
        window_kw = kw
        window_ok = eligible
        window_month = np.arange(n)
    else:
        window_id = (ns - ns[0] + (ns[0] % (window_s * _NS_PER_S))) // (window_s * _NS_PER_S)
        w_starts = np.flatnonzero(np.r_[True, window_id[1:] != window_id[:-1]])
        counts = np.diff(np.r_[w_starts, n])
        window_kw = np.add.reduceat(kw, w_starts) / counts
        window_ok = eligible[w_starts]
        window_month = w_starts
    demand_src = np.where(window_ok, window_kw, 0.0)
    w_month_starts = np.searchsorted(window_month, starts)
    demand = np.maximum.reduceat(demand_src, w_month_starts)

    # months covered: days and coverage of the month
    periods = pd.PeriodIndex([pd.Period(year=int(k // 12), month=int(k % 12 + 1), freq="M")
                              for k in keys], name="month")
    samples = np.diff(np.r_[starts, n])
    days_in_month = np.asarray(periods.days_in_month, dtype=float)
    days = samples * step_s / 86_400
    coverage = days / days_in_month

    # billing demand: ratchet over the last 12 months, then the floor
    history: dict[int, float] = {}
    if prior_demand_kw:
        for k, v in prior_demand_kw.items():
            try:
                p = pd.Period(k, freq="M")
            except (TypeError, ValueError) as err:
                raise validate.InputError("prior_demand_kw", "other", k,
                                          f"prior_demand_kw keys must be months: {err}") from None
            history[p.year * 12 + p.month - 1] = validate.non_negative(
                f"prior_demand_kw.{p}", v)
    for k, d in zip(keys.tolist(), demand.tolist(), strict=True):
        history[k] = d
    if repeat_year:
        if n_months != 12 or keys[-1] - keys[0] != 11:
            raise validate.InputError(
                "repeat_year", "other", n_months,
                f"repeat_year needs exactly 12 consecutive months, the series has {n_months}")
        for k, d in zip(keys.tolist(), demand.tolist(), strict=True):
            history.setdefault(k - 12, d)
    ratchet = set(tariff.ratchet_months)
    billing = np.empty(n_months)
    for i, k in enumerate(keys.tolist()):
        best = history[k]
        for back in range(1, 12):
            past = k - back
            if (past % 12) + 1 in ratchet and past in history:
                best = max(best, history[past])
        billing[i] = max(best, tariff.floor_frac * contract)
    if tariff.base_basis == "contract":
        billing = np.full(n_months, contract)

    # the lines of the bill, rounded as KEPCO does
    base = _trunc(billing * tariff.base_krw_per_kw_month * coverage)
    month_season = [tariff.season(int(k % 12 + 1)) for k in keys]
    price = np.array([[tariff.energy_krw_per_kwh[s][b] for b in Band] for s in month_season])
    if tariff.tou:
        energy_band = _trunc(kwh_band * price)
        energy = energy_band.sum(axis=1)
    else:
        energy_band = None
        energy = _trunc(kwh_month * price[:, 0])
    climate = _trunc(kwh_month * tariff.climate_krw_per_kwh)
    fuel = _trunc(kwh_month * tariff.fuel_krw_per_kwh)
    subtotal = base + energy + climate + fuel
    vat = _round_half_up(subtotal * tariff.vat_frac)
    fund = _trunc(subtotal * tariff.fund_levy_frac, 10)
    total = _trunc(subtotal + vat + fund, 10)

    columns: dict[str, Any] = {"days": days, "kwh": kwh_month}
    if tariff.tou:
        for i, b in enumerate(Band):
            columns[f"kwh_{b}"] = kwh_band[:, i]
    columns |= {"demand_kw": demand, "billing_kw": billing, "over_contract": demand > contract,
                "base_krw": base}
    if energy_band is not None:
        for i, b in enumerate(Band):
            columns[f"energy_{b}_krw"] = energy_band[:, i]
    columns |= {"energy_krw": energy, "climate_krw": climate, "fuel_krw": fuel,
                "subtotal_krw": subtotal, "vat_krw": vat, "fund_levy_krw": fund,
                "total_krw": total}
    frame = pd.DataFrame(columns, index=periods)
    frame.attrs["class_name"] = tariff.class_name
    frame.attrs["verified"] = tariff.verified
    return frame
