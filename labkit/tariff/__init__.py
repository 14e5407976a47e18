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

A package along the seams of the old ``labkit/tariff.py``; this module re-exports its names:

- :mod:`labkit.tariff.tables` -- :class:`Season`, :class:`Band`, :class:`TouSchedule`,
  :class:`Tariff`, :func:`band_of` and the rates;
- :mod:`labkit.tariff.bill` -- :func:`monthly_bill` (billing demand, charges, levies, rounding).

Used in: notebooks/07_opex_lab.ipynb
"""

from __future__ import annotations

from labkit.tariff.bill import (
    monthly_bill,
)
from labkit.tariff.tables import (
    TZ,
    Band,
    Season,
    Tariff,
    TouSchedule,
    all_in_rate_krw_per_kwh,
    average_energy_rate_krw_per_kwh,
    band_of,
    parse_hour_ranges,
)

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
