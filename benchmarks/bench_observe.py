"""Lesson 01: sampler overhead, dashboard update latency, memory of an hour of history.

Goals (issue 4): the sampler at 10 Hz on 8 simulated GPUs x 12 metrics takes < 2 % of one core;
dashboard updates fast enough for 2 renders per second; one hour of 1 Hz history is small.

1. Sampler overhead: a wall-clock simulated lab of 8 H100s running different scenarios; the
   sampler's background thread at 10 Hz for ``RUN_S`` seconds. CPU time of the process (the
   thread, the simulated libnvidia-ml it calls, and an idle main thread) / wall time = share
   of one core. The simulated NVML calls are *included*: on real hardware the driver's calls
   would replace them. Also the per-tick poll time.
2. Dashboard update: server-side time of one forced re-render (10 panels, signals, two
   figures serialised into the Output widgets), in-process and in a real kernel (a rate
   change, via ``time_callbacks_in_kernel``); replay slider moves in a real kernel.
3. Memory: ``History.nbytes`` for 3,600 ticks x 1 GPU x every metric (and x 8 GPUs), and the
   tracemalloc growth of filling it through a sampler on the virtual clock.

Run: ``.venv/bin/python benchmarks/bench_observe.py``
"""

from __future__ import annotations

import sys
import threading
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import percentiles, save, time_callbacks_in_kernel

RUN_S = 20.0
METRICS_12 = ["gpu_util_frac", "mem_copy_util_frac", "sm_active_frac", "sm_occupancy_frac",
              "tensor_active_frac", "dram_active_frac", "fb_used_mib", "power_usage_w",
              "power_limit_w", "gpu_temp_c", "sm_clock_mhz", "clocks_event_reasons"]
SCENARIOS = ["training", "tiny_kernel", "collective_stall", "dataloader_starved",
             "memory_bound", "inference_small_batch", "burn_in", "idle"]


def sampler_overhead() -> dict[str, object]:
    import labkit.gpu as gpu
    from labkit.gpu.sampler import Sampler

    gpu.disconnect()
    nv = gpu.connect("sim:8xH100-80GB", clock="wall")
    lab = gpu.simulator()
    for g, name in enumerate(SCENARIOS):
        if name != "idle":
            lab.start(name, g)
    sampler = Sampler(nv, metrics=METRICS_12)
    durations: list[float] = []
    sampler.start(10.0, max_run_s=None,
                  on_snapshot=lambda snap: durations.append(snap.duration_s * 1000))
    time.sleep(1.0)  # warm-up
    durations.clear()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    time.sleep(RUN_S)
    cpu1, wall1 = time.process_time(), time.perf_counter()
    ticks = len(durations)
    sampler.stop()
    sampler.close()
    gpu.disconnect()
    return {
        "gpus": 8, "metrics": len(METRICS_12), "rate_hz": 10, "run_s": RUN_S,
        "ticks": ticks, "achieved_hz": round(ticks / (wall1 - wall0), 2),
        "cpu_share_of_one_core_pct": round(100 * (cpu1 - cpu0) / (wall1 - wall0), 2),
        "poll_ms": percentiles(durations),
        "goal": "< 2 % of one core",
    }


def render_latency() -> dict[str, object]:
    import labkit.gpu as gpu
    from labkit.ui import observe as ui

    gpu.disconnect()
    nv = gpu.connect("sim:H100-80GB", clock="wall")
    lab = gpu.simulator()
    lab.start("training", 0)
    app = ui.dashboard(nv=nv, lab=lab)
    assert app.sampler is not None
    for _ in range(60):  # a minute of history at 1 Hz on the charts
        app.sampler.poll()
        time.sleep(0.005)
    samples = []
    for _ in range(40):
        t0 = time.perf_counter()
        app.render(force=True)
        samples.append((time.perf_counter() - t0) * 1000)
    app.close()
    gpu.disconnect()
    kernel_rate = time_callbacks_in_kernel(
        "import os\nos.environ['LABKIT_GPU'] = 'sim:H100-80GB'\n"
        "import labkit.ui as ui\nui.setup()\nroot = ui.observe.dashboard()\n",
        "lk-observe-rate", [2.0, 1.0] * 15)
    kernel_replay = time_callbacks_in_kernel(
        "import labkit.ui as ui\nui.setup()\nroot = ui.observe.replay_app()\n",
        "lk-replay-time", list(range(1, 61, 2)))
    return {"render_in_process_ms": percentiles(samples),
            "rate_change_in_kernel_ms": kernel_rate,
            "replay_slider_in_kernel_ms": kernel_replay,
            "render_interval_s": ui.RENDER_INTERVAL_S}


def history_memory() -> dict[str, object]:
    import labkit.gpu as gpu
    from labkit.gpu.sampler import Sampler
    from labkit.observe import CATALOG, History

    one = History([0], list(CATALOG), 3600)
    eight = History(list(range(8)), list(CATALOG), 3600)
    gpu.disconnect()
    nv = gpu.connect("sim:H100-80GB", clock="virtual", noise=True)
    lab = gpu.simulator()
    lab.start("training", 0)
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    sampler = Sampler(nv, clock=lab.now, capacity=3600)
    sampler.run(3600, rate_hz=1, sleep=lab.advance)
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    frame_t0 = time.perf_counter()
    frame = sampler.history.frame()
    frame_ms = (time.perf_counter() - frame_t0) * 1000
    gpu.disconnect()
    return {
        "metrics": len(CATALOG),
        "history_nbytes_1gpu_1h_1hz": one.nbytes,
        "history_nbytes_8gpu_1h_1hz": eight.nbytes,
        "sampler_1gpu_1h_traced_current_bytes": current - base,
        "sampler_1gpu_1h_traced_peak_bytes": peak - base,
        "tidy_frame_rows": len(frame), "tidy_frame_ms": round(frame_ms, 1),
    }


def main() -> None:
    result = {"sampler": sampler_overhead(), "memory": history_memory(),
              "dashboard": render_latency(),
              "threads_left": [t.name for t in threading.enumerate()
                               if t.name == "labkit-observe-sampler"]}
    save("observe", result)


if __name__ == "__main__":
    main()
