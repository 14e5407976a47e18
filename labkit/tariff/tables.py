"""A KEPCO tariff table: seasons, time-of-use bands and schedules, :class:`Tariff`, rates.

Pure; the tables themselves are data (``data/tariffs/``). How KEPCO bills is in
:mod:`labkit.tariff`.

Used in: notebooks/07_opex_lab.ipynb
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from types import MappingProxyType
from typing import Literal

import pandas as pd

from labkit import validate

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
            if not self.tou and len(set(rates[season].values())) > 1:
                raise validate.InputError(
                    f"energy_krw_per_kwh.{season}", "other", dict(per_band),
                    f"{self.class_name}: a flat class has one energy rate per season, the same "
                    f"for every band; got {({b.value: v for b, v in rates[season].items()})}")
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


