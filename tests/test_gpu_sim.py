"""Simulated telemetry through pynvml: readings agree with each other and the activity model."""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any

import pytest

import labkit.gpu as gpu
from labkit.data.gpus import load_gpu_model
from labkit.gpu.sim import SCENARIOS, SimulatedLab
from tests.conftest import SimFactory

H100 = load_gpu_model("H100-80GB").board  # idle 70 W, TDP 700 W, tau 40 s, 30 -> 75 degC


def gpm(nv: ModuleType, lab: SimulatedLab, h: Any, seconds: float,
        gi: int | None = None) -> dict[int, float]:
    """Two GPM samples ``seconds`` apart; return {metric ID: value} (percent or MiB/s)."""
    ids = [nv.NVML_GPM_METRIC_GRAPHICS_UTIL, nv.NVML_GPM_METRIC_SM_UTIL,
           nv.NVML_GPM_METRIC_SM_OCCUPANCY, nv.NVML_GPM_METRIC_ANY_TENSOR_UTIL,
           nv.NVML_GPM_METRIC_DRAM_BW_UTIL, nv.NVML_GPM_METRIC_PCIE_RX_PER_SEC]
    s1, s2 = nv.nvmlGpmSampleAlloc(), nv.nvmlGpmSampleAlloc()
    get = (lambda s: nv.nvmlGpmSampleGet(h, s)) if gi is None else (
        lambda s: nv.nvmlGpmMigSampleGet(h, gi, s))
    get(s1)
    lab.advance(seconds)
    get(s2)
    mg = nv.c_nvmlGpmMetricsGet_t()
    mg.version = nv.NVML_GPM_METRICS_GET_VERSION
    mg.numMetrics = len(ids)
    mg.sample1, mg.sample2 = s1, s2
    for i, mid in enumerate(ids):
        mg.metrics[i].metricId = mid
    nv.nvmlGpmMetricsGet(mg)
    nv.nvmlGpmSampleFree(s1)
    nv.nvmlGpmSampleFree(s2)
    assert all(mg.metrics[i].nvmlReturn == nv.NVML_SUCCESS for i in range(len(ids)))
    return {mid: mg.metrics[i].value for i, mid in enumerate(ids)}


def test_idle_gpu_reads_idle(sim: SimFactory) -> None:
    nv, lab = sim()
    lab.advance(5)
    h = nv.nvmlDeviceGetHandleByIndex(0)
    util = nv.nvmlDeviceGetUtilizationRates(h)
    assert (util.gpu, util.memory) == (0, 0)
    assert nv.nvmlDeviceGetPowerUsage(h) == 70_000  # [mW]
    assert nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM) == H100.sm_clock_idle_mhz
    assert nv.nvmlDeviceGetCurrentClocksEventReasons(h) == nv.nvmlClocksEventReasonGpuIdle
    assert nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU) == round(30 + 45 * 70 / 700)
    assert nv.nvmlDeviceGetEnforcedPowerLimit(h) == 700_000
    assert nv.nvmlDeviceGetPowerManagementLimitConstraints(h) == [200_000, 700_000]
    assert nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_SM) == 1980
    mem = nv.nvmlDeviceGetMemoryInfo(h, version=nv.nvmlMemory_v2)
    assert (mem.total, mem.used, mem.reserved) == (81559 << 20, 0, 512 << 20)


def test_training_power_energy_and_thermal_lag_agree(sim: SimFactory) -> None:
    nv, lab = sim()
    h = nv.nvmlDeviceGetHandleByIndex(0)
    lab.advance(10)
    e0 = nv.nvmlDeviceGetTotalEnergyConsumption(h)
    temp0 = 30 + 45 * 70 / 700
    lab.start("training")
    lab.advance(0.5)  # the 1-s averages are half way
    assert nv.nvmlDeviceGetUtilizationRates(h).gpu == 50
    assert nv.nvmlDeviceGetPowerUsage(h) == (70 + 650) // 2 * 1000
    assert nv.nvmlDeviceGetFieldValues(h, [nv.NVML_FI_DEV_POWER_INSTANT])[0].value.uiVal == (
        650_000)
    lab.advance(99.5)
    assert nv.nvmlDeviceGetUtilizationRates(h).gpu == 100
    assert nv.nvmlDeviceGetPowerUsage(h) == 650_000
    assert nv.nvmlDeviceGetTotalEnergyConsumption(h) - e0 == 650 * 100 * 1000  # [mJ]
    target = 30 + 45 * 650 / 700
    expected = target + (temp0 - target) * math.exp(-100 / H100.thermal_time_constant_s)
    assert nv.nvmlDeviceGetTemperature(h, 0) == round(expected)
    assert nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM) == 1980
    assert nv.nvmlDeviceGetCurrentClocksEventReasons(h) == 0


def test_power_limit_caps_power_and_drops_clocks_with_a_reason(sim: SimFactory) -> None:
    nv, lab = sim()
    h = nv.nvmlDeviceGetHandleByIndex(0)
    lab.start("burn_in")
    lab.advance(5)
    assert nv.nvmlDeviceGetPowerUsage(h) == 700_000
    assert nv.nvmlDeviceGetCurrentClocksEventReasons(h) & nv.nvmlClocksEventReasonSwPowerCap
    assert nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM) < 1980
    lab.stop(device=0)
    lab.start("training")
    lab.set_power_limit(0, 400)
    lab.advance(5)
    assert nv.nvmlDeviceGetPowerUsage(h) == 400_000
    assert nv.nvmlDeviceGetEnforcedPowerLimit(h) == 400_000
    assert nv.nvmlDeviceGetCurrentClocksEventReasons(h) == nv.nvmlClocksEventReasonSwPowerCap
    with pytest.raises(ValueError, match="power limit"):
        lab.set_power_limit(0, 900)


def test_hot_inlet_brings_thermal_slowdown(sim: SimFactory) -> None:
    nv, lab = sim()
    h = nv.nvmlDeviceGetHandleByIndex(0)
    lab.set_ambient(0, 75)
    lab.start("training")
    lab.advance(600)
    assert nv.nvmlDeviceGetTemperature(h, 0) >= H100.slowdown_temp_c
    assert nv.nvmlDeviceGetCurrentClocksEventReasons(h) & (
        nv.nvmlClocksEventReasonSwThermalSlowdown)


def test_busy_but_idle_tiny_kernel_one_sm(sim: SimFactory) -> None:
    """One thread on one SM: util.gpu 100 %, SM activity 1/132 on an H100 (observe.md §2)."""
    nv, lab = sim()
    h = nv.nvmlDeviceGetHandleByIndex(0)
    lab.start("tiny_kernel")
    lab.advance(2)
    assert nv.nvmlDeviceGetUtilizationRates(h).gpu == 100
    metrics = gpm(nv, lab, h, 10)
    assert metrics[nv.NVML_GPM_METRIC_SM_UTIL] == pytest.approx(100 / 132)
    assert metrics[nv.NVML_GPM_METRIC_ANY_TENSOR_UTIL] == 0


def test_dataloader_starved_sawtooth_and_gpm_average(sim: SimFactory) -> None:
    nv, lab = sim()
    h = nv.nvmlDeviceGetHandleByIndex(0)
    lab.advance(10)
    lab.start("dataloader_starved")  # 0.8 s compute, 1.2 s waiting for data
    readings = []
    for t in (10.8, 11.0, 11.3, 12.0, 12.8):
        lab.advance(t - lab.now())
        readings.append(nv.nvmlDeviceGetUtilizationRates(h).gpu)
    assert readings == [80, 80, 50, 0, 80]
    metrics = gpm(nv, lab, h, 20)  # ten full cycles
    assert metrics[nv.NVML_GPM_METRIC_GRAPHICS_UTIL] == pytest.approx(40)
    assert metrics[nv.NVML_GPM_METRIC_SM_UTIL] == pytest.approx(0.85 * 40)
    assert metrics[nv.NVML_GPM_METRIC_ANY_TENSOR_UTIL] == pytest.approx(0.6 * 40)


def test_every_scenario_is_coherent(sim: SimFactory) -> None:
    nv, lab = sim()
    h = nv.nvmlDeviceGetHandleByIndex(0)
    for name, scn in SCENARIOS.items():
        lab.stop(device=0)
        lab.advance(5)
        lab.start(name)
        lab.advance(20)
        seconds = scn.period_s if math.isfinite(scn.period_s) else 10
        e0 = nv.nvmlDeviceGetTotalEnergyConsumption(h)
        metrics = gpm(nv, lab, h, seconds)
        mean_w = (nv.nvmlDeviceGetTotalEnergyConsumption(h) - e0) / seconds / 1000
        util = metrics[nv.NVML_GPM_METRIC_GRAPHICS_UTIL]
        sm = metrics[nv.NVML_GPM_METRIC_SM_UTIL]
        assert sm <= util + 1e-9, name  # SMs are busy only while a kernel runs
        assert (mean_w > 70.5) == (scn.phases[0].values.get("dyn_power", 0) > 0), name
        assert (nv.nvmlDeviceGetComputeRunningProcesses(h) != []) == scn.creates_process, name


def test_processes_and_memory(sim: SimFactory) -> None:
    nv, lab = sim()
    h = nv.nvmlDeviceGetHandleByIndex(0)
    w = lab.start("training")
    (proc,) = nv.nvmlDeviceGetComputeRunningProcesses(h)
    used = math.ceil(0.85 * 81559)
    assert (proc.pid, proc.usedGpuMemory) == (w.pid, used << 20)
    assert nv.nvmlSystemGetProcessName(w.pid) == "python (training)"
    mem = nv.nvmlDeviceGetMemoryInfo(h)
    assert mem.used == (used + 512) << 20 and mem.free == mem.total - mem.used
    assert lab.stop(w) == 1
    assert nv.nvmlDeviceGetComputeRunningProcesses(h) == []
    pid = lab.add_process(0, used_memory_mib=100)
    assert [p.pid for p in nv.nvmlDeviceGetComputeRunningProcesses(h)] == [pid]
    lab.remove_process(pid)
    with pytest.raises(ValueError, match="no process"):
        lab.remove_process(pid)


def test_mig_workloads_per_gpu_instance(sim: SimFactory) -> None:
    nv, lab = sim()
    h = nv.nvmlDeviceGetHandleByIndex(0)
    nv.nvmlDeviceSetMigMode(h, 1)
    gi = nv.nvmlDeviceCreateGpuInstance(h, 19)  # 1g.10gb, 16 SMs
    gi_id = nv.nvmlGpuInstanceGetInfo(gi).id
    with pytest.raises(ValueError, match="no compute instance"):
        lab.start("training", 0, gpu_instance_id=gi_id)
    with pytest.raises(ValueError, match="MIG mode"):
        lab.start("training", 0)
    nv.nvmlGpuInstanceCreateComputeInstance(gi, 0)
    lab.start("training", 0, gpu_instance_id=gi_id)
    with pytest.raises(nv.NVMLError_NotSupported):  # nvml.h: not on a MIG-enabled GPU
        nv.nvmlDeviceGetUtilizationRates(h)
    per_gi = gpm(nv, lab, h, 5, gi=gi_id)
    assert per_gi[nv.NVML_GPM_METRIC_SM_UTIL] == pytest.approx(85)
    whole = gpm(nv, lab, h, 5)
    assert whole[nv.NVML_GPM_METRIC_SM_UTIL] == pytest.approx(85 * 16 / 132)
    mig = nv.nvmlDeviceGetMigDeviceHandleByIndex(h, 0)
    (proc,) = nv.nvmlDeviceGetComputeRunningProcesses(mig)
    assert (proc.gpuInstanceId, proc.computeInstanceId) == (gi_id, 0)
    assert proc.usedGpuMemory == math.ceil(0.85 * 9984) << 20
    assert nv.nvmlDeviceGetMemoryInfo(mig).used == proc.usedGpuMemory


def test_gpm_not_supported_before_hopper(sim: SimFactory) -> None:
    nv, lab = sim("sim:A100-40GB,L40S")
    for i in range(2):
        h = nv.nvmlDeviceGetHandleByIndex(i)
        assert nv.nvmlGpmQueryDeviceSupport(h).isSupportedDevice == 0
        with pytest.raises(nv.NVMLError_NotSupported):
            nv.nvmlGpmSampleGet(h, nv.nvmlGpmSampleAlloc())
    # GA100 reports instantaneous power (nvml.h), so a fresh workload shows at once
    lab.advance(5)
    lab.start("training")
    lab.advance(0.1)
    a100 = nv.nvmlDeviceGetHandleByIndex(0)
    assert nv.nvmlDeviceGetPowerUsage(a100) == round((55 + (400 - 55) * 580 / 630) * 1000)


def test_events_for_xid_and_ecc(sim: SimFactory) -> None:
    nv, lab = sim()
    h = nv.nvmlDeviceGetHandleByIndex(0)
    es = nv.nvmlEventSetCreate()
    nv.nvmlDeviceRegisterEvents(h, nv.nvmlEventTypeXidCriticalError
                                | nv.nvmlEventTypeDoubleBitEccError, es)
    with pytest.raises(nv.NVMLError_Timeout):
        nv.nvmlEventSetWait(es, 100)
    lab.ecc_error(0, uncorrected=True)
    lab.xid(0, 13)
    first, second = nv.nvmlEventSetWait(es, 0), nv.nvmlEventSetWait(es, 0)
    assert (first.eventType, first.eventData) == (nv.nvmlEventTypeDoubleBitEccError, 1)
    assert (second.eventType, second.eventData) == (nv.nvmlEventTypeXidCriticalError, 13)
    assert nv.nvmlDeviceGetUUID(second.device) == nv.nvmlDeviceGetUUID(h)
    assert nv.nvmlDeviceGetTotalEccErrors(h, nv.NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                                          nv.NVML_VOLATILE_ECC) == 1
    assert nv.nvmlDeviceGetRemappedRows(h) == (0, 1, 1, 0)
    lab.reset_gpu(0)
    assert nv.nvmlDeviceGetRemappedRows(h) == (0, 1, 0, 0)
    assert nv.nvmlDeviceGetTotalEccErrors(h, 1, nv.NVML_AGGREGATE_ECC) == 1
    assert nv.nvmlDeviceGetTotalEccErrors(h, 1, nv.NVML_VOLATILE_ECC) == 0
    nv.nvmlEventSetFree(es)


def test_same_seed_same_readings_and_noise_stays_small() -> None:
    def run(seed: int) -> list[Any]:
        gpu.disconnect()
        nv = gpu.connect("sim:2xH100-80GB", seed=seed, clock="virtual", noise=True)
        lab = gpu.simulator()
        h = nv.nvmlDeviceGetHandleByIndex(1)
        lab.start("inference_small_batch", 1)
        out: list[Any] = [nv.nvmlDeviceGetUUID(h)]
        for _ in range(5):
            lab.advance(1.7)
            out += [nv.nvmlDeviceGetPowerUsage(h), nv.nvmlDeviceGetTemperature(h, 0)]
        return out

    try:
        a, b, c = run(7), run(7), run(8)
        assert a == b
        assert a[0] != c[0]
        steady = 70 + 0.35 * 630
        assert all(abs(p / 1000 - steady) <= 0.011 * steady for p in a[5::2])
    finally:
        gpu.disconnect()


def test_wall_clock_lab_runs_by_itself_and_refuses_advance(sim: SimFactory) -> None:
    nv, lab = sim(clock="wall")
    t0 = lab.now()
    nv.nvmlDeviceGetPowerUsage(nv.nvmlDeviceGetHandleByIndex(0))
    assert lab.now() >= t0
    with pytest.raises(ValueError, match="virtual"):
        lab.advance(1)


def test_control_api_rejects_bad_input(sim: SimFactory) -> None:
    _, lab = sim()
    with pytest.raises(ValueError, match="unknown scenario 'gaming'.*training"):
        lab.start("gaming")
    with pytest.raises(ValueError, match="device must be an index"):
        lab.start("training", 3)
    with pytest.raises(ValueError, match="finite"):
        lab.advance(-1)
    with pytest.raises(ValueError, match="reading must be one of"):
        lab.pin(0, "power_w", 1)
    with pytest.raises(ValueError, match="ambient"):
        lab.set_ambient(0, 500)
    with pytest.raises(ValueError, match="at least one"):
        SimulatedLab([])
    assert "GPU 0: H100-80GB MIG off" in lab.describe()


def test_mig_device_indices_stay_dense_after_a_compute_instance_is_destroyed(
        sim: SimFactory) -> None:
    """nvitop walks nvmlDeviceGetMigDeviceHandleByIndex up to the first error: the MIG devices
    left after one is destroyed must still be 0 .. n-1 (the driver renumbers them)."""
    nv, _ = sim("sim:H100-80GB")
    h = nv.nvmlDeviceGetHandleByIndex(0)
    nv.nvmlDeviceSetMigMode(h, 1)
    cis = []
    for profile in (9, 14, 19, 19):  # 3g.40gb, 2g.20gb, 1g.10gb, 1g.10gb
        gi = nv.nvmlDeviceCreateGpuInstance(h, profile)
        cis.append(nv.nvmlGpuInstanceCreateComputeInstance(gi, 0))
    uuids = [nv.nvmlDeviceGetUUID(nv.nvmlDeviceGetMigDeviceHandleByIndex(h, i))
             for i in range(4)]
    nv.nvmlComputeInstanceDestroy(cis[0])
    left = [nv.nvmlDeviceGetUUID(nv.nvmlDeviceGetMigDeviceHandleByIndex(h, i))
            for i in range(3)]
    assert left == uuids[1:]
    with pytest.raises(nv.NVMLError_NotFound):
        nv.nvmlDeviceGetMigDeviceHandleByIndex(h, 3)
