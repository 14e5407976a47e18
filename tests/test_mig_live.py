"""labkit.gpu.mig_live on the simulated lab GPU: read_state, plan, apply (and its guards).

Apply's promises: a dry run changes nothing, it refuses with processes, a failure mid-plan rolls
back, it is off without LABKIT_ALLOW_MIG_APPLY=1 and never runs under voila.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import labkit.gpu as gpu
from labkit import mig
from labkit.gpu import mig_live
from labkit.gpu.mig_live import MigApplyError
from labkit.mig import Layout
from labkit.runtime import voila as voila_guard
from tests.conftest import SimFactory

CHANGING = ("nvmlDeviceSetMigMode", "nvmlDeviceCreateGpuInstance",
            "nvmlDeviceCreateGpuInstanceWithPlacement", "nvmlGpuInstanceDestroy",
            "nvmlGpuInstanceCreateComputeInstance", "nvmlComputeInstanceDestroy")
BALANCED = ["1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb"]


@pytest.fixture(autouse=True)
def allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Apply is allowed unless a test says otherwise; never under voila here."""
    monkeypatch.setenv(mig_live.ALLOW_ENV, "1")
    for name in voila_guard.VOILA_ENV_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(voila_guard, "_seen", False)


class Spy:
    """The NVML module, recording every function called; optionally failing one call."""

    def __init__(self, nv: ModuleType, fail: str | None = None, at: int = 0,
                 error: Any = None) -> None:
        self._nv, self._fail, self._at, self._error = nv, fail, at, error
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._nv, name)
        if not (name.startswith("nvml") and callable(value)):
            return value

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            if name == self._fail and self.calls.count(name) == self._at:
                raise self._error
            return value(*args, **kwargs)

        return call


def summary(state: mig.MigState) -> tuple[Any, ...]:
    return (state.mode_current, state.mode_pending,
            tuple((g.profile, g.start, tuple((c.profile_id, c.start) for c in
                                             g.compute_instances))
                  for g in state.gpu_instances),
            tuple(d.gpu_instance_id for d in state.mig_devices))


@pytest.fixture
def h100(sim: SimFactory) -> Iterator[tuple[ModuleType, Any]]:
    nv, lab = sim("sim:H100-80GB")
    yield nv, lab


# --- read_state ---------------------------------------------------------------------------------


def test_read_state_of_a_fresh_gpu(h100: tuple[ModuleType, Any]) -> None:
    nv, _ = h100
    state = mig_live.read_state(nv, 0)
    assert (state.mig_supported, state.mode_current, state.mode_pending) == (True, 0, 0)
    assert state.gpu_instances == () and state.mig_devices == () and state.processes == ()
    assert state.name == "NVIDIA H100 80GB HBM3" and not state.pending


def test_read_state_of_a_gpu_without_mig(sim: SimFactory) -> None:
    nv, _ = sim("sim:L40S")
    state = mig_live.read_state(nv, 0)
    assert not state.mig_supported and state.mode_current is None
    with pytest.raises(MigApplyError) as err:
        mig_live.apply(nv, 0, Layout("H100-80GB", [("7g.80gb", 0)]), dry_run=True)
    assert err.value.reason == "not_supported"


def test_apply_builds_the_layout_with_uuids_and_read_state_sees_it(
        h100: tuple[ModuleType, Any]) -> None:
    nv, _ = h100
    lay = Layout.from_profiles("H100-80GB", BALANCED)
    result = mig_live.apply(nv, 0, lay, dry_run=False)
    assert result.changed and result.state.layout("H100-80GB") == lay
    assert [s.action for s in result.steps] == ["enable_mig"] + ["create_gi"] * 4 + [
        "create_ci"] * 4
    creates = [c for c in result.log if c.function == "nvmlDeviceCreateGpuInstanceWithPlacement"]
    assert [c.arguments.split("placement=")[1] for c in creates] == ["4:4", "0:2", "2:1", "3:1"]
    state = mig_live.read_state(nv, 0)
    assert len(state.mig_devices) == 4
    assert len({d.uuid for d in state.mig_devices}) == 4
    assert all(d.uuid.startswith("MIG-") for d in state.mig_devices)
    assert {g.profile: g.compute_instances[0].profile_id for g in state.gpu_instances} == {
        "2g.20gb": 1, "1g.10gb": 0, "3g.40gb": 2}
    again = mig_live.apply(nv, 0, lay, dry_run=False)  # nothing to do: idempotent
    assert again.steps == () and not again.changed


def test_apply_changes_only_what_differs(h100: tuple[ModuleType, Any]) -> None:
    nv, _ = h100
    mig_live.apply(nv, 0, Layout.from_profiles("H100-80GB", BALANCED), dry_run=False)
    seven = Layout("H100-80GB", [("1g.10gb", s) for s in range(7)])
    steps = mig_live.apply(nv, 0, seven, dry_run=False).steps
    assert [s.action for s in steps].count("destroy_gi") == 2  # 2g@0 and 3g@4 go
    assert [s.action for s in steps].count("create_gi") == 5  # 1g@2 and 1g@3 stay
    assert mig_live.read_state(nv, 0).layout("H100-80GB") == seven


# --- apply on the states of shared/cases/mig.md (the cases themselves: test_gpu_mig.py) -------


def test_apply_gives_gpu_instances_without_compute_instances_only_cis(
        sim: SimFactory) -> None:
    nv, _ = sim("sim:A100-80GB")
    h = nv.nvmlDeviceGetHandleByIndex(0)
    nv.nvmlDeviceSetMigMode(h, 1)
    for _ in range(7):
        nv.nvmlDeviceCreateGpuInstance(h, 19)
    state = mig_live.read_state(nv, 0)
    assert len(state.gpu_instances) == 7 and state.mig_devices == ()
    lay = state.layout("A100-80GB")
    assert lay.free_capacity()["7g.80gb"] == (0, 1)
    steps = mig.plan(state, lay)
    assert [s.action for s in steps] == ["create_ci"] * 7
    mig_live.apply(nv, 0, lay, dry_run=False)
    assert len(mig_live.read_state(nv, 0).mig_devices) == 7


def test_apply_refuses_with_processes_and_withdraws_a_pending_enable(sim: SimFactory) -> None:
    nv, lab = sim("sim:H100-80GB")
    pid = lab.add_process(0)
    lay = Layout.from_profiles("H100-80GB", BALANCED)
    for dry in (True, False):
        with pytest.raises(MigApplyError) as err:
            mig_live.apply(nv, 0, lay, dry_run=dry)
        assert err.value.reason == "processes" and str(pid) in str(err.value)
    assert mig_live.read_state(nv, 0).mode_pending == 0  # refused before any change
    lab.remove_process(pid)
    lab.set_reset_possible(False)  # a VM: enabling MIG stays pending
    with pytest.raises(MigApplyError) as err:
        mig_live.apply(nv, 0, lay, dry_run=False)
    assert err.value.reason == "pending" and err.value.rolled_back
    assert [c.function for c in err.value.log if c.changes] == ["nvmlDeviceSetMigMode"] * 2
    assert mig_live.read_state(nv, 0).mode_pending == 0  # the pending enable was withdrawn


def test_pending_mode_found_on_the_gpu_is_refused(sim: SimFactory) -> None:
    nv, lab = sim("sim:H100-80GB")
    pid = lab.add_process(0)
    nv.nvmlDeviceSetMigMode(nv.nvmlDeviceGetHandleByIndex(0), 1)
    lab.remove_process(pid)
    with pytest.raises(MigApplyError) as err:
        mig_live.apply(nv, 0, Layout("H100-80GB"), dry_run=True)
    assert err.value.reason == "pending" and "-r" in str(err.value)


# --- apply's promises ---------------------------------------------------------------------------


def test_dry_run_makes_no_nvml_changes(h100: tuple[ModuleType, Any]) -> None:
    nv, _ = h100
    mig_live.apply(nv, 0, Layout("H100-80GB", [("7g.80gb", 0)]), dry_run=False)
    before = summary(mig_live.read_state(nv, 0))
    spy = Spy(nv)
    result = mig_live.apply(spy, 0, Layout.from_profiles("H100-80GB", BALANCED))  # type: ignore[arg-type]
    assert result.dry_run and not result.changed
    assert not any(name.startswith(CHANGING) for name in spy.calls)
    planned = [c for c in result.log if c.changes]
    assert planned and all(c.outcome == "dry run" for c in planned)
    assert [c.function for c in planned][:2] == ["nvmlComputeInstanceDestroy",
                                                 "nvmlGpuInstanceDestroy"]
    assert summary(mig_live.read_state(nv, 0)) == before


def test_dry_run_works_without_the_variable_but_a_real_apply_does_not(
        h100: tuple[ModuleType, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    nv, _ = h100
    monkeypatch.delenv(mig_live.ALLOW_ENV)
    lay = Layout.from_profiles("H100-80GB", BALANCED)
    assert mig_live.apply(nv, 0, lay).dry_run
    for value in (None, "0", "yes", "true"):
        if value is not None:
            monkeypatch.setenv(mig_live.ALLOW_ENV, value)
        spy = Spy(nv)
        with pytest.raises(MigApplyError) as err:
            mig_live.apply(spy, 0, lay, dry_run=False)  # type: ignore[arg-type]
        assert err.value.reason == "disabled" and spy.calls == []
        assert "sudo nvidia-smi mig -i 0 -cgi 9:4 -C" in err.value.commands
    assert mig_live.apply_allowed() == (False, "disabled")
    assert mig_live.read_state(nv, 0).mode_current == 0


@pytest.mark.parametrize("how", ["env", "parent"])
def test_apply_is_unreachable_under_voila_even_with_the_variable(
        h100: tuple[ModuleType, Any], monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    nv, _ = h100
    if how == "env":
        monkeypatch.setenv("VOILA_KERNEL_ID", "4b1c0e9e")
    else:
        monkeypatch.setattr(voila_guard, "_parent_is_voila", lambda: True)
    spy = Spy(nv)
    for dry in (True, False):
        with pytest.raises(MigApplyError) as err:
            mig_live.apply(spy, 0, Layout("H100-80GB", [("7g.80gb", 0)]), dry_run=dry)  # type: ignore[arg-type]
        assert err.value.reason == "voila"
    assert spy.calls == [] and mig_live.apply_allowed(dry_run=True) == (False, "voila")
    with pytest.raises(voila_guard.VoilaForbiddenError):
        voila_guard.forbid_under_voila("MIG apply")
    # sticky: clearing the environment afterwards does not turn it back on
    monkeypatch.delenv("VOILA_KERNEL_ID", raising=False)
    monkeypatch.setattr(voila_guard, "_parent_is_voila", lambda: False)
    assert voila_guard.running_under_voila()


def test_serving_layer_and_mig_share_one_voila_detector() -> None:
    import labkit.serve as serve

    assert serve.running_under_voila is voila_guard.running_under_voila
    assert serve.forbid_under_voila is voila_guard.forbid_under_voila
    assert serve.VoilaForbiddenError is voila_guard.VoilaForbiddenError


def test_failure_mid_plan_rolls_back_what_was_created(h100: tuple[ModuleType, Any]) -> None:
    nv, lab = h100
    nv.nvmlDeviceSetMigMode(nv.nvmlDeviceGetHandleByIndex(0), 1)
    before = summary(mig_live.read_state(nv, 0))
    lab.inject("nvmlGpuInstanceCreateComputeInstance", "InsufficientResources", count=1)
    with pytest.raises(MigApplyError) as err:
        mig_live.apply(nv, 0, Layout.from_profiles("H100-80GB", BALANCED), dry_run=False)
    assert err.value.reason == "failed" and err.value.rolled_back
    undone = [c for c in err.value.log if c.rollback]
    assert [c.function for c in undone] == ["nvmlGpuInstanceDestroy"] * 4
    assert all(c.outcome == "ok" for c in undone)
    assert summary(mig_live.read_state(nv, 0)) == before


def test_failure_mid_plan_restores_the_previous_layout(h100: tuple[ModuleType, Any]) -> None:
    nv, _ = h100
    old = Layout.from_profiles("H100-80GB", BALANCED)
    mig_live.apply(nv, 0, old, dry_run=False)
    before = summary(mig_live.read_state(nv, 0))
    spy = Spy(nv, fail="nvmlDeviceCreateGpuInstanceWithPlacement", at=3,
              error=nv.NVMLError(nv.NVML_ERROR_UNKNOWN))
    with pytest.raises(MigApplyError) as err:
        mig_live.apply(spy, 0, Layout("H100-80GB", [("1g.10gb", s) for s in range(7)]),  # type: ignore[arg-type]
                  dry_run=False)
    assert err.value.rolled_back and "rollback problems" not in str(err.value)
    state = mig_live.read_state(nv, 0)
    assert state.layout("H100-80GB") == old
    assert [(g[0], g[1], g[2]) for g in summary(state)[2]] == [
        (g[0], g[1], g[2]) for g in before[2]]
    assert len(state.mig_devices) == 4


def test_no_permission_tells_which_commands_to_run(h100: tuple[ModuleType, Any]) -> None:
    nv, lab = h100
    lab.set_mig_rights(False)
    lay = Layout.from_profiles("H100-80GB", BALANCED)
    assert mig_live.apply(nv, 0, lay).dry_run  # reading is allowed
    with pytest.raises(MigApplyError) as err:
        mig_live.apply(nv, 0, lay, dry_run=False)
    assert err.value.reason == "no_permission" and not err.value.rolled_back
    assert err.value.commands == mig.to_nvidia_smi(lay, 0)
    assert "sudo nvidia-smi -i 0 -mig 1" in str(err.value)
    assert mig_live.read_state(nv, 0).mode_current == 0


def test_layout_for_another_board_is_refused_before_any_change(
        h100: tuple[ModuleType, Any]) -> None:
    nv, _ = h100
    spy = Spy(nv)
    with pytest.raises(MigApplyError) as err:
        mig_live.apply(spy, 0, Layout("A30", [("4g.24gb", 0)]), dry_run=False)  # type: ignore[arg-type]
    assert err.value.reason == "model_mismatch"
    assert not any(name.startswith(CHANGING) for name in spy.calls)
    same_table = Layout.from_profiles("H100-PCIE", BALANCED)  # same profiles as the SXM board
    assert mig_live.apply(nv, 0, same_table).steps


def test_old_driver_with_mig_off_checks_the_board_by_name(sim: SimFactory) -> None:
    nv, lab = sim("sim:H100-80GB")
    lab.set_legacy_mig_queries(True)
    assert mig_live.apply(nv, 0, Layout.from_profiles("H100-80GB", BALANCED)).steps
    with pytest.raises(MigApplyError) as err:
        mig_live.apply(nv, 0, Layout.from_profiles("H100-PCIE", BALANCED))
    assert err.value.reason == "model_mismatch"


def test_plan_needs_a_mig_gpu_and_an_index() -> None:
    state = mig.MigState(0, "NVIDIA L40S", False, None, None)
    with pytest.raises(ValueError):
        mig.plan(state, Layout("H100-80GB"))
    with pytest.raises(ValueError):
        mig_live.read_state(gpu, -1)  # type: ignore[arg-type]


# --- the planner and the simulated driver agree -------------------------------------------------

NAMES = ["1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"]


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(NAMES), st.one_of(st.none(), st.integers(0, 6))),
                max_size=8))
def test_planner_and_simulated_driver_never_disagree(
        sim: SimFactory, moves: list[tuple[str, int | None]]) -> None:
    import ctypes

    nv, _ = sim("sim:H100-80GB")
    h = nv.nvmlDeviceGetHandleByIndex(0)
    nv.nvmlDeviceSetMigMode(h, 1)
    lay = Layout("H100-80GB")
    for name, start in moves:
        prof = lay.profile(name)
        ok = lay.can_place(name, start)
        try:
            if start is None:
                nv.nvmlDeviceCreateGpuInstance(h, prof.id)
            else:
                place = nv.c_nvmlGpuInstancePlacement_t(start, prof.memory_slices)
                nv.nvmlDeviceCreateGpuInstanceWithPlacement(h, prof.id, ctypes.byref(place))
        except nv.NVMLError:
            assert not ok
            continue
        assert ok
        lay.place(name, start)
        assert mig_live.read_state(nv, 0).layout("H100-80GB") == lay
        for p in NAMES:
            free = nv.nvmlDeviceGetGpuInstanceRemainingCapacity(h, lay.profile(p).id)
            assert lay.free_capacity()[p][0] == free
