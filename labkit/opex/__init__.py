"""Lesson 07's numbers: what our school's mini AI datacenter costs to run, month by month.

Pure: numbers in, numbers out; no widgets, no I/O. It joins three models:

- :mod:`labkit.loadprofile` — the school year's hourly utilization and the room's grid load;
- :mod:`labkit.tariff` — the 12 KEPCO bills of that load (base charge on billing demand,
  seasonal/TOU energy, levies, VAT, rounding);
- :mod:`labkit.economics` — the shared cost model (:class:`~labkit.economics.OwnedCluster`):
  capital (straight line or capital recovery factor), staff, maintenance, facility; its
  electricity lines are replaced by the tariff's (:meth:`CostBreakdown.with_electricity`).

Definitions (the course's "grounded aircraft" framing: a GPU costs money every calendar hour and
produces value only in the hours it computes):

- annual **opex** = electricity + staff + maintenance; **TCO per year** = opex + capital +
  facility (room upgrades amortized); both [KRW/year].
- cost per **calendar** GPU-hour = TCO / (GPUs x hours in the year); per **used** GPU-hour =
  TCO / sum over hours of (GPUs x utilization); per **student-hour** = per used GPU-hour /
  students per GPU (MIG: one student per smallest GPU instance, 7 x 1g on a 7-slice board,
  NVIDIA MIG User Guide); per **1M tokens** = TCO / (used GPU-hours x 3,600 s x tokens/s/GPU x
  derate) x 1e6 (output tokens; MLPerf counts output tokens only).
- **idle share**: each hour's fixed costs (capital, staff, maintenance, facility, base charge)
  and idle-power energy are split between used and idle time by that hour's utilization; the
  idle share is the idle part over the total. The work-dependent energy (above idle power) is all
  "used". Energy is priced at each month's average energy price from the bill.

Used in: notebooks/07_opex_lab.ipynb
"""

from labkit.opex.room import (
    MAX_CONTRACT_KW,
    MAX_KRW,
    MAX_SERVERS,
    MAX_STUDENTS_PER_GPU,
    MAX_YEARS,
    OpexResult,
    RoomDesign,
    ServerSpec,
    evaluate,
)
from labkit.opex.whatif import (
    SENSITIVITY_RANGES,
    Swing,
    class_hours_scenario,
    sensitivity,
    summary_table,
)

__all__ = [
    "MAX_CONTRACT_KW",
    "MAX_KRW",
    "MAX_SERVERS",
    "MAX_STUDENTS_PER_GPU",
    "MAX_YEARS",
    "SENSITIVITY_RANGES",
    "OpexResult",
    "RoomDesign",
    "ServerSpec",
    "Swing",
    "class_hours_scenario",
    "evaluate",
    "sensitivity",
    "summary_table",
]
