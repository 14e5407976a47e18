"""Execute, clean and check the lesson notebooks.

``python -m labkit._dev.notebooks execute notebooks/*.ipynb`` runs each notebook headless in the
current environment (nbclient), then cleans it for committing:

- cells marked ``# NBVAL_CHECK_OUTPUT`` keep their text outputs and execution count (nbval only
  checks a marked cell that was committed executed);
- every other cell is stripped of outputs (plots and widget views are heavy and stale);
- widget state and per-cell execution metadata are removed.

``python -m labkit._dev.notebooks check notebooks/*.ipynb`` reports what a committed notebook
must not contain (errors, stale heavy outputs, unexecuted marked cells); tests call
:func:`problems`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import nbformat

MARK = "NBVAL_CHECK_OUTPUT"
KEEP_MIME = ("text/plain", "text/html")
MAX_BYTES = 200_000


def is_marked(cell: nbformat.NotebookNode) -> bool:
    """Whether ``cell`` is a code cell whose output nbval checks (``# NBVAL_CHECK_OUTPUT``)."""
    return cell.cell_type == "code" and MARK in cell.source


def clean(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Strip a notebook for committing (see module docstring); returns it."""
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type != "code":
            continue
        if not is_marked(cell):
            cell.outputs = []
            cell.execution_count = None
            continue
        kept = []
        for out in cell.outputs:
            if out.output_type in ("execute_result", "display_data"):
                out.data = {k: v for k, v in out.data.items() if k in KEEP_MIME}
                out.metadata = {}
                if out.data:
                    kept.append(out)
            elif out.output_type == "stream":
                kept.append(out)
        cell.outputs = kept
    return nb


def execute(path: Path, timeout: int = 600) -> float:
    """Execute ``path`` in place (cwd = its folder), clean it, and return the seconds taken."""
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    elapsed = time.perf_counter() - start
    nbformat.write(clean(nb), path)
    return elapsed


def problems(path: Path) -> list[str]:
    """Return what is wrong with a committed notebook (empty when it is clean)."""
    found = []
    size = path.stat().st_size
    if size > MAX_BYTES:
        found.append(f"{path}: {size} bytes (> {MAX_BYTES}); strip outputs")
    nb = nbformat.read(path, as_version=4)
    if "widgets" in nb.metadata:
        found.append(f"{path}: stored widget state in metadata")
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        where = f"{path} cell {i}"
        if any(o.output_type == "error" for o in cell.outputs):
            found.append(f"{where}: error output")
        if is_marked(cell):
            if cell.execution_count is None or not cell.outputs:
                found.append(f"{where}: marked {MARK} but committed without output")
        elif cell.outputs:
            found.append(f"{where}: unmarked cell committed with outputs")
    return found


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["execute", "check"])
    parser.add_argument("paths", nargs="+", type=Path)
    args = parser.parse_args(argv)
    status = 0
    for path in args.paths:
        if args.command == "execute":
            print(f"{path}: executed in {execute(path):.1f} s")
        found = problems(path)
        for line in found:
            print(line, file=sys.stderr)
        status |= bool(found)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
