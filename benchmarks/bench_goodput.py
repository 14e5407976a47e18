"""Lesson 03: widget callback -> figure updated, server side, over 200 changes (goal p95 < 50 ms).

Run: ``.venv/bin/python benchmarks/bench_goodput.py``
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import save, time_callbacks_in_kernel

N = 200


def main() -> None:
    """Time the ledger, the comparison slider and the straggler slider."""
    ledger_setup = "import labkit.ui as ui\nroot = ui.goodput.worksheet_app()\n"
    results = {
        "ledger_loss_edit": time_callbacks_in_kernel(
            ledger_setup, "lk-worksheet-failure_stops", [float(i % 80) for i in range(N)]),
        "comparison_slider": time_callbacks_in_kernel(
            "import labkit.ui as ui\nledger = ui.goodput.worksheet_app()\n"
            "root = ui.goodput.comparison_app(ledger)\n",
            "lk-compare-goodput", [30 + (i % 140) * 0.5 for i in range(N)]),
        "straggler_slider_linked": time_callbacks_in_kernel(
            "import labkit.ui as ui\nledger = ui.goodput.worksheet_app()\n"
            "ui.goodput.comparison_app(ledger)\nroot = ui.goodput.straggler_app(ledger)\n",
            "lk-straggler-slowdown", [round(1 + (i % 100) * 0.004, 3) for i in range(N)]),
    }
    save("goodput_callbacks", {"goal": "p95 < 50 ms", "results": results})


if __name__ == "__main__":
    main()
