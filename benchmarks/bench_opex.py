"""Lesson 07: a year of hourly load -> 12 KEPCO bills (goal < 50 ms); slider -> chart latency.

Run: ``.venv/bin/python benchmarks/bench_opex.py``
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import percentiles, save, time_callbacks_in_kernel

N = 200


def _bill_times(freq: str, periods: int, runs: int) -> dict[str, dict[str, float]]:
    import numpy as np
    import pandas as pd

    from labkit.data.tariff import load_tariff
    from labkit.tariff import monthly_bill

    index = pd.date_range("2026-01-01", periods=periods, freq=freq, tz="Asia/Seoul")
    load = pd.Series(np.random.default_rng(0).uniform(5, 16, periods), index=index)
    results = {}
    for name in ("교육용(갑) 고압A 선택I", "교육용(을) 고압A 선택I"):
        tariff = load_tariff(name)
        monthly_bill(tariff, load, 20, repeat_year=True)  # warm up
        samples = []
        for _ in range(runs):
            t0 = time.perf_counter()
            monthly_bill(tariff, load, 20, repeat_year=True)
            samples.append((time.perf_counter() - t0) * 1000)
        results[name] = percentiles(samples)
    return results


def main() -> None:
    """Time the bill of a year (hourly and per minute) and the lesson's sliders in a kernel."""
    pue_values = [round(1.1 + (i % 18) * 0.05, 2) for i in range(N)]
    room = "import labkit.ui as ui\nroot = ui.opex.room_app()\n"
    lesson = ("import labkit.ui as ui\nroot = ui.opex.room_app()\nui.opex.cost_view(root)\n"
              "ui.opex.unit_costs_view(root)\nui.opex.sensitivity_app(root)\n"
              "ui.opex.class_hours_view(root)\nui.opex.export_panel(root)\n")
    results = {
        "year_hourly_to_12_bills": _bill_times("h", 8760, N),
        "year_per_minute_to_12_bills": _bill_times("min", 8760 * 60, 10),
        "pue_slider_room_only": time_callbacks_in_kernel(room, "lk-room-pue", pue_values),
        "pue_slider_whole_lesson": time_callbacks_in_kernel(lesson, "lk-room-pue",
                                                            pue_values[:60]),
    }
    save("opex", {"goal": "12 bills from a year of hourly load < 50 ms; slider p95 reported",
                  "results": results})


if __name__ == "__main__":
    main()
