"""Committed notebooks: clean, following the lesson header convention, and free of logic.

nbval itself runs the notebooks (``pytest`` collects ``notebooks/`` with ``--nbval-lax``); these
tests check what a committed notebook may contain.
"""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest

from labkit._dev.notebooks import MARK, problems

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("[0-9][0-9]_*.ipynb"))
# A cell may import, assign, call and show; anything that computes or wires belongs in labkit.
FORBIDDEN = (ast.For, ast.AsyncFor, ast.While, ast.If, ast.IfExp, ast.With, ast.Try,
             ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp,
             ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.BinOp, ast.BoolOp, ast.Compare,
             ast.AugAssign, ast.Subscript, ast.Global, ast.Nonlocal, ast.Delete)


def test_there_are_lessons() -> None:
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_committed_clean(path: Path) -> None:
    assert problems(path) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_follows_lesson_header(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    first, second = nb.cells[0], nb.cells[1]
    assert first.cell_type == "markdown"
    assert first.source.startswith(f"# {path.name[:2]}. "), "title: '# NN. 제목'"
    for heading in ("학습 목표", "과정에서의 위치", "소요 시간"):
        assert heading in first.source, heading
    assert second.cell_type == "code"
    assert "import labkit.ui as ui" in second.source and "ui.setup(" in second.source
    assert nb.metadata["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_cells_hold_no_logic(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        tree = ast.parse(cell.source)
        for node in ast.walk(tree):
            assert not isinstance(node, FORBIDDEN), (
                f"{path.name} cell {i}: {type(node).__name__} belongs in labkit, not a cell")
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                module = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
                assert (module or "").startswith("labkit"), f"{path.name} cell {i}: import {module}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_checks_some_numbers(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    assert any(c.cell_type == "code" and MARK in c.source for c in nb.cells), (
        f"{path.name}: mark the cells whose numbers must hold with # {MARK}")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_markdown_leaves_no_literal_emphasis(path: Path) -> None:
    """Every ``**bold**`` renders: CommonMark does not close ``**`` between punctuation and a
    Hangul letter (``**18.3 %**다``), and the page then shows the asterisks."""
    import re

    import mistune  # nbconvert's markdown renderer (CommonMark rules, as JupyterLab's)

    render = mistune.create_markdown()
    for i, cell in enumerate(nbformat.read(path, as_version=4).cells):
        if cell.cell_type != "markdown":
            continue
        html = re.sub(r"<code>.*?</code>", "", str(render(cell.source)), flags=re.S)
        assert "**" not in html, f"{path.name} cell {i}: unrendered ** in {html[:200]!r}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_names_the_kernel_as_jupyterlab_will(path: Path) -> None:
    """JupyterLab writes the running kernel's spec into ``metadata.kernelspec`` when the kernel
    starts; a notebook that names it differently is "modified" (the dirty dot) on opening."""
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("python3")
    kernelspec = nbformat.read(path, as_version=4).metadata["kernelspec"]
    assert kernelspec == {"display_name": spec.display_name, "language": spec.language,
                          "name": "python3"}
