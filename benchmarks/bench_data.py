"""The data layer: what loading a lesson's data files costs, schema validation included.

For each file family: the first load in a fresh interpreter with pandas already imported (the
family's modules, building its pydantic schemas on first use, reading and validating the files),
and repeated loads after it. A lesson
kernel pays the first figure once, at start-up.

Run: ``.venv/bin/python benchmarks/bench_data.py``
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import ROOT, percentiles, save

RUNS = 20
FAMILIES = {  # family -> (import, the loader calls of its lesson)
    "economics": ("from labkit.data import economics as m",
                  "m.load_defaults(); m.load_mlperf(); m.load_cloud_prices(); "
                  "m.load_api_prices(); m.load_hardware_prices()"),
    "opex": ("from labkit.data import opex as m", "m.load_servers(1400.0); m.load_opex_defaults()"),
    "reliability": ("from labkit.data import reliability as m",
                    "m.load_month_model(); m.load_llama3_interruptions(); "
                    "m.load_failure_rates(); m.load_meta_mttf(); m.load_daly_intervals()"),
    "scheduling": ("from labkit.data import scheduling as m",
                   "m.load_school_day(); m.load_trace_distribution()"),
    "goodput": ("from labkit.data import goodput as m", "m.load_worksheet_seed()"),
    "school": ("from labkit.data import school as m", "m.load_school_calendar()"),
    "tariffs": ("from labkit.data import tariff as m", "m.load_tariff('교육용(갑) 고압A 선택I')"),
    "gpus": ("from labkit.data import gpus as m",
             "m.load_gpu_model.cache_clear(); [m.load_gpu_model(g) for g in "
             "m.available_models()]"),
}


def _first_load(imports: str, call: str) -> float:
    """Milliseconds of the family's import + first load in a fresh interpreter (after pandas)."""
    code = (f"import pandas, time; t0 = time.perf_counter(); {imports}; {call}; "
            "print((time.perf_counter() - t0) * 1000)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def _repeated(imports: str, call: str) -> dict[str, float]:
    namespace: dict[str, Any] = {}
    exec(imports, namespace)
    code = compile(call, "<loaders>", "exec")
    exec(code, namespace)
    samples = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        exec(code, namespace)
        samples.append((time.perf_counter() - t0) * 1000)
    return percentiles(samples)


def main() -> None:
    results = {}
    for family, (imports, call) in FAMILIES.items():
        results[family] = {"first_load_ms": round(_first_load(imports, call), 1),
                           **_repeated(imports, call)}
        print(family, json.dumps(results[family]))
    save("data", {"families": results})


if __name__ == "__main__":
    main()
