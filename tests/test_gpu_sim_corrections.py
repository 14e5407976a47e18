"""The issue-15 corrections of the simulated MIG driver, each against its public source.

Sources (recorded in data/gpus/*.yaml ``sim_behaviour`` and the profile rows): real H100 and
GH200 give a 1g.20gb / 1g.24gb GI's CI as CI profile 7 (``1_SLICE_REV1``); a real H200's 3g GI
offers 1c with 16 SMs and 2c with 32 SMs, and 1c then 2c with default placement works; the
RTX PRO 6000 (driver 610.43.02, kubesimplify blog) lists the full 1g CI at 0:1; creating a GI
while another client holds the GPU gives "In use by another client"; an R580 ``-lgip`` with
MIG disabled prints Free N/N; a public R590 H200 capture shows 3g 71424 MiB and 2g 33280 MiB.
"""

from __future__ import annotations

import pytest

from labkit.gpu import smi, smi_mig
from tests.conftest import SimFactory


def _gi(nv, h, profile_id: int):  # type: ignore[no-untyped-def]
    return nv.nvmlDeviceCreateGpuInstance(h, profile_id)


def _ci_info(nv, gi, const: int):  # type: ignore[no-untyped-def]
    return nv.nvmlGpuInstanceGetComputeInstanceProfileInfo(
        gi, const, nv.NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)


def test_h100_1g20gb_gi_offers_ci_profile_7(sim: SimFactory) -> None:
    nv, _ = sim("sim:H100-80GB")
    h = nv.nvmlDeviceGetHandleByIndex(0)
    nv.nvmlDeviceSetMigMode(h, 1)
    gi = _gi(nv, h, 15)  # 1g.20gb
    info = _ci_info(nv, gi, nv.NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE_REV1)
    assert (info.id, info.sliceCount, info.multiprocessorCount) == (7, 1, 26)
    with pytest.raises(nv.NVMLError_NotSupported):
        _ci_info(nv, gi, nv.NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE)
    nv.nvmlGpuInstanceDestroy(gi)
    lines = smi_mig.create_gpu_instances(nv, 0, "15", default_ci=True)
    assert lines[1].endswith("using profile MIG 1g.20gb (ID  7)")
    assert "1g.20gb" in smi.list_gpus(nv)


def test_h200_3g_gi_ci_sm_counts_and_1c_then_2c(sim: SimFactory) -> None:
    nv, _ = sim("sim:H200")
    h = nv.nvmlDeviceGetHandleByIndex(0)
    nv.nvmlDeviceSetMigMode(h, 1)
    gi = _gi(nv, h, 9)  # 3g.71gb
    sms = [_ci_info(nv, gi, c).multiprocessorCount for c in (0, 1, 2)]
    assert sms == [16, 32, 60]
    one = nv.nvmlGpuInstanceCreateComputeInstance(gi, 0)
    two = nv.nvmlGpuInstanceCreateComputeInstance(gi, 1)
    places = [(nv.nvmlComputeInstanceGetInfo(c).placement.start,
               nv.nvmlComputeInstanceGetInfo(c).placement.size) for c in (one, two)]
    assert places == [(0, 1), (1, 2)]


def test_h200_mig_memory_of_the_590_capture(sim: SimFactory) -> None:
    nv, _ = sim("sim:H200")
    h = nv.nvmlDeviceGetHandleByIndex(0)
    mem = {nv.nvmlDeviceGetGpuInstanceProfileInfo(h, c).id:
           nv.nvmlDeviceGetGpuInstanceProfileInfo(h, c).memorySizeMB
           for c in (nv.NVML_GPU_INSTANCE_PROFILE_2_SLICE, nv.NVML_GPU_INSTANCE_PROFILE_3_SLICE)}
    assert mem == {14: 33280, 9: 71424}  # 32.50 GiB and 69.75 GiB


def test_rtx_pro_6000_full_1g_ci_lists_at_0_1(sim: SimFactory) -> None:
    nv, _ = sim("sim:RTX-PRO-6000")
    h = nv.nvmlDeviceGetHandleByIndex(0)
    nv.nvmlDeviceSetMigMode(h, 1)
    smi_mig.create_gpu_instances(nv, 0, "14", default_ci=True)
    rows = [r for r in smi.lci(nv).splitlines() if "MIG 1g.24gb" in r]
    assert len(rows) == 1 and rows[0].split()[-2] == "0:1", rows


def test_gi_creation_while_another_client_holds_the_gpu_is_in_use(sim: SimFactory) -> None:
    nv, lab = sim("sim:H100-80GB")
    h = nv.nvmlDeviceGetHandleByIndex(0)
    nv.nvmlDeviceSetMigMode(h, 1)
    pid = lab.add_process(0, name="nsys")  # a profiler holding the whole GPU
    with pytest.raises(nv.NVMLError_InUse, match="In use by another client"):
        nv.nvmlDeviceCreateGpuInstance(h, 19)
    lab.remove_process(pid)
    assert nv.nvmlGpuInstanceGetInfo(nv.nvmlDeviceCreateGpuInstance(h, 19)).profileId == 19


def test_lgip_with_mig_disabled_shows_free_equal_to_total(sim: SimFactory) -> None:
    nv, _ = sim("sim:H100-80GB")
    text = smi.lgip(nv)
    assert "|   0  MIG 1g.10gb         19     7/7        9.75" in text
    assert "|   0  MIG 7g.80gb          0     1/1" in text
