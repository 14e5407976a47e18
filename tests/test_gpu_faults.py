"""Injected faults surface as the matching pynvml exceptions; the NVML-level observation cases
of shared/cases/observe.md; nothing else breaks."""

from __future__ import annotations

import pynvml as N
import pytest

from labkit.gpu import nvml
from labkit.gpu.sim import PRESETS, error_code
from tests.conftest import SimFactory

ALL_CODES = sorted(code for code in N.NVMLError._valClassMapping if code != N.NVML_SUCCESS)


@pytest.mark.parametrize("code", ALL_CODES)
def test_every_injected_error_raises_its_pynvml_class(sim: SimFactory, code: int) -> None:
    nv, lab = sim()
    h = nv.nvmlDeviceGetHandleByIndex(0)
    lab.inject("nvmlDeviceGetPowerUsage", code)
    with pytest.raises(N.nvmlExceptionClass(code)) as err:
        nv.nvmlDeviceGetPowerUsage(h)
    assert err.value.value == code
    assert nv.nvmlDeviceGetTemperature(h, 0) > 0  # other calls keep working
    lab.clear_faults()
    assert nv.nvmlDeviceGetPowerUsage(h) == 70_000


@pytest.mark.parametrize(("name", "cls"), [
    ("LibraryNotFound", N.NVMLError_LibraryNotFound),
    ("DriverNotLoaded", N.NVMLError_DriverNotLoaded),
    ("LibRmVersionMismatch", N.NVMLError_LibRmVersionMismatch),
])
def test_init_faults(sim: SimFactory, name: str, cls: type) -> None:
    nv, lab = sim()
    lab.fail_init(name)
    nv.nvmlShutdown()
    with pytest.raises(cls):
        nv.nvmlInit()
    with pytest.raises(N.NVMLError_Uninitialized):
        nv.nvmlDeviceGetCount()
    lab.fail_init(None)
    nv.nvmlInit()
    assert nv.nvmlDeviceGetCount() == 1


def test_error_strings_come_from_the_library(sim: SimFactory) -> None:
    nv, lab = sim()
    lab.inject("nvmlDeviceGetCount", "InUse")
    with pytest.raises(N.NVMLError_InUse) as err:
        nv.nvmlDeviceGetCount()
    assert str(err.value) == "In use by another client"
    assert nv.nvmlErrorString(N.NVML_ERROR_GPU_IS_LOST) == "GPU is lost"


def test_per_device_and_counted_faults(sim: SimFactory) -> None:
    nv, lab = sim("sim:2xH100-80GB")
    h0, h1 = nv.nvmlDeviceGetHandleByIndex(0), nv.nvmlDeviceGetHandleByIndex(1)
    lab.inject("nvmlDeviceGetTemperature", "Unknown", device=1, count=2)
    assert nv.nvmlDeviceGetTemperature(h0, 0) > 0
    for _ in range(2):
        with pytest.raises(N.NVMLError_Unknown):
            nv.nvmlDeviceGetTemperature(h1, 0)
    assert nv.nvmlDeviceGetTemperature(h1, 0) > 0


def test_function_not_found_like_an_old_driver(sim: SimFactory) -> None:
    nv, lab = sim()
    h = nv.nvmlDeviceGetHandleByIndex(0)
    assert nv.nvmlDeviceGetTemperatureV(h, 0) > 0  # cached by pynvml before removal
    lab.inject("nvmlDeviceGetTemperatureV", "FunctionNotFound")
    with pytest.raises(N.NVMLError_FunctionNotFound):
        nv.nvmlDeviceGetTemperatureV(h, 0)
    lab.restore_function("nvmlDeviceGetTemperatureV")
    assert nv.nvmlDeviceGetTemperatureV(h, 0) > 0
    lab.apply_preset("old_driver")
    with pytest.raises(N.NVMLError_FunctionNotFound):
        nv.nvmlGpmSampleGet(h, nv.nvmlGpmSampleAlloc())
    # nvdashboard's import-time call (issue 15): simulated now; the preset leaves it alone
    assert nv.nvmlDeviceGetNvLinkVersion(h, 0) == N.NVML_NVLINK_VERSION_4_0
    lab.clear_faults()
    assert nv.nvmlGpmQueryDeviceSupport(h).isSupportedDevice == 1


def test_error_code_accepts_names_classes_and_codes() -> None:
    assert error_code("NotSupported") == error_code("NVML_ERROR_NOT_SUPPORTED") == 3
    assert error_code(N.NVMLError_GpuIsLost) == error_code("NVMLError_GpuIsLost") == 15
    assert error_code(23) == 23
    for bad in ("NoSuchError", 4242):
        with pytest.raises(ValueError, match="unknown NVML error"):
            error_code(bad)


def test_inject_rejects_unknown_function_device_and_count(sim: SimFactory) -> None:
    _, lab = sim()
    with pytest.raises(ValueError, match="no simulated NVML function"):
        lab.inject("nvmlDeviceGetWarpDrive", "NotSupported")
    with pytest.raises(ValueError, match="device"):
        lab.inject("nvmlDeviceGetPowerUsage", "NotSupported", device=5)
    with pytest.raises(ValueError, match="count"):
        lab.inject("nvmlDeviceGetPowerUsage", "NotSupported", count=0)
    with pytest.raises(ValueError, match="preset"):
        lab.apply_preset("gamer")
    assert sorted(PRESETS) == ["consumer", "old_driver", "vgpu"]


# --- shared/cases/observe.md (NVML level) ---------------------------------------------------


def test_observe_case1_no_driver_init_fails_with_code_9_or_12(sim: SimFactory) -> None:
    nv, lab = sim()
    nv.nvmlShutdown()
    lab.fail_init(N.NVML_ERROR_DRIVER_NOT_LOADED)
    with pytest.raises(N.NVMLError_DriverNotLoaded):
        nv.nvmlInit()
    lab.fail_init(N.NVML_ERROR_LIBRARY_NOT_FOUND)
    with pytest.raises(N.NVMLError_LibraryNotFound):
        nv.nvmlInit()


def test_observe_case2_pcie_and_nvlink_not_supported_other_readings_fine(sim: SimFactory) -> None:
    nv, lab = sim()
    h = nv.nvmlDeviceGetHandleByIndex(0)
    lab.apply_preset("vgpu")
    for _ in range(3):  # every tick, not only the first
        with pytest.raises(N.NVMLError_NotSupported):
            nv.nvmlDeviceGetPcieThroughput(h, N.NVML_PCIE_UTIL_TX_BYTES)
    values = nv.nvmlDeviceGetFieldValues(h, [N.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX,
                                             N.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX,
                                             N.NVML_FI_DEV_POWER_INSTANT])
    assert [v.nvmlReturn for v in values] == [3, 3, 0]
    assert nv.nvmlDeviceGetPowerUsage(h) == 70_000


def test_observe_case3_fan_not_supported_on_passive_boards_consumer_preset(
        sim: SimFactory) -> None:
    nv, lab = sim("sim:H100-80GB,L40S")
    for i in range(2):
        with pytest.raises(N.NVMLError_NotSupported):
            nv.nvmlDeviceGetFanSpeed(nv.nvmlDeviceGetHandleByIndex(i))
    lab.apply_preset("consumer", device=1)
    h0, h1 = nv.nvmlDeviceGetHandleByIndex(0), nv.nvmlDeviceGetHandleByIndex(1)
    for call in (lambda h: nv.nvmlDeviceGetPowerUsage(h),
                 lambda h: nv.nvmlDeviceGetEnforcedPowerLimit(h),
                 lambda h: nv.nvmlDeviceGetTotalEccErrors(h, 1, 0)):
        with pytest.raises(N.NVMLError_NotSupported):
            call(h1)
        call(h0)
    assert nv.nvmlDeviceGetTemperature(h1, 0) > 0


def test_observe_case8_gpu_falls_off_the_bus_at_30_s(sim: SimFactory) -> None:
    nv, lab = sim("sim:4xH100-80GB")
    handles = [nv.nvmlDeviceGetHandleByIndex(i) for i in range(4)]
    es = nv.nvmlEventSetCreate()
    nv.nvmlDeviceRegisterEvents(handles[2], N.nvmlEventTypeXidCriticalError, es)
    lab.xid(2, 79, at_s=30)
    lab.advance(29)
    assert nv.nvmlDeviceGetPowerUsage(handles[2]) == 70_000
    with pytest.raises(N.NVMLError_Timeout):
        nv.nvmlEventSetWait(es, 0)
    lab.advance(1)
    for call in (lambda: nv.nvmlDeviceGetHandleByIndex(2),
                 lambda: nv.nvmlDeviceGetPowerUsage(handles[2]),
                 lambda: nv.nvmlDeviceGetUtilizationRates(handles[2])):
        with pytest.raises(N.NVMLError_GpuIsLost):
            call()
    for i in (0, 1, 3):
        assert nv.nvmlDeviceGetPowerUsage(nv.nvmlDeviceGetHandleByIndex(i)) == 70_000
    assert nv.nvmlDeviceGetCount() == 4
    event = nv.nvmlEventSetWait(es, 0)
    assert (event.eventType, event.eventData) == (0x8, 79)
    lab.reset_gpu(2)
    assert nv.nvmlDeviceGetPowerUsage(nv.nvmlDeviceGetHandleByIndex(2)) == 70_000


def _gpm_sm_tensor(nv: object, lab: object, h: object) -> tuple[float, float]:
    from tests.test_gpu_sim import gpm

    metrics = gpm(nv, lab, h, 60)  # type: ignore[arg-type]
    return metrics[N.NVML_GPM_METRIC_SM_UTIL], metrics[N.NVML_GPM_METRIC_ANY_TENSOR_UTIL]


def test_observe_case10_busy_but_idle_rank_vs_healthy_rank(sim: SimFactory) -> None:
    """Both read util 100 %; SM 0.01 / tensor 0 / 70 W vs SM 0.85 / tensor 0.6 / 650 W."""
    nv, lab = sim("sim:2xH100-80GB")
    stalled, healthy = nv.nvmlDeviceGetHandleByIndex(0), nv.nvmlDeviceGetHandleByIndex(1)
    lab.start("collective_stall", 0)
    lab.start("training", 1)
    lab.advance(5)
    t_stalled = nv.nvmlDeviceGetTemperature(stalled, 0)
    stall_sm, stall_tensor = _gpm_sm_tensor(nv, lab, stalled)
    ok_sm, ok_tensor = _gpm_sm_tensor(nv, lab, healthy)
    assert [nv.nvmlDeviceGetUtilizationRates(h).gpu for h in (stalled, healthy)] == [100, 100]
    assert (stall_sm, stall_tensor) == (pytest.approx(1.0), 0.0)
    assert (ok_sm, ok_tensor) == (pytest.approx(85.0), pytest.approx(60.0))
    assert nv.nvmlDeviceGetPowerUsage(stalled) == 70_000
    assert nv.nvmlDeviceGetPowerUsage(healthy) == 650_000
    assert nv.nvmlDeviceGetTemperature(stalled, 0) == t_stalled  # temperature flat


def test_observe_case12_slow_nvml_calls(sim: SimFactory) -> None:
    """Each call costs 20 ms: 8 GPUs x 12 calls take ~1.9 s of (virtual) time."""
    nv, lab = sim("sim:8xH100-80GB")
    handles = [nv.nvmlDeviceGetHandleByIndex(i) for i in range(8)]
    lab.set_call_latency(0.02)
    t0 = lab.now()
    for h in handles:
        for _ in range(12):
            nv.nvmlDeviceGetPowerUsage(h)
    assert lab.now() - t0 == pytest.approx(8 * 12 * 0.02)
    with pytest.raises(ValueError, match="latency"):
        lab.set_call_latency(5)


def test_observe_units_power_mw_and_energy_mj(sim: SimFactory) -> None:
    """NVML power is mW (4034 -> 4.0 W), energy mJ (123456789 -> 123.5 kJ)."""
    nv, lab = sim()
    h = nv.nvmlDeviceGetHandleByIndex(0)
    lab.pin(0, "power_usage_mw", 4034)
    lab.pin(0, "energy_mj", 123_456_789)
    assert nv.nvmlDeviceGetPowerUsage(h) / 1000 == pytest.approx(4.034)
    assert nv.nvmlDeviceGetTotalEnergyConsumption(h) / 1e6 == pytest.approx(123.456789)
    lab.pin(0, "power_usage_mw", None)
    assert nv.nvmlDeviceGetPowerUsage(h) == 70_000


def test_query_helper_turns_nvml_errors_into_none(sim: SimFactory) -> None:
    nv, _ = sim()
    h = nv.nvmlDeviceGetHandleByIndex(0)
    assert nvml.query(nv.nvmlDeviceGetFanSpeed, h) is None
    assert nvml.query(nv.nvmlDeviceGetFanSpeed, h, default=-1) == -1
    value, err = nvml.try_query(nv.nvmlDeviceGetFanSpeed, h)
    assert value is None and isinstance(err, N.NVMLError_NotSupported)
    assert nvml.query(nv.nvmlDeviceGetName, h) == "NVIDIA H100 80GB HBM3"
    with pytest.raises(TypeError):  # not an NVML error: a bug, not swallowed
        nvml.query(nv.nvmlDeviceGetName)
