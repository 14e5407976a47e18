"""Lesson 01 in voila, uploads as an operator makes them: a 15 MB nvidia-smi log (which used to
vanish over the websocket's 8 MiB message limit) arrives in chunks and replays; a file over the
cap gets a Korean message beside the upload control (size, limit, how to cut it) and the page
stays alive; no control carries ``title="null"``."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from labkit.ui.observe import MAX_UPLOAD_BYTES
from tests.browser.conftest import assert_no_traceback, open_lesson, screenshot

pytestmark = pytest.mark.browser

FIXTURES = Path(__file__).parents[1] / "fixtures" / "observe"


def _day_log(path: Path) -> int:
    """Write a real capture's rows repeated past 15 MB; return the number of data rows."""
    head, *rows = (FIXTURES / "smi_query_gpu_h100.csv").read_bytes().splitlines(keepends=True)
    copies = 15_000_000 // len(b"".join(rows)) + 1
    stamp = b"2026/07/14 08:12:53.353"  # one reading a second (a repeated moment is refused)
    start = datetime(2026, 7, 14, 8, 12, 53, 353000)
    path.write_bytes(head + b"".join(
        row.replace(stamp, (start + timedelta(seconds=k)).strftime(
            "%Y/%m/%d %H:%M:%S.%f")[:-3].encode()) for k in range(copies) for row in rows))
    return len(rows) * copies


def test_observe_upload_big_files(page, voila_url, tmp_path):  # type: ignore[no-untyped-def]
    open_lesson(page, voila_url, "01_observe.ipynb")
    picker = page.locator(".lk-replay-upload input[type=file]")
    picker.wait_for(state="attached")

    too_big = tmp_path / "week.csv"
    with too_big.open("wb") as fh:  # sparse: the browser reads only its size
        fh.truncate(MAX_UPLOAD_BYTES + 1)
    picker.set_input_files(str(too_big))
    page.wait_for_function(
        "() => { const e = document.querySelector('.lk-replay-upload-error');"
        " return e && e.innerText.includes('week.csv') && e.innerText.includes('head -n'); }",
        timeout=30_000)

    day = tmp_path / "day.csv"
    _day_log(day)
    assert day.stat().st_size > 15_000_000
    picker.set_input_files(str(day))
    page.wait_for_function(
        "() => document.querySelector('.lk-replay-info').innerText.includes('day.csv')"
        " && document.querySelector('.lk-replay-upload-error').innerText.trim() === ''",
        timeout=120_000)
    assert page.locator(".lk-replay [title='null']").count() == 0
    assert page.locator(".lk-wall [title='null']").count() == 0
    assert_no_traceback(page)
    screenshot(page, "observe_upload")
