"""Start-up hook run by ``labkit_sim.pth`` when ``LABKIT_GPU=sim:...`` is set (stdlib only).

Puts a finder in front of ``pynvml`` so that, once any code imports it, pynvml is pointed at
the simulated lab (:func:`labkit.gpu.sim.hook.attach`) before it can load libnvidia-ml. Nothing
heavy runs here: pynvml and the simulator load only when something imports pynvml. See
:mod:`labkit.gpu.sim.hook`.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from types import ModuleType
from typing import Any

__all__ = ["install"]


class _Loader(importlib.abc.Loader):
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        create = getattr(self._inner, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module: ModuleType) -> None:
        self._inner.exec_module(module)
        from labkit.gpu.sim.hook import attach

        attach(module)


class _PynvmlFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any = None,
                  target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != "pynvml":
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec("pynvml")
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _Loader(spec.loader)
        return spec


def install() -> None:
    """Hook pynvml's import (or attach at once if it is already imported)."""
    if not os.environ.get("LABKIT_GPU", "").strip().startswith("sim"):
        return
    module = sys.modules.get("pynvml")
    if module is not None:
        from labkit.gpu.sim.hook import attach

        attach(module)
    elif not any(isinstance(f, _PynvmlFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _PynvmlFinder())


try:
    install()
except Exception as err:  # never break interpreter start-up; say why
    sys.stderr.write(f"labkit: simulated GPU hook not installed: {err}\n")
