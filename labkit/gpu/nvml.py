"""The one place that touches pynvml's loading: put a simulated libnvidia-ml under pynvml.

pynvml (nvidia-ml-py 13.615.71) looks every C function up with ``_nvmlGetFunctionPointer(name)``,
i.e. ``getattr(pynvml.nvmlLib, name)``, cached in ``_nvmlGetFunctionPointer_cache``; ``nvmlInit``
loads ``libnvidia-ml.so.1`` only while ``nvmlLib`` is None. Setting ``nvmlLib`` to the
simulator's library object (and clearing the cache) makes every pynvml wrapper run unchanged on
top of it. These are private names: pyproject.toml allows only the tested range
(:data:`PYNVML_RANGE`), :func:`labkit.gpu.sim.hook.check_pynvml` probes for them and fails
loudly, and ``tests/test_gpu_hook.py`` / ``tests/test_gpu_pynvml_range.py`` check the range.

Also :func:`query`, the nvitop-style safe call: NVML errors become a default value (None), and
each (function, error) pair is logged once.

Used in: lessons 01 (observation) and 02 (MIG), through labkit.gpu
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["PYNVML_RANGE", "PYNVML_VERSION", "clear_function_cache", "install", "query",
           "set_default_library", "try_query", "uninstall"]

#: The nvidia-ml-py releases labkit is tested with (pyproject.toml's range): the oldest and the
#: newest run labkit's GPU tests in tests/test_gpu_pynvml_range.py. Older ones lack wrappers and
#: constants the simulator and its tests use (13.580.65: ``nvmlDeviceGetDriverModel_v2``,
#: ``NVML_GPM_METRIC_DMMA_TENSOR_UTIL``); 14.x is untested.
PYNVML_RANGE = ">=13.590.48,<14"
#: The release pinned in binder/constraints.txt (the newest tested).
PYNVML_VERSION = "13.615.71"

T = TypeVar("T")
_log = logging.getLogger("labkit.gpu")
_warned: set[tuple[str, str]] = set()
_default: object | None = None  # what uninstall() restores (the sim hook's lazy library)


def set_default_library(library: object | None) -> None:
    """Make :func:`uninstall` restore ``library`` instead of None (the LABKIT_GPU=sim hook)."""
    global _default
    _default = library


def install(library: object) -> None:
    """Make pynvml call ``library`` (an object whose attributes are C functions) from now on."""
    import pynvml

    with pynvml.libLoadLock:
        pynvml.nvmlLib = library
        pynvml._nvmlGetFunctionPointer_cache.clear()


def uninstall(*, real: bool = False) -> None:
    """Forget any installed library: the next ``nvmlInit`` loads the real libnvidia-ml.

    Under the ``LABKIT_GPU=sim`` hook the hook's simulated library comes back instead, unless
    ``real`` (``connect("real")``).
    """
    import pynvml

    with pynvml.libLoadLock:
        pynvml.nvmlLib = None if real else _default
        pynvml._nvmlGetFunctionPointer_cache.clear()


def installed() -> object | None:
    """Return the library pynvml currently calls (None before the first init)."""
    import pynvml

    return pynvml.nvmlLib


def clear_function_cache() -> None:
    """Drop pynvml's function-pointer cache (after the simulator removed or restored a function)."""
    import pynvml

    with pynvml.libLoadLock:
        pynvml._nvmlGetFunctionPointer_cache.clear()


def try_query(func: Callable[..., T], *args: Any) -> tuple[T | None, Exception | None]:
    """Call an NVML function; return (value, None) or (None, the ``pynvml.NVMLError``).

    Only ``pynvml.NVMLError`` is caught; anything else is a bug and propagates. Bytes results
    are decoded.
    """
    import pynvml

    try:
        value = func(*args)
    except pynvml.NVMLError as err:
        key = (getattr(func, "__name__", repr(func)), type(err).__name__)
        if key not in _warned:
            _warned.add(key)
            _log.info("%s failed: %s (%s)", key[0], err, key[1])
        return None, err
    if isinstance(value, bytes):
        value = value.decode(errors="replace")  # type: ignore[assignment]
    return value, None


def query(func: Callable[..., T], *args: Any, default: Any = None) -> Any:
    """Call an NVML function and return its value, or ``default`` on an NVML error.

    For readings that may be missing on some boards (fan, power, ECC, GPM): the caller shows
    "n/a" for None. Use :func:`try_query` to also get the reason.
    """
    value, err = try_query(func, *args)
    return default if err is not None else value
