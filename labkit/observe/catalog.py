"""The lesson 01 metric catalog: each metric's NVML call, DCGM field, nvidia-smi name and unit.

Sources: see :mod:`labkit.observe`.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import pandas as pd

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
    # the limit an administrator set (nvidia-smi -pl): the enforced one when a log has only
    # this (the common --query-gpu field; issue 16); a log with both keeps enforced.power.limit
    "power.limit": "enforced.power.limit",
})

#: DCGM 4.6.0 renamed fields, keeping the old names as aliases (``dcgm_fields.h``).
DCGM_ALIASES: Mapping[str, str] = MappingProxyType({
    "DCGM_FI_DEV_GPU_UTIL_RATIO": "DCGM_FI_DEV_GPU_UTIL",
    "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS": "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
    "DCGM_EXP_XID_ERRORS_COUNT": "DCGM_EXP_XID_ERRORS_COUNT",
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


