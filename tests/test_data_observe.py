"""labkit.data.observe: reading logs from paths, buffers and uploads (size-capped), and the
lesson's traces in data/traces/."""

from __future__ import annotations

import io
import math
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from labkit._dev import traces as construct
from labkit.data import DataError, data_dir
from labkit.data import observe as dobs
from labkit.data.observe import common
from labkit.observe import CATALOG, FRAME_COLUMNS, LogImport, export_csv

FIXTURES = Path(__file__).parent / "fixtures" / "observe"


def _plain(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with text columns as plain str (readers may keep them categorical)."""
    return frame.reset_index(drop=True).astype({c: str for c in ("metric", "unit", "status",
                                                                 "reason")})


def _text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_read_from_path_text_buffer_and_bytes_buffer() -> None:
    path = FIXTURES / "smi_nounits.csv"
    by_path = dobs.read_nvidia_smi_csv(path)
    assert by_path.source == "smi_nounits.csv" and by_path.rows == 3
    text = io.StringIO(path.read_text(encoding="utf-8"))
    assert dobs.read_nvidia_smi_csv(text).frame.equals(by_path.frame)
    raw = io.BytesIO(b"\xef\xbb\xbf" + path.read_bytes())  # a BOM is dropped
    assert dobs.read_nvidia_smi_csv(raw).frame.equals(by_path.frame)
    noheader = dobs.read_nvidia_smi_csv(FIXTURES / "smi_noheader_nounits.csv",
                                        fields=["timestamp", "index", "utilization.gpu",
                                                "power.draw", "clocks.sm"])
    assert noheader.rows == 4
    scrape = dobs.read_dcgm_exporter_file(FIXTURES / "dcgm_two_gpus.prom")
    assert scrape.format == "dcgm-exporter"
    assert dobs.read_log_file(FIXTURES / "smi_consumer.csv").format == "nvidia-smi-csv"


def test_size_cap_is_checked_before_reading(tmp_path: Path) -> None:
    big = tmp_path / "big.csv"
    big.write_text("timestamp, utilization.gpu [%]\n" + "2024/06/01 10:00:00, 1 %\n" * 100)
    with pytest.raises(ValueError, match=r"big\.csv: 2,\d\d\d bytes, more than the 100 allowed"):
        dobs.read_nvidia_smi_csv(big, max_bytes=100)
    with pytest.raises(ValueError, match="more than the 100"):
        dobs.read_nvidia_smi_csv(io.StringIO(big.read_text()), max_bytes=100)
    with pytest.raises(ValueError, match="more than the 100"):
        dobs.read_nvidia_smi_csv(io.BytesIO(big.read_bytes()), max_bytes=100)
    with pytest.raises(ValueError, match=r"missing\.csv: cannot read"):
        dobs.read_nvidia_smi_csv(tmp_path / "missing.csv")


def test_decode_log_rejects_binary_and_oversize() -> None:
    assert dobs.decode_log(b"abc") == "abc"
    with pytest.raises(ValueError, match=r"up\.csv, line 1: not UTF-8 text"):
        dobs.decode_log(b"a\xff\xfe", name="up.csv")
    with pytest.raises(ValueError, match=r"up\.csv: 5 bytes, more than the 4 allowed"):
        dobs.decode_log(b"12345", name="up.csv", max_bytes=4)


def test_lesson_traces_load_with_source_and_segments() -> None:
    names = dobs.trace_names()
    assert names == ["sim-h100_dcgm-exporter_scenarios.prom", "sim-h100_nvidia-smi_scenarios.csv"]
    for name in names:
        log = dobs.load_trace(name)
        assert "constructed" in log.metadata["source"]
        assert log.metadata["as_of"] == construct.AS_OF
        assert log.unparsed_count == 0
        segments = dobs.trace_segments(log)
        assert [s[0] for s in segments] == [name for name, _ in construct.SEGMENTS]
        assert segments[0][1] == 0.0 and segments[-1][2] > 100.0


def test_lesson_traces_are_reproducible_from_the_simulator() -> None:
    """The committed traces are exactly what ``python -m labkit._dev.traces`` constructs."""
    for name, build in construct.FILES.items():
        committed = (data_dir() / "traces" / name).read_text(encoding="utf-8")
        assert build() == committed, f"rerun python -m labkit._dev.traces ({name})"


def test_load_trace_refuses_unknown_names_and_paths() -> None:
    for name in ("nope.csv", "../gpus/H100-80GB.yaml", "/etc/passwd"):
        with pytest.raises(DataError, match="no such trace"):
            dobs.load_trace(name)


def test_load_trace_needs_source_and_as_of(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "x.csv").write_text(
        "# source: a test\nindex, utilization.gpu [%]\n0, 1 %\n")
    monkeypatch.setenv("LABKIT_DATA", str(tmp_path))
    with pytest.raises(DataError, match=r"traces/x\.csv: header: as_of is missing"):
        dobs.load_trace("x.csv")


@pytest.mark.parametrize("segments", ["idle", "idle@x", "idle@0,train@0", "@5"])
def test_trace_segments_reject_malformed_lines(segments: str) -> None:
    log = dobs.read_log_file(io.StringIO(
        f"# segments: {segments}\nindex, utilization.gpu [%]\n0, 1 %\n0, 2 %\n"))
    with pytest.raises(DataError, match="segment"):
        dobs.trace_segments(log)


def test_record_trace_dry_run_writes_a_replayable_tidy_csv(tmp_path: Path) -> None:
    import labkit.gpu as gpu
    from labkit._dev import record_trace

    gpu.disconnect()
    try:
        code = record_trace.main(["--label", "idle", "--seconds", "0.3", "--hz", "10",
                                  "--out", str(tmp_path), "--allow-sim"])
        assert code == 0
        (path,) = tmp_path.iterdir()
        assert path.name.endswith("_idle_sim.csv")
        log = dobs.read_log_file(path)
        assert log.format == "labkit-tidy"
        assert "simulated" in log.metadata["source"] and log.metadata["as_of"]
        assert {"gpu_util_frac", "sm_active_frac"} <= set(log.frame.metric)
        assert dobs.trace_segments(log)[0][0] == "idle"
        gpu.disconnect()
        if gpu.status().kind != "real":  # no GPU: it refuses instead of recording the simulator
            assert record_trace.main(["--label", "x", "--seconds", "1",
                                      "--out", str(tmp_path)]) == 2
        assert record_trace.main(["--label", "bad label!", "--allow-sim",
                                  "--out", str(tmp_path)]) == 2
    finally:
        gpu.disconnect()


# --- nvidia-smi CSV ----------------------------------------------------------------------------


def _value(log: LogImport, t: float, gpu: int, metric: str) -> float:
    f = log.frame
    row = f[(f.timestamp_s == t) & (f.gpu == gpu) & (f.metric == metric)]
    assert len(row) == 1, (t, gpu, metric)
    return float(row["value"].iloc[0])


def test_smi_units_in_values_several_gpus_na_and_not_supported() -> None:
    log = dobs.parse_nvidia_smi_csv(_text("smi_units_multi_gpu.csv"), source="units.csv")
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
    log = dobs.parse_nvidia_smi_csv(_text("smi_nounits.csv"))
    assert _value(log, 0.0, 0, "gpu_util_frac") == pytest.approx(0.45)
    assert _value(log, 0.0, 0, "mem_copy_util_frac") == pytest.approx(0.12)
    assert _value(log, 2.0, 0, "power_usage_w") == 71.0
    assert _value(log, 1.001, 0, "fb_used_mib") == 10240


def test_smi_noheader_needs_the_field_list_and_names_line_1() -> None:
    text = _text("smi_noheader_nounits.csv")
    with pytest.raises(ValueError, match=r"noheader\.csv, line 1: no nvidia-smi CSV header"):
        dobs.parse_nvidia_smi_csv(text, source="noheader.csv")
    log = dobs.parse_nvidia_smi_csv(text, fields="timestamp,index,utilization.gpu,power.draw,"
                                               "clocks.sm")
    assert log.rows == 4 and log.unparsed_count == 0
    assert _value(log, 0.0, 0, "power_usage_w") == 700.0  # W from nvidia-smi's own unit
    assert _value(log, 0.011, 1, "power_usage_w") == pytest.approx(70.1)


def test_smi_consumer_board_without_index_column() -> None:
    log = dobs.parse_nvidia_smi_csv(_text("smi_consumer.csv"))
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
    log = dobs.parse_nvidia_smi_csv(text)
    assert set(log.frame.metric) == {"pcie.link.gen.current", "gpu_util_frac"}


def test_smi_without_timestamp_numbers_rows_by_interval() -> None:
    text = "# interval_s: 0.5\nindex, utilization.gpu [%]\n0, 10 %\n0, 20 %\n0, 30 %\n"
    log = dobs.parse_nvidia_smi_csv(text)
    assert list(log.frame.timestamp_s) == [0.0, 0.5, 1.0]
    assert log.start is None and log.metadata["interval_s"] == "0.5"


def test_smi_repeated_header_of_concatenated_runs_is_skipped() -> None:
    text = ("timestamp, utilization.gpu [%]\n2024/06/01 10:00:00.000, 1 %\n"
            "timestamp, utilization.gpu [%]\n2024/06/01 10:00:01.000, 2 %\n")
    log = dobs.parse_nvidia_smi_csv(text)
    assert log.rows == 2 and log.unparsed_count == 0


def test_smi_other_timestamp_formats() -> None:
    for stamp in ("2024/06/01 10:00:00", "2024-06-01 10:00:00.250", "Sat Jun  1 10:00:00 2024"):
        text = f"timestamp, utilization.gpu [%]\n{stamp}, 5 %\n"
        assert dobs.parse_nvidia_smi_csv(text).start is not None


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
    log = dobs.parse_nvidia_smi_csv(text, source="mixed.csv")
    assert [u.line for u in log.unparsed] == [3, 4, 5, 7]
    assert log.rows == 10 and log.unparsed_count == 4
    assert "not a number" in log.unparsed[0].reason
    assert "3 cells" in log.unparsed[1].reason
    assert "unit" in log.unparsed[2].reason
    assert "timestamp" in log.unparsed[3].reason
    with pytest.raises(ValueError, match=r"^mixed\.csv, line 3: utilization\.gpu"):
        dobs.parse_nvidia_smi_csv(text, source="mixed.csv", strict=True)


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
        dobs.parse_nvidia_smi_csv(text, source="f.csv")


def test_smi_too_many_lines_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(common, "MAX_LOG_LINES", 3)
    with pytest.raises(ValueError, match="more than 3"):
        dobs.parse_nvidia_smi_csv("timestamp, utilization.gpu [%]\n" + "x, 1 %\n" * 5)


# --- dcgm-exporter -----------------------------------------------------------------------------


def test_dcgm_exporter_scrape_two_gpus_units_and_blank() -> None:
    log = dobs.read_dcgm_exporter(_text("dcgm_two_gpus.prom"), source="scrape.prom")
    assert (log.format, log.rows, log.unparsed_count) == ("dcgm-exporter", 16, 0)
    assert _value(log, 0.0, 0, "power_usage_w") == 71.4  # W already: no division
    assert _value(log, 0.0, 0, "energy_j") == pytest.approx(123_456.789)  # mJ -> J
    assert _value(log, 0.0, 1, "sm_active_frac") == 0.85  # DCGM ratios stay 0-1
    assert _value(log, 0.0, 0, "gpu_util_frac") == 1.0  # DEV_GPU_UTIL is percent
    blank = log.frame[(log.frame.gpu == 0) & (log.frame.metric == "memory_temp_c")]
    assert blank.status.iloc[0] == "not_supported"
    assert blank.reason.iloc[0] == "DCGM blank (not supported)"  # never the raw number
    assert math.isnan(blank["value"].iloc[0])
    assert "DCGM_FI_DEV_ENC_UTIL" in set(log.frame.metric)  # unknown fields keep their name
    assert log.devices[1]["UUID"].endswith("0001")
    assert log.devices[0]["modelName"] == "NVIDIA H100 80GB HBM3"


def test_dcgm_concatenated_scrapes_become_a_time_series() -> None:
    one = 'DCGM_FI_DEV_GPU_UTIL{gpu="0"} 10\nDCGM_FI_PROF_SM_ACTIVE{gpu="0"} 0.5\n'
    log = dobs.read_dcgm_exporter(one * 3, interval_s=2)
    assert sorted(set(log.frame.timestamp_s)) == [0.0, 2.0, 4.0]
    default = dobs.read_dcgm_exporter(one * 2)
    assert sorted(set(default.frame.timestamp_s)) == [0.0, 30.0]  # dcgm-exporter's 30 s
    meta = dobs.read_dcgm_exporter("# interval_s: 5\n" + one * 2)
    assert sorted(set(meta.frame.timestamp_s)) == [0.0, 5.0]


def test_dcgm_sample_timestamps_are_used() -> None:
    text = ('DCGM_FI_DEV_GPU_UTIL{gpu="0"} 10 1717236425000\n'
            'DCGM_FI_DEV_GPU_UTIL{gpu="0"} 20 1717236426500\n')
    log = dobs.read_dcgm_exporter(text)
    assert list(log.frame.timestamp_s) == [0.0, 1.5]
    assert log.start is not None
    with pytest.raises(ValueError, match="all or none"):
        dobs.read_dcgm_exporter(text + 'DCGM_FI_DEV_GPU_UTIL{gpu="0"} 30\n')


def test_dcgm_label_values_with_escapes_and_commas() -> None:
    text = 'DCGM_FI_DEV_GPU_UTIL{gpu="0",modelName="A \\"quoted\\", name"} 7\n'
    log = dobs.read_dcgm_exporter(text)
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
    log = dobs.read_dcgm_exporter(text, source="s.prom")
    assert [u.line for u in log.unparsed] == [3, 4, 5]
    assert "no gpu label" in log.unparsed[1].reason
    with pytest.raises(ValueError, match=r"^s\.prom, line 3: "):
        dobs.read_dcgm_exporter(text, source="s.prom", strict=True)


@pytest.mark.parametrize(("text", "match"), [
    ("# only comments\n", r"s\.prom: no data rows"),
    ("garbage line\nmore garbage\n", r"s\.prom, line 1: 2 of 2"),
])
def test_dcgm_bad_files(text: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        dobs.read_dcgm_exporter(text, source="s.prom")


def test_observe_units_case_power_energy_and_dcgm_watts() -> None:
    """shared/cases/observe.md, "power shown 1000x too large": 4034 mW -> 4.0 W,
    123,456,789 mJ -> 123.5 kJ, dcgm-exporter 71.4 W -> 71.4 W."""
    c = CATALOG
    assert 4034 * c["power_usage_w"].nvml_scale == pytest.approx(4.034)
    assert 123_456_789 * c["energy_j"].nvml_scale / 1000 == pytest.approx(123.456789)
    assert 71.4 * c["power_usage_w"].dcgm_scale == 71.4


# --- detection, tidy export, replay --------------------------------------------------------------


def test_detect_format() -> None:
    assert dobs.detect_format(_text("dcgm_two_gpus.prom")) == "dcgm-exporter"
    assert dobs.detect_format(_text("smi_nounits.csv")) == "nvidia-smi-csv"
    assert dobs.detect_format(_text("smi_noheader_nounits.csv")) == "nvidia-smi-csv"
    with pytest.raises(ValueError, match="unknown log layout"):
        dobs.detect_format("lorem ipsum\n")
    with pytest.raises(ValueError, match=r"up\.txt, line 1: unknown log layout"):
        dobs.read_log("lorem ipsum\n", source="up.txt")


def test_export_csv_round_trips_through_the_reader() -> None:
    log = dobs.parse_nvidia_smi_csv(_text("smi_units_multi_gpu.csv"))
    text = export_csv(log.frame, source="test, A100", as_of="2024-06-01",
                         extra={"rate_hz": "1"})
    assert text.startswith("# source: test, A100\n# as_of: 2024-06-01\n# rate_hz: 1\n")
    again = dobs.read_log(text, source="x.csv")
    assert again.format == "labkit-tidy"
    pd.testing.assert_frame_equal(_plain(again.frame), _plain(log.frame), check_dtype=False)
    assert again.metadata["as_of"] == "2024-06-01"


def test_export_csv_rejects_bad_metadata_and_frames() -> None:
    frame = dobs.parse_nvidia_smi_csv(_text("smi_nounits.csv")).frame
    with pytest.raises(ValueError, match="bad metadata"):
        export_csv(frame, source="a\nb", as_of="2024-06-01")
    with pytest.raises(ValueError, match="lacks columns"):
        export_csv(frame.drop(columns=["unit"]), source="a", as_of="b")


def test_tidy_reader_names_the_bad_line() -> None:
    text = ("# source: s\n# as_of: d\n" + ",".join(FRAME_COLUMNS) + "\n"
            "0.0,0,gpu_util_frac,0.5,frac,ok,\n0.0,0,gpu_util_frac,0.5,frac,weird,\n")
    with pytest.raises(ValueError, match=r"t\.csv, line 5: unknown status"):
        dobs.parse_tidy_csv(text, source="t.csv")



# nvidia-smi field -> (header unit, value formatter, metric, labkit value)
_SMI_FIELDS: dict[str, tuple[str | None, Callable[[int], str], str, Callable[[int], float]]] = {
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
    log = dobs.parse_nvidia_smi_csv(f"{header}\n2024/06/01 10:00:00.000, {', '.join(cells)}\n")
    got = dict(zip(log.frame.metric, log.frame.value, strict=True))
    assert got == {_SMI_FIELDS[f][2]: pytest.approx(_SMI_FIELDS[f][3](v)) for f in fields}


