"""State and physics of one simulated GPU: workloads, telemetry, MIG instances, health.

Everything here is in NVML's own terms and units; ``labkit.gpu.sim.lib`` turns it into the C
API. Errors are raised as :class:`NvmlReturn` carrying an ``NVML_ERROR_*`` code.

Telemetry model (teaching model, documented in ``labkit.gpu.sim.activity``): running workloads
give piecewise-constant activity; demanded power = idle + dyn_power x (TDP - idle), drawn power
= min(demanded, power limit); temperature follows drawn power with a first-order lag towards
ambient + (T_at_TDP - ambient) x P / TDP; energy integrates drawn power; the SM clock is the
boost clock when busy, the idle clock (reason ``GpuIdle``) when not, and drops in proportion at
the power limit (reason ``SwPowerCap``) and above the slowdown temperature
(``SwThermalSlowdown``). ``utilization.gpu`` and the power reading are averages over the last
second (``power_averaged`` boards; GA100 reads instantaneous power), as NVML documents.

Used in: lessons 01 (observation) and 02 (MIG), through labkit.gpu.sim
"""

from __future__ import annotations

import ctypes
import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pynvml as N

from labkit.gpu.sim.activity import CHANNELS, IDX, Scenario
from labkit.gpumodels import GiProfile, GpuModel
from labkit.mig.placement import CiProfile

__all__ = [
    "ComputeInstance",
    "GpuInstance",
    "Handle",
    "MigDevice",
    "NvmlReturn",
    "Process",
    "SimDevice",
    "Workload",
    "listed_processes",
    "put_process_entry",
]

#: NVML's "no instance" in a process entry's GPU/compute-instance ID (``0xFFFFFFFF``, nvml.h).
UINT_MAX = 0xFFFFFFFF

NCH = len(CHANNELS)
_KERNEL, _DYN = IDX["kernel"], IDX["dyn_power"]
UTIL_WINDOW_S = 1.0  # NVML: the sample period is between 1 s and 1/6 s depending on the product
POWER_WINDOW_S = 1.0  # NVML: Ampere+ (except GA100) report a 1-second average
HISTORY_S = 10.0  # how long stopped workloads are kept for windowed readings
MAX_SEGMENTS = 256  # above this, periodic workloads are integrated with their cycle mean


class Handle:
    """Something pynvml holds an opaque pointer to: ``_addr`` is that pointer's value."""

    _addr: int = 0
    _buf: Any = None


class NvmlReturn(Exception):
    """An NVML return code raised inside the simulator; the C-API layer returns ``code``."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def scalar_arg(x: Any) -> int:
    """Return a scalar argument of an NVML call as int (Python int or ctypes value)."""
    return x if isinstance(x, int) else int(x.value)


def out_param(ref: Any) -> Any:
    """Return the ctypes object behind an out-parameter (``byref(x)``, ``pointer(x)`` or ``x``).

    Raises
    ------
    NvmlReturn
        INVALID_ARGUMENT for a NULL out-parameter (``None``), as the C API.
    """
    if ref is None:
        raise NvmlReturn(N.NVML_ERROR_INVALID_ARGUMENT)
    obj = getattr(ref, "_obj", None)
    if obj is not None:
        return obj
    if isinstance(ref, ctypes._Pointer):
        return ref.contents
    return ref


@dataclass(eq=False)
class Process:
    """A process holding a (simulated) GPU: what ``nvmlDeviceGetComputeRunningProcesses`` lists."""

    pid: int
    name: str
    used_memory_mib: int
    device_index: int
    gpu_instance_id: int | None = None
    compute_instance_id: int | None = None


@dataclass(eq=False)
class Workload:
    """A scenario running on a GPU or a MIG GPU instance, from ``start_s`` (to ``stop_s``).

    ``vectors`` are the phases' channel vectors for the SMs it runs on; ``weight`` is its share
    of the whole GPU's SMs (1 without MIG).
    """

    scenario: Scenario
    device_index: int
    gpu_instance_id: int | None
    compute_instance_id: int | None
    pid: int | None
    start_s: float
    weight: float
    vectors: tuple[tuple[float, ...], ...]
    durations: tuple[float, ...]
    stop_s: float | None = None
    _cycle: tuple[float, ...] = field(default=(), repr=False)
    _ends: tuple[float, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        if self.periodic:
            self._cycle = tuple(math.fsum(v[i] * d for v, d in zip(self.vectors, self.durations,
                                                                     strict=True))
                                for i in range(NCH))
            ends, total = [], 0.0
            for d in self.durations:
                total += d
                ends.append(total)
            self._ends = tuple(ends)

    @property
    def periodic(self) -> bool:
        """Whether the scenario cycles through several phases."""
        return len(self.vectors) > 1

    @property
    def period_s(self) -> float:
        """The cycle length (``inf`` when steady). [s]"""
        return self._ends[-1] if self.periodic else math.inf

    def active(self, a: float, b: float) -> bool:
        """Whether it runs at some time in [a, b)."""
        return self.start_s < b and (self.stop_s is None or self.stop_s > a)

    def clip(self, t: float) -> float:
        """Clip ``t`` into [start_s, stop_s]."""
        t = max(t, self.start_s)
        return t if self.stop_s is None else min(t, self.stop_s)

    def vector_at(self, t: float) -> tuple[float, ...]:
        """Return the channel vector at time ``t`` (the workload must be running then)."""
        if not self.periodic:
            return self.vectors[0]
        phase_t = (t - self.start_s) % self._ends[-1]
        for i, end in enumerate(self._ends):
            if phase_t < end:
                return self.vectors[i]
        return self.vectors[-1]

    def mean(self) -> tuple[float, ...]:
        """Return the cycle-mean channel vector."""
        if not self.periodic:
            return self.vectors[0]
        return tuple(c / self._ends[-1] for c in self._cycle)

    def cum(self, t: float) -> list[float]:
        """Return the channel integrals from ``start_s`` to ``clip(t)``. [channel x s]"""
        dt = self.clip(t) - self.start_s
        if not self.periodic:
            return [v * dt for v in self.vectors[0]]
        period = self._ends[-1]
        k = math.floor(dt / period)
        rest = dt - k * period
        out = [c * k for c in self._cycle]
        begin = 0.0
        for vec, end in zip(self.vectors, self._ends, strict=True):
            if rest <= begin:
                break
            span = min(rest, end) - begin
            for i in range(NCH):
                out[i] += vec[i] * span
            begin = end
        return out

    def boundaries(self, a: float, b: float) -> Iterator[float]:
        """Yield the phase changes strictly inside (a, b)."""
        if not self.periodic:
            return
        period = self._ends[-1]
        lo, hi = max(a, self.start_s), b if self.stop_s is None else min(b, self.stop_s)
        k = math.floor((lo - self.start_s) / period)
        while True:
            base = self.start_s + k * period
            if base >= hi:
                return
            for end in (0.0, *self._ends):
                t = base + end
                if lo < t < hi:
                    yield t
            k += 1


@dataclass(eq=False)
class ComputeInstance(Handle):
    """A compute instance inside a GPU instance; with it the pair is a MIG device."""

    gpu_instance: GpuInstance
    id: int
    profile: CiProfile
    start: int
    mig_device: MigDevice | None = None

    @property
    def name(self) -> str:
        """``"3g.40gb"`` for the full CI, ``"1c.3g.40gb"`` for a smaller one."""
        gi = self.gpu_instance.profile
        if self.profile.slices == gi.compute_slices:
            return gi.name
        return f"{self.profile.slices}c.{gi.name}"


@dataclass(eq=False)
class GpuInstance(Handle):
    """A GPU instance: a profile at a placement, with its compute instances."""

    device: SimDevice
    id: int
    profile: GiProfile
    start: int
    compute_instances: dict[int, ComputeInstance] = field(default_factory=dict)


@dataclass(eq=False)
class MigDevice(Handle):
    """What CUDA sees: one GPU instance plus one compute instance, with a ``MIG-`` UUID."""

    parent: SimDevice
    gpu_instance: GpuInstance
    compute_instance: ComputeInstance
    index: int
    uuid: str

    @property
    def memory_mib(self) -> int:
        """The GI profile's memory (a MIG device's total memory equals ``memorySizeMB``). [MiB]"""
        return self.gpu_instance.profile.memory_mib


def listed_processes(obj: SimDevice | MigDevice) -> list[Process]:
    """The processes NVML lists for a handle: a MIG device's own, or all of a physical GPU's."""
    if isinstance(obj, MigDevice):
        return [p for p in obj.parent.processes
                if p.gpu_instance_id == obj.gpu_instance.id
                and p.compute_instance_id == obj.compute_instance.id]
    return list(obj.processes)


def put_process_entry(entry: Any, p: Process) -> None:
    """Fill an ``nvmlProcessInfo_t`` / ``nvmlProcessDetail_v1`` entry's common fields.

    ``pid``, ``usedGpuMemory`` [bytes] and the GPU/compute-instance IDs (:data:`UINT_MAX` for
    a process on a whole GPU).
    """
    entry.pid, entry.usedGpuMemory = p.pid, p.used_memory_mib << 20
    entry.gpuInstanceId = UINT_MAX if p.gpu_instance_id is None else p.gpu_instance_id
    entry.computeInstanceId = (UINT_MAX if p.compute_instance_id is None
                               else p.compute_instance_id)


def _noise(seed: int, *keys: int) -> float:
    """Return a deterministic pseudo-random number in [-1, 1) (splitmix64 of the keys)."""
    x = seed & 0xFFFFFFFFFFFFFFFF
    for k in keys:
        x = (x + 0x9E3779B97F4A7C15 + (k & 0xFFFFFFFFFFFFFFFF)) & 0xFFFFFFFFFFFFFFFF
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        x ^= x >> 31
    return (x >> 11) / float(1 << 52) - 1.0


class SimDevice(Handle):
    """One simulated physical GPU (see the module docstring for the model)."""

    def __init__(self, index: int, model: GpuModel, uuid: str, bus: int, seed: int,
                 noise: bool) -> None:
        self.index = index
        self.model = model
        self.board = model.board
        self.uuid = uuid
        self.bus = bus
        self.seed = seed
        self.noise = noise
        self.power_limit_w = float(self.board.tdp_w)
        self.limits: list[tuple[float, float]] = [(-math.inf, self.power_limit_w)]
        self.ambient_c = float(self.board.ambient_c)
        self.t_sync = 0.0
        idle = float(self.board.idle_power_w)
        self.temp_c = self._temp_ss(idle)
        self.energy_mj = idle * 86_400 * 1000  # one day of idle since the driver loaded
        self.cum = [0.0] * NCH
        self.gi_cum: dict[int, list[float]] = {}
        self.workloads: list[Workload] = []
        self.processes: list[Process] = []
        self.pins: dict[str, float] = {}
        # MIG
        self.mig_current = 0
        self.mig_pending = 0
        self.persistence_mode = 1  # NVML_FEATURE_ENABLED: nvidia-persistenced runs
        self.gpu_instances: dict[int, GpuInstance] = {}
        self.mig_devices: dict[int, MigDevice] = {}
        # health
        self.lost = False
        self.ecc: dict[tuple[int, int], int] = {}
        self.remapped_rows = [0, 0, 0, 0]  # corrected, uncorrected, pending, failure
        self.pcie_replays = 0

    # --- time integration ---------------------------------------------------------------------

    def _temp_ss(self, power_w: float) -> float:
        b = self.board
        return self.ambient_c + (b.temp_at_tdp_c - b.ambient_c) * power_w / b.tdp_w

    def _drawn(self, dyn: float, limit: float) -> float:
        b = self.board
        return min(b.idle_power_w + dyn * (b.tdp_w - b.idle_power_w), limit)

    def _limit_at(self, t: float) -> float:
        limit = self.limits[0][1]
        for start, value in self.limits:
            if start <= t:
                limit = value
            else:
                break
        return limit

    def _segments(self, a: float, b: float) -> Iterator[tuple[float, float, float]]:
        """Yield (dt, dyn_power, limit_w) for constant stretches of [a, b]."""
        active = [w for w in self.workloads if w.active(a, b)]
        cuts = {a, b}
        for w in active:
            for t in (w.start_s, w.stop_s):
                if t is not None and a < t < b:
                    cuts.add(t)
        for t, _ in self.limits:
            if a < t < b:
                cuts.add(t)
        periodic = [w for w in active if w.periodic]
        exact = sum((b - a) / w.period_s * len(w.vectors) for w in periodic) <= MAX_SEGMENTS
        if exact:
            for w in periodic:
                cuts.update(w.boundaries(a, b))
        ordered = sorted(cuts)
        for t0, t1 in itertools.pairwise(ordered):
            mid = 0.5 * (t0 + t1)
            dyn = 0.0
            for w in active:
                if w.start_s <= mid and (w.stop_s is None or mid < w.stop_s):
                    vec = w.vector_at(mid) if exact else w.mean()
                    dyn += w.weight * vec[_DYN]
            yield t1 - t0, dyn, self._limit_at(mid)

    def sync(self, now: float) -> None:
        """Advance energy, temperature and the activity integrals to ``now``. [s]"""
        a = self.t_sync
        if now <= a:
            return
        tau = self.board.thermal_time_constant_s
        for dt, dyn, limit in self._segments(a, now):
            power = self._drawn(dyn, limit)
            self.energy_mj += power * dt * 1000.0
            target = self._temp_ss(power)
            self.temp_c = target + (self.temp_c - target) * math.exp(-dt / tau)
        for w in self.workloads:
            if w.active(a, now):
                c0, c1 = w.cum(a), w.cum(now)
                inc = [y - x for x, y in zip(c0, c1, strict=True)]
                for i in range(NCH):
                    self.cum[i] += w.weight * inc[i]
                if w.gpu_instance_id is not None:
                    gi = self.gi_cum.setdefault(w.gpu_instance_id, [0.0] * NCH)
                    for i in range(NCH):
                        gi[i] += inc[i]
        self.t_sync = now
        horizon = now - HISTORY_S
        self.workloads = [w for w in self.workloads if w.stop_s is None or w.stop_s > horizon]

    # --- readings (call sync(now) first) ------------------------------------------------------

    def running(self, t: float) -> list[Workload]:
        """Return the workloads running at ``t``."""
        return [w for w in self.workloads
                if w.start_s <= t and (w.stop_s is None or t < w.stop_s)]

    def instant(self, t: float) -> list[float]:
        """Return the device-level channel vector at ``t`` (weighted sum of workloads)."""
        out = [0.0] * NCH
        for w in self.running(t):
            vec = w.vector_at(t)
            for i in range(NCH):
                out[i] += w.weight * vec[i]
        return out

    def window_mean(self, now: float, window_s: float,
                    gpu_instance_id: int | None = None) -> list[float]:
        """Return the mean channel vector over the last ``window_s`` (device or one GI)."""
        a = max(0.0, now - window_s)
        if now - a <= 0.0:
            vec = self.instant(now)
            return vec
        out = [0.0] * NCH
        for w in self.workloads:
            if gpu_instance_id is not None and w.gpu_instance_id != gpu_instance_id:
                continue
            if w.active(a, now):
                weight = 1.0 if gpu_instance_id is not None else w.weight
                c0, c1 = w.cum(a), w.cum(now)
                for i in range(NCH):
                    out[i] += weight * (c1[i] - c0[i])
        return [v / (now - a) for v in out]

    def power_mean_w(self, now: float, window_s: float) -> float:
        """Return the drawn power averaged over the last ``window_s``. [W]"""
        a = max(0.0, now - window_s)
        if now - a <= 0.0:
            return self.power_instant_w(now)
        energy = sum(dt * self._drawn(dyn, lim) for dt, dyn, lim in self._segments(a, now))
        return energy / (now - a)

    def power_instant_w(self, now: float) -> float:
        """Return the drawn power at ``now``. [W]"""
        return self._drawn(self.instant(now)[_DYN], self._limit_at(now))

    def demanded_w(self, now: float) -> float:
        """Return the power the work would draw without a limit. [W]"""
        b = self.board
        return b.idle_power_w + self.instant(now)[_DYN] * (b.tdp_w - b.idle_power_w)

    def jitter(self, now: float, channel: int, amplitude: float) -> float:
        """Return a deterministic multiplicative jitter ``1 +- amplitude`` (1 if noise is off)."""
        if not self.noise:
            return 1.0
        return 1.0 + amplitude * _noise(self.seed, self.index, channel, int(now * 10))

    def clocks(self, now: float) -> tuple[int, int]:
        """Return (SM clock [MHz], clocks-event reasons bitmask) at ``now``."""
        b = self.board
        busy = self.instant(now)[_KERNEL] > 0.0
        if not busy:
            return b.sm_clock_idle_mhz, N.nvmlClocksEventReasonGpuIdle
        clock = float(b.sm_clock_max_mhz)
        reasons = 0
        demand, limit = self.demanded_w(now), self._limit_at(now)
        if demand > limit:
            share = (limit - b.idle_power_w) / max(demand - b.idle_power_w, 1e-9)
            clock *= max(0.5, share) ** 0.5
            reasons |= N.nvmlClocksEventReasonSwPowerCap
        if self.temp_c >= b.slowdown_temp_c:
            clock *= 0.85
            reasons |= N.nvmlClocksEventReasonSwThermalSlowdown
        return int(round(clock / 15.0) * 15), reasons

    def memory_used_mib(self) -> int:
        """Return the memory the processes hold. [MiB]"""
        return sum(p.used_memory_mib for p in self.processes)

    # --- control ------------------------------------------------------------------------------

    def set_power_limit(self, now: float, watts: float) -> None:
        """Change the power limit from ``now`` on. [W]"""
        self.sync(now)
        self.power_limit_w = float(watts)
        self.limits.append((now, float(watts)))
        if len(self.limits) > 64:
            self.limits = self.limits[-32:]

    def add_workload(self, now: float, workload: Workload) -> None:
        """Start a workload at ``now``."""
        self.sync(now)
        self.workloads.append(workload)

    def stop_workload(self, now: float, workload: Workload) -> None:
        """Stop a workload at ``now``."""
        self.sync(now)
        workload.stop_s = now

    # --- MIG state ----------------------------------------------------------------------------

    @property
    def mig_enabled(self) -> bool:
        """Whether MIG mode is currently enabled."""
        return self.mig_current == 1

    def placed(self) -> list[tuple[GiProfile, int]]:
        """Return (profile, start) of every GPU instance."""
        return [(gi.profile, gi.start) for gi in self.gpu_instances.values()]
