"""Large logs read in chunks (labkit.data.observe.chunks, the dmon reader): wherever a chunk
ends, the same readings, line numbers and error messages as the whole file gives."""

from __future__ import annotations

import codecs
import io
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from labkit.data import observe as dobs
from labkit.data.observe import chunks, dmon
from labkit.observe import LogImport

#: ``-s pu -o DT`` on two GPUs, the header printed again (two lines) and a bad line after it.
_HEADER = ("#Date       Time        gpu   pwr    sm\n"
           "#YYYYMMDD   HH:MM:SS    Idx     W     %\n")
_LOG = (_HEADER
        + " 20250908   23:59:58      0   650    99\n"   # line 3
        + " 20250908   23:59:58      1    71     -\n"   # line 4
        + _HEADER                                       # lines 5-6
        + " 20250908   23:59:59      0   652   100\n"   # line 7
        + " 20250908   23:59:59      1    72     0\n"   # line 8
        + " 20250909   00:00:00      0   651\n"         # line 9: 4 cells
        + " 20250909   00:00:00      x   651    97\n"   # line 10: bad gpu
        + " 20250909   00:00:00      1    70     1\n")  # line 11


def _series(log: LogImport, metric: str, gpu: int) -> list[float]:
    part = log.frame[(log.frame.metric == metric) & (log.frame.gpu == gpu)]
    return [float(v) for v in part["value"]]


def _check(log: LogImport) -> None:
    """The readings of _LOG, written out by hand."""
    assert (log.format, log.rows) == ("nvidia-smi-dmon", 7)
    assert [(u.line, u.reason) for u in log.unparsed] == [
        (9, "4 cells, the header has 5"), (10, "bad gpu index or date/time")]
    assert log.unparsed[0].text == " 20250909   00:00:00      0   651"
    assert log.start == datetime(2025, 9, 8, 23, 59, 58)
    assert _series(log, "power_usage_w", 0) == [650.0, 652.0]
    assert _series(log, "power_usage_w", 1) == [71.0, 72.0, 70.0]
    assert _series(log, "gpu_util_frac", 0) == pytest.approx([0.99, 1.0])
    gpu1 = log.frame[(log.frame.gpu == 1) & (log.frame.metric == "gpu_util_frac")]
    assert list(gpu1.timestamp_s) == [0.0, 1.0, 2.0]  # across midnight
    assert list(gpu1.status) == ["not_available", "ok", "ok"]
    assert list(gpu1.reason) == ["-", "", ""]
    assert list(log.frame.columns) == ["timestamp_s", "gpu", "metric", "value", "unit",
                                       "status", "reason"]
    assert dict(log.devices) == {0: {}, 1: {}}


@pytest.mark.parametrize("chunk_bytes", [1, 7, 40, 41, 100, 1 << 20])
def test_dmon_any_chunk_size_reads_the_same(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                            chunk_bytes: int) -> None:
    monkeypatch.setattr(chunks, "CHUNK_BYTES", chunk_bytes)
    path = tmp_path / "day.log"
    path.write_bytes(_LOG.encode())
    _check(dobs.read_nvidia_smi_dmon(path))
    _check(dobs.read_nvidia_smi_dmon(io.BytesIO(_LOG.encode())))
    _check(dobs.parse_nvidia_smi_dmon(_LOG, source="day.log"))


def test_dmon_chunk_boundary_inside_a_repeated_header(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    """A chunk ends after the repeated header's names row, before its units row."""
    cut = _LOG.index("#YYYYMMDD", len(_HEADER)) + 3
    monkeypatch.setattr(chunks, "CHUNK_BYTES", cut)
    pieces = list(chunks.byte_chunks(io.BytesIO(_LOG.encode()), 1 << 20, dobs._decode)[0])
    assert pieces[0].endswith(b"gpu   pwr    sm\n") and pieces[1].startswith(b"#YYYYMMDD")
    path = tmp_path / "day.log"
    path.write_bytes(_LOG.encode())
    _check(dobs.read_nvidia_smi_dmon(path))


def test_dmon_header_change_in_a_later_chunk_starts_a_new_block(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 50)
    text = ("# gpu   pwr\n# Idx     W\n" + "    0   100\n" * 20
            + "# gpu   pwr    sm\n# Idx     W     %\n" + "    0   200    50\n" * 3
            + "    0   200\n")  # line 28: 2 cells under the new 3-cell header
    log = dobs.read_nvidia_smi_dmon(io.BytesIO(text.encode()))
    assert [(u.line, u.reason) for u in log.unparsed] == [(28, "2 cells, the header has 3")]
    power = log.frame[log.frame.metric == "power_usage_w"]
    assert list(power.value) == [100.0] * 20 + [200.0] * 3
    assert list(power.timestamp_s) == [float(k) for k in range(23)]  # line order per GPU
    assert list(log.frame[log.frame.metric == "gpu_util_frac"].value) == [0.5] * 3


def test_dmon_bad_line_in_the_second_chunk_names_its_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With strict rules (more than half bad) the message names the first bad line."""
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 64)
    text = "# gpu   pwr\n# Idx     W\n" + "    0   100\n" * 4 + "    0   1   2\n" * 6
    with pytest.raises(ValueError, match=r"^d\.txt, line 7: 6 of 10 data rows cannot be read"):
        dobs.read_nvidia_smi_dmon(_named(text, "d.txt"))


def _named(text: str, name: str, encoding: str = "utf-8") -> io.BytesIO:
    buf = io.BytesIO(text.encode(encoding))
    buf.name = name
    return buf


@pytest.mark.parametrize("chunk_bytes", [5, 33, 1 << 20])
def test_dmon_utf16_and_crlf_files_read_in_chunks(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path, chunk_bytes: int) -> None:
    """PowerShell's ``>``: UTF-16LE with a BOM and CRLF line ends (a chunk may split a
    character's two bytes or a CRLF pair)."""
    monkeypatch.setattr(chunks, "CHUNK_BYTES", chunk_bytes)
    crlf = _LOG.replace("\n", "\r\n")
    for name, data in (("ps.log", codecs.BOM_UTF16_LE + crlf.encode("utf-16-le")),
                       ("be.log", codecs.BOM_UTF16_BE + _LOG.encode("utf-16-be")),
                       ("bom.log", codecs.BOM_UTF8 + crlf.encode())):
        path = tmp_path / name
        path.write_bytes(data)
        _check(dobs.read_nvidia_smi_dmon(path))


def test_dmon_encoding_errors_in_a_later_chunk_are_the_whole_file_messages(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 16)
    good = _LOG.encode()
    path = tmp_path / "bad.log"
    path.write_bytes(good + b" 20250909   00:00:01      0   \xff\xfe    1\n")
    at = good.count(b"\n") + 1  # the 1-based line of \xff, counted here by hand
    with pytest.raises(ValueError, match=rf"^bad\.log, line {at}: not UTF-8 text; re-save"):
        dobs.read_nvidia_smi_dmon(path)
    path.write_bytes(good + b"    0\x00  1\n")
    with pytest.raises(ValueError, match=r"^bad\.log: text holds NUL characters"):
        dobs.read_nvidia_smi_dmon(path)
    with pytest.raises(ValueError, match=r"^bad\.log: 4.. bytes, more than the 100 allowed"):
        dobs.read_nvidia_smi_dmon(path, max_bytes=100)


def test_dmon_too_many_lines_names_the_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dmon, "MAX_LOG_LINES", 10)
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 32)
    with pytest.raises(ValueError, match=r"^d\.txt: 11 lines, more than 10$"):
        dobs.read_nvidia_smi_dmon(_named(_LOG, "d.txt"))


def test_classify_counts_cells_as_str_split() -> None:
    """Cells and ``#`` lines of a chunk against ``str.split`` / ``str.lstrip``, line by line."""
    lines = ["", "   ", "# gpu pwr", "  #x", " 0  1\t2 ", "a", "\x1f b \x0b", " -  - "]
    got = chunks.classify(("\n".join(lines) + "\n").encode())
    assert got.cells.tolist() == [len(s.split()) for s in lines]
    assert got.hashed.tolist() == [s.lstrip().startswith("#") for s in lines]
    assert [got.text(k) for k in range(len(lines))] == lines
    assert got.join(np.array([4, 5, 7])) == b" 0  1\t2 \na\n -  - \n"


def test_sink_grows_and_widens_in_place() -> None:
    sink = chunks.TidySink(0)
    one = np.ones(3000)
    sink.add(one, np.full(3000, 3), np.zeros(3000, dtype=np.int16), one, np.zeros(3000),
             np.zeros(3000), np.zeros(3000))
    sink.add(one[:2], np.array([5, 300]), np.array([1, 200]), one[:2] * 2, np.zeros(2),
             np.zeros(2), np.zeros(2))
    sink.finish()
    assert sink.n == len(sink.t) == 3002
    assert sink.gpu.dtype == np.int16 and sink.gpu[-2:].tolist() == [5, 300]
    assert sink.metric.dtype == np.int16 and sink.metric[-1] == 200
    assert sink.value[-1] == 2.0


# --- nvidia-smi --query-gpu CSV ---------------------------------------------------------------

_CSV_HEADER = "timestamp, uuid, utilization.gpu [%], power.draw [W], enc.mode\n"
_CSV = (_CSV_HEADER
        + "2025/09/08 17:26:50.000, GPU-b, 97 %, 650.25 W, 0\n"          # line 2: GPU-b -> 0
        + "2025/09/08 17:26:50.011, GPU-a, 0 %, 90.50 W, 1\n"            # line 3: GPU-a -> 1
        + "\n"
        + _CSV_HEADER                                                    # line 5: repeated
        + "2025/09/08 17:26:51.000, GPU-b, [N/A], 651.00 W, 0\n"         # line 6
        + "2025/09/08 17:26:51.011, GPU-a, 1 %\n"                        # line 7: 3 cells
        + "2025/02/30 17:26:52.000, GPU-a, 1 %, 91.00 W, 0\n"            # line 8: no 30 Feb
        + "2025/09/08 17:26:52.000, GPU-b, 99 %, 652.00 W, Default\n"    # line 9: a mode
        + "2025/09/08 17:26:52.011, GPU-a, 2 %, 92.00 W, 0\n")           # line 10


def _check_csv(log: LogImport) -> None:
    """The readings of _CSV, written out by hand."""
    assert (log.format, log.rows) == ("nvidia-smi-csv", 7)
    assert [(u.line, u.reason) for u in log.unparsed] == [
        (7, "3 cells, the header has 5"),
        (8, "timestamp not in a known format: '2025/02/30 17:26:52.000'")]
    assert log.start == datetime(2025, 9, 8, 17, 26, 50)
    assert "enc.mode" in log.ignored_fields  # "Default" in a later chunk: a text field
    assert set(log.frame.metric) == {"gpu_util_frac", "power_usage_w"}
    assert _series(log, "power_usage_w", 0) == [650.25, 651.0, 652.0]
    assert _series(log, "power_usage_w", 1) == [90.5, 92.0]
    util = log.frame[(log.frame.metric == "gpu_util_frac") & (log.frame.gpu == 0)]
    assert list(util.timestamp_s) == [0.0, 1.0, 2.0]
    assert list(util.status) == ["ok", "not_available", "ok"]
    assert list(util.reason) == ["", "[N/A]", ""]
    assert _series(log, "gpu_util_frac", 1) == pytest.approx([0.0, 0.02])
    assert list(log.frame[log.frame.gpu == 1].timestamp_s.unique()) == [0.011, 2.011]
    assert dict(log.devices) == {0: {"uuid": "GPU-b"}, 1: {"uuid": "GPU-a"}}


@pytest.mark.parametrize("chunk_bytes", [1, 50, 120, 1 << 20])
def test_csv_any_chunk_size_reads_the_same(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                           chunk_bytes: int) -> None:
    monkeypatch.setattr(chunks, "CHUNK_BYTES", chunk_bytes)
    monkeypatch.setattr(dobs.smi_csv, "CHUNK_BYTES", chunk_bytes)
    path = tmp_path / "q.csv"
    path.write_bytes(_CSV.encode())
    _check_csv(dobs.read_nvidia_smi_csv(path))
    path.write_bytes(codecs.BOM_UTF16_LE + _CSV.replace("\n", "\r\n").encode("utf-16-le"))
    _check_csv(dobs.read_nvidia_smi_csv(path))
    _check_csv(dobs.read_nvidia_smi_csv(_named(_CSV, "q.csv")))
    _check_csv(dobs.parse_nvidia_smi_csv(_CSV, source="q.csv"))


def test_csv_quoted_or_late_header_falls_back_to_the_whole_text(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 16)
    path = tmp_path / "q.csv"
    path.write_bytes(("# source: lab\n# as_of: 2025-09-08\n" + _CSV).encode())
    log = dobs.read_nvidia_smi_csv(path)  # the header is beyond the first 16-byte chunk
    assert dict(log.metadata) == {"source": "lab", "as_of": "2025-09-08"}
    assert [u.line for u in log.unparsed] == [9, 10]  # two metadata lines above the header
    assert _series(log, "power_usage_w", 0) == [650.25, 651.0, 652.0]
    quoted = _CSV.replace("GPU-a,", '"GPU-a",', 1)
    path.write_bytes(quoted.encode())
    assert dobs.read_nvidia_smi_csv(path).devices[1] == {"uuid": "GPU-a"}


_STAMP = st.tuples(st.integers(1999, 2031), st.integers(0, 13), st.integers(0, 32),
                   st.integers(0, 24), st.integers(0, 60), st.integers(0, 60),
                   st.integers(0, 999))


@given(st.lists(_STAMP, min_size=1, max_size=30, unique=True))  # one GPU: one reading a moment
def test_csv_nvidia_smi_stamps_against_datetime(stamps: list[tuple[int, ...]]) -> None:
    """The numpy parse of ``YYYY/MM/DD HH:MM:SS.mmm`` against Python's datetime: the same
    seconds from the earliest valid stamp, and the invalid ones (31 June, hour 24) refused."""
    lines = [f"{y:04d}/{mo:02d}/{d:02d} {h:02d}:{mi:02d}:{s:02d}.{ms:03d}, 0, {k}"
             for k, (y, mo, d, h, mi, s, ms) in enumerate(stamps)]
    valid: dict[int, datetime] = {}
    for k, (y, mo, d, h, mi, s, ms) in enumerate(stamps):
        try:
            valid[k] = datetime(y, mo, d, h, mi, s, ms * 1000)
        except ValueError:
            pass
    text = "timestamp, index, temperature.gpu\n" + "\n".join(lines) + "\n"
    if len(valid) * 2 < len(stamps) or not valid:
        with pytest.raises(ValueError, match="cannot be read"):
            dobs.parse_nvidia_smi_csv(text)
        return
    log = dobs.parse_nvidia_smi_csv(text)
    first = min(valid.values())
    assert log.start == first
    assert [u.line - 2 for u in log.unparsed] == [k for k in range(len(stamps))
                                                  if k not in valid]
    got = dict(zip(log.frame.value.astype(int), log.frame.timestamp_s, strict=True))
    assert got == {k: round((v - first).total_seconds(), 3) for k, v in valid.items()}


def test_csv_clock_going_back_is_sorted_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two runs concatenated out of order: the later run first. Rows by time, GPU, metric."""
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 40)
    text = ("timestamp, index, power.draw [W], temperature.gpu\n"
            "2025/09/08 10:00:05.000, 1, 300.00 W, 61\n"
            "2025/09/08 10:00:05.000, 0, 200.00 W, 51\n"
            "timestamp, index, power.draw [W], temperature.gpu\n"
            "2025/09/08 10:00:00.000, 0, 100.00 W, 50\n")
    log = dobs.read_nvidia_smi_csv(_named(text, "two.csv"))
    rows = [(t, g, str(m), v) for t, g, m, v in log.frame[
        ["timestamp_s", "gpu", "metric", "value"]].itertuples(index=False)]
    assert rows == [(0.0, 0, "gpu_temp_c", 50.0), (0.0, 0, "power_usage_w", 100.0),
                    (5.0, 0, "gpu_temp_c", 51.0), (5.0, 0, "power_usage_w", 200.0),
                    (5.0, 1, "gpu_temp_c", 61.0), (5.0, 1, "power_usage_w", 300.0)]
    assert log.start == datetime(2025, 9, 8, 10, 0, 0)


@pytest.mark.parametrize("chunk_bytes", [1, 30, 1 << 20])
def test_dmon_metadata_lines_over_several_chunks(monkeypatch: pytest.MonkeyPatch,
                                                 chunk_bytes: int) -> None:
    monkeypatch.setattr(chunks, "CHUNK_BYTES", chunk_bytes)
    text = "# source: lab server 2\n# as_of: 2025-09-08\n" + _LOG
    log = dobs.read_nvidia_smi_dmon(_named(text, "m.log"))
    assert dict(log.metadata) == {"source": "lab server 2", "as_of": "2025-09-08"}
    assert [u.line for u in log.unparsed] == [11, 12]


def test_dmon_clock_cells() -> None:
    """Two-digit ``HH:MM:SS`` through numpy, other spellings split on ':' (hand values)."""
    cells = pd.Series(["23:59:59", "00:00:00", "1:02:03", "24:00:00", "12:60:00", "aa:bb:cc",
                       "23:59:60", None, "23:59:59"], dtype=object)
    got = dmon._clock_seconds(cells)
    expected = [86399.0, 0.0, 3723.0, np.nan, np.nan, np.nan, 86400.0, np.nan, 86399.0]
    np.testing.assert_array_equal(got, np.asarray(expected))
