"""Every patch of another library's internals sits behind a version check (issue 14).

A monkeypatch is an assignment to an attribute of an imported module or class that is not
labkit's (``handler.check_xsrf_cookie = ...``, ``setattr(module, name, ...)``,
``pynvml.nvmlLib = ...``). It is right only for the releases it was written against, so the
function that makes it must first call :func:`labkit.serve.patching.require_version`, which
fails loudly outside the tested range. The few that cannot are listed in
:data:`CHECKED_ELSEWHERE` with the check that covers them. The scan is proved on synthetic
modules: a bare patch is caught.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from labkit.serve.patching import PatchNotApplicableError, require_attribute, require_version

ROOT = Path(__file__).resolve().parents[1]
CHECK = "require_version"
#: Names whose value is the patched library object (``handler = require_attribute(m, "C")``).
DERIVED = frozenset({"require_attribute", "getattr"})

_PYNVML = ("nvidia-ml-py's private names are probed by labkit.gpu.sim.hook.check_pynvml "
           "(nvitop's way) and tests/test_gpu_pynvml_range.py runs the oldest and newest "
           "release of pyproject's range")
_PUBLIC = "a documented public setting of the library, not a patch of its internals"
#: ``path::function::target`` -> why it needs no ``require_version`` call there.
CHECKED_ELSEWHERE: dict[str, str] = {
    "labkit/gpu/nvml.py::install::pynvml.nvmlLib": _PYNVML,
    "labkit/gpu/nvml.py::uninstall::pynvml.nvmlLib": _PYNVML,
    "labkit/gpu/sim/hook.py::LazyLibrary.library::pynvml.nvmlLib": _PYNVML,
    "labkit/runtime/kernel.py::harden_kernel::tempfile.tempdir": _PUBLIC,
    "labkit/runtime/kernel.py::harden_kernel::sys.dont_write_bytecode": _PUBLIC,
}


def _foreign_imports(tree: ast.AST) -> set[str]:
    """Local names bound to a module or object imported from outside labkit."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.asname or a.name.split(".")[0] for a in node.names
                      if not a.name.startswith("labkit")}
        elif (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
              and not node.module.startswith("labkit")):
            names |= {a.asname or a.name for a in node.names}
    return names


def _root(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _call_name(node: ast.AST) -> str | None:
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    return func.id if isinstance(func, ast.Name) else (
        func.attr if isinstance(func, ast.Attribute) else None)


def _patched_names(scope: ast.AST, foreign: set[str]) -> set[str]:
    """The foreign names, plus locals taken from them in ``scope`` (require_attribute, loops)."""
    names = set(foreign)
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign) and _call_name(node.value) in DERIVED:
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif (isinstance(node, ast.For) and isinstance(node.target, ast.Name)
              and isinstance(node.iter, ast.Tuple | ast.List)
              and any(_root(e) in names for e in node.iter.elts)):
            names.add(node.target.id)
    return names


def _patches(body: list[ast.stmt], names: set[str]) -> list[tuple[str, int]]:
    """(target, line) of each assignment in this scope (not nested ones) to an attribute of
    ``names``."""
    lines: list[tuple[str, int]] = []
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif _call_name(node) == "setattr" and isinstance(node, ast.Call) and node.args:
            targets = [ast.Attribute(value=node.args[0], attr="?")]
        lines += [(ast.unparse(t), getattr(node, "lineno", 0)) for t in targets
                  if isinstance(t, ast.Attribute) and _root(t) in names]
        stack.extend(ast.iter_child_nodes(node))
    return lines


def unchecked_patches(source: str, path: str) -> dict[str, int]:
    """``path::function::target`` -> line of each patch not preceded by ``require_version``."""
    tree = ast.parse(source)
    foreign = _foreign_imports(tree)
    found: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                checks = [getattr(n, "lineno", 0) for n in ast.walk(child)
                          if _call_name(n) == CHECK]
                for target, line in _patches(child.body, _patched_names(child, foreign)):
                    if not any(c < line for c in checks):
                        found.setdefault(f"{path}::{prefix}{child.name}::{target}", line)
                visit(child, f"{prefix}{child.name}.")
    visit(tree, "")
    module_level = [s for s in tree.body
                    if not isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)]
    for target, line in _patches(module_level,
                                 _patched_names(ast.Module(module_level, []), foreign)):
        found.setdefault(f"{path}::<module>::{target}", line)
    return found


def _labkit_patches() -> dict[str, int]:
    found: dict[str, int] = {}
    for path in sorted((ROOT / "labkit").rglob("*.py")):
        found |= unchecked_patches(path.read_text(encoding="utf-8"),
                                   path.relative_to(ROOT).as_posix())
    return found


def test_every_private_patch_checks_the_library_version_first() -> None:
    bare = {k: v for k, v in _labkit_patches().items() if k not in CHECKED_ELSEWHERE}
    assert not bare, (f"call {CHECK}(distribution, minimum, below, what) before patching, or "
                      f"name the check that covers it in CHECKED_ELSEWHERE: {bare}")


def test_checked_elsewhere_lists_only_real_patches() -> None:
    stale = sorted(set(CHECKED_ELSEWHERE) - set(_labkit_patches()))
    assert not stale, f"no longer patch anything: remove from CHECKED_ELSEWHERE: {stale}"


_CHECKED = 'require_version("voila", "0.5.0", "0.6", "x")\n'


@pytest.mark.parametrize(("source", "expected"), [
    # a bare patch of an imported module, class or object taken from it
    ("import voila.app as va\ndef f():\n    va.X = 1\n", {"m.py::f::va.X": 3}),
    ("from voila import app\ndef f():\n    setattr(app, 'X', 1)\n", {"m.py::f::app.?": 3}),
    ("from voila import h\ndef f():\n    k = require_attribute(h, 'K', 'x')\n    k.get = 1\n",
     {"m.py::f::k.get": 4}),
    ("from a import b, c\ndef f():\n    for m in (b, c):\n        setattr(m, 'n', 1)\n",
     {"m.py::f::m.?": 4}),
    ("class C:\n    def f(self):\n        from voila import app\n        app.X.y = 1\n",
     {"m.py::C.f::app.X.y": 4}),
    ("import jupyter_client\njupyter_client.X = 1\n", {"m.py::<module>::jupyter_client.X": 2}),
    # the check after the patch is too late
    (f"import voila\ndef f():\n    voila.X = 1\n    {_CHECKED}", {"m.py::f::voila.X": 3}),
    # checked first: fine; labkit's own objects and locals are not patches
    (f"import voila\ndef f():\n    {_CHECKED}    voila.X = 1\n", {}),
    (f"from voila import h\ndef f():\n    {_CHECKED}    k = require_attribute(h, 'K', 'x')\n"
     "    k.get = 1\n", {}),
    ("from labkit.gpu import state\ndef f():\n    state.lab = 1\n", {}),
    ("import json\ndef f(self):\n    self.x = json.loads('1')\n    y = object()\n", {}),
])
def test_patch_scan_catches_a_bare_patch(source: str, expected: dict[str, int]) -> None:
    assert unchecked_patches(source, "m.py") == expected


@pytest.mark.parametrize(("minimum", "below", "ok"), [("0", "999", True), ("999", "1000", False)])
def test_require_version_fails_loudly_outside_the_range(minimum: str, below: str,
                                                        ok: bool) -> None:
    if ok:
        assert require_version("pytest", minimum, below, "a test patch") == pytest.__version__
    else:
        with pytest.raises(PatchNotApplicableError, match=f">={minimum},<{below}"):
            require_version("pytest", minimum, below, "a test patch")
    with pytest.raises(PatchNotApplicableError, match="not installed"):
        require_version("no-such-distribution-labkit", "0", "1", "a test patch")
    with pytest.raises(PatchNotApplicableError, match="is gone"):
        require_attribute(pytest, "no_such_name", "a test patch")
