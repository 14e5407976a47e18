"""labkit.observe, pure parts: catalog, derived signals, the wall exercise, readers, replay."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from labkit import observe as ob
from labkit.observe import Reading, Status
from labkit.validate import InputError

FIXTURES = Path(__file__).parent / "fixtures" / "observe"


def _text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def _view(**values: float | None) -> dict[str, Reading]:
    return {k: Reading(v) if v is not None else Reading.missing(Status.NOT_SUPPORTED,
                                                                 "NotSupported")
            for k, v in values.items()}


# --- catalog -----------------------------------------------------------------------------------


def test_catalog_names_the_dcgm_fields_operators_know() -> None:
    by_field = {m.dcgm_field: m for m in ob.CATALOG.values() if m.dcgm_field}
    for field, dcgm_id in [("DCGM_FI_DEV_GPU_UTIL", 203), ("DCGM_FI_PROF_SM_ACTIVE", 1002),
                           ("DCGM_FI_PROF_SM_OCCUPANCY", 1003),
                           ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", 1004),
                           ("DCGM_FI_PROF_DRAM_ACTIVE", 1005), ("DCGM_FI_DEV_POWER_USAGE", 155),
                           ("DCGM_FI_DEV_XID_ERRORS", 230)]:
        assert by_field[field].dcgm_id == dcgm_id


def test_catalog_units_follow_nvml() -> None:
    c = ob.CATALOG
    assert (c["power_usage_w"].nvml_unit, c["power_usage_w"].nvml_scale) == ("mW", 1e-3)
    assert (c["energy_j"].nvml_unit, c["energy_j"].nvml_scale) == ("mJ", 1e-3)
    assert (c["pcie_rx_kb_per_s"].nvml_unit, c["pcie_rx_kb_per_s"].unit) == ("KB/s", "KB/s")
    assert c["sm_active_frac"].nvml_unit == "%" and c["sm_active_frac"].dcgm_unit == "ratio"
    assert c["fb_used_mib"].nvml_scale == 1 / 2**20


def test_catalog_every_metric_has_a_panel_meaning_and_lie() -> None:
    in_panels = {m for metrics in ob.PANELS.values() for m in metrics}
    for key, m in ob.CATALOG.items():
        assert key == m.key and m.meaning and m.lies_when
        assert m.group in ("activity", "memory", "power", "thermal", "clocks", "pcie", "errors")
        assert key in in_panels or key == "gr_engine_active_frac", key
        assert m.tier in ("fast", "slow", "gpm", "event")
        suffix_ok = key.endswith(("_frac", "_w", "_j", "_mib", "_c", "_mhz", "_kb_per_s",
                                  "_count", "_reasons", "xid", "_pending", "_failure",
                                  "_uncorrectable"))
        assert suffix_ok, key


def test_reference_table_lists_every_metric_with_its_three_names() -> None:
    table = ob.reference_table()
    assert list(table.index) == list(ob.CATALOG)
    row = table.loc["gpu_util_frac"]
    assert (row["dcgm_field"], row["smi_field"]) == ("DCGM_FI_DEV_GPU_UTIL", "utilization.gpu")
    assert table.loc["sm_active_frac", "smi_field"] == ""  # nvidia-smi has no SM activity


# --- derived signals (shared/cases/observe.md case 10) -----------------------------------------


def test_observe_case10_busy_but_idle_fires_only_for_the_stalled_rank() -> None:
    stalled = _view(gpu_util_frac=1.0, sm_active_frac=0.01, tensor_active_frac=0.0,
                    power_usage_w=70, power_limit_w=700)
    healthy = _view(gpu_util_frac=1.0, sm_active_frac=0.85, tensor_active_frac=0.6,
                    power_usage_w=650, power_limit_w=700)
    assert stalled["gpu_util_frac"] == healthy["gpu_util_frac"]  # the util gauge is identical
    assert ob.busy_not_working(stalled).on is True
    assert ob.busy_not_working(stalled).basis == "sm_active"
    assert ob.busy_not_working(healthy).on is False


def test_busy_not_working_falls_back_to_power_without_sm_activity() -> None:
    stall = _view(gpu_util_frac=1.0, power_usage_w=70, power_limit_w=700)
    busy = ob.busy_not_working(stall)
    assert (busy.on, busy.basis, busy.value) == (True, "power", pytest.approx(0.1))
    assert ob.busy_not_working(_view(gpu_util_frac=1.0, power_usage_w=650,
                                     power_limit_w=700)).on is False


def test_observe_case3_derived_values_of_na_are_na_never_zero() -> None:
    consumer = _view(gpu_util_frac=0.97, power_usage_w=None, power_limit_w=None)
    assert ob.power_frac(consumer) is None
    busy = ob.busy_not_working(consumer)
    assert busy.on is None and "sm_active_frac" in busy.missing and "power_frac" in busy.missing
    assert ob.busy_not_working({}).on is None
    assert ob.throttle({}).on is None
    assert ob.alerts(_view(xid=None, ecc_dbe_volatile_count=None)) == ()


def test_power_and_clock_fractions() -> None:
    view = _view(power_usage_w=350, power_limit_w=700, sm_clock_mhz=1485, max_sm_clock_mhz=1980)
    assert ob.power_frac(view) == 0.5
    assert ob.sm_clock_frac(view) == 0.75
    assert ob.power_frac(_view(power_usage_w=10, power_limit_w=0)) is None


def test_decode_clocks_event_reasons_names_every_bit() -> None:
    assert ob.decode_clocks_event_reasons(0) == ()
    assert ob.decode_clocks_event_reasons(0x4) == ("SwPowerCap",)
    assert ob.decode_clocks_event_reasons(0x1 | 0x40) == ("GpuIdle", "HwThermalSlowdown")
    assert ob.decode_clocks_event_reasons(4.0) == ("SwPowerCap",)
    assert ob.decode_clocks_event_reasons(0x800) == ("0x800",)
    for bad in (-1, 1.5, "4"):
        with pytest.raises(ValueError):
            ob.decode_clocks_event_reasons(bad)  # type: ignore[arg-type]


@given(st.integers(min_value=0, max_value=2**16 - 1))
def test_decode_clocks_event_reasons_one_name_per_set_bit(mask: int) -> None:
    assert len(ob.decode_clocks_event_reasons(mask)) == bin(mask).count("1")


def test_throttle_ignores_idle_and_flags_power_cap() -> None:
    idle = _view(clocks_event_reasons=0x1, sm_clock_mhz=345, max_sm_clock_mhz=1980)
    capped = _view(clocks_event_reasons=0x4, sm_clock_mhz=1770, max_sm_clock_mhz=1980)
    assert ob.throttle(idle).on is False
    sig = ob.throttle(capped)
    assert (sig.on, sig.basis) == (True, "SwPowerCap")
    assert sig.value == pytest.approx(1770 / 1980)


def test_alerts_from_error_counters() -> None:
    keys = [a.key for a in ob.alerts(_view(xid=79, ecc_dbe_volatile_count=2,
                                           remapped_rows_pending=1, row_remap_failure=0,
                                           pcie_replay_count=0))]
    assert keys == ["xid", "ecc_dbe", "remap_pending"]
    assert ob.alerts(_view(xid=13))[0].severity == "warning"
    assert ob.alerts(_view(xid=79))[0].severity == "critical"
    lost = {"power_usage_w": Reading.missing(Status.GPU_LOST, "GpuIsLost"), "xid": Reading(79)}
    assert [a.key for a in ob.alerts(lost)] == ["gpu_lost", "xid"]


# --- the wall -------------------------------------------------------------------------------------


def test_check_wall_accepts_a_good_wall() -> None:
    assert ob.check_wall("night_oncall", ["errors", "temperature", "power"]).ok
    assert ob.check_wall("slow_training", ["sm_active", "clocks", "tensor_active"]).ok
    assert ob.check_wall("shared_class", ["memory", "sm_active"]).ok


def test_check_wall_names_missing_and_misleading_panels() -> None:
    verdict = ob.check_wall("slow_training", ["gpu_util", "power"])
    assert not verdict.ok
    assert verdict.missing == ("sm_active", "clocks")
    assert verdict.misleading == ("gpu_util",)
    assert ob.check_wall("night_oncall", ["errors", "errors", "gpu_util"]).misleading == (
        "gpu_util",)


@pytest.mark.parametrize(("situation", "panels", "field", "rule"), [
    ("night_oncall", ["errors", "power", "memory", "clocks"], "panels", "at_most"),
    ("night_oncall", ["coffee"], "panels", "choice"),
    ("weekend", ["errors"], "situation", "choice"),
])
def test_check_wall_rejects_bad_choices(situation: str, panels: list[str], field: str,
                                        rule: str) -> None:
    with pytest.raises(InputError) as err:
        ob.check_wall(situation, panels)
    assert (err.value.field, err.value.rule) == (field, rule)


def test_every_situation_has_a_passing_wall_of_three() -> None:
    for key, sit in ob.SITUATIONS.items():
        assert len(sit.essential) <= ob.WALL_MAX_PANELS
        assert ob.check_wall(key, sit.essential).ok
        assert set(sit.essential).isdisjoint(sit.misleading)


# --- replay --------------------------------------------------------------------------------


def _frame(rows: list[tuple[float, int, str, float, str]]) -> pd.DataFrame:
    """A tidy frame written out by hand: (t, gpu, metric, value or nan, reason)."""
    return pd.DataFrame(
        [(t, g, m, v, ob.CATALOG[m].unit, "ok" if r == "" else "not_available", r)
         for t, g, m, v, r in rows], columns=list(ob.FRAME_COLUMNS))


#: Power of two GPUs over three ticks, GPU 1 printed 11 ms after GPU 0, one [N/A].
_POWER = _frame([(0.0, 0, "power_usage_w", 385.12, ""), (0.011, 1, "power_usage_w", 92.40, ""),
                 (1.004, 0, "power_usage_w", 399.87, ""),
                 (1.013, 1, "power_usage_w", math.nan, "[N/A]"),
                 (2.008, 0, "power_usage_w", 398.50, ""),
                 (2.008, 1, "power_usage_w", 93.05, "")])


def test_trace_view_is_the_latest_reading_at_or_before_t() -> None:
    trace = ob.Trace(_POWER)
    assert trace.gpus == (0, 1)
    assert trace.view(0, -1.0) == {}
    assert trace.view(0, 0.5)["power_usage_w"].value == 385.12
    assert trace.view(0, 1.004)["power_usage_w"].value == 399.87
    assert trace.view(1, 1.1)["power_usage_w"].status is Status.NOT_AVAILABLE
    assert trace.duration_s == pytest.approx(2.008)
    series = trace.series(1, "power_usage_w")
    assert np.isnan(series.iloc[1]) and series.iloc[2] == 93.05
    assert trace.series(0, "nothing").empty
    with pytest.raises(ValueError, match="empty"):
        ob.Trace(_POWER.iloc[0:0])


def _latest_by_brute_force(rows: list[tuple[float, int, str, float, str, str]], gpu: int,
                           t_s: float) -> dict[str, Reading]:
    """The replay rule written out: per metric, the last row (in file order among equal
    times) at or before t_s; ok without a finite value is missing ("empty" if no reason)."""
    out: dict[str, tuple[float, int, Reading]] = {}
    for k, (t, g, m, v, s, r) in enumerate(rows):
        if g != gpu or t > t_s:
            continue
        if s != "ok" or math.isfinite(v):
            reading = Reading(v if math.isfinite(v) else None, Status(s), r or None)
        else:
            reading = Reading.missing(Status.NOT_AVAILABLE, r or "empty")
        if m not in out or (t, k) >= out[m][:2]:
            out[m] = (t, k, reading)
    return {m: item[2] for m, item in out.items()}


@given(st.lists(st.tuples(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.5]), st.sampled_from([0, 1, 3]),
                          st.sampled_from(["power_usage_w", "gpu_util_frac", "sm_clock_mhz"]),
                          st.sampled_from([1.5, 0.0, math.nan, math.inf]),
                          st.sampled_from(["ok", "not_available", "gpu_lost"]),
                          st.sampled_from(["", "[N/A]"])), min_size=1, max_size=40),
       st.booleans(), st.sampled_from([-1.0, 0.0, 0.7, 2.0, 9.0]))
def test_trace_view_matches_brute_force(rows: list[tuple[float, int, str, float, str, str]],
                                        categorical: bool, t_s: float) -> None:
    """Any row order, text columns as str or categoricals (the large-log readers), inf and
    NaN values: view() and series() give what the rule above gives."""
    frame = pd.DataFrame([(t, g, m, v, "", s, r) for t, g, m, v, s, r in rows],
                         columns=list(ob.FRAME_COLUMNS))
    if categorical:
        frame = frame.astype({c: "category" for c in ("metric", "unit", "status", "reason")})
    trace = ob.Trace(frame)
    assert trace.gpus == tuple(sorted({g for _, g, *_ in rows}))
    assert trace.metrics == tuple(sorted({m for _, _, m, *_ in rows}))
    for gpu in trace.gpus:
        assert trace.view(gpu, t_s) == _latest_by_brute_force(rows, gpu, t_s)
    # series: in time order (stable among equal times), NaN where there is no finite value
    g, m = rows[0][1], rows[0][2]
    mine = sorted((t, k, v) for k, (t, gg, mm, v, _, _) in enumerate(rows) if (gg, mm) == (g, m))
    series = trace.series(g, m)
    assert list(series.index) == [t for t, _, _ in mine]
    expected = [v if math.isfinite(v) else math.nan for _, _, v in mine]
    np.testing.assert_array_equal(series.to_numpy(), np.asarray(expected, dtype=float))


@pytest.mark.parametrize("status", ["broken", ""])
def test_trace_reads_an_unknown_status_as_not_available(status: str) -> None:
    # issue 16: a reader's blank status category ('') made Trace raise in the upload callback
    bad = _POWER.assign(status=pd.Categorical(["ok", "ok", status, "ok", "ok", "ok"],
                                              categories=["ok", status]))
    trace = ob.Trace(bad)
    got = trace.view(int(_POWER["gpu"].iloc[2]), float(_POWER["timestamp_s"].iloc[2]))
    assert got["power_usage_w"].status is Status.NOT_AVAILABLE


def test_trace_summary_means_per_segment() -> None:
    util = _frame([(0.0, 0, "gpu_util_frac", 0.45, ""), (1.001, 0, "gpu_util_frac", 0.47, ""),
                   (2.001, 0, "gpu_util_frac", 0.0, "")])
    means = ob.Trace(util).summary(0, ["gpu_util_frac"], [("busy", 0, 1.5), ("idle", 1.5, 3)])
    assert means.loc["busy", "gpu_util_frac"] == pytest.approx(0.46)
    assert means.loc["idle", "gpu_util_frac"] == 0.0
    with pytest.raises(ValueError, match="end must be > start"):
        ob.Trace(util).summary(0, ["gpu_util_frac"], [("x", 2, 1)])


def test_scenario_reveals_names_known_panels() -> None:
    for panels in ob.SCENARIO_REVEALS.values():
        assert set(panels) <= set(ob.PANELS)


@given(st.integers(min_value=1, max_value=20), st.integers(min_value=0, max_value=60))
def test_history_keeps_exactly_the_latest_ticks(capacity: int, ticks: int) -> None:
    h = ob.History([0], ["power_usage_w"], capacity)
    for k in range(ticks):
        h.append(ob.Snapshot(float(k), {(0, "power_usage_w"): Reading(float(k))}))
    kept = list(range(max(0, ticks - capacity), ticks))
    assert list(h.times()) == [float(k) for k in kept]
    assert list(h.series(0, ["power_usage_w"])["power_usage_w"]) == [float(k) for k in kept]
    if ticks:
        assert h.latest(0)["power_usage_w"].value == ticks - 1


# --- the layer: labkit.observe is pure -----------------------------------------------------------

_IMPURE = ("threading", "time", "ctypes", "os", "io.open", "pathlib", "subprocess", "socket",
           "pynvml", "ipywidgets", "plotly", "IPython", "prometheus_client", "xml", "requests",
           "weakref", "atexit", "labkit.data", "labkit.gpu", "labkit.ui", "labkit.serve",
           "labkit.hub")


def test_observe_package_imports_nothing_impure_or_from_a_higher_layer() -> None:
    """Every module of labkit/observe/ (parsed, not grepped): no threads, clocks, files,
    environment, NVML, widgets or parsers of the data layer."""
    import ast

    package = Path(ob.__file__).parent
    for path in sorted(package.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert not any(name == bad or name.startswith(bad + ".") for bad in _IMPURE), \
                    f"{path.name} imports {name}"
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "open":
                raise AssertionError(f"{path.name} opens a file")


def test_moved_names_say_where_they_went() -> None:
    with pytest.raises(AttributeError, match=r"labkit\.gpu\.sampler"):
        ob.Sampler  # noqa: B018
    with pytest.raises(AttributeError, match=r"labkit\.data\.observe"):
        ob.read_dcgm_exporter  # noqa: B018
