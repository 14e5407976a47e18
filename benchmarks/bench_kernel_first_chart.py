"""Kernel side of issue 17's open -> first chart: a lesson kernel's CPU seconds to its first chart.

A fresh ``python3`` kernel (jupyter_client, the kernelspec JupyterLab starts) runs a lesson's
code cells in order until the first plotly figure is sent (a ``display_data`` with plotly's
mimetype on iopub, also from inside an Output widget). The figure is the kernel's own CPU time
(user + system, read with psutil), kernel start included: unlike wall time, a loaded machine
does not stretch it. Goal (issue 17, step 21's brief): <= 1.2 CPU-s per lesson. The load
average is saved beside each figure.

``--profile NN`` also runs that lesson's first cells under cProfile inside a kernel and prints
the top cumulative entries (what to trim next).

Run: ``.venv/bin/python benchmarks/bench_kernel_first_chart.py [--lessons 03,07] [--repeat 3]
[--profile 07]``; writes ``benchmarks/results/kernel_first_chart.json``.
"""

from __future__ import annotations

import argparse
import os
import queue
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import nbformat
import psutil
from jupyter_client.manager import start_new_kernel

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import ROOT, save

PLOTLY_MIME = "application/vnd.plotly.v1+json"
GOAL_CPU_S = 1.2


def _has_plot(msg: dict[str, Any]) -> bool:
    content = msg.get("content", {})
    if msg["msg_type"] in ("display_data", "execute_result", "update_display_data"):
        return PLOTLY_MIME in content.get("data", {})
    if msg["msg_type"] == "comm_msg":  # an Output widget's outputs trait set directly
        state = content.get("data", {}).get("state", {})
        return any(PLOTLY_MIME in (out.get("data") or {}) for out in state.get("outputs", []))
    return False


def code_cells(path: Path) -> list[str]:
    """Return the source of each code cell of a notebook."""
    nb = nbformat.read(path, as_version=4)
    return [cell.source for cell in nb.cells if cell.cell_type == "code"]


def first_chart(path: Path, *, profile: bool = False) -> dict[str, Any]:
    """Run ``path``'s cells in a fresh kernel until its first figure; return CPU and wall [s]."""
    start = time.perf_counter()
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(path.parent))
    try:
        pid = getattr(km.provisioner, "pid", None)  # LocalProvisioner: the kernel process
        proc = psutil.Process(pid)
        ready = time.perf_counter() - start
        cpu_ready = sum(proc.cpu_times()[:2])
        if profile:
            kc.execute_interactive("import cProfile as _cp; _pr = _cp.Profile(); _pr.enable()",
                                   timeout=60)
        cells_run, found = 0, False
        for source in code_cells(path):
            cells_run += 1
            msg_id = kc.execute(source)
            while True:
                try:
                    msg = kc.get_iopub_msg(timeout=120)
                except queue.Empty as err:
                    raise RuntimeError(f"{path.name}: no output in 120 s") from err
                if msg.get("parent_header", {}).get("msg_id") != msg_id:
                    continue
                if _has_plot(msg):
                    found = True
                if (msg["msg_type"] == "status"
                        and msg["content"]["execution_state"] == "idle"):
                    break
            if found:
                break
        cpu = sum(proc.cpu_times()[:2])
        wall = time.perf_counter() - start
        if profile:
            kc.execute_interactive(
                "_pr.disable(); import pstats as _ps; "
                "_ps.Stats(_pr).sort_stats('cumulative').print_stats(40)", timeout=60)
        return {"kernel_ready_s": round(ready, 3), "kernel_cpu_at_ready_s": round(cpu_ready, 3),
                "kernel_cpu_at_first_chart_s": round(cpu, 3),
                "wall_to_first_chart_s": round(wall, 3),
                "cells_run": cells_run, "chart_found": found}
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def main() -> None:
    """Measure each lesson ``--repeat`` times; print a table; save the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lessons", default="", help="e.g. 03,07 (default: all)")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--profile", default="", help="a lesson number: print its cProfile")
    args = parser.parse_args()
    paths = sorted((ROOT / "notebooks").glob("0*.ipynb"))
    if args.lessons:
        wanted = tuple(args.lessons.split(","))
        paths = [p for p in paths if p.name.startswith(wanted)]
    if args.profile:
        for path in paths:
            if path.name.startswith(args.profile):
                first_chart(path, profile=True)
        return
    results: dict[str, Any] = {}
    print(f"{'lesson':<24}{'cpu@ready':>10}{'cpu@chart':>10}{'wall':>8}{'load':>6}")
    for path in paths:
        load_before = os.getloadavg()[0]
        runs = [first_chart(path) for _ in range(args.repeat)]
        cpu = statistics.median(r["kernel_cpu_at_first_chart_s"] for r in runs)
        results[path.stem] = {"runs": runs, "median_kernel_cpu_s": round(cpu, 3),
                              "loadavg_before": round(load_before, 2),
                              "loadavg_after": round(os.getloadavg()[0], 2)}
        print(f"{path.stem:<24}"
              f"{statistics.median(r['kernel_cpu_at_ready_s'] for r in runs):>10.2f}{cpu:>10.2f}"
              f"{statistics.median(r['wall_to_first_chart_s'] for r in runs):>8.2f}"
              f"{load_before:>6.1f}")
    save("kernel_first_chart", {"unit": "s", "goal_cpu_s": GOAL_CPU_S, "repeat": args.repeat,
                                "cpu_count": os.cpu_count(), "results": results})


if __name__ == "__main__":
    main()
