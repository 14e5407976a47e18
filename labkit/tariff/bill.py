"""A month's KEPCO bill from a load series: billing demand, charges, levies and rounding.

Pure. The rules and their sources are in :mod:`labkit.tariff`.

Used in: notebooks/07_opex_lab.ipynb
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date
from typing import Any

import numpy as np
import pandas as pd

from labkit import validate
from labkit.tariff.tables import _NS_PER_S, TZ, Band, Season, Tariff

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
        x = float(values[i])
        raise validate.InputError("load_kw", "finite", x,
                                  f"load_kw must be finite; {index[i]} is {x!r}")
    neg = values < 0
    if neg.any():
        i = int(np.argmax(neg))
        x = float(values[i])
        raise validate.InputError("load_kw", "non_negative", x,
                                  f"load_kw must be >= 0 kW; {index[i]} is {x!r}")
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
    if step_s != int(step_s) or 3600 % int(step_s):  # a step over an hour leaves 3600
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
    band, month_key = _bands(tariff, local, _holiday_days(holidays))
    n = len(kw)

    # months are contiguous blocks of the sorted series
    starts = np.flatnonzero(np.r_[True, month_key[1:] != month_key[:-1]])
    keys = month_key[starts]
    kwh = kw * (step_s / 3600)
    kwh_band = np.stack([np.add.reduceat(np.where(band == i, kwh, 0.0), starts)
                         for i in range(3)], axis=1)
    demand = _month_demand(tariff, local.asi8, kw, band, step_s, starts)

    # months covered: days and coverage of the month
    periods = pd.PeriodIndex([pd.Period(year=int(k // 12), month=int(k % 12 + 1), freq="M")
                              for k in keys], name="month")
    days = np.diff(np.r_[starts, n]) * step_s / 86_400
    coverage = days / np.asarray(periods.days_in_month)

    history = _demand_history(keys, demand, prior_demand_kw, repeat_year)
    billing = _billing_demand(tariff, keys, history, contract)
    columns: dict[str, Any] = {"days": days, "kwh": kwh_band.sum(axis=1)}
    if tariff.tou:
        for i, b in enumerate(Band):
            columns[f"kwh_{b}"] = kwh_band[:, i]
    columns |= {"demand_kw": demand, "billing_kw": billing, "over_contract": demand > contract}
    columns |= _charges(tariff, keys, billing, coverage, kwh_band)
    frame = pd.DataFrame(columns, index=periods)
    frame.attrs["class_name"] = tariff.class_name
    frame.attrs["verified"] = tariff.verified
    return frame


def _holiday_days(holidays: Iterable[date | str | pd.Timestamp]) -> np.ndarray:
    """The holidays as sorted midnight timestamps [ns]."""
    try:
        return np.array(sorted({pd.Timestamp(d).normalize().value for d in holidays}),
                        dtype=np.int64)
    except (TypeError, ValueError) as err:
        raise validate.InputError("holidays", "other", str(err),
                                  f"holidays must be dates: {err}") from None


def _bands(tariff: Tariff, local: pd.DatetimeIndex, holiday_days: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray]:
    """Return (the band index of every sample, its month as year x 12 + month - 1)."""
    ns = local.asi8
    day_ns = ns - ns % (86_400 * _NS_PER_S)
    dow = (day_ns // (86_400 * _NS_PER_S) + 3) % 7  # 1970-01-01 was a Thursday (3); Monday = 0
    hour = (ns // (3600 * _NS_PER_S)) % 24
    month_num = np.asarray(local.month)
    month_key = np.asarray(local.year) * 12 + month_num - 1

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
    return band, month_key


def _month_demand(tariff: Tariff, ns: np.ndarray, kw: np.ndarray, band: np.ndarray,
                  step_s: int, starts: np.ndarray) -> np.ndarray:
    """Each month's largest ``demand_interval_min`` average, in the demand bands only. [kW]"""
    window_s = tariff.demand_interval_min * 60
    eligible = np.isin(band, [list(Band).index(b) for b in tariff.demand_bands])
    if step_s >= window_s:
        window_kw = kw
        window_ok = eligible
        window_month = np.arange(len(kw))
    else:
        window_id = (ns - ns[0] + (ns[0] % (window_s * _NS_PER_S))) // (window_s * _NS_PER_S)
        w_starts = np.flatnonzero(np.r_[True, window_id[1:] != window_id[:-1]])
        counts = np.diff(np.r_[w_starts, len(kw)])
        window_kw = np.add.reduceat(kw, w_starts) / counts
        window_ok = eligible[w_starts]
        window_month = w_starts
    demand_src = np.where(window_ok, window_kw, 0.0)
    return np.maximum.reduceat(demand_src, np.searchsorted(window_month, starts))


def _demand_history(keys: np.ndarray, demand: np.ndarray,
                    prior_demand_kw: Mapping[str | pd.Period, float] | None,
                    repeat_year: bool) -> dict[int, float]:
    """Month key -> demand [kW]: the prior months given, the series' own, a repeated year."""
    history: dict[int, float] = {}
    for k, v in (prior_demand_kw or {}).items():
        try:
            p = pd.Period(k, freq="M")
        except (TypeError, ValueError) as err:
            raise validate.InputError("prior_demand_kw", "other", k,
                                      f"prior_demand_kw keys must be months: {err}") from None
        history[p.year * 12 + p.month - 1] = validate.non_negative(f"prior_demand_kw.{p}", v)
    for k, d in zip(keys.tolist(), demand.tolist(), strict=True):
        history[k] = d
    if repeat_year:
        n_months = len(keys)  # consecutive: _check_load refuses gaps
        if n_months != 12:
            raise validate.InputError(
                "repeat_year", "other", n_months,
                f"repeat_year needs exactly 12 consecutive months, the series has {n_months}")
        for k, d in zip(keys.tolist(), demand.tolist(), strict=True):
            history.setdefault(k - 12, d)
    return history


def _billing_demand(tariff: Tariff, keys: np.ndarray, history: dict[int, float],
                    contract: float) -> np.ndarray:
    """요금적용전력 of each month: the ratchet over the last 12 months, then the floor. [kW]"""
    if tariff.base_basis == "contract":
        return np.full(len(keys), contract)
    ratchet = set(tariff.ratchet_months)
    billing = np.empty(len(keys))
    for i, k in enumerate(keys.tolist()):
        best = history[k]
        for back in range(1, 12):
            past = k - back
            if (past % 12) + 1 in ratchet and past in history:
                best = max(best, history[past])
        billing[i] = max(best, tariff.floor_frac * contract)
    return billing


def _charges(tariff: Tariff, keys: np.ndarray, billing: np.ndarray, coverage: np.ndarray,
             kwh_band: np.ndarray) -> dict[str, np.ndarray]:
    """The lines of the bill in KRW, rounded as KEPCO does (see the module docstring)."""
    kwh_month = kwh_band.sum(axis=1)
    lines = {"base_krw": _trunc(billing * tariff.base_krw_per_kw_month * coverage)}
    month_season = [tariff.season(int(k % 12 + 1)) for k in keys]
    price = np.array([[tariff.energy_krw_per_kwh[s][b] for b in Band] for s in month_season])
    if tariff.tou:
        energy_band = _trunc(kwh_band * price)
        for i, b in enumerate(Band):
            lines[f"energy_{b}_krw"] = energy_band[:, i]
        energy = energy_band.sum(axis=1)
    else:
        energy = _trunc(kwh_month * price[:, 0])
    climate = _trunc(kwh_month * tariff.climate_krw_per_kwh)
    fuel = _trunc(kwh_month * tariff.fuel_krw_per_kwh)
    base = lines["base_krw"]
    subtotal = base + energy + climate + fuel
    vat = _round_half_up(subtotal * tariff.vat_frac)
    fund = _trunc(subtotal * tariff.fund_levy_frac, 10)
    return lines | {"energy_krw": energy, "climate_krw": climate, "fuel_krw": fuel,
                    "subtotal_krw": subtotal, "vat_krw": vat, "fund_levy_krw": fund,
                    "total_krw": _trunc(subtotal + vat + fund, 10)}
