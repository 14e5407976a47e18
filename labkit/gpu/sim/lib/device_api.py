"""The simulated C functions of a physical GPU: identity, memory, power, utilization, events.

Semantics follow ``nvml.h`` (NVML API version 13); see :mod:`labkit.gpu.sim.lib`.

Used in: lessons 01 (observation) and 02 (MIG), through labkit.gpu
"""

from __future__ import annotations

from typing import Any

import pynvml as N

from labkit.gpu.sim.activity import IDX
from labkit.gpu.sim.device import (
    POWER_WINDOW_S,
    UINT_MAX,
    UTIL_WINDOW_S,
    MigDevice,
    NvmlReturn,
    SimDevice,
    listed_processes,
    put_process_entry,
)
from labkit.gpu.sim.device import out_param as _out
from labkit.gpu.sim.device import scalar_arg as _v
from labkit.gpu.sim.lib.base import (
    _ERROR_STRINGS,
    _EVENTS_ECC,
    _EVENTS_SUPPORTED,
    EventSet,
    NvmlBase,
    _c_void_p,
    _put_handle,
    _put_str,
)
from labkit.gpu.sim.tools_api import NVLINK_FIELDS


class DeviceApi(NvmlBase):
    """System, device identity, memory, processes, power, clocks, utilization, health, events."""

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
        procs = listed_processes(self._any(handle))
        count = _out(count_ref)
        if buf is None or count.value < len(procs):
            needed = len(procs)
            count.value = needed
            return N.NVML_SUCCESS if needed == 0 else N.NVML_ERROR_INSUFFICIENT_SIZE
        for i, p in enumerate(procs):
            put_process_entry(buf[i], p)
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

