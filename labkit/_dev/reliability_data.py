"""Write lesson 04's tables derived from StepFun's InfiniteHBD fault trace into ``data/``.

``python -m labkit._dev.reliability_data [TRACE_FOLDER]`` reads ``fault_trace.json`` (default:
the project's ``shared/reference/traces/stepfun_infinitehbd``), derives the tables with
:mod:`labkit.fault_trace` and writes ``data/reliability/stepfun_*.csv`` with their source,
as-of and licence lines. ``tests/test_reliability_data.py`` recomputes them when the trace is
present.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from labkit.data import data_dir
from labkit.data.reliability import DIR, derive_stepfun_tables, find_stepfun_trace

SOURCE = ("stepfun-ai/InfiniteHBD-Trace, fault_trace.json (commit 7aacdc8, released 2025-05-21); "
          "paper: InfiniteHBD, arXiv 2502.03885, SIGCOMM 2025")
AS_OF = "2025-05-21"
LICENSE = ("Apache-2.0 (derived from the InfiniteHBD trace, Copyright StepFun; the raw trace is "
           "not redistributed here)")
TITLES = {
    "stepfun_fault_rates": "Fault starts per 1,000 node-days by level and class (400 GPU servers, "
                           "348 days)",
    "stepfun_repair_days": "Repair time (fault end - start) in days, overall and per level",
    "stepfun_interarrival": "Burstiness of fault starts across the cluster and their "
                            "concentration on a few nodes",
}
NOTES = {
    "stepfun_repair_days": "faults paired per node with the end of the same fault type; pairing "
                           "by time order alone closes two faults with another class's end and "
                           "shifts the p90 to 13.5 d (13.0 d here). Quantiles: numpy linear.",
    "stepfun_interarrival": "gap_cv is 1 for a Poisson stream; larger means bursts. "
                            "unavailable_frac = node-days in a fault / (400 x 348).",
}


def write_tables(trace: Path, out: Path) -> list[Path]:
    """Derive the tables from ``trace`` and write them under ``out``; return the paths."""
    written = []
    for name, frame in derive_stepfun_tables(trace).items():
        lines = [f"# title: {TITLES[name]}", f"# source: {SOURCE}", f"# as_of: {AS_OF}",
                 f"# license: {LICENSE}",
                 "# derived_by: python -m labkit._dev.reliability_data (labkit.fault_trace)"]
        if name in NOTES:
            lines.append(f"# note: {NOTES[name]}")
        path = out / f"{name}.csv"
        body = frame.to_csv(index=False, float_format="%.6g", lineterminator="\n")
        path.write_text("\n".join(lines) + "\n" + body, encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", nargs="?", type=Path, help="folder with fault_trace.json")
    args = parser.parse_args(argv)
    trace = args.trace or find_stepfun_trace()
    if trace is None:
        print("InfiniteHBD trace not found: pass its folder", file=sys.stderr)
        return 2
    for path in write_tables(trace, data_dir() / DIR):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
