"""Cost of the shared simulated lab: NVML calls per second, private vs shared, and a tool run.

    .venv/bin/python benchmarks/bench_sim_shared.py

Prints the mean time of ``nvmlDeviceGetPowerUsage`` and ``nvmlDeviceGetMemoryInfo`` on a private
lab and on a shared lab (one ``stat`` of the state file per call), the time to see a change made
by another lab object (reload of ``state.json``), and the wall time of ``nvitop -1`` and
``gpustat --json`` against a shared lab with a 4-device MIG layout.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import labkit.gpu as gpu
from labkit.data.gpus import load_gpu_model
from labkit.gpu import nvml
from labkit.gpu.sim.shared import SharedLab

N_CALLS = 20_000


def _per_call_us(nv: object) -> float:
    h = nv.nvmlDeviceGetHandleByIndex(0)  # type: ignore[attr-defined]
    t0 = time.perf_counter()
    for _ in range(N_CALLS // 2):
        nv.nvmlDeviceGetPowerUsage(h)  # type: ignore[attr-defined]
        nv.nvmlDeviceGetMemoryInfo(h)  # type: ignore[attr-defined]
    return (time.perf_counter() - t0) / N_CALLS * 1e6


def main() -> int:
    """Run the measurements and print them."""
    nv = gpu.connect("sim:H100-80GB", shared=False)
    print(f"private lab: {_per_call_us(nv):.1f} us per NVML call")
    gpu.disconnect()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["LABKIT_SIM_DIR"] = tmp
        nv = gpu.connect("sim:H100-80GB", shared=True)
        print(f"shared lab:  {_per_call_us(nv):.1f} us per NVML call")
        other = SharedLab([load_gpu_model("H100-80GB")], Path(tmp) / "H100-80GB")
        lab = gpu.simulator()
        h = nv.nvmlDeviceGetHandleByIndex(0)
        t0 = time.perf_counter()
        for _ in range(50):
            other.set_ambient(0, 35.0)
            nv.nvmlDeviceGetTemperature(h, 0)
            other.set_ambient(0, 30.0)
            nv.nvmlDeviceGetTemperature(h, 0)
        print(f"change in one lab, seen by the other: {(time.perf_counter() - t0) / 100 * 1e3:.2f}"
              " ms (write + reload)")
        del lab
        gpu.disconnect()
        nvml.uninstall()
        env = {**os.environ, "LABKIT_GPU": "sim:H100-80GB", "LABKIT_SIM_DIR": tmp}
        subprocess.run([sys.executable, "-m", "labkit.gpu", "mig", "-cgi", "9,14,19,19", "-C"],
                       env=env, check=True, capture_output=True)
        bin_dir = Path(sys.executable).parent
        for tool in (["nvitop", "-1"], ["gpustat", "--json"]):
            t0 = time.perf_counter()
            subprocess.run([str(bin_dir / tool[0]), *tool[1:]], env=env, check=True,
                           capture_output=True)
            print(f"{' '.join(tool)}: {time.perf_counter() - t0:.2f} s wall")
    return 0


if __name__ == "__main__":
    sys.exit(main())
