"""The pynvml loading hook (labkit.gpu.nvml): fails loudly if an nvidia-ml-py upgrade breaks it."""

from __future__ import annotations

import ctypes
import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

import pynvml
import pytest

from labkit.gpu import nvml
from labkit.gpu.sim.lib import NvmlApi

ROOT = Path(__file__).resolve().parents[1]


def test_nvidia_ml_py_is_in_the_tested_range() -> None:
    from packaging.specifiers import SpecifierSet

    assert importlib.metadata.version("nvidia-ml-py") in SpecifierSet(nvml.PYNVML_RANGE)
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert f'"nvidia-ml-py{nvml.PYNVML_RANGE}"' in pyproject
    lock = (ROOT / "binder/constraints.txt").read_text()
    assert f"nvidia-ml-py=={nvml.PYNVML_VERSION}\n" in lock


def test_check_pynvml_fails_loudly_without_the_private_names() -> None:
    from types import ModuleType

    from labkit.gpu.sim.hook import REQUIRED_PYNVML_SYMBOLS, check_pynvml

    check_pynvml(pynvml)
    fake = ModuleType("pynvml")
    for name in REQUIRED_PYNVML_SYMBOLS[1:]:
        setattr(fake, name, object())
    with pytest.raises(RuntimeError, match="missing nvmlLib.*nvidia-ml-py"):
        check_pynvml(fake)


def test_pynvml_private_loader_names_still_exist() -> None:
    """The hook sets pynvml.nvmlLib and clears the function-pointer cache; both must exist."""
    assert hasattr(pynvml, "nvmlLib")
    assert isinstance(pynvml._nvmlGetFunctionPointer_cache, dict)
    assert hasattr(pynvml.libLoadLock, "acquire")
    source = Path(pynvml.__file__).read_text()
    # nvmlInit loads the C library only while nvmlLib is None, and lookups use getattr(nvmlLib)
    assert re.search(r"if \(nvmlLib == None\):", source)
    assert "getattr(nvmlLib, name)" in source


class _Probe:
    """A minimal fake C library: records calls, answers three functions."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def nvmlInitWithFlags(self, flags: object) -> int:
        self.calls.append("init")
        return pynvml.NVML_SUCCESS

    def nvmlDeviceGetCount_v2(self, ref: object) -> int:
        ref._obj.value = 3  # type: ignore[attr-defined]
        self.calls.append("count")
        return pynvml.NVML_SUCCESS

    def nvmlDeviceGetMigMode(self, h: object, cur: object, pend: object) -> int:
        return pynvml.NVML_ERROR_INSUFFICIENT_RESOURCES

    def nvmlErrorString(self, code: int) -> bytes:
        return b"probe error"


def test_installed_object_answers_pynvml_calls_and_missing_names_are_function_not_found() -> None:
    probe = _Probe()
    saved = pynvml.nvmlLib
    nvml.install(probe)
    try:
        pynvml.nvmlInit()
        assert pynvml.nvmlDeviceGetCount() == 3
        assert probe.calls == ["init", "count"]
        with pytest.raises(pynvml.NVMLError_InsufficientResources):
            pynvml.nvmlDeviceGetMigMode(pynvml.c_nvmlDevice_t())
        with pytest.raises(pynvml.NVMLError_FunctionNotFound):
            pynvml.nvmlDeviceGetPowerUsage(pynvml.c_nvmlDevice_t())
        assert nvml.installed() is probe
    finally:
        nvml.install(saved) if saved is not None else nvml.uninstall()


def test_uninstall_leaves_pynvml_loading_the_real_library() -> None:
    nvml.uninstall()
    assert pynvml.nvmlLib is None
    assert not pynvml._nvmlGetFunctionPointer_cache


def test_every_simulated_function_is_called_by_a_pynvml_wrapper() -> None:
    """Each simulated C name must be one pynvml looks up (catches a renamed symbol)."""
    source = Path(pynvml.__file__).read_text()
    looked_up = set(re.findall(r'_nvmlGetFunctionPointer\("(nvml\w+)"\)', source))
    simulated = {n for n in dir(NvmlApi) if n.startswith("nvml")}
    unknown = sorted(simulated - looked_up - {"nvmlInit_v2"})
    assert not unknown, f"simulated functions pynvml never calls: {unknown}"


def test_out_parameter_and_handle_conventions() -> None:
    """byref(x)._obj is x; a handle's value can be written through from_buffer."""
    handle = pynvml.c_nvmlDevice_t()
    ref = ctypes.byref(handle)
    assert ref._obj is handle  # type: ignore[attr-defined]
    buf = ctypes.create_string_buffer(1)
    ctypes.c_void_p.from_buffer(handle).value = ctypes.addressof(buf)
    assert ctypes.cast(handle, ctypes.c_void_p).value == ctypes.addressof(buf)


def test_importing_labkit_gpu_does_not_import_pynvml() -> None:
    code = ("import sys, labkit.gpu, labkit.mig, labkit.gpumodels, labkit.data.gpus; "
            "print('pynvml' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"


def test_only_labkit_gpu_imports_pynvml_and_pure_gpu_modules_do_not() -> None:
    for path in sorted((ROOT / "labkit").rglob("*.py")):
        rel = path.relative_to(ROOT / "labkit").as_posix()
        text = path.read_text(encoding="utf-8")
        imports = re.search(r"^\s*(import pynvml|from pynvml)", text, re.M)
        if not rel.startswith("gpu/"):
            assert not imports, f"{rel} imports pynvml: only labkit/gpu may"
    for pure in ("gpumodels.py", "mig/placement.py"):  # the pure GPU rules the simulator uses
        text = (ROOT / "labkit" / pure).read_text()
        assert not re.search(r"^\s*(import|from) (pynvml|labkit\.gpu\.(sim|nvml|backend))",
                             text, re.M), pure
