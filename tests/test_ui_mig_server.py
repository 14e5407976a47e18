"""Lesson 02's board, our server (issue 26): a pasted or uploaded nvidia-smi listing is shown on
the board with its free placements; a listing that cannot be shown is refused in Korean and the
board keeps its layout. Listings are the real captures of tests/fixtures/nvidia-smi/SOURCES.md;
expected layouts are read off them by hand.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

import pytest

from labkit.ui import mig as ui

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "nvidia-smi"
MODIFIED = datetime(2026, 12, 2)
DCGM138 = (FIXTURES / "a100_80gb_lgi_two_gpus_dcgm138.txt").read_text()


def _plain(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


@pytest.fixture
def board() -> ui.BoardApp:
    return ui.board_app()


def _gis(board: ui.BoardApp) -> list[tuple[str, int]]:
    return sorted((gi.profile.name, gi.start) for gi in board.mig_layout.instances)


def test_pasted_lgi_is_shown_with_exact_placements(board: ui.BoardApp) -> None:
    server = board.server
    server.model_select.value = "A100-80GB"
    assert server.read(DCGM138)
    assert board.mig_layout.model.short_name == "A100-80GB"
    assert _gis(board) == [("1g.10gb", 2), ("1g.10gb", 3), ("2g.20gb", 0), ("3g.40gb", 4)]
    shown = _plain(server.message.value)
    assert "Start:Size 칸에서 그대로 읽었습니다" in shown
    assert "없음 (이 GPU는 가득 찼습니다)" in shown
    assert [v for _, v in server.gpu_select.options] == [0, 1]
    assert server.gpu_select.layout.display is None  # two GPUs: the choice is shown
    server.gpu_select.value = 1
    assert "GPU 1 (" in _plain(server.message.value)


def test_the_free_placements_are_named(board: ui.BoardApp) -> None:
    one_less = "\n".join(ln for ln in DCGM138.splitlines()
                         if not ln.startswith(("|   1 ", "|   0  MIG 1g.10gb         19       10")))
    board.server.model_select.value = "A100-80GB"
    assert board.server.read(one_less)
    # 2g.20gb on units 0-1, 1g.10gb on 2, 3g.40gb on 4-7: unit 3 and one compute slice are left
    assert "1g.10gb: 유닛 3 · 1g.10gb+me: 유닛 3" in _plain(board.server.message.value)


def test_a_listing_without_the_board_is_refused_in_korean_and_the_board_kept(
        board: ui.BoardApp) -> None:
    before = board.mig_layout.key()
    assert not board.server.read(DCGM138)
    shown = _plain(board.server.message.value)
    assert "여러 GPU 모델(A100-80GB, H100-80GB, H100-PCIE)" in shown and "GPU 모델" in shown
    assert not re.search(r"\b(several|boards|model=)\b", shown)
    assert board.mig_layout.key() == before


def test_L_alone_is_shown_and_says_the_placements_are_inferred(board: ui.BoardApp) -> None:
    text = (FIXTURES / "a100_80gb_L_four_gpus_telegraf5812.txt").read_text()
    assert board.server.read(text)
    assert _gis(board) == [("1g.20gb", s) for s in (0, 2, 4, 6)]
    assert "짐작했습니다" in _plain(board.server.message.value)


def test_an_uploaded_listing_is_read_and_the_bytes_dropped(board: ui.BoardApp) -> None:
    data = (FIXTURES / "a100_80gb_L_7x1g_datadog33120.txt").read_bytes()
    board.server.upload.value = ({"name": "L.txt", "type": "text/plain", "size": len(data),
                                  "content": memoryview(data), "last_modified": MODIFIED},)
    assert _gis(board) == [("1g.10gb", s) for s in range(7)]
    assert "nvidia-smi -L" in board.server.text.value and board.server.upload.value == ()


def test_an_uploaded_binary_is_refused_in_korean(board: ui.BoardApp) -> None:
    data = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
    board.server.upload.value = ({"name": "shot.txt", "type": "text/plain", "size": len(data),
                                  "content": memoryview(data), "last_modified": MODIFIED},)
    assert "글자 파일이 아닙니다" in _plain(board.server.message.value)


@pytest.mark.parametrize(("text", "words"), [
    ("", "MIG 출력 줄"),
    ("No MIG-enabled devices found.", "MIG 모드를 켜야"),
    ("GPU 0: NVIDIA GeForce RTX 4090 (UUID: GPU-1)\n  MIG 1g.10gb     Device  0: (UUID: MIG-1)",
     "MIG 표를 갖고 있지 않은 GPU"),
    ((FIXTURES / "a100_80gb_lgip_in_use_migparted97.txt").read_text(), "이미 쓰는 GPU 인스턴스"),
])
def test_bad_listings_get_their_korean_reason(board: ui.BoardApp, text: str, words: str) -> None:
    assert not board.server.read(text)
    assert words in _plain(board.server.message.value)


A30_LGI = (FIXTURES / "a30_lgi_4x1g_summerlo.txt").read_text()
A30_LGIPP = (FIXTURES / "a30_lgipp_summerlo.txt").read_text()


@pytest.mark.parametrize(("text", "model", "words"), [
    (A30_LGI.replace("0:1", "-1:1", 1), "A30",
     "GPU 0, 7번째 줄: nvidia-smi 표의 줄인데 읽을 수 없는 모양입니다: |   0  MIG 1g.6gb"),
    (A30_LGI, "A100-80GB", "GPU 0, 7번째 줄: 고른 GPU 모델과 출력이 맞지 않습니다 "
     "(출력 / 고른 모델: 1g.6gb (ID 14) / A100-80GB)"),
    (A30_LGIPP.replace("{0,2}:2", "{0,1}:2"), "",
     "GPU 0, 4번째 줄: 배치 목록(-lgipp)이 labkit이 아는 GPU의 배치와 맞지 않습니다 "
     "(출력 / 그 GPU의 배치: Profile ID 5 {0,1}:2 / A30: Profile ID 5 {0,2}:2)"),
    ("GPU 0: NVIDIA L40S (UUID: GPU-1)\n", "", "이 GPU(NVIDIA L40S)에는 MIG가 없습니다"),
    ("| NVIDIA-SMI 570.169   Driver Version: 570.169   CUDA Version: 12.8 |\n", "",
     "nvidia-smi의 출력으로 보이는데"),
])
def test_refusals_name_the_line_and_what_was_read_in_korean(
        board: ui.BoardApp, text: str, model: str, words: str) -> None:
    board.server.model_select.value = model
    assert not board.server.read(text)
    said = _plain(board.server.message.value)
    assert words in said
    assert "line" not in said and "sudo nvidia-smi -i 0 -mig 1" not in said
    assert not re.search(r"[:(] *\)|: *$", said)  # nothing empty after a colon


def test_lgipp_alone_is_no_green_free_list(board: ui.BoardApp) -> None:
    """-lgipp names the board, not its GIs: an empty board with a warning, never "✔ free"."""
    assert board.server.read(A30_LGIPP)
    message = board.server.message.value
    assert "✔" not in message and "⚠" in message
    assert "어떤 GPU 인스턴스가 있는지가 없어" in _plain(message)
    assert "아직 놓을 수 있는 자리" not in _plain(message)


def test_the_gpu_choice_is_as_wide_as_its_names(board: ui.BoardApp) -> None:
    text = "".join(f"GPU {g}: NVIDIA RTX PRO 6000 Blackwell Server Edition (UUID: GPU-{g})\n"
                   f"  MIG 4g.96gb     Device  0: (UUID: MIG-{g})\n" for g in range(2))
    assert board.server.read(text)
    labels = [label for label, _ in board.server.gpu_select.options]
    assert labels[1] == "GPU 1: NVIDIA RTX PRO 6000 Blackwell Server Edition (GPU 인스턴스 1개)"
    assert board.server.gpu_select.layout.width == "auto"  # not cut at a fixed width
