"""Lesson 02: every maximal layout of an 8-unit GPU; board update latency per click (goal < 50 ms).

Run: ``.venv/bin/python benchmarks/bench_mig.py``

- Enumeration: :func:`labkit.mig.maximal_layouts` on H100-80GB (8 memory units, 7 slices), and
  for comparison A30 (4 units) and RTX PRO 6000 (12 units); fresh each time (no cache).
- Board clicks: in a real IPython kernel (as voila runs callbacks), the lesson's board with every
  linked panel (export, live GPU, class workload); each click places a profile (or explains why
  not), redraws the board, Free/Total and fragmentation, re-exports and re-runs the workload.
"""

from __future__ import annotations

import sys
import textwrap
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import percentiles, samples_from_kernel, save

N_CLICKS = 200
SETUP = """
import labkit.gpu as gpu
gpu.connect("sim:H100-80GB")
import labkit.ui as ui
ui.setup()
board = ui.mig.board_app("H100-80GB")
ui.mig.export_panel(board)
ui.mig.live_panel(board)
ui.mig.workload_app(board)
"""
CLICKS = """
import json as _json, time as _time
_moves = [("3g.40gb", 4), ("3g.40gb", 2), ("2g.20gb", 0), ("1g.10gb", None),
          ("1g.10gb", 7), ("1g.10gb", None), ("7g.80gb", 0), ("clear", None)]
_samples = []
for _i in range({n}):
    _profile, _start = _moves[_i % len(_moves)]
    _t = _time.perf_counter()
    if _profile == "clear":
        board.clear()
    else:
        board.profile_select.value = _profile
        board.press(_start)
    _samples.append((_time.perf_counter() - _t) * 1000)
print("SAMPLES" + _json.dumps(_samples))
"""


def time_clicks_in_kernel(n: int) -> dict[str, float]:
    """Time ``n`` board clicks (profile pick + place, or clear) in a fresh kernel. [ms]"""
    code = textwrap.dedent(SETUP) + textwrap.dedent(CLICKS.format(n=n))
    return percentiles(samples_from_kernel(code))


def time_enumeration(model: str, repeat: int = 5) -> dict[str, Any]:
    """Time :func:`labkit.mig.maximal_layouts` (fresh each run). [ms]"""
    from labkit import mig
    from labkit.data.gpus import load_gpu_model

    board = load_gpu_model(model)  # file loading is not part of the timing
    samples, count = [], 0
    for _ in range(repeat):
        t = time.perf_counter()
        count = len(mig.maximal_layouts(board))
        samples.append((time.perf_counter() - t) * 1000)
    return {"maximal_layouts": count, "valid_layouts": len(mig.valid_layouts(board)),
            **percentiles(samples)}


def main() -> None:
    """Measure and save ``benchmarks/results/mig.json``."""
    enumeration = {m: time_enumeration(m) for m in ("H100-80GB", "A30", "RTX-PRO-6000")}
    clicks = time_clicks_in_kernel(N_CLICKS)
    save("mig", {"goal": "board click p95 < 50 ms server side",
                 "maximal_layout_enumeration": enumeration, "board_click": clicks})


if __name__ == "__main__":
    main()
