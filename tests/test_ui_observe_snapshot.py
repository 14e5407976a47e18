"""Lesson 01's `nvidia-smi -q` snapshot panel speaks Korean: every nvidia-smi word (MIG mode,
process type, clocks-event reasons, remapped-row counters, N/A) goes through the catalog with
nvidia-smi's own term in parentheses.

Inputs: real captures (tests/fixtures/observe/SOURCES.md), and the T4 capture edited the way
a GPU changes (a power cap active, rows remapped, MIG changing at the next reset).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from labkit.data.observe import parse_nvidia_smi_query, read_nvidia_smi_query
from labkit.ui.observe import snapshot_html

FIXTURES = Path(__file__).parent / "fixtures" / "observe"
#: nvidia-smi's terms, allowed inside parentheses after their Korean words, and names.
ALLOWED = {"GPU", "UUID", "PCI", "MIG", "mode", "GI", "CI", "SM", "MiB", "ECC", "volatile",
           "remapped", "rows", "clocks", "event", "reasons", "nvidia", "smi", "q", "PID",
           "Enabled", "Disabled", "N", "A", "C", "G", "i"}  # i: the nvidia-smi -i option


def _plain(html: str) -> str:
    return re.sub(r"&nbsp;", " ", re.sub(r"<[^>]+>", " ", html))


def _english(text: str, names: tuple[str, ...]) -> list[str]:
    for name in names:
        text = text.replace(name, " ")
    text = re.sub(r"\([A-Za-z_]+(?: [A-Z][a-z]+)*\)", " ", text)  # nvidia-smi's term after
    return [w for w in re.findall(r"[A-Za-z_]+", text) if w not in ALLOWED]


def _t4_changed() -> str:
    xml = (FIXTURES / "smi_qx_tesla_t4.xml").read_text(encoding="utf-8")
    xml = xml.replace(
        "<clocks_throttle_reason_sw_power_cap>Not Active</clocks_throttle_reason_sw_power_cap>",
        "<clocks_throttle_reason_sw_power_cap>Active</clocks_throttle_reason_sw_power_cap>")
    return xml.replace("<remapped_rows>N/A</remapped_rows>",
                       "<remapped_rows><remapped_row_corr>2</remapped_row_corr>"
                       "<remapped_row_unc>1</remapped_row_unc>"
                       "<remapped_row_pending>No</remapped_row_pending>"
                       "<remapped_row_failure>No</remapped_row_failure></remapped_rows>")


def _names(snap: object) -> tuple[str, ...]:
    out: list[str] = []
    for g in snap.gpus:  # type: ignore[attr-defined]
        out += [g.name, g.uuid, g.pci_bus_id, *(p.name for p in g.processes)]
    return tuple(sorted(out, key=len, reverse=True))


@pytest.mark.parametrize("name", ["smi_q_h100_mig.txt", "smi_qx_a100_mig.xml",
                                  "smi_qx_tesla_t4.xml"])
def test_snapshot_of_real_captures_has_no_english_left(name: str) -> None:
    snap = read_nvidia_smi_query(FIXTURES / name)
    shown = _plain(snapshot_html(snap))
    assert _english(shown, _names(snap)) == []
    assert "N/A" not in shown.replace("(N/A)", "")  # N/A only as the term after its Korean


def test_snapshot_terms_in_korean_with_the_nvidia_smi_term() -> None:
    snap = parse_nvidia_smi_query(_t4_changed(), source="t4.xml")
    shown = _plain(snapshot_html(snap))
    assert "전력 한도에 걸림 (SwPowerCap)" in shown
    assert "정정 가능 오류로 바꾼 행(remapped_row_corr) 2" in shown
    assert "정정 불가 오류로 바꾼 행(remapped_row_unc) 1" in shown
    assert "그래픽(G) 프로세스" in shown and "계산(C) 프로세스" in shown
    assert "지원하지 않음(N/A)" in shown
    assert _english(shown, _names(snap)) == []


def test_snapshot_mig_pending_warning_in_korean() -> None:
    xml = (FIXTURES / "smi_qx_a100_mig.xml").read_text(encoding="utf-8").replace(
        "<pending_mig>Enabled</pending_mig>", "<pending_mig>Disabled</pending_mig>")
    snap = parse_nvidia_smi_query(xml, source="a100.xml")
    shown = _plain(snapshot_html(snap))
    assert "지금은 켜짐(Enabled)이고, GPU 리셋 후에는 꺼짐(Disabled)이 됩니다" in shown
    assert _english(shown, _names(snap)) == []


def test_snapshot_text_remapped_rows_in_korean_with_nvidia_smi_words() -> None:
    # issue 16: the -q text's counters showed as the reader's keys (correctable_error, ...)
    text = (FIXTURES / "smi_q_h100_mig.txt").read_text(encoding="utf-8").replace(
        "    Remapped Rows                                      : N/A\n",
        "    Remapped Rows\n        Correctable Error                 : 3\n"
        "        Uncorrectable Error               : 1\n        Pending                 "
        "          : No\n        Remapping Failure Occurred        : No\n")
    snap = parse_nvidia_smi_query(text, source="h100.txt")
    shown = _plain(snapshot_html(snap))
    assert "정정 가능 오류로 바꾼 행(Correctable Error) 3" in shown
    assert "정정 불가 오류로 바꾼 행(Uncorrectable Error) 1" in shown
    assert "리셋 후 바꿀 행(Pending) 0" in shown
    assert "행 바꾸기 실패(Remapping Failure Occurred) 0" in shown
    for key in ("correctable_error", "uncorrectable_error", "remapping_failure_occurred"):
        assert key not in shown  # the reader's keys are not nvidia-smi's words
    assert _english(shown, _names(snap)) == []
