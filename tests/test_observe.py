"""labkit.observe, pure parts: catalog, derived signals, the wall exercise, readers, replay."""

from __future__ import annotations

import math
from collections.abc import Callable
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


# --- nvidia-smi CSV ----------------------------------------------------------------------------


def _value(log: ob.LogImport, t: float, gpu: int, metric: str) -> float:
    f = log.frame
    row = f[(f.timestamp_s == t) & (f.gpu == gpu) & (f.metric == metric)]
    assert len(row) == 1, (t, gpu, metric)
    return float(row["value"].iloc[0])


def test_smi_units_in_values_several_gpus_na_and_not_supported() -> None:
    log = ob.parse_nvidia_smi_csv(_text("smi_units_multi_gpu.csv"), source="units.csv")
    assert (log.format, log.rows, log.unparsed_count) == ("nvidia-smi-csv", 6, 0)
    assert set(log.frame.gpu) == {0, 1}
    assert log.start is not None and log.start.isoformat() == "2024-06-01T11:27:05.177000"
    assert _value(log, 0.0, 0, "gpu_util_frac") == 1.0
    assert _value(log, 0.0, 0, "power_usage_w") == 385.12
    assert _value(log, 0.011, 1, "power_usage_w") == 92.40  # GPU 1 printed 11 ms later
    assert _value(log, 1.004, 0, "clocks_event_reasons") == 4
    na = log.frame[(log.frame.gpu == 1) & (log.frame.metric == "power_usage_w")
                   & (log.frame.status != "ok")]
    assert list(na.reason) == ["[N/A]"] and list(na.status) == ["not_available"]
    assert math.isnan(na["value"].iloc[0])
    fan = log.frame[log.frame.metric == "fan_speed_frac"]
    assert set(fan.status) == {"not_supported"}
    assert log.devices[1]["pci.bus_id"] == "00000000:8B:00.0"


def test_smi_nounits_takes_units_from_the_header() -> None:
    log = ob.parse_nvidia_smi_csv(_text("smi_nounits.csv"))
    assert _value(log, 0.0, 0, "gpu_util_frac") == pytest.approx(0.45)
    assert _value(log, 0.0, 0, "mem_copy_util_frac") == pytest.approx(0.12)
    assert _value(log, 2.0, 0, "power_usage_w") == 71.0
    assert _value(log, 1.001, 0, "fb_used_mib") == 10240


def test_smi_noheader_needs_the_field_list_and_names_line_1() -> None:
    text = _text("smi_noheader_nounits.csv")
    with pytest.raises(ValueError, match=r"noheader\.csv, line 1: no nvidia-smi CSV header"):
        ob.parse_nvidia_smi_csv(text, source="noheader.csv")
    log = ob.parse_nvidia_smi_csv(text, fields="timestamp,index,utilization.gpu,power.draw,"
                                               "clocks.sm")
    assert log.rows == 4 and log.unparsed_count == 0
    assert _value(log, 0.0, 0, "power_usage_w") == 700.0  # W from nvidia-smi's own unit
    assert _value(log, 0.011, 1, "power_usage_w") == pytest.approx(70.1)


def test_smi_consumer_board_without_index_column() -> None:
    log = ob.parse_nvidia_smi_csv(_text("smi_consumer.csv"))
    assert set(log.frame.gpu) == {0}
    assert "pstate" in log.ignored_fields
    power = log.frame[log.frame.metric == "power_usage_w"]
    assert set(power.status) == {"not_available"}
    ecc = log.frame[log.frame.metric == "ecc_dbe_volatile_count"]
    assert set(ecc.status) == {"not_supported"}
    assert _value(log, 0.0, 0, "fan_speed_frac") == pytest.approx(0.45)
    # the older clocks_throttle_reasons name maps to the same metric
    assert "clocks_event_reasons" in set(log.frame.metric)


def test_smi_any_field_subset_and_unknown_numeric_fields_keep_their_name() -> None:
    text = ("timestamp, pcie.link.gen.current, utilization.gpu [%]\n"
            "2024/06/01 11:27:05.177, 4, 3 %\n")
    log = ob.parse_nvidia_smi_csv(text)
    assert set(log.frame.metric) == {"pcie.link.gen.current", "gpu_util_frac"}


def test_smi_without_timestamp_numbers_rows_by_interval() -> None:
    text = "# interval_s: 0.5\nindex, utilization.gpu [%]\n0, 10 %\n0, 20 %\n0, 30 %\n"
    log = ob.parse_nvidia_smi_csv(text)
    assert list(log.frame.timestamp_s) == [0.0, 0.5, 1.0]
    assert log.start is None and log.metadata["interval_s"] == "0.5"


def test_smi_repeated_header_of_concatenated_runs_is_skipped() -> None:
    text = ("timestamp, utilization.gpu [%]\n2024/06/01 10:00:00.000, 1 %\n"
            "timestamp, utilization.gpu [%]\n2024/06/01 10:00:01.000, 2 %\n")
    log = ob.parse_nvidia_smi_csv(text)
    assert log.rows == 2 and log.unparsed_count == 0


def test_smi_other_timestamp_formats() -> None:
    for stamp in ("2024/06/01 10:00:00", "2024-06-01 10:00:00.250", "Sat Jun  1 10:00:00 2024"):
        text = f"timestamp, utilization.gpu [%]\n{stamp}, 5 %\n"
        assert ob.parse_nvidia_smi_csv(text).start is not None


def test_smi_garbage_rows_are_counted_with_line_numbers_never_dropped() -> None:
    text = ("timestamp, index, utilization.gpu [%], power.draw [W]\n"
            "2024/06/01 10:00:00.000, 0, 50 %, 100.00 W\n"
            "2024/06/01 10:00:01.000, 0, 5O %, 100.00 W\n"      # letter O: line 3
            "2024/06/01 10:00:02.000, 0, 50 %\n"                # a cell short: line 4
            "2024/06/01 10:00:03.000, 0, 50 %, 100.00 MHz\n"    # wrong unit: line 5
            "2024/06/01 10:00:04.000, 0, 50 %, 100.00 W\n"
            "2024/13/01 10:00:05.000, 0, 50 %, 100.00 W\n"      # bad date: line 7
            "2024/06/01 10:00:06.000, 0, 50 %, 100.00 W\n"
            "2024/06/01 10:00:07.000, 0, 50 %, 100.00 W\n"
            "2024/06/01 10:00:08.000, 0, 50 %, 100.00 W\n"
            "2024/06/01 10:00:09.000, 0, 50 %, 100.00 W\n")
    log = ob.parse_nvidia_smi_csv(text, source="mixed.csv")
    assert [u.line for u in log.unparsed] == [3, 4, 5, 7]
    assert log.rows == 10 and log.unparsed_count == 4
    assert "not a number" in log.unparsed[0].reason
    assert "3 cells" in log.unparsed[1].reason
    assert "unit" in log.unparsed[2].reason
    assert "timestamp" in log.unparsed[3].reason
    with pytest.raises(ValueError, match=r"^mixed\.csv, line 3: utilization\.gpu"):
        ob.parse_nvidia_smi_csv(text, source="mixed.csv", strict=True)


@pytest.mark.parametrize(("text", "match"), [
    ("", r"f\.csv, line 1: no data"),
    ("# source: x\n\n", r"f\.csv, line 2: no data"),
    ("hello world\nthis is not a log\n", r"f\.csv, line 1: no nvidia-smi CSV header"),
    ("timestamp, utilization.gpu [%]\n", r"f\.csv: no data rows"),
    ("timestamp, utilization.gpu [%]\nfoo, bar\nbaz, qux\n", r"f\.csv, line 2: 2 of 2"),
    ("timestamp, timestamp\n2024/06/01 10:00:00, 2024/06/01 10:00:00\n", r"twice"),
    ("timestamp, utilization gpu %\n1, 2\n", r"f\.csv, line 1"),
])
def test_smi_bad_files_name_file_and_line(text: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ob.parse_nvidia_smi_csv(text, source="f.csv")


def test_smi_too_many_lines_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ob, "MAX_LOG_LINES", 3)
    with pytest.raises(ValueError, match="more than 3"):
        ob.parse_nvidia_smi_csv("timestamp, utilization.gpu [%]\n" + "x, 1 %\n" * 5)


# --- dcgm-exporter -----------------------------------------------------------------------------


def test_dcgm_exporter_scrape_two_gpus_units_and_blank() -> None:
    log = ob.read_dcgm_exporter(_text("dcgm_two_gpus.prom"), source="scrape.prom")
    assert (log.format, log.rows, log.unparsed_count) == ("dcgm-exporter", 16, 0)
    assert _value(log, 0.0, 0, "power_usage_w") == 71.4  # W already: no division
    assert _value(log, 0.0, 0, "energy_j") == pytest.approx(123_456.789)  # mJ -> J
    assert _value(log, 0.0, 1, "sm_active_frac") == 0.85  # DCGM ratios stay 0-1
    assert _value(log, 0.0, 0, "gpu_util_frac") == 1.0  # DEV_GPU_UTIL is percent
    blank = log.frame[(log.frame.gpu == 0) & (log.frame.metric == "memory_temp_c")]
    assert blank.status.iloc[0] == "not_supported"
    assert "9223372036854775794" in blank.reason.iloc[0]
    assert math.isnan(blank["value"].iloc[0])
    assert "DCGM_FI_DEV_ENC_UTIL" in set(log.frame.metric)  # unknown fields keep their name
    assert log.devices[1]["UUID"].endswith("0001")
    assert log.devices[0]["modelName"] == "NVIDIA H100 80GB HBM3"


def test_dcgm_concatenated_scrapes_become_a_time_series() -> None:
    one = 'DCGM_FI_DEV_GPU_UTIL{gpu="0"} 10\nDCGM_FI_PROF_SM_ACTIVE{gpu="0"} 0.5\n'
    log = ob.read_dcgm_exporter(one * 3, interval_s=2)
    assert sorted(set(log.frame.timestamp_s)) == [0.0, 2.0, 4.0]
    default = ob.read_dcgm_exporter(one * 2)
    assert sorted(set(default.frame.timestamp_s)) == [0.0, 30.0]  # dcgm-exporter's 30 s
    meta = ob.read_dcgm_exporter("# interval_s: 5\n" + one * 2)
    assert sorted(set(meta.frame.timestamp_s)) == [0.0, 5.0]


def test_dcgm_sample_timestamps_are_used() -> None:
    text = ('DCGM_FI_DEV_GPU_UTIL{gpu="0"} 10 1717236425000\n'
            'DCGM_FI_DEV_GPU_UTIL{gpu="0"} 20 1717236426500\n')
    log = ob.read_dcgm_exporter(text)
    assert list(log.frame.timestamp_s) == [0.0, 1.5]
    assert log.start is not None
    with pytest.raises(ValueError, match="all or none"):
        ob.read_dcgm_exporter(text + 'DCGM_FI_DEV_GPU_UTIL{gpu="0"} 30\n')


def test_dcgm_label_values_with_escapes_and_commas() -> None:
    text = 'DCGM_FI_DEV_GPU_UTIL{gpu="0",modelName="A \\"quoted\\", name"} 7\n'
    log = ob.read_dcgm_exporter(text)
    assert log.devices[0]["modelName"] == 'A "quoted", name'


def test_dcgm_bad_lines_counted_and_strict_names_the_line() -> None:
    text = ('# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n'
            'DCGM_FI_DEV_GPU_UTIL{gpu="0"} 10\n'
            'DCGM_FI_DEV_GPU_UTIL{gpu="1" 20\n'          # line 3: unclosed labels
            'DCGM_FI_DEV_POWER_USAGE{UUID="GPU-x"} 70\n'  # line 4: no gpu label
            'DCGM_FI_DEV_POWER_USAGE{gpu="0"} watts\n'    # line 5: not a number
            'DCGM_FI_DEV_POWER_USAGE{gpu="0"} 70\n'
            'DCGM_FI_DEV_SM_CLOCK{gpu="0"} 1980\n'
            'DCGM_FI_DEV_GPU_TEMP{gpu="0"} 40\n')
    log = ob.read_dcgm_exporter(text, source="s.prom")
    assert [u.line for u in log.unparsed] == [3, 4, 5]
    assert "no gpu label" in log.unparsed[1].reason
    with pytest.raises(ValueError, match=r"^s\.prom, line 3: "):
        ob.read_dcgm_exporter(text, source="s.prom", strict=True)


@pytest.mark.parametrize(("text", "match"), [
    ("# only comments\n", r"s\.prom: no data rows"),
    ("garbage line\nmore garbage\n", r"s\.prom, line 1: 2 of 2"),
])
def test_dcgm_bad_files(text: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ob.read_dcgm_exporter(text, source="s.prom")


def test_observe_units_case_power_energy_and_dcgm_watts() -> None:
    """shared/cases/observe.md, "power shown 1000x too large": 4034 mW -> 4.0 W,
    123,456,789 mJ -> 123.5 kJ, dcgm-exporter 71.4 W -> 71.4 W."""
    c = ob.CATALOG
    assert 4034 * c["power_usage_w"].nvml_scale == pytest.approx(4.034)
    assert 123_456_789 * c["energy_j"].nvml_scale / 1000 == pytest.approx(123.456789)
    assert 71.4 * c["power_usage_w"].dcgm_scale == 71.4


# --- detection, tidy export, replay --------------------------------------------------------------


def test_detect_format() -> None:
    assert ob.detect_format(_text("dcgm_two_gpus.prom")) == "dcgm-exporter"
    assert ob.detect_format(_text("smi_nounits.csv")) == "nvidia-smi-csv"
    assert ob.detect_format(_text("smi_noheader_nounits.csv")) == "nvidia-smi-csv"
    with pytest.raises(ValueError, match="unknown log layout"):
        ob.detect_format("lorem ipsum\n")
    with pytest.raises(ValueError, match=r"up\.txt, line 1: unknown log layout"):
        ob.read_log("lorem ipsum\n", source="up.txt")


def test_export_csv_round_trips_through_the_reader() -> None:
    log = ob.parse_nvidia_smi_csv(_text("smi_units_multi_gpu.csv"))
    text = ob.export_csv(log.frame, source="test, A100", as_of="2024-06-01",
                         extra={"rate_hz": "1"})
    assert text.startswith("# source: test, A100\n# as_of: 2024-06-01\n# rate_hz: 1\n")
    again = ob.read_log(text, source="x.csv")
    assert again.format == "labkit-tidy"
    pd.testing.assert_frame_equal(again.frame.reset_index(drop=True),
                                  log.frame.reset_index(drop=True), check_dtype=False)
    assert again.metadata["as_of"] == "2024-06-01"


def test_export_csv_rejects_bad_metadata_and_frames() -> None:
    frame = ob.parse_nvidia_smi_csv(_text("smi_nounits.csv")).frame
    with pytest.raises(ValueError, match="bad metadata"):
        ob.export_csv(frame, source="a\nb", as_of="2024-06-01")
    with pytest.raises(ValueError, match="lacks columns"):
        ob.export_csv(frame.drop(columns=["unit"]), source="a", as_of="b")


def test_tidy_reader_names_the_bad_line() -> None:
    text = ("# source: s\n# as_of: d\n" + ",".join(ob.FRAME_COLUMNS) + "\n"
            "0.0,0,gpu_util_frac,0.5,frac,ok,\n0.0,0,gpu_util_frac,0.5,frac,weird,\n")
    with pytest.raises(ValueError, match=r"t\.csv, line 5: unknown status"):
        ob.parse_tidy_csv(text, source="t.csv")


def test_trace_view_is_the_latest_reading_at_or_before_t() -> None:
    log = ob.parse_nvidia_smi_csv(_text("smi_units_multi_gpu.csv"))
    trace = ob.Trace(log.frame)
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
        ob.Trace(log.frame.iloc[0:0])


def test_trace_summary_means_per_segment() -> None:
    log = ob.parse_nvidia_smi_csv(_text("smi_nounits.csv"))
    means = ob.Trace(log.frame).summary(0, ["gpu_util_frac"], [("busy", 0, 1.5),
                                                                ("idle", 1.5, 3)])
    assert means.loc["busy", "gpu_util_frac"] == pytest.approx(0.46)
    assert means.loc["idle", "gpu_util_frac"] == 0.0
    with pytest.raises(ValueError, match="end must be > start"):
        ob.Trace(log.frame).summary(0, ["gpu_util_frac"], [("x", 2, 1)])


def test_scenario_reveals_names_known_panels() -> None:
    for panels in ob.SCENARIO_REVEALS.values():
        assert set(panels) <= set(ob.PANELS)


_SMI_FIELDS: dict[str, tuple[str | None, Callable[[int], str], str, Callable[[int], float]]] = {
    # nvidia-smi field -> (header unit, value formatter, metric, labkit value)
    "utilization.gpu": ("%", lambda v: f"{v} %", "gpu_util_frac", lambda v: v / 100),
    "memory.used": ("MiB", lambda v: f"{v} MiB", "fb_used_mib", float),
    "power.draw": ("W", lambda v: f"{v}.25 W", "power_usage_w", lambda v: v + 0.25),
    "temperature.gpu": (None, str, "gpu_temp_c", float),
    "clocks.sm": ("MHz", lambda v: f"{v} MHz", "sm_clock_mhz", float),
}


@given(st.permutations(list(_SMI_FIELDS)).flatmap(
    lambda order: st.tuples(st.integers(min_value=1, max_value=len(order)).map(
        lambda n: order[:n]), st.booleans(), st.integers(min_value=0, max_value=100))))
def test_smi_any_field_subset_and_order_reads_back(case: tuple[list[str], bool, int]) -> None:
    fields, nounits, v = case
    header = ", ".join(["timestamp", *(f"{f} [{_SMI_FIELDS[f][0]}]" if _SMI_FIELDS[f][0]
                                       else f for f in fields)])
    cells = []
    for f in fields:
        text = _SMI_FIELDS[f][1](v)
        cells.append(text.split(" ")[0] if nounits else text)
    log = ob.parse_nvidia_smi_csv(f"{header}\n2024/06/01 10:00:00.000, {', '.join(cells)}\n")
    got = dict(zip(log.frame.metric, log.frame.value, strict=True))
    assert got == {_SMI_FIELDS[f][2]: pytest.approx(_SMI_FIELDS[f][3](v)) for f in fields}


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
