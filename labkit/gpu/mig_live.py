"""MIG on the lab GPU through NVML: read its state, apply a layout (off by default), roll back.

The live half of lesson 02's MIG planning (:mod:`labkit.mig` is the pure half):
:func:`read_state` reads a GPU's mode, GPU and compute instances, MIG devices and processes;
:func:`apply` makes the GPU's layout equal a :class:`labkit.mig.Layout`: validate (read the GPU,
refuse while processes run) -> plan (:func:`labkit.mig.plan`, pure, replayed on the placement
rules) -> apply (NVML calls with explicit placements; roll back on failure). Both take the NVML
module that ``labkit.gpu.connect()`` returns, so the same code drives a real GPU and the
simulated lab GPU. ``apply`` is off unless ``LABKIT_ALLOW_MIG_APPLY=1`` and never runs inside a
voila app (:func:`apply_allowed`).

Sources: NVML ``nvml.h`` (MIG API), NVIDIA/mig-parted ``pkg/mig/config/config.go`` (apply clears
and retries; roll back on failure).

Used in: notebooks/02_mig.ipynb
"""

from __future__ import annotations

import ctypes
import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from labkit import validate
from labkit.gpu import smi
from labkit.mig.layout import Layout
from labkit.mig.nvidia_smi import to_nvidia_smi
from labkit.mig.plan import (
    ComputeInstanceState,
    GpuInstanceState,
    MigDeviceState,
    MigState,
    MigStep,
    plan,
)
from labkit.runtime.voila import running_under_voila

__all__ = [
    "ALLOW_ENV",
    "ApplyResult",
    "MigApplyError",
    "NvmlCall",
    "apply",
    "apply_allowed",
    "read_state",
]

#: The teacher's switch: ``apply`` changes a GPU only when this is ``"1"``.
ALLOW_ENV = "LABKIT_ALLOW_MIG_APPLY"

def _text(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _profile_name(info: Any) -> str:
    return _text(getattr(info, "name", b"")).removeprefix("MIG ").strip()


@dataclass
class _Live:
    """GI/CI handles next to their state (apply needs the handles)."""

    gi: Any
    state: GpuInstanceState
    cis: list[tuple[Any, ComputeInstanceState]]


def _compute_instances(nv: ModuleType, gi: Any) -> list[tuple[Any, ComputeInstanceState]]:
    out = [(handle, ComputeInstanceState(ci.id, ci.profileId, ci.placement.start,
                                         ci.placement.size, _profile_name(info)))
           for info, handle, ci in smi.compute_instances(nv, gi)]
    return sorted(out, key=lambda pair: pair[1].start)


def _live(nv: ModuleType, h: Any) -> list[_Live]:
    found = []
    for info, gi, gi_info in smi.gpu_instances(nv, h):
        cis = _compute_instances(nv, gi)
        state = GpuInstanceState(gi_info.id, info.id, _profile_name(info),
                                 gi_info.placement.start, gi_info.placement.size,
                                 tuple(c for _, c in cis))
        found.append(_Live(gi, state, cis))
    return sorted(found, key=lambda x: (x.state.start, x.state.id))


def _mig_devices(nv: ModuleType, h: Any) -> tuple[MigDeviceState, ...]:
    out = []
    for k in range(nv.nvmlDeviceGetMaxMigDeviceCount(h)):
        try:
            mig = nv.nvmlDeviceGetMigDeviceHandleByIndex(h, k)
        except nv.NVMLError_NotFound:
            continue
        out.append(MigDeviceState(k, _text(nv.nvmlDeviceGetUUID(mig)),
                                  nv.nvmlDeviceGetGpuInstanceId(mig),
                                  nv.nvmlDeviceGetComputeInstanceId(mig),
                                  _text(nv.nvmlDeviceGetName(mig))))
    return tuple(out)


def _read(nv: ModuleType, index: int) -> tuple[Any, MigState, list[_Live]]:
    h = nv.nvmlDeviceGetHandleByIndex(index)
    name = _text(nv.nvmlDeviceGetName(h))
    pids = tuple(p.pid for p in nv.nvmlDeviceGetComputeRunningProcesses(h))
    try:
        current, pending = nv.nvmlDeviceGetMigMode(h)
    except nv.NVMLError_NotSupported:
        return h, MigState(index, name, False, None, None, processes=pids), []
    live = _live(nv, h) if current == 1 else []
    devices = _mig_devices(nv, h) if current == 1 else ()
    state = MigState(index, name, True, int(current), int(pending),
                     tuple(x.state for x in live), devices, pids)
    return h, state, live


def read_state(nv: ModuleType, index: int = 0) -> MigState:
    """Return GPU ``index``'s MIG mode, GPU and compute instances, MIG devices and processes.

    Only reads (the ``nvidia-smi -q``/``mig -lgi``/``-lci``/``-L`` queries), the same calls on
    a real and a simulated GPU.

    Parameters
    ----------
    nv : module
        The NVML module from ``labkit.gpu.connect()``.
    index : int, default 0
        GPU index.

    Raises
    ------
    nv.NVMLError
        From any query (the UI shows it as "n/a" with the reason).
    InputError
        ``index`` that is not a whole number >= 0.

    Used in: notebooks/02_mig.ipynb
    """
    return _read(nv, validate.integer("index", index))[1]



@dataclass(frozen=True)
class NvmlCall:
    """One NVML call ``apply`` made (or, in a dry run, would make).

    Attributes
    ----------
    function : str
        The NVML function (``nvmlDeviceCreateGpuInstanceWithPlacement``).
    arguments : str
        Its arguments, readable (``profileId=9, placement=4:4``).
    outcome : str
        ``"ok"`` (with the value), the NVML error name, or ``"dry run"``.
    changes : bool
        Whether the call changes the GPU.
    rollback : bool
        Whether it undoes an earlier step.
    """

    function: str
    arguments: str
    outcome: str
    changes: bool = False
    rollback: bool = False


@dataclass(frozen=True)
class ApplyResult:
    """What :func:`apply` did (or would do, with ``dry_run``).

    Attributes
    ----------
    dry_run : bool
    steps : tuple of MigStep
        The plan.
    log : tuple of NvmlCall
        Every NVML call, in order.
    state : MigState
        The GPU afterwards (unchanged after a dry run).
    """

    dry_run: bool
    steps: tuple[MigStep, ...]
    log: tuple[NvmlCall, ...]
    state: MigState

    @property
    def changed(self) -> bool:
        """Whether any call changed the GPU."""
        return any(c.changes and c.outcome.startswith("ok") for c in self.log)


class MigApplyError(RuntimeError):
    """``apply`` refused or failed; ``reason`` says why, ``log`` what was called.

    Attributes
    ----------
    reason : str
        ``"voila"`` (never from a voila app), ``"disabled"`` (``LABKIT_ALLOW_MIG_APPLY`` not
        set), ``"not_supported"`` (no MIG), ``"model_mismatch"`` (the layout is for another
        board), ``"processes"`` (compute processes run), ``"pending"`` (a MIG mode change
        waits for a reset), ``"no_permission"`` (not root: run ``commands`` instead),
        ``"failed"`` (an NVML call failed; what was done is rolled back).
    commands : str
        The ``nvidia-smi`` commands that build the layout (to run by hand).
    log : tuple of NvmlCall
    rolled_back : bool
        Whether changes were undone.
    """

    def __init__(self, reason: str, message: str, *, commands: str = "",
                 log: Sequence[NvmlCall] = (), rolled_back: bool = False) -> None:
        super().__init__(message)
        self.reason = reason
        self.commands = commands
        self.log = tuple(log)
        self.rolled_back = rolled_back


def apply_allowed(dry_run: bool = False) -> tuple[bool, str | None]:
    """Return (allowed, reason) for :func:`apply` here and now.

    Never inside a voila app (reason ``"voila"``), whatever is set. A real apply also needs
    ``LABKIT_ALLOW_MIG_APPLY=1`` (reason ``"disabled"``); a dry run (it only reads) does not.

    Used in: notebooks/02_mig.ipynb
    """
    if running_under_voila():
        return False, "voila"
    if not dry_run and os.environ.get(ALLOW_ENV) != "1":
        return False, "disabled"
    return True, None


def _arg(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return "·"


class _Traced:
    """The NVML module with every ``nvml*`` call that passes through it logged."""

    def __init__(self, nv: ModuleType, log: list[NvmlCall]) -> None:
        self._nv = nv
        self._log = log

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._nv, name)
        if not (name.startswith("nvml") and callable(value)):
            return value

        def call(*args: Any, **kwargs: Any) -> Any:
            text = ", ".join(_arg(a) for a in args)
            try:
                out = value(*args, **kwargs)
            except self._nv.NVMLError as err:
                self._log.append(NvmlCall(name, text, type(err).__name__))
                raise
            shown = out if isinstance(out, (int, str, list)) else None
            self._log.append(NvmlCall(name, text, "ok" if shown is None else f"ok: {shown}"))
            return out

        return call


class _Recorder:
    """Logs the calls that change the GPU; in a dry run, logs them without calling."""

    def __init__(self, nv: ModuleType, dry_run: bool) -> None:
        self.nv = nv
        self.dry_run = dry_run
        self.log: list[NvmlCall] = []
        self.rollback = False

    def change(self, function: str, arguments: str, call: Callable[[], Any]) -> Any:
        if self.dry_run:
            self.log.append(NvmlCall(function, arguments, "dry run", True, self.rollback))
            return None
        try:
            value = call()
        except self.nv.NVMLError as err:
            self.log.append(NvmlCall(function, arguments, type(err).__name__, True,
                                     self.rollback))
            raise
        self.log.append(NvmlCall(function, arguments, "ok", True, self.rollback))
        return value


def _check_board(nv: Any, h: Any, state: MigState, layout: Layout, rec: _Recorder,
                 commands: str) -> None:
    """Check that the GPU offers the layout's profiles at its placements (reads only)."""
    infos = smi.gi_profiles(nv, h)
    if not infos:  # an old driver answers profile queries only with MIG on
        if state.name != layout.model.name:
            raise MigApplyError("model_mismatch",
                                f"GPU {state.index} is a {state.name}, the layout is for "
                                f"{layout.model.name}", commands=commands, log=rec.log)
        return
    by_name = {_profile_name(i): i for i in infos}
    for gi in layout.instances:
        info = by_name.get(gi.profile.name)
        if info is None or info.id != gi.profile.id:
            raise MigApplyError("model_mismatch",
                                f"GPU {state.index} ({state.name}) has no profile "
                                f"{gi.profile.name} with ID {gi.profile.id}; the layout is for "
                                f"{layout.model.short_name}", commands=commands, log=rec.log)
        starts = smi.placements(nv, h, info.id)
        if (gi.start, gi.profile.memory_slices) not in starts:
            raise MigApplyError("model_mismatch",
                                f"GPU {state.index} does not offer {gi.profile.name} at "
                                f"{gi.start}:{gi.profile.memory_slices}", commands=commands,
                                log=rec.log)


def _validate_plan(state: MigState, layout: Layout, steps: Sequence[MigStep]) -> None:
    """Replay the plan on the pure rules: every create must succeed after the destroys."""
    kept = [(s.start, s.profile_id) for s in steps if s.action == "destroy_gi"]
    after = Layout(layout.model)
    for gi in state.gpu_instances:
        if (gi.start, gi.profile_id) not in kept:
            after.place(gi.profile_id, gi.start)
    for step in steps:
        if step.action == "create_gi":
            after.place(step.profile_id or 0, step.start)
    if after != layout:
        raise ValueError(f"internal: the plan gives {after!r}, not {layout!r}")  # pragma: no cover


def apply(nv: ModuleType, index: int, layout: Layout, dry_run: bool = True) -> ApplyResult:
    """Make GPU ``index``'s MIG layout equal ``layout``, through NVML, or roll back.

    Order: refuse inside voila and (for a real apply) without ``LABKIT_ALLOW_MIG_APPLY=1``;
    read the GPU (mode, processes, instances, its profiles and placements); refuse while compute
    processes run; plan (:func:`plan`) and replay the whole plan on the placement rules — all
    before the first call that changes the GPU. Then enable MIG if needed, destroy what goes,
    create the GIs with explicit placements (``nvmlDeviceCreateGpuInstanceWithPlacement``), then
    their default CIs. If a call fails, what was created is destroyed and what was destroyed is
    re-created (mig-parted clears a partial state the same way).

    Parameters
    ----------
    nv : module
        The NVML module from ``labkit.gpu.connect()`` (real or simulated GPU).
    index : int
        GPU index.
    layout : Layout
        The target; its board must match the GPU's profiles.
    dry_run : bool, default True
        Only read and report the calls that would be made.

    Returns
    -------
    ApplyResult
        The plan, the log of NVML calls and the state afterwards.

    Raises
    ------
    MigApplyError
        ``reason`` ``voila``, ``disabled``, ``not_supported``, ``model_mismatch``,
        ``processes``, ``pending``, ``no_permission`` (with the ``nvidia-smi`` commands to run
        as root instead) or ``failed`` (rolled back).
    nv.NVMLError
        From a read that fails.

    Used in: notebooks/02_mig.ipynb
    """
    gpu = validate.integer("index", index)
    commands = to_nvidia_smi(layout, gpu)
    allowed, why = apply_allowed(dry_run)
    if not allowed:
        message = ("MIG apply is never available in a voila app" if why == "voila" else
                   f"MIG apply is off: set {ALLOW_ENV}=1 before starting JupyterLab "
                   "(or run the commands yourself)")
        raise MigApplyError(str(why), message, commands=commands)
    rec = _Recorder(nv, dry_run)
    traced: Any = _Traced(nv, rec.log)
    try:
        h, state, live = _read(traced, gpu)
        if not state.mig_supported:
            raise MigApplyError("not_supported", f"GPU {gpu} ({state.name}) has no MIG",
                                log=rec.log)
        _check_board(traced, h, state, layout, rec, commands)
    except nv.NVMLError_NoPermission as err:
        raise MigApplyError("no_permission", f"NVML: {err}; run as root instead:\n{commands}",
                            commands=commands, log=rec.log) from err
    if state.processes:
        raise MigApplyError("processes", f"GPU {gpu} runs compute processes "
                                         f"{list(state.processes)}: stop them first",
                            commands=commands, log=rec.log)
    if state.pending:
        raise MigApplyError("pending", f"GPU {gpu}: MIG mode change pending (current "
                                       f"{state.mode_current}, pending {state.mode_pending}); "
                                       f"reset the GPU first (nvidia-smi -i {gpu} -r)",
                            commands=commands, log=rec.log)
    steps = plan(state, layout)
    _validate_plan(state, layout, steps)
    done = _Execution(nv, h, rec, live)
    try:
        for step in steps:
            done.run(step)
    except (nv.NVMLError, MigApplyError) as err:
        if isinstance(err, nv.NVMLError_NoPermission) and not done.undo:
            raise MigApplyError("no_permission", f"NVML: {err}; run as root instead:\n"
                                                 f"{commands}", commands=commands,
                                log=rec.log) from err
        problems = done.roll_back()
        note = f"; rollback problems: {problems}" if problems else ""
        reason = err.reason if isinstance(err, MigApplyError) else "failed"
        raise MigApplyError(reason, f"GPU {gpu}: {err}; changes rolled back{note}",
                            commands=commands, log=rec.log, rolled_back=True) from err
    after = state if dry_run else read_state(nv, gpu)
    return ApplyResult(dry_run, tuple(steps), tuple(rec.log), after)


class _Execution:
    """Runs plan steps, remembering how to undo each."""

    def __init__(self, nv: ModuleType, h: Any, rec: _Recorder, live: list[_Live]) -> None:
        self.nv, self.h, self.rec = nv, h, rec
        self.gis: dict[int, Any] = {x.state.start: x.gi for x in live}  # start -> GI handle
        self.cis: dict[tuple[int, int], Any] = {(x.state.id, c.id): handle for x in live
                                                for handle, c in x.cis}
        self.by_id: dict[int, Any] = {x.state.id: x.gi for x in live}
        self.undo: list[Callable[[], None]] = []

    def run(self, step: MigStep) -> None:
        nv, rec = self.nv, self.rec
        if step.action == "enable_mig":
            status = rec.change("nvmlDeviceSetMigMode", "mode=1",
                                lambda: nv.nvmlDeviceSetMigMode(self.h, nv.NVML_DEVICE_MIG_ENABLE))
            self.undo.append(lambda: self._set_mode(nv.NVML_DEVICE_MIG_DISABLE))
            if status not in (None, nv.NVML_SUCCESS):
                raise MigApplyError("pending", f"MIG mode is pending (activationStatus "
                                               f"{status}): the GPU needs a reset")
        elif step.action == "destroy_ci":
            assert step.gpu_instance_id is not None and step.compute_instance_id is not None
            handle = self.cis[(step.gpu_instance_id, step.compute_instance_id)]
            rec.change("nvmlComputeInstanceDestroy",
                       f"GI {step.gpu_instance_id} CI {step.compute_instance_id}",
                       lambda: nv.nvmlComputeInstanceDestroy(handle))
            self.undo.append(functools.partial(self._recreate_ci, step))
        elif step.action == "destroy_gi":
            assert step.start is not None
            handle = self.gis.pop(step.start)
            rec.change("nvmlGpuInstanceDestroy", f"GI {step.gpu_instance_id} "
                                                 f"({step.profile}@{step.start})",
                       lambda: nv.nvmlGpuInstanceDestroy(handle))
            self.undo.append(functools.partial(self._create_gi, step))
        elif step.action == "create_gi":
            self._create_gi(step)
            self.undo.append(functools.partial(self._destroy_gi, step))
        elif step.action == "create_ci":
            ci = self._create_ci(step)
            self.undo.append(functools.partial(self._destroy_ci, ci, step))

    def _set_mode(self, mode: int) -> None:
        self.rec.change("nvmlDeviceSetMigMode", f"mode={mode}",
                        lambda: self.nv.nvmlDeviceSetMigMode(self.h, mode))

    def _gi_handle(self, step: MigStep) -> Any:
        if step.start in self.gis:
            return self.gis[step.start]
        return self.by_id[step.gpu_instance_id or 0]

    def _create_gi(self, step: MigStep) -> None:
        nv = self.nv
        assert step.start is not None and step.size is not None
        place = nv.c_nvmlGpuInstancePlacement_t(step.start, step.size)
        gi = self.rec.change(
            "nvmlDeviceCreateGpuInstanceWithPlacement",
            f"profileId={step.profile_id} ({step.profile}), placement={step.start}:{step.size}",
            lambda: nv.nvmlDeviceCreateGpuInstanceWithPlacement(self.h, step.profile_id,
                                                                ctypes.byref(place)))
        self.gis[step.start] = gi

    def _destroy_gi(self, step: MigStep) -> None:
        handle = self.gis.pop(step.start or 0)
        self.rec.change("nvmlGpuInstanceDestroy", f"{step.profile}@{step.start}",
                        lambda: self.nv.nvmlGpuInstanceDestroy(handle))

    def _create_ci(self, step: MigStep) -> Any:
        gi = self._gi_handle(step)
        return self.rec.change(
            "nvmlGpuInstanceCreateComputeInstance",
            f"GI {step.profile}@{step.start}, ciProfile={step.ci_profile_id}",
            lambda: self.nv.nvmlGpuInstanceCreateComputeInstance(gi, step.ci_profile_id))

    def _destroy_ci(self, ci: Any, step: MigStep) -> None:
        self.rec.change("nvmlComputeInstanceDestroy", f"CI on {step.profile}@{step.start}",
                        lambda: self.nv.nvmlComputeInstanceDestroy(ci))

    def _recreate_ci(self, step: MigStep) -> None:
        gi = self._gi_handle(step)
        self.rec.change(
            "nvmlGpuInstanceCreateComputeInstance",
            f"GI {step.profile}@{step.start}, ciProfile={step.ci_profile_id}",
            lambda: self.nv.nvmlGpuInstanceCreateComputeInstance(gi, step.ci_profile_id))

    def roll_back(self) -> list[str]:
        """Undo every completed step, newest first; return the problems met."""
        self.rec.rollback = True
        problems = []
        while self.undo:
            action = self.undo.pop()
            try:
                action()
            except (self.nv.NVMLError, KeyError) as err:
                problems.append(f"{type(err).__name__}: {err}")
        return problems
