"""The simulated libnvidia-ml: functions with the C API's names, taking ctypes arguments.

pynvml's own wrappers call these exactly as they would call ``libnvidia-ml.so.1`` (see
``labkit.gpu.nvml``): scalars arrive as ints or ctypes values, out-parameters as ``byref(...)``,
caller buffers as ctypes arrays (or ``None`` to ask for a count), handles as opaque pointers
(the address of an object the simulator keeps alive). Each function returns an ``NVML_*`` code;
pynvml raises the matching ``NVMLError_*`` subclass. A function missing here surfaces as
``NVMLError_FunctionNotFound``, as with an older driver.

Semantics follow ``nvml.h`` (NVML API version 13) as summarised in the docstrings below; where
the header is silent the choice is marked **inferred**.

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

from labkit.gpu.sim.activity import IDX
from labkit.gpu.sim.device import (
    POWER_WINDOW_S,
    UTIL_WINDOW_S,
    ComputeInstance,
    GpuInstance,
    Handle,
    MigDevice,
    NvmlReturn,
    SimDevice,
)
from labkit.gpu.sim.device import out_param as _out
from labkit.gpu.sim.device import scalar_arg as _v
from labkit.gpu.sim.tools_api import NVLINK_FIELDS
from labkit.mig import placement as P

__all__ = ["NO_INIT_FUNCTIONS", "NvmlApi"]

_c_void_p = ctypes.c_void_p
UINT_MAX = 0xFFFFFFFF
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


class NvmlApi:
    """The C functions; mixed into :class:`labkit.gpu.sim.lab.SimulatedLab`, which holds the state.

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

    # --- system -----------------------------------------------------------------------------------

    def nvmlInitWithFlags(self, flags: Any) -> int:
        """Initialise; an injected init error (``fail_init``) is returned instead."""
        if self._init_error is not None:
            return self._init_error
        self._init_count += 1
        return N.NVML_SUCCESS

    def nvmlInit_v2(self) -> int:
        """Initialise (the older entry point)."""
        return self.nvmlInitWithFlags(0)

    def nvmlShutdown(self) -> int:
        """Release one initialisation; calls fail with UNINITIALIZED after the last one."""
        if self._init_count <= 0:
            return N.NVML_ERROR_UNINITIALIZED
        self._init_count -= 1
        return N.NVML_SUCCESS

    def nvmlErrorString(self, result: Any) -> bytes:
        """Return the error text as bytes (pynvml sets ``restype = c_char_p`` and decodes)."""
        return _ERROR_STRINGS.get(_v(result), b"Unknown Error")

    def nvmlSystemGetDriverVersion(self, buf: Any, size: Any) -> int:
        """Driver version string, e.g. ``580.65.06``."""
        _put_str(buf, size, self.driver_version)
        return N.NVML_SUCCESS

    def nvmlSystemGetNVMLVersion(self, buf: Any, size: Any) -> int:
        """NVML version string: CUDA major version, then the driver version."""
        _put_str(buf, size, f"{self.cuda_driver_version // 1000}.{self.driver_version}")
        return N.NVML_SUCCESS

    def nvmlSystemGetCudaDriverVersion(self, ref: Any) -> int:
        """CUDA driver version as 1000 x major + 10 x minor (13000 for 13.0)."""
        _out(ref).value = self.cuda_driver_version
        return N.NVML_SUCCESS

    nvmlSystemGetCudaDriverVersion_v2 = nvmlSystemGetCudaDriverVersion

    def nvmlSystemGetProcessName(self, pid: Any, buf: Any, size: Any) -> int:
        """Name of a process on a GPU; NOT_FOUND otherwise."""
        name = self._process_names.get(_v(pid))
        if name is None:
            return N.NVML_ERROR_NOT_FOUND
        _put_str(buf, size, name)
        return N.NVML_SUCCESS

    # --- device identity --------------------------------------------------------------------------

    def nvmlDeviceGetCount_v2(self, ref: Any) -> int:
        """Number of physical GPUs (a lost GPU still counts)."""
        _out(ref).value = len(self.devices)
        return N.NVML_SUCCESS

    def nvmlDeviceGetHandleByIndex_v2(self, index: Any, ref: Any) -> int:
        """Handle of GPU ``index``; GPU_IS_LOST for a GPU that fell off the bus."""
        i = _v(index)
        if not 0 <= i < len(self.devices):
            return N.NVML_ERROR_INVALID_ARGUMENT
        dev = self.devices[i]
        if dev.lost:
            return N.NVML_ERROR_GPU_IS_LOST
        _put_handle(ref, dev)
        return N.NVML_SUCCESS

    def nvmlDeviceGetHandleByUUID(self, uuid: Any, ref: Any) -> int:
        """Handle of the GPU or MIG device with this UUID."""
        text = (uuid.value if hasattr(uuid, "value") else uuid) or b""
        text = text.decode() if isinstance(text, bytes) else str(text)
        for dev in self.devices:
            if dev.uuid == text:
                if dev.lost:
                    return N.NVML_ERROR_GPU_IS_LOST
                _put_handle(ref, dev)
                return N.NVML_SUCCESS
            for mig in dev.mig_devices.values():
                if mig.uuid == text:
                    _put_handle(ref, mig)
                    return N.NVML_SUCCESS
        return N.NVML_ERROR_NOT_FOUND

    def nvmlDeviceGetHandleByPciBusId_v2(self, bus_id: Any, ref: Any) -> int:
        """Handle of the GPU at this PCI bus ID (``00000000:1B:00.0``)."""
        text = (bus_id.value if hasattr(bus_id, "value") else bus_id) or b""
        text = (text.decode() if isinstance(text, bytes) else str(text)).upper()
        for dev in self.devices:
            if self._bus_id(dev) == text or self._bus_id(dev)[4:] == text:
                if dev.lost:
                    return N.NVML_ERROR_GPU_IS_LOST
                _put_handle(ref, dev)
                return N.NVML_SUCCESS
        return N.NVML_ERROR_NOT_FOUND

    @staticmethod
    def _bus_id(dev: SimDevice) -> str:
        return f"00000000:{dev.bus:02X}:00.0"

    def nvmlDeviceGetIndex(self, handle: Any, ref: Any) -> int:
        """Index of a GPU, or of a MIG device among its parent's MIG devices."""
        obj = self._any(handle)
        _out(ref).value = obj.index
        return N.NVML_SUCCESS

    def nvmlDeviceGetName(self, handle: Any, buf: Any, size: Any) -> int:
        """Product name; a MIG device adds ``MIG <profile>``."""
        obj = self._any(handle)
        if isinstance(obj, MigDevice):
            name = f"{obj.parent.model.name} MIG {obj.compute_instance.name}"
        else:
            name = obj.model.name
        _put_str(buf, size, name)
        return N.NVML_SUCCESS

    def nvmlDeviceGetUUID(self, handle: Any, buf: Any, size: Any) -> int:
        """``GPU-...`` or, for a MIG device, ``MIG-...`` (R470+ format)."""
        _put_str(buf, size, self._any(handle).uuid)
        return N.NVML_SUCCESS

    def nvmlDeviceGetArchitecture(self, handle: Any, ref: Any) -> int:
        """``NVML_DEVICE_ARCH_*``."""
        from labkit.gpumodels import ARCHITECTURES

        _out(ref).value = ARCHITECTURES[self._dev(handle).model.architecture]
        return N.NVML_SUCCESS

    def nvmlDeviceGetCudaComputeCapability(self, handle: Any, major: Any, minor: Any) -> int:
        """CUDA compute capability."""
        obj = self._any(handle)
        dev = obj.parent if isinstance(obj, MigDevice) else obj
        _out(major).value, _out(minor).value = dev.model.compute_capability
        return N.NVML_SUCCESS

    def nvmlDeviceGetPciInfo_v3(self, handle: Any, ref: Any) -> int:
        """PCI bus ID and device ID."""
        dev = self._dev(handle)
        info = _out(ref)
        bus_id = self._bus_id(dev).encode()
        info.busId = bus_id
        info.busIdLegacy = bus_id
        info.domain, info.bus, info.device = 0, dev.bus, 0
        info.pciDeviceId = dev.model.pci_device_id
        info.pciSubSystemId = (dev.model.pci_device_id & 0xFFFF0000) | 0x10DE
        return N.NVML_SUCCESS

    # --- memory, processes ----------------------------------------------------------------------

    def _memory(self, handle: Any) -> tuple[int, int, int]:
        """Return (total, reserved, used) in bytes."""
        obj = self._any(handle)
        mib = 1 << 20
        if isinstance(obj, MigDevice):
            used = sum(p.used_memory_mib for p in obj.parent.processes
                       if p.gpu_instance_id == obj.gpu_instance.id)
            return obj.memory_mib * mib, 0, used * mib
        reserved = obj.board.memory_reserved_mib
        return obj.model.memory_total_mib * mib, reserved * mib, obj.memory_used_mib() * mib

    def nvmlDeviceGetMemoryInfo(self, handle: Any, ref: Any) -> int:
        """v1: ``used`` includes the driver's reserved memory (R510+ behaviour). [bytes]"""
        total, reserved, used = self._memory(handle)
        st = _out(ref)
        st.total, st.used = total, reserved + used
        st.free = total - st.used
        return N.NVML_SUCCESS

    def nvmlDeviceGetMemoryInfo_v2(self, handle: Any, ref: Any) -> int:
        """v2: ``reserved`` separate from ``used``. [bytes]"""
        st = _out(ref)
        if st.version != N.nvmlMemory_v2:
            return N.NVML_ERROR_ARGUMENT_VERSION_MISMATCH
        total, reserved, used = self._memory(handle)
        st.total, st.reserved, st.used = total, reserved, used
        st.free = total - reserved - used
        return N.NVML_SUCCESS

    def nvmlDeviceGetComputeRunningProcesses_v3(self, handle: Any, count_ref: Any,
                                                buf: Any) -> int:
        """Compute processes (a MIG device lists its own); the buffer protocol of nvml.h."""
        obj = self._any(handle)
        if isinstance(obj, MigDevice):
            procs = [p for p in obj.parent.processes
                     if p.gpu_instance_id == obj.gpu_instance.id
                     and p.compute_instance_id == obj.compute_instance.id]
        else:
            procs = list(obj.processes)
        count = _out(count_ref)
        if buf is None or count.value < len(procs):
            needed = len(procs)
            count.value = needed
            return N.NVML_SUCCESS if needed == 0 else N.NVML_ERROR_INSUFFICIENT_SIZE
        for i, p in enumerate(procs):
            buf[i].pid = p.pid
            buf[i].usedGpuMemory = p.used_memory_mib << 20
            buf[i].gpuInstanceId = UINT_MAX if p.gpu_instance_id is None else p.gpu_instance_id
            buf[i].computeInstanceId = (UINT_MAX if p.compute_instance_id is None
                                        else p.compute_instance_id)
        count.value = len(procs)
        return N.NVML_SUCCESS

    def nvmlDeviceGetGraphicsRunningProcesses_v3(self, handle: Any, count_ref: Any,
                                                 buf: Any) -> int:
        """No graphics processes in the lab."""
        self._any(handle)
        _out(count_ref).value = 0
        return N.NVML_SUCCESS

    # --- power, energy, temperature, clocks -------------------------------------------------------

    def nvmlDeviceGetPowerUsage(self, handle: Any, ref: Any) -> int:
        """Board power: 1-s average (Ampere+ except GA100) or instantaneous. [mW]"""
        dev, now = self._synced(handle)
        pinned = dev.pins.get("power_usage_mw")
        if pinned is not None:
            _out(ref).value = int(pinned)
            return N.NVML_SUCCESS
        watts = (dev.power_mean_w(now, POWER_WINDOW_S) if dev.board.power_averaged
                 else dev.power_instant_w(now))
        _out(ref).value = round(watts * dev.jitter(now, 101, 0.01) * 1000)
        return N.NVML_SUCCESS

    def nvmlDeviceGetPowerManagementLimit(self, handle: Any, ref: Any) -> int:
        """Power management limit. [mW]"""
        _out(ref).value = int(self._dev(handle).power_limit_w * 1000)
        return N.NVML_SUCCESS

    nvmlDeviceGetEnforcedPowerLimit = nvmlDeviceGetPowerManagementLimit

    def nvmlDeviceGetPowerManagementDefaultLimit(self, handle: Any, ref: Any) -> int:
        """Default power limit (TDP). [mW]"""
        _out(ref).value = int(self._dev(handle).board.tdp_w * 1000)
        return N.NVML_SUCCESS

    def nvmlDeviceGetPowerManagementLimitConstraints(self, handle: Any, lo: Any, hi: Any) -> int:
        """[min, max] settable power limit. [mW]"""
        b = self._dev(handle).board
        _out(lo).value, _out(hi).value = int(b.min_power_limit_w * 1000), int(
            b.max_power_limit_w * 1000)
        return N.NVML_SUCCESS

    def nvmlDeviceGetTotalEnergyConsumption(self, handle: Any, ref: Any) -> int:
        """Energy since the driver loaded. [mJ]"""
        dev, _ = self._synced(handle)
        pinned = dev.pins.get("energy_mj")
        _out(ref).value = int(pinned if pinned is not None else dev.energy_mj)
        return N.NVML_SUCCESS

    def _temperature(self, dev: SimDevice, now: float, sensor: int) -> int:
        if sensor != N.NVML_TEMPERATURE_GPU:
            raise NvmlReturn(N.NVML_ERROR_INVALID_ARGUMENT)
        pinned = dev.pins.get("temperature_c")
        if pinned is not None:
            return int(pinned)
        return round(dev.temp_c + (0.4 * (dev.jitter(now, 102, 1.0) - 1.0)))

    def nvmlDeviceGetTemperature(self, handle: Any, sensor: Any, ref: Any) -> int:
        """GPU temperature. [degC]"""
        dev, now = self._synced(handle)
        _out(ref).value = self._temperature(dev, now, _v(sensor))
        return N.NVML_SUCCESS

    def nvmlDeviceGetTemperatureV(self, handle: Any, ref: Any) -> int:
        """Versioned temperature query (``nvmlTemperature_v1``). [degC]"""
        dev, now = self._synced(handle)
        st = _out(ref)
        if st.version != N.nvmlTemperature_v1:
            return N.NVML_ERROR_ARGUMENT_VERSION_MISMATCH
        st.temperature = self._temperature(dev, now, int(st.sensorType))
        return N.NVML_SUCCESS

    def nvmlDeviceGetTemperatureThreshold(self, handle: Any, kind: Any, ref: Any) -> int:
        """Shutdown, slowdown, memory max and GPU max operating temperatures. [degC]"""
        b = self._dev(handle).board
        table = {N.NVML_TEMPERATURE_THRESHOLD_SHUTDOWN: b.shutdown_temp_c,
                 N.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN: b.slowdown_temp_c,
                 N.NVML_TEMPERATURE_THRESHOLD_MEM_MAX: 95,
                 N.NVML_TEMPERATURE_THRESHOLD_GPU_MAX: b.max_operating_temp_c}
        value = table.get(_v(kind))
        if value is None:
            return N.NVML_ERROR_NOT_SUPPORTED
        _out(ref).value = value
        return N.NVML_SUCCESS

    def nvmlDeviceGetFanSpeed(self, handle: Any, ref: Any) -> int:
        """Fan speed; NOT_SUPPORTED on passively cooled boards. [%]"""
        dev, _ = self._synced(handle)
        if not dev.model.fan:
            return N.NVML_ERROR_NOT_SUPPORTED
        _out(ref).value = int(min(100, max(30, 30 + 2 * (dev.temp_c - 40))))
        return N.NVML_SUCCESS

    def nvmlDeviceGetClockInfo(self, handle: Any, kind: Any, ref: Any) -> int:
        """Current clock. [MHz]"""
        dev, now = self._synced(handle)
        sm, _ = dev.clocks(now)
        clock = {N.NVML_CLOCK_GRAPHICS: sm, N.NVML_CLOCK_SM: sm,
                 N.NVML_CLOCK_MEM: dev.board.mem_clock_max_mhz,
                 N.NVML_CLOCK_VIDEO: int(sm * 0.9)}.get(_v(kind))
        if clock is None:
            return N.NVML_ERROR_INVALID_ARGUMENT
        pinned = dev.pins.get("sm_clock_mhz")
        _out(ref).value = int(pinned) if pinned is not None and _v(kind) < 2 else clock
        return N.NVML_SUCCESS

    def nvmlDeviceGetMaxClockInfo(self, handle: Any, kind: Any, ref: Any) -> int:
        """Maximum clock. [MHz]"""
        b = self._dev(handle).board
        clock = {N.NVML_CLOCK_GRAPHICS: b.sm_clock_max_mhz, N.NVML_CLOCK_SM: b.sm_clock_max_mhz,
                 N.NVML_CLOCK_MEM: b.mem_clock_max_mhz,
                 N.NVML_CLOCK_VIDEO: int(b.sm_clock_max_mhz * 0.9)}.get(_v(kind))
        if clock is None:
            return N.NVML_ERROR_INVALID_ARGUMENT
        _out(ref).value = clock
        return N.NVML_SUCCESS

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: Any, ref: Any) -> int:
        """Why the clocks are below maximum (``nvmlClocksEventReason*`` bits)."""
        dev, now = self._synced(handle)
        _out(ref).value = dev.clocks(now)[1]
        return N.NVML_SUCCESS

    nvmlDeviceGetCurrentClocksThrottleReasons = nvmlDeviceGetCurrentClocksEventReasons

    def nvmlDeviceGetPerformanceState(self, handle: Any, ref: Any) -> int:
        """P-state (P0 on a datacenter board with persistence mode)."""
        self._dev(handle)
        _out(ref).value = 0
        return N.NVML_SUCCESS

    # --- utilization, PCIe, health --------------------------------------------------------------

    def nvmlDeviceGetUtilizationRates(self, handle: Any, ref: Any) -> int:
        """``gpu``: % of the last second with a kernel running; ``memory``: % with memory busy.

        NOT_SUPPORTED on a MIG-enabled GPU (nvml.h).
        """
        dev, now = self._synced(handle)
        if dev.mig_enabled:
            return N.NVML_ERROR_NOT_SUPPORTED
        mean = dev.window_mean(now, UTIL_WINDOW_S)
        st = _out(ref)
        pinned = dev.pins.get("utilization_gpu_pct")
        st.gpu = int(pinned) if pinned is not None else round(min(1.0, mean[IDX["kernel"]])
                                                                  * 100)
        st.memory = round(min(1.0, mean[IDX["mem_copy"]]) * 100)
        return N.NVML_SUCCESS

    def nvmlDeviceGetPcieThroughput(self, handle: Any, counter: Any, ref: Any) -> int:
        """PCIe TX or RX over the last 20 ms. [KB/s]"""
        dev, now = self._synced(handle)
        kind = _v(counter)
        if kind not in (N.NVML_PCIE_UTIL_TX_BYTES, N.NVML_PCIE_UTIL_RX_BYTES):
            return N.NVML_ERROR_INVALID_ARGUMENT
        channel = "pcie_tx_kbps" if kind == N.NVML_PCIE_UTIL_TX_BYTES else "pcie_rx_kbps"
        _out(ref).value = int(dev.instant(now)[IDX[channel]] * dev.jitter(now, 103 + kind, 0.05))
        return N.NVML_SUCCESS

    def nvmlDeviceGetCurrPcieLinkGeneration(self, handle: Any, ref: Any) -> int:
        """PCIe generation."""
        _out(ref).value = self._dev(handle).board.pcie_gen
        return N.NVML_SUCCESS

    nvmlDeviceGetMaxPcieLinkGeneration = nvmlDeviceGetCurrPcieLinkGeneration

    def nvmlDeviceGetCurrPcieLinkWidth(self, handle: Any, ref: Any) -> int:
        """PCIe lanes."""
        _out(ref).value = self._dev(handle).board.pcie_width
        return N.NVML_SUCCESS

    nvmlDeviceGetMaxPcieLinkWidth = nvmlDeviceGetCurrPcieLinkWidth

    def nvmlDeviceGetEccMode(self, handle: Any, current: Any, pending: Any) -> int:
        """ECC mode [current, pending]; NOT_SUPPORTED without ECC."""
        dev = self._dev(handle)
        if not dev.model.ecc:
            return N.NVML_ERROR_NOT_SUPPORTED
        _out(current).value = _out(pending).value = 1
        return N.NVML_SUCCESS

    def nvmlDeviceGetTotalEccErrors(self, handle: Any, error_type: Any, counter_type: Any,
                                    ref: Any) -> int:
        """ECC error count by (corrected/uncorrected, volatile/aggregate)."""
        dev = self._dev(handle)
        if not dev.model.ecc:
            return N.NVML_ERROR_NOT_SUPPORTED
        e, c = _v(error_type), _v(counter_type)
        if e not in (0, 1) or c not in (0, 1):
            return N.NVML_ERROR_INVALID_ARGUMENT
        _out(ref).value = dev.ecc.get((e, c), 0)
        return N.NVML_SUCCESS

    def nvmlDeviceGetRemappedRows(self, handle: Any, corr: Any, unc: Any, pending: Any,
                                  failure: Any) -> int:
        """Row remapping (Ampere+): NOT_SUPPORTED without ECC or with MIG instances."""
        dev = self._dev(handle)
        if not dev.model.ecc or dev.gpu_instances:
            return N.NVML_ERROR_NOT_SUPPORTED
        for ref, value in zip((corr, unc, pending, failure), dev.remapped_rows, strict=True):
            _out(ref).value = value
        return N.NVML_SUCCESS

    def nvmlDeviceGetFieldValues(self, handle: Any, count: Any, ref: Any) -> int:
        """Several fields at once; each entry carries its own ``nvmlReturn``.

        Fields: MEMORY_TEMP (82), PCIE_REPLAY_COUNTER (94), the NVLink fields of
        :meth:`labkit.gpu.sim.tools_api.ToolsApi.nvlink_field` (link count 91, speeds 84-90,
        throughput 138-141 per link), POWER_AVERAGE/INSTANT (185/186),
        IS_MIG_MODE_INDEPENDENT_MIG_QUERY_CAPABLE (199); others NOT_SUPPORTED.
        """
        dev, now = self._synced(handle)
        values = _out(ref)
        for i in range(_v(count)):
            entry = values[i]
            fid = int(entry.fieldId)
            entry.timestamp = int(now * 1e6)
            entry.latencyUsec = 0
            code = self._field_faults.get((dev.index, fid), self._field_faults.get((None, fid)))
            if code is not None:
                entry.nvmlReturn = code
                continue
            result = self._field(dev, now, fid, int(entry.scopeId))
            if isinstance(result, int):
                entry.nvmlReturn = result
                continue
            if result is None:
                entry.nvmlReturn = N.NVML_ERROR_NOT_SUPPORTED
                continue
            kind, value = result
            entry.nvmlReturn = N.NVML_SUCCESS
            entry.valueType = kind
            if kind == N.NVML_VALUE_TYPE_DOUBLE:
                entry.value.dVal = float(value)
            elif kind == N.NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
                entry.value.ullVal = int(value)
            else:
                entry.value.uiVal = int(value)
        return N.NVML_SUCCESS

    def _field(self, dev: SimDevice, now: float, fid: int,
               scope: int) -> tuple[int, float] | int | None:
        if fid in NVLINK_FIELDS:
            return self.nvlink_field(dev, fid, scope)
        uint, ull = N.NVML_VALUE_TYPE_UNSIGNED_INT, N.NVML_VALUE_TYPE_UNSIGNED_LONG_LONG
        if fid == N.NVML_FI_DEV_MEMORY_TEMP:
            return uint, round(dev.temp_c + dev.board.memory_temp_offset_c)
        if fid == N.NVML_FI_DEV_PCIE_REPLAY_COUNTER:
            return ull, dev.pcie_replays
        if fid == N.NVML_FI_DEV_POWER_AVERAGE:
            return uint, round(dev.power_mean_w(now, POWER_WINDOW_S) * 1000)
        if fid == N.NVML_FI_DEV_POWER_INSTANT:
            return uint, round(dev.power_instant_w(now) * 1000)
        if fid == N.NVML_FI_DEV_IS_MIG_MODE_INDEPENDENT_MIG_QUERY_CAPABLE:
            return uint, 0 if self.legacy_mig_queries else 1
        return None

    # --- events -----------------------------------------------------------------------------------

    def nvmlEventSetCreate(self, ref: Any) -> int:
        """A new event set."""
        es = self._register(EventSet())
        self._event_sets.append(es)
        _put_handle(ref, es)
        return N.NVML_SUCCESS

    def nvmlEventSetFree(self, handle: Any) -> int:
        """Free an event set."""
        es = self._obj(handle)
        if not isinstance(es, EventSet):
            return N.NVML_ERROR_INVALID_ARGUMENT
        self._event_sets.remove(es)
        self._unregister(es)
        return N.NVML_SUCCESS

    def _supported_events(self, dev: SimDevice) -> int:
        return _EVENTS_SUPPORTED | (_EVENTS_ECC if dev.model.ecc else 0)

    def nvmlDeviceGetSupportedEventTypes(self, handle: Any, ref: Any) -> int:
        """Event types this GPU can report."""
        _out(ref).value = self._supported_events(self._dev(handle))
        return N.NVML_SUCCESS

    def nvmlDeviceRegisterEvents(self, handle: Any, types: Any, event_set: Any) -> int:
        """Register event types; NOT_SUPPORTED if some type is not supported."""
        dev = self._dev(handle)
        es = self._obj(event_set)
        mask = _v(types)
        if not isinstance(es, EventSet):
            return N.NVML_ERROR_INVALID_ARGUMENT
        if mask & ~self._supported_events(dev):
            return N.NVML_ERROR_NOT_SUPPORTED
        es.registrations[dev.index] = es.registrations.get(dev.index, 0) | mask
        return N.NVML_SUCCESS

    def nvmlEventSetWait_v2(self, event_set: Any, ref: Any, timeout_ms: Any) -> int:
        """Next event, or TIMEOUT (the virtual clock never waits; the wall clock waits up to it)."""
        es = self._obj(event_set)
        if not isinstance(es, EventSet):
            return N.NVML_ERROR_INVALID_ARGUMENT
        if not es.queue and not self._waits_virtually():
            self._cond.wait_for(lambda: bool(es.queue), timeout=_v(timeout_ms) / 1000.0)
        if not es.queue:
            return N.NVML_ERROR_TIMEOUT
        index, kind, data = es.queue.popleft()
        st = _out(ref)
        _c_void_p.from_buffer(st, type(st).device.offset).value = self.devices[index]._addr
        st.eventType, st.eventData = kind, data
        st.gpuInstanceId = st.computeInstanceId = UINT_MAX
        return N.NVML_SUCCESS

    # --- MIG: mode --------------------------------------------------------------------------------

    def _mig_dev(self, handle: Any) -> SimDevice:
        dev = self._dev(handle)
        if dev.model.mig is None:
            raise NvmlReturn(N.NVML_ERROR_NOT_SUPPORTED)
        return dev

    def _mig_on(self, handle: Any) -> SimDevice:
        dev = self._mig_dev(handle)
        if not dev.mig_enabled:
            raise NvmlReturn(N.NVML_ERROR_NOT_SUPPORTED)
        return dev

    def _mig_query(self, handle: Any) -> SimDevice:
        """Profile/placement queries work with MIG off unless the lab models an old driver."""
        return self._mig_on(handle) if self.legacy_mig_queries else self._mig_dev(handle)

    def _need_rights(self) -> None:
        if not self.mig_rights:
            raise NvmlReturn(N.NVML_ERROR_NO_PERMISSION)

    def nvmlDeviceGetMigMode(self, handle: Any, current: Any, pending: Any) -> int:
        """[current, pending] MIG mode; NOT_SUPPORTED on a GPU without MIG."""
        dev = self._mig_dev(handle)
        _out(current).value, _out(pending).value = dev.mig_current, dev.mig_pending
        return N.NVML_SUCCESS

    def nvmlDeviceSetMigMode(self, handle: Any, mode: Any, status_ref: Any) -> int:
        """Set the pending mode and try to activate it; the outcome goes to ``activationStatus``.

        Needs root (NO_PERMISSION otherwise). With a process on the GPU the status is IN_USE
        and the mode stays pending; where no reset is possible (VM) it is RESET_REQUIRED.
        Disabling MIG removes every GPU instance (instances do not survive a reset).
        """
        dev = self._mig_dev(handle)
        value = _v(mode)
        if value not in (N.NVML_DEVICE_MIG_DISABLE, N.NVML_DEVICE_MIG_ENABLE):
            return N.NVML_ERROR_INVALID_ARGUMENT
        self._need_rights()
        dev.mig_pending = value
        _out(status_ref).value = self._activate_mig(dev)
        return N.NVML_SUCCESS

    def _activate_mig(self, dev: SimDevice) -> int:
        if dev.mig_pending == dev.mig_current:
            return N.NVML_SUCCESS
        if dev.processes:
            return N.NVML_ERROR_IN_USE
        if not self.reset_possible:
            return N.NVML_ERROR_RESET_REQUIRED
        self._clear_instances(dev)
        dev.mig_current = dev.mig_pending
        return N.NVML_SUCCESS

    def _clear_instances(self, dev: SimDevice) -> None:
        for gi in list(dev.gpu_instances.values()):
            for ci in list(gi.compute_instances.values()):
                self._drop_ci(ci)
            del dev.gpu_instances[gi.id]
            self._unregister(gi)

    # --- MIG: GPU-instance profiles -----------------------------------------------------------

    def _fill_gi_profile(self, dev: SimDevice, prof: Any, st: Any) -> None:
        st.id = prof.id
        st.isP2pSupported = 0
        st.sliceCount = prof.compute_slices
        st.instanceCount = prof.max_count
        st.multiprocessorCount = prof.sm_count
        st.copyEngineCount = prof.copy_engines
        st.decoderCount = prof.decoders
        st.encoderCount = prof.encoders
        st.jpegCount = prof.jpeg
        st.ofaCount = prof.ofa
        st.memorySizeMB = prof.memory_mib
        if hasattr(st, "name"):
            st.name = f"MIG {prof.name}".encode()  # inferred: no capture of the v2 name field

    def _gi_profile_by_const(self, handle: Any, profile: Any) -> tuple[SimDevice, Any]:
        dev = self._mig_query(handle)
        value = _v(profile)
        if not 0 <= value < N.NVML_GPU_INSTANCE_PROFILE_COUNT:
            raise NvmlReturn(N.NVML_ERROR_INVALID_ARGUMENT)
        assert dev.model.mig is not None
        prof = dev.model.mig.by_nvml_profile(value)
        if prof is None:
            raise NvmlReturn(N.NVML_ERROR_NOT_SUPPORTED)
        return dev, prof

    def nvmlDeviceGetGpuInstanceProfileInfo(self, handle: Any, profile: Any, ref: Any) -> int:
        """v1 profile info for an ``NVML_GPU_INSTANCE_PROFILE_*`` constant.

        INVALID_ARGUMENT past the last constant (how callers end enumeration); NOT_SUPPORTED
        for a profile this board lacks.
        """
        dev, prof = self._gi_profile_by_const(handle, profile)
        self._fill_gi_profile(dev, prof, _out(ref))
        return N.NVML_SUCCESS

    def nvmlDeviceGetGpuInstanceProfileInfoV(self, handle: Any, profile: Any, ref: Any) -> int:
        """v2 profile info (adds ``name``); checks ``version``."""
        st = _out(ref)
        if st.version != N.nvmlGpuInstanceProfileInfo_v2:
            return N.NVML_ERROR_ARGUMENT_VERSION_MISMATCH
        dev, prof = self._gi_profile_by_const(handle, profile)
        self._fill_gi_profile(dev, prof, st)
        return N.NVML_SUCCESS

    def _gi_profile_by_id(self, dev: SimDevice, profile_id: Any) -> Any:
        assert dev.model.mig is not None
        prof = dev.model.mig.by_id(_v(profile_id))
        if prof is None:
            raise NvmlReturn(N.NVML_ERROR_INVALID_ARGUMENT)
        return prof

    def nvmlDeviceGetGpuInstanceProfileInfoByIdV(self, handle: Any, profile_id: Any,
                                                 ref: Any) -> int:
        """v2 profile info by the lgip profile ID."""
        st = _out(ref)
        if st.version != N.nvmlGpuInstanceProfileInfo_v2:
            return N.NVML_ERROR_ARGUMENT_VERSION_MISMATCH
        dev = self._mig_query(handle)
        self._fill_gi_profile(dev, self._gi_profile_by_id(dev, profile_id), st)
        return N.NVML_SUCCESS

    def nvmlDeviceGetGpuInstancePossiblePlacements_v2(self, handle: Any, profile_id: Any,
                                                      buf: Any, count_ref: Any) -> int:
        """Legal placements of a profile (lgipp), whether MIG is on or not (R550+).

        ``buf=None`` returns only the count.
        """
        dev = self._mig_query(handle)
        prof = self._gi_profile_by_id(dev, profile_id)
        count = _out(count_ref)
        starts = prof.placements
        if buf is None:
            count.value = len(starts)
            return N.NVML_SUCCESS
        if count.value < len(starts):
            count.value = len(starts)
            return N.NVML_ERROR_INSUFFICIENT_SIZE
        arr = _out(buf)
        for i, start in enumerate(starts):
            arr[i].start, arr[i].size = start, prof.memory_slices
        count.value = len(starts)
        return N.NVML_SUCCESS

    def _placed(self, dev: SimDevice) -> list[P.PlacedGi]:
        return [P.PlacedGi(gi.profile, gi.start) for gi in dev.gpu_instances.values()]

    def nvmlDeviceGetGpuInstanceRemainingCapacity(self, handle: Any, profile_id: Any,
                                                  ref: Any) -> int:
        """How many more GIs of the profile fit now (lgip "Free"); NOT_SUPPORTED with MIG off."""
        dev = self._mig_on(handle)
        assert dev.model.mig is not None
        prof = self._gi_profile_by_id(dev, profile_id)
        _out(ref).value = P.remaining_capacity(dev.model.mig, self._placed(dev), prof)
        return N.NVML_SUCCESS

    # --- MIG: GPU instances -----------------------------------------------------------------------

    def _create_gi(self, handle: Any, profile_id: Any, start: int | None, ref: Any) -> int:
        dev = self._mig_on(handle)
        self._need_rights()
        if any(p.gpu_instance_id is None for p in dev.processes):
            # another client holds the whole GPU: "In use by another client" (sources in
            # data/gpus/H100-80GB.yaml sim_behaviour.gi_create_in_use)
            return N.NVML_ERROR_IN_USE
        assert dev.model.mig is not None
        try:
            placed = P.check_gi(dev.model.mig, self._placed(dev), _v(profile_id), start)
        except P.PlacementError as err:
            return (N.NVML_ERROR_INVALID_ARGUMENT if err.invalid_argument
                    else N.NVML_ERROR_INSUFFICIENT_RESOURCES)
        gi_id = P.gi_id_for(dev.model.mig, placed.start, placed.profile.memory_slices,
                            dev.gpu_instances)
        gi = self._register(GpuInstance(dev, gi_id, placed.profile, placed.start))
        dev.gpu_instances[gi_id] = gi
        _put_handle(ref, gi)
        return N.NVML_SUCCESS

    def nvmlDeviceCreateGpuInstance(self, handle: Any, profile_id: Any, ref: Any) -> int:
        """Create a GI where the driver chooses (its default order; creation order matters)."""
        return self._create_gi(handle, profile_id, None, ref)

    def nvmlDeviceCreateGpuInstanceWithPlacement(self, handle: Any, profile_id: Any,
                                                 placement: Any, ref: Any) -> int:
        """Create a GI at an explicit placement (a pointer to ``nvmlGpuInstancePlacement_t``).

        INVALID_ARGUMENT for a start the profile does not allow, INSUFFICIENT_RESOURCES on
        overlap or a cap.
        """
        place = _out(placement)
        dev = self._mig_on(handle)
        prof = self._gi_profile_by_id(dev, profile_id)
        if int(place.size) != prof.memory_slices:
            return N.NVML_ERROR_INVALID_ARGUMENT
        return self._create_gi(handle, profile_id, int(place.start), ref)

    def nvmlGpuInstanceDestroy(self, handle: Any) -> int:
        """Destroy a GI; IN_USE while it has compute instances or processes."""
        gi = self._gi(handle)
        self._need_rights()
        dev = gi.device
        if gi.compute_instances or any(p.gpu_instance_id == gi.id for p in dev.processes):
            return N.NVML_ERROR_IN_USE
        del dev.gpu_instances[gi.id]
        self._unregister(gi)
        return N.NVML_SUCCESS

    def nvmlDeviceGetGpuInstances(self, handle: Any, profile_id: Any, buf: Any,
                                  count_ref: Any) -> int:
        """GIs of one profile; the buffer must hold ``instanceCount`` (NULL: INVALID_ARGUMENT)."""
        dev = self._mig_on(handle)
        prof = self._gi_profile_by_id(dev, profile_id)
        found = sorted((gi for gi in dev.gpu_instances.values() if gi.profile.id == prof.id),
                       key=lambda gi: gi.id)
        return _put_handles(buf, count_ref, found)

    def nvmlDeviceGetGpuInstanceById(self, handle: Any, gi_id: Any, ref: Any) -> int:
        """The GI with this ID; NOT_FOUND if none."""
        dev = self._mig_on(handle)
        gi = dev.gpu_instances.get(_v(gi_id))
        if gi is None:
            return N.NVML_ERROR_NOT_FOUND
        _put_handle(ref, gi)
        return N.NVML_SUCCESS

    def nvmlGpuInstanceGetInfo(self, handle: Any, ref: Any) -> int:
        """``device, id, profileId, placement`` of a GI."""
        gi = self._gi(handle)
        st = _out(ref)
        _c_void_p.from_buffer(st, type(st).device.offset).value = gi.device._addr
        st.id, st.profileId = gi.id, gi.profile.id
        st.placement.start, st.placement.size = gi.start, gi.profile.memory_slices
        return N.NVML_SUCCESS

    # --- MIG: compute instances -------------------------------------------------------------------

    def _ci_lookup(self, gi: GpuInstance,
                   value: int) -> tuple[P.CiProfile, tuple[int, ...]] | None:
        """The CI profile ``value`` a GI offers and its starts, with the driver's exceptions.

        From ``data/gpus/<model>.yaml`` ``sim_behaviour`` (sources there): a 1-slice REV2 GI
        (1g.20gb on H100) offers CI profile 7 (``1_SLICE_REV1``) instead of 0; a 2c CI in a 3g
        GI may also start at compute slice 1 (1c then 2c works on a real H200).
        """
        from labkit.data.gpus import load_sim_behaviour

        rev2 = load_sim_behaviour(gi.device.model.short_name).get("rev2_ci_profile")
        if rev2 is not None and gi.profile.nvml_profile == N.NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2:
            if value == rev2:
                return P.CiProfile(rev2, 1), (0,)
            if value == N.NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE:
                return None
        found = P.ci_profile(gi.profile, value)
        if found is None:
            return None
        ci, starts = found
        if ci.slices == 2 and gi.profile.compute_slices == 3:
            starts = (0, 1)
        return ci, starts

    def _ci_profile(self, gi: GpuInstance, profile: Any) -> tuple[P.CiProfile, tuple[int, ...]]:
        value = _v(profile)
        if not 0 <= value < N.NVML_COMPUTE_INSTANCE_PROFILE_COUNT:
            raise NvmlReturn(N.NVML_ERROR_INVALID_ARGUMENT)
        found = self._ci_lookup(gi, value)
        if found is None:
            raise NvmlReturn(N.NVML_ERROR_NOT_SUPPORTED)
        return found

    @staticmethod
    def _ci_free_starts(ci: P.CiProfile, starts: tuple[int, ...],
                        existing: list[tuple[int, int]]) -> list[int]:
        used = {u for s, n in existing for u in range(s, s + n)}
        return [s for s in starts if used.isdisjoint(range(s, s + ci.slices))]

    def _ci_capacity(self, ci: P.CiProfile, starts: tuple[int, ...],
                     existing: list[tuple[int, int]]) -> int:
        """How many more CIs of ``ci`` fit (greedy over the free starts, lowest first)."""
        placed = list(existing)
        count = 0
        while True:
            free = self._ci_free_starts(ci, starts, placed)
            if not free:
                return count
            placed.append((free[0], ci.slices))
            count += 1

    def _ci_sm_count(self, gi: GpuInstance, ci: P.CiProfile) -> int:
        """SMs of a CI: the GI's for the full CI, else those of the c-slice GI profile (H200 3g:
        1c 16, 2c 32; A100 3g: 14/28; sources in data/gpus/H200.yaml ``sim_behaviour``)."""
        prof = gi.profile
        if ci.slices >= prof.compute_slices:
            return prof.sm_count
        mig = gi.device.model.mig
        same = [p for p in (mig.profiles if mig else ()) if p.compute_slices == ci.slices]
        if same:
            return min(same, key=lambda p: (p.memory_slices, p.sm_count)).sm_count
        return prof.sm_count * ci.slices // prof.compute_slices

    def _fill_ci_profile(self, gi: GpuInstance, ci: P.CiProfile, starts: tuple[int, ...],
                         st: Any) -> None:
        prof = gi.profile
        st.id = ci.id
        st.sliceCount = ci.slices
        st.instanceCount = self._ci_capacity(ci, starts, [])
        st.multiprocessorCount = self._ci_sm_count(gi, ci)
        st.sharedCopyEngineCount = prof.copy_engines
        st.sharedDecoderCount = prof.decoders
        st.sharedEncoderCount = prof.encoders
        st.sharedJpegCount = prof.jpeg
        st.sharedOfaCount = prof.ofa
        if hasattr(st, "name"):
            name = prof.name if ci.slices == prof.compute_slices else f"{ci.slices}c.{prof.name}"
            st.name = f"MIG {name}".encode()

    def nvmlGpuInstanceGetComputeInstanceProfileInfo(self, handle: Any, profile: Any,
                                                     eng_profile: Any, ref: Any) -> int:
        """v1 CI profile info (``NVML_COMPUTE_INSTANCE_PROFILE_*``, engine profile SHARED)."""
        gi = self._gi(handle)
        if _v(eng_profile) != N.NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED:
            return N.NVML_ERROR_NOT_SUPPORTED
        ci, starts = self._ci_profile(gi, profile)
        self._fill_ci_profile(gi, ci, starts, _out(ref))
        return N.NVML_SUCCESS

    def nvmlGpuInstanceGetComputeInstanceProfileInfoV(self, handle: Any, profile: Any,
                                                      eng_profile: Any, ref: Any) -> int:
        """v2 CI profile info (adds ``name``)."""
        st = _out(ref)
        if st.version != N.nvmlComputeInstanceProfileInfo_v2:
            return N.NVML_ERROR_ARGUMENT_VERSION_MISMATCH
        return self.nvmlGpuInstanceGetComputeInstanceProfileInfo(handle, profile, eng_profile,
                                                                 ref)

    def _ci_existing(self, gi: GpuInstance) -> list[tuple[int, int]]:
        return [(ci.start, ci.profile.slices) for ci in gi.compute_instances.values()]

    def nvmlGpuInstanceGetComputeInstanceRemainingCapacity(self, handle: Any, profile: Any,
                                                           ref: Any) -> int:
        """How many more CIs of the profile fit in the GI."""
        gi = self._gi(handle)
        ci, starts = self._ci_profile(gi, profile)
        _out(ref).value = self._ci_capacity(ci, starts, self._ci_existing(gi))
        return N.NVML_SUCCESS

    def nvmlGpuInstanceGetComputeInstancePossiblePlacements(self, handle: Any, profile: Any,
                                                            buf: Any, count_ref: Any) -> int:
        """Legal CI placements (**inferred** table); ``buf=None`` gives the count."""
        gi = self._gi(handle)
        ci, starts = self._ci_profile(gi, profile)
        count = _out(count_ref)
        if buf is None:
            count.value = len(starts)
            return N.NVML_SUCCESS
        if count.value < len(starts):
            count.value = len(starts)
            return N.NVML_ERROR_INSUFFICIENT_SIZE
        arr = _out(buf)
        for i, start in enumerate(starts):
            arr[i].start, arr[i].size = start, _ci_size(gi, ci)
        count.value = len(starts)
        return N.NVML_SUCCESS

    def _create_ci(self, handle: Any, profile: Any, start: int | None, ref: Any) -> int:
        gi = self._gi(handle)
        self._need_rights()
        ci_prof, starts = self._ci_profile(gi, profile)
        existing = self._ci_existing(gi)
        if start is None:
            free = self._ci_free_starts(ci_prof, starts, existing)
            if not free:
                return N.NVML_ERROR_INSUFFICIENT_RESOURCES
            start = free[0]
        elif start not in starts:
            return N.NVML_ERROR_INVALID_ARGUMENT
        used = {u for s, n in existing for u in range(s, s + n)}
        if used.intersection(range(start, start + ci_prof.slices)):
            return N.NVML_ERROR_INSUFFICIENT_RESOURCES
        ci_id = 0
        while ci_id in gi.compute_instances:
            ci_id += 1
        ci = self._register(ComputeInstance(gi, ci_id, ci_prof, start))
        gi.compute_instances[ci_id] = ci
        dev = gi.device
        index = 0
        while index in dev.mig_devices:
            index += 1
        mig = self._register(MigDevice(dev, gi, ci, index, self._new_mig_uuid(dev)))
        ci.mig_device = mig
        dev.mig_devices[index] = mig
        _put_handle(ref, ci)
        return N.NVML_SUCCESS

    def nvmlGpuInstanceCreateComputeInstance(self, handle: Any, profile: Any, ref: Any) -> int:
        """Create a CI at the first free start; with it a MIG device appears."""
        return self._create_ci(handle, profile, None, ref)

    def nvmlGpuInstanceCreateComputeInstanceWithPlacement(self, handle: Any, profile: Any,
                                                          placement: Any, ref: Any) -> int:
        """Create a CI at an explicit placement (compute slices)."""
        place = _out(placement)
        return self._create_ci(handle, profile, int(place.start), ref)

    def _drop_ci(self, ci: ComputeInstance) -> None:
        dev = ci.gpu_instance.device
        if ci.mig_device is not None:
            dev.mig_devices.pop(ci.mig_device.index, None)
            self._unregister(ci.mig_device)
        del ci.gpu_instance.compute_instances[ci.id]
        self._unregister(ci)

    def nvmlComputeInstanceDestroy(self, handle: Any) -> int:
        """Destroy a CI; IN_USE while a process runs on it."""
        ci = self._ci(handle)
        self._need_rights()
        gi = ci.gpu_instance
        if any(p.gpu_instance_id == gi.id and p.compute_instance_id == ci.id
               for p in gi.device.processes):
            return N.NVML_ERROR_IN_USE
        self._drop_ci(ci)
        return N.NVML_SUCCESS

    def nvmlGpuInstanceGetComputeInstances(self, handle: Any, profile: Any, buf: Any,
                                           count_ref: Any) -> int:
        """CIs of one profile in the GI."""
        gi = self._gi(handle)
        ci_prof, _ = self._ci_profile(gi, profile)
        found = sorted((ci for ci in gi.compute_instances.values() if ci.profile.id == ci_prof.id),
                       key=lambda ci: ci.id)
        return _put_handles(buf, count_ref, found)

    def nvmlGpuInstanceGetComputeInstanceById(self, handle: Any, ci_id: Any, ref: Any) -> int:
        """The CI with this ID; NOT_FOUND if none."""
        gi = self._gi(handle)
        ci = gi.compute_instances.get(_v(ci_id))
        if ci is None:
            return N.NVML_ERROR_NOT_FOUND
        _put_handle(ref, ci)
        return N.NVML_SUCCESS

    def nvmlComputeInstanceGetInfo_v2(self, handle: Any, ref: Any) -> int:
        """``device, gpuInstance, id, profileId, placement`` of a CI."""
        ci = self._ci(handle)
        st = _out(ref)
        cls = type(st)
        _c_void_p.from_buffer(st, cls.device.offset).value = ci.gpu_instance.device._addr
        _c_void_p.from_buffer(st, cls.gpuInstance.offset).value = ci.gpu_instance._addr
        st.id, st.profileId = ci.id, ci.profile.id
        st.placement.start, st.placement.size = ci.start, _ci_size(ci.gpu_instance, ci.profile)
        return N.NVML_SUCCESS

    # --- MIG devices ------------------------------------------------------------------------------

    def nvmlDeviceGetMaxMigDeviceCount(self, handle: Any, ref: Any) -> int:
        """Most MIG devices the GPU can hold (its compute slices); 0 if MIG is off or absent."""
        dev = self._dev(handle)
        on = dev.model.mig is not None and dev.mig_enabled
        _out(ref).value = dev.model.mig.compute_slices if on and dev.model.mig else 0
        return N.NVML_SUCCESS

    def nvmlDeviceGetMigDeviceHandleByIndex(self, handle: Any, index: Any, ref: Any) -> int:
        """The ``index``-th MIG device (0 .. count-1, dense); NOT_FOUND past the last one.

        The driver numbers the MIG devices that exist, so destroying one renumbers those after
        it; tools stop at the first NOT_FOUND (nvitop 1.7 ``PhysicalDevice.mig_devices``).
        A GPU instance without a compute instance is no MIG device.
        """
        dev = self._dev(handle)
        i = _v(index)
        limit = dev.model.mig.compute_slices if dev.model.mig and dev.mig_enabled else 0
        if not 0 <= i < limit:
            return N.NVML_ERROR_INVALID_ARGUMENT
        existing = [dev.mig_devices[k] for k in sorted(dev.mig_devices)]
        if i >= len(existing):
            return N.NVML_ERROR_NOT_FOUND
        mig = existing[i]
        _put_handle(ref, mig)
        return N.NVML_SUCCESS

    def nvmlDeviceGetDeviceHandleFromMigDeviceHandle(self, handle: Any, ref: Any) -> int:
        """The physical GPU of a MIG device handle."""
        obj = self._any(handle)
        if not isinstance(obj, MigDevice):
            return N.NVML_ERROR_INVALID_ARGUMENT
        _put_handle(ref, obj.parent)
        return N.NVML_SUCCESS

    def nvmlDeviceIsMigDeviceHandle(self, handle: Any, ref: Any) -> int:
        """1 for a MIG device handle, 0 for a physical GPU."""
        _out(ref).value = 1 if isinstance(self._any(handle), MigDevice) else 0
        return N.NVML_SUCCESS

    def nvmlDeviceGetGpuInstanceId(self, handle: Any, ref: Any) -> int:
        """GI ID of a MIG device; NOT_SUPPORTED for a physical GPU."""
        obj = self._any(handle)
        if not isinstance(obj, MigDevice):
            return N.NVML_ERROR_NOT_SUPPORTED
        _out(ref).value = obj.gpu_instance.id
        return N.NVML_SUCCESS

    def nvmlDeviceGetComputeInstanceId(self, handle: Any, ref: Any) -> int:
        """CI ID of a MIG device; NOT_SUPPORTED for a physical GPU."""
        obj = self._any(handle)
        if not isinstance(obj, MigDevice):
            return N.NVML_ERROR_NOT_SUPPORTED
        _out(ref).value = obj.compute_instance.id
        return N.NVML_SUCCESS

    # --- GPM ------------------------------------------------------------------------------------

    def nvmlGpmQueryDeviceSupport(self, handle: Any, ref: Any) -> int:
        """``isSupportedDevice`` is 1 on Hopper and newer."""
        dev = self._dev(handle)
        st = _out(ref)
        if st.version != N.NVML_GPM_SUPPORT_VERSION:
            return N.NVML_ERROR_ARGUMENT_VERSION_MISMATCH
        st.isSupportedDevice = 1 if dev.model.gpm else 0
        return N.NVML_SUCCESS

    def nvmlGpmQueryIfStreamingEnabled(self, handle: Any, ref: Any) -> int:
        """GPM streaming state (off); NOT_SUPPORTED before Hopper."""
        if not self._dev(handle).model.gpm:
            return N.NVML_ERROR_NOT_SUPPORTED
        _out(ref).value = 0
        return N.NVML_SUCCESS

    def nvmlGpmSampleAlloc(self, ref: Any) -> int:
        """A new sample buffer."""
        _put_handle(ref, self._register(GpmSample()))
        return N.NVML_SUCCESS

    def nvmlGpmSampleFree(self, handle: Any) -> int:
        """Free a sample buffer."""
        sample = self._obj(handle)
        if not isinstance(sample, GpmSample):
            return N.NVML_ERROR_INVALID_ARGUMENT
        self._unregister(sample)
        return N.NVML_SUCCESS

    def _gpm_dev(self, handle: Any) -> tuple[SimDevice, float]:
        dev, now = self._synced(handle)
        if not dev.model.gpm:
            raise NvmlReturn(N.NVML_ERROR_NOT_SUPPORTED)
        return dev, now

    def nvmlGpmSampleGet(self, handle: Any, sample: Any) -> int:
        """Snapshot the whole GPU's counters."""
        dev, now = self._gpm_dev(handle)
        target = self._obj(sample)
        if not isinstance(target, GpmSample):
            return N.NVML_ERROR_INVALID_ARGUMENT
        target.device_index, target.gpu_instance_id = dev.index, None
        target.t_s, target.cum = now, list(dev.cum)
        return N.NVML_SUCCESS

    def nvmlGpmMigSampleGet(self, handle: Any, gi_id: Any, sample: Any) -> int:
        """Snapshot one MIG GPU instance's counters (parent handle + GI ID)."""
        dev, now = self._gpm_dev(handle)
        target = self._obj(sample)
        if not isinstance(target, GpmSample):
            return N.NVML_ERROR_INVALID_ARGUMENT
        if not dev.mig_enabled:
            return N.NVML_ERROR_NOT_SUPPORTED
        gid = _v(gi_id)
        if gid not in dev.gpu_instances:
            return N.NVML_ERROR_INVALID_ARGUMENT
        target.device_index, target.gpu_instance_id = dev.index, gid
        target.t_s, target.cum = now, list(dev.gi_cum.get(gid, [0.0] * len(dev.cum)))
        return N.NVML_SUCCESS

    def nvmlGpmMetricsGet(self, ref: Any) -> int:
        """Metrics from two samples: percent (0-100) and MiB/s; per-metric ``nvmlReturn``."""
        mg = _out(ref)
        if mg.version != N.NVML_GPM_METRICS_GET_VERSION:
            return N.NVML_ERROR_ARGUMENT_VERSION_MISMATCH
        s1, s2 = self._obj(mg.sample1), self._obj(mg.sample2)
        if not isinstance(s1, GpmSample) or not isinstance(s2, GpmSample):
            return N.NVML_ERROR_INVALID_ARGUMENT
        if (s1.device_index is None or s1.device_index != s2.device_index
                or s1.gpu_instance_id != s2.gpu_instance_id):
            return N.NVML_ERROR_INVALID_ARGUMENT
        if mg.numMetrics > N.NVML_GPM_METRIC_MAX:
            return N.NVML_ERROR_INVALID_ARGUMENT
        dt = s2.t_s - s1.t_s
        if dt <= 0:
            return N.NVML_ERROR_INVALID_ARGUMENT
        for i in range(mg.numMetrics):
            metric = mg.metrics[i]
            mid = int(metric.metricId)
            if mid in _GPM_METRICS:
                k = IDX[_GPM_METRICS[mid]]
                metric.value = max(0.0, min(100.0, (s2.cum[k] - s1.cum[k]) / dt * 100.0))
            elif mid in _GPM_RATES:
                k = IDX[_GPM_RATES[mid]]
                scale = self.nvlink_scale(self.devices[s1.device_index]) if (
                    _GPM_RATES[mid].startswith("nvlink")) else 1.0
                metric.value = (s2.cum[k] - s1.cum[k]) * scale / dt * 1000.0 / (1 << 20)
            elif mid in _GPM_ZERO:
                metric.value = 0.0
            else:
                metric.nvmlReturn = N.NVML_ERROR_NOT_SUPPORTED
                continue
            metric.nvmlReturn = N.NVML_SUCCESS
        return N.NVML_SUCCESS
