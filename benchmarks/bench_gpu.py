"""labkit.gpu: cost of one simulated NVML call and of a full telemetry read of 8 simulated GPUs.

Goal (issue 3): a full telemetry read well under 1 ms per GPU. Everything goes through pynvml
exactly as a lesson calls it, on a wall-clock lab (time moves between calls, so every reading
integrates the activity model), with the eight GPUs running different scenarios.

Run: ``.venv/bin/python benchmarks/bench_gpu.py``
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import percentiles, save

CALLS = 20_000
READS = 300


def _per_call_us(fn: Callable[[], Any], n: int = CALLS) -> dict[str, float]:
    samples = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n // 5):
            fn()
        samples.append((time.perf_counter() - t0) / (n // 5) * 1e6)
    samples.sort()
    return {"median_us": round(samples[2], 2), "best_us": round(samples[0], 2)}


def telemetry(nv: Any, h: Any) -> dict[str, Any]:
    """One dashboard tick for one GPU: the readings lesson 01 shows (14 NVML calls)."""
    out: dict[str, Any] = {
        "util": nv.nvmlDeviceGetUtilizationRates(h),
        "power_mw": nv.nvmlDeviceGetPowerUsage(h),
        "limit_mw": nv.nvmlDeviceGetEnforcedPowerLimit(h),
        "energy_mj": nv.nvmlDeviceGetTotalEnergyConsumption(h),
        "temp_c": nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU),
        "sm_mhz": nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM),
        "mem_mhz": nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM),
        "reasons": nv.nvmlDeviceGetCurrentClocksEventReasons(h),
        "memory": nv.nvmlDeviceGetMemoryInfo(h),
        "pcie_tx": nv.nvmlDeviceGetPcieThroughput(h, nv.NVML_PCIE_UTIL_TX_BYTES),
        "pcie_rx": nv.nvmlDeviceGetPcieThroughput(h, nv.NVML_PCIE_UTIL_RX_BYTES),
        "procs": nv.nvmlDeviceGetComputeRunningProcesses(h),
        "ecc": nv.nvmlDeviceGetTotalEccErrors(h, 1, 0),
        "fields": nv.nvmlDeviceGetFieldValues(h, [nv.NVML_FI_DEV_MEMORY_TEMP,
                                                  nv.NVML_FI_DEV_POWER_INSTANT]),
    }
    try:
        out["fan"] = nv.nvmlDeviceGetFanSpeed(h)
    except nv.NVMLError_NotSupported:
        out["fan"] = None
    return out


def main() -> None:
    """Measure and save ``benchmarks/results/gpu_sim.json``."""
    import labkit.gpu as gpu

    t0 = time.perf_counter()
    nv = gpu.connect("sim:8xH100-80GB")
    connect_ms = (time.perf_counter() - t0) * 1000
    lab = gpu.simulator()
    scenarios = ["training", "training", "dataloader_starved", "inference_small_batch",
                 "memory_bound", "collective_stall", "tiny_kernel", "idle"]
    for i, name in enumerate(scenarios):
        lab.start(name, i)
    handles = [nv.nvmlDeviceGetHandleByIndex(i) for i in range(8)]
    h = handles[0]

    single = {
        "nvmlDeviceGetCount": _per_call_us(nv.nvmlDeviceGetCount),
        "nvmlDeviceGetPowerUsage": _per_call_us(lambda: nv.nvmlDeviceGetPowerUsage(h)),
        "nvmlDeviceGetUtilizationRates": _per_call_us(
            lambda: nv.nvmlDeviceGetUtilizationRates(h)),
        "nvmlDeviceGetTemperature": _per_call_us(lambda: nv.nvmlDeviceGetTemperature(h, 0)),
        "nvmlDeviceGetGpuInstanceProfileInfo": _per_call_us(
            lambda: nv.nvmlDeviceGetGpuInstanceProfileInfo(h, 0)),
    }
    ticks_ms = []
    for _ in range(READS):
        t0 = time.perf_counter()
        for handle in handles:
            telemetry(nv, handle)
        ticks_ms.append((time.perf_counter() - t0) * 1000)
    tick = percentiles(ticks_ms)
    per_gpu = {k: round(v / 8, 3) for k, v in tick.items() if k.endswith("_ms")}
    save("gpu_sim", {
        "goal": "full telemetry read of 8 simulated GPUs well under 1 ms per GPU",
        "connect_sim_8_gpus_ms": round(connect_ms, 1),
        "one_call_us": single,
        "telemetry_read_8_gpus_ms": tick,
        "telemetry_read_per_gpu_ms": per_gpu,
        "calls_per_gpu_read": 15,
    })
    gpu.disconnect()


if __name__ == "__main__":
    main()
