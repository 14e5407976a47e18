"""Lesson 01's upload panel: every reader error a student can meet is shown in Korean.

One row per reader error kind (the bad inputs of tests/test_data_observe*.py, as a student would
upload them, and the real captures broken the way operators' files break). For each, the panel's
rendered text (error line, info, preview, snapshot) is scanned: nothing but Korean, the file
name, values echoed from the file (in quotes) and technical terms of the field remain.
"""

from __future__ import annotations

import codecs
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from labkit.observe import LogError
from labkit.ui import observe as ui
from labkit.ui.observe.errors import READER_PATTERNS, reader_error_text, row_reason_text

FIXTURES = Path(__file__).parent / "fixtures" / "observe"
#: Technical terms allowed in Korean text (the field's names; English in parentheses after
#: Korean is the course's rule for a term's first use).
TERMS = {
    "nvidia", "smi", "dmon", "csv", "utf", "bom", "gpu", "mig", "dcgm", "exporter",
    "prometheus", "xml", "nvsmi", "log", "iso", "powershell", "vs", "code", "out", "file",
    "encoding", "utf8", "query", "noheader", "timestamp", "header", "offset", "sample", "scrape",
    "label", "index", "interval_s", "timestamp_s", "labkit", "epoch", "nvidia_smi_log",
    "entity", "x", "q", "s", "gb", "segments", "unit", "metric", "value", "status", "reason",
    "doctype", "w", "idx", "pwr", "sm", "mhz", "utilization", "power", "draw", "clocks",
    "util", "activity", "foo", "bar", "baz", "qux", "gtemp", "mtemp", "h100", "data", "traces",
    "utc", "nul"}


def _upload(name: str, data: bytes) -> tuple[dict[str, Any], ...]:
    return ({"name": name, "type": "text/plain", "size": len(data),
             "content": memoryview(data), "last_modified": datetime(2026, 12, 1)},)


def _plain(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&lt;", "<").replace(
        "&gt;", ">").replace("&#x27;", "'").replace("&quot;", '"').replace("&amp;", "&").strip()


def english_left(text: str, names: tuple[str, ...] = ()) -> list[str]:
    """Return the words of ``text`` that are English prose (not a term, a name or an echo)."""
    for name in sorted(names, key=len, reverse=True):
        text = text.replace(name, " ")
    # the header's fields labkit skipped: names from the file's own header line
    text = re.sub(r"지표로 읽지 않은 열 \(숫자가 아니거나 nvidia-smi 필드가 아님\): [^가-힣]*", " ",
                  text)
    text = re.sub(r"'[^']*'|\"[^\"]*\"|“[^”]*”|<[^>]*>", " ", text)  # echoes of the file
    # identifiers of the field: nvidia-smi fields (utilization.gpu), DCGM names (DCGM_FI_...)
    text = re.sub(r"\b[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)+\b|\bDCGM_[A-Z0-9_]+\b", " ", text)
    words = re.findall(r"[A-Za-z_][A-Za-z_0-9]*", text)
    return [w for w in words if w.lower() not in TERMS]


def _t4_cut() -> bytes:
    xml = (FIXTURES / "smi_qx_tesla_t4.xml").read_text(encoding="utf-8")
    return xml[: len(xml) // 2].encode()


BAD_UPLOADS: list[tuple[str, bytes, str]] = [  # (file name, bytes, a word of the Korean headline)
    ("empty.csv", b"", "형식"),
    ("f.csv", b"# source: x\n\n", "빈 로그"),
    ("notes.csv", b"hello world\nthis is not a log\n", "첫 줄"),
    ("f.csv", b"timestamp, utilization.gpu [%]\n", "데이터 행이 하나도 없습니다"),
    ("f.csv", b"timestamp, utilization.gpu [%]\nfoo, bar\nbaz, qux\n", "2개 중 2개"),
    ("f.csv", b"timestamp, timestamp\n2024/06/01 10:00:00, 2024/06/01 10:00:00\n", "두 번"),
    ("f.csv", b"timestamp, utilization.gpu [%]\n2024/06/01 10:00:00, 50 W\n"
              b"2024/06/01 10:00:01, 60 W\n", "단위"),
    ("f.csv", b"timestamp, index, utilization.gpu [%]\nyesterday, 0, 5 %\nnoon, 0, 6 %\n",
     "시각"),
    ("f.csv", b"timestamp, utilization.gpu [%]\n2024-06-01T10:00:00+09:00, 5 %\n"
              b"2024-06-01T10:00:01, 6 %\n", "오프셋"),
    ("s.prom", b"# only comments\n", "빈 로그"),
    ("s.prom", b"DCGM_FI_DEV_GPU_TEMP{gpu=\"0\"} 40 1000\nDCGM_FI_DEV_GPU_TEMP{gpu=\"0\"} 41\n",
     "시각"),
    ("s.prom", b"DCGM_FI_DEV_GPU_TEMP{UUID=\"x\"} 40\nDCGM_FI_DEV_GPU_TEMP{UUID=\"y\"} 41\n",
     "레이블"),
    ("d.txt", b"    0   100    40\n", "형식"),
    ("d.txt", b"# gpu   pwr\n# Idx     W\n", "dmon 데이터 줄이 없습니다"),
    ("d.txt", b"# gpu   pwr\n    0   1   2\n    0   1   2\n", "2개 중 2개"),
    ("q.xml", b'<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY a "b">]>\n<nvidia_smi_log/>\n',
     "엔티티"),
    ("q.xml", b'<?xml version="1.0"?>\n<nvidia_smi_log>\n<gpu>\n</nvidia_smi_log>\n',
     "올바른 XML"),
    ("q.txt", b"==============NVSMI LOG==============\n\nAttached GPUs : 0\n", "GPU가 하나도"),
    ("t4_cut.xml", _t4_cut(), "XML"),
    ("ps.csv", codecs.BOM_UTF16_LE[:1] + b"\xff\xfe\x00garbage", "인코딩"),
    ("bin.csv", b"\xff\xfe\x00garbage", "형식"),  # a UTF-16 BOM, then no log
    ("bin.log", b"abc\x00def\n", "인코딩"),
    ("labkit.csv", b"timestamp_s,gpu,metric\n0,0,x\n", "형식"),
    ("cells.csv", (FIXTURES / "smi_query_gpu_h100.csv").read_bytes() + b"1, 2\n", ""),
]


@pytest.mark.parametrize(("name", "data", "headline"), BAD_UPLOADS,
                         ids=[f"{k}-{n}" for k, (n, _, _) in enumerate(BAD_UPLOADS)])
def test_every_reader_error_in_the_panel_is_korean(name: str, data: bytes,
                                                   headline: str) -> None:
    app = ui.replay_app()
    app.upload.value = _upload(name, data)
    shown = " ".join(_plain(w.value) for w in (app.error, app.info, app.upload_error))
    assert headline in shown
    if app.log_import is None or app.log_import.source != name:  # refused: says where
        assert name in _plain(app.upload_error.value)  # beside the upload control
        assert app.error.value == ""
    assert english_left(shown, (name, "sim-h100_dcgm-exporter_scenarios.prom")) == []
    app.close()


def test_every_pattern_has_a_catalog_sentence_and_the_unknown_one_is_korean() -> None:
    from labkit.i18n import KO

    assert all(f"observe.reader.{key}" in KO for key, _ in READER_PATTERNS)
    assert row_reason_text("something nobody wrote") == "이 내용을 읽을 수 없습니다."
    text = reader_error_text(ValueError("odd.csv, line 7: a brand new English failure"),
                             source="odd.csv")
    assert text == "odd.csv 7번째 줄: 이 내용을 읽을 수 없습니다."


def test_reader_error_text_nests_the_first_problem() -> None:
    err = ValueError("f.csv, line 2: 2 of 2 data rows cannot be read (unknown layout?); "
                     "first problem: utilization.gpu: not a number: 'bar'")
    assert reader_error_text(err) == (
        "f.csv 2번째 줄: 데이터 행 2개 중 2개를 읽을 수 없습니다 (형식을 모르는 로그일 수 "
        "있습니다). 첫 문제 — utilization.gpu: 숫자가 아닙니다: 'bar'")


def test_reader_error_text_reads_a_file_name_with_a_colon() -> None:
    err = LogError("run: 2 .csv: no data rows", kind="layout", source="run: 2 .csv")
    assert reader_error_text(err) == "run: 2 .csv: 데이터 행이 하나도 없습니다."
