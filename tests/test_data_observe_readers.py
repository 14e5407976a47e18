"""labkit.data.observe readers on real public captures (tests/fixtures/observe/SOURCES.md).

Every expected value below was read off the fixture file by eye (or is stdlib arithmetic on
it), never produced by labkit; constructed inputs are built in the test and say so.
"""

from __future__ import annotations

import codecs
import io
import math
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest

from labkit.data import observe as dobs
from labkit.data.observe import dcgm
from labkit.observe import LogError, LogImport, Status

FIXTURES = Path(__file__).parent / "fixtures" / "observe"


def _text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def _series(log: LogImport, metric: str, gpu: int = 0) -> list[float]:
    f = log.frame
    part = f[(f.metric == metric) & (f.gpu == gpu)].sort_values("timestamp_s")
    return [float(v) for v in part["value"]]


def _one(log: LogImport, metric: str, gpu: int = 0) -> pd.Series:
    f = log.frame
    rows = f[(f.metric == metric) & (f.gpu == gpu)]
    assert len(rows) == 1, (metric, len(rows))
    return rows.iloc[0]


# --- nvidia-smi --query-gpu CSV: encodings, timestamps, real captures ---------------------------

#: smi_query_gpu_tee.csv by eye: 5 rows, memory.used 21, 7, 7, 7, 21 MiB; temperature 25, 24, 23,
#: 26, 25; first stamp 14:44:16.977, last 14:44:17.095.
_TEE_USED = [21.0, 7.0, 7.0, 7.0, 21.0]
_TEE_TEMP = [25.0, 24.0, 23.0, 26.0, 25.0]


@pytest.mark.parametrize("encode", [
    lambda s: s.encode("utf-8"),
    lambda s: codecs.BOM_UTF8 + s.encode("utf-8"),
    lambda s: codecs.BOM_UTF16_LE + s.replace("\n", "\r\n").encode("utf-16-le"),  # PowerShell >
    lambda s: codecs.BOM_UTF16_BE + s.encode("utf-16-be"),
    lambda s: s.replace("\n", "\r\n").encode("utf-8"),
], ids=["utf8", "utf8-bom", "utf16le-bom-crlf", "utf16be-bom", "utf8-crlf"])
def test_csv_reads_the_same_in_every_encoding(encode: object) -> None:
    data = encode(_text("smi_query_gpu_tee.csv"))  # type: ignore[operator]
    log = dobs.read_nvidia_smi_csv(io.BytesIO(data))
    assert (log.rows, log.unparsed_count) == (5, 0)
    assert _series(log, "fb_used_mib") == _TEE_USED
    assert _series(log, "gpu_temp_c") == _TEE_TEMP
    assert log.start == datetime(2024, 1, 16, 14, 44, 16, 977000)
    assert max(log.frame.timestamp_s) == pytest.approx(17.095 - 16.977)
    assert "pstate" in log.ignored_fields
    # the upload path decodes the same way
    assert dobs.decode_log(data, name="x.csv").splitlines()[0].startswith("timestamp, pstate")


def test_korean_excel_cp949_log_is_read() -> None:
    # issue 16: a Korean Excel re-save (CP949) was refused; labkit.data.roster reads CP949 too
    text = "# 메모: 실습실\n" + _text("smi_query_gpu_tee.csv")
    assert dobs.decode_log(text.encode("cp949"), name="up.csv") == text
    log = dobs.read_log(dobs.decode_log(text.encode("euc-kr"), name="up.csv"), source="up.csv")
    assert _series(log, "fb_used_mib") == _TEE_USED


@pytest.mark.parametrize(("data", "kind", "match"), [
    # Latin-1 "é" then ASCII: not UTF-8, not CP949 -> the 1-based line, not a byte offset
    (b"timestamp, name\n2026/11/30 09:00:00, caf\xe9, 1\n", "encoding",
     r"up\.csv, line 2: not UTF-8 text; re-save"),
    # decodes as CP949 but to Hanja, not Hangul: a wrong code page, refused
    ("timestamp, name\n2026/11/30 09:00:00, 漢字\n".encode("cp949"), "encoding",
     r"line 2: not UTF-8"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "binary", "not a log"),
    (b"PK\x03\x04" + bytes(64), "binary", "not a log"),
])
def test_undecodable_or_binary_uploads_say_why(data: bytes, kind: str, match: str) -> None:
    with pytest.raises(LogError, match=match) as err:
        dobs.decode_log(data, name="up.csv")
    assert err.value.kind == kind


def test_unknown_encoding_is_refused_with_a_resave_hint() -> None:
    no_bom = _text("smi_query_gpu_tee.csv").encode("utf-16-le")  # UTF-16 without its BOM
    with pytest.raises(LogError, match="NUL") as err2:
        dobs.decode_log(no_bom, name="up.csv")
    assert err2.value.kind == "encoding"


_UTC8 = timezone(timedelta(hours=8))


@pytest.mark.parametrize(("stamp", "expected"), [
    ("2025/09/08 17:26:50.123", datetime(2025, 9, 8, 17, 26, 50, 123000)),
    ("2025/09/08 17:26:50", datetime(2025, 9, 8, 17, 26, 50)),
    ("2025-09-08T17:26:50+08:00", datetime(2025, 9, 8, 17, 26, 50, tzinfo=_UTC8)),
    ("2025-09-08T09:26:50.5Z", datetime(2025, 9, 8, 9, 26, 50, 500000, tzinfo=UTC)),
    ("2025-09-08 17:26:50.250+08:00", datetime(2025, 9, 8, 17, 26, 50, 250000, tzinfo=_UTC8)),
    # epoch: 2025-09-08T09:26:50Z is 20339 days + 9:26:50 after 1970-01-01
    (str(20339 * 86400 + 9 * 3600 + 26 * 60 + 50), datetime(2025, 9, 8, 9, 26, 50, tzinfo=UTC)),
    (str((20339 * 86400 + 9 * 3600 + 26 * 60 + 50) * 1000 + 123),
     datetime(2025, 9, 8, 9, 26, 50, 123000, tzinfo=UTC)),
    ("Mon Sep  8 17:26:50 2025", datetime(2025, 9, 8, 17, 26, 50)),
])
def test_csv_timestamps_nvidia_smi_and_wrappers_write(stamp: str, expected: datetime) -> None:
    log = dobs.read_nvidia_smi_csv(io.StringIO(f"timestamp, utilization.gpu [%]\n{stamp}, 5 %\n"))
    assert log.start == expected
    assert _series(log, "gpu_util_frac") == [0.05]


def test_csv_offsets_compare_as_instants_and_mixing_is_refused() -> None:
    text = ("timestamp, utilization.gpu [%]\n2025-09-08T17:26:50+08:00, 1 %\n"
            "2025-09-08T09:26:51Z, 2 %\n2025-09-08T18:26:52+09:00, 3 %\n")
    log = dobs.read_nvidia_smi_csv(io.StringIO(text))
    assert list(log.frame.timestamp_s) == [0.0, 1.0, 2.0]
    mixed = text + "2025/09/08 09:26:53.000, 4 %\n"
    with pytest.raises(ValueError, match="UTC offset and some do not"):
        dobs.read_nvidia_smi_csv(io.StringIO(mixed), strict=False)


def test_csv_real_full_field_capture_h100_under_load() -> None:
    """nvidia_gpu_exporter capture, H100 80GB HBM3, driver 590.48.01, gpu-burn running."""
    log = dobs.read_nvidia_smi_csv(FIXTURES / "smi_query_gpu_h100.csv")
    assert (log.rows, log.unparsed_count) == (1, 0)
    assert not log.frame.duplicated(["timestamp_s", "gpu", "metric"]).any()
    assert _one(log, "gpu_util_frac").value == 1.0          # 100 %
    assert _one(log, "power_usage_w").value == 631.95       # power.draw [W]
    assert _one(log, "power_limit_w").value == 700.0
    assert _one(log, "fb_used_mib").value == 19818.0
    assert _one(log, "gpu_temp_c").value == 59.0
    assert _one(log, "sm_clock_mhz").value == 1980.0
    assert _one(log, "remapped_rows_pending").value == 0.0  # "No"
    assert _one(log, "fan_speed_frac").reason == "[N/A]"    # a passively cooled board
    assert log.devices[0]["name"] == "NVIDIA H100 80GB HBM3"
    # the alias power.draw.average keeps its own name instead of a second power_usage_w
    assert _one(log, "power.draw.instant").value == 625.68


@pytest.mark.parametrize(("fields", "cells", "limit", "own"), [
    ("power.limit [W]", "300.00 W", 300.0, None),  # the common field alone: the card's limit
    ("power.limit [W], enforced.power.limit [W]", "300.00 W, 250.00 W", 250.0, 300.0),
])
def test_csv_power_limit_maps_to_the_limit_unless_enforced_is_there(
        fields: str, cells: str, limit: float, own: float | None) -> None:
    # issue 16: a log with power.limit (not enforced.power.limit) showed no limit
    text = (f"timestamp, index, power.draw [W], {fields}\n"
            f"2026/11/30 09:00:00.000, 0, 120.50 W, {cells}\n")
    for log in (dobs.parse_nvidia_smi_csv(text, source="pl.csv"),
                dobs.read_log(text, source="pl.csv")):  # the in-memory and streaming readers
        assert _one(log, "power_limit_w").value == limit
        if own is not None:  # shadowed: power.limit keeps its own name
            assert _one(log, "power.limit").value == own


def test_csv_real_capture_mig_enabled_and_windows() -> None:
    mig = dobs.read_nvidia_smi_csv(FIXTURES / "smi_query_gpu_h100_mig.csv")
    util = _one(mig, "gpu_util_frac")  # utilization is not reported with MIG on
    assert util.status == "not_available" and util.reason == "[N/A]" and math.isnan(util.value)
    assert _one(mig, "power_usage_w").value == 433.78
    win = dobs.read_nvidia_smi_csv(FIXTURES / "smi_query_gpu_windows_rtx2080s.csv")
    assert _one(win, "gpu_util_frac").value == pytest.approx(0.07)
    assert _one(win, "fan_speed_frac").value == pytest.approx(0.38)
    assert _one(win, "power_usage_w").value == 97.99
    assert _one(win, "max_sm_clock_mhz").value == 2145.0
    assert "driver_model.current" in win.ignored_fields  # WDDM: text


def test_csv_noheader_with_a_common_field_set_and_preview() -> None:
    text = "".join(ln + "\n" for ln in _text("smi_query_gpu_tee.csv").splitlines()[1:])
    with pytest.raises(LogError) as err:
        dobs.read_nvidia_smi_csv(io.StringIO(text))
    assert err.value.kind == "no_header" and err.value.line == 1
    assert dobs.preview_rows(text, rows=2)[0] == ["2024/01/16 14:44:16.977", "P8", "25", "0 %",
                                                  "0 %", "23028 MiB", "22494 MiB", "21 MiB"]
    fields = ["timestamp", "pstate", "temperature.gpu", "utilization.gpu", "utilization.memory",
              "memory.total", "memory.free", "memory.used"]
    log = dobs.read_nvidia_smi_csv(io.StringIO(text), fields=fields)
    assert _series(log, "fb_used_mib") == _TEE_USED
    for name, chosen in dobs.COMMON_FIELD_SETS.items():
        assert len(set(chosen)) == len(chosen), name
        assert chosen[0] == "timestamp", name


# --- nvidia-smi dmon --------------------------------------------------------------------------


def test_dmon_real_mutc_with_date_and_time_columns() -> None:
    """Blog capture of ``nvidia-smi dmon -i 0 -s mutc -d 1 -o TD`` (one blank line inside)."""
    log = dobs.read_nvidia_smi_dmon(FIXTURES / "dmon_mutc_TD.txt")
    assert (log.format, log.rows, log.unparsed_count) == ("nvidia-smi-dmon", 6, 0)
    assert log.start == datetime(2024, 1, 4, 13, 54, 35)
    assert sorted(set(log.frame.timestamp_s)) == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert _series(log, "fb_used_mib") == [239.0, 74.0, 7.0, 478.0, 67.0, 7.0]
    assert _series(log, "gpu_util_frac") == pytest.approx([0.06, 0.0, 0.03, 0.13, 0.0, 0.03])
    assert _series(log, "pcie_rx_kb_per_s") == [5000.0, 217000.0, 0.0, 44000.0, 30000.0, 0.0]
    assert _series(log, "sm_clock_mhz") == [1695.0] * 6
    assert _series(log, "dmon.bar1") == [3.0, 10.0, 2.0, 6.0, 10.0, 2.0]


def test_dmon_real_default_columns_mig_gpu_dashes_are_missing() -> None:
    """nvidia_gpu_exporter capture: ``nvidia-smi dmon -c 5`` on an H100 in MIG mode."""
    log = dobs.read_nvidia_smi_dmon(FIXTURES / "dmon_h100_mig.txt")
    assert (log.rows, log.start) == (5, None)
    assert sorted(set(log.frame.timestamp_s)) == [0.0, 1.0, 2.0, 3.0, 4.0]  # line order
    assert _series(log, "power_usage_w") == [438.0, 440.0, 437.0, 439.0, 439.0]
    assert _series(log, "memory_temp_c") == [61.0, 60.0, 60.0, 60.0, 62.0]
    sm = log.frame[log.frame.metric == "gpu_util_frac"]
    assert set(sm.status) == {"not_available"} and set(sm.reason) == {"-"}
    l40s = dobs.read_nvidia_smi_dmon(FIXTURES / "dmon_l40s.txt")
    assert _series(l40s, "power_usage_w") == [66.0, 65.0, 65.0, 51.0, 37.0]
    assert set(l40s.frame[l40s.frame.metric == "memory_temp_c"].reason) == {"-"}


#: Constructed (not a capture): ``-s pucvmet -o DT`` on two GPUs, the header repeated, then a
#: MIG header with gi/ci columns (layout assumed; see labkit.data.observe.dmon).
_DMON_CONSTRUCTED = """\
#Date       Time        gpu   pwr gtemp mtemp    sm   mem   enc   dec  mclk  pclk pviol tviol    fb  bar1 sbecc dbecc   pci rxpci txpci
#YYYYMMDD   HH:MM:SS    Idx     W     C     C     %     %     %     %   MHz   MHz     %  bool    MB    MB  errs  errs  errs  MB/s  MB/s
 20250908   23:59:59      0   650    70    80    99    40     0     0  2619  1980     0     0 70000     5     0     0     0   100   200
 20250908   23:59:59      1    71    40    45     0     0     0     0  2619   345     -     0     5     2     0     0     0     0     1
#Date       Time        gpu   pwr gtemp mtemp    sm   mem   enc   dec  mclk  pclk pviol tviol    fb  bar1 sbecc dbecc   pci rxpci txpci
#YYYYMMDD   HH:MM:SS    Idx     W     C     C     %     %     %     %   MHz   MHz     %  bool    MB    MB  errs  errs  errs  MB/s  MB/s
 20250909   00:00:00      0   652    70    80   100    41     0     0  2619  1980    12     0 70001     5     0     0     3   101   201
 20250909   00:00:00      1    72    40    45     0     0     0     0  2619   345     -     0     5     2     0     0     0     0     1
 20250909   00:00:01      0   651    70
"""  # noqa: E501


def test_dmon_constructed_all_groups_two_gpus_repeated_header() -> None:
    log = dobs.read_nvidia_smi_dmon(io.StringIO(_DMON_CONSTRUCTED))
    assert log.rows == 5
    assert [u.line for u in log.unparsed] == [9]  # the short last line, kept and counted
    assert log.start == datetime(2025, 9, 8, 23, 59, 59)
    assert _series(log, "power_usage_w", gpu=0) == [650.0, 652.0]
    assert _series(log, "power_usage_w", gpu=1) == [71.0, 72.0]
    assert sorted(set(log.frame.timestamp_s)) == [0.0, 1.0]  # across midnight
    assert _series(log, "pcie_replay_count") == [0.0, 3.0]
    assert _series(log, "dmon.pviol") == pytest.approx([0.0, 0.12])
    assert set(log.frame[(log.frame.gpu == 1) & (log.frame.metric == "dmon.pviol")].status) \
        == {"not_available"}
    assert _series(log, "pcie_tx_kb_per_s", gpu=0) == [200000.0, 201000.0]


def test_dmon_constructed_time_only_rolls_over_midnight_and_mig_rows() -> None:
    text = ("#Time        gpu    gi    ci   pwr    sm\n"
            "#HH:MM:SS    Idx    Id    Id     W     %\n"
            " 23:59:59      0     -     -   300     -\n"
            " 23:59:59      0     1     0     -    50\n"
            " 00:00:00      0     -     -   310     -\n"
            " 00:00:00      0     1     0     -    60\n")
    log = dobs.read_nvidia_smi_dmon(io.StringIO(text))
    assert sorted(set(log.frame.timestamp_s)) == [0.0, 1.0]
    assert _series(log, "power_usage_w") == [300.0, 310.0]
    assert _series(log, "gpu_util_frac@mig:gi1:ci0") == pytest.approx([0.5, 0.6])


@pytest.mark.parametrize(("text", "match"), [
    ("    0   100    40\n", r"d\.txt, line 1: no nvidia-smi dmon header"),
    ("# gpu   pwr\n# Idx     W\n", r"d\.txt: no nvidia-smi dmon data lines"),
    ("# gpu   pwr\n    0   1   2\n    0   1   2\n", r"d\.txt, line 2: 2 of 2 data rows"),
])
def test_dmon_bad_files_name_file_and_line(text: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        dobs.parse_nvidia_smi_dmon(text, source="d.txt")


# --- nvidia-smi -q and -q -x ------------------------------------------------------------------


def _older_mig_layouts() -> dict[str, str]:
    """The real H100 -q text (MIG devices straight under the GPU, "Shared FB Memory Usage")
    rewritten as older drivers print it: "FB Memory Usage", and also under a "MIG Devices"
    line with every MIG device line indented one level more (issue 16)."""
    text = _text("smi_q_h100_mig.txt")
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln == "    MIG Device")
    end = next(i for i, ln in enumerate(lines) if ln.startswith("    Accounting Mode"))
    fb = [ln.replace("Shared FB Memory Usage", "FB Memory Usage       ")
          for ln in lines[start:end]]
    wrapped = lines[:start] + ["    MIG Devices"] + ["    " + ln for ln in fb] + lines[end:]
    return {"fb": "\n".join(lines[:start] + fb + lines[end:]) + "\n",
            "wrapped": "\n".join(wrapped) + "\n"}


@pytest.mark.parametrize("layout", ["fb", "wrapped"])
def test_query_text_older_mig_layouts_read_the_same_devices(layout: str) -> None:
    real = dobs.parse_nvidia_smi_query(_text("smi_q_h100_mig.txt"), source="new.txt")
    old = dobs.parse_nvidia_smi_query(_older_mig_layouts()[layout], source="old.txt")
    want = [(d.gi_id, d.ci_id, d.memory_used_mib, d.memory_total_mib, d.sm_count)
            for d in real.gpus[0].mig_devices]
    assert len(want) == 4 and all(w[3] is not None for w in want)
    assert [(d.gi_id, d.ci_id, d.memory_used_mib, d.memory_total_mib, d.sm_count)
            for d in old.gpus[0].mig_devices] == want
    assert "mig_without_devices" not in [w.code for w in old.warnings]


def test_query_xml_a100_mig_devices_and_count_warning() -> None:
    """Telegraf test data: A100-SXM4-80GB in MIG mode, the file of one GPU of four."""
    snap = dobs.read_nvidia_smi_query(FIXTURES / "smi_qx_a100_mig.xml")
    (gpu,) = snap.gpus
    assert gpu.name == "NVIDIA A100-SXM4-80GB"
    assert gpu.uuid == "GPU-513536b6-7d19-9063-b049-1e69664bb298"
    assert gpu.mig_mode == "Enabled"
    assert [(d.gi_id, d.ci_id, d.memory_total_mib) for d in gpu.mig_devices] == [
        (3, 0, 19968.0), (4, 0, 19968.0), (5, 0, 19968.0), (6, 0, 19968.0)]
    assert [w.code for w in snap.warnings] == ["attached_gpus"]
    assert "4" in snap.warnings[0] and dict(snap.warnings[0].params) == {"attached": 4,
                                                                         "listed": 1}
    assert (snap.driver_version, snap.attached_gpus) == ("535.54.03", 4)
    assert snap.timestamp == datetime(2023, 8, 4, 11, 44, 30)
    assert _one(snap.log, "power_usage_w").value == 67.03
    assert _one(snap.log, "sm_clock_mhz").value == 1275.0
    assert _one(snap.log, "memory_temp_c").value == 44.0
    assert _one(snap.log, "gpu_util_frac").status == "not_available"  # N/A with MIG on
    assert snap.frame is snap.log.frame and snap.log.format == "nvidia-smi-q-xml"


def test_query_xml_tesla_t4_processes_and_ecc() -> None:
    snap = dobs.read_nvidia_smi_query(FIXTURES / "smi_qx_tesla_t4.xml")
    (gpu,) = snap.gpus
    assert snap.warnings == ()
    assert [(p.pid, p.type, p.name, p.used_memory_mib) for p in gpu.processes] == [
        (675, "G", "/usr/lib/xorg/Xorg", 22.0), (5762, "C", "python", 1005.0)]
    assert gpu.mig_devices == ()
    assert gpu.ecc["volatile.dram_uncorrectable"] == 0.0
    assert _one(snap.log, "power_limit_w").value == 70.0
    assert _one(snap.log, "gpu_util_frac").value == 0.0
    assert _one(snap.log, "remapped_rows_uncorrectable").reason == "N/A"


def test_query_text_h100_mig_under_load() -> None:
    """nvidia_gpu_exporter capture: ``nvidia-smi -q`` on an H100 with four MIG devices."""
    snap = dobs.read_nvidia_smi_query(FIXTURES / "smi_q_h100_mig.txt")
    (gpu,) = snap.gpus
    assert (gpu.name, gpu.mig_mode, gpu.pci_bus_id) == ("NVIDIA H100 80GB HBM3", "Enabled",
                                                        "00000000:00:09.0")
    assert [(d.gi_id, d.ci_id, d.memory_total_mib, d.sm_count) for d in gpu.mig_devices] == [
        (2, 0, 40448.0, 60), (3, 0, 20096.0, 32), (9, 0, 9984.0, 16), (10, 0, 9984.0, 16)]
    assert [(p.pid, p.name, p.used_memory_mib, p.gi_id, p.ci_id) for p in gpu.processes] == [
        (21180, "/root/tools/memhog", 2296.0, 2, 0), (21181, "/root/tools/memhog", 1272.0, 2, 0),
        (21198, "./gpu_burn", 7484.0, 2, 0)]
    assert gpu.clocks_event_reasons == ()
    assert snap.warnings == () and snap.log.format == "nvidia-smi-q"
    assert _one(snap.log, "power_usage_w").value == 432.21  # Average Power Draw
    assert _one(snap.log, "power_limit_w").value == 700.0
    assert _one(snap.log, "gpu_temp_c").value == 53.0
    assert _one(snap.log, "fb_used_mib").value == 11125.0


def test_query_active_reasons_from_a_real_file_with_one_reason_switched_on() -> None:
    xml = _text("smi_qx_tesla_t4.xml").replace(
        "<clocks_throttle_reason_sw_power_cap>Not Active</clocks_throttle_reason_sw_power_cap>",
        "<clocks_throttle_reason_sw_power_cap>Active</clocks_throttle_reason_sw_power_cap>")
    snap = dobs.parse_nvidia_smi_query(xml, source="t4.xml")
    assert snap.gpus[0].clocks_event_reasons == ("SwPowerCap",)
    assert _one(snap.log, "clocks_event_reasons").value == 0x4  # nvml.h SwPowerCap bit


@pytest.mark.parametrize(("text", "match", "kind"), [
    ('<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY a "b">]>\n<nvidia_smi_log/>\n',
     "declares entities", "xml"),
    ('<?xml version="1.0"?>\n<nvidia_smi_log>\n<gpu>\n</nvidia_smi_log>\n', r"q\.xml, line 4",
     "xml"),
    ("==============NVSMI LOG==============\n\nAttached GPUs : 0\n", "lists no GPU", "layout"),
    ("hello\n", r"q\.xml, line 1: not an nvidia-smi -q snapshot", "layout"),
])
def test_query_bad_files(text: str, match: str, kind: str) -> None:
    with pytest.raises(LogError, match=match) as err:
        dobs.parse_nvidia_smi_query(text, source="q.xml")
    assert err.value.kind == kind


# --- dcgm-exporter ----------------------------------------------------------------------------


def test_dcgm_real_readme_scrape_blank_is_missing_never_the_number() -> None:
    """dcgm-exporter README sample (Kubernetes labels), MEMORY_TEMP = DCGM_INT64 not supported."""
    log = dobs.read_dcgm_exporter(_text("dcgm_readme_k8s.prom"), source="readme.prom")
    assert _one(log, "sm_clock_mhz").value == 139.0
    assert _one(log, "DCGM_FI_DEV_MEM_CLOCK").value == 405.0
    temp = _one(log, "memory_temp_c")
    assert (temp.status, temp.reason) == ("not_supported", "DCGM blank (not supported)")
    assert math.isnan(temp.value)
    assert log.devices[0]["UUID"] == "GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52"


def test_dcgm_real_mig_scrapes_keep_each_mig_device_its_own_series() -> None:
    """dcgm-exporter issues #512 (H100) and #317 (A30): GPU_I_PROFILE / GPU_I_ID labels."""
    h100 = dobs.read_dcgm_exporter(_text("dcgm_h100_mig_issue512.prom"))
    assert sorted(set(h100.frame.metric)) == [
        "gr_engine_active_frac@mig:1g.10gb:7", "gr_engine_active_frac@mig:1g.10gb:8",
        "gr_engine_active_frac@mig:1g.10gb:9"]
    assert h100.devices[0]["modelName"] == "NVIDIA H100 80GB HBM3"
    assert h100.devices[0]["DCGM_FI_DRIVER_VERSION"] == "535.129.03"
    a30 = dobs.read_dcgm_exporter(_text("dcgm_a30_mig_issue317.prom"))
    assert len(a30.frame) == 5 and sorted(set(a30.frame.gpu)) == [0, 1]
    assert set(a30.frame[a30.frame.gpu == 1].metric) == {"gr_engine_active_frac@mig:1g.6gb:3"}


_BLANKS = [  # (field, value as printed, tidy metric, status, reason)
    ("DCGM_FI_PROF_SM_ACTIVE", "140737488355328.000000", "sm_active_frac", "not_available",
     "DCGM blank (blank)"),
    ("DCGM_FI_PROF_SM_OCCUPANCY", "140737488355329.000000", "sm_occupancy_frac",
     "not_available", "DCGM blank (not found)"),
    ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "140737488355330.000000", "tensor_active_frac",
     "not_supported", "DCGM blank (not supported)"),
    ("DCGM_FI_PROF_DRAM_ACTIVE", "140737488355331.000000", "dram_active_frac", "no_permission",
     "DCGM blank (no permission)"),
    ("DCGM_FI_DEV_GPU_TEMP", "2147483632", "gpu_temp_c", "not_available", "DCGM blank (blank)"),
    ("DCGM_FI_DEV_SM_CLOCK", "2147483634", "sm_clock_mhz", "not_supported",
     "DCGM blank (not supported)"),
    ("DCGM_FI_DEV_POWER_USAGE", "9223372036854775792", "power_usage_w", "not_available",
     "DCGM blank (blank)"),
    ("DCGM_FI_DEV_FB_USED", "9223372036854775795", "fb_used_mib", "no_permission",
     "DCGM blank (no permission)"),
]


def test_dcgm_every_blank_sentinel_integer_and_float_is_missing() -> None:
    """Constructed scrape: each DCGM sentinel of dcgm_structs.h (DCGM 4.6.0) once, printed as
    dcgm-exporter prints it (floats with six decimals), next to one ordinary value."""
    text = "".join(f'{name}{{gpu="0"}} {value}\n' for name, value, *_ in _BLANKS)
    text += 'DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0"} 0.731250\n'
    frame = dobs.read_dcgm_exporter(text).frame.set_index("metric")
    assert frame.loc["gr_engine_active_frac", "value"] == 0.73125
    for name, _, key, status, reason in _BLANKS:
        assert frame.loc[key, "status"] == status, name
        assert frame.loc[key, "reason"] == reason, name
        assert math.isnan(frame.loc[key, "value"]), name
    # the float blank alone (a profiling field's first scrape): this fails if the FP64 entry
    # of the sentinel table is deleted
    only = dobs.read_dcgm_exporter('DCGM_FI_PROF_SM_ACTIVE{gpu="0"} 140737488355328.000000\n')
    row = _one(only, "sm_active_frac")
    assert row.reason == "DCGM blank (blank)" and math.isnan(row.value)
    assert dcgm.dcgm_blank(140737488355327.0) is None  # one below: a number
    # an int64 sentinel printed as a float (2**63 for all four kinds): a blank, kind unknown
    assert dcgm.dcgm_blank(9.223372036854776e18) == (Status.NOT_AVAILABLE, "DCGM blank")


def test_dcgm_label_escapes_are_decoded_by_prometheus_client() -> None:
    text = ('DCGM_FI_DEV_GPU_UTIL{gpu="0",modelName="two\\nlines",Hostname="a\\\\b",'
            'UUID="q\\"x"} 7\n')
    log = dobs.read_dcgm_exporter(text)
    assert log.devices[0]["modelName"] == "two\nlines"
    assert log.devices[0]["Hostname"] == "a\\b"
    assert log.devices[0]["UUID"] == 'q"x'


def test_read_log_detects_every_format_from_real_files() -> None:
    expected = {
        "smi_query_gpu_tee.csv": "nvidia-smi-csv", "dmon_mutc_TD.txt": "nvidia-smi-dmon",
        "dmon_h100_mig.txt": "nvidia-smi-dmon", "smi_q_h100_mig.txt": "nvidia-smi-q",
        "smi_qx_tesla_t4.xml": "nvidia-smi-q-xml", "dcgm_readme_k8s.prom": "dcgm-exporter",
    }
    for name, fmt in expected.items():
        assert dobs.detect_format(_text(name)) == fmt, name
        assert dobs.read_log_file(FIXTURES / name).format == fmt, name
