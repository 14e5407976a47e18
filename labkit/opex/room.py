"""Lesson 07's room: servers, the room's design, its year of bills and costs (:mod:`labkit.opex`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from labkit import economics, loadprofile, validate
from labkit.economics import CostBreakdown, OwnedCluster
from labkit.loadprofile import SchoolCalendar, Usage
from labkit.tariff import Season, Tariff, monthly_bill

__all__ = ["MAX_CONTRACT_KW", "MAX_KRW", "MAX_SERVERS", "MAX_STUDENTS_PER_GPU", "MAX_YEARS",
           "OpexResult", "RoomDesign", "ServerSpec", "evaluate"]

MAX_SERVERS = 64  # a school room; bounds nothing in arrays but keeps the room plausible
#: Upper bounds that keep every bill and cost line finite (1e308 typed in a box would overflow
#: to inf/nan); each is far beyond any school: 100 MW contract power, 10조 won, 100 years,
#: 1,000 students on one GPU.
MAX_CONTRACT_KW = 100_000.0
MAX_KRW = 1e13
MAX_YEARS = 100.0
MAX_STUDENTS_PER_GPU = 1_000


@dataclass(frozen=True)
class ServerSpec:
    """One server type: price, GPUs, power, inference throughput, MIG slices per GPU.

    Parameters
    ----------
    name : str
        Display name ("8×H100 (HGX/DGX)").
    server_capex_krw : float
        Purchase price, all-in. [KRW]
    gpus_per_server : int
        GPUs per server. [GPUs]
    max_it_power_kw : float
        Maximum IT power of one server. [kW]
    tokens_per_s_per_gpu : float
        Output tokens/s per GPU on the reference benchmark (MLPerf Inference). [tokens/s]
    mig_instances_per_gpu : int, default 1
        Smallest-profile MIG instances per GPU (7 on A100/H100/H200/B200; 1 without MIG).
    source : str
        Where the figures come from.

    Used in: notebooks/07_opex_lab.ipynb
    """

    name: str
    server_capex_krw: float
    gpus_per_server: int
    max_it_power_kw: float
    tokens_per_s_per_gpu: float
    mig_instances_per_gpu: int = 1
    source: str = ""

    def __post_init__(self) -> None:
        clean = {
            "server_capex_krw": validate.non_negative("server_capex_krw", self.server_capex_krw),
            "gpus_per_server": validate.integer("gpus_per_server", self.gpus_per_server,
                                                minimum=1),
            "max_it_power_kw": validate.positive("max_it_power_kw", self.max_it_power_kw),
            "tokens_per_s_per_gpu": validate.positive("tokens_per_s_per_gpu",
                                                      self.tokens_per_s_per_gpu),
            "mig_instances_per_gpu": validate.integer("mig_instances_per_gpu",
                                                      self.mig_instances_per_gpu, minimum=1),
        }
        for name, value in clean.items():
            object.__setattr__(self, name, value)


#: Most a season may add to or take from the room's PUE. [unitless]
MAX_PUE_ADD = 1.0
#: KEPCO's seasons of months 1-12 (summer Jun-Aug, winter Nov-Feb; 기본공급약관), the default
#: of :meth:`RoomDesign.pue_of_months` (a tariff carries its own ``season_of_month``).
KEPCO_SEASONS = (Season.WINTER, Season.WINTER, *[Season.SPRING_FALL] * 3, *[Season.SUMMER] * 3,
                 *[Season.SPRING_FALL] * 2, Season.WINTER, Season.WINTER)


@dataclass(frozen=True)
class RoomDesign:
    """The room a teacher designs: servers, power, tariff options, people and money.

    Parameters
    ----------
    server : ServerSpec
    n_servers : int, default 1
        1-64 servers.
    pue : float, default 1.5
        Facility / IT power, >= 1 (small school room 1.5-2.0); in spring and fall when
        the seasonal terms below are set. [unitless]
    summer_pue_add, winter_pue_add : float, default 0
        Added to ``pue`` in the tariff's summer (Jun-Aug) and winter (Nov-Feb) months: a small
        room's cooling follows the outdoor temperature, so its PUE does too (The Green Grid
        WP#49, 2012: PUE varies with season, report it over a full year). Within ±1; a
        season's PUE is at least 1. [unitless]
    idle_frac : float, default 0.3
        Idle IT power as a share of the maximum (teaching assumption; measure yours). [0-1]
    contract_kw : float, optional
        Contract power for the room; default: the peak facility kW rounded up to a whole kW.
        [kW]
    school_exception : bool, default False
        Apply KEPCO's K-12 rule (15 % floor, this month's demand only).
    staff_fte : float, default 0.2
        Share of one systems engineer's time (0.1-0.3 for a small cluster). [FTE]
    staff_krw_per_fte_year : float, default 60,000,000
        Loaded cost of one FTE. [KRW/year]
    maintenance_frac : float, default 0.05
        Hardware support per year, share of capex (OEM warranties 3-8 %). [fraction/year]
    facility_upgrade_krw : float, default 40,000,000
        Electrical, cooling and UPS work for the room (15-20 kW room: 20-60 M). [KRW]
    facility_years : float, default 10
        Years the upgrade is amortized over. [years]
    depreciation_years : float, default 4
        Server life, straight line, no residual value. [years]
    cost_of_capital : float, default 0
        Annual r (0 for a school budget; 5-10 % for companies). [fraction/year]
    students_per_gpu : int, optional
        Students one GPU serves at once; default the server's MIG instances per GPU.
    derate : float, default 0.5
        Share of the benchmark throughput reached on the real workload (latency limits and long
        prompts: NVIDIA NIM Llama-3.3-70B reached ~10 % of MLPerf's per-H100 figure). (0, 1]
    rent_krw_per_gpu_hour : float, default 4,186
        Cloud rental (USD 2.99 neocloud H100 x KRW 1,400). [KRW/GPU-h]
    api_krw_per_m_tokens : float, default 840
        API price per 1M tokens, 3:1 input:output blend (USD 0.60 x 1,400). [KRW/1M tokens]

    Defaults: the course reference's teaching defaults (economics §6.3, §9), not facts.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        Naming the field for any value outside the ranges above.

    Used in: notebooks/07_opex_lab.ipynb
    """

    server: ServerSpec
    n_servers: int = 1
    pue: float = 1.5
    idle_frac: float = 0.3
    contract_kw: float | None = None
    school_exception: bool = False
    staff_fte: float = 0.2
    staff_krw_per_fte_year: float = 60_000_000
    maintenance_frac: float = 0.05
    facility_upgrade_krw: float = 40_000_000
    facility_years: float = 10
    depreciation_years: float = 4
    cost_of_capital: float = 0.0
    students_per_gpu: int | None = None
    derate: float = 0.5
    rent_krw_per_gpu_hour: float = 4_186
    api_krw_per_m_tokens: float = 840
    summer_pue_add: float = 0.0
    winter_pue_add: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.server, ServerSpec):
            raise validate.InputError("server", "other", type(self.server).__name__,
                                      "server must be a ServerSpec")
        n = validate.integer("n_servers", self.n_servers, minimum=1)
        validate.at_most("n_servers", n, MAX_SERVERS, str(MAX_SERVERS))
        pue = validate.finite("pue", self.pue)
        if pue < 1:
            raise validate.InputError("pue", "at_least", self.pue,
                                      f"pue must be >= 1, got {self.pue!r}", limit=1.0)
        staff_fte = validate.non_negative("staff_fte", self.staff_fte)
        seasonal = {}
        for name in ("summer_pue_add", "winter_pue_add"):
            add = validate.finite(name, getattr(self, name))
            if abs(add) > MAX_PUE_ADD:
                raise validate.InputError(name, "at_most", add,
                                          f"{name} must be within ±{MAX_PUE_ADD:g}, got {add!r}",
                                          limit=MAX_PUE_ADD)
            seasonal[name] = add
        clean: dict[str, Any] = {
            "n_servers": n, "pue": pue, **seasonal,
            "idle_frac": validate.fraction("idle_frac", self.idle_frac, allow_zero=True),
            "contract_kw": None if self.contract_kw is None
            else validate.positive("contract_kw", self.contract_kw),
            "school_exception": bool(self.school_exception),
            "staff_fte": validate.at_most("staff_fte", staff_fte, 10, "10"),
            "staff_krw_per_fte_year": validate.non_negative("staff_krw_per_fte_year",
                                                            self.staff_krw_per_fte_year),
            "maintenance_frac": validate.fraction("maintenance_frac", self.maintenance_frac,
                                                  allow_zero=True),
            "facility_upgrade_krw": validate.non_negative("facility_upgrade_krw",
                                                          self.facility_upgrade_krw),
            "facility_years": validate.positive("facility_years", self.facility_years),
            "depreciation_years": validate.positive("depreciation_years",
                                                    self.depreciation_years),
            "cost_of_capital": validate.fraction("cost_of_capital", self.cost_of_capital,
                                                 allow_zero=True),
            "students_per_gpu": None if self.students_per_gpu is None
            else validate.integer("students_per_gpu", self.students_per_gpu, minimum=1),
            "derate": validate.fraction("derate", self.derate),
            "rent_krw_per_gpu_hour": validate.non_negative("rent_krw_per_gpu_hour",
                                                           self.rent_krw_per_gpu_hour),
            "api_krw_per_m_tokens": validate.non_negative("api_krw_per_m_tokens",
                                                          self.api_krw_per_m_tokens),
        }
        self._bound(clean)
        for name, value in clean.items():
            object.__setattr__(self, name, value)

    @staticmethod
    def _bound(clean: dict[str, Any]) -> None:
        """Raise for a value past the MAX_* bounds (each cost stays finite)."""
        limits = {"contract_kw": MAX_CONTRACT_KW, "staff_krw_per_fte_year": MAX_KRW,
                  "facility_upgrade_krw": MAX_KRW, "rent_krw_per_gpu_hour": MAX_KRW,
                  "api_krw_per_m_tokens": MAX_KRW, "facility_years": MAX_YEARS,
                  "depreciation_years": MAX_YEARS, "students_per_gpu": MAX_STUDENTS_PER_GPU}
        for name, limit in limits.items():
            value = clean[name]
            if value is not None and value > limit:
                raise validate.InputError(name, "at_most", value,
                                          f"{name} must be <= {limit:,.0f}, got {value!r}",
                                          limit=f"{limit:,.0f}")

    @property
    def gpus(self) -> int:
        """GPUs in the room. [GPUs]"""
        return self.server.gpus_per_server * self.n_servers

    @property
    def peak_pue(self) -> float:
        """The highest PUE of the year (spring/fall, summer or winter). [unitless]"""
        return max(self.pue_of_months())

    def pue_of_months(self, seasons: Sequence[Season] = KEPCO_SEASONS) -> tuple[float, ...]:
        """PUE of months 1-12 by the season of each month (at least 1). [unitless]"""
        add = {Season.SUMMER: self.summer_pue_add, Season.WINTER: self.winter_pue_add}
        return tuple(max(1.0, self.pue + add.get(season, 0.0)) for season in seasons)

    @property
    def peak_facility_kw(self) -> float:
        """All servers at full power x the year's highest PUE. [kW]"""
        return self.server.max_it_power_kw * self.n_servers * self.peak_pue

    @property
    def contract(self) -> float:
        """Contract power: as given, else the peak facility kW rounded up. [kW]"""
        if self.contract_kw is not None:
            return float(self.contract_kw)
        return float(np.ceil(self.peak_facility_kw - 1e-9))

    @property
    def students(self) -> int:
        """Students per GPU: as given, else the server's MIG instances per GPU."""
        return self.students_per_gpu or self.server.mig_instances_per_gpu

    def cluster(self, tariff: Tariff) -> OwnedCluster:
        """Return the shared cost model of this room, priced with ``tariff``'s averages.

        Its electricity lines (flat all-in rates) are replaced by the bill's in :func:`evaluate`.
        """
        from labkit.tariff import average_energy_rate_krw_per_kwh

        levies = 1 + tariff.vat_frac + tariff.fund_levy_frac
        return OwnedCluster(
            self.server.server_capex_krw, self.server.gpus_per_server,
            servers=self.n_servers, depreciation_years=self.depreciation_years,
            cost_of_capital=self.cost_of_capital, max_it_power_kw=self.server.max_it_power_kw,
            idle_power_fraction=self.idle_frac, pue=self.pue,
            energy_price_krw_per_kwh=average_energy_rate_krw_per_kwh(tariff),
            base_charge_krw_per_kw_month=tariff.base_krw_per_kw_month * levies,
            staff_krw_per_year=self.staff_fte * self.staff_krw_per_fte_year,
            maintenance_fraction_per_year=self.maintenance_frac,
            facility_krw_per_year=self.facility_upgrade_krw / self.facility_years,
        )


@dataclass(frozen=True)
class OpexResult:
    """Everything the lesson shows for one design and one year of use (see :func:`evaluate`).

    Money in [KRW] (per year unless named), hours in [h], fractions in [0-1].
    """

    design: RoomDesign
    usage: Usage
    tariff_class: str
    tariff_verified: bool
    utilization: pd.DataFrame
    load_kw: pd.Series
    bills: pd.DataFrame
    breakdown: CostBreakdown
    calendar_gpu_h: float
    used_gpu_h: float
    tokens: float
    levy_frac: float

    @property
    def mean_utilization(self) -> float:
        """Used / calendar GPU-hours. [fraction]"""
        return self.used_gpu_h / self.calendar_gpu_h

    @property
    def electricity_krw(self) -> float:
        """Sum of the 12 bills (amounts due). [KRW/year]"""
        return float(self.bills["total_krw"].sum())

    @property
    def opex_krw(self) -> float:
        """Electricity + staff + maintenance. [KRW/year]"""
        b = self.breakdown
        return b.electricity_krw + b.staff_krw + b.maintenance_krw

    @property
    def tco_krw(self) -> float:
        """Opex + capital + facility: the whole cost of a year. [KRW/year]"""
        return self.breakdown.total_krw

    @property
    def cost_per_calendar_gpu_h(self) -> float:
        """TCO / (GPUs x hours in the year). [KRW/GPU-h]"""
        return self.tco_krw / self.calendar_gpu_h

    @property
    def cost_per_used_gpu_h(self) -> float:
        """TCO / used GPU-hours (NaN when nothing is used). [KRW/GPU-h]"""
        return self.tco_krw / self.used_gpu_h if self.used_gpu_h > 0 else float("nan")

    @property
    def cost_per_student_h(self) -> float:
        """Cost per used GPU-hour / students per GPU. [KRW/student-h]"""
        return self.cost_per_used_gpu_h / self.design.students

    @property
    def cost_per_m_tokens(self) -> float:
        """TCO per 1M output tokens produced in the used hours. [KRW/1M tokens]"""
        return self.tco_krw / self.tokens * 1e6 if self.tokens > 0 else float("nan")

    @property
    def rent_same_work_krw(self) -> float:
        """Renting the GPU-hours that make the same tokens (lesson 05's model). [KRW/year]"""
        if self.tokens <= 0:
            return 0.0
        return economics.rent_cost_krw(self.tokens, self.design.rent_krw_per_gpu_hour,
                                       self.design.server.tokens_per_s_per_gpu,
                                       self.design.derate)

    @property
    def api_same_work_krw(self) -> float:
        """Buying the same output tokens from an API at the blended price. [KRW/year]"""
        return economics.api_cost_krw(0.0, self.tokens, 0.0, self.design.api_krw_per_m_tokens)

    def idle_costs(self) -> tuple[float, float]:
        """Return (idle part of the TCO, idle part of the electricity bill). [KRW/year]"""
        u = self.utilization["util_frac"].to_numpy()
        hours = len(u)
        b = self.breakdown
        fixed_per_h = (b.capital_krw + b.staff_krw + b.maintenance_krw + b.facility_krw) / hours
        base_per_h = b.base_charge_krw / hours
        # each month's energy money (amount due minus the base charge's share) per kWh
        bills = self.bills
        levies = 1 + self.levy_frac
        energy_money = bills["total_krw"] - bills["base_krw"] * levies
        price = (energy_money / bills["kwh"]).to_numpy()
        month_of_hour = np.asarray(self.utilization.index.month) - 1
        d = self.design
        idle_kw = d.server.max_it_power_kw * d.n_servers * d.idle_frac * d.pue
        idle_energy = idle_kw * price[month_of_hour]
        idle_time = 1 - u
        electricity_idle = float(np.sum(idle_time * (base_per_h + idle_energy)))
        total_idle = float(np.sum(idle_time * fixed_per_h)) + electricity_idle
        return total_idle, electricity_idle

    @property
    def idle_share(self) -> float:
        """Share of the TCO paid for idle time. [fraction]"""
        return self.idle_costs()[0] / self.tco_krw

    @property
    def idle_share_electricity(self) -> float:
        """Share of the electricity bill paid for idle time. [fraction]"""
        return self.idle_costs()[1] / self.electricity_krw


def evaluate(design: RoomDesign, tariff: Tariff, calendar: SchoolCalendar,
             usage: Usage, *, utilization: pd.DataFrame | None = None) -> OpexResult:
    """Return the year's bills, costs and per-hour/per-token figures of a room design.

    Parameters
    ----------
    design : RoomDesign
    tariff : labkit.tariff.Tariff
        The KEPCO class (``design.school_exception`` applies the K-12 rule to it).
    calendar : labkit.loadprofile.SchoolCalendar
        The year (its public holidays bill at the holiday band).
    usage : labkit.loadprofile.Usage
    utilization : pandas.DataFrame, optional
        ``loadprofile.hourly_utilization(calendar, usage)`` when the caller has it already
        (the sensitivity varies the design over one year of hours); not checked against them.

    Returns
    -------
    OpexResult
        The 12 bills come from :func:`labkit.tariff.monthly_bill` on the hourly facility load,
        treated as a repeating year (the billing-demand ratchet sees last year's months as this
        year's). The breakdown is :meth:`OwnedCluster.annual_cost_breakdown` at the mean
        utilization with its electricity lines replaced by the bills: base line = base charges
        x (1 + VAT + fund levy), energy line = the rest of the amounts due.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        From the models, naming the field.

    Used in: notebooks/07_opex_lab.ipynb
    """
    if not isinstance(design, RoomDesign):
        raise validate.InputError("design", "other", type(design).__name__,
                                  "design must be a RoomDesign")
    util = (loadprofile.hourly_utilization(calendar, usage) if utilization is None
            else utilization)
    load = loadprofile.facility_load_kw(
        util["util_frac"], n_servers=design.n_servers,
        server_max_kw=design.server.max_it_power_kw, idle_frac=design.idle_frac, pue=design.pue)
    if design.summer_pue_add or design.winter_pue_add:  # the season's PUE, month by month
        monthly = np.asarray(design.pue_of_months(tariff.season_of_month)) / design.pue
        load = load * monthly[load.index.month.to_numpy() - 1]
    billed = tariff.with_school_exception() if design.school_exception else tariff
    bills = monthly_bill(billed, load, design.contract,
                         holidays=calendar.holiday_dates(tariff.holiday_kinds),
                         repeat_year=True)
    levies = 1 + tariff.vat_frac + tariff.fund_levy_frac
    base_line = float(bills["base_krw"].sum()) * levies
    energy_line = float(bills["total_krw"].sum()) - base_line
    mean_u = float(util["util_frac"].mean())
    cluster = design.cluster(tariff)
    breakdown = cluster.annual_cost_breakdown(mean_u).with_electricity(
        max(energy_line, 0.0), base_line)
    gpus = design.gpus
    used = float(util["util_frac"].sum()) * gpus
    tokens = used * 3_600 * design.server.tokens_per_s_per_gpu * design.derate
    return OpexResult(design, usage, tariff.class_name, tariff.verified, util, load, bills,
                      breakdown, float(len(util) * gpus), used, tokens, levies - 1)


