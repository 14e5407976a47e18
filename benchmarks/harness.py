"""Shared helpers for the benchmarks (not collected by pytest; run ``make bench``).

Figures are measured, never asserted: each script prints a table and writes JSON to
``benchmarks/results/``. Report them in the closing note of the issue that set the target.
"""

from __future__ import annotations

import json
import statistics
import sys
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def percentiles(samples_ms: Sequence[float]) -> dict[str, float]:
    """Return n, p50, p95, max of a list of milliseconds."""
    ordered = sorted(samples_ms)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"n": len(ordered), "p50_ms": round(statistics.median(ordered), 2),
            "p95_ms": round(p95, 2), "max_ms": round(ordered[-1], 2)}


def save(name: str, result: dict[str, Any]) -> Path:
    """Write ``result`` (plus machine info) to benchmarks/results/<name>.json and print it."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    result = {"benchmark": name, "python": sys.version.split()[0],
              "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **result}
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(result, indent=2, ensure_ascii=False))
    print(json.dumps(result, indent=2, ensure_ascii=False))
    return path


def time_callbacks_in_kernel(setup: str, control: str, values: Sequence[Any]) -> dict[str, float]:
    """Time widget callbacks server side, in a real IPython kernel (as voila runs them).

    Parameters
    ----------
    setup : str
        Code that builds the app(s) in the kernel, binding a name ``root`` to a widget.
    control : str
        CSS class of the control to move (found under ``root`` with ``find_by_class``).
    values : sequence
        Values assigned in turn; each assignment runs the app's callback synchronously (model,
        figure build, display into the Output) and is timed.

    Returns
    -------
    dict
        ``percentiles`` of the per-change milliseconds.
    """
    code = textwrap.dedent(setup) + textwrap.dedent(f"""
        import json as _json, time as _time
        from labkit.ui.components import find_by_class as _find
        _control = _find(root, {control!r})
        _samples = []
        for _v in {list(values)!r}:
            _t = _time.perf_counter()
            _control.value = _v
            _samples.append((_time.perf_counter() - _t) * 1000)
        print("SAMPLES" + _json.dumps(_samples))
    """)
    return percentiles(samples_from_kernel(code))


def samples_from_kernel(code: str) -> list[float]:
    """Run ``code`` in a fresh IPython kernel; return the list it prints after ``SAMPLES``.

    Raises
    ------
    RuntimeError
        If the code fails (its traceback is in the message) or prints no ``SAMPLES`` line.
    """
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3")
    out: list[str] = []

    def hook(msg: dict[str, Any]) -> None:
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            out.append("\n".join(msg["content"]["traceback"]))

    try:
        kc.execute_interactive(code, output_hook=hook, timeout=600)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    text = "".join(out)
    if "SAMPLES" not in text:
        raise RuntimeError(f"benchmark code failed:\n{text}")
    return [float(x) for x in json.loads(text.split("SAMPLES", 1)[1].splitlines()[0])]
