"""The simulated libnvidia-ml's ground floor: ctypes out-parameter helpers, handle resolution.

:class:`NvmlBase` declares the attributes the lab sets and resolves opaque handles to the
simulator's objects; the C functions are its subclasses in this package.

Used in: lessons 01 (observation) and 02 (MIG), through labkit.gpu
"""

from __future__ import annotations

import ctypes
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pynvml as N

from labkit.gpu.sim.device import (
    ComputeInstance,
    GpuInstance,
    Handle,
    MigDevice,
    NvmlReturn,
    SimDevice,
)
from labkit.gpu.sim.device import out_param as _out
from labkit.gpu.sim.device import scalar_arg as _v
from labkit.mig import placement as P

_c_void_p = ctypes.c_void_p
#: Functions that work before nvmlInit (as in the real library).
NO_INIT_FUNCTIONS = frozenset({"nvmlInitWithFlags", "nvmlInit_v2", "nvmlInit", "nvmlErrorString"})

_ERROR_STRINGS = {code: text.encode() for code, text in N.NVMLError._errcode_to_string.items()}
_ERROR_STRINGS[N.NVML_SUCCESS] = b"Success"
_ERROR_STRINGS[N.NVML_ERROR_IN_USE] = b"In use by another client"
_ERROR_STRINGS[N.NVML_ERROR_INSUFFICIENT_RESOURCES] = b"Insufficient Resources"
_ERROR_STRINGS[N.NVML_ERROR_NO_DATA] = b"No data"
_ERROR_STRINGS[N.NVML_ERROR_ARGUMENT_VERSION_MISMATCH] = b"Argument version mismatch"

_GPM_METRICS = {  # NVML_GPM_METRIC_* -> activity channel (percent metrics)
    N.NVML_GPM_METRIC_GRAPHICS_UTIL: "kernel", N.NVML_GPM_METRIC_SM_UTIL: "sm_active",
    N.NVML_GPM_METRIC_SM_OCCUPANCY: "sm_occupancy",
    N.NVML_GPM_METRIC_INTEGER_UTIL: "integer_active",
    N.NVML_GPM_METRIC_ANY_TENSOR_UTIL: "tensor_active",
    N.NVML_GPM_METRIC_HMMA_TENSOR_UTIL: "tensor_active",
    N.NVML_GPM_METRIC_DRAM_BW_UTIL: "dram_active", N.NVML_GPM_METRIC_FP64_UTIL: "fp64_active",
    N.NVML_GPM_METRIC_FP32_UTIL: "fp32_active", N.NVML_GPM_METRIC_FP16_UTIL: "fp16_active",
}
# DMMA (FP64 tensor) is named from nvidia-ml-py 13.590 on; older releases lack the constant
_GPM_ZERO = {N.NVML_GPM_METRIC_DFMA_TENSOR_UTIL, N.NVML_GPM_METRIC_IMMA_TENSOR_UTIL,
             *([N.NVML_GPM_METRIC_DMMA_TENSOR_UTIL]
               if hasattr(N, "NVML_GPM_METRIC_DMMA_TENSOR_UTIL") else []),
             *range(N.NVML_GPM_METRIC_NVDEC_0_UTIL, N.NVML_GPM_METRIC_NVDEC_7_UTIL + 1),
             *range(N.NVML_GPM_METRIC_NVJPG_0_UTIL, N.NVML_GPM_METRIC_NVJPG_7_UTIL + 1),
             N.NVML_GPM_METRIC_NVOFA_0_UTIL}
_GPM_RATES = {  # MiB/s metrics -> channel in KB/s
    N.NVML_GPM_METRIC_PCIE_TX_PER_SEC: "pcie_tx_kbps", N.NVML_GPM_METRIC_PCIE_RX_PER_SEC:
    "pcie_rx_kbps", N.NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC: "nvlink_tx_kbps",
    N.NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC: "nvlink_rx_kbps",
}
_EVENTS_SUPPORTED = (N.nvmlEventTypeXidCriticalError | N.nvmlEventTypePState
                     | N.nvmlEventTypeClock)
_EVENTS_ECC = N.nvmlEventTypeSingleBitEccError | N.nvmlEventTypeDoubleBitEccError


def _put_handle(ref: Any, obj: Any) -> None:
    _c_void_p.from_buffer(_out(ref)).value = obj._addr


def _put_handles(buf: Any, count_ref: Any, objs: list[Any]) -> int:
    """Write ``objs``' handles into an NVML handle array; INSUFFICIENT_SIZE if it is too small.

    NVML's ``...GetGpuInstances`` / ``...GetComputeInstances`` contract: ``count`` is always set
    to the number found; a NULL array is INVALID_ARGUMENT.
    """
    if buf is None:
        return N.NVML_ERROR_INVALID_ARGUMENT
    arr = _out(buf)
    size = len(arr) if hasattr(arr, "__len__") else 1
    _out(count_ref).value = len(objs)
    if len(objs) > size:
        return N.NVML_ERROR_INSUFFICIENT_SIZE
    for i, obj in enumerate(objs):
        _c_void_p.from_buffer(arr, i * ctypes.sizeof(_c_void_p)).value = obj._addr
    return N.NVML_SUCCESS


def _put_str(buf: Any, size: Any, text: str) -> None:
    data = text.encode()
    if buf is None:
        raise NvmlReturn(N.NVML_ERROR_INVALID_ARGUMENT)
    if len(data) + 1 > _v(size):
        raise NvmlReturn(N.NVML_ERROR_INSUFFICIENT_SIZE)
    buf.value = data


def _ci_size(gi: GpuInstance, ci: P.CiProfile) -> int:
    """Placement size a CI reports.

    The full CI spans the GI's slots: a real H100 ``-lci`` shows ``0:4`` for the 3g.40gb CI
    and ``0:2`` for 2g.20gb (8 memory units over 7 compute slices). On a board whose memory
    units are a whole multiple of its compute slices the slots are compute slices: RTX PRO
    6000's full 1g CI lists as ``0:1`` (data/gpus/RTX-PRO-6000.yaml ``sim_behaviour``).
    Smaller CIs report their compute slices (**inferred** beyond those captures).
    """
    if ci.slices != gi.profile.compute_slices:
        return ci.slices
    mig = gi.device.model.mig
    if mig is not None and mig.memory_units % mig.compute_slices == 0:
        return gi.profile.memory_slices // (mig.memory_units // mig.compute_slices)
    return gi.profile.memory_slices


@dataclass(eq=False)
class EventSet(Handle):
    """An ``nvmlEventSet_t``: registrations and the queue of events not yet read."""

    registrations: dict[int, int] = field(default_factory=dict)  # device index -> mask
    queue: deque[tuple[int, int, int]] = field(default_factory=deque)  # (device, type, data)


@dataclass(eq=False)
class GpmSample(Handle):
    """An ``nvmlGpmSample_t``: a snapshot of the cumulative activity integrals."""

    device_index: int | None = None
    gpu_instance_id: int | None = None
    t_s: float = 0.0
    cum: list[float] = field(default_factory=list)


class NvmlBase:
    """What the C functions share: the lab's attributes and hooks, and handle resolution.

    The attributes used here (``devices``, ``now()``, ``driver_version``, ...) are set by the
    lab; see that class for the control API.
    """

    devices: list[SimDevice]
    driver_version: str
    cuda_driver_version: int
    mig_rights: bool
    reset_possible: bool
    legacy_mig_queries: bool
    _handles: dict[int, Any]
    _lock: threading.RLock
    _cond: threading.Condition
    _init_count: int
    _init_error: int | None
    _event_sets: list[EventSet]
    _process_names: dict[int, str]
    _field_faults: dict[tuple[int | None, int], int]
    # from labkit.gpu.sim.tools_api.ToolsApi (the lab mixes in both)
    nvlink_field: Callable[[SimDevice, int, int], tuple[int, float] | int]
    nvlink_scale: Callable[[SimDevice], float]

    # hooks the lab implements
    def now(self) -> float:  # pragma: no cover - implemented by the lab
        raise NotImplementedError

    def _register(self, obj: Any) -> Any:  # pragma: no cover - implemented by the lab
        raise NotImplementedError

    def _unregister(self, obj: Any) -> None:  # pragma: no cover - implemented by the lab
        raise NotImplementedError

    def _new_mig_uuid(self, dev: SimDevice) -> str:  # pragma: no cover - implemented by the lab
        raise NotImplementedError

    def _waits_virtually(self) -> bool:  # pragma: no cover - implemented by the lab
        raise NotImplementedError

    # --- handle resolution ----------------------------------------------------------------------

    def _obj(self, handle: Any) -> Any:
        if handle is None:
            raise NvmlReturn(N.NVML_ERROR_INVALID_ARGUMENT)
        addr = handle if isinstance(handle, int) else _c_void_p.from_buffer(handle).value
        obj = self._handles.get(addr) if addr else None
        if obj is None:
            raise NvmlReturn(N.NVML_ERROR_INVALID_ARGUMENT)
        return obj

    def _any(self, handle: Any) -> SimDevice | MigDevice:
        obj = self._obj(handle)
        parent = obj.parent if isinstance(obj, MigDevice) else obj
        if not isinstance(parent, SimDevice):
            raise NvmlReturn(N.NVML_ERROR_INVALID_ARGUMENT)
        if parent.lost:
            raise NvmlReturn(N.NVML_ERROR_GPU_IS_LOST)
        return obj

    def _dev(self, handle: Any) -> SimDevice:
        """Resolve a physical-GPU handle (a MIG device handle gives NOT_SUPPORTED)."""
        obj = self._any(handle)
        if isinstance(obj, MigDevice):
            raise NvmlReturn(N.NVML_ERROR_NOT_SUPPORTED)
        return obj

    def _synced(self, handle: Any) -> tuple[SimDevice, float]:
        dev = self._dev(handle)
        now = self.now()
        dev.sync(now)
        return dev, now

    def _gi(self, handle: Any) -> GpuInstance:
        obj = self._obj(handle)
        if not isinstance(obj, GpuInstance):
            raise NvmlReturn(N.NVML_ERROR_INVALID_ARGUMENT)
        if obj.device.lost:
            raise NvmlReturn(N.NVML_ERROR_GPU_IS_LOST)
        return obj

    def _ci(self, handle: Any) -> ComputeInstance:
        obj = self._obj(handle)
        if not isinstance(obj, ComputeInstance):
            raise NvmlReturn(N.NVML_ERROR_INVALID_ARGUMENT)
        if obj.gpu_instance.device.lost:
            raise NvmlReturn(N.NVML_ERROR_GPU_IS_LOST)
        return obj

