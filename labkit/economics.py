"""Token economics: what owned GPUs cost per year, per used hour and per token; API break-even.

Pure: numbers in, numbers out; no widgets, no I/O. All money inside the model is in KRW; a USD
figure is converted once, with an explicit ``fx_krw_per_usd`` (:func:`usd_to_krw`).

The cost model follows the usual TCO decomposition (SemiAnalysis, "GPU Cloud Economics
Explained", Dec 2023; Epoch AI ``training-cost-trends``): an owned cluster costs money every
calendar hour (capital, maintenance, staff, facility, the electricity base charge, idle power)
whether it works or not, and produces value only in the hours it computes. A year has 8,760 h;
a month is a twelfth of a year (730 h = 2,628,000 s) unless a function says otherwise.

- Capital per year: straight-line ``capex / depreciation_years``, or ``capex x CRF`` with the
  capital recovery factor ``CRF = r(1+r)^n / ((1+r)^n - 1)`` when ``cost_of_capital`` r > 0.
- Average IT power at utilization u: ``max_it_power_kw x (idle + (1 - idle) u)``; facility power
  is IT power x PUE (The Green Grid, "PUE: a comprehensive examination of the metric", WP#49, 2012).
- Energy per year: facility kW x 8,760 h x the all-in energy price (energy + climate and fuel
  adders + VAT and fund levy; KEPCO 전기요금표).
- Base charge per year: peak facility kW (max IT kW x PUE) x the all-in base charge x 12 (KEPCO
  bills the base charge on 요금적용전력, the peak demand).

The breakdown of a year's cost is a :class:`CostBreakdown` with named lines (capital, energy,
base_charge, staff, maintenance, facility); a tariff model can compute the energy and base-charge
lines itself from :meth:`OwnedCluster.facility_power_kw` / :attr:`OwnedCluster.peak_facility_kw`
and swap them in with :meth:`CostBreakdown.with_electricity`.

Lesson 06's benchmark claims and racks are in :mod:`labkit.benchmarks`.

Used in: notebooks/05_break_even.ipynb
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass, fields, replace
from enum import StrEnum
from typing import Any

import pandas as pd

from labkit import validate

__all__ = [
    "CLUSTER_INPUTS",
    "HOURS_PER_YEAR",
    "LESSON_INPUTS",
    "SCENARIO_INPUTS",
    "SECONDS_PER_MONTH",
    "SECONDS_PER_YEAR",
    "BreakEvenScenario",
    "CostBreakdown",
    "CostLine",
    "OwnedCluster",
    "api_cost_krw",
    "blended_price",
    "break_even_tokens_per_month",
    "break_even_utilization",
    "capital_recovery_factor",
    "fixed_cost_krw_per_month",
    "marginal_cost_krw_per_token",
    "monthly_capacity_tokens",
    "monthly_demand_tokens",
    "owned_cost_krw_per_month",
    "rent_cost_krw",
    "rent_vs_own_break_even_utilization",
    "sensitivity",
    "usd_to_krw",
]

HOURS_PER_YEAR = 8_760.0
"""Calendar hours in a (non-leap) year. [h]"""
SECONDS_PER_YEAR = HOURS_PER_YEAR * 3_600.0
"""31,536,000 s. [s]"""
SECONDS_PER_MONTH = SECONDS_PER_YEAR / 12.0
"""A twelfth of a year: 730 h = 2,628,000 s (the model's month). [s]"""
TOKENS_PER_M = 1_000_000.0


def usd_to_krw(amount_usd: float, fx_krw_per_usd: float) -> float:
    """Convert a USD amount to KRW, once, at an explicit exchange rate.

    Parameters
    ----------
    amount_usd : float
        Amount; must be >= 0. [USD]
    fx_krw_per_usd : float
        Exchange rate; must be > 0. [KRW/USD] (teaching default 1,400; 2025 average 1,421.97,
        KB kbthink FX review, 2025-12-31).

    Returns
    -------
    float
        ``amount_usd x fx_krw_per_usd``. [KRW]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For NaN/inf, non-numbers, a negative amount or a rate <= 0.

    Used in: notebooks/05_break_even.ipynb
    """
    amount = validate.non_negative("amount_usd", amount_usd)
    fx = validate.positive("fx_krw_per_usd", fx_krw_per_usd)
    return amount * fx


def capital_recovery_factor(rate: float, years: float) -> float:
    """Return the capital recovery factor: the annual payment per 1 KRW borrowed.

    ``CRF = r(1+r)^n / ((1+r)^n - 1)``; for r = 0 it is ``1 / n`` (straight-line depreciation).
    (Any engineering-economics text, e.g. NREL, "Manual for the Economic Evaluation of Energy
    Efficiency and Renewable Energy Technologies", 1995, eq. 4-3.)

    Parameters
    ----------
    rate : float
        Annual cost of capital r; must be >= 0 and <= 1. [fraction per year]
    years : float
        Recovery period n; must be > 0. [years]

    Returns
    -------
    float
        CRF. [1/year]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For NaN/inf, non-numbers, ``rate`` outside [0, 1] or ``years <= 0``.

    Examples
    --------
    >>> round(capital_recovery_factor(0.05, 4), 5)
    0.28201

    Used in: notebooks/05_break_even.ipynb
    """
    r = validate.fraction("cost_of_capital", rate, allow_zero=True)
    n = validate.positive("depreciation_years", years)
    if r == 0:
        return 1.0 / n
    growth = (1.0 + r) ** n
    return r * growth / (growth - 1.0)


class CostLine(StrEnum):
    """The lines of a year's owned-cluster cost, in the order lessons list them.

    Used in: notebooks/05_break_even.ipynb
    """

    CAPITAL = "capital"
    ENERGY = "energy"
    BASE_CHARGE = "base_charge"
    STAFF = "staff"
    MAINTENANCE = "maintenance"
    FACILITY = "facility"


@dataclass(frozen=True)
class CostBreakdown:
    """One year's owned-cluster cost, by line. Every line in [KRW per year].

    Attributes
    ----------
    capital_krw : float
        Depreciation (or capital recovery, with a cost of capital).
    energy_krw : float
        Electricity energy charge, all-in (energy + adders + taxes).
    base_charge_krw : float
        Electricity base (demand) charge, all-in.
    staff_krw, maintenance_krw, facility_krw : float
        People, hardware support/warranty, and the room (power, cooling, UPS upgrades) per year.

    Used in: notebooks/05_break_even.ipynb
    """

    capital_krw: float
    energy_krw: float
    base_charge_krw: float
    staff_krw: float
    maintenance_krw: float
    facility_krw: float

    def __post_init__(self) -> None:
        for f in fields(self):
            object.__setattr__(self, f.name, validate.non_negative(f.name, getattr(self, f.name)))

    @property
    def total_krw(self) -> float:
        """Sum of all lines. [KRW/year]"""
        return float(sum(self.as_dict().values()))

    @property
    def electricity_krw(self) -> float:
        """Energy plus base charge. [KRW/year]"""
        return self.energy_krw + self.base_charge_krw

    def as_dict(self) -> dict[str, float]:
        """Return ``{line name: KRW per year}`` in :class:`CostLine` order."""
        return {line.value: float(getattr(self, f"{line.value}_krw")) for line in CostLine}

    def shares(self) -> dict[str, float]:
        """Return each line's share of the total. [fraction, sums to 1]

        Raises
        ------
        ValueError
            If the total is 0 (no shares exist).
        """
        total = self.total_krw
        if total <= 0:
            raise ValueError("the breakdown totals 0 KRW; shares are undefined")
        return {k: v / total for k, v in self.as_dict().items()}

    def with_electricity(self, energy_krw: float, base_charge_krw: float) -> CostBreakdown:
        """Return a copy with the electricity lines replaced (e.g. computed from a tariff)."""
        return replace(self, energy_krw=energy_krw, base_charge_krw=base_charge_krw)

    def table(self) -> pd.DataFrame:
        """Return the breakdown as a frame: ``line``, ``krw_per_year`` [KRW], ``share`` [0-1]."""
        total = self.total_krw
        rows = [(k, v, v / total if total > 0 else math.nan) for k, v in self.as_dict().items()]
        return pd.DataFrame(rows, columns=["line", "krw_per_year", "share"])


@dataclass(frozen=True)
class OwnedCluster:
    """An owned GPU cluster (servers of identical GPUs) and what it costs to keep.

    Every parameter after ``gpus_per_server`` is keyword-only.

    Parameters
    ----------
    server_capex_krw : float
        Purchase price of one server, all-in. >= 0. [KRW]
    gpus_per_server : int
        GPUs per server (8 for HGX/DGX). >= 1. [GPUs]
    servers : int, default 1
        Number of servers. >= 1.
    depreciation_years : float, default 4
        Straight-line life, no residual value (4 years: common industry TCO assumption; Epoch AI
        uses 3). > 0. [years]
    cost_of_capital : float, default 0.0
        Annual cost of capital r in [0, 1]; > 0 uses the capital recovery factor
        (:func:`capital_recovery_factor`). 0 for a school budget. [fraction per year]
    max_it_power_kw : float
        Maximum IT power of one server (DGX H100: 10.2 kW, NVIDIA DGX H100/H200 user guide).
        > 0. [kW]
    idle_power_fraction : float
        IT power at utilization 0 as a share of the maximum, in [0, 1] (teaching assumption 0.3;
        measure your own). [fraction]
    pue : float
        Power usage effectiveness, facility power / IT power, >= 1. [unitless]
    energy_price_krw_per_kwh : float
        All-in energy price: energy charge + climate and fuel adders + VAT and fund levy. >= 0.
        [KRW/kWh]
    base_charge_krw_per_kw_month : float, default 0.0
        All-in base charge per kW of peak facility demand per month. >= 0. [KRW/(kW·month)]
    staff_krw_per_year : float, default 0.0
        Loaded staff cost for the cluster. >= 0. [KRW/year]
    maintenance_fraction_per_year : float, default 0.0
        Hardware support per year as a share of capex, in [0, 1]. [fraction per year]
    facility_krw_per_year : float, default 0.0
        Room upgrades (power, cooling, UPS) per year, amortized. >= 0. [KRW/year]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        Naming the field, for NaN/inf, non-numbers, or a value outside the ranges above.

    Examples
    --------
    >>> c = OwnedCluster(420_000_000, 8, max_it_power_kw=10.2, idle_power_fraction=0.3, pue=1.5,
    ...                  energy_price_krw_per_kwh=132.197)
    >>> round(c.cost_per_gpu_hour(1.0))
    1751

    Used in: notebooks/05_break_even.ipynb
    """

    server_capex_krw: float
    gpus_per_server: int
    _: KW_ONLY
    servers: int = 1
    depreciation_years: float = 4
    cost_of_capital: float = 0.0
    max_it_power_kw: float
    idle_power_fraction: float
    pue: float
    energy_price_krw_per_kwh: float
    base_charge_krw_per_kw_month: float = 0.0
    staff_krw_per_year: float = 0.0
    maintenance_fraction_per_year: float = 0.0
    facility_krw_per_year: float = 0.0

    def __post_init__(self) -> None:
        checked = {
            "server_capex_krw": validate.non_negative("server_capex_krw", self.server_capex_krw),
            "gpus_per_server": validate.integer("gpus_per_server", self.gpus_per_server,
                                                minimum=1),
            "servers": validate.integer("servers", self.servers, minimum=1),
            "depreciation_years": validate.positive("depreciation_years",
                                                    self.depreciation_years),
            "cost_of_capital": validate.fraction("cost_of_capital", self.cost_of_capital,
                                                 allow_zero=True),
            "max_it_power_kw": validate.positive("max_it_power_kw", self.max_it_power_kw),
            "idle_power_fraction": validate.fraction("idle_power_fraction",
                                                     self.idle_power_fraction, allow_zero=True),
            "pue": validate.at_least("pue", self.pue, 1.0),
            "energy_price_krw_per_kwh": validate.non_negative("energy_price_krw_per_kwh",
                                                              self.energy_price_krw_per_kwh),
            "base_charge_krw_per_kw_month": validate.non_negative(
                "base_charge_krw_per_kw_month", self.base_charge_krw_per_kw_month),
            "staff_krw_per_year": validate.non_negative("staff_krw_per_year",
                                                        self.staff_krw_per_year),
            "maintenance_fraction_per_year": validate.fraction(
                "maintenance_fraction_per_year", self.maintenance_fraction_per_year,
                allow_zero=True),
            "facility_krw_per_year": validate.non_negative("facility_krw_per_year",
                                                           self.facility_krw_per_year),
        }
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    # -- sizes ----------------------------------------------------------------------------------
    @property
    def gpus(self) -> int:
        """GPUs in the cluster: gpus_per_server x servers. [GPUs]"""
        return self.gpus_per_server * self.servers

    @property
    def capex_krw(self) -> float:
        """Purchase price of all servers. [KRW]"""
        return self.server_capex_krw * self.servers

    # -- power ----------------------------------------------------------------------------------
    def it_power_kw(self, utilization: float) -> float:
        """Average IT power of the cluster at ``utilization``: max x (idle + (1 - idle) u). [kW]

        Raises
        ------
        labkit.validate.InputError (a ValueError)
            If ``utilization`` is not in [0, 1].
        """
        u = validate.fraction("utilization", utilization, allow_zero=True)
        idle = self.idle_power_fraction
        return self.max_it_power_kw * self.servers * (idle + (1.0 - idle) * u)

    def facility_power_kw(self, utilization: float) -> float:
        """Average facility power (IT power x PUE) at ``utilization`` in [0, 1]. [kW]"""
        return self.it_power_kw(utilization) * self.pue

    @property
    def peak_facility_kw(self) -> float:
        """Peak facility demand, the base charge's billing kW: max IT kW x servers x PUE. [kW]"""
        return self.max_it_power_kw * self.servers * self.pue

    def energy_kwh_per_year(self, utilization: float) -> float:
        """Facility energy per year at ``utilization`` in [0, 1]: facility kW x 8,760 h. [kWh]"""
        return self.facility_power_kw(utilization) * HOURS_PER_YEAR

    # -- money ----------------------------------------------------------------------------------
    @property
    def capital_krw_per_year(self) -> float:
        """Capex x CRF (capex / years when cost_of_capital is 0). [KRW/year]"""
        return self.capex_krw * capital_recovery_factor(self.cost_of_capital,
                                                        self.depreciation_years)

    @property
    def base_charge_krw_per_year(self) -> float:
        """Peak facility kW x all-in base charge x 12 months. [KRW/year]"""
        return self.peak_facility_kw * self.base_charge_krw_per_kw_month * 12.0

    def annual_cost_breakdown(self, utilization: float) -> CostBreakdown:
        """Return one year's cost at ``utilization``, line by line.

        Parameters
        ----------
        utilization : float
            Average share of calendar hours the GPUs compute, in [0, 1]. [fraction]

        Returns
        -------
        CostBreakdown
            capital, energy, base_charge, staff, maintenance, facility. [KRW/year]

        Raises
        ------
        labkit.validate.InputError (a ValueError)
            If ``utilization`` is not in [0, 1].
        """
        energy = self.energy_kwh_per_year(utilization) * self.energy_price_krw_per_kwh
        return CostBreakdown(
            capital_krw=self.capital_krw_per_year,
            energy_krw=energy,
            base_charge_krw=self.base_charge_krw_per_year,
            staff_krw=self.staff_krw_per_year,
            maintenance_krw=self.capex_krw * self.maintenance_fraction_per_year,
            facility_krw=self.facility_krw_per_year,
        )

    def annual_cost_krw(self, utilization: float) -> float:
        """Return the total cost of one year at ``utilization`` in [0, 1]. [KRW/year]

        Raises
        ------
        labkit.validate.InputError (a ValueError)
            If ``utilization`` is not in [0, 1].
        """
        return self.annual_cost_breakdown(utilization).total_krw

    def cost_per_calendar_gpu_hour(self, utilization: float) -> float:
        """Return the cost per GPU per calendar hour: annual cost / (GPUs x 8,760). [KRW/GPU-h]"""
        return self.annual_cost_krw(utilization) / (self.gpus * HOURS_PER_YEAR)

    def cost_per_gpu_hour(self, utilization: float) -> float:
        """Return the cost per *used* GPU-hour: annual cost / (GPUs x 8,760 h x u).

        Parameters
        ----------
        utilization : float
            In (0, 1]; 0 has no used hours. [fraction]

        Returns
        -------
        float
            [KRW per used GPU-hour]

        Raises
        ------
        labkit.validate.InputError (a ValueError)
            If ``utilization`` is not in (0, 1].
        """
        u = validate.fraction("utilization", utilization)
        return self.annual_cost_krw(u) / (self.gpus * HOURS_PER_YEAR * u)

    def tokens_per_year(self, tokens_per_s_per_gpu: float, utilization: float,
                        derate: float = 1.0) -> float:
        """Return output tokens a year: tokens/s/GPU x derate x GPUs x 31,536,000 s x u. [tokens]

        Raises
        ------
        labkit.validate.InputError (a ValueError)
            If throughput <= 0, ``utilization`` not in [0, 1] or ``derate`` not in (0, 1].
        """
        tps = validate.positive("tokens_per_s_per_gpu", tokens_per_s_per_gpu)
        u = validate.fraction("utilization", utilization, allow_zero=True)
        d = validate.fraction("derate", derate)
        return tps * d * self.gpus * SECONDS_PER_YEAR * u

    def cost_per_million_tokens(self, tokens_per_s_per_gpu: float, utilization: float,
                                derate: float = 1.0) -> float:
        """Return the owned cost per 1M output tokens at ``utilization``.

        Parameters
        ----------
        tokens_per_s_per_gpu : float
            Output-token throughput per GPU when busy (MLPerf counts output tokens only). > 0.
            [tokens/s]
        utilization : float
            In (0, 1]. [fraction]
        derate : float, default 1.0
            Share of the benchmark throughput reached on the real workload (latency SLO, long
            prompts: NVIDIA NIM Llama-3.3-70B at 5,000-in/500-out reached ~10 % of MLPerf's per-H100
            figure), in (0, 1]. [fraction]

        Returns
        -------
        float
            Annual cost / annual tokens x 1e6. [KRW per 1M tokens]

        Raises
        ------
        labkit.validate.InputError (a ValueError)
            For throughput <= 0, ``utilization`` not in (0, 1], ``derate`` not in (0, 1].
        """
        u = validate.fraction("utilization", utilization)
        tokens = self.tokens_per_year(tokens_per_s_per_gpu, u, derate)
        return self.annual_cost_krw(u) / tokens * TOKENS_PER_M


# -- API, demand, break-even --------------------------------------------------------------------

def api_cost_krw(tokens_in: float, tokens_out: float, price_in_krw_per_m: float,
                 price_out_krw_per_m: float) -> float:
    """Return what an API bills for ``tokens_in`` input and ``tokens_out`` output tokens.

    Parameters
    ----------
    tokens_in, tokens_out : float
        Input (prompt) and output (generated) tokens; each >= 0. [tokens]
    price_in_krw_per_m, price_out_krw_per_m : float
        List prices per 1M tokens; each >= 0. [KRW per 1M tokens]

    Returns
    -------
    float
        ``(tokens_in x price_in + tokens_out x price_out) / 1e6``. [KRW]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For NaN/inf, non-numbers or negative values.

    Used in: notebooks/05_break_even.ipynb
    """
    t_in = validate.non_negative("tokens_in", tokens_in)
    t_out = validate.non_negative("tokens_out", tokens_out)
    p_in = validate.non_negative("price_in_krw_per_m", price_in_krw_per_m)
    p_out = validate.non_negative("price_out_krw_per_m", price_out_krw_per_m)
    return (t_in * p_in + t_out * p_out) / TOKENS_PER_M


def blended_price(price_in: float, price_out: float, input_per_output: float = 3.0) -> float:
    """Return the price per token of a mix with ``input_per_output`` input tokens per output token.

    ``(r x price_in + price_out) / (r + 1)``; the common 3:1 mix gives (3 P_in + P_out) / 4
    (Llama-3.3-70B on Groq: (3 x 0.59 + 0.79) / 4 = 0.64 USD per 1M).

    Parameters
    ----------
    price_in, price_out : float
        Prices per 1M tokens, >= 0, in any one currency. [currency per 1M tokens]
    input_per_output : float, default 3.0
        Input tokens per output token r, >= 0. [unitless]

    Returns
    -------
    float
        Blended price, same unit as the inputs.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For NaN/inf, non-numbers or negative values.

    Used in: notebooks/05_break_even.ipynb
    """
    p_in = validate.non_negative("price_in", price_in)
    p_out = validate.non_negative("price_out", price_out)
    r = validate.non_negative("input_per_output", input_per_output)
    return (r * p_in + p_out) / (r + 1.0)


def monthly_demand_tokens(students: float, requests_per_day: float, tokens_per_request: float,
                          days_per_month: float = 30.0) -> float:
    """Return a school's monthly token demand: students x requests x tokens x days.

    Parameters
    ----------
    students : float
        Active users, >= 0. [people]
    requests_per_day : float
        Requests per user per day, >= 0. [1/day]
    tokens_per_request : float
        Tokens per request (input + output), >= 0. [tokens]
    days_per_month : float, default 30
        Days of use per month, in [0, 31]. [days]

    Returns
    -------
    float
        [tokens per month]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For NaN/inf, non-numbers, negative values or more than 31 days.

    Used in: notebooks/05_break_even.ipynb
    """
    n = validate.non_negative("students", students)
    r = validate.non_negative("requests_per_day", requests_per_day)
    tok = validate.non_negative("tokens_per_request", tokens_per_request)
    days = validate.at_most("days_per_month", validate.non_negative("days_per_month",
                                                                     days_per_month),
                            31.0, "31 days")
    return n * r * tok * days


def monthly_capacity_tokens(cluster: OwnedCluster, tokens_per_s_per_gpu: float,
                            derate: float = 1.0,
                            seconds_per_month: float = SECONDS_PER_MONTH) -> float:
    """Return the tokens the cluster makes in a month at 100 % utilization.

    Parameters
    ----------
    cluster : OwnedCluster
    tokens_per_s_per_gpu : float
        Benchmark throughput per GPU, > 0. [tokens/s]
    derate : float, default 1.0
        Share of that throughput reached on the real workload, in (0, 1]. [fraction]
    seconds_per_month : float, default SECONDS_PER_MONTH
        Length of the month, in (0, 2,678,400] (31 days); a twelfth of a year by default, a
        30-day month is 2,592,000 s. [s]

    Returns
    -------
    float
        tokens/s/GPU x derate x GPUs x seconds. [tokens per month]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For a bad throughput, derate or month length.

    Used in: notebooks/05_break_even.ipynb
    """
    tps = validate.positive("tokens_per_s_per_gpu", tokens_per_s_per_gpu)
    d = validate.fraction("derate", derate)
    s = validate.at_most("seconds_per_month", validate.positive("seconds_per_month",
                                                                seconds_per_month),
                         31 * 86_400.0, "31 days")
    return tps * d * cluster.gpus * s


def fixed_cost_krw_per_month(cluster: OwnedCluster) -> float:
    """Return F, the owned cost that does not scale with tokens: annual cost at u = 0 / 12.

    It includes idle power and the base charge. [KRW per month]

    Used in: notebooks/05_break_even.ipynb
    """
    return cluster.annual_cost_krw(0.0) / 12.0


def marginal_cost_krw_per_token(cluster: OwnedCluster, tokens_per_s_per_gpu: float,
                                derate: float = 1.0) -> float:
    """Return m, the energy cost of one more output token (busy minus idle power).

    ``m = (annual cost at u=1 - annual cost at u=0) / tokens a year at u=1``. A derated
    throughput means more busy GPU time, so more energy, per token.

    Returns
    -------
    float
        [KRW per token]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For a bad throughput or derate.

    Used in: notebooks/05_break_even.ipynb
    """
    tokens = cluster.tokens_per_year(tokens_per_s_per_gpu, 1.0, derate)
    return (cluster.annual_cost_krw(1.0) - cluster.annual_cost_krw(0.0)) / tokens


def owned_cost_krw_per_month(cluster: OwnedCluster, tokens_per_month: float,
                             tokens_per_s_per_gpu: float, derate: float = 1.0) -> float:
    """Return the owned monthly cost of making ``tokens_per_month``: F + m x N.

    Parameters
    ----------
    cluster : OwnedCluster
    tokens_per_month : float
        Output tokens N, in [0, monthly capacity] (a month = a twelfth of a year). [tokens]
    tokens_per_s_per_gpu, derate : float
        As in :func:`monthly_capacity_tokens`.

    Returns
    -------
    float
        [KRW per month]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For negative tokens or more than the cluster makes in a month.

    Used in: notebooks/05_break_even.ipynb
    """
    cap = monthly_capacity_tokens(cluster, tokens_per_s_per_gpu, derate)
    n = validate.at_most("tokens_per_month", validate.non_negative("tokens_per_month",
                                                                    tokens_per_month),
                         cap, "monthly capacity")
    return (fixed_cost_krw_per_month(cluster)
            + marginal_cost_krw_per_token(cluster, tokens_per_s_per_gpu, derate) * n)


def break_even_tokens_per_month(cluster: OwnedCluster, api_price_krw_per_m: float,
                                tokens_per_s_per_gpu: float, derate: float = 1.0) -> float:
    """Return the monthly output tokens at which owning costs the same as the API.

    Owned monthly cost is ``F + m N`` (fixed plus marginal energy per token), the API's is
    ``P N``, so ``N* = F / (P - m)``. A month is a twelfth of a year.

    Parameters
    ----------
    cluster : OwnedCluster
    api_price_krw_per_m : float
        API price per 1M tokens P, >= 0 (a blended price when input tokens ride along). [KRW]
    tokens_per_s_per_gpu : float
        Benchmark throughput per GPU, > 0. [tokens/s]
    derate : float, default 1.0
        Share of that throughput reached on the real workload, in (0, 1]. [fraction]

    Returns
    -------
    float
        N* in tokens (not millions) per month; ``math.inf`` when ``P <= m`` (owning never
        breaks even). N* may exceed what the cluster can make (see
        :func:`break_even_utilization`). [tokens per month]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For a negative or non-finite price, a bad throughput or derate.

    Used in: notebooks/05_break_even.ipynb
    """
    price = validate.non_negative("api_price_krw_per_m", api_price_krw_per_m) / TOKENS_PER_M
    m = marginal_cost_krw_per_token(cluster, tokens_per_s_per_gpu, derate)
    if price <= m:
        return math.inf
    return fixed_cost_krw_per_month(cluster) / (price - m)


def break_even_utilization(cluster: OwnedCluster, api_price_krw_per_m: float,
                           tokens_per_s_per_gpu: float, derate: float = 1.0) -> float:
    """Return the utilization at which owning costs the same as the API.

    ``N* / monthly capacity``; above 1 the cluster cannot make enough tokens to break even,
    ``math.inf`` when it never breaks even. Parameters as in :func:`break_even_tokens_per_month`.

    Returns
    -------
    float
        [fraction; may exceed 1]

    Used in: notebooks/05_break_even.ipynb
    """
    n_star = break_even_tokens_per_month(cluster, api_price_krw_per_m, tokens_per_s_per_gpu,
                                         derate)
    return n_star / monthly_capacity_tokens(cluster, tokens_per_s_per_gpu, derate)


def rent_cost_krw(tokens: float, rent_krw_per_gpu_hour: float, tokens_per_s_per_gpu: float,
                  derate: float = 1.0) -> float:
    """Return the cost of renting exactly the GPU-hours that make ``tokens``.

    GPU-hours = tokens / (tokens/s/GPU x derate x 3,600); cost = GPU-hours x rent.

    Parameters
    ----------
    tokens : float
        Output tokens, >= 0. [tokens]
    rent_krw_per_gpu_hour : float
        Rental price, >= 0. [KRW per GPU-hour]
    tokens_per_s_per_gpu, derate : float
        As in :func:`break_even_tokens_per_month`.

    Returns
    -------
    float
        [KRW]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For negative or non-finite values, a bad throughput or derate.

    Used in: notebooks/05_break_even.ipynb
    """
    n = validate.non_negative("tokens", tokens)
    rent = validate.non_negative("rent_krw_per_gpu_hour", rent_krw_per_gpu_hour)
    tps = validate.positive("tokens_per_s_per_gpu", tokens_per_s_per_gpu)
    d = validate.fraction("derate", derate)
    return n / (tps * d * 3_600.0) * rent


def rent_vs_own_break_even_utilization(cluster: OwnedCluster,
                                       rent_krw_per_gpu_hour: float) -> float:
    """Return the utilization above which owning costs less per used GPU-hour than renting.

    Renting bills only the used hours: ``R x GPUs x 8,760 x u`` a year. Owning costs
    ``C(0) + (C(1) - C(0)) u``. They are equal at
    ``u* = C(0) / (R x GPUs x 8,760 - (C(1) - C(0)))``.

    Parameters
    ----------
    cluster : OwnedCluster
    rent_krw_per_gpu_hour : float
        Rental price per GPU-hour, >= 0. [KRW per GPU-hour]

    Returns
    -------
    float
        u*; above 1 owning never wins within the year's hours; ``math.inf`` when renting at
        full utilization costs no more than the owned energy alone. [fraction]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For a negative or non-finite rent.

    Used in: notebooks/05_break_even.ipynb
    """
    rent = validate.non_negative("rent_krw_per_gpu_hour", rent_krw_per_gpu_hour)
    fixed = cluster.annual_cost_krw(0.0)
    variable = cluster.annual_cost_krw(1.0) - fixed
    denominator = rent * cluster.gpus * HOURS_PER_YEAR - variable
    if denominator <= 0:
        return math.inf
    return fixed / denominator


# -- what moves the break-even: lesson inputs and one-at-a-time sensitivity ----------------------

#: The owned cluster's inputs (every :class:`OwnedCluster` field but the KRW server price, which a
#: scenario derives from its USD price).
CLUSTER_INPUTS: tuple[str, ...] = tuple(
    f.name for f in fields(OwnedCluster) if f.name not in ("server_capex_krw", "_"))
#: Lesson 05's own inputs, in the units the lesson shows (money in USD where the lesson says so).
LESSON_INPUTS = ("server_capex_usd", "fx_krw_per_usd", "api_price_usd_per_m",
                 "tokens_per_s_per_gpu", "derate")
#: Every input of a :class:`BreakEvenScenario` by name (what :func:`sensitivity` may vary).
SCENARIO_INPUTS = LESSON_INPUTS + CLUSTER_INPUTS


@dataclass(frozen=True)
class BreakEvenScenario:
    """Lesson 05's inputs: an owned cluster priced in USD, an API price and a throughput.

    USD is converted to KRW here, once: the scenario's cluster is ``owned`` with its server
    priced at ``server_capex_usd x fx_krw_per_usd``.

    Parameters
    ----------
    server_capex_usd : float
        One server's price. >= 0. [USD]
    fx_krw_per_usd : float
        Exchange rate, > 0. [KRW/USD]
    api_price_usd_per_m : float
        API price per 1M tokens (blended), >= 0. [USD]
    tokens_per_s_per_gpu : float
        Benchmark throughput per GPU, > 0. [tokens/s]
    derate : float
        Share of the benchmark throughput reached on the real workload, in (0, 1]. [fraction]
    owned : OwnedCluster
        The cluster's other inputs (:data:`CLUSTER_INPUTS`); its ``server_capex_krw`` is
        replaced by the converted USD price.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        Naming the field, for any value outside its range.

    See Also
    --------
    BreakEvenScenario.from_inputs : the same from flat keyword inputs (:data:`SCENARIO_INPUTS`).

    Used in: notebooks/05_break_even.ipynb
    """

    server_capex_usd: float
    fx_krw_per_usd: float
    api_price_usd_per_m: float
    tokens_per_s_per_gpu: float
    derate: float
    owned: OwnedCluster

    def __post_init__(self) -> None:
        capex = validate.non_negative("server_capex_usd", self.server_capex_usd)
        fx = validate.positive("fx_krw_per_usd", self.fx_krw_per_usd)
        validate.non_negative("api_price_usd_per_m", self.api_price_usd_per_m)
        validate.positive("tokens_per_s_per_gpu", self.tokens_per_s_per_gpu)
        validate.fraction("derate", self.derate)
        if not isinstance(self.owned, OwnedCluster):
            raise validate.InputError("owned", "other", self.owned, "owned must be an OwnedCluster")
        krw = usd_to_krw(capex, fx)
        if self.owned.server_capex_krw != krw:
            object.__setattr__(self, "owned", replace(self.owned, server_capex_krw=krw))

    @classmethod
    def from_inputs(cls, **inputs: Any) -> BreakEvenScenario:
        """Return the scenario from every input by name (:data:`SCENARIO_INPUTS`).

        Cluster inputs with a default in :class:`OwnedCluster` may be left out.

        Raises
        ------
        labkit.validate.InputError (a ValueError)
            For an unknown name (rule ``choice``), a missing lesson input (rule ``required``),
            or a value outside its field's range.
        """
        for name in inputs:
            validate.one_of("parameter", name, SCENARIO_INPUTS)
        for name in LESSON_INPUTS:
            if name not in inputs:
                raise validate.InputError(name, "required", None, f"{name} is required")
        lesson = {n: inputs[n] for n in LESSON_INPUTS}
        cluster = {n: v for n, v in inputs.items() if n in CLUSTER_INPUTS}
        capex = usd_to_krw(validate.non_negative("server_capex_usd", lesson["server_capex_usd"]),
                           validate.positive("fx_krw_per_usd", lesson["fx_krw_per_usd"]))
        return cls(**lesson, owned=OwnedCluster(capex, **cluster))

    def input(self, name: str) -> Any:
        """Return the input ``name`` (one of :data:`SCENARIO_INPUTS`), in its own unit."""
        validate.one_of("parameter", name, SCENARIO_INPUTS)
        return getattr(self if name in LESSON_INPUTS else self.owned, name)

    def with_input(self, name: str, value: Any) -> BreakEvenScenario:
        """Return the scenario with one input replaced (validated by its field).

        Raises
        ------
        labkit.validate.InputError (a ValueError)
            For an unknown name (rule ``choice``), or a value outside the field's range.
        """
        validate.one_of("parameter", name, SCENARIO_INPUTS)
        if name in LESSON_INPUTS:
            return replace(self, **{name: value})
        return replace(self, owned=replace(self.owned, **{name: value}))

    def cluster(self) -> OwnedCluster:
        """Return the owned cluster, capex converted to KRW at ``fx_krw_per_usd``."""
        return self.owned

    @property
    def api_price_krw_per_m(self) -> float:
        """The API price converted at ``fx_krw_per_usd``. [KRW per 1M tokens]"""
        return usd_to_krw(self.api_price_usd_per_m, self.fx_krw_per_usd)

    def break_even_tokens_per_month(self) -> float:
        """N* for this scenario (see :func:`break_even_tokens_per_month`). [tokens per month]"""
        return break_even_tokens_per_month(self.cluster(), self.api_price_krw_per_m,
                                           self.tokens_per_s_per_gpu, self.derate)

    def break_even_utilization(self) -> float:
        """u* for this scenario (see :func:`break_even_utilization`). [fraction]"""
        return break_even_utilization(self.cluster(), self.api_price_krw_per_m,
                                      self.tokens_per_s_per_gpu, self.derate)


def _scenario_break_even(s: BreakEvenScenario) -> float:
    return s.break_even_tokens_per_month()


def sensitivity(
    base: BreakEvenScenario,
    ranges: Mapping[str, tuple[float, float]],
    metric: Callable[[BreakEvenScenario], float] = _scenario_break_even,
) -> pd.DataFrame:
    """Return a one-at-a-time sensitivity table (the data of a tornado chart).

    Each named input is set to its low and then its high value, all others kept at ``base``,
    and ``metric`` is evaluated (by default the break-even tokens per month).

    Parameters
    ----------
    base : BreakEvenScenario
        The scenario every row starts from.
    ranges : mapping of str to (float, float)
        Scenario input name (:data:`SCENARIO_INPUTS`) -> (low, high) values, in the input's own
        unit.
    metric : callable, optional
        Scenario -> number; default :meth:`BreakEvenScenario.break_even_tokens_per_month`.

    Returns
    -------
    pandas.DataFrame
        Columns ``parameter``, ``low``, ``high``, ``result_low``, ``result_high`` (the metric's
        unit; may be ``inf``), ``swing`` = |result_high - result_low| (``inf`` if either end is
        infinite and the other is not), sorted by swing, largest first; ``attrs["base"]``
        holds the metric at ``base``.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        If a name is not a scenario field (rule ``choice``), or a low/high value is invalid for
        its field (the field's own error).

    Used in: notebooks/05_break_even.ipynb
    """
    rows = []
    for name, bounds in ranges.items():
        validate.one_of("parameter", name, SCENARIO_INPUTS)
        low, high = (validate.finite(name, v) for v in bounds)
        r_low = metric(base.with_input(name, low))
        r_high = metric(base.with_input(name, high))
        if math.isinf(r_low) and math.isinf(r_high):
            swing = 0.0
        else:
            swing = abs(r_high - r_low)
        rows.append((name, low, high, r_low, r_high, swing))
    frame = pd.DataFrame(rows, columns=["parameter", "low", "high", "result_low", "result_high",
                                        "swing"])
    frame = frame.sort_values("swing", ascending=False, kind="stable").reset_index(drop=True)
    frame.attrs["base"] = metric(base)
    return frame


# -- reading benchmark claims --------------------------------------------------------------------
