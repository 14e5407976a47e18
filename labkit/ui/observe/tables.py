"""Lesson 01's tables (nbval checks them): the field reference, a trace's segments, unit traps.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import numpy as np

from labkit import observe as model
from labkit.i18n import KO, t
from labkit.observe import CATALOG, Reading
from labkit.ui import format as fmt
from labkit.ui.observe.common import DEFAULT_TRACE
from labkit.ui.observe.panels import value_text

__all__ = ["reference_table", "trace_summary", "unit_pitfalls"]



def unit_word(unit: str | None) -> str:
    """Return a unit as a student reads it: NVML's/DCGM's unit words (``degC``, ``count``,
    ``bitmask``, ...) in Korean, unit symbols (``mW``, ``MHz``) as they are, none as "—"."""
    if not unit:
        return "—"
    key = f"observe.ref.unit.{unit}"
    return t(key) if key in KO else unit


def reference_table() -> fmt.Table:
    """Return the DCGM field <-> NVML call <-> nvidia-smi name table in Korean, with units."""
    ref = model.reference_table()
    rows = []
    for key, row in ref.iterrows():
        dcgm = f"{row['dcgm_field']} ({row['dcgm_id']})" if row["dcgm_field"] else "—"
        smi_unit = (row["smi_unit"] or row["unit"]) if row["smi_field"] else ""  # "" = bare
        units = " / ".join(unit_word(u) for u in (row["nvml_unit"], row["dcgm_unit"], smi_unit))
        call = row["nvml_call"].replace("NVML_GPM_METRIC_", "").replace(
            "NVML_MEMORY_ERROR_TYPE_", "")
        unit = t("observe.ref.frac") if row["unit"] == "frac" else unit_word(row["unit"])
        rows.append((t(f"observe.metric.{key}"), dcgm, call, row["smi_field"] or "—", units,
                     unit))
    cols = [t(f"observe.ref.{c}") for c in ("metric", "dcgm", "nvml", "smi", "units", "labkit")]
    return fmt.rows_table(rows, cols, text_columns=len(cols))


def trace_summary(name: str = DEFAULT_TRACE) -> fmt.Table:
    """Return the mean readings of each scenario segment of a shipped trace, and the verdict.

    Columns: util.gpu, SM activity, tensor, DRAM [%], power [W], SM clock [MHz], and whether
    "busy but not working" fires on the segment's means.
    """
    from labkit.data.observe import load_trace, trace_segments

    log = load_trace(name)
    trace = model.Trace(log.frame)
    metrics = ["gpu_util_frac", "sm_active_frac", "tensor_active_frac", "dram_active_frac",
               "power_usage_w", "power_limit_w", "sm_clock_mhz"]
    segments = trace_segments(log)
    gpu = trace.gpus[0]
    means = trace.summary(gpu, [m for m in metrics if m in trace.metrics], segments)
    rows = []
    for seg, row in means.iterrows():
        view = {m: Reading(float(row[m])) for m in means.columns if np.isfinite(row[m])}
        busy = model.busy_not_working(view)
        verdict = {None: "n/a", True: t("observe.summary.yes"), False: t("observe.summary.no")}
        rows.append((t(f"observe.scenario_short.{seg}"),
                     *(fmt.pct(row[m], 0) if m in row and np.isfinite(row[m]) else "n/a"
                       for m in metrics[:4]),
                     f"{row['power_usage_w']:.0f}" if "power_usage_w" in row else "n/a",
                     f"{row['sm_clock_mhz']:.0f}" if "sm_clock_mhz" in row else "n/a",
                     verdict[busy.on]))
    cols = [t(f"observe.summary.{c}") for c in ("segment", "util", "sm", "tensor", "dram",
                                                "power", "clock", "busy")]
    return fmt.rows_table(rows, cols)


def unit_pitfalls() -> fmt.Table:
    """Return the unit traps as a table: raw readings and what they are in labkit's units.

    NVML power 4034 (mW) is 4.0 W, not 4034 W; NVML energy 123,456,789 (mJ) is 123.5 kJ;
    dcgm-exporter's power 71.4 is already W; GPM's SM_UTIL 37.5 is percent while DCGM's
    SM_ACTIVE 0.375 is a ratio. The conversions are :data:`labkit.observe.CATALOG`'s.
    """
    cases = [("nvml", "power_usage_w", 4034.0), ("nvml", "energy_j", 123_456_789.0),
             ("dcgm", "power_usage_w", 71.4), ("nvml", "sm_active_frac", 37.5),
             ("dcgm", "sm_active_frac", 0.375), ("nvml", "fb_used_mib", 85_520_809_984.0)]
    rows = []
    for layer, key, raw in cases:
        m = CATALOG[key]
        scale, unit = (m.nvml_scale, m.nvml_unit) if layer == "nvml" else (m.dcgm_scale,
                                                                           m.dcgm_unit)
        where = m.nvml_call.split("(")[0] if layer == "nvml" else m.dcgm_field
        shown = f"{raw:,.0f}" if float(raw).is_integer() else f"{raw:,g}"
        rows.append((where, f"{shown} {unit_word(unit)}", value_text(key, Reading(raw * scale))))
    cols = [t(f"observe.units.{c}") for c in ("source", "raw", "value")]
    return fmt.rows_table(rows, cols)
