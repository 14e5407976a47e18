"""Lesson 02 as a voila app in a real browser (issue 26): a new operator pastes a real
``nvidia-smi mig -lgi`` (NVIDIA/go-nvml issue #146's H100, tests/fixtures/nvidia-smi) into the
board's "our server" box and sees that server's layout, with the free placements."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.conftest import assert_no_traceback, open_lesson, screenshot

pytestmark = pytest.mark.browser

LGI = (Path(__file__).resolve().parents[1] / "fixtures" / "nvidia-smi"
       / "h100_lgi_3g_2g_2g.txt").read_text()


def test_pasted_lgi_shows_the_servers_layout(page, voila_url):  # type: ignore[no-untyped-def]
    open_lesson(page, voila_url, "02_mig.ipynb")
    page.wait_for_selector(".lk-board-grid div")
    page.get_by_text("우리 서버의 MIG 구성 불러오기").first.click()
    page.locator(".lk-server-text textarea").fill(LGI)
    page.locator("button.lk-server-read").click()
    # -lgi alone does not name the board: the box asks which one, in Korean
    page.wait_for_function(
        "() => document.querySelector('.lk-server-message').innerText.includes('GPU 모델')")
    page.select_option(".lk-server-model select", value="H100-80GB")
    page.locator("button.lk-server-read").click()
    page.wait_for_function("() => document.querySelector('.lk-server-message').innerText"
                           ".includes('그대로 읽었습니다')")
    grid = page.locator(".lk-board-grid").inner_text()
    assert grid.count("2g.20gb") == 2 and "3g.40gb" in grid
    assert "0:2" in grid and "2:2" in grid and "4:4" in grid  # go-nvml#146's Start:Size
    message = page.locator(".lk-server-message").inner_text()
    assert "GPU 2" in message and "가득 찼습니다" in message  # 2+2+4 units, 2+2+3 slices
    assert_no_traceback(page)
    screenshot(page, "02_mig_server")
