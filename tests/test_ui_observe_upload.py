"""Lesson 01's log upload: files travel in chunks under the websocket's message limit, an
over-size file is refused in the browser with a Korean message beside the control (its size,
the limit, how to cut it), and the kernel checks every chunk message as untrusted.

The browser half is tests/browser/test_observe_upload_app.py; here the messages the widget's ES
module sends (``{"kind": "start" | "chunk" | "too_large", ...}``) are fed to the kernel side.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from labkit.ui import observe as ui
from labkit.ui.observe.chunked_upload import CHUNK_BYTES, ChunkedUpload

FIXTURES = Path(__file__).parent / "fixtures" / "observe"
#: labkit's voila and the class hub close a websocket on a message over this (labkit.serve).
WEBSOCKET_LIMIT = 8 * 1024 * 1024


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def _send(widget: ChunkedUpload, name: str, data: bytes, chunk: int = CHUNK_BYTES) -> None:
    """Send ``data`` as the ES module does: start, then one buffer per chunk."""
    count = max(1, math.ceil(len(data) / chunk))
    widget._handle_custom_msg({"kind": "start", "name": name, "size": len(data),
                               "count": count}, [])
    for i in range(count):
        widget._handle_custom_msg({"kind": "chunk", "index": i},
                                  [memoryview(data[i * chunk:(i + 1) * chunk])])


def test_the_cap_holds_a_day_of_logs_and_chunks_fit_the_websocket() -> None:
    # a day of 1 Hz nvidia-smi dmon on 8 GPUs: 691,200 lines of ~65 bytes (issue 16)
    assert ui.MAX_UPLOAD_BYTES >= 691_200 * 65
    assert CHUNK_BYTES < WEBSOCKET_LIMIT < ui.MAX_UPLOAD_BYTES


def test_a_15_mb_log_uploads_in_chunks_and_replays() -> None:
    """The operator trial's 15 MB file (it vanished through FileUpload): a real capture's rows
    repeated to 15 MB."""
    head, *rows = (FIXTURES / "smi_query_gpu_h100.csv").read_bytes().splitlines(keepends=True)
    copies = 15_000_000 // len(b"".join(rows)) + 1
    stamp = b"2026/07/14 08:12:53.353"  # one reading a second (a repeated moment is refused)
    start = datetime(2026, 7, 14, 8, 12, 53, 353000)
    data = head + b"".join(
        row.replace(stamp, (start + timedelta(seconds=k)).strftime(
            "%Y/%m/%d %H:%M:%S.%f")[:-3].encode()) for k in range(copies) for row in rows)
    assert len(data) > 15_000_000
    app = ui.replay_app()
    _send(app.upload, "day.csv", data)
    assert app.log_import is not None and app.log_import.source == "day.csv"
    assert app.log_import.rows == len(rows) * copies  # every row read
    assert _text(app.upload_error.value) == "" and _text(app.error.value) == ""
    assert app.upload.value == ()  # the bytes are dropped after reading
    app.close()


def test_an_over_size_file_is_refused_beside_the_control_in_korean() -> None:
    app = ui.replay_app()
    before = app.log_import
    app.upload._handle_custom_msg({"kind": "too_large", "name": "week.csv",
                                   "size": 300_000_000}, [])
    shown = _text(app.upload_error.value)
    assert "week.csv" in shown and "300.0 MB" in shown and "67.1 MB" in shown
    assert "head -n" in shown and "-l 5" in shown and "dmon -c" in shown
    assert app.log_import is before  # the last good log stays
    app.close()


@pytest.mark.parametrize("messages", [
    # a start that lies about its size: the kernel checks it too
    [({"kind": "start", "name": "x.csv", "size": 10**12, "count": 10**6}, [])],
    # a chunk out of order
    [({"kind": "start", "name": "x.csv", "size": 10, "count": 1}, []),
     ({"kind": "chunk", "index": 3}, [memoryview(b"0123456789")])],
    # more bytes than announced
    [({"kind": "start", "name": "x.csv", "size": 4, "count": 1}, []),
     ({"kind": "chunk", "index": 0}, [memoryview(b"0123456789")])],
    # a count that does not fit the size
    [({"kind": "start", "name": "x.csv", "size": 10, "count": 7}, [])],
    # garbage
    [({"kind": "start", "name": "x.csv", "size": "big", "count": True}, [])],
])
def test_forged_chunk_messages_are_dropped_with_a_korean_message(
        messages: list[tuple[dict[str, Any], list[Any]]]) -> None:
    app = ui.replay_app()
    before = app.log_import
    for content, buffers in messages:
        app.upload._handle_custom_msg(content, buffers)
    assert app.log_import is before
    assert app.upload.value == ()
    assert _text(app.upload_error.value) != ""
    app.close()


def test_chunks_without_a_start_are_ignored() -> None:
    widget = ChunkedUpload(description="x", accept=".csv", max_bytes=100)
    widget._handle_custom_msg({"kind": "chunk", "index": 0}, [memoryview(b"abc")])
    widget._handle_custom_msg("not a dict", [])
    assert widget.value == () and widget.refused == {}


#: issue 16's trial file 97: a --query-gpu log (the units of nvidia-smi 550) in which one line
#: came through a wrapper that wrote ``98 percent`` / ``679.93 Watts``.
_WRAPPED = (
    "timestamp, name, pci.bus_id, utilization.gpu [%], power.draw [W], power.limit [W]\n"
    "2026-11-30T09:04:35+09:00, NVIDIA H100 80GB HBM3, 00000000:18:00.0, 99 %, 685.49 W, "
    "700.00 W\n"
    "2026-11-30T09:04:40+09:00, NVIDIA H100 80GB HBM3, 00000000:18:00.0, 98 percent, "
    "679.93 Watts, 700.00 W\n"
    "2026-11-30T09:04:45+09:00, NVIDIA H100 80GB HBM3, 00000000:18:00.0, 95 %, 660.42 W, "
    "700.00 W\n")


def test_a_wrapper_unit_marks_its_line_unread_and_the_log_replays() -> None:
    app = ui.replay_app()
    app.upload.value = _upload_value("wrapped.csv", _WRAPPED.encode())
    assert app.log_import is not None and app.log_import.source == "wrapped.csv"
    assert [u.line for u in app.log_import.unparsed] == [3]
    assert "읽지 못한 줄 1개" in _text(app.info.value)
    assert _text(app.upload_error.value) == "" and _text(app.error.value) == ""
    assert app.trace is not None and len(app.trace.times) == 2
    app.close()


def test_an_unforeseen_reader_error_is_shown_in_korean_beside_the_upload(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import labkit.data.observe as data_observe

    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise KeyError("a reader's bug")

    app = ui.replay_app()
    before = app.log_import
    monkeypatch.setattr(data_observe, "read_log", broken)
    app.upload.value = _upload_value("any.csv", _WRAPPED.encode())
    shown = _text(app.upload_error.value)
    assert "any.csv" in shown and "예상하지 못한 문제" in shown
    assert app.log_import is before and _text(app.error.value) == ""
    app.close()


def _upload_value(name: str, data: bytes) -> tuple[dict[str, Any], ...]:
    return ({"name": name, "type": "text/csv", "size": len(data), "content": memoryview(data)},)


def test_the_size_limit_shown_is_the_constant_and_the_lesson_does_not_hard_code_one() -> None:
    # issue 16: lesson 01 said "최대 2 MB" while the cap was 64 MiB
    app = ui.replay_app()
    limit = f"{ui.MAX_UPLOAD_BYTES / 1e6:,.1f} MB"
    assert limit == "67.1 MB" and f"최대 {limit}" in _text(app.upload_hint.value)
    app.close()
    lesson = (Path(__file__).parents[1] / "notebooks" / "01_observe.ipynb").read_text("utf-8")
    assert not re.search(r"최대 [\d.,]+ ?[MK]i?B", lesson)


def _wrapper_upload(gpu_name: str) -> bytes:
    """A wrapper script's log (issue 26): its own GPU column counts 0..3, ``index`` is 0."""
    rows = [f"timestamp,{gpu_name},index,memory.used,power.draw,temperature.gpu"]
    rows += [f"2025/03/04 10:00:0{t}.000,{g},0,{1000 + g} MiB,{300 + g}.00 W,{40 + g}"
             for t in range(3) for g in range(4)]
    return ("\n".join(rows) + "\n").encode()


def test_a_doubled_log_is_refused_and_the_picker_names_the_gpu_column() -> None:
    app = ui.replay_app()
    _send(app.upload, "wrapper.csv", _wrapper_upload("slot"))
    shown = _text(app.upload_error.value)
    assert "2번째 줄과 같은 순간" in shown and "GPU 열 index" in shown and "repeats" not in shown
    assert app.log_import is None or app.log_import.source != "wrapper.csv"
    assert app.gpu_column.layout.display != "none"
    assert "slot" in [v for _, v in app.gpu_column.options]
    app.gpu_column.value = "slot"  # the operator says which column is the GPU
    assert app.log_import is not None and app.log_import.source == "wrapper.csv"
    assert sorted(int(g) for g in app.log_import.frame.gpu.unique()) == [0, 1, 2, 3]
    assert "'slot' 열로 구분" in _text(app.info.value)
    _send(app.upload, "other.csv", _wrapper_upload("gpu"))  # the file says it: no picker
    assert app.log_import.source == "other.csv" and app.log_import.gpu_column == "gpu"
    assert app.gpu_column.layout.display == "none" and app.gpu_column.value == ""
    app.close()
