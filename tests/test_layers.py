"""The layers of labkit, enforced: import-linter for who imports whom, an AST check for purity.

Layers, one way (docs/architecture.md): pure models → ``labkit.data`` (the only file reader) →
``labkit.runtime`` (kernel guards) → ``labkit.gpu`` (everything NVML and time) / ``labkit.i18n``
→ ``labkit.ui`` → ``labkit.serve`` / ``labkit.hub``. The contract lives in ``pyproject.toml``
(``[tool.importlinter]``); these tests run the real tool and also prove that it fails when a
layer is crossed, so the contract cannot silently stop checking.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

# What a pure model may not touch: widgets, NVML, threads, clocks, the environment, processes,
# sockets, files. Modules are matched on their top-level name.
BANNED_MODULES = frozenset({
    "IPython", "asyncio", "concurrent", "ctypes", "ipywidgets", "multiprocessing", "os",
    "pathlib", "plotly", "pynvml", "requests", "shutil", "socket", "subprocess", "tempfile",
    "threading", "time", "urllib", "yaml", "weakref",
})
# Calls that read a clock or a file, whatever they were imported as.
BANNED_CALLS = frozenset({"open", "read_text", "write_text", "read_bytes", "now", "today",
                          "utcnow", "monotonic", "perf_counter", "getenv"})


def _contract() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]


def _layers() -> list[list[str]]:
    """The layers of the contract, top first, each a list of module names."""
    contract = next(c for c in _contract()["contracts"] if c["name"] == "labkit layers")
    return [[part.strip().strip("()") for part in layer.replace(":", "|").split("|")]
            for layer in contract["layers"]]


def _layer_modules() -> list[str]:
    return [name for layer in _layers() for name in layer]


def _pure_modules() -> list[str]:
    """Every module in the layers below ``labkit.data``: the pure models."""
    layers = _layers()
    below = next(i for i, layer in enumerate(layers) if "labkit.data" in layer) + 1
    return [name for layer in layers[below:] for name in layer]


def purity_violations(source: str) -> list[str]:
    """Return the banned imports and calls in one module's source (an empty list when pure)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names
                      if a.name.split(".")[0] in BANNED_MODULES]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] in BANNED_MODULES:
                found.append(f"from {node.module} import ...")
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else (
                func.attr if isinstance(func, ast.Attribute) else None)
            if name in BANNED_CALLS:
                found.append(f"{name}() at line {node.lineno}")
    return found


def _module_files(module: str) -> list[Path]:
    base = ROOT / Path(*module.split("."))
    if base.is_dir():
        return sorted(base.rglob("*.py"))
    return [base.with_suffix(".py")]


def _run_lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=cwd, capture_output=True,
                          text=True, check=False)


def test_import_linter_contracts_are_kept() -> None:
    result = _run_lint_imports(ROOT)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


def test_every_labkit_module_sits_in_a_layer() -> None:
    """A new top-level module must be placed in the contract, or nothing checks it."""
    placed = set(_layer_modules())
    unplaced = []
    for path in sorted((ROOT / "labkit").iterdir()):
        if path.name.startswith((".", "__")) or path.name == "_dev":
            continue
        if path.is_dir() and not (path / "__init__.py").exists():
            continue
        if path.suffix not in ("", ".py"):
            continue
        name = f"labkit.{path.stem}"
        if name not in placed:
            unplaced.append(name)
    assert not unplaced, f"add these to [tool.importlinter] in pyproject.toml: {unplaced}"


@pytest.mark.parametrize("module", _pure_modules())
def test_pure_module_imports_no_widgets_threads_clocks_files_or_nvml(module: str) -> None:
    for path in _module_files(module):
        bad = purity_violations(path.read_text(encoding="utf-8"))
        assert not bad, f"{path.relative_to(ROOT)} is in the pure layer but uses {bad}"


@pytest.mark.parametrize(("source", "expected"), [
    ("import threading\n", "import threading"),
    ("from pynvml import nvmlInit\n", "from pynvml import ..."),
    ("import ipywidgets as w\n", "import ipywidgets"),
    ("import os.path\n", "import os.path"),
    ("def f(p):\n    return open(p).read()\n", "open() at line 2"),
    ("from datetime import datetime\nx = datetime.now()\n", "now() at line 2"),
    ("import numpy as np\nx = np.zeros(3)\n", None),
])
def test_purity_check_catches_each_kind(source: str, expected: str | None) -> None:
    found = purity_violations(source)
    assert (expected in found) if expected else not found, found


def test_import_linter_fails_when_a_layer_is_crossed(tmp_path: Path) -> None:
    """Copy the package, make a pure model import the UI, and the real tool must say BROKEN."""
    shutil.copytree(ROOT / "labkit", tmp_path / "labkit",
                    ignore=shutil.ignore_patterns("__pycache__", "*.png", "*.ipynb"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    victim = tmp_path / "labkit" / "goodput.py"
    victim.write_text(victim.read_text(encoding="utf-8") + "\nimport labkit.ui  # crossing\n",
                      encoding="utf-8")
    env_path = f"{tmp_path}"
    result = subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=tmp_path, capture_output=True,
                            text=True, check=False, env={"PYTHONPATH": env_path, "PATH": ""})
    assert result.returncode != 0, result.stdout[-2000:]
    assert "labkit.goodput -> labkit.ui" in result.stdout
