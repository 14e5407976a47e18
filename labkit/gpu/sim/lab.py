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
from typing import Any

import pynvml as N

from labkit.gpu.sim.device import (
    NvmlReturn,
    SimDevice,
    _noise,
)
from labkit.gpu.sim.lab_controls import READINGS, LabControls
from labkit.gpu.sim.lab_faults import (
    PRESETS,
    FaultControls,
    _Fault,
    _Library,
    error_code,
    error_name,
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

class SimulatedLab(NvmlApi, LabControls, FaultControls, ToolsApi):
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
