"""MIG through the pynvml API on the simulated libnvidia-ml: the cases of shared/cases/mig.md
and the API semantics of nvml.h (return conventions, errors, handles, MIG devices)."""

from __future__ import annotations

import ctypes
import itertools
from types import ModuleType
from typing import Any

import pynvml as N
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.gpu import smi
from tests.conftest import SimFactory


def enable(nv: ModuleType, h: Any) -> None:
    assert nv.nvmlDeviceSetMigMode(h, nv.NVML_DEVICE_MIG_ENABLE) == nv.NVML_SUCCESS
    assert nv.nvmlDeviceGetMigMode(h) == [1, 1]


def placement_of(nv: ModuleType, gi: Any) -> tuple[int, int, int]:
    info = nv.nvmlGpuInstanceGetInfo(gi)
    return info.id, info.placement.start, info.placement.size


def at(start: int, size: int) -> Any:
    return ctypes.byref(N.c_nvmlGpuInstancePlacement_t(start, size))


# --- shared/cases/mig.md (case 1, the placement order, is tests/test_mig_placement.py's) -------


def test_mig_case3_driver_names_7g_80gb_and_3g_40gb(sim: SimFactory) -> None:
    nv, _ = sim("sim:A100-80GB")
    h = nv.nvmlDeviceGetHandleByIndex(0)
    seven = nv.nvmlDeviceGetGpuInstanceProfileInfo(h, nv.NVML_GPU_INSTANCE_PROFILE_7_SLICE)
    three = nv.nvmlDeviceGetGpuInstanceProfileInfo(h, nv.NVML_GPU_INSTANCE_PROFILE_3_SLICE)
    assert (seven.name, seven.memorySizeMB, seven.id) == ("MIG 7g.80gb", 80896, 0)
    assert (three.name, three.memorySizeMB, three.id) == ("MIG 3g.40gb", 40192, 9)
    table = smi.lgip(nv)
    assert "MIG 7g.80gb" in table and "79.00" in table and "7g.79gb" not in table


def test_mig_case5_gpu_instances_without_compute_instances_are_no_mig_devices(
        sim: SimFactory) -> None:
    nv, _ = sim("sim:A100-80GB")
    h = nv.nvmlDeviceGetHandleByIndex(0)
    enable(nv, h)
    gis = [nv.nvmlDeviceCreateGpuInstance(h, 19) for _ in range(7)]
    for pid in (19, 20, 15, 14, 9, 5, 0):
        assert nv.nvmlDeviceGetGpuInstanceRemainingCapacity(h, pid) == 0
    assert [line.split()[5] for line in smi.lgip(nv).splitlines() if "MIG " in line] == [
        "0/7", "0/1", "0/4", "0/3", "0/2", "0/1", "0/1"]
    assert nv.nvmlDeviceGetMaxMigDeviceCount(h) == 7
    for i in range(7):
        with pytest.raises(nv.NVMLError_NotFound):
            nv.nvmlDeviceGetMigDeviceHandleByIndex(h, i)
    assert "MIG" not in smi.list_gpus(nv)
    for gi in gis:
        nv.nvmlGpuInstanceCreateComputeInstance(gi, nv.NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE)
    migs = [nv.nvmlDeviceGetMigDeviceHandleByIndex(h, i) for i in range(7)]
    uuids = {nv.nvmlDeviceGetUUID(m) for m in migs}
    assert len(uuids) == 7 and all(u.startswith("MIG-") for u in uuids)
    assert smi.list_gpus(nv).count("  MIG 1g.10gb     Device") == 7


def test_mig_case7_pending_while_a_process_holds_the_gpu(sim: SimFactory) -> None:
    nv, lab = sim("sim:H100-80GB")
    h = nv.nvmlDeviceGetHandleByIndex(0)
    pid = lab.add_process(0)
    status = nv.nvmlDeviceSetMigMode(h, nv.NVML_DEVICE_MIG_ENABLE)  # does not raise
    assert status == nv.NVML_ERROR_IN_USE == 19
    assert nv.nvmlDeviceGetMigMode(h) == [0, 1]
    with pytest.raises(nv.NVMLError_NotSupported):
        nv.nvmlDeviceCreateGpuInstance(h, 19)
    with pytest.raises(ValueError, match="in use"):
        lab.reset_gpu(0)
    lab.remove_process(pid)
    lab.reset_gpu(0)
    assert nv.nvmlDeviceGetMigMode(h) == [1, 1]
    nv.nvmlDeviceCreateGpuInstance(h, 19)


def test_mig_case7_vm_without_reset_stays_pending(sim: SimFactory) -> None:
    nv, lab = sim("sim:A100-40GB")
    lab.set_reset_possible(False)
    h = nv.nvmlDeviceGetHandleByIndex(0)
    assert nv.nvmlDeviceSetMigMode(h, 1) == nv.NVML_ERROR_RESET_REQUIRED == 16
    assert nv.nvmlDeviceGetMigMode(h) == [0, 1]


# --- API semantics -------------------------------------------------------------------------------


def test_default_state_is_freshly_installed_and_enable_takes_effect_at_once(
        sim: SimFactory) -> None:
    nv, _ = sim("sim:H100-80GB")
    h = nv.nvmlDeviceGetHandleByIndex(0)
    assert nv.nvmlDeviceGetMigMode(h) == [0, 0]
    assert nv.nvmlDeviceGetComputeRunningProcesses(h) == []
    assert nv.nvmlDeviceGetMaxMigDeviceCount(h) == 0
    for call in (lambda: nv.nvmlDeviceCreateGpuInstance(h, 19),
                 lambda: nv.nvmlDeviceGetGpuInstanceRemainingCapacity(h, 19)):
        with pytest.raises(nv.NVMLError_NotSupported):
            call()
    # modern driver: profile and placement queries work with MIG off
    assert nv.nvmlDeviceGetGpuInstanceProfileInfo(h, 0).id == 19
    assert nv.nvmlDeviceSetMigMode(h, 1) == 0
    assert nv.nvmlDeviceGetMigMode(h) == [1, 1]
    assert nv.nvmlDeviceGetMaxMigDeviceCount(h) == 7


def test_legacy_driver_needs_mig_on_for_profile_queries(sim: SimFactory) -> None:
    nv, lab = sim("sim:H100-80GB")
    lab.set_legacy_mig_queries(True)
    h = nv.nvmlDeviceGetHandleByIndex(0)
    with pytest.raises(nv.NVMLError_NotSupported):
        nv.nvmlDeviceGetGpuInstanceProfileInfo(h, 0)
    assert smi.lgip(nv) == smi.NO_MIG
    enable(nv, h)
    assert nv.nvmlDeviceGetGpuInstanceProfileInfo(h, 0).id == 19


def test_profile_enumeration_ends_with_invalid_argument_and_skips_missing(
        sim: SimFactory) -> None:
    nv, _ = sim("sim:A30")
    h = nv.nvmlDeviceGetHandleByIndex(0)
    found, skipped = [], []
    for const in itertools.count():
        try:
            found.append(nv.nvmlDeviceGetGpuInstanceProfileInfo(h, const, version=1).id)
        except nv.NVMLError_NotSupported:
            skipped.append(const)
        except nv.NVMLError_InvalidArgument:
            assert const == nv.NVML_GPU_INSTANCE_PROFILE_COUNT
            break
    assert sorted(found) == [0, 5, 6, 14, 21]
    assert nv.NVML_GPU_INSTANCE_PROFILE_7_SLICE in skipped
    info = nv.nvmlDeviceGetGpuInstanceProfileInfoById(h, 21)
    assert (info.name, info.ofaCount) == ("MIG 1g.6gb+me", 1)
    with pytest.raises(nv.NVMLError_InvalidArgument):
        nv.nvmlDeviceGetGpuInstanceProfileInfoById(h, 19)


def test_possible_placements_none_buffer_gives_the_count(sim: SimFactory) -> None:
    nv, _ = sim("sim:RTX-PRO-6000")
    h = nv.nvmlDeviceGetHandleByIndex(0)
    count = ctypes.c_uint(0)
    assert nv.nvmlDeviceGetGpuInstancePossiblePlacements(h, 14, None, ctypes.byref(count)) == 0
    assert count.value == 4
    small = (N.c_nvmlGpuInstancePlacement_t * 2)()
    count2 = ctypes.c_uint(2)
    with pytest.raises(nv.NVMLError_InsufficientSize):
        nv.nvmlDeviceGetGpuInstancePossiblePlacements(h, 14, small, ctypes.byref(count2))
    buf = (N.c_nvmlGpuInstancePlacement_t * count.value)()
    nv.nvmlDeviceGetGpuInstancePossiblePlacements(h, 14, buf, ctypes.byref(count))
    assert [(p.start, p.size) for p in buf] == [(0, 3), (3, 3), (6, 3), (9, 3)]


def test_create_with_placement_errors(sim: SimFactory) -> None:
    nv, _ = sim("sim:H100-80GB")
    h = nv.nvmlDeviceGetHandleByIndex(0)
    enable(nv, h)
    with pytest.raises(nv.NVMLError_InvalidArgument):  # 3g cannot start at 2
        nv.nvmlDeviceCreateGpuInstanceWithPlacement(h, 9, at(2, 4))
    with pytest.raises(nv.NVMLError_InvalidArgument):  # wrong size
        nv.nvmlDeviceCreateGpuInstanceWithPlacement(h, 9, at(0, 2))
    nv.nvmlDeviceCreateGpuInstanceWithPlacement(h, 19, at(5, 1))
    with pytest.raises(nv.NVMLError_InsufficientResources) as err:  # overlap
        nv.nvmlDeviceCreateGpuInstanceWithPlacement(h, 9, at(4, 4))
    assert str(err.value) == "Insufficient Resources"
    nv.nvmlDeviceCreateGpuInstanceWithPlacement(h, 19, at(0, 1))
    with pytest.raises(nv.NVMLError_InsufficientResources):  # no free placement (4g: only 0)
        nv.nvmlDeviceCreateGpuInstance(h, 5)
    nv.nvmlDeviceCreateGpuInstance(h, 20)
    with pytest.raises(nv.NVMLError_InsufficientResources):  # second +me
        nv.nvmlDeviceCreateGpuInstance(h, 20)
    with pytest.raises(nv.NVMLError_InvalidArgument):  # unknown profile ID
        nv.nvmlDeviceCreateGpuInstance(h, 42)


def test_gpu_instances_listing_lookup_and_destroy_in_use(sim: SimFactory) -> None:
    nv, lab = sim("sim:H100-80GB")
    h = nv.nvmlDeviceGetHandleByIndex(0)
    enable(nv, h)
    three = nv.nvmlDeviceCreateGpuInstance(h, 9)
    gi_id = nv.nvmlGpuInstanceGetInfo(three).id
    assert gi_id == 2  # the 3g at 4:4 (heap numbering, as the H100 capture shows)
    info = nv.nvmlGpuInstanceGetInfo(nv.nvmlDeviceGetGpuInstanceById(h, gi_id))
    assert (info.profileId, info.placement.start, info.placement.size) == (9, 4, 4)
    assert ctypes.cast(info.device, ctypes.c_void_p).value == ctypes.cast(
        h, ctypes.c_void_p).value
    with pytest.raises(nv.NVMLError_NotFound):
        nv.nvmlDeviceGetGpuInstanceById(h, 9)
    buf = (N.c_nvmlGpuInstance_t * 2)()
    count = ctypes.c_uint(0)
    nv.nvmlDeviceGetGpuInstances(h, 9, buf, ctypes.byref(count))
    assert count.value == 1
    with pytest.raises(nv.NVMLError_InvalidArgument):  # NULL buffer (cuda-python#2862)
        nv.nvmlDeviceGetGpuInstances(h, 9, None, ctypes.byref(count))
    ci = nv.nvmlGpuInstanceCreateComputeInstance(three, nv.NVML_COMPUTE_INSTANCE_PROFILE_3_SLICE)
    with pytest.raises(nv.NVMLError_InUse):
        nv.nvmlGpuInstanceDestroy(three)
    pid = lab.add_process(0, gpu_instance_id=gi_id, compute_instance_id=0)
    with pytest.raises(nv.NVMLError_InUse):
        nv.nvmlComputeInstanceDestroy(ci)
    lab.remove_process(pid)
    nv.nvmlComputeInstanceDestroy(ci)
    nv.nvmlGpuInstanceDestroy(three)
    with pytest.raises(nv.NVMLError_InvalidArgument):  # stale handle
        nv.nvmlGpuInstanceGetInfo(three)


def test_compute_instances_and_mig_device_handles(sim: SimFactory) -> None:
    nv, _ = sim("sim:A100-40GB")
    h = nv.nvmlDeviceGetHandleByIndex(0)
    enable(nv, h)
    gi = nv.nvmlDeviceCreateGpuInstance(h, 9)
    one = nv.nvmlGpuInstanceGetComputeInstanceProfileInfo(
        gi, nv.NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE,
        nv.NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
    assert (one.name, one.instanceCount, one.multiprocessorCount) == ("MIG 1c.3g.20gb", 3, 14)
    with pytest.raises(nv.NVMLError_NotSupported):  # no 7c in a 3g
        nv.nvmlGpuInstanceGetComputeInstanceProfileInfo(gi, 4, 0)
    cis = [nv.nvmlGpuInstanceCreateComputeInstance(gi, 0) for _ in range(3)]
    with pytest.raises(nv.NVMLError_InsufficientResources):
        nv.nvmlGpuInstanceCreateComputeInstance(gi, 0)
    infos = [nv.nvmlComputeInstanceGetInfo(ci) for ci in cis]
    assert [(i.id, i.placement.start, i.placement.size) for i in infos] == [
        (0, 0, 1), (1, 1, 1), (2, 2, 1)]
    assert nv.nvmlGpuInstanceGetComputeInstanceRemainingCapacity(gi, 0) == 0
    mig = nv.nvmlDeviceGetMigDeviceHandleByIndex(h, 1)
    assert nv.nvmlDeviceIsMigDeviceHandle(mig).value == 1  # a c_uint, not an int
    assert nv.nvmlDeviceIsMigDeviceHandle(h).value == 0
    assert nv.nvmlDeviceGetName(mig) == "NVIDIA A100-SXM4-40GB MIG 1c.3g.20gb"
    assert nv.nvmlDeviceGetGpuInstanceId(mig) == 2
    assert nv.nvmlDeviceGetComputeInstanceId(mig) == 1
    parent = nv.nvmlDeviceGetDeviceHandleFromMigDeviceHandle(mig)
    assert nv.nvmlDeviceGetUUID(parent) == nv.nvmlDeviceGetUUID(h)
    assert nv.nvmlDeviceGetHandleByUUID(nv.nvmlDeviceGetUUID(mig).encode()).contents is not None
    assert nv.nvmlDeviceGetMemoryInfo(mig).total == 20096 << 20
    with pytest.raises(nv.NVMLError_NotSupported):
        nv.nvmlDeviceGetGpuInstanceId(h)
    with pytest.raises(nv.NVMLError_NotSupported):
        nv.nvmlDeviceGetPowerUsage(mig)
    with pytest.raises(nv.NVMLError_InvalidArgument):
        nv.nvmlDeviceGetMigDeviceHandleByIndex(h, 7)


def test_recreated_mig_device_gets_a_new_uuid(sim: SimFactory) -> None:
    nv, _ = sim("sim:H100-80GB")
    h = nv.nvmlDeviceGetHandleByIndex(0)
    enable(nv, h)
    gi = nv.nvmlDeviceCreateGpuInstance(h, 19)
    ci = nv.nvmlGpuInstanceCreateComputeInstance(gi, 0)
    first = nv.nvmlDeviceGetUUID(nv.nvmlDeviceGetMigDeviceHandleByIndex(h, 0))
    nv.nvmlComputeInstanceDestroy(ci)
    nv.nvmlGpuInstanceCreateComputeInstance(gi, 0)
    assert nv.nvmlDeviceGetUUID(nv.nvmlDeviceGetMigDeviceHandleByIndex(h, 0)) != first


def test_disable_removes_instances_and_non_mig_board_says_not_supported(sim: SimFactory) -> None:
    nv, _ = sim("sim:H100-80GB,L40S")
    h, l40s = nv.nvmlDeviceGetHandleByIndex(0), nv.nvmlDeviceGetHandleByIndex(1)
    enable(nv, h)
    nv.nvmlDeviceCreateGpuInstance(h, 0)
    assert nv.nvmlDeviceSetMigMode(h, 0) == 0
    assert nv.nvmlDeviceGetMigMode(h) == [0, 0]
    enable(nv, h)
    assert smi.lgi(nv, 0) == "No GPU instances found: Not Found"
    for call in (nv.nvmlDeviceGetMigMode, lambda d: nv.nvmlDeviceSetMigMode(d, 1),
                 lambda d: nv.nvmlDeviceGetGpuInstanceProfileInfo(d, 0)):
        with pytest.raises(nv.NVMLError_NotSupported):
            call(l40s)
    assert nv.nvmlDeviceGetMaxMigDeviceCount(l40s) == 0
    with pytest.raises(nv.NVMLError_InvalidArgument):
        nv.nvmlDeviceSetMigMode(h, 2)


def test_no_permission_for_mig_changes_without_rights(sim: SimFactory) -> None:
    nv, lab = sim("sim:H100-80GB")
    h = nv.nvmlDeviceGetHandleByIndex(0)
    lab.set_mig_rights(False)
    with pytest.raises(nv.NVMLError_NoPermission):
        nv.nvmlDeviceSetMigMode(h, 1)
    lab.set_mig_rights(True)
    enable(nv, h)
    gi = nv.nvmlDeviceCreateGpuInstance(h, 19)
    lab.set_mig_rights(False)
    for call in (lambda: nv.nvmlDeviceCreateGpuInstance(h, 19),
                 lambda: nv.nvmlGpuInstanceCreateComputeInstance(gi, 0),
                 lambda: nv.nvmlGpuInstanceDestroy(gi)):
        with pytest.raises(nv.NVMLError_NoPermission):
            call()
    assert nv.nvmlDeviceGetGpuInstanceRemainingCapacity(h, 19) == 6  # queries still work


@settings(max_examples=25, deadline=None)
@given(board=st.sampled_from(["A30", "A100-40GB", "H200", "RTX-PRO-6000"]),
       ops=st.lists(st.integers(0, 20), max_size=10))
def test_remaining_capacity_predicts_create_through_nvml(board: str, ops: list[int]) -> None:
    import labkit.gpu as gpu

    gpu.disconnect()
    nv = gpu.connect(f"sim:{board}", clock="virtual", noise=False)
    try:
        h = nv.nvmlDeviceGetHandleByIndex(0)
        nv.nvmlDeviceSetMigMode(h, 1)
        ids = [info.id for info in smi.gi_profiles(nv, h)]
        for op in ops:
            pid = ids[op % len(ids)]
            free = nv.nvmlDeviceGetGpuInstanceRemainingCapacity(h, pid)
            try:
                nv.nvmlDeviceCreateGpuInstance(h, pid)
                assert free > 0
            except nv.NVMLError_InsufficientResources:
                assert free == 0
    finally:
        gpu.disconnect()
