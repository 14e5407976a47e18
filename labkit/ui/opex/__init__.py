"""Widgets for lesson 07, "실습 — 우리 학교 미니 AI데이터센터 운영비 모델링".

Builders (each returns a widget; the notebook only calls them):

- :func:`room_app` — design the room (servers, PUE, contract power, KEPCO class, people and
  money, the usage plan, the school calendar) and see the 12 monthly bills stacked;
- :func:`cost_view` — annual opex and TCO, line by line (follows the room);
- :func:`unit_costs_view` — cost per calendar vs used GPU-hour, per student-hour (MIG), per 1M
  tokens, against renting and an API; the share paid for idle time (follows the room);
- :func:`sensitivity_app` — which input moves the yearly cost most (a tornado chart);
- :func:`class_hours_view` — "what if we only run in class hours" (~17 % utilization);
- :func:`export_panel` — the scenario as CSV and a one-page Korean HTML summary for the
  administration, written to a per-session temporary folder and offered as downloads;
- :func:`key_numbers` — the check case and the default room as a table (checked by nbval);
- :func:`exercises` — 문제 with answers computed by the models.

The numbers all come from :mod:`labkit.opex` (with :mod:`labkit.tariff`,
:mod:`labkit.loadprofile` and :mod:`labkit.economics`).
"""

from __future__ import annotations

from labkit.ui.opex.common import COLORS as COLORS
from labkit.ui.opex.common import DEFAULT_CLASS
from labkit.ui.opex.common import MAX_TEXT as MAX_TEXT
from labkit.ui.opex.common import default_design as default_design
from labkit.ui.opex.common import default_usage as default_usage
from labkit.ui.opex.export import ExportPanel, csv_text, export_panel, summary_html
from labkit.ui.opex.figures import bills_figure
from labkit.ui.opex.figures import demand_figure as demand_figure
from labkit.ui.opex.lesson import exercises, key_numbers
from labkit.ui.opex.room import RoomApp, room_app
from labkit.ui.opex.views import (
    ClassHoursView,
    CostView,
    SensitivityApp,
    UnitCostsView,
    class_hours_view,
    cost_view,
    sensitivity_app,
    unit_costs_view,
)

__all__ = [
    "DEFAULT_CLASS",
    "ClassHoursView",
    "CostView",
    "ExportPanel",
    "RoomApp",
    "SensitivityApp",
    "UnitCostsView",
    "bills_figure",
    "class_hours_view",
    "cost_view",
    "csv_text",
    "exercises",
    "export_panel",
    "key_numbers",
    "room_app",
    "sensitivity_app",
    "summary_html",
    "unit_costs_view",
]
