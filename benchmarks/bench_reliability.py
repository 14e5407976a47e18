"""Lesson 04: the Monte Carlo month and slider -> chart latency.

- ``simulate_month``: 4,096 GPUs x 720 h x 10,000 trials (goal < 1 s on the 2-core machine),
  best of 7 runs and the median, plus 20,000 trials (the app's cap) and 100,000 (the model's);
- widget callbacks in a real kernel (as voila runs them): the checkpoint-interval slider, the
  write-cost slider, and the Monte Carlo app's interval slider (a fresh 10,000-trial run each).

Run: ``.venv/bin/python benchmarks/bench_reliability.py``
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import save, time_callbacks_in_kernel
from labkit import reliability as rel
from labkit.data.reliability import load_month_model

N = 200


def _time_simulation(trials: int, repeats: int) -> dict[str, float]:
    month = load_month_model().kwargs()
    samples = []
    for seed in range(repeats):
        start = time.perf_counter()
        rel.simulate_month(**month, trials=trials, seed=seed)
        samples.append((time.perf_counter() - start) * 1000)
    return {"trials": trials, "best_ms": round(min(samples), 1),
            "median_ms": round(statistics.median(samples), 1),
            "max_ms": round(max(samples), 1), "runs": repeats}


def main() -> None:
    """Time the simulation and the lesson's slider callbacks."""
    rel.simulate_month(**load_month_model().kwargs(), trials=100, seed=0)  # warm imports
    simulation = [_time_simulation(10_000, 7), _time_simulation(20_000, 5),
                  _time_simulation(100_000, 3)]
    setup = "import labkit.ui as ui\nroot = ui.reliability.{}()\n"
    callbacks = {
        "interval_slider": time_callbacks_in_kernel(
            setup.format("interval_app"), "lk-interval-interval_min",
            [float(10 + i % 200) for i in range(N)]),
        "write_cost_slider": time_callbacks_in_kernel(
            setup.format("interval_app"), "lk-interval-write_min",
            [round(0.5 + (i % 50) * 0.2, 1) for i in range(N)]),
        "monte_carlo_interval_slider_10k_trials": time_callbacks_in_kernel(
            setup.format("month_app"), "lk-month-interval_min",
            [float(10 + i % 100) for i in range(50)]),
    }
    save("reliability", {
        "goal": "simulate_month 4,096 GPUs x 720 h x 10,000 trials < 1 s; callbacks p95 < 50 ms "
                "(Monte Carlo app: one full 10,000-trial run per change)",
        "simulate_month": simulation, "callbacks": callbacks,
    })


if __name__ == "__main__":
    main()
