"""Lessons 05-06: widget callback -> figure updated, server side, 200 changes (goal p95 < 50 ms).

Each case builds the apps as the notebook does (linked apps included, so a change that cascades
to every follower is timed whole) and moves one control.

Run: ``.venv/bin/python benchmarks/bench_economics.py``
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import save, time_callbacks_in_kernel

N = 200

LESSON_05 = """
import labkit.ui as ui
server = ui.economics.cluster_app()
ui.economics.aircraft_app(server)
curves = ui.economics.cost_curves_app(server)
ui.economics.demand_app(curves)
ui.economics.rent_app(server)
ui.economics.tornado_app(curves)
"""


def main() -> None:
    """Time the lesson 05 sliders (alone and cascading) and the lesson 06 sliders."""
    results = {
        "05_curves_utilization": time_callbacks_in_kernel(
            LESSON_05 + "root = curves\n", "lk-curves-utilization",
            [5 + (i % 96) for i in range(N)]),
        "05_curves_api_price_cascade": time_callbacks_in_kernel(
            LESSON_05 + "root = curves\n", "lk-curves-api_price_usd_per_m",
            [round(0.1 + (i % 50) * 0.05, 2) for i in range(N)]),
        "05_cluster_capex_cascade_all": time_callbacks_in_kernel(
            LESSON_05 + "root = server\n", "lk-cluster-server_capex_usd",
            [200_000 + (i % 50) * 5_000 for i in range(N)]),
        "05_aircraft_utilization": time_callbacks_in_kernel(
            LESSON_05 + "root = server.children[0]\nroot = ui.economics.aircraft_app(server)\n",
            "lk-aircraft-utilization", [5 + (i % 96) for i in range(N)]),
        "06_claim_precision_gain": time_callbacks_in_kernel(
            "import labkit.ui as ui\nroot = ui.benchmarks.claim_app()\n",
            "lk-claim-precision_gain", [round(1 + (i % 100) * 0.01, 2) for i in range(N)]),
        "06_claim_pick_baseline": time_callbacks_in_kernel(
            "import labkit.ui as ui\nroot = ui.benchmarks.claim_app()\n",
            "lk-claim-baseline", [i % 39 for i in range(N)]),
        "06_racks_demand": time_callbacks_in_kernel(
            "import labkit.ui as ui\nroot = ui.benchmarks.rack_app()\n",
            "lk-racks-demand_tokens_per_s", [1_000 + (i % 100) * 10_000 for i in range(N)]),
    }
    save("economics_callbacks", {"goal": "p95 < 50 ms", "results": results})


if __name__ == "__main__":
    main()
