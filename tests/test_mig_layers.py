"""The MIG room's layers, read from the import statements (ast), not by grepping words.

The pure MIG modules (``labkit/mig/*``, ``labkit/gpumodels.py``) import no widgets, plotting,
NVML, YAML, threads, clocks, ctypes or the environment, and nothing from ``labkit.gpu``,
``labkit.ui``, ``labkit.serve`` or ``labkit.hub``; the one step up they take is documented:
``labkit.mig.layout`` resolves a board's short name through ``labkit.data.gpus``. No module of
the MIG room hides an import inside a function.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PURE = [*sorted((ROOT / "labkit" / "mig").glob("*.py")), ROOT / "labkit" / "gpumodels.py"]
ROOM = [*PURE, *(ROOT / "labkit" / p for p in ("gpu/mig_live.py", "data/mig.py",
                                              "ui/mig_explain.py")),
        *sorted((ROOT / "labkit" / "ui" / "mig").glob("*.py"))]
BANNED = ("ipywidgets", "plotly", "pynvml", "IPython", "yaml", "threading", "time", "ctypes",
          "os", "pathlib", "subprocess", "socket", "labkit.gpu", "labkit.ui", "labkit.serve",
          "labkit.hub", "labkit.data")
#: module -> the documented imports from above the pure layer.
ALLOWED = {"layout.py": ("labkit.data.gpus",)}


def _imports(tree: ast.AST) -> list[tuple[str, ast.AST]]:
    out: list[tuple[str, ast.AST]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, node) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.append((node.module, node))
    return out


@pytest.mark.parametrize("path", PURE, ids=lambda p: p.name)
def test_pure_mig_modules_import_nothing_from_above(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for name, _node in _imports(tree):
        if name in ALLOWED.get(path.name, ()):
            continue
        for banned in BANNED:
            assert not (name == banned or name.startswith(banned + ".")), (path.name, name)


@pytest.mark.parametrize("path", ROOM, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_import_hides_inside_a_function(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for func in ast.walk(tree):
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            hidden = [name for name, _ in _imports(func)]
            assert not hidden, (path.name, func.name, hidden)
