"""labkit.data.observe: reading logs from paths, buffers and uploads (size-capped), and the
lesson's traces in data/traces/."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from labkit._dev import traces as construct
from labkit.data import DataError, data_dir
from labkit.data import observe as dobs

FIXTURES = Path(__file__).parent / "fixtures" / "observe"


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
    with pytest.raises(ValueError, match=r"up\.csv: not UTF-8 text \(byte 1\)"):
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
    with pytest.raises(DataError, match=r"traces/x\.csv, line 1: missing '# as_of"):
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
