"""The simulated lab's faults and events: injected NVML errors, presets, Xids, ECC, PCIe replays.

Mixed into :class:`labkit.gpu.sim.lab.SimulatedLab`, which holds the state (see that class).
:func:`error_code` / :func:`error_name` translate between NVML return codes and their names.

Used in: lessons 01 (observation) and 02 (MIG), and the tests, through labkit.gpu
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pynvml as N

from labkit.gpu.sim.device import (
    ComputeInstance,
    GpuInstance,
    MigDevice,
    NvmlReturn,
    SimDevice,
)
from labkit.gpu.sim.lib.base import NvmlBase

#: Xid codes after which the GPU is lost until a reset (Xid 79: "GPU has fallen off the bus").
GPU_LOST_XIDS = frozenset({79})

#: Fault presets: function -> error, after the real-world reports in the observation cases.
PRESETS: dict[str, dict[str, str]] = {
    # consumer boards without power sensor or ECC (gpustat#83, nviwatch#28)
    "consumer": {"nvmlDeviceGetPowerUsage": "NotSupported",
                 "nvmlDeviceGetEnforcedPowerLimit": "NotSupported",
                 "nvmlDeviceGetPowerManagementLimit": "NotSupported",
                 "nvmlDeviceGetTotalEnergyConsumption": "NotSupported",
                 "nvmlDeviceGetTotalEccErrors": "NotSupported",
                 "nvmlDeviceGetRemappedRows": "NotSupported"},
    # a container or vGPU VM without PCIe/NVLink counters (jupyterlab-nvdashboard#114)
    "vgpu": {"nvmlDeviceGetPcieThroughput": "NotSupported",
             "nvmlDeviceGetNvLinkVersion": "NotSupported"},
    # an older driver: newer symbols are missing (FunctionNotFound)
    "old_driver": {"nvmlDeviceGetTemperatureV": "FunctionNotFound",
                   "nvmlGpmQueryDeviceSupport": "FunctionNotFound",
                   "nvmlGpmSampleGet": "FunctionNotFound",
                   "nvmlDeviceGetGpuInstanceProfileInfoByIdV": "FunctionNotFound"},
}


def error_code(error: int | str | type) -> int:
    """Return the ``NVML_ERROR_*`` code for a code, a name or a pynvml exception class.

    Accepts ``3``, ``"NotSupported"``, ``"NVML_ERROR_NOT_SUPPORTED"``,
    ``"NVMLError_NotSupported"`` or ``pynvml.NVMLError_NotSupported``.

    Raises
    ------
    ValueError
        For anything else.
    """
    if isinstance(error, int):
        if error not in N.NVMLError._valClassMapping:
            raise ValueError(f"unknown NVML error code {error}")
        return error
    if isinstance(error, type) and issubclass(error, N.NVMLError):
        error = error.__name__
    name = str(error)
    if name.startswith("NVML_ERROR_") and hasattr(N, name):
        return int(getattr(N, name))
    cls = getattr(N, name if name.startswith("NVMLError_") else f"NVMLError_{name}", None)
    if isinstance(cls, type) and issubclass(cls, N.NVMLError):
        for code, mapped in N.NVMLError._valClassMapping.items():
            if mapped is cls:
                return int(code)
    raise ValueError(f"unknown NVML error {error!r} (try 'NotSupported', 'GpuIsLost', 3)")


def error_name(code: int) -> str:
    """Return the short name of an NVML return code: ``"SUCCESS"``, ``"NOT_SUPPORTED"``, ..."""
    for name, value in vars(N).items():
        if value == code and isinstance(value, int) and (
                name.startswith("NVML_ERROR_") or name == "NVML_SUCCESS"):
            return name.removeprefix("NVML_ERROR_").removeprefix("NVML_")
    return str(code)


@dataclass
class _Fault:
    code: int
    device: int | None
    remaining: int | None


class _Library:
    """A simulated libnvidia-ml: its attributes are the C functions pynvml looks up.

    ``trace`` (set by :meth:`SimulatedLab.start_trace`) counts (function, return code) pairs;
    a function looked up and missing counts as ``"FunctionNotFound"``.
    """

    def __getattr__(self, name: str) -> Any:
        trace = self.__dict__.get("trace")
        if trace is not None and name.startswith("nvml"):
            trace[(name, "FunctionNotFound")] += 1
        raise AttributeError(name)

    def __repr__(self) -> str:
        return "<simulated libnvidia-ml (labkit.gpu.sim)>"




class FaultControls(NvmlBase):
    """Injected faults and events of the simulated lab (mixed into ``SimulatedLab``)."""

    _faults: dict[str, list[_Fault]]
    _latency_s: float
    _library: _Library

    # hooks the lab implements
    def _device(self, device: int) -> SimDevice:  # pragma: no cover - implemented by the lab
        raise NotImplementedError

    def _at(self, at_s: float | None, action: Callable[[], None]) -> None:  # pragma: no cover
        raise NotImplementedError

    def _wrap(self, name: str,
              method: Callable[..., Any]) -> Callable[..., Any]:  # pragma: no cover
        raise NotImplementedError

    # --- faults and events ----------------------------------------------------------------------

    def _c_names(self, function: str) -> list[str]:
        names = [n for n in (function, f"{function}_v2", f"{function}_v3", f"{function}V")
                 if hasattr(type(self), n) or n in PRESET_ONLY]
        if not names:
            raise ValueError(f"no simulated NVML function {function!r}")
        return names

    def inject(self, function: str, error: int | str | type, *, device: int | None = None,
               count: int | None = None, field: int | None = None) -> None:
        """Make calls fail with an NVML error.

        Parameters
        ----------
        function : str
            pynvml or C name (``"nvmlDeviceGetPowerUsage"``; ``"nvmlDeviceGetCount"`` also
            matches ``..._v2``). ``"FunctionNotFound"`` as error removes the function instead.
        error : int, str or pynvml exception class
            See :func:`error_code`.
        device : int, optional
            Only calls on this GPU (its MIG devices and instances included); all GPUs if None.
        count : int, optional
            Fail this many calls, then work again; forever if None.
        field : int, optional
            With ``nvmlDeviceGetFieldValues``: fail only this field ID (its entry's
            ``nvmlReturn``), the call itself succeeds.

        Raises
        ------
        ValueError
            For an unknown function, error, device or a count < 1.
        """
        code = error_code(error)
        if device is not None:
            self._device(device)
        if count is not None and count < 1:
            raise ValueError(f"count must be >= 1, got {count}")
        with self._lock:
            if field is not None:
                self._field_faults[(device, int(field))] = code
                return
            if code == N.NVML_ERROR_FUNCTION_NOT_FOUND and device is None and count is None:
                self.remove_function(function)
                return
            for name in self._c_names(function):
                self._faults.setdefault(name, []).append(_Fault(code, device, count))

    def _fault_code(self, name: str, faults: list[_Fault], args: tuple[Any, ...]) -> int | None:
        index: int | None = None
        if any(f.device is not None for f in faults):
            index = self._index_of(name, args)
        for fault in faults:
            if fault.device is not None and fault.device != index:
                continue
            if fault.remaining is not None:
                fault.remaining -= 1
                if fault.remaining <= 0:
                    faults.remove(fault)
            return fault.code
        return None

    def _index_of(self, name: str, args: tuple[Any, ...]) -> int | None:
        if not args:
            return None
        first = args[0]
        if name == "nvmlDeviceGetHandleByIndex_v2":
            return first if isinstance(first, int) else int(first.value)
        try:
            obj = self._obj(first)
        except (NvmlReturn, TypeError, ValueError):
            return None
        if isinstance(obj, MigDevice):
            obj = obj.parent
        elif isinstance(obj, ComputeInstance):
            obj = obj.gpu_instance.device
        elif isinstance(obj, GpuInstance):
            obj = obj.device
        return obj.index if isinstance(obj, SimDevice) else None

    def remove_function(self, function: str) -> None:
        """Remove a function from the library: calls raise ``NVMLError_FunctionNotFound``."""
        from labkit.gpu import nvml

        with self._lock:
            for name in self._c_names(function):
                if hasattr(self._library, name):
                    delattr(self._library, name)
            nvml.clear_function_cache()

    def restore_function(self, function: str) -> None:
        """Put a removed function back."""
        from labkit.gpu import nvml

        with self._lock:
            for name in self._c_names(function):
                if hasattr(type(self), name):
                    setattr(self._library, name, self._wrap(name, getattr(self, name)))
            nvml.clear_function_cache()

    def clear_faults(self) -> None:
        """Remove every injected fault (removed functions come back, init works again)."""
        from labkit.gpu import nvml

        with self._lock:
            self._faults.clear()
            self._field_faults.clear()
            self._init_error = None
            self._latency_s = 0.0
            self._library = self._rebuild_library()
            nvml.clear_function_cache()

    def _rebuild_library(self) -> _Library:
        lib = self._library
        for name in dir(type(self)):
            if name.startswith("nvml") and not hasattr(lib, name):
                setattr(lib, name, self._wrap(name, getattr(self, name)))
        return lib

    def fail_init(self, error: int | str | type | None) -> None:
        """Make ``nvmlInit`` fail with ``error`` (LibraryNotFound, DriverNotLoaded,
        LibRmVersionMismatch, ...); None makes it work again. Takes effect at the next init."""
        self._init_error = None if error is None else error_code(error)

    def set_call_latency(self, seconds: float) -> None:
        """Make every NVML call take ``seconds`` (virtual clock: advances it; wall: sleeps). [s]"""
        if not math.isfinite(seconds) or not 0 <= seconds <= 1:
            raise ValueError(f"latency must be in [0, 1] s, got {seconds!r}")
        self._latency_s = float(seconds)

    def apply_preset(self, preset: str, device: int | None = None) -> None:
        """Inject a named set of faults (:data:`PRESETS`: consumer, vgpu, old_driver)."""
        if preset not in PRESETS:
            raise ValueError(f"preset must be one of {sorted(PRESETS)}, got {preset!r}")
        for function, error in PRESETS[preset].items():
            if function in PRESET_ONLY:
                continue
            if error == "FunctionNotFound" and device is None:
                self.remove_function(function)
            else:
                self.inject(function, error, device=device)
        if preset == "vgpu":
            for fid in (N.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX,
                        N.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, N.NVML_FI_DEV_NVLINK_LINK_COUNT):
                self.inject("nvmlDeviceGetFieldValues", "NotSupported", device=device, field=fid)

    def _emit(self, device: int, event_type: int, data: int) -> None:
        for es in self._event_sets:
            if es.registrations.get(device, 0) & event_type:
                es.queue.append((device, event_type, data))
        self._cond.notify_all()

    def xid(self, device: int, code: int, *, at_s: float | None = None) -> None:
        """Raise an Xid error on a GPU now or at ``at_s`` (event ``nvmlEventTypeXidCriticalError``).

        Xid 79 ("fallen off the bus") loses the GPU: every call on it, and
        ``nvmlDeviceGetHandleByIndex`` for its index, raise ``NVMLError_GpuIsLost`` until
        :meth:`reset_gpu`.
        """
        dev = self._device(device)

        def action() -> None:
            self._emit(device, N.nvmlEventTypeXidCriticalError, int(code))
            if int(code) in GPU_LOST_XIDS:
                dev.sync(self.now())
                dev.lost = True

        self._at(at_s, action)

    def ecc_error(self, device: int, *, uncorrected: bool = False, count: int = 1,
                  at_s: float | None = None) -> None:
        """Count ECC errors on a GPU (volatile and aggregate) and send the ECC event.

        An uncorrectable error on a board with row remapping also remaps a row and leaves the
        remap pending until :meth:`reset_gpu`.
        """
        dev = self._device(device)
        if count < 1:
            raise ValueError(f"count must be >= 1, got {count}")
        kind = N.NVML_MEMORY_ERROR_TYPE_UNCORRECTED if uncorrected else (
            N.NVML_MEMORY_ERROR_TYPE_CORRECTED)

        def action() -> None:
            for counter in (N.NVML_VOLATILE_ECC, N.NVML_AGGREGATE_ECC):
                dev.ecc[(kind, counter)] = dev.ecc.get((kind, counter), 0) + count
            if uncorrected:
                dev.remapped_rows[1] += count
                dev.remapped_rows[2] = 1
            self._emit(device, N.nvmlEventTypeDoubleBitEccError if uncorrected
                       else N.nvmlEventTypeSingleBitEccError, count)

        self._at(at_s, action)

    def pcie_replays(self, device: int, count: int = 1) -> None:
        """Add PCIe replays (field ``NVML_FI_DEV_PCIE_REPLAY_COUNTER``)."""
        self._device(device).pcie_replays += int(count)

    def describe(self) -> str:
        """Return one line per GPU: index, model, MIG mode, workloads, processes."""
        lines = []
        with self._lock:
            for dev in self.devices:
                names = ", ".join(w.scenario.name for w in dev.workloads if w.stop_s is None)
                mig = "-" if dev.model.mig is None else ("on" if dev.mig_enabled else "off")
                lines.append(f"GPU {dev.index}: {dev.model.short_name} MIG {mig}"
                             f"{' LOST' if dev.lost else ''}; workloads: {names or 'none'}; "
                             f"processes: {len(dev.processes)}")
        return "\n".join(lines)



#: Functions named in presets that the simulator does not implement (they are missing anyway).
PRESET_ONLY: frozenset[str] = frozenset()
