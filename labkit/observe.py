"""Lesson 01 model: what to watch on a GPU, what each reading means, and when it lies.

Pure (stdlib, numpy, pandas): no widgets and no file reading. The NVML module itself is never
imported here: :class:`Sampler` is handed the module that ``labkit.gpu.connect()`` returns (the
NVIDIA NVML bindings, over a real or the simulated libnvidia-ml) and calls it by name, so tests
can give it any object with the same functions.

Contents

- :data:`CATALOG` — each metric: the NVML call that reads it, NVML's unit, the DCGM field and
  the nvidia-smi ``--query-gpu`` name operators know, what it means and when it lies.
- :class:`Reading`, :class:`Status` — one value, or why it is missing ("n/a" with a reason).
- :class:`Sampler` — polls NVML at a chosen rate (each call fails on its own, GPM samples at
  least 100 ms apart, slow fields on a slower tier, lost GPUs left alone), off the caller's
  thread if asked; :class:`History` — the bounded ring buffer it fills.
- Derived signals: :func:`busy_not_working`, :func:`power_frac`, :func:`sm_clock_frac`,
  :func:`decode_clocks_event_reasons`, :func:`throttle`, :func:`alerts`.
- Readers of operators' files into the same tidy frame (:data:`FRAME_COLUMNS`):
  :func:`parse_nvidia_smi_csv`, :func:`read_dcgm_exporter`, :func:`parse_tidy_csv`,
  :func:`read_log` (detects the format); :func:`export_csv` writes a tidy frame back out.
  File paths and uploads are read in ``labkit.data.observe``.
- :class:`Trace` — a tidy frame indexed for replay (value of every metric at time t).
- The "what goes on the wall" exercise: :data:`PANELS`, :data:`SITUATIONS`, :func:`check_wall`.

Units: the tidy frame stores one unit per metric (``Metric.unit``): activity metrics as fractions
0-1 (NVML reports percent, GPM 0-100, DCGM profiling fields 0-1 ratios), power in W (NVML: mW),
energy in J (NVML and DCGM: mJ), memory in MiB (NVML: bytes), clocks in MHz, temperatures in
degrees C, PCIe throughput in KB/s (NVML's unit). Conversions happen once, here.

Sources (primary): NVML API reference and ``nvml.h`` (R580) for calls, units and error codes
(https://docs.nvidia.com/deploy/nvml-api/); NVML GPM functions and metric enums
(https://docs.nvidia.com/deploy/nvml-api/group__nvmlGpmFunctions.html); DCGM 4.6.0
``dcgmlib/dcgm_fields.h`` and ``dcgm_structs.h`` for field ids, units and blank sentinels
(https://github.com/NVIDIA/DCGM); dcgm-exporter README and ``etc/default-counters.csv``
(https://github.com/NVIDIA/dcgm-exporter, d5e5f51); ``nvidia-smi --help-query-gpu`` for the
query names and the CSV format.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import contextlib
import csv
import ctypes
import io
import math
import re
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from labkit import validate

__all__ = [
    "CATALOG",
    "FRAME_COLUMNS",
    "PANELS",
    "SCENARIO_REVEALS",
    "SITUATIONS",
    "Alert",
    "History",
    "LogImport",
    "Metric",
    "Reading",
    "Sampler",
    "Signal",
    "Snapshot",
    "Status",
    "Trace",
    "UnparsedRow",
    "WallVerdict",
    "alerts",
    "busy_not_working",
    "check_wall",
    "decode_clocks_event_reasons",
    "detect_format",
    "export_csv",
    "healthy_gpus",
    "parse_nvidia_smi_csv",
    "parse_tidy_csv",
    "power_frac",
    "read_dcgm_exporter",
    "read_log",
    "reference_table",
    "sm_clock_frac",
    "throttle",
]

# --------------------------------------------------------------------------------------------
# The metric catalog
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Metric:
    """One GPU metric: where each layer reads it, in which unit, and what it really says.

    Attributes
    ----------
    key : str
        labkit's name, with the unit as suffix (``power_usage_w``).
    title : str
        Short English title (Korean labels live in the UI catalog).
    unit : str
        Unit of ``value`` in the tidy frame (``frac``, ``W``, ``MiB``, ``degC``, ``MHz``, ``J``,
        ``KB/s``, ``count``, ``flag``, ``bitmask``, ``xid``).
    group : {"activity", "memory", "power", "thermal", "clocks", "pcie", "errors"}
        What kind of reading it is (:data:`PANELS` says which panel shows it).
    nvml_call : str
        The NVML call (``nvml.h`` name) that reads it, with the member or argument used.
    nvml_unit : str
        The unit NVML returns.
    nvml_scale : float
        ``value = nvml_value * nvml_scale``.
    dcgm_field : str or None
        The DCGM field name (legacy name, as dcgm-exporter prints it).
    dcgm_id : int or None
        Its numeric id in ``dcgm_fields.h``.
    dcgm_unit : str or None
        Unit DCGM / dcgm-exporter reports.
    dcgm_scale : float
        ``value = dcgm_value * dcgm_scale``.
    smi_field : str or None
        ``nvidia-smi --query-gpu`` name (``None`` when nvidia-smi's query has none).
    smi_unit : str or None
        Unit nvidia-smi prints in the CSV header / values (``""``: none printed).
    tier : {"fast", "slow", "gpm", "event"}
        How the sampler reads it: every tick, every ``slow_interval_s`` (like nvitop's 5 s
        cache), from two GPM samples, or from the Xid event queue.
    meaning : str
        What the number measures.
    lies_when : str
        When it misleads.
    """

    key: str
    title: str
    unit: str
    group: str
    nvml_call: str
    nvml_unit: str
    nvml_scale: float
    dcgm_field: str | None
    dcgm_id: int | None
    dcgm_unit: str | None
    dcgm_scale: float
    smi_field: str | None
    smi_unit: str | None
    tier: str
    meaning: str
    lies_when: str


def _m(key: str, title: str, unit: str, group: str, nvml_call: str, nvml_unit: str,
       nvml_scale: float, dcgm: tuple[str, int, str, float] | None,
       smi: tuple[str, str] | None, tier: str, meaning: str, lies_when: str) -> Metric:
    d_field, d_id, d_unit, d_scale = dcgm if dcgm else (None, None, None, 1.0)
    s_field, s_unit = smi if smi else (None, None)
    return Metric(key, title, unit, group, nvml_call, nvml_unit, nvml_scale, d_field, d_id,
                  d_unit, d_scale, s_field, s_unit, tier, meaning, lies_when)


_PCT = 0.01
_MIB = 1.0 / (1 << 20)

#: Every metric the lesson knows, in dashboard order. Sources: module docstring; field ids from
#: DCGM 4.6.0 ``dcgm_fields.h``; GPM metric ids from ``nvml.h`` (``NVML_GPM_METRIC_*``).
CATALOG: Mapping[str, Metric] = MappingProxyType({m.key: m for m in (
    _m("gpu_util_frac", "GPU utilization (util.gpu)", "frac", "activity",
       "nvmlDeviceGetUtilizationRates(h).gpu", "%", _PCT,
       ("DCGM_FI_DEV_GPU_UTIL", 203, "%", _PCT), ("utilization.gpu", "%"), "fast",
       "Share of the last sample period (1/6 s to 1 s by product) in which at least one kernel "
       "was running.",
       "One thread on one SM keeps it near 100 %; ranks spinning in a stalled NCCL collective "
       "read 100 %; ECC scrubbing right after driver load reads high; not supported on a "
       "MIG-enabled GPU. It counts time, not SMs or FLOPs."),
    _m("mem_copy_util_frac", "Memory utilization (util.memory)", "frac", "activity",
       "nvmlDeviceGetUtilizationRates(h).memory", "%", _PCT,
       ("DCGM_FI_DEV_MEM_COPY_UTIL", 204, "%", _PCT), ("utilization.memory", "%"), "fast",
       "Share of the sample period in which device memory was being read or written.",
       "Counts time, not bandwidth: a trickle of traffic can read as busy."),
    _m("gr_engine_active_frac", "Graphics engine active", "frac", "activity",
       "nvmlGpmMetricsGet: NVML_GPM_METRIC_GRAPHICS_UTIL (1)", "%", _PCT,
       ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", 1001, "ratio", 1.0), None, "gpm",
       "Share of time a graphics or compute context was active on the engine.",
       "Like util.gpu it measures time, not how much of the GPU did work."),
    _m("sm_active_frac", "SM activity", "frac", "activity",
       "nvmlGpmMetricsGet: NVML_GPM_METRIC_SM_UTIL (2)", "%", _PCT,
       ("DCGM_FI_PROF_SM_ACTIVE", 1002, "ratio", 1.0), None, "gpm",
       "Share of SMs (averaged over the interval) with at least one warp assigned: how much "
       "of the GPU is busy.",
       "A warp stalled on memory still counts as active; >= 0.8 is necessary, not sufficient, "
       "for good use. Needs Hopper+ (GPM) or DCGM profiling; off by default in dcgm-exporter."),
    _m("sm_occupancy_frac", "SM occupancy", "frac", "activity",
       "nvmlGpmMetricsGet: NVML_GPM_METRIC_SM_OCCUPANCY (3)", "%", _PCT,
       ("DCGM_FI_PROF_SM_OCCUPANCY", 1003, "ratio", 1.0), None, "gpm",
       "Resident warps as a share of the most an SM can hold, per elapsed cycle.",
       "High occupancy is not high throughput; big-tile matrix kernels run well at low "
       "occupancy."),
    _m("tensor_active_frac", "Tensor pipe active", "frac", "activity",
       "nvmlGpmMetricsGet: NVML_GPM_METRIC_ANY_TENSOR_UTIL (5)", "%", _PCT,
       ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", 1004, "ratio", 1.0), None, "gpm",
       "Share of cycles any tensor pipe was active: matrix-multiply work.",
       "Says nothing about precision (FP8 and BF16 both count) or whether the math was useful."),
    _m("dram_active_frac", "DRAM active", "frac", "activity",
       "nvmlGpmMetricsGet: NVML_GPM_METRIC_DRAM_BW_UTIL (10)", "%", _PCT,
       ("DCGM_FI_PROF_DRAM_ACTIVE", 1005, "ratio", 1.0), None, "gpm",
       "Share of cycles the device-memory interface was sending or receiving data.",
       "High is not bad by itself (memory-bound kernels); high DRAM with low tensor activity "
       "means the math waits on memory."),
    _m("fb_used_mib", "Memory used", "MiB", "memory",
       "nvmlDeviceGetMemoryInfo(h).used", "bytes", _MIB,
       ("DCGM_FI_DEV_FB_USED", 252, "MiB", 1.0), ("memory.used", "MiB"), "fast",
       "Device memory allocated by processes and the driver.",
       "Allocated is not used: caching allocators keep memory after tensors are freed; the v1 "
       "query also counts the driver's reserve (hundreds of MiB at idle on R510+)."),
    _m("fb_total_mib", "Memory total", "MiB", "memory",
       "nvmlDeviceGetMemoryInfo(h).total", "bytes", _MIB,
       ("DCGM_FI_DEV_FB_TOTAL", 250, "MiB", 1.0), ("memory.total", "MiB"), "slow",
       "Device memory of the GPU (or MIG instance).",
       "Less than the marketing figure: ECC and the driver reserve take some."),
    _m("power_usage_w", "Power draw", "W", "power",
       "nvmlDeviceGetPowerUsage(h)", "mW", 1e-3,
       ("DCGM_FI_DEV_POWER_USAGE", 155, "W", 1.0), ("power.draw", "W"), "fast",
       "Board power. On Ampere and newer (except GA100) a 1-second average, older boards an "
       "instantaneous reading.",
       "The 1-second average hides spikes; read it next to the limit, not alone. A stalled "
       "rank at util.gpu 100 % draws close to idle power - the tell."),
    _m("power_limit_w", "Enforced power limit", "W", "power",
       "nvmlDeviceGetEnforcedPowerLimit(h)", "mW", 1e-3,
       ("DCGM_FI_DEV_ENFORCED_POWER_LIMIT", 164, "W", 1.0), ("enforced.power.limit", "W"),
       "slow",
       "The power limit the driver enforces after every limiter (set limit, board, thermal).",
       "Can be lower than the limit an administrator set (power.limit)."),
    _m("energy_j", "Energy since driver load", "J", "power",
       "nvmlDeviceGetTotalEnergyConsumption(h)", "mJ", 1e-3,
       ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", 156, "mJ", 1e-3), None, "fast",
       "Energy the board used since the driver was (re)loaded; its slope is average power.",
       "Resets when the driver reloads; a counter, so only differences mean anything."),
    _m("gpu_temp_c", "GPU temperature", "degC", "thermal",
       "nvmlDeviceGetTemperature(h, NVML_TEMPERATURE_GPU)", "degC", 1.0,
       ("DCGM_FI_DEV_GPU_TEMP", 150, "C", 1.0), ("temperature.gpu", ""), "slow",
       "Core temperature.",
       "Lags power by tens of seconds; a low temperature at util.gpu 100 % hints the GPU is "
       "waiting, not computing."),
    _m("memory_temp_c", "Memory (HBM) temperature", "degC", "thermal",
       "nvmlDeviceGetFieldValues(h, [NVML_FI_DEV_MEMORY_TEMP])", "degC", 1.0,
       ("DCGM_FI_DEV_MEMORY_TEMP", 140, "C", 1.0), ("temperature.memory", ""), "slow",
       "HBM temperature.",
       "Not supported on many boards; DCGM then reports a blank sentinel that can leak as a "
       "huge number (9223372036854775794)."),
    _m("fan_speed_frac", "Fan speed", "frac", "thermal",
       "nvmlDeviceGetFanSpeed(h)", "%", _PCT,
       ("DCGM_FI_DEV_FAN_SPEED", 191, "%", _PCT), ("fan.speed", "%"), "slow",
       "Intended fan speed.",
       "Passively cooled datacenter boards have no fan: NotSupported is normal there."),
    _m("sm_clock_mhz", "SM clock", "MHz", "clocks",
       "nvmlDeviceGetClockInfo(h, NVML_CLOCK_SM)", "MHz", 1.0,
       ("DCGM_FI_DEV_SM_CLOCK", 100, "MHz", 1.0), ("clocks.sm", "MHz"), "fast",
       "Current SM clock.",
       "Low at idle by design; only low *under load* is news - read it with the clocks-event "
       "reasons."),
    _m("max_sm_clock_mhz", "Max SM clock", "MHz", "clocks",
       "nvmlDeviceGetMaxClockInfo(h, NVML_CLOCK_SM)", "MHz", 1.0,
       ("DCGM_FI_DEV_MAX_SM_CLOCK", 113, "MHz", 1.0), ("clocks.max.sm", "MHz"), "slow",
       "Highest SM clock the board supports.",
       "A ceiling, not a target: boost clocks are opportunistic."),
    _m("clocks_event_reasons", "Clocks-event (throttle) reasons", "bitmask", "clocks",
       "nvmlDeviceGetCurrentClocksEventReasons(h)", "bitmask", 1.0,
       ("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", 112, "bitmask", 1.0),
       ("clocks_event_reasons.active", ""), "fast",
       "Why the clocks are below maximum: bits for GpuIdle, SwPowerCap, thermal slowdowns, "
       "power brake and more (several at once).",
       "GpuIdle is normal at idle; only the reasons under load (SwPowerCap, thermal, HW "
       "slowdown) mean lost performance."),
    _m("pcie_tx_kb_per_s", "PCIe TX", "KB/s", "pcie",
       "nvmlDeviceGetPcieThroughput(h, NVML_PCIE_UTIL_TX_BYTES)", "KB/s", 1.0,
       ("DCGM_FI_PROF_PCIE_TX_BYTES", 1009, "B/s", 1e-3), None, "fast",
       "PCIe bytes sent by the GPU, over a 20 ms window.",
       "A 20 ms window is a sample, not an average; not supported inside many vGPU VMs."),
    _m("pcie_rx_kb_per_s", "PCIe RX", "KB/s", "pcie",
       "nvmlDeviceGetPcieThroughput(h, NVML_PCIE_UTIL_RX_BYTES)", "KB/s", 1.0,
       ("DCGM_FI_PROF_PCIE_RX_BYTES", 1010, "B/s", 1e-3), None, "fast",
       "PCIe bytes received by the GPU (input batches, host-to-device copies).",
       "Bursty: a data-starved job shows RX bursts between compute phases."),
    _m("pcie_replay_count", "PCIe replays", "count", "errors",
       "nvmlDeviceGetFieldValues(h, [NVML_FI_DEV_PCIE_REPLAY_COUNTER])", "count", 1.0,
       ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", 202, "count", 1.0), None, "slow",
       "PCIe packets the link had to resend.",
       "A counter: the rate of change matters, not the total."),
    _m("xid", "Last Xid error", "xid", "errors",
       "nvmlEventSetWait(set) for nvmlEventTypeXidCriticalError: eventData", "xid", 1.0,
       ("DCGM_FI_DEV_XID_ERRORS", 230, "xid", 1.0), None, "event",
       "The most recent Xid error code the driver reported (0: none since sampling began).",
       "A code, not a count: look the number up (79 = fallen off the bus, 48 = double-bit "
       "ECC, 63/64 = row remapping)."),
    _m("ecc_dbe_volatile_count", "Uncorrectable ECC (volatile)", "count", "errors",
       "nvmlDeviceGetTotalEccErrors(h, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC)",
       "count", 1.0, ("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", 311, "count", 1.0),
       ("ecc.errors.uncorrected.volatile.total", ""), "slow",
       "Uncorrectable (double-bit) ECC errors since the last driver load.",
       "Not supported when ECC is off or absent (consumer boards)."),
    _m("remapped_rows_uncorrectable", "Rows remapped (uncorrectable)", "count", "errors",
       "nvmlDeviceGetRemappedRows(h)[1]", "count", 1.0,
       ("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", 393, "count", 1.0),
       ("remapped_rows.uncorrectable", ""), "slow",
       "Memory rows retired after uncorrectable errors (Ampere and newer).",
       "NotSupported while MIG instances exist and on boards without row remapping."),
    _m("remapped_rows_pending", "Row remap pending", "flag", "errors",
       "nvmlDeviceGetRemappedRows(h)[2]", "flag", 1.0, None,
       ("remapped_rows.pending", ""), "slow",
       "A remap waits for the next GPU reset.",
       "Nothing is fixed until the GPU is reset."),
    _m("row_remap_failure", "Row remap failure", "flag", "errors",
       "nvmlDeviceGetRemappedRows(h)[3]", "flag", 1.0,
       ("DCGM_FI_DEV_ROW_REMAP_FAILURE", 395, "flag", 1.0),
       ("remapped_rows.failure", ""), "slow",
       "Row remapping failed: the GPU should be taken out of service.",
       "-"),
)})

#: Aliases nvidia-smi accepts for the same query field (older and newer spellings).
SMI_ALIASES: Mapping[str, str] = MappingProxyType({
    "clocks.current.sm": "clocks.sm",
    "clocks_throttle_reasons.active": "clocks_event_reasons.active",
    "power.draw.average": "power.draw",
    "clocks.max.graphics": "clocks.max.sm",
    "clocks.current.graphics": "clocks.sm",
    "clocks.gr": "clocks.sm",
})

#: Tidy frame columns: seconds since the start of the log or of sampling, GPU index, metric key
#: (a :data:`CATALOG` key, or the source's own name for metrics labkit does not know), value in
#: ``unit`` (NaN when missing), and a :class:`Status` with a reason when not ``ok``.
FRAME_COLUMNS: tuple[str, ...] = ("timestamp_s", "gpu", "metric", "value", "unit", "status",
                                  "reason")


def reference_table() -> pd.DataFrame:
    """Return the DCGM field <-> NVML call <-> nvidia-smi query table, with units.

    Returns
    -------
    pandas.DataFrame
        One row per :data:`CATALOG` metric, indexed by key; columns ``dcgm_field``,
        ``dcgm_id``, ``dcgm_unit``, ``nvml_call``, ``nvml_unit``, ``smi_field``, ``smi_unit``,
        ``unit`` (labkit's). Missing names are empty strings.

    Used in: notebooks/01_observe.ipynb
    """
    rows = [{
        "key": m.key, "dcgm_field": m.dcgm_field or "",
        "dcgm_id": "" if m.dcgm_id is None else str(m.dcgm_id), "dcgm_unit": m.dcgm_unit or "",
        "nvml_call": m.nvml_call, "nvml_unit": m.nvml_unit, "smi_field": m.smi_field or "",
        "smi_unit": m.smi_unit or "", "unit": m.unit,
    } for m in CATALOG.values()]
    return pd.DataFrame(rows).set_index("key")


# --------------------------------------------------------------------------------------------
# Readings
# --------------------------------------------------------------------------------------------


class Status(StrEnum):
    """Why a reading has no value (or ``OK``)."""

    OK = "ok"
    #: NVML_ERROR_NOT_SUPPORTED, nvidia-smi ``[Not Supported]``, DCGM blank "not supported".
    NOT_SUPPORTED = "not_supported"
    #: NVML_ERROR_NO_PERMISSION (DCGM blank "no permission").
    NO_PERMISSION = "no_permission"
    #: NVML_ERROR_GPU_IS_LOST (Xid 79: fallen off the bus), nvidia-smi ``[GPU is lost]``.
    GPU_LOST = "gpu_lost"
    #: NVML_ERROR_FUNCTION_NOT_FOUND: the driver is older than the call.
    FUNCTION_NOT_FOUND = "function_not_found"
    #: nvidia-smi ``[N/A]`` / ``[Unknown Error]``, DCGM blank "not found"/"blank".
    NOT_AVAILABLE = "not_available"
    #: GPM needs two samples >= 100 ms apart; the first one only starts the interval.
    PENDING = "pending"
    #: Any other NVML error (Unknown, Timeout, ...): missing this time, asked again next tick.
    ERROR = "error"


#: NVML error names (``NVMLError_<name>``) that map to a specific status; others are ERROR.
_STATUS_OF_NVML = {
    "NotSupported": Status.NOT_SUPPORTED,
    "NoPermission": Status.NO_PERMISSION,
    "GpuIsLost": Status.GPU_LOST,
    "FunctionNotFound": Status.FUNCTION_NOT_FOUND,
    # GPM with a struct version the driver does not know: treat as "not on this GPU" (as gpud).
    "ArgumentVersionMismatch": Status.NOT_SUPPORTED,
}
#: Statuses after which the sampler stops asking (until :meth:`Sampler.reprobe`).
_STICKY = frozenset({Status.NOT_SUPPORTED, Status.NO_PERMISSION, Status.FUNCTION_NOT_FOUND})


@dataclass(frozen=True)
class Reading:
    """One metric of one GPU at one time: a value, or the status and reason it is missing.

    Attributes
    ----------
    value : float or None
        In the metric's unit (:attr:`Metric.unit`); None unless ``status`` is ``OK``.
    status : Status
    reason : str or None
        The NVML error name (``"NotSupported"``), the log's token (``"[N/A]"``) or a short
        English phrase; None when ``OK``.
    """

    value: float | None
    status: Status = Status.OK
    reason: str | None = None

    @property
    def ok(self) -> bool:
        """Whether there is a value."""
        return self.status is Status.OK and self.value is not None

    @staticmethod
    def missing(status: Status, reason: str | None) -> Reading:
        """Return a reading without a value."""
        return Reading(None, status, reason)


def _nvml_error_name(err: BaseException) -> str:
    name = type(err).__name__
    return name.removeprefix("NVMLError_") if name.startswith("NVMLError_") else name


def status_of_nvml_error(err: BaseException) -> Status:
    """Return the :class:`Status` for an NVML exception (by its ``NVMLError_<name>`` class)."""
    return _STATUS_OF_NVML.get(_nvml_error_name(err), Status.ERROR)


View = Mapping[str, Reading]


def _val(view: View, key: str) -> float | None:
    r = view.get(key)
    return r.value if r is not None and r.ok else None


# --------------------------------------------------------------------------------------------
# Derived signals
# --------------------------------------------------------------------------------------------

#: util.gpu at or above this counts as "busy" (the dashboards' 100 %; 0.9 leaves room for the
#: 1/6-1 s sample window). Teaching threshold (labkit).
UTIL_BUSY_FRAC = 0.9
#: SM activity below this "likely means ineffective use" (NVIDIA DCGM guidance as relayed by
#: KempnerPulse docs/classification.md: >= 0.8 necessary, < 0.5 likely ineffective).
SM_ACTIVE_LOW_FRAC = 0.5
#: Without SM activity (nvidia-smi logs, pre-Hopper without DCGM), power below this share of the
#: enforced limit at util.gpu >= 0.9 is the fallback tell (cases: cupy#3557 "100 % with low
#: temperature", Qwen#970 "power low, utilization full"; 70 W of 700 W). Teaching threshold.
POWER_LOW_FRAC = 0.3


@dataclass(frozen=True)
class Signal:
    """A derived yes/no signal, or "can't tell" when an input is missing.

    Attributes
    ----------
    key : str
        ``busy_not_working``, ``throttle``, ...
    on : bool or None
        None when a needed input is n/a: a derived value of a missing reading is missing,
        never false or 0.
    value : float or None
        The number behind it (e.g. SM activity, or power / limit).
    basis : str
        Which inputs decided it (``"sm_active"``, ``"power"``; ``""`` if none).
    missing : tuple of str
        The inputs that were n/a.
    """

    key: str
    on: bool | None
    value: float | None = None
    basis: str = ""
    missing: tuple[str, ...] = ()


def power_frac(view: View) -> float | None:
    """Return power draw / enforced power limit, or None if either is missing.

    Parameters
    ----------
    view : mapping of str to Reading
        One GPU's readings (keys of :data:`CATALOG`).

    Returns
    -------
    float or None
        ``power_usage_w / power_limit_w``. [fraction; can exceed 1 briefly]

    Used in: notebooks/01_observe.ipynb
    """
    power, limit = _val(view, "power_usage_w"), _val(view, "power_limit_w")
    if power is None or limit is None or limit <= 0:
        return None
    return power / limit


def sm_clock_frac(view: View) -> float | None:
    """Return SM clock / max SM clock, or None if either is missing. [fraction]"""
    clock, top = _val(view, "sm_clock_mhz"), _val(view, "max_sm_clock_mhz")
    if clock is None or top is None or top <= 0:
        return None
    return clock / top


def busy_not_working(view: View, *, util_busy: float = UTIL_BUSY_FRAC,
                     sm_active_low: float = SM_ACTIVE_LOW_FRAC,
                     power_low: float = POWER_LOW_FRAC) -> Signal:
    """Return the "busy but not working" signal: util.gpu high while the SMs do little.

    Fires when util.gpu >= ``util_busy`` and SM activity < ``sm_active_low``. Without SM
    activity (a log from nvidia-smi, a GPU without GPM) it falls back to power: util.gpu high
    while power < ``power_low`` x the enforced limit.

    Parameters
    ----------
    view : mapping of str to Reading
        One GPU's readings.
    util_busy, sm_active_low, power_low : float
        Thresholds. [fraction]

    Returns
    -------
    Signal
        ``on`` None when util.gpu is missing, or both SM activity and power are.

    References
    ----------
    .. [1] dcgm-exporter issue 341 and cupy issue 3557: util.gpu 100 % while nothing useful
       runs; NVIDIA DCGM guidance relayed by KempnerPulse (SM active < 0.5 ineffective).

    Used in: notebooks/01_observe.ipynb
    """
    util = _val(view, "gpu_util_frac")
    sm = _val(view, "sm_active_frac")
    pf = power_frac(view)
    missing = tuple(k for k, v in (("gpu_util_frac", util), ("sm_active_frac", sm),
                                   ("power_frac", pf)) if v is None)
    if util is None:
        return Signal("busy_not_working", None, None, "", missing)
    if sm is not None:
        return Signal("busy_not_working", util >= util_busy and sm < sm_active_low, sm,
                      "sm_active", missing)
    if pf is not None:
        return Signal("busy_not_working", util >= util_busy and pf < power_low, pf, "power",
                      missing)
    return Signal("busy_not_working", None, None, "", missing)


#: Clocks-event reason bits (``nvmlClocksEventReason*`` in ``nvml.h``; DCGM uses the same bits).
#: 0x200 / 0x400 exist only in the deprecated throttle-named set (BoardLimit, Reliability).
CLOCKS_EVENT_REASONS: Mapping[int, str] = MappingProxyType({
    0x1: "GpuIdle", 0x2: "ApplicationsClocksSetting", 0x4: "SwPowerCap", 0x8: "HwSlowdown",
    0x10: "SyncBoost", 0x20: "SwThermalSlowdown", 0x40: "HwThermalSlowdown",
    0x80: "HwPowerBrakeSlowdown", 0x100: "DisplayClockSetting", 0x200: "BoardLimit",
    0x400: "Reliability",
})
#: Reasons that are not a loss of performance under load.
BENIGN_REASONS = frozenset({"GpuIdle", "ApplicationsClocksSetting", "DisplayClockSetting",
                            "SyncBoost"})


def decode_clocks_event_reasons(mask: int | float) -> tuple[str, ...]:
    """Return the names of the bits set in a clocks-event (throttle) reasons mask.

    Parameters
    ----------
    mask : int
        ``nvmlDeviceGetCurrentClocksEventReasons`` / ``DCGM_FI_DEV_CLOCKS_EVENT_REASONS`` /
        nvidia-smi ``clocks_event_reasons.active``.

    Returns
    -------
    tuple of str
        Names in bit order (``("SwPowerCap",)``); unknown bits as ``"0x800"``.

    Raises
    ------
    ValueError
        For a negative or non-integer mask.

    Used in: notebooks/01_observe.ipynb
    """
    if isinstance(mask, float):
        if not mask.is_integer():
            raise ValueError(f"mask must be an integer, got {mask!r}")
        mask = int(mask)
    if not isinstance(mask, int) or mask < 0:
        raise ValueError(f"mask must be a non-negative integer, got {mask!r}")
    names = []
    bit = 1
    while bit <= mask:
        if mask & bit:
            names.append(CLOCKS_EVENT_REASONS.get(bit, f"0x{bit:x}"))
        bit <<= 1
    return tuple(names)


def throttle(view: View) -> Signal:
    """Return whether clocks are held down for a reason that costs performance.

    ``on`` when a reason other than :data:`BENIGN_REASONS` is set (SwPowerCap, thermal or HW
    slowdown, power brake); ``value`` is SM clock / max; ``basis`` names the reasons.

    Used in: notebooks/01_observe.ipynb
    """
    mask = _val(view, "clocks_event_reasons")
    if mask is None:
        return Signal("throttle", None, sm_clock_frac(view), "", ("clocks_event_reasons",))
    bad = [r for r in decode_clocks_event_reasons(mask) if r not in BENIGN_REASONS]
    return Signal("throttle", bool(bad), sm_clock_frac(view), ",".join(bad))


@dataclass(frozen=True)
class Alert:
    """An error counter or state that deserves attention.

    Attributes
    ----------
    key : str
        ``gpu_lost``, ``xid``, ``ecc_dbe``, ``remap_pending``, ``remap_failure``,
        ``pcie_replay``.
    severity : {"critical", "warning"}
    value : float or None
        The reading that raised it (the Xid code, the count).
    """

    key: str
    severity: str
    value: float | None = None


#: Xid codes after which the GPU needs a reset or reboot (NVIDIA Xid catalog: 79 fallen off the
#: bus, 48 double-bit ECC, 64 row-remap failure, 74 NVLink, 95 uncontained ECC).
CRITICAL_XIDS = frozenset({48, 64, 74, 79, 95})


def alerts(view: View) -> tuple[Alert, ...]:
    """Return the alerts one GPU's readings raise (error counters as alerts).

    A GPU whose readings are ``gpu_lost`` raises ``gpu_lost``; Xid != 0 raises ``xid``
    (critical for :data:`CRITICAL_XIDS`); uncorrectable ECC > 0, a pending row remap, a remap
    failure and PCIe replays > 0 raise their own. Missing readings raise nothing.

    Used in: notebooks/01_observe.ipynb
    """
    out: list[Alert] = []
    if any(r.status is Status.GPU_LOST for r in view.values()):
        out.append(Alert("gpu_lost", "critical", _val(view, "xid")))
    xid = _val(view, "xid")
    if xid:
        out.append(Alert("xid", "critical" if int(xid) in CRITICAL_XIDS else "warning", xid))
    for key, metric, severity in (("ecc_dbe", "ecc_dbe_volatile_count", "critical"),
                                  ("remap_pending", "remapped_rows_pending", "warning"),
                                  ("remap_failure", "row_remap_failure", "critical"),
                                  ("pcie_replay", "pcie_replay_count", "warning")):
        v = _val(view, metric)
        if v:
            out.append(Alert(key, severity, v))
    return tuple(out)


def healthy_gpus(views: Mapping[int, View]) -> tuple[int, int]:
    """Return (healthy, total) GPUs: unhealthy means lost or with a critical alert.

    Parameters
    ----------
    views : mapping of int to mapping of str to Reading
        GPU index -> its latest readings.

    Used in: notebooks/01_observe.ipynb
    """
    bad = sum(1 for v in views.values() if any(a.severity == "critical" for a in alerts(v)))
    return len(views) - bad, len(views)


#: Which panel reveals each workload scenario of the simulated lab GPU (scenario names of
#: ``labkit.gpu.sim.SCENARIOS``), and the signal that fires. Teaching mapping; the tests check
#: it against the simulator.
SCENARIO_REVEALS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "idle": ("gpu_util",),
    "tiny_kernel": ("sm_active",),
    "collective_stall": ("sm_active", "power"),
    "training": ("tensor_active",),
    "memory_bound": ("dram_active",),
    "inference_small_batch": ("sm_active",),
    "dataloader_starved": ("gpu_util", "pcie"),
    "burn_in": ("clocks", "power"),
})


# --------------------------------------------------------------------------------------------
# "What goes on the wall"
# --------------------------------------------------------------------------------------------

#: The dashboard's panels (a wall shows at most three). Values: the metrics each one shows.
PANELS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "gpu_util": ("gpu_util_frac",),
    "sm_active": ("sm_active_frac", "sm_occupancy_frac"),
    "tensor_active": ("tensor_active_frac",),
    "dram_active": ("dram_active_frac", "mem_copy_util_frac"),
    "memory": ("fb_used_mib", "fb_total_mib"),
    "power": ("power_usage_w", "power_limit_w", "energy_j"),
    "temperature": ("gpu_temp_c", "memory_temp_c", "fan_speed_frac"),
    "clocks": ("sm_clock_mhz", "max_sm_clock_mhz", "clocks_event_reasons"),
    "pcie": ("pcie_tx_kb_per_s", "pcie_rx_kb_per_s"),
    "errors": ("xid", "ecc_dbe_volatile_count", "remapped_rows_uncorrectable",
               "remapped_rows_pending", "row_remap_failure", "pcie_replay_count"),
})
#: Most panels a wall holds in the exercise (the course: choosing is the hard part).
WALL_MAX_PANELS = 3


@dataclass(frozen=True)
class Situation:
    """A situation of the wall exercise and its rubric.

    Attributes
    ----------
    key : str
    essential : tuple of str
        Panels the wall must show.
    misleading : tuple of str
        Panels that look relevant but mislead here (the wall fails with them).
    """

    key: str
    essential: tuple[str, ...]
    misleading: tuple[str, ...]


#: The exercise's situations (from the course framing: night shift, a slowed training run, one
#: GPU shared by a class). Rubric: labkit teaching choice, reasons in the lesson text.
SITUATIONS: Mapping[str, Situation] = MappingProxyType({s.key: s for s in (
    # on call at night: only what needs a human now - a lost GPU, Xid, ECC; heat next
    Situation("night_oncall", ("errors",), ("gpu_util", "tensor_active")),
    # a run slowed down: is the GPU doing math, and are the clocks held down?
    Situation("slow_training", ("sm_active", "clocks"), ("gpu_util",)),
    # thirty students on one GPU: memory runs out first; util.gpu is 100 % from anyone's loop
    Situation("shared_class", ("memory", "sm_active"), ("gpu_util",)),
)})


@dataclass(frozen=True)
class WallVerdict:
    """The check of one wall.

    Attributes
    ----------
    ok : bool
        All essential panels chosen and no misleading one.
    missing : tuple of str
        Essential panels not chosen.
    misleading : tuple of str
        Misleading panels chosen.
    """

    ok: bool
    missing: tuple[str, ...]
    misleading: tuple[str, ...]


def check_wall(situation: str, panels: Iterable[str]) -> WallVerdict:
    """Check a choice of at most three panels for a situation of the wall exercise.

    Parameters
    ----------
    situation : str
        A key of :data:`SITUATIONS`.
    panels : iterable of str
        Keys of :data:`PANELS` (duplicates count once).

    Returns
    -------
    WallVerdict

    Raises
    ------
    labkit.validate.InputError
        ``situation`` / ``panels`` (rule ``choice``) for an unknown key; ``panels`` (rule
        ``at_most``) for more than :data:`WALL_MAX_PANELS`.

    Used in: notebooks/01_observe.ipynb
    """
    validate.one_of("situation", situation, SITUATIONS)
    chosen: list[str] = []
    for p in panels:
        validate.one_of("panels", p, PANELS)
        if p not in chosen:
            chosen.append(p)
    validate.at_most("panels", len(chosen), WALL_MAX_PANELS, "WALL_MAX_PANELS")
    rubric = SITUATIONS[situation]
    missing = tuple(p for p in rubric.essential if p not in chosen)
    misleading = tuple(p for p in chosen if p in rubric.misleading)
    return WallVerdict(not missing and not misleading, missing, misleading)


# --------------------------------------------------------------------------------------------
# Snapshots and the ring buffer
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    """What one sampler tick read.

    Attributes
    ----------
    t_s : float
        Time of the tick since sampling began. [s]
    readings : mapping of (int, str) to Reading
        (gpu, metric) -> reading, for the metrics read this tick (slow and GPM metrics are not
        read every tick).
    duration_s : float
        How long the tick's NVML calls took. [s]
    interval_s : float or None
        Time since the previous tick began (the actual sample interval). [s]
    """

    t_s: float
    readings: Mapping[tuple[int, str], Reading]
    duration_s: float = 0.0
    interval_s: float | None = None

    def get(self, gpu: int, metric: str) -> Reading | None:
        """Return the reading of ``metric`` on ``gpu`` from this tick, if it was read."""
        return self.readings.get((gpu, metric))

    def to_frame(self) -> pd.DataFrame:
        """Return this tick as a tidy frame (:data:`FRAME_COLUMNS`)."""
        rows = [(self.t_s, g, m, np.nan if r.value is None else r.value, _unit(m),
                 str(r.status), r.reason or "") for (g, m), r in self.readings.items()]
        return pd.DataFrame(rows, columns=list(FRAME_COLUMNS))


def _unit(metric: str) -> str:
    m = CATALOG.get(metric)
    return m.unit if m else ""


_STATUSES: tuple[Status, ...] = tuple(Status)
_STATUS_CODE = {s: i for i, s in enumerate(_STATUSES)}
_NOT_READ = -1


class History:
    """A bounded ring buffer of sampler ticks (thread-safe).

    Stores, per tick, one float64 value, one status code and one reason code per (gpu, metric):
    ``capacity x gpus x metrics x 11`` bytes plus the timestamps. The oldest tick is dropped
    when full.

    Parameters
    ----------
    gpus : sequence of int
    metrics : sequence of str
    capacity : int
        Ticks kept (3,600 = one hour at 1 Hz). Must be 1..1,000,000.

    Raises
    ------
    labkit.validate.InputError
        For a capacity outside 1..1,000,000.
    """

    MAX_CAPACITY = 1_000_000

    def __init__(self, gpus: Sequence[int], metrics: Sequence[str], capacity: int) -> None:
        capacity = validate.integer("capacity", capacity, minimum=1)
        validate.at_most("capacity", capacity, self.MAX_CAPACITY, "History.MAX_CAPACITY")
        self.gpus = tuple(gpus)
        self.metrics = tuple(metrics)
        self.capacity = capacity
        self._g = {g: i for i, g in enumerate(self.gpus)}
        self._m = {m: i for i, m in enumerate(self.metrics)}
        shape = (capacity, len(self.gpus), len(self.metrics))
        self._t = np.full(capacity, np.nan)
        self._values = np.full(shape, np.nan)
        self._status = np.full(shape, _NOT_READ, dtype=np.int8)
        self._reason = np.zeros(shape, dtype=np.int16)
        self._reasons: list[str] = [""]
        self._reason_index: dict[str, int] = {"": 0}
        self._latest: dict[tuple[int, str], tuple[float, Reading]] = {}
        self._next = 0
        self._count = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._count

    @property
    def nbytes(self) -> int:
        """Bytes held by the buffer's arrays."""
        return int(self._t.nbytes + self._values.nbytes + self._status.nbytes
                   + self._reason.nbytes)

    def _reason_code(self, reason: str | None) -> int:
        if not reason:
            return 0
        code = self._reason_index.get(reason)
        if code is None:
            if len(self._reasons) >= np.iinfo(np.int16).max:
                return 0
            code = len(self._reasons)
            self._reasons.append(reason)
            self._reason_index[reason] = code
        return code

    def append(self, snapshot: Snapshot) -> None:
        """Add one tick (readings of unknown GPUs or metrics are ignored)."""
        with self._lock:
            i = self._next
            self._t[i] = snapshot.t_s
            self._values[i] = np.nan
            self._status[i] = _NOT_READ
            self._reason[i] = 0
            for (g, m), r in snapshot.readings.items():
                gi, mi = self._g.get(g), self._m.get(m)
                if gi is None or mi is None:
                    continue
                if r.value is not None:
                    self._values[i, gi, mi] = r.value
                self._status[i, gi, mi] = _STATUS_CODE[r.status]
                self._reason[i, gi, mi] = self._reason_code(r.reason)
                self._latest[(g, m)] = (snapshot.t_s, r)
            self._next = (i + 1) % self.capacity
            self._count = min(self._count + 1, self.capacity)

    def clear(self) -> None:
        """Forget every tick."""
        with self._lock:
            self._next = self._count = 0
            self._latest.clear()

    def _order(self) -> np.ndarray:
        start = (self._next - self._count) % self.capacity
        return (start + np.arange(self._count)) % self.capacity

    def latest(self, gpu: int) -> dict[str, Reading]:
        """Return the last reading of every metric of ``gpu`` (slow metrics keep their last)."""
        with self._lock:
            return {m: r for (g, m), (_, r) in self._latest.items() if g == gpu}

    def latest_time(self, gpu: int, metric: str) -> float | None:
        """Return when ``metric`` of ``gpu`` was last read. [s]"""
        with self._lock:
            item = self._latest.get((gpu, metric))
        return None if item is None else item[0]

    def times(self) -> np.ndarray:
        """Return the tick times, oldest first. [s]"""
        with self._lock:
            return self._t[self._order()].copy()

    def series(self, gpu: int, metrics: Sequence[str], since_s: float | None = None
               ) -> pd.DataFrame:
        """Return a wide frame of ``metrics`` of ``gpu`` (index ``timestamp_s``), oldest first.

        Ticks where a metric was not read or had no value are NaN. ``since_s`` keeps the ticks
        at or after that time.
        """
        with self._lock:
            order = self._order()
            t = self._t[order]
            gi = self._g[gpu]
            cols = {m: self._values[order, gi, self._m[m]].copy() for m in metrics}
        frame = pd.DataFrame(cols, index=pd.Index(t, name="timestamp_s"))
        if since_s is not None:
            frame = frame[frame.index >= since_s]
        return frame

    def frame(self) -> pd.DataFrame:
        """Return every stored reading as a tidy frame (:data:`FRAME_COLUMNS`)."""
        with self._lock:
            order = self._order()
            t = self._t[order]
            values = self._values[order]
            status = self._status[order]
            reason = self._reason[order]
            reasons = list(self._reasons)
        ti, gi, mi = np.nonzero(status != _NOT_READ)
        return pd.DataFrame({
            "timestamp_s": t[ti],
            "gpu": np.asarray(self.gpus, dtype=int)[gi] if len(self.gpus) else gi,
            "metric": np.asarray(self.metrics, dtype=object)[mi],
            "value": values[ti, gi, mi],
            "unit": [_unit(self.metrics[k]) for k in mi],
            "status": [str(_STATUSES[s]) for s in status[ti, gi, mi]],
            "reason": [reasons[r] for r in reason[ti, gi, mi]],
        }, columns=list(FRAME_COLUMNS))


# --------------------------------------------------------------------------------------------
# The sampler
# --------------------------------------------------------------------------------------------

#: NVIDIA: take the two GPM samples more than 100 ms apart (internal refresh rate). NVML GPM
#: functions reference, https://docs.nvidia.com/deploy/nvml-api/group__nvmlGpmFunctions.html
GPM_MIN_INTERVAL_S = 0.1
#: GPM metric ids (``NVML_GPM_METRIC_*`` in nvml.h) of the GPM metrics in the catalog.
GPM_METRIC_IDS: Mapping[str, int] = MappingProxyType({
    "gr_engine_active_frac": 1, "sm_active_frac": 2, "sm_occupancy_frac": 3,
    "tensor_active_frac": 5, "dram_active_frac": 10,
})
#: Slow tier interval, like nvitop's 5 s cache of slow-moving fields (tui/library/device.py).
SLOW_INTERVAL_S = 5.0
#: Fastest sampling rate offered (nvdashboard's 100 ms default; util.gpu itself updates every
#: 1/6-1 s). [Hz]
MAX_RATE_HZ = 10.0
#: How often a lost GPU is probed again (by index, never with its dead handle). [s]
REPROBE_S = 5.0
#: Xid events drained per tick at most (a storm cannot stall the sampler).
MAX_EVENTS_PER_TICK = 64

Reader = Callable[[Any, Any], dict[str, float]]


def _nv_reader(call: str, metrics: Sequence[str], read: Callable[[Any, Any], Sequence[Any]]
               ) -> tuple[str, tuple[str, ...], Callable[[Any, Any], dict[str, float]]]:
    def run(nv: Any, h: Any) -> dict[str, float]:
        raw = read(nv, h)
        return {m: float(v) * CATALOG[m].nvml_scale for m, v in zip(metrics, raw, strict=True)}
    return call, tuple(metrics), run


def _remapped(nv: Any, h: Any) -> Sequence[Any]:
    _corr, unc, pending, failure = nv.nvmlDeviceGetRemappedRows(h)
    return unc, pending, failure


#: One NVML call per reader: (call name, metrics it fills, function). Every metric of a reader
#: shares the call's fate; field values and GPM metrics fail one by one (handled apart).
_READERS: tuple[tuple[str, tuple[str, ...], Callable[[Any, Any], dict[str, float]]], ...] = (
    _nv_reader("nvmlDeviceGetUtilizationRates", ("gpu_util_frac", "mem_copy_util_frac"),
               lambda nv, h: (lambda u: (u.gpu, u.memory))(nv.nvmlDeviceGetUtilizationRates(h))),
    _nv_reader("nvmlDeviceGetMemoryInfo", ("fb_used_mib",),
               lambda nv, h: (nv.nvmlDeviceGetMemoryInfo(h).used,)),
    _nv_reader("nvmlDeviceGetMemoryInfo", ("fb_total_mib",),
               lambda nv, h: (nv.nvmlDeviceGetMemoryInfo(h).total,)),
    _nv_reader("nvmlDeviceGetPowerUsage", ("power_usage_w",),
               lambda nv, h: (nv.nvmlDeviceGetPowerUsage(h),)),
    _nv_reader("nvmlDeviceGetEnforcedPowerLimit", ("power_limit_w",),
               lambda nv, h: (nv.nvmlDeviceGetEnforcedPowerLimit(h),)),
    _nv_reader("nvmlDeviceGetTotalEnergyConsumption", ("energy_j",),
               lambda nv, h: (nv.nvmlDeviceGetTotalEnergyConsumption(h),)),
    _nv_reader("nvmlDeviceGetTemperature", ("gpu_temp_c",),
               lambda nv, h: (nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU),)),
    _nv_reader("nvmlDeviceGetFanSpeed", ("fan_speed_frac",),
               lambda nv, h: (nv.nvmlDeviceGetFanSpeed(h),)),
    _nv_reader("nvmlDeviceGetClockInfo", ("sm_clock_mhz",),
               lambda nv, h: (nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM),)),
    _nv_reader("nvmlDeviceGetMaxClockInfo", ("max_sm_clock_mhz",),
               lambda nv, h: (nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_SM),)),
    _nv_reader("nvmlDeviceGetCurrentClocksEventReasons", ("clocks_event_reasons",),
               lambda nv, h: (nv.nvmlDeviceGetCurrentClocksEventReasons(h),)),
    _nv_reader("nvmlDeviceGetPcieThroughput", ("pcie_tx_kb_per_s",),
               lambda nv, h: (nv.nvmlDeviceGetPcieThroughput(h, nv.NVML_PCIE_UTIL_TX_BYTES),)),
    _nv_reader("nvmlDeviceGetPcieThroughput", ("pcie_rx_kb_per_s",),
               lambda nv, h: (nv.nvmlDeviceGetPcieThroughput(h, nv.NVML_PCIE_UTIL_RX_BYTES),)),
    _nv_reader("nvmlDeviceGetTotalEccErrors", ("ecc_dbe_volatile_count",),
               lambda nv, h: (nv.nvmlDeviceGetTotalEccErrors(
                   h, nv.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nv.NVML_VOLATILE_ECC),)),
    _nv_reader("nvmlDeviceGetRemappedRows",
               ("remapped_rows_uncorrectable", "remapped_rows_pending", "row_remap_failure"),
               _remapped),
)
#: Metrics read through ``nvmlDeviceGetFieldValues`` (one call, one status per entry):
#: metric -> ``NVML_FI_*`` constant name.
_FIELD_METRICS: Mapping[str, str] = MappingProxyType({
    "memory_temp_c": "NVML_FI_DEV_MEMORY_TEMP",
    "pcie_replay_count": "NVML_FI_DEV_PCIE_REPLAY_COUNTER",
})
_FIELD_VALUE_MEMBERS = {"NVML_VALUE_TYPE_DOUBLE": "dVal", "NVML_VALUE_TYPE_UNSIGNED_INT": "uiVal",
                        "NVML_VALUE_TYPE_UNSIGNED_LONG": "ulVal",
                        "NVML_VALUE_TYPE_UNSIGNED_LONG_LONG": "ullVal",
                        "NVML_VALUE_TYPE_SIGNED_LONG_LONG": "sllVal",
                        "NVML_VALUE_TYPE_SIGNED_INT": "siVal"}


@dataclass
class _Gpm:
    supported: Reading | None = None  # None: supported; else the missing reading to report
    spare: Any = None
    prev: Any = None
    prev_t: float = -math.inf
    samples: list[Any] = field(default_factory=list)


@dataclass
class _Device:
    index: int
    handle: Any
    name: str = ""
    lost: Reading | None = None  # what every metric reads while the GPU is lost / unreachable
    lost_t: float = 0.0
    last_slow_t: float = -math.inf
    disabled: dict[str, Reading] = field(default_factory=dict)  # metric -> sticky reading
    gpm: _Gpm = field(default_factory=_Gpm)
    xid: float = 0.0
    xid_registered: Reading | None = None


_RUNNING: weakref.WeakSet[Sampler] = weakref.WeakSet()


def _address(handle: Any) -> int | None:
    """Return the address a device handle points at (handles of one GPU compare equal)."""
    try:
        return ctypes.cast(handle, ctypes.c_void_p).value
    except (TypeError, ctypes.ArgumentError):
        return None


class Sampler:
    """Poll a connected NVML at a chosen rate into a :class:`History` of :class:`Snapshot`.

    Every NVML call is wrapped: an NVML error becomes a missing :class:`Reading` with its status
    and reason, never an exception out of :meth:`poll`. ``NotSupported``, ``NoPermission`` and
    ``FunctionNotFound`` are remembered per (GPU, metric) and not asked again (capability probe
    once; :meth:`reprobe` clears it). ``GpuIsLost`` marks the GPU lost: its handle is never
    used again; every :data:`REPROBE_S` the sampler asks ``nvmlDeviceGetHandleByIndex`` whether
    it is back. GPM samples are taken at least :data:`GPM_MIN_INTERVAL_S` apart; the slow tier
    (temperature, limits, ECC, row remapping) is read every ``slow_interval_s``.

    Parameters
    ----------
    nv : module
        The NVML module returned by ``labkit.gpu.connect()`` (or any object with its calls).
    metrics : sequence of str, optional
        Keys of :data:`CATALOG` to read (default: all).
    capacity : int, default 3600
        Ticks kept in :attr:`history`.
    clock : callable, default time.monotonic
        Returns seconds; tests pass the simulated lab's virtual clock (``lab.now``).
    slow_interval_s : float, default SLOW_INTERVAL_S
    gpm_min_interval_s : float, default GPM_MIN_INTERVAL_S

    Raises
    ------
    labkit.validate.InputError
        For an unknown metric or a bad interval.

    Notes
    -----
    One lock serialises :meth:`poll`, so a background thread (:meth:`start`) and a direct call
    never interleave their NVML calls; the :class:`History` has its own lock. If NVML cannot
    list the GPUs (not initialised, driver gone), the sampler has no GPUs, :attr:`error` says
    why and :meth:`poll` returns empty snapshots.

    Used in: notebooks/01_observe.ipynb
    """

    def __init__(self, nv: Any, *, metrics: Sequence[str] | None = None, capacity: int = 3600,
                 clock: Callable[[], float] = time.monotonic,
                 slow_interval_s: float = SLOW_INTERVAL_S,
                 gpm_min_interval_s: float = GPM_MIN_INTERVAL_S) -> None:
        keys = tuple(CATALOG) if metrics is None else tuple(metrics)
        for k in keys:
            validate.one_of("metrics", k, CATALOG)
        self.nv = nv
        self.metrics = keys
        self.clock = clock
        self.slow_interval_s = validate.non_negative("slow_interval_s", slow_interval_s)
        self.gpm_min_interval_s = validate.at_most(
            "gpm_min_interval_s", validate.positive("gpm_min_interval_s", gpm_min_interval_s),
            60.0, "60 s")
        if self.gpm_min_interval_s < GPM_MIN_INTERVAL_S:
            raise validate.InputError(
                "gpm_min_interval_s", "at_least", gpm_min_interval_s,
                f"gpm_min_interval_s must be >= {GPM_MIN_INTERVAL_S}", limit=GPM_MIN_INTERVAL_S)
        self._wanted = set(keys)
        self._readers = [(c, tuple(m for m in ms if m in self._wanted), f, CATALOG[ms[0]].tier)
                         for c, ms, f in _READERS if any(m in self._wanted for m in ms)]
        self._gpm_keys = tuple(k for k in GPM_METRIC_IDS if k in self._wanted)
        self._field_keys = tuple(k for k in _FIELD_METRICS if k in self._wanted)
        self._lock = threading.RLock()
        self.error: str | None = None
        self.devices: list[_Device] = []
        self._by_address: dict[int | None, int] = {}
        self._events: Any = None
        self._t0 = clock()
        self._last_start: float | None = None
        self.ticks = 0
        self.last_duration_s = 0.0
        self.last_interval_s: float | None = None
        self._enumerate()
        self.history = History([d.index for d in self.devices], keys, capacity)
        # background thread state
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._rate_hz = 1.0
        self.stopped_reason: str | None = None
        self.callback_error: BaseException | None = None

    # -- setup ----------------------------------------------------------------------------------
    def _call(self, name: str, *args: Any) -> Any:
        return getattr(self.nv, name)(*args)

    def _is_nvml_error(self, err: BaseException) -> bool:
        base = getattr(self.nv, "NVMLError", None)
        return isinstance(base, type) and isinstance(err, base)

    def _enumerate(self) -> None:
        try:
            count = int(self._call("nvmlDeviceGetCount"))
        except Exception as err:
            if not self._is_nvml_error(err):
                raise
            self.error = _nvml_error_name(err)
            return
        for i in range(count):
            dev = _Device(i, None)
            try:
                dev.handle = self._call("nvmlDeviceGetHandleByIndex", i)
                name = self._call("nvmlDeviceGetName", dev.handle)
                dev.name = name.decode() if isinstance(name, bytes) else str(name)
            except Exception as err:
                if not self._is_nvml_error(err):
                    raise
                if dev.handle is None:  # no handle: unreachable until a reprobe finds it
                    status = status_of_nvml_error(err)
                    dev.lost = Reading.missing(
                        status if status is not Status.ERROR else Status.GPU_LOST,
                        _nvml_error_name(err))
            self.devices.append(dev)
            self._probe(dev)
        self._by_address = {_address(d.handle): d.index for d in self.devices
                             if d.handle is not None}
        self._register_events()

    def _probe(self, dev: _Device) -> None:
        dev.gpm = _Gpm()
        if not self._gpm_keys or dev.lost:
            return
        try:
            support = self._call("nvmlGpmQueryDeviceSupport", dev.handle)
        except Exception as err:
            if not self._is_nvml_error(err):
                raise
            dev.gpm.supported = Reading.missing(status_of_nvml_error(err), _nvml_error_name(err))
            return
        if not getattr(support, "isSupportedDevice", 0):
            dev.gpm.supported = Reading.missing(Status.NOT_SUPPORTED, "GpmNotSupported")

    def _register_events(self) -> None:
        if "xid" not in self._wanted or not self.devices:
            return
        try:
            self._events = self._call("nvmlEventSetCreate")
        except Exception as err:
            if not self._is_nvml_error(err):
                raise
            for dev in self.devices:
                dev.xid_registered = Reading.missing(status_of_nvml_error(err),
                                                     _nvml_error_name(err))
            return
        mask = getattr(self.nv, "nvmlEventTypeXidCriticalError", 0x8)
        for dev in self.devices:
            if dev.lost:
                continue
            try:
                self._call("nvmlDeviceRegisterEvents", dev.handle, mask, self._events)
            except Exception as err:
                if not self._is_nvml_error(err):
                    raise
                dev.xid_registered = Reading.missing(status_of_nvml_error(err),
                                                     _nvml_error_name(err))

    @property
    def gpus(self) -> tuple[int, ...]:
        """Indices of the GPUs sampled."""
        return tuple(d.index for d in self.devices)

    def reprobe(self) -> None:
        """Forget every sticky "not supported" and ask every call again on the next tick."""
        with self._lock:
            for dev in self.devices:
                dev.disabled.clear()
                dev.last_slow_t = -math.inf
                if not dev.lost:
                    self._free_gpm(dev)
                    self._probe(dev)

    def close(self) -> None:
        """Stop the thread and free the GPM samples and the event set (errors ignored)."""
        self.stop()
        with self._lock:
            for dev in self.devices:
                self._free_gpm(dev)
            if self._events is not None:
                with contextlib.suppress(Exception):
                    self._call("nvmlEventSetFree", self._events)
                self._events = None

    def _free_gpm(self, dev: _Device) -> None:
        for sample in dev.gpm.samples:
            with contextlib.suppress(Exception):
                self._call("nvmlGpmSampleFree", sample)
        dev.gpm = _Gpm(supported=dev.gpm.supported)

    # -- one tick -------------------------------------------------------------------------------
    def now(self) -> float:
        """Seconds since the sampler was created (on its clock). [s]"""
        return self.clock() - self._t0

    def poll(self) -> Snapshot:
        """Read every due metric of every GPU once; record and return the snapshot.

        Never raises an NVML error: each failure is a missing reading with its reason.
        """
        with self._lock:
            start = self.now()
            readings: dict[tuple[int, str], Reading] = {}
            xids = self._drain_events()
            for dev in self.devices:
                self._poll_device(dev, start, readings, xids.get(dev.index))
                if dev.xid and "xid" in self._wanted:  # the last Xid shows even on a lost GPU
                    readings[(dev.index, "xid")] = Reading(dev.xid)
            end = self.now()
            interval = None if self._last_start is None else start - self._last_start
            self._last_start = start
            snap = Snapshot(start, MappingProxyType(readings), end - start, interval)
            self.ticks += 1
            self.last_duration_s = end - start
            self.last_interval_s = interval
            self.history.append(snap)
            return snap

    def _poll_device(self, dev: _Device, t: float, out: dict[tuple[int, str], Reading],
                     xid: float | None) -> None:
        g = dev.index
        if xid is not None:
            dev.xid = xid
        if dev.lost and t - dev.lost_t >= REPROBE_S:
            self._try_revive(dev, t)
        if dev.lost:
            for m in self.metrics:
                out[(g, m)] = dev.lost
            return
        slow_due = t - dev.last_slow_t >= self.slow_interval_s
        if slow_due:
            dev.last_slow_t = t
        for call, metrics, read, tier in self._readers:
            if tier == "slow" and not slow_due:
                continue
            sticky = [m for m in metrics if m in dev.disabled]
            if sticky:
                for m in metrics:
                    out[(g, m)] = dev.disabled[m]
                continue
            try:
                values = read(self.nv, dev.handle)
            except Exception as err:
                if not self._is_nvml_error(err):
                    raise
                if self._fail(dev, t, metrics, err, out, call):
                    return
                continue
            for m in metrics:
                out[(g, m)] = Reading(values[m])
        if slow_due and self._field_keys:
            if self._read_fields(dev, t, out):
                return
        if self._gpm_keys:
            if self._read_gpm(dev, t, out):
                return
        if "xid" in self._wanted:
            out[(g, "xid")] = dev.xid_registered or Reading(dev.xid)

    def _fail(self, dev: _Device, t: float, metrics: Iterable[str], err: BaseException,
              out: dict[tuple[int, str], Reading], call: str) -> bool:
        """Record a failed call; return True if the GPU is now lost."""
        status, name = status_of_nvml_error(err), _nvml_error_name(err)
        if status is Status.GPU_LOST:
            self._lose(dev, t, name)
            for m in self.metrics:
                out[(dev.index, m)] = Reading.missing(Status.GPU_LOST, name)
            return True
        reading = Reading.missing(status, name)
        for m in metrics:
            out[(dev.index, m)] = reading
            if status in _STICKY:
                dev.disabled[m] = reading
        return False

    def _lose(self, dev: _Device, t: float, reason: str) -> None:
        dev.lost, dev.lost_t = Reading.missing(Status.GPU_LOST, reason), t
        dev.handle = None
        dev.gpm = _Gpm(supported=dev.gpm.supported)  # its samples died with the GPU

    def _try_revive(self, dev: _Device, t: float) -> None:
        dev.lost_t = t
        try:
            handle = self._call("nvmlDeviceGetHandleByIndex", dev.index)
        except Exception as err:
            if not self._is_nvml_error(err):
                raise
            return
        dev.handle, dev.lost = handle, None
        self._by_address[_address(handle)] = dev.index
        dev.disabled.clear()
        dev.last_slow_t = -math.inf
        self._probe(dev)

    def _read_fields(self, dev: _Device, t: float, out: dict[tuple[int, str], Reading]) -> bool:
        keys = [k for k in self._field_keys if k not in dev.disabled]
        for k in self._field_keys:
            if k in dev.disabled:
                out[(dev.index, k)] = dev.disabled[k]
        if not keys:
            return False
        ids = [getattr(self.nv, _FIELD_METRICS[k]) for k in keys]
        try:
            values = self._call("nvmlDeviceGetFieldValues", dev.handle, ids)
        except Exception as err:
            if not self._is_nvml_error(err):
                raise
            return self._fail(dev, t, keys, err, out, "nvmlDeviceGetFieldValues")
        success = getattr(self.nv, "NVML_SUCCESS", 0)
        for k, entry in zip(keys, values, strict=False):
            code = int(entry.nvmlReturn)
            if code != success:
                err_cls = self._error_class(code)
                reading = Reading.missing(_STATUS_OF_NVML.get(err_cls, Status.ERROR), err_cls)
                out[(dev.index, k)] = reading
                if reading.status in _STICKY:
                    dev.disabled[k] = reading
                continue
            out[(dev.index, k)] = Reading(self._field_value(entry) * CATALOG[k].nvml_scale)
        return False

    def _error_class(self, code: int) -> str:
        mapping = getattr(getattr(self.nv, "NVMLError", None), "_valClassMapping", {})
        cls = mapping.get(code)
        return cls.__name__.removeprefix("NVMLError_") if isinstance(cls, type) else f"code {code}"

    def _field_value(self, entry: Any) -> float:
        kind = int(entry.valueType)
        for const, member in _FIELD_VALUE_MEMBERS.items():
            if getattr(self.nv, const, None) == kind:
                return float(getattr(entry.value, member))
        return float(entry.value.ullVal)

    def _read_gpm(self, dev: _Device, t: float, out: dict[tuple[int, str], Reading]) -> bool:
        g, gpm = dev.index, dev.gpm
        if gpm.supported is not None:
            for k in self._gpm_keys:
                out[(g, k)] = gpm.supported
            return False
        if round(t - gpm.prev_t, 6) < self.gpm_min_interval_s:  # 1 us: float noise
            return False  # too soon: the GPM metrics keep their last reading
        try:
            if gpm.spare is None:
                gpm.spare = self._call("nvmlGpmSampleAlloc")
                gpm.samples.append(gpm.spare)
            self._call("nvmlGpmSampleGet", dev.handle, gpm.spare)
        except Exception as err:
            if not self._is_nvml_error(err):
                raise
            return self._gpm_failed(dev, t, err, out)
        if gpm.prev is None:
            gpm.prev, gpm.prev_t, gpm.spare = gpm.spare, t, None
            for k in self._gpm_keys:
                out[(g, k)] = Reading.missing(Status.PENDING, "GpmWarmup")
            return False
        mg = self.nv.c_nvmlGpmMetricsGet_t()
        mg.version = self.nv.NVML_GPM_METRICS_GET_VERSION
        mg.numMetrics = len(self._gpm_keys)
        mg.sample1, mg.sample2 = gpm.prev, gpm.spare
        for i, k in enumerate(self._gpm_keys):
            mg.metrics[i].metricId = GPM_METRIC_IDS[k]
        try:
            self._call("nvmlGpmMetricsGet", mg)
        except Exception as err:
            if not self._is_nvml_error(err):
                raise
            return self._gpm_failed(dev, t, err, out)
        success = getattr(self.nv, "NVML_SUCCESS", 0)
        for i, k in enumerate(self._gpm_keys):
            metric = mg.metrics[i]
            if int(metric.nvmlReturn) != success:
                name = self._error_class(int(metric.nvmlReturn))
                out[(g, k)] = Reading.missing(_STATUS_OF_NVML.get(name, Status.ERROR), name)
            else:
                out[(g, k)] = Reading(float(metric.value) * CATALOG[k].nvml_scale)
        # swap: the new sample starts the next interval
        gpm.prev, gpm.spare, gpm.prev_t = gpm.spare, gpm.prev, t
        return False

    def _gpm_failed(self, dev: _Device, t: float, err: BaseException,
                    out: dict[tuple[int, str], Reading]) -> bool:
        status = status_of_nvml_error(err)
        if status is Status.GPU_LOST:
            return self._fail(dev, t, self._gpm_keys, err, out, "nvmlGpmSampleGet")
        reading = Reading.missing(status, _nvml_error_name(err))
        for k in self._gpm_keys:
            out[(dev.index, k)] = reading
        if status in _STICKY:
            dev.gpm.supported = reading
        return False

    def _drain_events(self) -> dict[int, float]:
        if self._events is None:
            return {}
        found: dict[int, float] = {}
        for _ in range(MAX_EVENTS_PER_TICK):
            try:
                data = self._call("nvmlEventSetWait", self._events, 0)
            except Exception as err:
                if not self._is_nvml_error(err):
                    raise
                break  # NVMLError_Timeout: nothing (more) queued; other errors: next tick
            index = self._by_address.get(_address(data.device))
            if index is not None:
                found[index] = float(data.eventData)
        return found

    # -- the loop -------------------------------------------------------------------------------
    @property
    def rate_hz(self) -> float:
        """Requested sampling rate. [Hz]"""
        return self._rate_hz

    def set_rate(self, rate_hz: float) -> None:
        """Set the sampling rate (takes effect at the next tick).

        Raises
        ------
        labkit.validate.InputError
            Unless 0 < rate_hz <= :data:`MAX_RATE_HZ`.
        """
        rate = validate.positive("rate_hz", rate_hz)
        self._rate_hz = validate.at_most("rate_hz", rate, MAX_RATE_HZ, "MAX_RATE_HZ")

    def run(self, ticks: int, *, rate_hz: float | None = None,
            sleep: Callable[[float], Any] = time.sleep,
            on_snapshot: Callable[[Snapshot], Any] | None = None) -> list[Snapshot]:
        """Sample ``ticks`` times in the calling thread, pacing with ``sleep``.

        The next tick starts one period after the previous one *started*, or at once if that
        one took longer (never two polls at once, no catch-up burst). Tests pass the virtual
        clock's ``lab.advance`` as ``sleep``.

        Raises
        ------
        labkit.validate.InputError
            For a bad ``ticks`` (0..100,000) or rate.
        """
        n = validate.integer("ticks", ticks, minimum=0)
        validate.at_most("ticks", n, 100_000, "100,000")
        if rate_hz is not None:
            self.set_rate(rate_hz)
        out: list[Snapshot] = []
        for i in range(n):
            tick_start = self.now()
            snap = self.poll()
            out.append(snap)
            if on_snapshot is not None:
                on_snapshot(snap)
            if i < n - 1:
                wait = tick_start + 1.0 / self._rate_hz - self.now()
                if wait > 0:
                    sleep(wait)
        return out

    @property
    def running(self) -> bool:
        """Whether the background thread is sampling."""
        return self._thread is not None and self._thread.is_alive()

    def start(self, rate_hz: float | None = None, *, max_run_s: float | None = 600.0,
              on_snapshot: Callable[[Snapshot], Any] | None = None) -> None:
        """Sample on a background (daemon) thread until :meth:`stop` or ``max_run_s``.

        Parameters
        ----------
        rate_hz : float, optional
            New rate (0 < rate <= :data:`MAX_RATE_HZ`). [Hz]
        max_run_s : float or None, default 600
            Stop by itself after this long (a forgotten dashboard does not poll forever);
            :attr:`stopped_reason` is then ``"max_run"``. None: until stopped. [s]
        on_snapshot : callable, optional
            Called on the sampler thread after each tick (a widget refresh). If it raises, the
            thread stops and :attr:`callback_error` keeps the exception.

        Starting a running sampler only changes its rate.
        """
        if rate_hz is not None:
            self.set_rate(rate_hz)
        if max_run_s is not None:
            validate.positive("max_run_s", max_run_s)
        if self.running:
            return
        self._stop.clear()
        self.stopped_reason = None
        self.callback_error = None
        thread = threading.Thread(target=self._loop, args=(max_run_s, on_snapshot),
                                  name="labkit-observe-sampler", daemon=True)
        self._thread = thread
        _RUNNING.add(self)
        thread.start()

    def _loop(self, max_run_s: float | None, on_snapshot: Callable[[Snapshot], Any] | None
              ) -> None:
        began = time.monotonic()
        try:
            while not self._stop.is_set():
                tick_start = time.monotonic()
                snap = self.poll()
                if on_snapshot is not None:
                    try:
                        on_snapshot(snap)
                    except Exception as err:  # a broken widget must not leave a zombie loop
                        self.callback_error = err
                        self.stopped_reason = "callback_error"
                        return
                now = time.monotonic()
                if max_run_s is not None and now - began >= max_run_s:
                    self.stopped_reason = "max_run"
                    return
                wait = tick_start + 1.0 / self._rate_hz - now
                if wait > 0 and self._stop.wait(wait):
                    break
            self.stopped_reason = "stopped"
        finally:
            _RUNNING.discard(self)

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop the background thread and wait (up to ``timeout_s``) for it to end."""
        thread = self._thread
        self._stop.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout_s)
        if thread is not None and not thread.is_alive():
            self._thread = None
        _RUNNING.discard(self)


def stop_all() -> None:
    """Stop every running sampler (at interpreter exit, and for tests)."""
    for sampler in list(_RUNNING):
        sampler.stop()


# --------------------------------------------------------------------------------------------
# Readers of operators' files
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UnparsedRow:
    """A line of a log that could not be read (kept, counted and shown, never dropped silently).

    Attributes
    ----------
    line : int
        1-based line number in the file.
    reason : str
        Why (English).
    text : str
        The line, cut to 120 characters.
    """

    line: int
    reason: str
    text: str


@dataclass(frozen=True)
class LogImport:
    """A log read into the tidy frame.

    Attributes
    ----------
    frame : pandas.DataFrame
        :data:`FRAME_COLUMNS`, sorted by time, GPU, metric.
    source : str
        File name (or ``"<text>"``).
    format : {"nvidia-smi-csv", "dcgm-exporter", "labkit-tidy"}
    rows : int
        Data lines read (parsed or not).
    unparsed : tuple of UnparsedRow
    start : datetime or None
        Wall-clock time of ``timestamp_s == 0`` when the log has timestamps.
    devices : mapping of int to mapping of str to str
        GPU index -> identity (``name``, ``uuid``, ``pci.bus_id``, ``modelName``, ...).
    ignored_fields : tuple of str
        Text fields that are not metrics (``pstate``, ``driver_version``, ...).
    metadata : mapping of str to str
        ``# key: value`` lines at the top of the file (source, as_of, ...).
    """

    frame: pd.DataFrame
    source: str
    format: str
    rows: int
    unparsed: tuple[UnparsedRow, ...] = ()
    start: datetime | None = None
    devices: Mapping[int, Mapping[str, str]] = field(default_factory=dict)
    ignored_fields: tuple[str, ...] = ()
    metadata: Mapping[str, str] = field(default_factory=dict)

    @property
    def unparsed_count(self) -> int:
        """Number of lines that could not be read."""
        return len(self.unparsed)


#: Most lines a log may have (a day at 1 Hz on 8 GPUs is 691,200; uploads are size-capped).
MAX_LOG_LINES = 1_000_000
#: If more than this share of the data lines cannot be read, the file is rejected.
MAX_UNPARSED_FRAC = 0.5

#: nvidia-smi tokens for a missing value -> status.
_SMI_MISSING = {
    "[n/a]": Status.NOT_AVAILABLE, "n/a": Status.NOT_AVAILABLE,
    "[not supported]": Status.NOT_SUPPORTED, "not supported": Status.NOT_SUPPORTED,
    "[unknown error]": Status.NOT_AVAILABLE, "[insufficient permissions]": Status.NO_PERMISSION,
    "[no permission]": Status.NO_PERMISSION, "[gpu is lost]": Status.GPU_LOST,
    "[gpu requires reset]": Status.GPU_LOST, "": Status.NOT_AVAILABLE,
}
#: Units nvidia-smi prints -> (labkit unit, factor).
_SMI_UNITS = {
    "%": ("frac", 0.01), "W": ("W", 1.0), "mW": ("W", 1e-3), "MiB": ("MiB", 1.0),
    "MB": ("MiB", 1.0), "GiB": ("MiB", 1024.0), "KiB": ("MiB", 1 / 1024), "MHz": ("MHz", 1.0),
    "C": ("degC", 1.0), "J": ("J", 1.0), "mJ": ("J", 1e-3), "KB/s": ("KB/s", 1.0),
}
_SMI_IDENTITY = ("index", "uuid", "pci.bus_id", "gpu_bus_id", "gpu_uuid")
_SMI_TIME_FORMATS = ("%Y/%m/%d %H:%M:%S.%f", "%Y/%m/%d %H:%M:%S", "%Y-%m-%d %H:%M:%S.%f",
                     "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S.%f", "%Y-%m-%dT%H:%M:%S",
                     "%a %b %d %H:%M:%S %Y")
_SMI_FLAGS = {"active": 1.0, "not active": 0.0, "yes": 1.0, "no": 0.0, "enabled": 1.0,
              "disabled": 0.0}
_HEADER_FIELD = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*(?:\[([^\]]*)\])?\s*$")
_NUMBER_UNIT = re.compile(r"^([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z%/]*)$")
_SMI_BY_FIELD: Mapping[str, Metric] = MappingProxyType(
    {m.smi_field: m for m in CATALOG.values() if m.smi_field})


def _where(source: str, line: int) -> str:
    return f"{source}, line {line}"


def _split_meta(lines: list[str]) -> tuple[dict[str, str], int]:
    """Return the leading ``# key: value`` metadata and the index of the first other line."""
    meta: dict[str, str] = {}
    i = 0
    while i < len(lines) and (lines[i].startswith("#") or not lines[i].strip()):
        text = lines[i].lstrip("#").strip()
        if ":" in text and not lines[i].startswith(("# HELP", "# TYPE")):
            key, _, value = text.partition(":")
            if re.fullmatch(r"[A-Za-z_][\w.-]*", key.strip()):
                meta[key.strip()] = value.strip()
        elif lines[i].startswith(("# HELP", "# TYPE")):
            break
        i += 1
    return meta, i


def _check_size(text: str, source: str) -> list[str]:
    if not isinstance(text, str):
        raise ValueError(f"{source}: expected text, got {type(text).__name__}")
    lines = text.splitlines()
    if len(lines) > MAX_LOG_LINES:
        raise ValueError(f"{source}: {len(lines):,} lines, more than {MAX_LOG_LINES:,}")
    return lines


def _parse_header(line: str, source: str, lineno: int) -> list[tuple[str, str | None]]:
    fields = []
    for cell in next(csv.reader([line], skipinitialspace=True)):
        match = _HEADER_FIELD.match(cell)
        if not match:
            raise ValueError(f"{_where(source, lineno)}: not an nvidia-smi CSV header "
                             f"(field {cell.strip()[:40]!r})")
        fields.append((match.group(1), match.group(2)))
    return fields


def _looks_like_header(line: str) -> bool:
    cells = [c.strip() for c in line.split(",")]
    return bool(cells) and all(_HEADER_FIELD.match(c) for c in cells) and any(
        "." in c or c in ("timestamp", "index", "name", "uuid", "pstate") for c in cells)


def _parse_time(text: str) -> datetime | None:
    for fmt in _SMI_TIME_FORMATS:
        try:
            return datetime.strptime(text.strip(), fmt)
        except ValueError:
            continue
    return None


def _smi_value(raw: str, field_name: str, header_unit: str | None
               ) -> tuple[str, float | None, Status, str | None, str]:
    """Return (metric, value, status, reason, unit) for one cell; raise ValueError if garbage."""
    metric = _SMI_BY_FIELD.get(SMI_ALIASES.get(field_name, field_name))
    key = metric.key if metric else field_name
    token = raw.strip()
    missing = _SMI_MISSING.get(token.lower())
    if missing is not None:
        return key, None, missing, token or "empty", metric.unit if metric else ""
    if metric is not None and metric.unit == "bitmask":
        try:
            return key, float(int(token, 16 if token.lower().startswith("0x") else 10)), \
                Status.OK, None, "bitmask"
        except ValueError:
            raise ValueError(f"{field_name}: not a bitmask: {token[:30]!r}") from None
    flag = _SMI_FLAGS.get(token.lower())
    if flag is not None:
        return key, flag, Status.OK, None, metric.unit if metric else "flag"
    match = _NUMBER_UNIT.match(token)
    if not match:
        raise ValueError(f"{field_name}: not a number: {token[:30]!r}")
    number, unit = float(match.group(1)), match.group(2) or (header_unit or "")
    if header_unit and match.group(2) and match.group(2) != header_unit:
        raise ValueError(f"{field_name}: unit {match.group(2)!r} but the header says "
                         f"{header_unit!r}")
    if metric is None:
        target, factor = _SMI_UNITS.get(unit, (unit, 1.0))
        return key, number * factor, Status.OK, None, target
    if unit == "" and metric.unit in ("degC", "count", "flag", "bitmask", "xid"):
        return key, number, Status.OK, None, metric.unit
    if unit == "" and metric.smi_unit:  # nounits without the header's unit: nvidia-smi's unit
        unit = metric.smi_unit
    target, factor = _SMI_UNITS.get(unit, ("", 0.0))
    if target != metric.unit:
        raise ValueError(f"{field_name}: unit {unit!r} does not fit {metric.unit}")
    return key, number * factor, Status.OK, None, metric.unit


def parse_nvidia_smi_csv(text: str, *, source: str = "<text>",
                         fields: Sequence[str] | str | None = None,
                         strict: bool = False) -> LogImport:
    """Read an ``nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]`` log.

    Handles: units in the header (``power.draw [W]``) or in the values (``250.00 W``),
    ``nounits``, ``[N/A]`` / ``[Not Supported]`` / ``[GPU is lost]`` cells (missing readings
    with that reason), several GPUs per timestamp (told apart by ``index``, ``uuid`` or
    ``pci.bus_id``; without those, all rows are GPU 0), nvidia-smi's timestamp formats
    (``2024/06/01 11:27:05.177``), any field subset and order, header lines repeated by
    concatenated runs, and leading ``# key: value`` metadata lines (labkit's data files).

    Parameters
    ----------
    text : str
        The file's content.
    source : str
        File name for messages.
    fields : sequence of str or str, optional
        The ``--query-gpu`` list, for a ``noheader`` log (``"timestamp,index,utilization.gpu"``).
    strict : bool, default False
        Raise at the first row that cannot be read instead of counting it.

    Returns
    -------
    LogImport
        Known fields become :data:`CATALOG` metrics in labkit units (``utilization.gpu`` ->
        ``gpu_util_frac`` 0-1, ``power.draw`` -> ``power_usage_w``); other numeric fields keep
        their nvidia-smi name; text fields are listed in ``ignored_fields``.

    Raises
    ------
    ValueError
        Naming the file and line: an empty file, no header (and no ``fields``), an unknown
        layout, a row with the wrong number of cells or a bad value when ``strict``, more than
        half the rows unreadable, or more than :data:`MAX_LOG_LINES` lines.

    Used in: notebooks/01_observe.ipynb
    """
    lines = _check_size(text, source)
    meta, i = _split_meta(lines)
    if i >= len(lines):
        raise ValueError(f"{_where(source, max(1, i))}: no data (empty nvidia-smi log)")
    header_line = lines[i]
    header_text: str | None = header_line.strip()
    if fields is not None:
        names = fields.split(",") if isinstance(fields, str) else list(fields)
        header = _parse_header(",".join(n.strip() for n in names), source, i + 1)
        if _looks_like_header(header_line):  # a header after all: trust the file
            header = _parse_header(header_line, source, i + 1)
            i += 1
        else:
            header_text = None
    else:
        if not _looks_like_header(header_line):
            raise ValueError(
                f"{_where(source, i + 1)}: no nvidia-smi CSV header (a 'noheader' log needs the "
                f"--query-gpu field list: fields=...); line starts {header_line[:60]!r}")
        header = _parse_header(header_line, source, i + 1)
        i += 1
    names_only = [n for n, _ in header]
    if len(set(names_only)) != len(names_only):
        raise ValueError(f"{_where(source, i)}: a field appears twice in the header")
    time_col = names_only.index("timestamp") if "timestamp" in names_only else None
    id_col = next((names_only.index(n) for n in _SMI_IDENTITY if n in names_only), None)
    id_kind = names_only[id_col] if id_col is not None else None
    text_fields = {"name", "driver_version", "pstate", "uuid", "pci.bus_id", "serial",
                   "vbios_version", "compute_mode", "persistence_mode", "gpu_name", "gpu_uuid",
                   "gpu_bus_id", "display_mode", "display_active", "mig.mode.current",
                   "mig.mode.pending", "timestamp", "index", "power.management",
                   "accounting.mode", "count"}
    rows: list[tuple[Any, ...]] = []
    unparsed: list[UnparsedRow] = []
    devices: dict[int, dict[str, str]] = {}
    id_map: dict[str, int] = {}
    ignored: set[str] = set()
    times: list[datetime | None] = []
    data_lines = 0
    seq = 0  # row order, the clock when there is no timestamp column
    for lineno in range(i + 1, len(lines) + 1):
        raw = lines[lineno - 1]
        if not raw.strip() or raw.startswith("#"):
            continue
        if (header_text is not None and raw.strip() == header_text) or (
                fields is None and _looks_like_header(raw)):
            continue  # a header repeated by a concatenated run
        data_lines += 1
        try:
            cells = next(csv.reader([raw], skipinitialspace=True))
            if len(cells) != len(header):
                raise ValueError(f"{len(cells)} cells, the header has {len(header)}")
            stamp: datetime | None = None
            if time_col is not None:
                stamp = _parse_time(cells[time_col])
                if stamp is None:
                    raise ValueError(f"timestamp not in an nvidia-smi format: "
                                     f"{cells[time_col].strip()[:30]!r}")
            values = []
            for (name, unit), cell in zip(header, cells, strict=True):
                if name in text_fields:
                    continue
                try:
                    values.append(_smi_value(cell, name, unit))
                except ValueError:
                    if name in _SMI_BY_FIELD or SMI_ALIASES.get(name) in _SMI_BY_FIELD:
                        raise
                    ignored.add(name)  # a text field labkit does not know (e.g. a mode)
            ident = cells[id_col].strip() if id_col is not None else "0"
        except ValueError as err:
            if strict:
                raise ValueError(f"{_where(source, lineno)}: {err}") from None
            unparsed.append(UnparsedRow(lineno, str(err), raw[:120]))
            continue
        if id_kind == "index":
            try:
                gpu = int(ident)
            except ValueError:
                if strict:
                    raise ValueError(f"{_where(source, lineno)}: index {ident!r} is not an "
                                     f"integer") from None
                unparsed.append(UnparsedRow(lineno, f"index {ident!r} is not an integer",
                                            raw[:120]))
                continue
        else:
            gpu = id_map.setdefault(ident, len(id_map))
        info = devices.setdefault(gpu, {})
        for key in ("name", "uuid", "pci.bus_id", "driver_version", "gpu_name", "gpu_uuid"):
            if key in names_only and key not in info:
                info[key] = cells[names_only.index(key)].strip()
        times.append(stamp)
        for metric, value, status, reason, unit in values:
            rows.append((seq, stamp, gpu, metric, value, unit, status, reason))
        seq += 1
    ignored |= {n for n in names_only if n in text_fields and n not in
                ("timestamp", "index", "uuid", "pci.bus_id", "name")}
    return _finish(rows, unparsed, data_lines, source, "nvidia-smi-csv", devices,
                   tuple(sorted(ignored)), meta,
                   time_mode="stamp" if time_col is not None else "seq",
                   interval_s=_meta_interval(meta, source))


def _meta_interval(meta: Mapping[str, str], source: str) -> float:
    raw = meta.get("interval_s")
    if raw is None:
        return 1.0
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{source}: metadata interval_s is not a number: {raw!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{source}: metadata interval_s must be > 0, got {raw!r}")
    return value


def _finish(rows: list[tuple[Any, ...]], unparsed: list[UnparsedRow], data_lines: int,
            source: str, fmt: str, devices: Mapping[int, Mapping[str, str]],
            ignored: tuple[str, ...], meta: Mapping[str, str], *, time_mode: str,
            interval_s: float = 1.0) -> LogImport:
    """Build the LogImport from rows ``(t, stamp, gpu, metric, value, unit, status, reason)``.

    ``time_mode``: ``"stamp"`` (seconds from the earliest datetime ``stamp``), ``"seq"``
    (``t`` is a row/scrape number, times ``interval_s``), ``"epoch"`` (``t`` in seconds since
    the epoch; rebased to the first).
    """
    if data_lines == 0:
        raise ValueError(f"{source}: no data rows")
    if len(unparsed) > MAX_UNPARSED_FRAC * data_lines or not rows:
        first = unparsed[0] if unparsed else None
        where = _where(source, first.line) if first else source
        raise ValueError(f"{where}: {len(unparsed)} of {data_lines} data rows cannot be read "
                         f"(unknown layout?); first problem: "
                         f"{first.reason if first else 'no values'}")
    frame = pd.DataFrame(rows, columns=["t", "stamp", "gpu", "metric", "value", "unit",
                                        "status", "reason"])
    start: datetime | None = None
    if time_mode == "stamp":
        start = min(frame["stamp"])
        seconds = [(s - start).total_seconds() for s in frame["stamp"]]
        # one tick's GPUs are printed a few ms apart: each row keeps its own time
        frame["timestamp_s"] = np.round(np.asarray(seconds, dtype=float), 3)
    elif time_mode == "epoch":
        first_s = float(frame["t"].min())
        start = datetime.fromtimestamp(first_s)
        frame["timestamp_s"] = np.round(frame["t"].astype(float) - first_s, 3)
    else:
        frame["timestamp_s"] = frame["t"].astype(float) * interval_s
    frame["value"] = frame["value"].astype(float)
    frame["status"] = [str(s) for s in frame["status"]]
    frame["reason"] = frame["reason"].fillna("").astype(str)
    frame["gpu"] = frame["gpu"].astype(int)
    frame = frame.sort_values(["timestamp_s", "gpu", "metric"], kind="stable")
    frame = frame[list(FRAME_COLUMNS)].reset_index(drop=True)
    return LogImport(frame, source, fmt, data_lines, tuple(unparsed), start,
                     MappingProxyType({g: MappingProxyType(dict(v)) for g, v in devices.items()}),
                     ignored, MappingProxyType(dict(meta)))


# dcgm-exporter (Prometheus text exposition format) ------------------------------------------

#: DCGM blank sentinels (``dcgm_structs.h``): DCGM_INT64_BLANK = 0x7ffffffffffffff0 and the
#: values after it; DCGM_FP64_BLANK = 140737488355328.0 and after it.
_DCGM_INT64_BLANK = 0x7FFFFFFFFFFFFFF0
_DCGM_FP64_BLANK = 140737488355328.0
_DCGM_BLANK_STATUS = {0: (Status.NOT_AVAILABLE, "DCGM blank"),
                      1: (Status.NOT_AVAILABLE, "DCGM not found"),
                      2: (Status.NOT_SUPPORTED, "DCGM not supported"),
                      3: (Status.NO_PERMISSION, "DCGM no permission")}
_DCGM_BY_FIELD: Mapping[str, Metric] = MappingProxyType(
    {m.dcgm_field: m for m in CATALOG.values() if m.dcgm_field})
#: DCGM 4.6.0 renamed fields, keeping the old names as aliases (``dcgm_fields.h``).
DCGM_ALIASES: Mapping[str, str] = MappingProxyType({
    "DCGM_FI_DEV_GPU_UTIL_RATIO": "DCGM_FI_DEV_GPU_UTIL",
    "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS": "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
    "DCGM_EXP_XID_ERRORS_COUNT": "DCGM_EXP_XID_ERRORS_COUNT",
})
_PROM_SAMPLE = re.compile(
    r"^([A-Za-z_:][A-Za-z0-9_:]*)\s*(\{(.*)\})?\s+(\S+)(?:\s+(-?\d+))?\s*$")
_PROM_LABEL = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(?:,|$)')
_DCGM_IDENTITY_LABELS = ("UUID", "modelName", "pci_bus_id", "device", "Hostname",
                         "DCGM_FI_DRIVER_VERSION")


def _labels(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    pos = 0
    text = text.strip()
    while pos < len(text):
        match = _PROM_LABEL.match(text, pos)
        if not match:
            raise ValueError(f"bad label list near {text[pos:pos + 30]!r}")
        out[match.group(1)] = match.group(2).replace('\\"', '"').replace("\\\\", "\\")
        pos = match.end()
    return out


def _dcgm_value(raw: str) -> tuple[float | None, Status, str | None]:
    if raw in ("NaN", "+Inf", "-Inf"):
        return None, Status.NOT_AVAILABLE, raw
    value = float(raw)
    if value >= _DCGM_INT64_BLANK - 0.5 and raw.lstrip("+").isdigit():
        offset = int(raw) - _DCGM_INT64_BLANK
        status, reason = _DCGM_BLANK_STATUS.get(offset, (Status.NOT_AVAILABLE, "DCGM blank"))
        return None, status, f"{reason} ({raw})"
    if value >= _DCGM_FP64_BLANK:
        status, reason = _DCGM_BLANK_STATUS.get(int(value - _DCGM_FP64_BLANK),
                                                (Status.NOT_AVAILABLE, "DCGM blank"))
        return None, status, f"{reason} ({raw})"
    return value, Status.OK, None


def read_dcgm_exporter(text: str, *, source: str = "<text>", interval_s: float | None = None,
                       strict: bool = False) -> LogImport:
    """Read dcgm-exporter's Prometheus text (one scrape, or several concatenated).

    Each sample ``DCGM_FI_...{gpu="0",UUID="GPU-...",modelName="...",...} value [ms]`` becomes
    a row. Known fields become :data:`CATALOG` metrics (DCGM profiling fields are already 0-1
    ratios; ``DCGM_FI_DEV_GPU_UTIL`` is percent -> /100; power stays in W; energy mJ -> J);
    unknown ones keep their DCGM name. DCGM blank sentinels (``9223372036854775794`` = "not
    supported") become missing readings with that reason, never huge numbers.

    Time: the sample's own timestamp (ms) when present; otherwise each repeated series starts a
    new scrape, ``interval_s`` apart (argument, else a ``# interval_s: N`` metadata line, else
    dcgm-exporter's default collect interval of 30 s).

    Parameters
    ----------
    text : str
        The scrape(s).
    source : str
        File name for messages.
    interval_s : float, optional
        Seconds between concatenated scrapes. [s]
    strict : bool, default False
        Raise at the first bad line instead of counting it.

    Returns
    -------
    LogImport

    Raises
    ------
    ValueError
        Naming the file and line: no samples, a sample without a ``gpu`` label or with a bad
        value (when ``strict``), more than half the lines unreadable.

    References
    ----------
    .. [1] dcgm-exporter README and ``pkg/cmd/app.go`` (collect interval 30000 ms), d5e5f51.
    .. [2] DCGM 4.6.0 ``dcgm_structs.h`` (blank values), ``dcgm_fields.h`` (fields, units).

    Used in: notebooks/01_observe.ipynb
    """
    lines = _check_size(text, source)
    meta, _ = _split_meta(lines)
    if interval_s is None:
        interval_s = _meta_interval(meta, source) if "interval_s" in meta else 30.0
    interval = validate.positive("interval_s", interval_s)
    rows: list[tuple[Any, ...]] = []
    unparsed: list[UnparsedRow] = []
    devices: dict[int, dict[str, str]] = {}
    seen: set[tuple[str, int, tuple[tuple[str, str], ...]]] = set()
    scrape = 0
    data_lines = 0
    stamped = 0
    for lineno, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        data_lines += 1
        try:
            match = _PROM_SAMPLE.match(line)
            if not match:
                raise ValueError("not a Prometheus sample line")
            name, labels_text, value_text, stamp_text = (match.group(1), match.group(3),
                                                          match.group(4), match.group(5))
            labels = _labels(labels_text or "")
            if "gpu" not in labels:
                raise ValueError(f"{name}: no gpu label")
            try:
                gpu = int(labels["gpu"])
            except ValueError:
                raise ValueError(f"{name}: gpu label {labels['gpu']!r} is not an integer") \
                    from None
            try:
                value, status, reason = _dcgm_value(value_text)
            except ValueError:
                raise ValueError(f"{name}: value {value_text[:30]!r} is not a number") from None
        except ValueError as err:
            if strict:
                raise ValueError(f"{_where(source, lineno)}: {err}") from None
            unparsed.append(UnparsedRow(lineno, str(err), raw[:120]))
            continue
        key_labels = tuple(sorted((k, v) for k, v in labels.items()
                                  if k not in ("gpu", *_DCGM_IDENTITY_LABELS)))
        series = (name, gpu, key_labels)
        if series in seen:
            scrape += 1
            seen.clear()
        seen.add(series)
        info = devices.setdefault(gpu, {})
        for label in _DCGM_IDENTITY_LABELS:
            if label in labels and label not in info:
                info[label] = labels[label]
        metric = _DCGM_BY_FIELD.get(DCGM_ALIASES.get(name, name))
        if metric is not None and value is not None:
            value *= metric.dcgm_scale
        if stamp_text is not None:
            stamped += 1
            t: float = int(stamp_text) / 1000.0
        else:
            t = float(scrape)
        rows.append((t, None, gpu, metric.key if metric else name, value,
                     metric.unit if metric else "", status, reason))
    if 0 < stamped < len(rows):
        raise ValueError(f"{source}: {stamped} of {len(rows)} samples carry a timestamp; "
                         "a scrape file needs all or none")
    return _finish(rows, unparsed, data_lines, source, "dcgm-exporter", devices, (), meta,
                   time_mode="epoch" if stamped else "seq", interval_s=interval)


# labkit's own tidy CSV ----------------------------------------------------------------------

def export_csv(frame: pd.DataFrame, *, source: str, as_of: str,
               extra: Mapping[str, str] | None = None) -> str:
    """Return a tidy frame as CSV text, with ``# source`` / ``# as_of`` lines (a data file).

    Parameters
    ----------
    frame : pandas.DataFrame
        With :data:`FRAME_COLUMNS`.
    source : str
        Where the readings came from (GPU, driver, tool). Written as ``# source:``.
    as_of : str
        Date of the recording (ISO). Written as ``# as_of:``.
    extra : mapping, optional
        More ``# key: value`` lines (gpu, driver, rate_hz, ...).

    Raises
    ------
    ValueError
        If a column is missing, or a metadata value holds a line break.

    Used in: notebooks/01_observe.ipynb
    """
    missing = [c for c in FRAME_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"frame lacks columns {missing}")
    meta = {"source": source, "as_of": as_of, **dict(extra or {})}
    buf = io.StringIO()
    for key, value in meta.items():
        if "\n" in str(value) or "\r" in str(value) or not re.fullmatch(r"[A-Za-z_][\w.-]*", key):
            raise ValueError(f"bad metadata {key!r}: {value!r}")
        buf.write(f"# {key}: {value}\n")
    out = frame[list(FRAME_COLUMNS)].copy()
    out["value"] = [("" if not np.isfinite(v) else repr(float(v))) for v in out["value"]]
    out.to_csv(buf, index=False, lineterminator="\n")
    return buf.getvalue()


def parse_tidy_csv(text: str, *, source: str = "<text>") -> LogImport:
    """Read a tidy CSV written by :func:`export_csv` (labkit's trace files).

    Raises
    ------
    ValueError
        Naming the file and line: missing columns, a bad number, an unknown status.

    Used in: notebooks/01_observe.ipynb
    """
    lines = _check_size(text, source)
    meta, i = _split_meta(lines)
    if i >= len(lines):
        raise ValueError(f"{source}: no header")
    header = [c.strip() for c in next(csv.reader([lines[i]]))]
    if header != list(FRAME_COLUMNS):
        raise ValueError(f"{_where(source, i + 1)}: header must be {','.join(FRAME_COLUMNS)}")
    rows: list[tuple[Any, ...]] = []
    statuses = {str(s) for s in Status}
    devices: dict[int, dict[str, str]] = {}
    for lineno in range(i + 2, len(lines) + 1):
        raw = lines[lineno - 1]
        if not raw.strip():
            continue
        cells = next(csv.reader([raw]))
        try:
            if len(cells) != len(FRAME_COLUMNS):
                raise ValueError(f"{len(cells)} cells, expected {len(FRAME_COLUMNS)}")
            t, gpu = float(cells[0]), int(cells[1])
            value = float(cells[3]) if cells[3] else math.nan
            if cells[5] not in statuses:
                raise ValueError(f"unknown status {cells[5]!r}")
            if not math.isfinite(t) or gpu < 0:
                raise ValueError("timestamp_s must be finite and gpu >= 0")
        except ValueError as err:
            raise ValueError(f"{_where(source, lineno)}: {err}") from None
        devices.setdefault(gpu, {})
        rows.append((t, gpu, cells[2], value, cells[4], cells[5], cells[6]))
    if not rows:
        raise ValueError(f"{source}: no data rows")
    frame = pd.DataFrame(rows, columns=list(FRAME_COLUMNS))
    return LogImport(frame, source, "labkit-tidy", len(rows), (), None,
                     MappingProxyType({g: MappingProxyType(v) for g, v in devices.items()}),
                     (), MappingProxyType(dict(meta)))


def detect_format(text: str) -> str:
    """Return ``"dcgm-exporter"``, ``"labkit-tidy"`` or ``"nvidia-smi-csv"`` for a log's text.

    Raises
    ------
    ValueError
        If it is none of them (no ``DCGM_`` samples, no CSV header, no data).
    """
    lines = text.splitlines()
    _, i = _split_meta(lines)
    body = [ln for ln in lines[i:i + 200] if ln.strip()]
    if not body:
        raise ValueError("empty log")
    if any(ln.lstrip().startswith(("DCGM_", "# HELP DCGM_", "# TYPE DCGM_")) for ln in body):
        return "dcgm-exporter"
    first = body[0].strip()
    if [c.strip() for c in first.split(",")] == list(FRAME_COLUMNS):
        return "labkit-tidy"
    if _looks_like_header(first) or _parse_time(first.split(",")[0]) is not None:
        return "nvidia-smi-csv"
    raise ValueError(f"unknown log layout: first line {first[:60]!r} is neither an nvidia-smi "
                     "CSV header nor a dcgm-exporter sample")


def read_log(text: str, *, source: str = "<text>", fields: Sequence[str] | str | None = None
             ) -> LogImport:
    """Read a log of any supported format (:func:`detect_format`).

    Raises
    ------
    ValueError
        Naming the file (and line): unknown layout, or the reader's own errors.

    Used in: notebooks/01_observe.ipynb
    """
    try:
        fmt = detect_format(text)
    except ValueError as err:
        raise ValueError(f"{source}, line 1: {err}") from None
    if fmt == "dcgm-exporter":
        return read_dcgm_exporter(text, source=source)
    if fmt == "labkit-tidy":
        return parse_tidy_csv(text, source=source)
    return parse_nvidia_smi_csv(text, source=source, fields=fields)


# --------------------------------------------------------------------------------------------
# Replay
# --------------------------------------------------------------------------------------------


class Trace:
    """A tidy frame indexed for replay: the value of every metric of a GPU at time t.

    Parameters
    ----------
    frame : pandas.DataFrame
        :data:`FRAME_COLUMNS` (from a reader or :meth:`History.frame`).

    Raises
    ------
    ValueError
        If columns are missing or the frame is empty.
    """

    def __init__(self, frame: pd.DataFrame) -> None:
        missing = [c for c in FRAME_COLUMNS if c not in frame.columns]
        if missing:
            raise ValueError(f"frame lacks columns {missing}")
        if frame.empty:
            raise ValueError("empty trace")
        self.frame = frame.sort_values(["timestamp_s", "gpu", "metric"], kind="stable")
        self.times = np.unique(self.frame["timestamp_s"].to_numpy(dtype=float))
        self.gpus = tuple(int(g) for g in sorted(self.frame["gpu"].unique()))
        self.metrics = tuple(sorted(self.frame["metric"].unique()))
        self._by: dict[tuple[int, str], tuple[np.ndarray, list[Reading]]] = {}
        for (g, m), part in self.frame.groupby(["gpu", "metric"], sort=False):
            readings = [
                Reading(None if not np.isfinite(v) else float(v), Status(s), r or None)
                if s != "ok" or np.isfinite(v) else
                Reading.missing(Status.NOT_AVAILABLE, r or "empty")
                for v, s, r in zip(part["value"], part["status"], part["reason"], strict=True)]
            self._by[(int(g), str(m))] = (part["timestamp_s"].to_numpy(dtype=float), readings)

    @property
    def duration_s(self) -> float:
        """Time from the first to the last reading. [s]"""
        return float(self.times[-1] - self.times[0])

    def view(self, gpu: int, t_s: float) -> dict[str, Reading]:
        """Return the latest reading of every metric of ``gpu`` at or before ``t_s``."""
        out: dict[str, Reading] = {}
        for (g, m), (times, readings) in self._by.items():
            if g != gpu:
                continue
            k = int(np.searchsorted(times, t_s, side="right")) - 1
            if k >= 0:
                out[m] = readings[k]
        return out

    def series(self, gpu: int, metric: str) -> pd.Series:
        """Return one metric of one GPU over time (NaN where missing)."""
        item = self._by.get((gpu, metric))
        if item is None:
            return pd.Series([], dtype=float, name=metric)
        times, readings = item
        return pd.Series([np.nan if r.value is None else r.value for r in readings],
                         index=pd.Index(times, name="timestamp_s"), name=metric)

    def summary(self, gpu: int, metrics: Sequence[str],
                segments: Sequence[tuple[str, float, float]]) -> pd.DataFrame:
        """Return the mean of ``metrics`` per named time segment ``(name, start_s, end_s)``.

        Raises
        ------
        ValueError
            For a segment with end <= start.
        """
        rows = []
        for name, start, end in segments:
            if not end > start:
                raise ValueError(f"segment {name!r}: end must be > start")
            row: dict[str, Any] = {"segment": name}
            for m in metrics:
                s = self.series(gpu, m)
                part = s[(s.index >= start) & (s.index < end)]
                row[m] = float(part.mean()) if part.notna().any() else math.nan
            rows.append(row)
        return pd.DataFrame(rows).set_index("segment")
