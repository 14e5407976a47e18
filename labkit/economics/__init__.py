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

A package along the seams of the old ``labkit/economics.py``; this module re-exports its names:

- :mod:`labkit.economics.cost` -- units, :func:`capital_recovery_factor`, :class:`CostBreakdown`,
  :class:`OwnedCluster` (what owned GPUs cost per year);
- :mod:`labkit.economics.break_even` -- API cost, demand, capacity and the break-even points;
- :mod:`labkit.economics.scenario` -- :class:`BreakEvenScenario` (lesson 05's inputs) and
  :func:`sensitivity`.

Used in: notebooks/05_break_even.ipynb
"""

from __future__ import annotations

from labkit.economics.break_even import (
    api_cost_krw,
    blended_price,
    break_even_tokens_per_month,
    break_even_utilization,
    fixed_cost_krw_per_month,
    marginal_cost_krw_per_token,
    monthly_capacity_tokens,
    monthly_demand_tokens,
    owned_cost_krw_per_month,
    rent_cost_krw,
    rent_vs_own_break_even_utilization,
)
from labkit.economics.cost import (
    HOURS_PER_YEAR,
    SECONDS_PER_MONTH,
    SECONDS_PER_YEAR,
    TOKENS_PER_M,
    CostBreakdown,
    CostLine,
    OwnedCluster,
    capital_recovery_factor,
    usd_to_krw,
)
from labkit.economics.scenario import (
    CLUSTER_INPUTS,
    LESSON_INPUTS,
    SCENARIO_INPUTS,
    BreakEvenScenario,
    sensitivity,
)

__all__ = [
    "CLUSTER_INPUTS",
    "HOURS_PER_YEAR",
    "LESSON_INPUTS",
    "SCENARIO_INPUTS",
    "SECONDS_PER_MONTH",
    "SECONDS_PER_YEAR",
    "TOKENS_PER_M",
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
