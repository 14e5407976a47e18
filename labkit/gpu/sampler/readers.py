"""What the sampler reads and how: the NVML reader table, field values, GPM ids, per-GPU state.

No thread and no clock here; :mod:`labkit.gpu.sampler.poller` calls these.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from labkit.observe.catalog import CATALOG
from labkit.observe.readings import (
    Reading,
)

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




def _address(handle: Any) -> int | None:
    """Return the address a device handle points at (handles of one GPU compare equal)."""
    try:
        return ctypes.cast(handle, ctypes.c_void_p).value
    except (TypeError, ctypes.ArgumentError):
        return None

