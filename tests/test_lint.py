"""ruff and mypy over labkit, tests and benchmarks (the house style's gates, pyproject.toml).

Both run as part of ``make test`` (CI runs exactly that). mypy reads its settings (files,
disallow_untyped_defs, the tests' override) from pyproject.toml and keeps its cache in
``.mypy_cache/``: about 20 s cold on a 2-core machine, under 1 s warm.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

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


# -- one idea per module: sizes and complexity (issue 14) -------------------------------------

MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 60  # the body, without its docstring
MAX_COMPLEXITY = 12  # McCabe, as ruff's C901 counts it
#: A function over a limit carries its reason on the ``def`` line or the line above it
#: (above its decorators): ``# long: <reason>``.
EXEMPT_MARK = "# long:"

#: Over the limits today, outside the files split for issue 14; other branches are splitting
#: them. The lead removes an entry when its module is split (a stale entry fails
#: test_size_allow_list_has_no_stale_entries, so it cannot outlive the split).
ALLOWED_MODULES: dict[str, str] = {
}
#: ``path::qualname`` -> why it is still over a limit (lines or complexity).
ALLOWED_FUNCTIONS: dict[str, str] = {
    "labkit/eventlog.py::job_goodput": "103 lines, complexity 24: one pass over the event log",
    "labkit/loadprofile.py::SchoolCalendar.__post_init__": "complexity 13: field checks",
}


def _functions(tree: ast.AST) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function and method of a module, by qualified name (nested ones too)."""
    found: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                found.append((prefix + child.name, child))
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")

    visit(tree, "")
    return found


def body_lines(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines of a function's body from its first statement after the docstring to its end."""
    body = fn.body
    first = body[0]
    if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)):
        if len(body) == 1:
            return 0
        first = body[1]
    return (fn.end_lineno or first.lineno) - first.lineno + 1


def exempt(lines: list[str], fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether the def line or the line above it (above the decorators) gives a reason."""
    top = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
    for lineno in {fn.lineno, top - 1}:
        if 1 <= lineno <= len(lines):
            _, mark, reason = lines[lineno - 1].partition(EXEMPT_MARK)
            if mark and reason.strip():
                return True
    return False


def long_functions(source: str, path: str) -> dict[str, int]:
    """``path::qualname`` -> body lines, for each function over the limit and not exempt."""
    lines = source.splitlines()
    return {f"{path}::{name}": body_lines(fn) for name, fn in _functions(ast.parse(source))
            if body_lines(fn) > MAX_FUNCTION_LINES and not exempt(lines, fn)}


def complex_functions(paths: list[Path]) -> dict[str, str]:
    """``path::qualname`` -> ruff's C901 message, for each function over the limit, not exempt."""
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "C901", "--config",
         f"lint.mccabe.max-complexity={MAX_COMPLEXITY}", "--output-format", "json",
         *map(str, paths)],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert result.returncode in (0, 1), result.stderr
    found: dict[str, str] = {}
    for item in json.loads(result.stdout or "[]"):
        path = Path(item["filename"])
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        row = item["location"]["row"]
        for name, fn in _functions(ast.parse(source)):
            if fn.lineno == row and not exempt(lines, fn):
                found[f"{_rel(path)}::{name}"] = item["message"]
    return found


def _labkit_files() -> list[Path]:
    return sorted((ROOT / "labkit").rglob("*.py"))


def _rel(path: Path) -> str:
    """A path inside the checkout relative to it (else as given), with forward slashes."""
    path = path.resolve()
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.as_posix()


def _module_sizes() -> dict[str, int]:
    return {_rel(p): len(p.read_text(encoding="utf-8").splitlines()) for p in _labkit_files()}


def test_no_module_over_600_lines() -> None:
    over = {p: n for p, n in _module_sizes().items()
            if n > MAX_MODULE_LINES and p not in ALLOWED_MODULES}
    assert not over, f"split these modules into packages along their seams: {over}"


def test_no_function_over_60_lines_without_a_reason() -> None:
    over: dict[str, int] = {}
    for path in _labkit_files():
        over |= long_functions(path.read_text(encoding="utf-8"), _rel(path))
    over = {k: v for k, v in over.items() if k not in ALLOWED_FUNCTIONS}
    assert not over, f"split these functions or give a '{EXEMPT_MARK} <reason>': {over}"


def test_no_function_over_complexity_12_without_a_reason() -> None:
    over = {k: v for k, v in complex_functions(_labkit_files()).items()
            if k not in ALLOWED_FUNCTIONS}
    assert not over, f"simplify these functions or give a '{EXEMPT_MARK} <reason>': {over}"


def test_size_allow_list_has_no_stale_entries() -> None:
    sizes = _module_sizes()
    stale = [p for p in ALLOWED_MODULES if sizes.get(p, 0) <= MAX_MODULE_LINES]
    still: set[str] = set(complex_functions(_labkit_files()))
    for path in _labkit_files():
        still |= set(long_functions(path.read_text(encoding="utf-8"), _rel(path)))
    stale += [f for f in ALLOWED_FUNCTIONS if f not in still]
    assert not stale, f"within the limits now: remove from the allow-lists: {stale}"


_BODY = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
_BRANCHY = "def f(x):\n" + "".join(f"    if x == {i}:\n        return {i}\n"
                                    for i in range(MAX_COMPLEXITY)) + "    return -1\n"


@pytest.mark.parametrize(("source", "expected"), [
    # a 60-line body passes; the docstring does not count
    (f'def f():\n    """Doc.\n\n    More.\n    """\n{_BODY}', {}),
    # 61 lines fail
    (f"def f():\n{_BODY}    return 0\n", {"m.py::f": MAX_FUNCTION_LINES + 1}),
    # methods and nested functions are named by their qualified name
    (f"class C:\n    def g(self):\n        def h():\n{textwrap.indent(_BODY, '        ')}"
     "            return 0\n        return h\n",
     {"m.py::C.g": MAX_FUNCTION_LINES + 3, "m.py::C.g.h": MAX_FUNCTION_LINES + 1}),
    # a reason on the def line, or on the line above the decorators, exempts it
    (f"def f():  # long: one table\n{_BODY}    return 0\n", {}),
    (f"# long: one table\n@staticmethod\ndef f():\n{_BODY}    return 0\n", {}),
    # a mark without a reason does not
    (f"def f():  # long:\n{_BODY}    return 0\n", {"m.py::f": MAX_FUNCTION_LINES + 1}),
])
def test_length_check_catches_and_exempts(source: str, expected: dict[str, int]) -> None:
    assert long_functions(source, "m.py") == expected


@pytest.mark.parametrize(("source", "flagged"), [
    (_BRANCHY, True),  # 12 ifs: complexity 13
    (_BRANCHY.replace("    if x == 11:\n        return 11\n", ""), False),  # complexity 12
    ("# long: a dispatch table\n" + _BRANCHY, False),
])
def test_complexity_check_catches_and_exempts(tmp_path: Path, source: str, flagged: bool) -> None:
    path = tmp_path / "m.py"
    path.write_text(source, encoding="utf-8")
    found = complex_functions([path])
    assert bool(found) is flagged, found


# -- dates of data: strict ISO, date.fromisoformat (issue 14) ----------------------------------

#: Names that hold a data file's date; lenient parsers accept "today", "now" or 20261130 for them.
DATE_NAMES = ("as_of", "retrieved", "effective_date")
LENIENT_PARSERS = ("Timestamp", "to_datetime", "strptime", "parse")


def lenient_date_parses(source: str) -> list[int]:
    """Lines where a lenient parser is called on an ``as_of``-like name (use
    :func:`labkit.data.schema.parse_iso_date`, i.e. ``date.fromisoformat``)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        args = [*node.args, *(k.value for k in node.keywords)]
        if name in LENIENT_PARSERS and any(
                any(d in ast.unparse(a) for d in DATE_NAMES) for a in args):
            lines.append(node.lineno)
    return lines


def test_data_dates_are_parsed_strictly() -> None:
    found = {_rel(p): lines for p in _labkit_files()
             if (lines := lenient_date_parses(p.read_text(encoding="utf-8")))}
    assert not found, f"parse these dates with labkit.data.schema.parse_iso_date: {found}"


@pytest.mark.parametrize(("source", "lines"), [
    ("import pandas as pd\nx = pd.Timestamp(row['as_of'])\n", [2]),
    ("import pandas as pd\nx = pd.to_datetime(doc.as_of)\n", [2]),
    ("from datetime import datetime\nx = datetime.strptime(retrieved, '%Y-%m-%d')\n", [2]),
    ("from datetime import date\nx = date.fromisoformat(as_of)\n", []),
    ("import pandas as pd\nx = pd.Timestamp(start)\n", []),
])
def test_lenient_date_check_catches_each_parser(source: str, lines: list[int]) -> None:
    assert lenient_date_parses(source) == lines
