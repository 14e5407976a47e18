"""The layers of labkit, enforced: import-linter for who imports whom, an AST check for purity.

Layers, one way, from the bottom up (the contract, and docs/architecture.md): ``labkit.validate``
(the input checks) → ``labkit.gpumodels`` (the typed GPU models) → pure models (numbers only)
→ ``labkit.data`` (the only file reader) → ``labkit.i18n`` (the UI strings) → ``labkit.runtime``
(kernel guards) → ``labkit.gpu`` (everything NVML and time) → ``labkit.ui`` → ``labkit.serve``
→ ``labkit.hub``.

The contract lives in ``pyproject.toml`` (``[tool.importlinter]``); these tests run the real
tool and also prove that it fails when a layer is crossed, so the contract cannot silently stop
checking. The purity check and the map's paths are proved the same way, on synthetic input.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

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


# What a pure model may not touch: widgets, NVML, threads, clocks, the environment, processes,
# sockets, files, and the import machinery (which would reach any of them by name). Modules are
# matched on their top-level name.
BANNED_MODULES = frozenset({
    "IPython", "_thread", "asyncio", "builtins", "bz2", "concurrent", "ctypes", "fileinput",
    "glob", "gzip", "http", "importlib", "ipywidgets", "lzma", "mmap", "multiprocessing", "os",
    "pathlib", "platform", "plotly", "pynvml", "requests", "sched", "secrets", "select",
    "selectors", "shutil", "signal", "socket", "sqlite3", "subprocess", "sys", "tarfile", "logging",
    "tempfile", "threading", "time", "urllib", "uuid", "weakref", "yaml", "zipfile",
})
# Calls that read a clock, a file or the environment, whatever they were imported as
# (``Path.read_text``, ``datetime.now``, ``date.today``, ``os.getenv`` ...).
BANNED_CALLS = frozenset({
    "getenv", "monotonic", "monotonic_ns", "now", "open", "perf_counter", "perf_counter_ns",
    "process_time", "putenv", "read_bytes", "read_text", "sleep", "time_ns", "today", "tofile",
    "to_hdf", "to_pickle", "utcnow", "write_bytes", "write_text",
    "print",
})
# Writers of frames and figures: banned when given a file (a path written in the call); into a
# buffer the caller passes (``io.StringIO``) or with no target (the text returned) they are pure.
WRITER_CALLS = frozenset({"to_csv", "to_excel", "to_feather", "to_json", "to_parquet", "to_sql",
                          "to_stata", "write_html", "write_image", "write_json"})
# Library constructors that read the clock when given these words (``pd.Timestamp("now")``).
CLOCK_WORDS = frozenset({"now", "today", "utcnow"})
# Names that reach the interpreter itself: dynamic imports, code from strings, the builtins.
BANNED_NAMES = frozenset({
    "__builtins__", "__import__", "breakpoint", "compile", "eval", "exec", "globals", "input",
    "locals", "open", "vars",
})
# Attributes that are the environment or the module table, on whatever object.
BANNED_ATTRIBUTES = frozenset({"environ", "modules"})
# Readers and writers of the array/frame libraries, on any alias of the library.
PANDAS_IO = frozenset({"ExcelFile", "ExcelWriter", "HDFStore"})  # and every read_*
NUMPY_IO = frozenset({"DataSource", "fromfile", "fromregex", "genfromtxt", "load", "loadtxt",
                      "memmap", "save", "savetxt", "savez", "savez_compressed"})
# Seeded generators: allowed with a seed argument; everything else of numpy.random / random
# draws from a global, clock- or OS-seeded state.
SEEDED = frozenset({"numpy.random.default_rng", "numpy.random.Generator",
                    "numpy.random.SeedSequence", "numpy.random.PCG64", "numpy.random.PCG64DXSM",
                    "numpy.random.Philox", "numpy.random.SFC64", "numpy.random.MT19937",
                    "random.Random"})


def _aliases(tree: ast.AST) -> dict[str, str]:
    """Local name -> the dotted module or object it was imported as, anywhere in the module."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    names[a.asname] = a.name
                else:
                    top = a.name.split(".")[0]
                    names[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                names[a.asname or a.name] = f"{node.module}.{a.name}"
    return names


def _dotted(node: ast.expr, aliases: dict[str, str]) -> str | None:
    """``np.random.rand`` -> ``numpy.random.rand`` (None when the root is not a name)."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id, node.id)
    if isinstance(node, ast.Attribute):
        owner = _dotted(node.value, aliases)
        return None if owner is None else f"{owner}.{node.attr}"
    return None


def _library_io(path: str) -> bool:
    """Whether a dotted path is a file reader/writer of pandas or numpy, or unseeded random."""
    parts = path.split(".")
    last = parts[-1]
    if parts[0] == "pandas" and len(parts) > 1:
        return last.startswith("read_") or last in PANDAS_IO
    if parts[:2] == ["numpy", "random"] and len(parts) > 2:
        return path not in SEEDED
    if parts[0] == "numpy" and len(parts) > 1:
        return last in NUMPY_IO
    if parts[0] == "random" and len(parts) > 1:
        return path not in SEEDED
    return False


def _unseeded(call: ast.Call, aliases: dict[str, str]) -> bool:
    """A seeded generator built without a seed (``default_rng()``, ``Random(None)``)."""
    if _dotted(call.func, aliases) not in SEEDED:
        return False
    args = [*call.args, *(k.value for k in call.keywords)]
    return not args or (isinstance(args[0], ast.Constant) and args[0].value is None)


def _banned_names() -> frozenset[str]:
    return BANNED_CALLS | BANNED_ATTRIBUTES | PANDAS_IO | NUMPY_IO | BANNED_NAMES


def purity_violations(source: str) -> list[str]:
    """Return the banned imports, names and calls in one module's source (empty when pure)."""
    tree = ast.parse(source)
    aliases = _aliases(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        at = f"at line {getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names
                      if a.name.split(".")[0] in BANNED_MODULES]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] in BANNED_MODULES:
                found.append(f"from {node.module} import ...")
            elif any(a.name == "*" for a in node.names):
                found.append(f"from {node.module} import * {at}")
            found += [f"{node.module}.{a.name} {at}" for a in node.names
                      if _library_io(f"{node.module}.{a.name}")]
        elif isinstance(node, ast.Name) and node.id in BANNED_NAMES:
            found.append(f"{node.id} {at}")
        elif isinstance(node, ast.Attribute):
            path = _dotted(node, aliases)
            if node.attr in BANNED_ATTRIBUTES:
                found.append(f".{node.attr} {at}")
            elif path and _library_io(path):
                found.append(f"{path} {at}")
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else (
                func.attr if isinstance(func, ast.Attribute) else None)
            if name in BANNED_CALLS:
                found.append(f"{name}() {at}")
            target = node.args[0] if node.args else next(
                (k.value for k in node.keywords if k.arg in ("path_or_buf", "path", "file")), None)
            if name in WRITER_CALLS and isinstance(target, (ast.Constant, ast.JoinedStr,
                                                            ast.Call, ast.BinOp)):
                found.append(f"{name}() to a file {at}")
            if (node.args and isinstance(node.args[0], ast.Constant)
                    and str(node.args[0].value).strip().lower() in CLOCK_WORDS):
                found.append(f"{name}({node.args[0].value!r}) reads the clock {at}")
            if _unseeded(node, aliases):
                found.append(f"{_dotted(func, aliases)}() without a seed {at}")
            if (name in ("getattr", "setattr", "hasattr") and len(node.args) > 1
                    and isinstance(node.args[1], ast.Constant)
                    and (str(node.args[1].value) in _banned_names()
                         or str(node.args[1].value).startswith("read_"))):
                found.append(f"{name}(..., {node.args[1].value!r}) {at}")
    return list(dict.fromkeys(found))


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


#: One synthetic module per way round the check, and what the check must report for it.
PURITY_CASES = [
    # writers to a file, clocks read through words, printing and logging (t-arch trial, stop 20)
    ("def f(df):\n    df.to_csv('x.csv')\n", "to_csv() to a file at line 2"),
    ("def f(fig, p):\n    fig.write_image(p / 'a.png')\n", "write_image() to a file at line 2"),
    ("def f(df):\n    df.to_parquet(path=f'{1}.pq')\n", "to_parquet() to a file at line 2"),
    ("import pandas as pd\nt = pd.Timestamp('now')\n",
     "Timestamp('now') reads the clock at line 2"),
    ("import numpy as np\nt = np.datetime64('today')\n",
     "datetime64('today') reads the clock at line 2"),
    ("print('x')\n", "print() at line 1"),
    ("import logging\n", "import logging"),
    ("def f(df, buf):\n    df.to_csv(buf, index=False)\n    return df.to_json()\n", None),
    # imports of a banned module, however written
    ("import threading\n", "import threading"),
    ("from pynvml import nvmlInit\n", "from pynvml import ..."),
    ("import ipywidgets as w\n", "import ipywidgets"),
    ("import os.path\n", "import os.path"),
    ("from concurrent.futures import ThreadPoolExecutor\n", "from concurrent.futures import ..."),
    # the import machinery: a banned module by name
    ("import importlib\nos = importlib.import_module('os')\n", "import importlib"),
    ("from importlib import import_module\n", "from importlib import ..."),
    ("os = __import__('os')\n", "__import__ at line 1"),
    ("import sys\nt = sys.modules['threading']\n", "import sys"),
    ("def f(m):\n    return m.modules['time']\n", ".modules at line 2"),
    ("exec('import os')\n", "exec at line 1"),
    ("x = eval('1')\n", "eval at line 1"),
    ("b = __builtins__\n", "__builtins__ at line 1"),
    ("f = globals()['__builtins__']\n", "globals at line 1"),
    # files: builtins, pathlib-like objects, pandas and numpy readers under any alias
    ("def f(p):\n    return open(p).read()\n", "open() at line 2"),
    ("reader = open\n", "open at line 1"),
    ("def f(p):\n    return p.read_text()\n", "read_text() at line 2"),
    ("def f(p):\n    return p.open()\n", "open() at line 2"),
    ("import pandas as pd\nx = pd.read_csv('a.csv')\n", "pandas.read_csv at line 2"),
    ("import pandas as frames\nx = frames.read_json('a')\n", "pandas.read_json at line 2"),
    ("import pandas\nx = pandas.read_parquet('a')\n", "pandas.read_parquet at line 2"),
    ("import pandas as pd\nread = pd.read_excel\n", "pandas.read_excel at line 2"),
    ("import pandas as pd\nx = pd.read_table('a')\n", "pandas.read_table at line 2"),
    ("import pandas as pd\nx = pd.io.parsers.read_fwf('a')\n",
     "pandas.io.parsers.read_fwf at line 2"),
    ("from pandas import read_csv as rc\nx = rc('a')\n", "pandas.read_csv at line 1"),
    ("import numpy as np\nx = np.load('a.npy')\n", "numpy.load at line 2"),
    ("import numpy as n\nx = n.loadtxt('a')\n", "numpy.loadtxt at line 2"),
    ("import numpy as np\nx = np.genfromtxt('a')\n", "numpy.genfromtxt at line 2"),
    ("import numpy as np\nx = np.fromfile('a')\n", "numpy.fromfile at line 2"),
    ("import numpy as np\nnp.save('a', [1])\n", "numpy.save at line 2"),
    ("from numpy import load\nx = load('a')\n", "numpy.load at line 1"),
    ("def f(a):\n    a.tofile('x')\n", "tofile() at line 2"),
    ("import pandas as pd\nx = getattr(pd, 'read_csv')\n", "getattr(..., 'read_csv') at line 2"),
    ("def f(o):\n    return getattr(o, 'environ')\n", "getattr(..., 'environ') at line 2"),
    ("from pandas import *\n", "from pandas import * at line 1"),
    # the environment and the clock
    ("def f(o):\n    return o.environ['HOME']\n", ".environ at line 2"),
    ("def f(o):\n    return o.getenv('HOME')\n", "getenv() at line 2"),
    ("import time as clock\n", "import time"),
    ("def f(t):\n    return t.monotonic()\n", "monotonic() at line 2"),
    ("from datetime import datetime\nx = datetime.now()\n", "now() at line 2"),
    ("import datetime as dt\nx = dt.date.today()\n", "today() at line 2"),
    ("from datetime import datetime\nx = datetime.utcnow()\n", "utcnow() at line 2"),
    # randomness: only a seeded generator
    ("import random\nx = random.random()\n", "random.random at line 2"),
    ("import random\nr = random.Random()\n", "random.Random() without a seed at line 2"),
    ("import numpy as np\nx = np.random.rand(3)\n", "numpy.random.rand at line 2"),
    ("import numpy as np\nr = np.random.default_rng()\n",
     "numpy.random.default_rng() without a seed at line 2"),
    ("from numpy.random import default_rng\nr = default_rng(None)\n",
     "numpy.random.default_rng() without a seed at line 2"),
    # what a pure model does do
    ("import numpy as np\nx = np.zeros(3)\n", None),
    ("import numpy as np\nr = np.random.default_rng(7)\ng: np.random.Generator = r\n", None),
    ("import random\nr = random.Random(7)\n", None),
    ("import io\nimport pandas as pd\nb = io.StringIO()\npd.DataFrame().to_csv(b)\n", None),
    ("from datetime import date\nd = date.fromisoformat('2026-01-01')\n", None),
    ("def f(o, name):\n    return getattr(o, name)\n", None),
]


@pytest.mark.parametrize(("source", "expected"), PURITY_CASES)
def test_purity_check_catches_each_kind(source: str, expected: str | None) -> None:
    found = purity_violations(source)
    assert (expected in found) if expected else not found, found


# The exceptions the contract allows (``ignore_imports`` in pyproject), each with its reason: a
# new one must be argued here, or an ignore line would silently let any crossing through.
IGNORED_IMPORTS = {
    "labkit.mig.layout -> labkit.data.gpus":
        "the MIG geometry of each GPU model is data (data/gpus/*.yaml) the pure layout reads "
        "through the one loader; the loader is itself pure apart from reading the file",
}


def test_every_ignored_import_is_argued() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    ignored = [line for c in contracts for line in c.get("ignore_imports", [])]
    assert sorted(ignored) == sorted(IGNORED_IMPORTS), (
        "pyproject's ignore_imports changed: argue each exception in IGNORED_IMPORTS")


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


# -- docs/architecture.md: the map names only what exists ---------------------------------------

DOC = ROOT / "docs" / "architecture.md"


def _exists(root: Path, path: str) -> bool:
    return (root / path).exists() or (root / path).with_suffix(".py").exists()


def _tokens(text: str, pattern: str = r"[^`\s]+") -> list[str]:
    return re.findall(rf"`({pattern})`", text)


def _table_problems(doc: str, root: Path) -> list[str]:
    """The lesson table: pure modules under labkit/, loaders under labkit/data/ -> files under
    data/, widgets under labkit/ui/ (a parenthesis is a comment and is not resolved)."""
    table = doc.split("## Where each lesson lives")[1].split("\n## ")[0]
    problems: list[str] = []
    for line in table.splitlines():
        if not re.match(r"\| \d\d ", line):
            continue
        lesson, pure, data, ui = [re.sub(r"\([^()]*\)", "", c).strip()
                                  for c in line.strip("|").split("|")][:4]
        wanted = [("labkit", t) for t in _tokens(pure)] + [("labkit/ui", t) for t in _tokens(ui)]
        for part in data.split(","):
            loader, _, files = part.partition("→")
            wanted += [("labkit/data", t) for t in _tokens(loader)]
            wanted += [("data", t) for t in _tokens(files)]
        problems += [f"lesson {lesson}: {base}/{tok}" for base, tok in wanted
                     if not _exists(root, f"{base}/{tok}")]
    return problems


def _bullet_problems(doc: str, root: Path) -> list[str]:
    """Each layer's paragraph: a ``x.py`` or ``x/`` it names is in that layer's folder (or a
    folder below it) or at the top of the checkout."""
    layers = doc.split("## The layers")[1].split("\n## ")[0]
    problems: list[str] = []
    for bullet in re.split(r"\n- \*\*", layers)[1:]:
        head = bullet.split("**")[0].strip("`: ").rstrip("/")
        base = root / ("labkit" if head == "Pure models" else head)
        if not base.is_dir():
            problems.append(f"{head}: no such folder")
            continue
        below = {p.relative_to(base).as_posix() + ("/" if p.is_dir() else "")
                 for p in base.rglob("*") if "__pycache__" not in p.parts}
        for tok in _tokens(bullet, r"[\w./-]+(?:\.py|/)"):
            found = (_exists(root, tok) or _exists(base, tok)
                     or any(p == tok or p.endswith("/" + tok) for p in below))
            if not found:
                problems.append(f"{head}: {tok}")
    return problems


def doc_problems(doc: str, root: Path) -> list[str]:
    """Every labkit path, lesson-table entry and layer-paragraph module the map names, that is
    not in the checkout at ``root``."""
    named = {p.rstrip(".,") for p in re.findall(r"(?<![\w./~])labkit/[\w./-]+", doc)}
    problems = [p for p in sorted(named) if not _exists(root, p)]
    return problems + _table_problems(doc, root) + _bullet_problems(doc, root)


def test_architecture_doc_names_only_what_exists() -> None:
    problems = doc_problems(DOC.read_text(encoding="utf-8"), ROOT)
    assert not problems, f"docs/architecture.md names what is not there: {problems}"


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("| 07 운영비 | `opex/`", "| 07 운영비 | `opex.py`", "lesson 07 운영비: labkit/opex.py"),
    ("→ `tariffs/`", "→ `tariff_tables/`", "lesson 07 운영비: data/tariff_tables/"),
    ("`labkit/data/prometheus.py`", "`labkit/data/prom.py`", "labkit/data/prom.py"),
    ("`mig_live.py` reads", "`mig_apply.py` reads", "labkit/gpu: mig_apply.py"),
])
def test_doc_check_catches_a_stale_name(old: str, new: str, expected: str) -> None:
    doc = DOC.read_text(encoding="utf-8")
    assert old in doc
    assert expected in doc_problems(doc.replace(old, new, 1), ROOT)


def test_architecture_doc_lists_every_pure_module() -> None:
    """The "Pure models" paragraph names each module of the contract's pure layer."""
    layers = DOC.read_text(encoding="utf-8").split("- **Pure models**")[1].split("\n- **")[0]
    top = re.sub(r"\([^()]*\)", "", layers)  # submodules in parentheses
    named = {t.rstrip("/") for t in _tokens(top, r"\w+/?")}
    pure = {m.removeprefix("labkit.") for m in _pure_modules()} - {"gpumodels", "validate"}
    assert pure <= named, f"not in the Pure models paragraph: {sorted(pure - named)}"


def test_docstring_layer_order_is_the_contract() -> None:
    """This module's docstring lists the layers bottom up, as the contract has them."""
    said = [w.strip("`") for w in re.findall(r"``labkit\.\w+``|pure models",
                                               (__doc__ or "").split("\n\n")[1])]
    contract = [name for layer in reversed(_layers()) for name in layer]
    pure = [n for n in _pure_modules() if n not in ("labkit.gpumodels", "labkit.validate")]
    expected = [n if n not in pure else "pure models" for n in contract]
    expected = [n for i, n in enumerate(expected) if n != "pure models" or
                expected.index(n) == i]
    assert said == expected
