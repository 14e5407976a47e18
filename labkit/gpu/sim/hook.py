"""Every Python process of labkit's environment sees the simulated lab when LABKIT_GPU=sim:...

``labkit_sim.pth`` in the environment's site-packages (written by ``make`` through
``python -m labkit.gpu.sim.hook install``) runs :mod:`labkit.gpu._startup` at start. With
``LABKIT_GPU=sim:<models>`` set, that puts an import hook in front of ``pynvml``; when any code
(nvitop, gpustat, jupyterlab-nvdashboard, a lesson) imports pynvml, :func:`attach` sets
``pynvml.nvmlLib`` to a :class:`LazyLibrary` *before* the first ``nvmlInit``: pynvml then never
loads ``libnvidia-ml.so.1`` and every call lands in the process's
:class:`~labkit.gpu.sim.shared.SharedLab`, which shares its state with every other process of
the lab. Without the variable the hook does nothing (a real GPU is read as usual).

This is how nvitop and gpustat load NVML too: nvitop's ``nvitop/api/libnvml.py`` and gpustat's
``gpustat/nvml.py`` ``import pynvml`` and call ``pynvml.nvmlInit``; both also look functions up
with ``pynvml._nvmlGetFunctionPointer`` (nvitop probes symbols, gpustat wraps it), which reads
``nvmlLib``. So the hook touches pynvml's private ``nvmlLib``, ``_nvmlGetFunctionPointer``,
``_nvmlGetFunctionPointer_cache`` and ``libLoadLock``; :func:`check_pynvml` probes for them (as
nvitop probes ``_nvmlGetFunctionPointer``) and fails loudly naming the nvidia-ml-py version.

``LABKIT_SIM_TRACE=<file>``: each process appends one JSON line at exit, ``{"argv": [...],
"calls": [[function, return code or "FunctionNotFound", count], ...]}`` — how
``docs/sim-nvml-calls.md`` was made.

Used in: lessons that run ``!nvitop -1`` / ``!gpustat``; ``python -m labkit.gpu`` in a terminal
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import sys
import sysconfig
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = [
    "PTH_LINE",
    "PTH_NAME",
    "REQUIRED_PYNVML_SYMBOLS",
    "LazyLibrary",
    "attach",
    "check_pynvml",
    "install_pth",
    "main",
]

#: The file ``install`` writes into site-packages.
PTH_NAME = "labkit_sim.pth"
#: Its one line: Python runs ``import`` lines of .pth files at start-up (``site`` module docs).
PTH_LINE = ("import os; os.environ.get('LABKIT_GPU', '').strip().startswith('sim') "
            "and __import__('labkit.gpu._startup')\n")
#: The pynvml private names the hook relies on (nvidia-ml-py 12.535 ... 13.x have them).
REQUIRED_PYNVML_SYMBOLS = ("nvmlLib", "_nvmlGetFunctionPointer", "_nvmlGetFunctionPointer_cache",
                           "libLoadLock", "_LoadNvmlLibrary")
TRACE_ENV = "LABKIT_SIM_TRACE"


def check_pynvml(module: ModuleType) -> None:
    """Raise a clear error if this pynvml lacks a private name the hook needs.

    Raises
    ------
    RuntimeError
        Naming the missing symbols and the installed nvidia-ml-py version.
    """
    missing = [name for name in REQUIRED_PYNVML_SYMBOLS if not hasattr(module, name)]
    if missing:
        try:
            from importlib.metadata import version

            found = version("nvidia-ml-py")
        except Exception:  # any metadata problem: say unknown
            found = "unknown"
        raise RuntimeError(
            f"labkit's simulated GPU cannot hook pynvml from nvidia-ml-py {found} "
            f"({getattr(module, '__file__', '?')}): missing {', '.join(missing)}. Install the "
            "nvidia-ml-py range pyproject.toml names (pip install -c binder/constraints.txt -e .)")


class LazyLibrary:
    """What ``pynvml.nvmlLib`` is until the first NVML call: builds the shared lab on demand.

    The first attribute lookup (pynvml's ``nvmlInit`` looking up ``nvmlInitWithFlags``) opens
    the lab for ``spec``, puts its library in ``pynvml.nvmlLib`` and answers from it.
    """

    def __init__(self, spec: str) -> None:
        self._spec = spec

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.library(), name)

    def library(self) -> Any:
        """Return the shared lab's library (opening the lab the first time)."""
        import pynvml

        from labkit.gpu.backend import parse_spec
        from labkit.gpu.sim.shared import shared_lab

        lab = shared_lab(parse_spec(self._spec))
        lib = lab.library
        if os.environ.get(TRACE_ENV) and "trace" not in lib.__dict__:
            _trace_at_exit(lab.start_trace(), os.environ[TRACE_ENV])
        if pynvml.nvmlLib is self:
            pynvml.nvmlLib = lib
        return lib

    def __repr__(self) -> str:
        return f"<simulated libnvidia-ml for {self._spec} (not opened yet)>"


def _trace_at_exit(trace: Counter[tuple[str, int | str]], path: str) -> None:
    def write() -> None:
        line = json.dumps({"argv": sys.argv, "pid": os.getpid(),
                           "calls": sorted([name, code, n] for (name, code), n in trace.items())})
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")

    atexit.register(write)


def attach(module: ModuleType, spec: str | None = None) -> None:
    """Point an imported pynvml at the simulated lab of ``spec`` (default ``$LABKIT_GPU``).

    Raises
    ------
    RuntimeError
        See :func:`check_pynvml`.
    """
    from labkit.gpu import nvml

    check_pynvml(module)
    spec = spec or os.environ.get("LABKIT_GPU", "").strip()
    lazy = LazyLibrary(spec)
    nvml.set_default_library(lazy)
    if module.nvmlLib is None:
        nvml.install(lazy)


def install_pth(site_packages: str | os.PathLike[str] | None = None) -> Path:
    """Write ``labkit_sim.pth`` into site-packages (idempotent) and return its path."""
    target = Path(site_packages or sysconfig.get_paths()["purelib"]) / PTH_NAME
    if not target.exists() or target.read_text() != PTH_LINE:
        target.write_text(PTH_LINE)
    return target


def main(argv: list[str] | None = None) -> int:
    """``python -m labkit.gpu.sim.hook install``: write the .pth file; print its path."""
    parser = argparse.ArgumentParser(prog="python -m labkit.gpu.sim.hook")
    parser.add_argument("action", choices=["install"])
    parser.add_argument("--site-packages", default=None)
    args = parser.parse_args(argv)
    print(install_pth(args.site_packages))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
