"""The simulated lab's control API: processes, workloads and settings (power, pins, MIG, reset).

Mixed into :class:`labkit.gpu.sim.lab.SimulatedLab`, which holds the state (see that class).

Used in: lessons 01 (observation) and 02 (MIG), and the tests, through labkit.gpu
"""

from __future__ import annotations

import math

import pynvml as N

from labkit.gpu.sim.activity import Scenario, scenario
from labkit.gpu.sim.device import (
    Process,
    SimDevice,
    Workload,
)
from labkit.gpu.sim.lib.base import NvmlBase

#: Readings ``pin()`` can fix to an exact value, by NVML unit.
READINGS = ("power_usage_mw", "energy_mj", "temperature_c", "utilization_gpu_pct", "sm_clock_mhz")


class LabControls(NvmlBase):
    """Processes, workloads and settings of the simulated lab (mixed into ``SimulatedLab``)."""

    _next_pid: int

    # hooks the lab implements
    def _device(self, device: int) -> SimDevice:  # pragma: no cover - implemented by the lab
        raise NotImplementedError

    def _clear_instances(self, dev: SimDevice) -> None:  # pragma: no cover - lib.mig_api.MigApi
        raise NotImplementedError

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

