"""ruff and mypy over labkit, tests and benchmarks (the house style's gates, pyproject.toml).

Both run as part of ``make test`` (CI runs exactly that). mypy reads its settings (files,
disallow_untyped_defs, the tests' override) from pyproject.toml and keeps its cache in
``.mypy_cache/``: about 20 s cold on a 2-core machine, under 1 s warm.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_is_clean() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "labkit", "tests", "benchmarks"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_is_clean() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", "--hide-error-context"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_pure_modules_import_no_widgets_io_or_nvml() -> None:
    """Model modules are pure: no ipywidgets/plotly/pynvml, no file reading (house style)."""
    banned = ("ipywidgets", "plotly", "pynvml", "IPython", "open(", "read_text", "yaml")
    for path in sorted((ROOT / "labkit").glob("*.py")):
        if path.name in ("__init__.py", "validate.py"):
            continue
        text = path.read_text(encoding="utf-8")
        for word in banned:
            assert word not in text, f"{path.name} uses {word}: move it to labkit.ui/data/gpu"
