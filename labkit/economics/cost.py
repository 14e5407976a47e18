"""What owned GPUs cost per year: units, the capital recovery factor, the cost breakdown.

Pure. The TCO decomposition and its sources are in :mod:`labkit.economics`.

Used in: notebooks/05_break_even.ipynb
"""

from __future__ import annotations

import math
from dataclasses import KW_ONLY, dataclass, fields, replace
from enum import StrEnum

import pandas as pd

from labkit import validate

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


