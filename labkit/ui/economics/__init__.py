"""Widgets for lesson 05 "API vs 자체 GPU 손익분기" (lesson 06: :mod:`labkit.ui.benchmarks`).

Builders (linked: every app follows the cluster editor):

- :func:`cluster_app` — the owned server's cost parameters and its yearly cost breakdown;
- :func:`aircraft_app` — cost per calendar hour vs cost per used hour as utilization falls;
- :func:`cost_curves_app` — API (linear) vs owned (flat plus energy) monthly cost over monthly
  tokens, the crossover and today's operating point;
- :func:`demand_app` — a school's monthly tokens (students x requests x tokens);
- :func:`rent_app` — renting GPU-hours as a third option;
- :func:`tornado_app` — what moves the break-even most;
- :func:`case_numbers_05`, :func:`exercises_05`.

All numbers come from :mod:`labkit.economics`; defaults, ranges and sources from
``data/economics/`` (:mod:`labkit.data.economics`).
"""

from __future__ import annotations

from typing import Any

from labkit.ui.economics.cluster import LINE_ORDER as LINE_ORDER
from labkit.ui.economics.cluster import (
    AircraftApp,
    ClusterApp,
    ClusterView,
    aircraft_app,
    cluster_app,
)
from labkit.ui.economics.cluster import AircraftView as AircraftView
from labkit.ui.economics.common import COLORS as COLORS
from labkit.ui.economics.common import EOK as EOK
from labkit.ui.economics.common import MAN as MAN
from labkit.ui.economics.common import TABLE_HTML as TABLE_HTML
from labkit.ui.economics.common import TD_HTML as TD_HTML
from labkit.ui.economics.common import default_slider as default_slider
from labkit.ui.economics.common import econ_figure as econ_figure
from labkit.ui.economics.common import field_box as field_box
from labkit.ui.economics.common import lesson_defaults as lesson_defaults
from labkit.ui.economics.curves import CostCurvesApp, cost_curves_app, curves_figure
from labkit.ui.economics.curves import CurvesView as CurvesView
from labkit.ui.economics.demand import MAX_CLUSTER_COPIES as MAX_CLUSTER_COPIES
from labkit.ui.economics.demand import DemandApp, demand_app
from labkit.ui.economics.demand import DemandView as DemandView
from labkit.ui.economics.rent import RentApp, rent_app
from labkit.ui.economics.rent import RentView as RentView
from labkit.ui.economics.tables import UNITS as UNITS
from labkit.ui.economics.tables import (
    api_prices,
    case_numbers_05,
    cloud_prices,
    defaults_table,
    exercises_05,
    hardware_prices,
)
from labkit.ui.economics.tables import reliability_words as reliability_words
from labkit.ui.economics.tables import source_cols as source_cols
from labkit.ui.economics.tornado import TORNADO_PARAMETERS as TORNADO_PARAMETERS
from labkit.ui.economics.tornado import TornadoApp, tornado_app, tornado_figure

__all__ = [
    "AircraftApp",
    "ClusterApp",
    "ClusterView",
    "CostCurvesApp",
    "DemandApp",
    "RentApp",
    "TornadoApp",
    "aircraft_app",
    "api_prices",
    "case_numbers_05",
    "cloud_prices",
    "cluster_app",
    "cost_curves_app",
    "curves_figure",
    "defaults_table",
    "demand_app",
    "exercises_05",
    "hardware_prices",
    "rent_app",
    "tornado_app",
    "tornado_figure",
]

#: Lesson 06's builders, moved to :mod:`labkit.ui.benchmarks`; ``ui.economics.<name>`` still
#: finds them (imported on use: labkit.ui.benchmarks imports this package).
MOVED_TO_BENCHMARKS = ("ClaimApp", "RackApp", "case_numbers_06", "claim_app", "exercises_06",
                       "mlperf_table", "rack_app", "steps_figure")


def __getattr__(name: str) -> Any:
    if name in MOVED_TO_BENCHMARKS:
        from labkit.ui import benchmarks

        return getattr(benchmarks, name)
    raise AttributeError(f"module 'labkit.ui.economics' has no attribute {name!r}")
