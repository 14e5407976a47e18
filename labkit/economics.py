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

Used in: notebooks/05_break_even.ipynb, notebooks/06_benchmarks.ipynb
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass, fields, replace
from enum import StrEnum
from types import MappingProxyType
from typing import Any, NamedTuple

import pandas as pd

from labkit import validate

__all__ = [
    "CHECKLIST",
    "DIVISIONS",
    "HOURS_PER_YEAR",
    "PRECISION_BITS",
    "RACK_CONDITIONS",
    "SCENARIOS",
    "SECONDS_PER_MONTH",
    "SECONDS_PER_YEAR",
    "BenchmarkResult",
    "BreakEvenScenario",
    "ChecklistItem",
    "ClaimNormalization",
    "CostBreakdown",
    "CostLine",
    "NormalizationStep",
    "OwnedCluster",
    "RackClaimCheck",
    "RackCondition",
    "RackPlan",
    "Step",
    "api_cost_krw",
    "benchmark_checklist",
    "blended_price",
    "break_even_tokens_per_month",
    "break_even_utilization",
    "capital_recovery_factor",
    "fixed_cost_krw_per_month",
    "marginal_cost_krw_per_token",
    "monthly_capacity_tokens",
    "monthly_demand_tokens",
    "normalize_claim",
    "owned_cost_krw_per_month",
    "rack_claim_check",
    "rent_cost_krw",
    "rent_vs_own_break_even_utilization",
    "sensitivity",
    "servers_and_racks",
    "usd_to_krw",
]

HOURS_PER_YEAR = 8_760.0
"""Calendar hours in a (non-leap) year. [h]"""
SECONDS_PER_YEAR = HOURS_PER_YEAR * 3_600.0
"""31,536,000 s. [s]"""
SECONDS_PER_MONTH = SECONDS_PER_YEAR / 12.0
"""A twelfth of a year: 730 h = 2,628,000 s (the model's month). [s]"""
TOKENS_PER_M = 1_000_000.0


def _at_least(field: str, value: Any, limit: float) -> float:
    x = validate.finite(field, value)
    if x < limit:
        raise validate.InputError(field, "at_least", value,
                                  f"{field} must be >= {limit:g}, got {value!r}", limit=limit)
    return x


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
            "pue": _at_least("pue", self.pue, 1.0),
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

@dataclass(frozen=True)
class BreakEvenScenario:
    """Lesson 05's inputs in the units the lesson shows; USD is converted to KRW here, once.

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
    gpus_per_server ... facility_krw_per_year
        As in :class:`OwnedCluster` (money already in KRW there).

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        Naming the field, for any value outside its range.

    Used in: notebooks/05_break_even.ipynb
    """

    server_capex_usd: float
    fx_krw_per_usd: float
    api_price_usd_per_m: float
    tokens_per_s_per_gpu: float
    derate: float
    gpus_per_server: int
    max_it_power_kw: float
    idle_power_fraction: float
    pue: float
    energy_price_krw_per_kwh: float
    servers: int = 1
    depreciation_years: float = 4
    cost_of_capital: float = 0.0
    base_charge_krw_per_kw_month: float = 0.0
    staff_krw_per_year: float = 0.0
    maintenance_fraction_per_year: float = 0.0
    facility_krw_per_year: float = 0.0

    def __post_init__(self) -> None:
        validate.non_negative("server_capex_usd", self.server_capex_usd)
        validate.positive("fx_krw_per_usd", self.fx_krw_per_usd)
        validate.non_negative("api_price_usd_per_m", self.api_price_usd_per_m)
        validate.positive("tokens_per_s_per_gpu", self.tokens_per_s_per_gpu)
        validate.fraction("derate", self.derate)
        # built (and so validated) once; the scenario is frozen, so the cluster never changes
        object.__setattr__(self, "_cluster", self._build_cluster())

    def cluster(self) -> OwnedCluster:
        """Return the owned cluster, capex converted to KRW at ``fx_krw_per_usd``."""
        return self._cluster  # type: ignore[attr-defined, no-any-return]

    def _build_cluster(self) -> OwnedCluster:
        return OwnedCluster(
            usd_to_krw(self.server_capex_usd, self.fx_krw_per_usd), self.gpus_per_server,
            servers=self.servers, depreciation_years=self.depreciation_years,
            cost_of_capital=self.cost_of_capital, max_it_power_kw=self.max_it_power_kw,
            idle_power_fraction=self.idle_power_fraction, pue=self.pue,
            energy_price_krw_per_kwh=self.energy_price_krw_per_kwh,
            base_charge_krw_per_kw_month=self.base_charge_krw_per_kw_month,
            staff_krw_per_year=self.staff_krw_per_year,
            maintenance_fraction_per_year=self.maintenance_fraction_per_year,
            facility_krw_per_year=self.facility_krw_per_year,
        )

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
        Scenario field name -> (low, high) values, in the field's own unit. At most as many
        entries as the scenario has fields.
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
    names = [f.name for f in fields(BreakEvenScenario)]
    rows = []
    for name, bounds in ranges.items():
        validate.one_of("parameter", name, names)
        low, high = (validate.finite(name, v) for v in bounds)
        at_low: dict[str, Any] = {name: low}
        at_high: dict[str, Any] = {name: high}
        r_low = metric(replace(base, **at_low))
        r_high = metric(replace(base, **at_high))
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

PRECISION_BITS: Mapping[str, int] = MappingProxyType(
    {"FP4": 4, "FP6": 6, "FP8": 8, "INT8": 8, "FP16": 16, "BF16": 16, "FP32": 32})
"""Bits per weight/activation of each number format (peak math rate doubles per halving)."""
SCENARIOS = ("Offline", "Server", "Interactive")
"""MLPerf Inference LLM scenarios: no latency limit; TTFT <= 2 s and TPOT <= 200 ms;
TTFT <= 450 ms and TPOT <= 40 ms (Llama2-70B, MLPerf Inference v5.0 rules)."""
DIVISIONS = ("closed", "open")


def _optional_positive(field: str, value: Any) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return validate.positive(field, value)


def _required(field: str, record: Mapping[str, Any]) -> Any:
    value = record.get(field)
    if value is None or (isinstance(value, float) and math.isnan(value)) or value == "":
        raise validate.InputError(field, "required", value, f"{field} is required, got {value!r}")
    return value


@dataclass(frozen=True)
class BenchmarkResult:
    """One published inference result (an MLPerf row, or a vendor's claim).

    Parameters
    ----------
    system : str
        Name of the system as submitted. Non-empty.
    accelerator : str
        Accelerator name (``"H100-SXM-80GB"``). Non-empty.
    accelerators : int
        Accelerators the result was measured on (all nodes), >= 1. [count]
    tokens_per_s : float
        The result, output tokens per second for the whole system, > 0. [tokens/s]
    precision : str
        Number format of the run, one of :data:`PRECISION_BITS`.
    sparsity : bool, default False
        Whether structured (2:4) sparsity was used.
    scenario : str, default "Offline"
        One of :data:`SCENARIOS`.
    benchmark : str, default ""
        Benchmark / model (``"llama2-70b-99"``).
    division : str, default "closed"
        ``"closed"`` (same model and accuracy) or ``"open"`` (model may be changed).
    version : str, default ""
        Round (``"v5.0"``).
    availability : str, default "available"
        ``"available"``, ``"preview"`` or ``"rdi"``.
    power_w_system : float or None, default None
        Measured whole-system power (MLPerf Power), > 0. [W]
    tdp_w_per_accelerator : float or None, default None
        Rated accelerator power, > 0 (H100 SXM 700 W, B200 1,000 W). [W]
    submitter : str, default ""

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        Naming the field, for an empty name, a bad count, result, precision, scenario, division
        or power.

    Used in: notebooks/06_benchmarks.ipynb
    """

    system: str
    accelerator: str
    accelerators: int
    tokens_per_s: float
    precision: str
    sparsity: bool = False
    scenario: str = "Offline"
    benchmark: str = ""
    division: str = "closed"
    version: str = ""
    availability: str = "available"
    power_w_system: float | None = None
    tdp_w_per_accelerator: float | None = None
    submitter: str = ""

    def __post_init__(self) -> None:
        for name in ("system", "accelerator"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise validate.InputError(name, "required", value, f"{name} must be a name")
        object.__setattr__(self, "accelerators",
                           validate.integer("accelerators", self.accelerators, minimum=1))
        object.__setattr__(self, "tokens_per_s",
                           validate.positive("tokens_per_s", self.tokens_per_s))
        validate.one_of("precision", self.precision, PRECISION_BITS)
        validate.one_of("scenario", self.scenario, SCENARIOS)
        validate.one_of("division", self.division, DIVISIONS)
        if not isinstance(self.sparsity, bool):
            raise validate.InputError("sparsity", "choice", self.sparsity,
                                      "sparsity must be True or False", limit=(True, False))
        object.__setattr__(self, "power_w_system",
                           _optional_positive("power_w_system", self.power_w_system))
        object.__setattr__(self, "tdp_w_per_accelerator",
                           _optional_positive("tdp_w_per_accelerator",
                                              self.tdp_w_per_accelerator))

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> BenchmarkResult:
        """Build a result from one row of the MLPerf table (``data/economics/mlperf_...csv``).

        Uses the columns ``system``, ``accelerator``, ``total_accel``, ``result``,
        ``precision`` (required) and ``sparsity``, ``scenario``, ``benchmark``, ``division``,
        ``version``, ``availability``, ``power_w_system``, ``tdp_w``, ``submitter``.

        Raises
        ------
        labkit.validate.InputError (a ValueError)
            Rule ``required`` naming the column when a required field is missing or empty;
            otherwise as the constructor.
        """
        return cls(
            system=str(_required("system", record)),
            accelerator=str(_required("accelerator", record)),
            accelerators=_required("total_accel", record),
            tokens_per_s=_required("result", record),
            precision=str(_required("precision", record)),
            sparsity=bool(record.get("sparsity", False)),
            scenario=str(record.get("scenario") or "Offline"),
            benchmark=str(record.get("benchmark") or ""),
            division=str(record.get("division") or "closed"),
            version=str(record.get("version") or ""),
            availability=str(record.get("availability") or "available"),
            power_w_system=record.get("power_w_system"),
            tdp_w_per_accelerator=record.get("tdp_w"),
            submitter=str(record.get("submitter") or ""),
        )

    @property
    def tokens_per_s_per_accelerator(self) -> float:
        """The result divided by the accelerator count. [tokens/s per accelerator]"""
        return self.tokens_per_s / self.accelerators

    @property
    def tokens_per_joule(self) -> float | None:
        """Tokens per joule of measured system power, or None when power was not measured."""
        if self.power_w_system is None:
            return None
        return self.tokens_per_s / self.power_w_system

    def watts_per_accelerator(self) -> tuple[float, str] | None:
        """Return (watts per accelerator, basis): measured system power / count, else TDP."""
        if self.power_w_system is not None:
            return self.power_w_system / self.accelerators, "measured"
        if self.tdp_w_per_accelerator is not None:
            return self.tdp_w_per_accelerator, "tdp"
        return None


class Step(StrEnum):
    """The normalization steps, in order.

    Used in: notebooks/06_benchmarks.ipynb
    """

    PER_SYSTEM = "per_system"
    PER_ACCELERATOR = "per_accelerator"
    PRECISION = "precision"
    SPARSITY = "sparsity"
    PER_WATT = "per_watt"


@dataclass(frozen=True)
class NormalizationStep:
    """One visible step of :func:`normalize_claim`.

    Attributes
    ----------
    key : Step
    factor : float
        What this step multiplied the ratio by (1.0 when not applied). [unitless]
    ratio : float
        The claimant / baseline ratio after this step. [unitless]
    applied : bool
        Whether the step changed anything (False: not needed, or not possible).
    detail : mapping
        The numbers behind the step, for the lesson's explanation.

    Used in: notebooks/06_benchmarks.ipynb
    """

    key: Step
    factor: float
    ratio: float
    applied: bool
    detail: Mapping[str, Any]


@dataclass(frozen=True)
class ClaimNormalization:
    """A claim taken apart: the headline ratio and each adjustment (see :func:`normalize_claim`).

    Used in: notebooks/06_benchmarks.ipynb
    """

    claimant: BenchmarkResult
    baseline: BenchmarkResult
    steps: tuple[NormalizationStep, ...]

    @property
    def ratio(self) -> float:
        """The ratio after the last step. [unitless]"""
        return self.steps[-1].ratio

    def step(self, key: str) -> NormalizationStep:
        """Return the step named ``key`` (a :class:`Step` value)."""
        for s in self.steps:
            if s.key == key:
                return s
        raise KeyError(key)

    def table(self) -> pd.DataFrame:
        """Return the steps as a frame: ``step``, ``factor``, ``ratio``, ``applied``."""
        return pd.DataFrame([(s.key.value, s.factor, s.ratio, s.applied) for s in self.steps],
                            columns=["step", "factor", "ratio", "applied"])


def normalize_claim(
    claimant: BenchmarkResult,
    baseline: BenchmarkResult,
    *,
    precision_gain: float = 2.0,
    sparsity_gain: float = 2.0,
    per_watt: bool = True,
) -> ClaimNormalization:
    """Take a "X times faster" claim apart, one visible adjustment at a time.

    Steps (each a :class:`NormalizationStep`; a step that is not needed or not possible keeps
    the ratio and says why):

    1. ``per_system`` — the published results, system against system.
    2. ``per_accelerator`` — divided by the accelerator counts (a 72-GPU rack is one "system").
    3. ``precision`` — the claimant's lower-precision advantage removed: the ratio is divided
       by ``precision_gain`` per halving of bits (FP8 -> FP4 is one halving); multiplied when
       the baseline ran at the lower precision.
    4. ``sparsity`` — divided by ``sparsity_gain`` if only the claimant used 2:4 sparsity
       (multiplied if only the baseline did).
    5. ``per_watt`` — multiplied by (baseline watts / claimant watts) per accelerator: measured
       system power when both results state it (tokens per joule), else rated power (TDP),
       else not possible.

    Parameters
    ----------
    claimant, baseline : BenchmarkResult
        The result making the claim and the one it is compared with.
    precision_gain : float, default 2.0
        Speed-up from one halving of bits, >= 1. 2.0 is the peak-FLOPS worst case; MLPerf
        v5.1 measured ~1.54 on B200 (FP4 closed 101,527 vs FP8 open 65,770 tokens/s,
        Llama2-70B vs Llama 3.1 70B substituted: indicative). 1.0 skips the step.
    sparsity_gain : float, default 2.0
        Speed-up from 2:4 sparsity, >= 1 (peak 2.0; NVIDIA's open-division H200 "Sparse"
        run gained ~1.17, MLPerf v4.1). 1.0 skips the step.
    per_watt : bool, default True
        Whether to end with the per-watt step.

    Returns
    -------
    ClaimNormalization

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        If a gain is not a finite number >= 1.

    References
    ----------
    .. [1] MLCommons, MLPerf Inference v4.1 (2024-08-28), v5.0 (2025-04-02), v5.1 (2025-09-09)
       results repositories, ``summary_results.json`` / ``mlperf_log_summary.txt``.

    Used in: notebooks/06_benchmarks.ipynb
    """
    p_gain = _at_least("precision_gain", precision_gain, 1.0)
    s_gain = _at_least("sparsity_gain", sparsity_gain, 1.0)
    a, b = claimant, baseline
    steps: list[NormalizationStep] = []

    ratio = a.tokens_per_s / b.tokens_per_s
    steps.append(NormalizationStep(Step.PER_SYSTEM, ratio, ratio, True, {
        "claimant_tokens_per_s": a.tokens_per_s, "baseline_tokens_per_s": b.tokens_per_s}))

    factor = b.accelerators / a.accelerators
    ratio *= factor
    steps.append(NormalizationStep(Step.PER_ACCELERATOR, factor, ratio, factor != 1.0, {
        "claimant_accelerators": a.accelerators, "baseline_accelerators": b.accelerators,
        "claimant_per_accelerator": a.tokens_per_s_per_accelerator,
        "baseline_per_accelerator": b.tokens_per_s_per_accelerator}))

    halvings = math.log2(PRECISION_BITS[b.precision] / PRECISION_BITS[a.precision])
    factor = p_gain ** (-halvings)
    ratio *= factor
    steps.append(NormalizationStep(Step.PRECISION, factor, ratio, factor != 1.0, {
        "claimant_precision": a.precision, "baseline_precision": b.precision,
        "halvings": halvings, "gain": p_gain}))

    factor = 1.0
    if a.sparsity and not b.sparsity:
        factor = 1.0 / s_gain
    elif b.sparsity and not a.sparsity:
        factor = s_gain
    ratio *= factor
    steps.append(NormalizationStep(Step.SPARSITY, factor, ratio, factor != 1.0, {
        "claimant_sparsity": a.sparsity, "baseline_sparsity": b.sparsity, "gain": s_gain}))

    if per_watt:
        wa, wb = a.watts_per_accelerator(), b.watts_per_accelerator()
        basis = None
        factor = 1.0
        if a.power_w_system is not None and b.power_w_system is not None:
            basis = "measured"
        elif a.tdp_w_per_accelerator is not None and b.tdp_w_per_accelerator is not None:
            basis = "tdp"
            wa = (a.tdp_w_per_accelerator, "tdp")
            wb = (b.tdp_w_per_accelerator, "tdp")
        if basis is not None and wa is not None and wb is not None:
            factor = wb[0] / wa[0]
        ratio *= factor
        steps.append(NormalizationStep(Step.PER_WATT, factor, ratio, basis is not None, {
            "basis": basis, "claimant_w_per_accelerator": wa[0] if wa else None,
            "baseline_w_per_accelerator": wb[0] if wb else None}))
    return ClaimNormalization(a, b, tuple(steps))


@dataclass(frozen=True)
class ChecklistItem:
    """One question of the benchmark checklist, answered for a pair of results.

    ``status`` is ``"ok"`` (comparable as stated), ``"warn"`` (the figures differ in a way
    that moves the ratio) or ``"unknown"`` (the data does not say); ``values`` holds what the
    lesson shows.

    Used in: notebooks/06_benchmarks.ipynb
    """

    key: str
    status: str
    values: Mapping[str, Any]


CHECKLIST = ("baseline", "precision", "sparsity", "model", "chip_vs_system", "slo", "power",
             "division", "availability")
"""The checklist questions a pair of results can answer (course notes "벤치마크 읽는 법";
demand and other bottlenecks are checked with :func:`rack_claim_check`)."""


def benchmark_checklist(claimant: BenchmarkResult,
                        baseline: BenchmarkResult) -> tuple[ChecklistItem, ...]:
    """Answer the checklist for a claim "claimant is X times baseline".

    Returns
    -------
    tuple of ChecklistItem
        One per :data:`CHECKLIST` key, in order: the same round (software moves results: the
        same DGX-H100 gained 27.7 % from v4.1 to v5.0), the same precision, no sparsity, the same
        benchmark, accelerator counts, the same scenario (SLO), power stated, closed division,
        available hardware.

    Used in: notebooks/06_benchmarks.ipynb
    """
    a, b = claimant, baseline

    def item(key: str, ok: bool | None, **values: Any) -> ChecklistItem:
        status = "unknown" if ok is None else ("ok" if ok else "warn")
        return ChecklistItem(key, status, {"claimant": None, "baseline": None, **values})

    both_power = a.power_w_system is not None and b.power_w_system is not None
    both_tdp = a.tdp_w_per_accelerator is not None and b.tdp_w_per_accelerator is not None
    return (
        item("baseline", a.version == b.version if a.version and b.version else None,
             claimant=a.version, baseline=b.version),
        item("precision", a.precision == b.precision, claimant=a.precision,
             baseline=b.precision),
        item("sparsity", not (a.sparsity or b.sparsity), claimant=a.sparsity,
             baseline=b.sparsity),
        item("model", a.benchmark == b.benchmark if a.benchmark and b.benchmark else None,
             claimant=a.benchmark, baseline=b.benchmark),
        item("chip_vs_system", a.accelerators == b.accelerators, claimant=a.accelerators,
             baseline=b.accelerators),
        item("slo", a.scenario == b.scenario, claimant=a.scenario, baseline=b.scenario),
        item("power", True if both_power else (None if not both_tdp else False),
             claimant=a.power_w_system, baseline=b.power_w_system),
        item("division", a.division == b.division == "closed", claimant=a.division,
             baseline=b.division),
        item("availability", a.availability == b.availability == "available",
             claimant=a.availability, baseline=b.availability),
    )


# -- "3x faster = a third of the racks" ---------------------------------------------------------

def _ceil(x: float) -> int:
    """Ceiling that treats float noise next to a whole number (3.0000000001) as that number."""
    n = round(x)
    return int(n) if abs(x - n) <= 1e-9 * max(1.0, abs(x)) else math.ceil(x)


def _floor(x: float) -> int:
    """Floor with the same tolerance as :func:`_ceil`."""
    n = round(x)
    return int(n) if abs(x - n) <= 1e-9 * max(1.0, abs(x)) else math.floor(x)


class RackPlan(NamedTuple):
    """Servers and racks for a demand (see :func:`servers_and_racks`).

    Used in: notebooks/06_benchmarks.ipynb
    """

    servers: int
    racks: int
    provisioned_kw: float


def servers_and_racks(demand_tokens_per_s: float, tokens_per_s_per_server: float,
                      server_kw: float, rack_kw: float) -> RackPlan:
    """Return the servers and racks a demand needs under a rack power limit.

    ``servers = ceil(demand / throughput)``; a rack holds ``floor(rack_kw / server_kw)``
    servers; ``racks = ceil(servers / per rack)``; provisioned power = servers x server_kw.

    Parameters
    ----------
    demand_tokens_per_s : float
        Peak demand to serve, >= 0. [tokens/s]
    tokens_per_s_per_server : float
        What one server sustains on this workload, > 0. [tokens/s]
    server_kw : float
        One server's maximum power, > 0 and <= ``rack_kw``. [kW]
    rack_kw : float
        Power (and cooling) a rack can supply, > 0 (enterprise average < 8-10 kW; air-cooled
        H100/H200 racks 20-40 kW; Uptime Institute survey 2024). [kW]

    Returns
    -------
    RackPlan
        (servers, racks, provisioned kW); (0, 0, 0.0) for no demand.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For NaN/inf, non-numbers, negative demand, throughput or power <= 0, or a server that
        needs more power than a rack supplies.

    Used in: notebooks/06_benchmarks.ipynb
    """
    demand = validate.non_negative("demand_tokens_per_s", demand_tokens_per_s)
    tps = validate.positive("tokens_per_s_per_server", tokens_per_s_per_server)
    rack = validate.positive("rack_kw", rack_kw)
    kw = validate.at_most("server_kw", validate.positive("server_kw", server_kw), rack,
                          "rack_kw")
    servers = max(_ceil(demand / tps), 1) if demand > 0 else 0
    per_rack = _floor(rack / kw)
    racks = math.ceil(servers / per_rack)
    return RackPlan(servers, racks, servers * kw)


@dataclass(frozen=True)
class RackCondition:
    """One of the four conditions of "3x faster = a third of the racks", evaluated.

    Used in: notebooks/06_benchmarks.ipynb
    """

    key: str
    ok: bool
    values: Mapping[str, Any]


@dataclass(frozen=True)
class RackClaimCheck:
    """The result of :func:`rack_claim_check`.

    Used in: notebooks/06_benchmarks.ipynb
    """

    old: RackPlan
    new: RackPlan
    claimed_speedup: float
    effective_speedup: float
    target_racks: int
    conditions: tuple[RackCondition, ...]

    @property
    def rack_ratio(self) -> float:
        """New racks / old racks (nan without demand). [unitless]"""
        return self.new.racks / self.old.racks if self.old.racks else math.nan

    @property
    def verdict(self) -> str:
        """``"holds"`` (a third of the racks, all four conditions met), ``"partly"`` (fewer
        racks, but not the claimed cut or not every condition) or ``"fails"`` (no fewer racks).
        """
        if self.new.racks <= self.target_racks and all(c.ok for c in self.conditions):
            return "holds"
        if self.new.racks < self.old.racks:
            return "partly"
        return "fails"


RACK_CONDITIONS = ("workload", "power", "demand", "bottleneck")
"""The four conditions (course notes, "3배 성능 = 랙 수 1/3이 성립하려면")."""


def rack_claim_check(
    demand_tokens_per_s: float,
    old_tokens_per_s_per_server: float,
    old_server_kw: float,
    new_server_kw: float,
    rack_kw: float,
    *,
    claimed_speedup: float = 3.0,
    workload_speedup: float | None = None,
    feed_limit_tokens_per_s_per_server: float | None = None,
    tolerance: float = 0.05,
) -> RackClaimCheck:
    """Check "N times faster, so 1/N of the racks" for a demand, condition by condition.

    Conditions (:data:`RACK_CONDITIONS`):

    1. ``workload`` — the speed-up holds on my workload: ``workload_speedup >= claimed x
       (1 - tolerance)``;
    2. ``power`` — server (hence rack) power did not grow: ``new_kw <= old_kw x (1 +
       tolerance)``; otherwise fewer servers fit per rack and energy per token falls less;
    3. ``demand`` — there is demand to fill it: the old fleet has at least ``claimed_speedup``
       servers (one box stays one box, whatever its speed);
    4. ``bottleneck`` — storage, network or host can feed the faster server: its throughput
       ``old x workload_speedup`` is at most ``feed_limit_tokens_per_s_per_server``.

    The new server's throughput is ``old x workload_speedup``, capped at the feed limit.

    Parameters
    ----------
    demand_tokens_per_s : float
        Peak demand, >= 0. [tokens/s]
    old_tokens_per_s_per_server, old_server_kw : float
        Today's server: throughput (> 0) [tokens/s] and power (> 0) [kW].
    new_server_kw : float
        The faster server's power, > 0. [kW]
    rack_kw : float
        Rack power limit, > 0, at least each server's power. [kW]
    claimed_speedup : float, default 3.0
        The advertised speed-up, >= 1. [unitless]
    workload_speedup : float, optional
        The speed-up measured on my workload, > 0; defaults to the claim. [unitless]
    feed_limit_tokens_per_s_per_server : float, optional
        Most tokens/s the rest of the system can feed one server, > 0; None = no limit.
        [tokens/s]
    tolerance : float, default 0.05
        Slack for conditions 1 and 2, in [0, 1). [fraction]

    Returns
    -------
    RackClaimCheck
        Old and new :class:`RackPlan`, the racks the claim promises (``ceil(old / N)``), the
        conditions and a verdict.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        Naming the field, for any bad value (see :func:`servers_and_racks`).

    Used in: notebooks/06_benchmarks.ipynb
    """
    claimed = _at_least("claimed_speedup", claimed_speedup, 1.0)
    workload = (claimed if workload_speedup is None
                else validate.positive("workload_speedup", workload_speedup))
    tol = validate.finite("tolerance", tolerance)
    if not 0 <= tol < 1:
        raise validate.InputError("tolerance", "fraction", tolerance,
                                  f"tolerance must be in [0, 1), got {tolerance!r}",
                                  limit="[0, 1)")
    old_tps = validate.positive("old_tokens_per_s_per_server", old_tokens_per_s_per_server)
    rack = validate.positive("rack_kw", rack_kw)
    for name, value in (("old_server_kw", old_server_kw), ("new_server_kw", new_server_kw)):
        validate.at_most(name, validate.positive(name, value), rack, "rack_kw")
    feed = (None if feed_limit_tokens_per_s_per_server is None
            else validate.positive("feed_limit_tokens_per_s_per_server",
                                   feed_limit_tokens_per_s_per_server))
    wanted_tps = old_tps * workload
    new_tps = min(wanted_tps, feed) if feed is not None else wanted_tps
    old = servers_and_racks(demand_tokens_per_s, old_tps, old_server_kw, rack_kw)
    new = servers_and_racks(demand_tokens_per_s, new_tps, new_server_kw, rack_kw)
    old_kw = validate.positive("old_server_kw", old_server_kw)
    new_kw = validate.positive("new_server_kw", new_server_kw)
    per_rack_old = _floor(rack_kw / old_kw)
    per_rack_new = _floor(rack_kw / new_kw)
    power_ratio = new_kw / old_kw
    effective = new_tps / old_tps
    demand = validate.non_negative("demand_tokens_per_s", demand_tokens_per_s)
    conditions = (
        RackCondition("workload", workload >= claimed * (1 - tol),
                      {"claimed": claimed, "workload": workload}),
        RackCondition("power", new_kw <= old_kw * (1 + tol),
                      {"old_kw": old_kw, "new_kw": new_kw, "power_ratio": power_ratio,
                       "tokens_per_kw_gain": effective / power_ratio,
                       "per_rack_old": per_rack_old, "per_rack_new": per_rack_new}),
        RackCondition("demand", old.servers >= claimed,
                      {"old_servers": old.servers, "new_servers": new.servers,
                       "claimed": claimed,
                       "new_utilization": (demand / (new.servers * new_tps)
                                           if new.servers else 0.0)}),
        RackCondition("bottleneck", feed is None or wanted_tps <= feed,
                      {"wanted_tokens_per_s": wanted_tps, "feed_limit": feed,
                       "effective_tokens_per_s": new_tps}),
    )
    return RackClaimCheck(old, new, claimed, effective, _ceil(old.racks / claimed),
                          conditions)
