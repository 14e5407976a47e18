"""The simulated C functions of MIG: mode, profiles, GPU and compute instances, MIG devices.

Placement follows :mod:`labkit.mig.placement` (the driver's rules, once). Semantics follow
``nvml.h`` (NVML API version 13); see :mod:`labkit.gpu.sim.lib`.

Used in: lesson 02 (MIG), through labkit.gpu
"""

from __future__ import annotations

from typing import Any

import pynvml as N

from labkit.gpu.sim.device import (
    ComputeInstance,
    GpuInstance,
    MigDevice,
    NvmlReturn,
    SimDevice,
)
from labkit.gpu.sim.device import out_param as _out
from labkit.gpu.sim.device import scalar_arg as _v
from labkit.gpu.sim.lib.base import NvmlBase, _c_void_p, _ci_size, _put_handle, _put_handles
from labkit.mig import placement as P


def _put_placements(buf: Any, count_ref: Any, starts: tuple[int, ...], size: int) -> int:
    """Write ``(start, size)`` placements into an NVML placement array; ``buf=None``: the count.

    NVML's ``...GetGpuInstancePossiblePlacements_v2`` / ``...GetComputeInstancePossiblePlacements``
    contract: a short array is INSUFFICIENT_SIZE with ``count`` set to the number needed.
    """
    count = _out(count_ref)
    if buf is None:
        count.value = len(starts)
        return N.NVML_SUCCESS
    if count.value < len(starts):
        count.value = len(starts)
        return N.NVML_ERROR_INSUFFICIENT_SIZE
    arr = _out(buf)
    for i, start in enumerate(starts):
        arr[i].start, arr[i].size = start, size
    count.value = len(starts)
    return N.NVML_SUCCESS


def _put_of_profile(buf: Any, count_ref: Any, instances: dict[int, Any], profile_id: int) -> int:
    """Write the handles of the GPU or compute ``instances`` of one profile, by ID."""
    found = sorted((x for x in instances.values() if x.profile.id == profile_id),
                   key=lambda x: x.id)
    return _put_handles(buf, count_ref, found)


def _put_by_id(instances: dict[int, Any], instance_id: Any, ref: Any) -> int:
    """Write the handle of the GPU or compute instance with this ID; NOT_FOUND if none."""
    found = instances.get(_v(instance_id))
    if found is None:
        return N.NVML_ERROR_NOT_FOUND
    _put_handle(ref, found)
    return N.NVML_SUCCESS


class MigApi(NvmlBase):
    """MIG mode, GPU-instance profiles, GPU and compute instances, MIG devices."""

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
        return _put_placements(buf, count_ref, prof.placements, prof.memory_slices)

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
        return _put_of_profile(buf, count_ref, dev.gpu_instances, prof.id)

    def nvmlDeviceGetGpuInstanceById(self, handle: Any, gi_id: Any, ref: Any) -> int:
        """The GI with this ID; NOT_FOUND if none."""
        return _put_by_id(self._mig_on(handle).gpu_instances, gi_id, ref)

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
        return _put_placements(buf, count_ref, starts, _ci_size(gi, ci))

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
        return _put_of_profile(buf, count_ref, gi.compute_instances, ci_prof.id)

    def nvmlGpuInstanceGetComputeInstanceById(self, handle: Any, ci_id: Any, ref: Any) -> int:
        """The CI with this ID; NOT_FOUND if none."""
        return _put_by_id(self._gi(handle).compute_instances, ci_id, ref)

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

