"""A simulated lab as a JSON-able state: what ``state.json`` holds, dumped and applied back.

:class:`LabState` is the (de)serialisation half of :class:`labkit.gpu.sim.shared.SharedLab`
(which adds the file, the lock and the processes' lifetimes): :meth:`LabState._dump` turns the
lab into plain dicts and lists, :meth:`LabState._apply` sets the lab to such a state.

Used in: lessons 01 (observation) and 02 (MIG), through labkit.gpu
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from labkit.gpu.sim.activity import scenario
from labkit.gpu.sim.device import (
    ComputeInstance,
    GpuInstance,
    MigDevice,
    Process,
    SimDevice,
    Workload,
)
from labkit.gpu.sim.lab import SimulatedLab
from labkit.gpu.sim.lab_faults import _Fault

#: Format version of ``state.json``; another version is refused with a message.
STATE_VERSION = 1
#: How long stopped workloads stay in the state (windowed readings look back 1 s; 10 s margin).
HISTORY_S = 10.0


def _proc_start(pid: int) -> int | None:
    """Return a process's start time in clock ticks (``/proc/<pid>/stat`` field 22), or None."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    try:
        return int(raw.rsplit(")", 1)[1].split()[19])
    except (IndexError, ValueError):
        return None


class LabState(SimulatedLab):
    """A :class:`SimulatedLab` that dumps its state to plain data and applies such a state."""

    _origin: float
    _wkeys: dict[Workload, str]
    _wseq: int

    # --- (de)serialisation --------------------------------------------------------------------

    def _dump(self) -> dict[str, Any]:
        now = self.now()
        return {
            "version": STATE_VERSION, "models": [d.model.short_name for d in self.devices],
            "seed": self.seed, "origin_epoch": self._origin, "mig_serial": self._mig_serial,
            "flags": {"mig_rights": self.mig_rights, "reset_possible": self.reset_possible,
                      "legacy_mig_queries": self.legacy_mig_queries},
            "devices": [self._dump_device(dev, now) for dev in self.devices],
            "faults": {name: [[f.code, f.device, f.remaining] for f in faults]
                       for name, faults in self._faults.items() if faults},
            "field_faults": [[d, fid, code] for (d, fid), code in self._field_faults.items()],
            "removed": sorted(n for n in dir(type(self))
                              if n.startswith("nvml") and not hasattr(self._library, n)),
            "init_error": self._init_error,
        }

    def _dump_device(self, dev: SimDevice, now: float) -> dict[str, Any]:
        gis = [{"id": gi.id, "profile_id": gi.profile.id, "start": gi.start,
                "compute_instances": [
                    {"id": ci.id, "profile_id": ci.profile.id, "start": ci.start,
                     "mig_index": ci.mig_device.index if ci.mig_device else None,
                     "uuid": ci.mig_device.uuid if ci.mig_device else None}
                    for ci in sorted(gi.compute_instances.values(), key=lambda c: c.id)]}
               for gi in sorted(dev.gpu_instances.values(), key=lambda g: g.id)]
        procs = [{"pid": p.pid, "name": p.name, "used_memory_mib": p.used_memory_mib,
                  "gi": p.gpu_instance_id, "ci": p.compute_instance_id,
                  "proc_start": getattr(p, "proc_start", None) or _proc_start(p.pid)}
                 for p in dev.processes]
        workloads = []
        for w in dev.workloads:
            if w.stop_s is not None and w.stop_s < now - HISTORY_S:
                continue
            workloads.append({"key": self._key(w), "scenario": w.scenario.name,
                              "gi": w.gpu_instance_id, "ci": w.compute_instance_id, "pid": w.pid,
                              "start_s": w.start_s, "stop_s": w.stop_s, "weight": w.weight,
                              "sms": self._sms(dev, w)})
        return {"mig_current": dev.mig_current, "mig_pending": dev.mig_pending,
                "persistence_mode": dev.persistence_mode,
                "power_limit_w": dev.power_limit_w, "ambient_c": dev.ambient_c, "lost": dev.lost,
                "ecc": [[k[0], k[1], v] for k, v in dev.ecc.items()],
                "remapped_rows": list(dev.remapped_rows), "pcie_replays": dev.pcie_replays,
                "gpu_instances": gis, "processes": procs, "workloads": workloads}

    def _key(self, w: Workload) -> str:
        key = self._wkeys.get(w)
        if key is None:
            self._wseq += 1
            key = f"{os.getpid()}-{self._wseq}-{w.start_s:.3f}"
            self._wkeys[w] = key
        return key

    @staticmethod
    def _sms(dev: SimDevice, w: Workload) -> int:
        if w.gpu_instance_id is not None and w.gpu_instance_id in dev.gpu_instances:
            return dev.gpu_instances[w.gpu_instance_id].profile.sm_count
        return dev.model.sm_count if w.gpu_instance_id is None else round(
            w.weight * dev.model.sm_count)

    def _apply(self, data: dict[str, Any]) -> None:
        """Make this process's lab match ``data`` (objects pynvml holds handles to are kept)."""
        self._mig_serial = int(data.get("mig_serial", self._mig_serial))
        flags = data.get("flags", {})
        self.mig_rights = bool(flags.get("mig_rights", True))
        self.reset_possible = bool(flags.get("reset_possible", True))
        self.legacy_mig_queries = bool(flags.get("legacy_mig_queries", False))
        now = self.now()
        for dev, item in zip(self.devices, data.get("devices", []), strict=False):
            # workloads first: the next sync() integrates them from their own start/stop times
            self._apply_workloads(dev, item.get("workloads", []), now)
            dev.mig_current, dev.mig_pending = int(item["mig_current"]), int(item["mig_pending"])
            dev.persistence_mode = int(item.get("persistence_mode", 1))
            if float(item["power_limit_w"]) != dev.power_limit_w:
                dev.set_power_limit(now, float(item["power_limit_w"]))
            dev.ambient_c, dev.lost = float(item["ambient_c"]), bool(item["lost"])
            dev.ecc = {(int(a), int(b)): int(v) for a, b, v in item.get("ecc", [])}
            dev.remapped_rows = [int(v) for v in item.get("remapped_rows", [0, 0, 0, 0])]
            dev.pcie_replays = int(item.get("pcie_replays", 0))
            self._apply_mig(dev, item.get("gpu_instances", []))
            self._apply_processes(dev, item.get("processes", []))
        self._apply_faults(data)

    def _apply_mig(self, dev: SimDevice, gis: list[dict[str, Any]]) -> None:
        want = {int(g["id"]): g for g in gis}
        for gid, gi in list(dev.gpu_instances.items()):
            w = want.get(gid)
            if w is None or w["profile_id"] != gi.profile.id or w["start"] != gi.start:
                for ci in list(gi.compute_instances.values()):
                    self._drop_ci(ci)
                del dev.gpu_instances[gid]
                self._unregister(gi)
        for gid, w in want.items():
            found = dev.gpu_instances.get(gid)
            if found is None:
                assert dev.model.mig is not None
                prof = dev.model.mig.by_id(int(w["profile_id"]))
                if prof is None:
                    continue
                found = self._register(GpuInstance(dev, gid, prof, int(w["start"])))
                dev.gpu_instances[gid] = found
            self._apply_cis(dev, found, w.get("compute_instances", []))

    def _apply_cis(self, dev: SimDevice, gi: GpuInstance, cis: list[dict[str, Any]]) -> None:
        want = {int(c["id"]): c for c in cis}
        for cid, ci in list(gi.compute_instances.items()):
            c = want.get(cid)
            uuid = ci.mig_device.uuid if ci.mig_device else None
            if (c is None or c["profile_id"] != ci.profile.id or c["start"] != ci.start
                    or c.get("uuid") != uuid):
                self._drop_ci(ci)
        for cid, c in want.items():
            if cid in gi.compute_instances:
                continue
            found = self._ci_lookup(gi, int(c["profile_id"]))
            if found is None:
                continue
            ci = self._register(ComputeInstance(gi, cid, found[0], int(c["start"])))
            gi.compute_instances[cid] = ci
            if c.get("mig_index") is not None and c.get("uuid"):
                index = int(c["mig_index"])
                stale = dev.mig_devices.pop(index, None)
                if stale is not None:
                    self._unregister(stale)
                mig = self._register(MigDevice(dev, gi, ci, index, str(c["uuid"])))
                ci.mig_device = mig
                dev.mig_devices[index] = mig

    def _apply_processes(self, dev: SimDevice, procs: list[dict[str, Any]]) -> None:
        for p in dev.processes:
            self._process_names.pop(p.pid, None)
        dev.processes = []
        for item in procs:
            proc = Process(int(item["pid"]), str(item["name"]), int(item["used_memory_mib"]),
                           dev.index, item.get("gi"), item.get("ci"))
            proc.proc_start = item.get("proc_start")  # type: ignore[attr-defined]
            dev.processes.append(proc)
            self._process_names[proc.pid] = proc.name

    def _apply_workloads(self, dev: SimDevice, items: list[dict[str, Any]], now: float) -> None:
        have = {key: w for w, key in self._wkeys.items() if w.device_index == dev.index}
        keep: list[Workload] = []
        for item in items:
            w = have.pop(item["key"], None)
            if w is None:
                scn = scenario(item["scenario"])
                w = Workload(scenario=scn, device_index=dev.index, gpu_instance_id=item["gi"],
                             compute_instance_id=item["ci"], pid=item["pid"],
                             start_s=float(item["start_s"]), weight=float(item["weight"]),
                             vectors=tuple(p.vector(int(item["sms"])) for p in scn.phases),
                             durations=tuple(p.duration_s for p in scn.phases))
                self._wkeys[w] = item["key"]
            w.stop_s = None if item["stop_s"] is None else float(item["stop_s"])
            keep.append(w)
        for w in have.values():
            self._wkeys.pop(w, None)
        dev.workloads = keep

    def _apply_faults(self, data: dict[str, Any]) -> None:
        from labkit.gpu import nvml

        self._faults = {name: [_Fault(int(c), d, r) for c, d, r in faults]
                        for name, faults in data.get("faults", {}).items()}
        self._field_faults = {(d, int(fid)): int(code)
                              for d, fid, code in data.get("field_faults", [])}
        self._init_error = data.get("init_error")
        removed = set(data.get("removed", []))
        changed = False
        for name in dir(type(self)):
            if not name.startswith("nvml"):
                continue
            present = hasattr(self._library, name)
            if name in removed and present:
                delattr(self._library, name)
                changed = True
            elif name not in removed and not present:
                setattr(self._library, name, self._wrap(name, getattr(self, name)))
                changed = True
        if changed:
            nvml.clear_function_cache()
