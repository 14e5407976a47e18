"""Headless execution time of every lesson notebook (nbclient, as nbval runs them).

Run: ``.venv/bin/python benchmarks/bench_notebooks.py`` (executes copies; the committed notebooks
are not touched).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import ROOT, save


def main() -> None:
    """Execute each notebook once in a fresh kernel and report the seconds (kernel start incl.)."""
    results = {}
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        start = time.perf_counter()
        NotebookClient(nb, timeout=600, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        results[path.name] = round(time.perf_counter() - start, 2)
    results["total_s"] = round(sum(results.values()), 2)
    save("notebooks_headless", {"unit": "s", "results": results})


if __name__ == "__main__":
    main()
