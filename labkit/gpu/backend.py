"""Choose the lab GPU: the machine's libnvidia-ml, or simulated GPUs under the same pynvml.

See :func:`connect` for the spec grammar and :func:`status` for what the lesson banner shows.
Nothing heavy happens at import: pynvml and the GPU model files are loaded on first use.

Used in: every lesson's banner (labkit.ui.setup); lessons 01 (observation) and 02 (MIG)
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from labkit.gpu.sim.lab import SimulatedLab

__all__ = [
    "DEFAULT_SIM_MODEL",
    "ENV",
    "GpuStatus",
    "connect",
    "disconnect",
    "parse_spec",
    "simulator",
    "status",
]

#: Environment variable that overrides ``connect("auto")``.
ENV = "LABKIT_GPU"
#: The simulated lab GPU used when no real one is found (the browser tests use it too).
DEFAULT_SIM_MODEL = "H100-80GB"
_MAX_SIM_GPUS = 64
_COUNT = re.compile(r"^(\d+)\s*[x×*]\s*(.+)$")


@dataclass(frozen=True)
class GpuStatus:
    """Which lab GPU the lessons run on: the banner's data.

    Attributes
    ----------
    kind : {"real", "sim", "none"}
        ``"none"`` only when a real GPU was demanded (``LABKIT_GPU=real``) and is missing.
    name : str
        The GPU's name (``"NVIDIA H100 80GB HBM3"``; ``"8 × ..."`` for several alike).
    nvml_version : str
        ``nvmlSystemGetNVMLVersion`` (``""`` for ``"none"``).
    driver_version : str
        ``nvmlSystemGetDriverVersion``.
    device_count : int
        Number of GPUs.
    spec : str
        The spec that was resolved (``"real"``, ``"sim:H100-80GB"``).
    reason : str or None
        Why the real GPU was not used: the NVML error text (``"NVML Shared Library Not
        Found"``), or None when nothing was tried or the real GPU is in use.
    reason_code : str or None
        The error's short name (``"LibraryNotFound"``, ``"DriverNotLoaded"``,
        ``"NoDevices"``, ...): the UI catalog explains it in Korean.
    shared : bool
        Whether the simulated lab is the one all processes share (``LABKIT_GPU=sim:...``).
    """

    kind: str
    name: str
    nvml_version: str
    driver_version: str
    device_count: int
    spec: str
    reason: str | None = None
    reason_code: str | None = None
    shared: bool = False


class _State:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.key: tuple[Any, ...] | None = None
        self.kind: str | None = None
        self.lab: SimulatedLab | None = None
        self.status: GpuStatus | None = None


_state = _State()


def parse_spec(spec: str) -> list[str]:
    """Return the model short names of a ``sim:`` spec, one per GPU.

    Grammar: ``sim`` (the default lab GPU), ``sim:<model>[,<model>...]``, where a model may be
    preceded by a count: ``sim:8xH100-80GB``, ``sim:2xA30,H100-80GB``. Model names are the file
    names of ``data/gpus/`` (case-insensitive).

    Raises
    ------
    ValueError
        For another prefix, an unknown model, a bad count or more than 64 GPUs.
    """
    from labkit.data.gpus import available_models

    text = spec.strip()
    if text == "sim":
        return [DEFAULT_SIM_MODEL]
    if not text.startswith("sim:"):
        raise ValueError(f"not a simulator spec: {spec!r} (use sim:<model>[,<model>...])")
    known = {m.lower(): m for m in available_models()}
    models: list[str] = []
    for part in text[4:].split(","):
        part = part.strip()
        count = 1
        match = _COUNT.match(part)
        if match:
            count, part = int(match.group(1)), match.group(2).strip()
            if not 1 <= count <= _MAX_SIM_GPUS:
                raise ValueError(f"GPU count must be 1..{_MAX_SIM_GPUS}, got {count}")
        name = known.get(part.lower())
        if name is None:
            raise ValueError(f"unknown GPU model {part!r} in {spec!r}; known: "
                             f"{', '.join(sorted(known.values()))}")
        models.extend([name] * count)
    if not models or len(models) > _MAX_SIM_GPUS:
        raise ValueError(f"a spec needs 1..{_MAX_SIM_GPUS} GPUs, got {len(models)}")
    return models


def _resolve(spec: str) -> str:
    if spec == "auto":
        spec = os.environ.get(ENV, "").strip() or "auto"
    if spec not in ("auto", "real") and not spec.startswith("sim"):
        raise ValueError(f"GPU spec must be 'auto', 'real' or 'sim:<model>[,...]', got {spec!r} "
                         f"(environment variable {ENV})")
    return spec


def connect(spec: str = "auto", *, seed: int = 0, clock: str = "wall",
            noise: bool = True, shared: bool | None = None) -> ModuleType:
    """Connect to the lab GPU and return the NVML API (the ``pynvml`` module, initialised).

    Parameters
    ----------
    spec : str, default "auto"
        ``"real"``: the machine's libnvidia-ml. ``"sim:<model>[,<model>...]"`` (or
        ``"sim:8xH100-80GB"``): simulated GPUs under the same pynvml. ``"auto"``: the value of
        ``$LABKIT_GPU`` if set, else the real GPU when ``nvmlInit`` succeeds and finds a
        device, otherwise the simulated default lab GPU (``sim:H100-80GB``).
    seed, clock, noise
        For a simulated lab: see :class:`labkit.gpu.sim.SimulatedLab` (``clock="virtual"``
        for tests: time moves only with ``simulator().advance()``).
    shared : bool, optional
        Whether a simulated lab is the one every process shares
        (:mod:`labkit.gpu.sim.shared`: MIG layout, workloads and faults seen by nvitop, gpustat
        and other kernels). Default: shared when the spec comes from ``$LABKIT_GPU`` and the
        clock is ``"wall"``, except in a voila kernel; private otherwise (tests, the no-GPU
        fallback). Voila pages are per-student apps of one server user: each keeps its own lab,
        so nothing a student does on a page reaches another student's page. A shared lab
        ignores ``seed`` once it exists (the lab keeps the seed it was created with).

    Returns
    -------
    module
        ``pynvml`` itself; call ``nvmlDeviceGetHandleByIndex`` etc. on it.

    Raises
    ------
    pynvml.NVMLError
        With ``spec="real"`` when NVML cannot start (``NVMLError_LibraryNotFound`` on a machine
        without the NVIDIA driver); :func:`status` then explains it.
    ValueError
        For a bad spec.

    Calling it again with the same arguments returns at once (re-initialising NVML if someone
    called ``nvmlShutdown``); other arguments replace the connection (a new simulated lab).
    """
    import pynvml

    from_env = spec == "auto" and bool(os.environ.get(ENV, "").strip())
    resolved = _resolve(spec)
    if shared is None:
        shared = from_env and clock == "wall" and not _under_voila()
    if shared and clock != "wall":
        raise ValueError("a shared simulated lab runs on the wall clock (clock='wall')")
    key = (resolved, seed, clock, noise, shared)
    with _state.lock:
        if _state.key == key and _still_up(pynvml):
            return pynvml
        disconnect()
        if resolved == "real":
            _connect_real(pynvml, spec=resolved)
        elif resolved == "auto":
            try:
                _connect_real(pynvml, spec=resolved)
            except (pynvml.NVMLError, _NoDevices) as err:
                _connect_sim(pynvml, [DEFAULT_SIM_MODEL], seed, clock, noise,
                             reason=str(err), reason_code=_code(err))
        else:
            _connect_sim(pynvml, parse_spec(resolved), seed, clock, noise, shared=shared)
        _state.key = key
        return pynvml


def _under_voila() -> bool:
    from labkit.runtime.voila import running_under_voila

    return running_under_voila()


class _NoDevices(Exception):
    pass


def _code(err: BaseException) -> str:
    if isinstance(err, _NoDevices):
        return "NoDevices"
    name = type(err).__name__
    return name.removeprefix("NVMLError_") if name.startswith("NVMLError_") else name


def _still_up(pynvml: ModuleType) -> bool:
    if _state.kind == "sim" and _state.lab is not None:
        if pynvml.nvmlLib is not _state.lab.library:
            return False
        if _state.lab._init_count <= 0:
            pynvml.nvmlInit()
        return True
    try:
        pynvml.nvmlDeviceGetCount()
    except pynvml.NVMLError_Uninitialized:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        return False
    return True


def _connect_real(pynvml: ModuleType, spec: str) -> None:
    from labkit.gpu import nvml

    if _state.lab is not None or pynvml.nvmlLib is not None:
        nvml.uninstall(real=True)
    _state.lab = None
    pynvml.nvmlInit()
    count = pynvml.nvmlDeviceGetCount()
    if count == 0 and spec == "auto":
        pynvml.nvmlShutdown()
        raise _NoDevices("NVML found no GPU")
    names = [pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(i))
             for i in range(count)]
    _state.kind = "real"
    _state.status = GpuStatus(
        kind="real", name=_join_names(names), nvml_version=pynvml.nvmlSystemGetNVMLVersion(),
        driver_version=pynvml.nvmlSystemGetDriverVersion(), device_count=count, spec="real")


def _connect_sim(pynvml: ModuleType, models: list[str], seed: int, clock: str, noise: bool,
                 reason: str | None = None, reason_code: str | None = None,
                 shared: bool = False) -> None:
    from labkit.data.gpus import load_gpu_model
    from labkit.gpu import nvml
    from labkit.gpu.sim.lab import SimulatedLab

    lab: SimulatedLab | None = None
    if shared:
        from labkit.gpu.sim.shared import shared_lab

        try:
            lab = shared_lab(models, noise=noise)
        except OSError as err:  # e.g. a lab directory this user may not create: stay private
            shared = False
            reason = f"shared simulated lab unavailable ({err}); this process has its own"
            reason_code = "SharedLabUnavailable"
    if lab is None:
        lab = SimulatedLab([load_gpu_model(m) for m in models], seed=seed, clock=clock,
                           noise=noise)
    nvml.install(lab.library)
    pynvml.nvmlInit()
    _state.lab = lab
    _state.kind = "sim"
    names = [d.model.name for d in lab.devices]
    _state.status = GpuStatus(
        kind="sim", name=_join_names(names), nvml_version=pynvml.nvmlSystemGetNVMLVersion(),
        driver_version=pynvml.nvmlSystemGetDriverVersion(), device_count=len(names),
        spec="sim:" + ",".join(models), reason=reason, reason_code=reason_code, shared=shared)


def _join_names(names: list[str]) -> str:
    if not names:
        return ""
    if len(set(names)) == 1:
        return names[0] if len(names) == 1 else f"{len(names)} × {names[0]}"
    return ", ".join(names)


def disconnect() -> None:
    """Close the connection (shut NVML down, take a simulated library out from under pynvml)."""
    import pynvml

    from labkit.gpu import nvml

    with _state.lock:
        if _state.kind == "real":
            try:
                pynvml.nvmlShutdown()
            except pynvml.NVMLError:
                pass
        elif _state.kind == "sim":
            nvml.uninstall()
        _state.key = _state.kind = _state.lab = _state.status = None


def simulator() -> SimulatedLab:
    """Return the simulated lab behind pynvml (the control API: workloads, faults, clock).

    Raises
    ------
    RuntimeError
        If the connection is not simulated (call ``connect("sim:...")`` first).
    """
    with _state.lock:
        if _state.kind != "sim" or _state.lab is None:
            raise RuntimeError("not connected to a simulated GPU: call "
                               "labkit.gpu.connect('sim:<model>') first")
        return _state.lab


def status() -> GpuStatus:
    """Return which lab GPU the lessons run on, connecting on first use (never raises NVML errors).

    With ``LABKIT_GPU=real`` on a machine without a GPU (or an unreadable ``LABKIT_GPU``) the
    result has ``kind="none"`` and the reason, so a lesson's banner can say so instead of
    failing.
    """
    import pynvml

    with _state.lock:
        if _state.status is None:
            try:
                connect()
            except (pynvml.NVMLError, ValueError) as err:
                bad_spec = not isinstance(err, pynvml.NVMLError)
                return GpuStatus(kind="none", name="", nvml_version="", driver_version="",
                                 device_count=0, spec=os.environ.get(ENV, "auto"),
                                 reason=str(err), reason_code="BadSpec" if bad_spec
                                 else _code(err))
        assert _state.status is not None
        return _state.status
