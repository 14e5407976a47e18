"""labkit.gpu.sampler.Sampler on the simulated lab GPU: every field fails on its own, GPM spacing,
rates, tiers, bounded history, threads; the cases of shared/cases/observe.md."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from labkit import observe as ob
from labkit.gpu import sampler as gs
from labkit.gpu.sampler import Sampler
from labkit.observe import Status
from labkit.validate import InputError
from tests.conftest import SimFactory


class Spy:
    """The NVML module, recording every ``nvml*`` call with its arguments and the lab time."""

    def __init__(self, nv: ModuleType, now: Callable[[], float]) -> None:
        self._nv, self._now = nv, now
        self.calls: list[tuple[str, tuple[Any, ...], float]] = []

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._nv, name)
        if not (name.startswith("nvml") and callable(attr)):
            return attr

        def call(*args: Any) -> Any:
            self.calls.append((name, args, self._now()))
            return attr(*args)

        return call

    def count(self, name: str) -> int:
        return sum(1 for n, _, _ in self.calls if n == name)


def _statuses(snap: ob.Snapshot, gpu: int) -> dict[str, Status]:
    return {m: r.status for (g, m), r in snap.readings.items() if g == gpu}


def test_sampler_reads_a_simulated_h100_in_labkit_units(sim: SimFactory) -> None:
    nv, lab = sim()
    s = Sampler(nv, clock=lab.now)
    first = s.poll()
    assert first.get(0, "sm_active_frac").status is Status.PENDING  # GPM needs two samples
    lab.advance(1.0)
    snap = s.poll()
    v = {m: r.value for m, r in s.history.latest(0).items() if r.ok}
    assert v["power_usage_w"] == 70.0  # 70,000 mW from NVML
    assert v["power_limit_w"] == 700.0
    assert v["fb_total_mib"] == 81559
    assert v["gpu_util_frac"] == 0.0 and v["sm_active_frac"] == 0.0
    assert v["clocks_event_reasons"] == 0x1  # GpuIdle
    assert first.get(0, "fan_speed_frac").status is Status.NOT_SUPPORTED  # passive SXM board
    assert snap.interval_s == 1.0
    assert s.gpus == (0,)


def test_sampler_units_case_pinned_power_and_energy(sim: SimFactory) -> None:
    nv, lab = sim()
    lab.pin(0, "power_usage_mw", 4034)
    lab.pin(0, "energy_mj", 123_456_789)
    snap = Sampler(nv, clock=lab.now).poll()
    assert snap.get(0, "power_usage_w").value == pytest.approx(4.034)
    assert snap.get(0, "energy_j").value == pytest.approx(123_456.789)


def test_sampler_sees_busy_but_not_working_on_the_stalled_rank(sim: SimFactory) -> None:
    """shared/cases/observe.md case 10 through NVML: same util.gpu, different SM activity."""
    nv, lab = sim("sim:2xH100-80GB")
    lab.start("collective_stall", 0)
    lab.start("training", 1)
    s = Sampler(nv, clock=lab.now)
    s.run(3, rate_hz=1, sleep=lab.advance)
    stalled, healthy = s.history.latest(0), s.history.latest(1)
    assert stalled["gpu_util_frac"].value == healthy["gpu_util_frac"].value == 1.0
    assert stalled["sm_active_frac"].value == pytest.approx(0.01)
    assert healthy["sm_active_frac"].value == pytest.approx(0.85)
    assert ob.busy_not_working(stalled).on is True
    assert ob.busy_not_working(healthy).on is False
    assert stalled["power_usage_w"].value == pytest.approx(70, abs=1)
    assert healthy["power_usage_w"].value == pytest.approx(650, abs=5)


def test_scenario_reveals_hold_on_the_simulator(sim: SimFactory) -> None:
    """The lesson's "which panel reveals it" table, checked against the simulated GPU."""
    nv, lab = sim()
    s = Sampler(nv, clock=lab.now)
    seen: dict[str, dict[str, ob.Reading]] = {}
    for name in ("tiny_kernel", "collective_stall", "training", "memory_bound", "burn_in"):
        lab.stop(device=0)
        lab.start(name, 0)
        s.run(6, rate_hz=1, sleep=lab.advance)
        seen[name] = s.history.latest(0)
    assert ob.busy_not_working(seen["tiny_kernel"]).on is True
    assert seen["tiny_kernel"]["sm_active_frac"].value == pytest.approx(1 / 132)
    assert ob.busy_not_working(seen["collective_stall"]).on is True
    assert seen["training"]["tensor_active_frac"].value == pytest.approx(0.6)
    assert seen["memory_bound"]["dram_active_frac"].value == pytest.approx(0.9)
    assert seen["memory_bound"]["tensor_active_frac"].value == 0.0
    burn = seen["burn_in"]
    assert ob.throttle(burn).on is True and "SwPowerCap" in ob.throttle(burn).basis
    assert ob.power_frac(burn) == pytest.approx(1.0, abs=0.02)


# --- timing on the virtual clock ---------------------------------------------------------------


def test_sampler_rate_sets_the_tick_interval(sim: SimFactory) -> None:
    nv, lab = sim()
    s = Sampler(nv, clock=lab.now)
    snaps = s.run(9, rate_hz=4, sleep=lab.advance)
    assert np.diff([x.t_s for x in snaps]) == pytest.approx([0.25] * 8)
    assert snaps[-1].interval_s == pytest.approx(0.25)
    assert s.ticks == 9 and s.last_interval_s == pytest.approx(0.25)


def test_gpm_samples_are_at_least_100_ms_apart(sim: SimFactory) -> None:
    nv, lab = sim()
    spy = Spy(nv, lab.now)
    s = Sampler(spy, clock=lab.now)
    s.run(20, rate_hz=10, sleep=lab.advance)
    for _ in range(10):  # direct polls 30 ms apart: GPM must skip some of them
        lab.advance(0.03)
        s.poll()
    times = [t for name, _, t in spy.calls if name == "nvmlGpmSampleGet"]
    assert len(times) >= 20
    assert min(np.diff(times)) >= gs.GPM_MIN_INTERVAL_S - 1e-6
    assert spy.count("nvmlGpmMetricsGet") == len(times) - 1
    assert spy.count("nvmlGpmSampleAlloc") == 2  # two buffers, swapped


def test_gpm_interval_below_100_ms_is_refused(sim: SimFactory) -> None:
    nv, lab = sim()
    with pytest.raises(InputError) as err:
        Sampler(nv, clock=lab.now, gpm_min_interval_s=0.05)
    assert err.value.rule == "at_least"


def test_slow_tier_is_read_every_5_s(sim: SimFactory) -> None:
    nv, lab = sim()
    s = Sampler(nv, clock=lab.now)
    snaps = s.run(12, rate_hz=1, sleep=lab.advance)
    temp_ticks = [x.t_s for x in snaps if x.get(0, "gpu_temp_c") is not None]
    power_ticks = [x.t_s for x in snaps if x.get(0, "power_usage_w") is not None]
    assert temp_ticks == [0.0, 5.0, 10.0]
    assert len(power_ticks) == 12
    assert s.history.latest(0)["gpu_temp_c"].ok  # the last slow reading stays on the panel


def test_history_is_a_bounded_ring_buffer(sim: SimFactory) -> None:
    nv, lab = sim()
    s = Sampler(nv, clock=lab.now, capacity=5)
    size = s.history.nbytes
    s.run(12, rate_hz=1, sleep=lab.advance)
    assert len(s.history) == 5
    assert list(s.history.times()) == [7.0, 8.0, 9.0, 10.0, 11.0]
    assert s.history.nbytes == size
    frame = s.history.frame()
    assert set(frame.timestamp_s) == {7.0, 8.0, 9.0, 10.0, 11.0}
    assert list(frame.columns) == list(ob.FRAME_COLUMNS)
    series = s.history.series(0, ["power_usage_w"], since_s=9.0)
    assert list(series.index) == [9.0, 10.0, 11.0]
    for bad in (0, -1, 2_000_000, 1.5):
        with pytest.raises(InputError):
            ob.History([0], ["power_usage_w"], bad)  # type: ignore[arg-type]


def test_observe_case12_slow_nvml_one_sampler_no_overlap(sim: SimFactory) -> None:
    """8 GPUs x 12 calls at 20 ms each, 10 Hz asked: ticks run back to back, never overlap,
    handles are cached, the actual interval is reported."""
    nv, lab = sim("sim:8xH100-80GB")
    lab.set_call_latency(0.02)
    spy = Spy(nv, lab.now)
    metrics = ["gpu_util_frac", "mem_copy_util_frac", "fb_used_mib", "power_usage_w",
               "energy_j", "sm_clock_mhz", "clocks_event_reasons", "pcie_tx_kb_per_s",
               "pcie_rx_kb_per_s", "gpu_temp_c", "power_limit_w", "ecc_dbe_volatile_count"]
    s = Sampler(spy, metrics=metrics, clock=lab.now)
    handles_at_start = spy.count("nvmlDeviceGetHandleByIndex")
    snaps = s.run(8, rate_hz=10, sleep=lab.advance)
    for a, b in itertools.pairwise(snaps):
        assert b.t_s >= a.t_s + a.duration_s - 1e-9  # never two polls at once
        assert b.interval_s == pytest.approx(max(0.1, a.duration_s))
    assert snaps[1].duration_s > 1.0  # 8 GPUs x >= 9 calls x 20 ms
    assert s.last_interval_s is not None and s.last_interval_s > 1.0
    assert spy.count("nvmlDeviceGetHandleByIndex") == handles_at_start == 8
    slow = sum(1 for x in snaps if x.get(0, "gpu_temp_c") is not None)
    fast = sum(1 for x in snaps if x.get(0, "power_usage_w") is not None)
    assert slow < fast == len(snaps)


# --- per-field failures (shared/cases/observe.md) ------------------------------------------------


def test_observe_case1_no_driver_sampler_has_no_gpus_and_never_raises(sim: SimFactory) -> None:
    nv, lab = sim()
    lab.fail_init("DriverNotLoaded")
    nv.nvmlShutdown()
    s = Sampler(nv, clock=lab.now)
    assert s.gpus == () and s.error == "Uninitialized"
    for _ in range(3):
        assert s.poll().readings == {}
    lab.fail_init(None)


def test_observe_case2_pcie_not_supported_probed_once_other_panels_update(
        sim: SimFactory) -> None:
    nv, lab = sim()
    lab.apply_preset("vgpu")
    spy = Spy(nv, lab.now)
    s = Sampler(spy, clock=lab.now)
    snaps = s.run(3, rate_hz=1, sleep=lab.advance)
    lab.start("training", 0)
    snaps += s.run(3, rate_hz=1, sleep=lab.advance)
    assert spy.count("nvmlDeviceGetPcieThroughput") == 2  # TX and RX, once each
    for snap in snaps:
        assert snap.get(0, "pcie_rx_kb_per_s").status is Status.NOT_SUPPORTED
        assert snap.get(0, "pcie_rx_kb_per_s").reason == "NotSupported"
    assert snaps[0].get(0, "power_usage_w").value == pytest.approx(70)
    assert (snaps[-1].get(0, "power_usage_w").value or 0) > 500  # still updating
    s.reprobe()
    s.poll()
    assert spy.count("nvmlDeviceGetPcieThroughput") == 4  # asked again after a reprobe


def test_observe_case3_consumer_board_fields_na_derived_na(sim: SimFactory) -> None:
    nv, lab = sim()
    lab.apply_preset("consumer")
    s = Sampler(nv, clock=lab.now)
    s.run(2, rate_hz=1, sleep=lab.advance)
    view = s.history.latest(0)
    for m in ("power_usage_w", "power_limit_w", "energy_j", "ecc_dbe_volatile_count",
              "remapped_rows_uncorrectable"):
        assert view[m].status is Status.NOT_SUPPORTED, m
        assert view[m].value is None
    assert ob.power_frac(view) is None  # n/a, never 0
    assert view["gpu_util_frac"].ok and view["sm_clock_mhz"].ok


def test_function_not_found_old_driver_gpm_na_rest_works(sim: SimFactory) -> None:
    nv, lab = sim()
    lab.apply_preset("old_driver")
    s = Sampler(nv, clock=lab.now)
    s.run(2, rate_hz=1, sleep=lab.advance)
    view = s.history.latest(0)
    assert view["sm_active_frac"].status is Status.FUNCTION_NOT_FOUND
    assert view["sm_active_frac"].reason == "FunctionNotFound"
    assert view["gpu_temp_c"].ok and view["gpu_util_frac"].ok
    assert ob.busy_not_working(view).basis == "power"  # falls back when GPM is missing


def test_gpm_not_on_pre_hopper_boards(sim: SimFactory) -> None:
    nv, lab = sim("sim:A100-80GB")
    snap = Sampler(nv, clock=lab.now).poll()
    reading = snap.get(0, "sm_active_frac")
    assert (reading.status, reading.reason) == (Status.NOT_SUPPORTED, "GpmNotSupported")


def test_field_values_fail_one_entry_at_a_time(sim: SimFactory) -> None:
    nv, lab = sim()
    lab.inject("nvmlDeviceGetFieldValues", "NotSupported", field=nv.NVML_FI_DEV_MEMORY_TEMP)
    snap = Sampler(nv, clock=lab.now).poll()
    assert snap.get(0, "memory_temp_c").status is Status.NOT_SUPPORTED
    assert snap.get(0, "pcie_replay_count").ok


def test_transient_errors_are_missing_once_then_asked_again(sim: SimFactory) -> None:
    nv, lab = sim()
    lab.inject("nvmlDeviceGetPowerUsage", "Unknown", count=1)
    s = Sampler(nv, clock=lab.now)
    first = s.poll()
    assert (first.get(0, "power_usage_w").status, first.get(0, "power_usage_w").reason) == (
        Status.ERROR, "Unknown")
    lab.advance(1)
    assert s.poll().get(0, "power_usage_w").ok


def test_no_permission_is_its_own_status(sim: SimFactory) -> None:
    nv, lab = sim()
    lab.inject("nvmlDeviceGetTotalEccErrors", "NoPermission")
    snap = Sampler(nv, clock=lab.now).poll()
    assert snap.get(0, "ecc_dbe_volatile_count").status is Status.NO_PERMISSION


def test_mig_enabled_gpu_util_not_supported(sim: SimFactory) -> None:
    nv, lab = sim()
    h = nv.nvmlDeviceGetHandleByIndex(0)
    nv.nvmlDeviceSetMigMode(h, 1)
    snap = Sampler(nv, clock=lab.now).poll()
    assert snap.get(0, "gpu_util_frac").status is Status.NOT_SUPPORTED
    assert snap.get(0, "power_usage_w").ok


def test_observe_case8_lost_gpu_flagged_others_keep_updating(sim: SimFactory) -> None:
    nv, lab = sim("sim:4xH100-80GB")
    for g in range(4):
        lab.start("training", g)
    spy = Spy(nv, lab.now)
    s = Sampler(spy, clock=lab.now)
    lab.xid(2, 79, at_s=30)
    s.run(30, rate_hz=1, sleep=lab.advance)  # t = 0 .. 29
    lost_handle = gs._address(s.devices[2].handle)
    s.run(4, rate_hz=1, sleep=lab.advance)  # t = 30 .. 33: GPU 2 is gone
    views = {g: s.history.latest(g) for g in range(4)}
    assert {r.status for m, r in views[2].items() if m != "xid"} == {Status.GPU_LOST}
    assert views[2]["xid"].value == 79
    assert [a.key for a in ob.alerts(views[2])] == ["gpu_lost", "xid"]
    for g in (0, 1, 3):
        assert views[g]["power_usage_w"].ok and ob.alerts(views[g]) == ()
    assert ob.healthy_gpus(views) == (3, 4)
    later = [args for _, args, t in spy.calls if t >= 30 and args
             and gs._address(args[0]) == lost_handle]
    assert len(later) <= 1  # the call that found it lost; the dead handle is not used again
    lab.stop(device=2)
    lab.reset_gpu(2)
    s.run(7, rate_hz=1, sleep=lab.advance)  # re-probed by index after REPROBE_S
    assert s.history.latest(2)["power_usage_w"].ok


def test_non_nvml_errors_are_bugs_and_propagate(sim: SimFactory) -> None:
    nv, lab = sim()

    class Broken(Spy):
        def __getattr__(self, name: str) -> Any:
            if name == "nvmlDeviceGetPowerUsage":
                raise RuntimeError("bug")
            return super().__getattr__(name)

    s = Sampler(Broken(nv, lab.now), clock=lab.now)
    with pytest.raises(RuntimeError, match="bug"):
        s.poll()


def test_sampler_rejects_bad_arguments(sim: SimFactory) -> None:
    nv, lab = sim()
    with pytest.raises(InputError) as err:
        Sampler(nv, metrics=["gpu_load"])
    assert err.value.rule == "choice"
    s = Sampler(nv, clock=lab.now)
    for rate, rule in ((0, "positive"), (11, "at_most"), (float("nan"), "finite")):
        with pytest.raises(InputError) as err:
            s.set_rate(rate)
        assert err.value.rule == rule
    with pytest.raises(InputError):
        s.run(-1)


# --- threads -------------------------------------------------------------------------------------


def _wait(cond: Callable[[], bool], timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_background_thread_is_thread_safe_and_stops(sim: SimFactory) -> None:
    nv, lab = sim(clock="wall")
    lab.start("training", 0)
    s = Sampler(nv, capacity=50)
    seen: list[int] = []
    s.start(10, on_snapshot=lambda snap: seen.append(len(s.history.frame())))
    assert s.running
    for _ in range(30):  # the page reads while the sampler writes, and polls itself too
        s.history.latest(0)
        s.history.frame()
        s.poll()
    _wait(lambda: len(seen) >= 5)
    s.stop()
    assert not s.running and s.stopped_reason == "stopped"
    assert s.callback_error is None
    times = s.history.times()
    assert np.all(np.diff(times) >= 0) and len(times) <= 50
    assert not any(th.name == "labkit-observe-sampler" and th.is_alive()
                   for th in threading.enumerate())


def test_background_thread_stops_by_itself_after_max_run(sim: SimFactory) -> None:
    nv, _ = sim(clock="wall")
    s = Sampler(nv)
    s.start(10, max_run_s=0.3)
    _wait(lambda: not s.running)
    assert s.stopped_reason == "max_run" and s.ticks >= 1
    s.start(10)  # can start again
    assert s.running
    gs.stop_all()
    assert not s.running


def test_a_failing_callback_stops_the_thread_and_is_kept(sim: SimFactory) -> None:
    nv, _ = sim(clock="wall")
    s = Sampler(nv)

    def boom(_snap: ob.Snapshot) -> None:
        raise ValueError("widget broke")

    s.start(10, on_snapshot=boom)
    _wait(lambda: not s.running)
    assert s.stopped_reason == "callback_error"
    assert str(s.callback_error) == "widget broke"
    s.close()
