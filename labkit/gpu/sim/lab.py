"""The simulated lab: GPUs, a clock, and the control API lessons and tests use.

:class:`SimulatedLab` holds the simulated GPUs and implements the C functions (it mixes in
:class:`labkit.gpu.sim.lib.NvmlApi`); :attr:`SimulatedLab.library` is the object installed under
pynvml in place of ``libnvidia-ml.so.1``. Everything outside the ``nvml*`` names is the control
API (see the package docstring of :mod:`labkit.gpu.sim` for a tour).

Used in: lessons 01 (observation) and 02 (MIG), through labkit.gpu
"""

from __future__ import annotations

import ctypes
import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pynvml as N

from labkit.gpu.sim.activity import Scenario, scenario
from labkit.gpu.sim.device import (
    ComputeInstance,
    GpuInstance,
    MigDevice,
    NvmlReturn,
    Process,
    SimDevice,
    Workload,
    _noise,
)
from labkit.gpu.sim.lib import NO_INIT_FUNCTIONS, EventSet, NvmlApi
from labkit.gpu.sim.tools_api import ToolsApi
from labkit.gpumodels import GpuModel

__all__ = ["PRESETS", "READINGS", "SimulatedLab", "error_code", "error_name"]

#: Default simulated driver: R580 (the MIG user guide's v580 examples), CUDA 13.0.
DEFAULT_DRIVER = "580.65.06"
DEFAULT_CUDA = 13000
#: PCI buses of the eight GPUs of a DGX H100 (nvidia-smi topology of a DGX H100; inferred).
BUSES = (0x1B, 0x43, 0x52, 0x61, 0x9D, 0xC3, 0xD1, 0xDF)
#: Xid codes after which the GPU is lost until a reset (Xid 79: "GPU has fallen off the bus").
GPU_LOST_XIDS = frozenset({79})
#: Readings ``pin()`` can fix to an exact value, by NVML unit.
READINGS = ("power_usage_mw", "energy_mj", "temperature_c", "utilization_gpu_pct", "sm_clock_mhz")

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


class SimulatedLab(NvmlApi, ToolsApi):
    """Simulated lab GPUs behind pynvml, and the knobs to drive them.

    Parameters
    ----------
    models : sequence of GpuModel
        One per GPU, in index order.
    seed : int, default 0
        Seeds UUIDs and the (small, deterministic) noise on power and temperature readings.
    clock : {"wall", "virtual"}, default "wall"
        ``"wall"``: time runs with the wall clock (live lessons). ``"virtual"``: time stands
        still until :meth:`advance` (tests, reproducible notebooks).
    noise : bool, default True
        Whether power and temperature readings jitter a little (deterministically).
    driver_version : str, default "580.65.06"
        What ``nvmlSystemGetDriverVersion`` reports.

    Raises
    ------
    ValueError
        On an empty model list or an unknown clock.
    """

    def __init__(self, models: Sequence[GpuModel], *, seed: int = 0, clock: str = "wall",
                 noise: bool = True, driver_version: str = DEFAULT_DRIVER) -> None:
        if not models:
            raise ValueError("a simulated lab needs at least one GPU model")
        if clock not in ("wall", "virtual"):
            raise ValueError(f"clock must be 'wall' or 'virtual', got {clock!r}")
        if len(models) > 64:
            raise ValueError(f"at most 64 simulated GPUs, got {len(models)}")
        self.seed = int(seed)
        self.clock = clock
        self.driver_version = driver_version
        self.cuda_driver_version = DEFAULT_CUDA
        self.mig_rights = True
        self.reset_possible = True
        self.legacy_mig_queries = False
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._handles: dict[int, Any] = {}
        self._init_count = 0
        self._init_error: int | None = None
        self._event_sets: list[EventSet] = []
        self._process_names: dict[int, str] = {}
        self._field_faults: dict[tuple[int | None, int], int] = {}
        self._faults: dict[str, list[_Fault]] = {}
        self._due: list[tuple[float, int, Callable[[], None]]] = []
        self._due_seq = 0
        self._latency_s = 0.0
        self._virtual_s = 0.0
        self._wall_origin = time.monotonic()
        self._next_pid = 4242
        self._mig_serial = 0
        self.devices: list[SimDevice] = []
        for i, model in enumerate(models):
            bus = BUSES[i] if i < len(BUSES) else 0x20 + i
            dev = SimDevice(i, model, self._uuid("GPU", i), bus, self.seed, noise)
            self.devices.append(self._register(dev))
        self._library = self._build_library()

    # --- plumbing -----------------------------------------------------------------------------

    @property
    def library(self) -> _Library:
        """The object installed as ``pynvml.nvmlLib`` (attributes: the C functions)."""
        return self._library

    def _build_library(self) -> _Library:
        lib = _Library()
        for name in dir(type(self)):
            if name.startswith("nvml"):
                setattr(lib, name, self._wrap(name, getattr(self, name)))
        return lib

    def _wrap(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        lab = self
        needs_init = name not in NO_INIT_FUNCTIONS
        if name == "nvmlErrorString":  # pynvml sets .restype on it: needs a plain function

            def error_string(*args: Any) -> Any:
                return method(*args)

            return error_string

        def call(*args: Any) -> Any:
            result = run(*args)
            trace = lab._library.__dict__.get("trace")
            if trace is not None:
                trace[(name, result if isinstance(result, int) else 0)] += 1
            return result

        def run(*args: Any) -> Any:
            with lab._lock:
                if lab._latency_s:
                    lab._pay_latency()
                if needs_init and lab._init_count <= 0:
                    return N.NVML_ERROR_UNINITIALIZED
                if lab._due and lab._due[0][0] <= lab.now():
                    lab._run_due()
                faults = lab._faults.get(name)
                if faults:
                    code = lab._fault_code(name, faults, args)
                    if code is not None:
                        return code
                try:
                    return method(*args)
                except NvmlReturn as err:
                    return err.code

        call.__name__ = call.__qualname__ = name
        return call

    def start_trace(self) -> Counter[tuple[str, int | str]]:
        """Count every NVML call from now on: {(C function, return code): calls}.

        Return codes are ``NVML_*`` ints; ``"FunctionNotFound"`` for a name looked up and
        missing. Used to list what a tool calls (``LABKIT_SIM_TRACE``, docs/sim-nvml-calls.md).
        """
        trace: Counter[tuple[str, int | str]] = Counter()
        self._library.__dict__["trace"] = trace
        return trace

    def _register(self, obj: Any) -> Any:
        buf = ctypes.create_string_buffer(1)
        obj._buf = buf
        obj._addr = ctypes.addressof(buf)
        self._handles[obj._addr] = obj
        return obj

    def _unregister(self, obj: Any) -> None:
        self._handles.pop(getattr(obj, "_addr", 0), None)

    def _uuid(self, prefix: str, *keys: int) -> str:
        words = [int((_noise(self.seed, 77, *keys, j) + 1.0) * (1 << 31)) & 0xFFFFFFFF
                 for j in range(4)]
        h = "".join(f"{w:08x}" for w in words)
        return f"{prefix}-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"

    def _new_mig_uuid(self, dev: SimDevice) -> str:
        self._mig_serial += 1
        return self._uuid("MIG", 1000 + dev.index, self._mig_serial)

    def _waits_virtually(self) -> bool:
        return self.clock == "virtual"

    def _pay_latency(self) -> None:
        if self.clock == "virtual":
            self._virtual_s += self._latency_s
        else:
            time.sleep(self._latency_s)

    def _device(self, device: int) -> SimDevice:
        if not isinstance(device, int) or not 0 <= device < len(self.devices):
            raise ValueError(f"device must be an index 0..{len(self.devices) - 1}, got {device!r}")
        return self.devices[device]

    # --- time ---------------------------------------------------------------------------------

    def now(self) -> float:
        """Return the simulation time since the lab started. [s]

        The wall clock ticks in whole milliseconds, so the calls of one dashboard refresh
        share one state update (NVML's own counters refresh far less often).
        """
        if self.clock == "virtual":
            return self._virtual_s
        return math.floor((time.monotonic() - self._wall_origin) * 1000.0) / 1000.0

    def advance(self, seconds: float) -> float:
        """Move the virtual clock forward and return the new time (virtual clock only). [s]

        Raises
        ------
        ValueError
            On the wall clock, or for a negative or non-finite step.
        """
        if self.clock != "virtual":
            raise ValueError("advance() needs clock='virtual'; the wall clock runs by itself")
        if not math.isfinite(seconds) or seconds < 0:
            raise ValueError(f"seconds must be finite and >= 0, got {seconds!r}")
        with self._lock:
            target = self._virtual_s + seconds
            while self._due and self._due[0][0] <= target:
                self._virtual_s = max(self._virtual_s, self._due[0][0])
                self._run_due()
            self._virtual_s = target
            return target

    def _at(self, at_s: float | None, action: Callable[[], None]) -> None:
        with self._lock:
            if at_s is None or at_s <= self.now():
                action()
                return
            self._due_seq += 1
            self._due.append((float(at_s), self._due_seq, action))
            self._due.sort(key=lambda item: (item[0], item[1]))

    def _run_due(self) -> None:
        now = self.now()
        while self._due and self._due[0][0] <= now:
            _, _, action = self._due.pop(0)
            action()

    # --- processes and workloads ----------------------------------------------------------------

    def add_process(self, device: int = 0, *, name: str = "python", used_memory_mib: int = 512,
                    gpu_instance_id: int | None = None, compute_instance_id: int | None = None,
                    pid: int | None = None) -> int:
        """Attach a process to a GPU (or a MIG device) and return its PID.

        A process holds the GPU: MIG mode changes stay pending (``IN_USE``) and instances it runs
        in cannot be destroyed until it is removed.

        Raises
        ------
        ValueError
            For an unknown device, GPU instance or compute instance, or negative memory.
        """
        with self._lock:
            dev = self._device(device)
            if used_memory_mib < 0:
                raise ValueError(f"used_memory_mib must be >= 0, got {used_memory_mib}")
            self._check_instance(dev, gpu_instance_id, compute_instance_id)
            if pid is None:
                pid = self._default_pid()
            dev.sync(self.now())
            dev.processes.append(Process(pid, name, int(used_memory_mib), dev.index,
                                         gpu_instance_id, compute_instance_id))
            self._process_names[pid] = name
            return pid

    def _default_pid(self) -> int:
        """PID for a process nobody named: made-up ones (4242, 4243, ...) in a private lab."""
        pid = self._next_pid
        self._next_pid += 1
        return pid

    def _check_instance(self, dev: SimDevice, gi_id: int | None, ci_id: int | None) -> None:
        if gi_id is None:
            if ci_id is not None:
                raise ValueError("compute_instance_id needs a gpu_instance_id")
            return
        gi = dev.gpu_instances.get(gi_id)
        if gi is None:
            raise ValueError(f"GPU {dev.index} has no GPU instance {gi_id}")
        if ci_id is not None and ci_id not in gi.compute_instances:
            raise ValueError(f"GPU instance {gi_id} has no compute instance {ci_id}")

    def remove_process(self, pid: int) -> None:
        """Detach a process (stopping its workload, if it has one).

        Raises
        ------
        ValueError
            If no GPU has that process.
        """
        with self._lock:
            now = self.now()
            for dev in self.devices:
                for proc in dev.processes:
                    if proc.pid == pid:
                        dev.sync(now)
                        for w in dev.workloads:
                            if w.pid == pid and w.stop_s is None:
                                dev.stop_workload(now, w)
                        dev.processes.remove(proc)
                        self._process_names.pop(pid, None)
                        return
            raise ValueError(f"no process {pid} on any simulated GPU")

    def start(self, name: str, device: int = 0, *, gpu_instance_id: int | None = None,
              compute_instance_id: int | None = None) -> Workload:
        """Start a workload scenario (``labkit.gpu.sim.SCENARIOS``) on a GPU or MIG device.

        Parameters
        ----------
        name : str
            ``"idle"``, ``"tiny_kernel"``, ``"memory_bound"``, ``"training"``,
            ``"inference_small_batch"``, ``"dataloader_starved"``, ``"collective_stall"``,
            ``"burn_in"``.
        device : int, default 0
            GPU index.
        gpu_instance_id, compute_instance_id : int, optional
            With MIG enabled, the MIG device to run on (GI required; the GI's first CI by
            default).

        Returns
        -------
        Workload
            Pass it to :meth:`stop`; ``.pid`` is its process (None for ``idle``).

        Raises
        ------
        ValueError
            For an unknown scenario, device or instance, a MIG GPU without a GI given, or a GI
            without a compute instance (no MIG device to run on).
        """
        scn: Scenario = scenario(name)
        with self._lock:
            dev = self._device(device)
            weight, sms, memory_mib = 1.0, dev.model.sm_count, dev.model.memory_total_mib
            ci_id = compute_instance_id
            if dev.mig_enabled:
                if gpu_instance_id is None:
                    raise ValueError(f"GPU {device} is in MIG mode: give gpu_instance_id")
                gi = dev.gpu_instances.get(gpu_instance_id)
                if gi is None:
                    raise ValueError(f"GPU {device} has no GPU instance {gpu_instance_id}")
                if not gi.compute_instances:
                    raise ValueError(f"GPU instance {gpu_instance_id} has no compute instance: "
                                     "no MIG device to run on")
                ci_id = min(gi.compute_instances) if ci_id is None else ci_id
                self._check_instance(dev, gpu_instance_id, ci_id)
                sms = gi.profile.sm_count
                weight = sms / dev.model.sm_count
                memory_mib = gi.profile.memory_mib
            elif gpu_instance_id is not None:
                raise ValueError(f"GPU {device} is not in MIG mode")
            pid = None
            if scn.creates_process:
                used = max(1, math.ceil(scn.memory_frac * memory_mib))
                pid = self.add_process(device, name=f"python ({scn.name})", used_memory_mib=used,
                                       gpu_instance_id=gpu_instance_id,
                                       compute_instance_id=ci_id)
            now = self.now()
            workload = Workload(
                scenario=scn, device_index=device, gpu_instance_id=gpu_instance_id,
                compute_instance_id=ci_id, pid=pid, start_s=now, weight=weight,
                vectors=tuple(p.vector(sms) for p in scn.phases),
                durations=tuple(p.duration_s for p in scn.phases))
            dev.add_workload(now, workload)
            return workload

    def stop(self, workload: Workload | None = None, *, device: int | None = None) -> int:
        """Stop one workload, or every workload on ``device`` (or on all GPUs); return how many.

        Their processes exit with them.
        """
        with self._lock:
            now = self.now()
            stopped = 0
            for dev in self.devices:
                if device is not None and dev.index != device:
                    continue
                for w in list(dev.workloads):
                    if w.stop_s is None and (workload is None or w is workload):
                        dev.stop_workload(now, w)
                        stopped += 1
                        if w.pid is not None:
                            dev.processes = [p for p in dev.processes if p.pid != w.pid]
                            self._process_names.pop(w.pid, None)
            return stopped

    def workloads(self, device: int | None = None) -> list[Workload]:
        """Return the running workloads (of one GPU, or all)."""
        with self._lock:
            return [w for dev in self.devices for w in dev.workloads
                    if w.stop_s is None and (device is None or dev.index == device)]

    # --- settings -------------------------------------------------------------------------------

    def set_power_limit(self, device: int, watts: float) -> None:
        """Set a GPU's power limit (within its constraints). [W]

        Raises
        ------
        ValueError
            Outside [min_power_limit_w, max_power_limit_w].
        """
        with self._lock:
            dev = self._device(device)
            b = dev.board
            if not b.min_power_limit_w <= watts <= b.max_power_limit_w:
                raise ValueError(f"power limit must be in [{b.min_power_limit_w}, "
                                 f"{b.max_power_limit_w}] W, got {watts}")
            dev.set_power_limit(self.now(), watts)

    def set_ambient(self, device: int, celsius: float) -> None:
        """Set the inlet temperature a GPU cools towards (e.g. a failing fan wall). [degC]"""
        with self._lock:
            dev = self._device(device)
            if not -20 <= celsius <= 80:
                raise ValueError(f"ambient must be in [-20, 80] degC, got {celsius}")
            dev.sync(self.now())
            dev.ambient_c = float(celsius)

    def pin(self, device: int, reading: str, value: float | None) -> None:
        """Fix one reading of a GPU to an exact value (None releases it).

        ``reading`` is one of :data:`READINGS`, in NVML's units (``power_usage_mw`` in mW,
        ``energy_mj`` in mJ, ...). For unit-conversion exercises and exact tests.
        """
        if reading not in READINGS:
            raise ValueError(f"reading must be one of {READINGS}, got {reading!r}")
        with self._lock:
            dev = self._device(device)
            if value is None:
                dev.pins.pop(reading, None)
            else:
                dev.pins[reading] = float(value)

    def set_mig_rights(self, allowed: bool) -> None:
        """Grant or revoke the right to change MIG (root / mig-config capability).

        Without it ``nvmlDeviceSetMigMode`` and the create/destroy calls raise
        ``NVMLError_NoPermission``; queries still work.
        """
        self.mig_rights = bool(allowed)

    def set_reset_possible(self, possible: bool) -> None:
        """Model a VM without GPU reset: enabling MIG then stays pending (``RESET_REQUIRED``)."""
        self.reset_possible = bool(possible)

    def set_legacy_mig_queries(self, legacy: bool) -> None:
        """Model a pre-R550 driver: profile and placement queries need MIG mode on."""
        self.legacy_mig_queries = bool(legacy)

    def reset_gpu(self, device: int) -> None:
        """Reset a GPU (``nvidia-smi --gpu-reset``): applies a pending MIG mode, clears a lost
        state, volatile ECC counters and pending row remaps; GPU instances do not survive.

        Raises
        ------
        ValueError
            If processes still hold the GPU (as the real reset refuses).
        """
        with self._lock:
            dev = self._device(device)
            if dev.processes:
                raise ValueError(f"GPU {device} is in use by {len(dev.processes)} process(es)")
            dev.sync(self.now())
            dev.lost = False
            for key in [k for k in dev.ecc if k[1] == N.NVML_VOLATILE_ECC]:
                dev.ecc[key] = 0
            dev.remapped_rows[2] = 0
            self._clear_instances(dev)
            dev.mig_current = dev.mig_pending

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
