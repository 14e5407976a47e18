"""Lesson 02's widgets, server side: the board, exports, the live panel's guards, the workload."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

from labkit import mig
from labkit.gpu import mig_live
from labkit.runtime import voila as voila_guard
from labkit.ui import mig as ui
from labkit.ui.components import find_by_class
from tests.conftest import SimFactory

EXCERPT = Path(__file__).parent / "fixtures" / "mig" / "config-default-excerpt.yaml"


@pytest.fixture(autouse=True)
def not_voila(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in voila_guard.VOILA_ENV_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv(mig_live.ALLOW_ENV, raising=False)
    monkeypatch.setattr(voila_guard, "_seen", False)


@pytest.fixture
def board() -> ui.BoardApp:
    return ui.board_app("H100-80GB")


def free_total(board: ui.BoardApp, profile: str) -> str:
    row = re.search(rf"<td>{re.escape(profile)}</td><td>\d+</td><td[^>]*>(\d+/\d+)</td>",
                    board.capacity.value)
    assert row is not None
    return row.group(1)


# --- the board ----------------------------------------------------------------------------------


def test_board_click_places_and_free_total_follows(board: ui.BoardApp) -> None:
    assert free_total(board, "3g.40gb") == "2/2" and free_total(board, "7g.80gb") == "1/1"
    board.profile_select.value = "3g.40gb"
    assert board.start_buttons[4].button_style == "success"
    assert board.start_buttons[2].button_style == ""  # not a legal start at all
    find_by_class(board, "lk-board-start-4").click()
    assert board.mig_layout == mig.Layout("H100-80GB", [("3g.40gb", 4)])
    assert "유닛 4–7에 놓았습니다" in board.message.value
    assert free_total(board, "3g.40gb") == "1/2" and free_total(board, "7g.80gb") == "0/1"
    assert board.start_buttons[4].button_style == "warning"  # legal, now blocked
    assert "3g.40gb" in board.grid.value and "lk-board-gi" in board.grid.value


def test_board_illegal_moves_show_the_reason_and_change_nothing(board: ui.BoardApp) -> None:
    board.profile_select.value = "3g.40gb"
    board.press(4)
    before = board.mig_layout.key()
    find_by_class(board, "lk-board-start-5").click()
    assert "시작할 수 없습니다" in board.message.value and "0, 4뿐" in board.message.value
    board.press(4)
    assert "3g.40gb@4" in board.message.value and "유닛 4–7" in board.message.value
    board.profile_select.value = "4g.40gb"
    for forced in (99, -3, "x", 2.5, True):  # what a caller could send to the method
        assert not board.press(forced)
        assert "✘" in board.message.value and "4g.40gb" in board.message.value
    assert board.mig_layout.key() == before


def test_board_remove_and_clear(board: ui.BoardApp) -> None:
    assert board.removes.layout.display == "none"  # nothing to remove yet
    board.apply_preset("all-balanced")
    assert [label for label, _ in board.remove_select.options] == [
        "2g.20gb@0", "1g.10gb@2", "1g.10gb@3", "3g.40gb@4"]
    assert board.remove_select.value == 4  # something is always selected
    find_by_class(board, "lk-board-remove").click()
    assert "3g.40gb@4" in board.message.value and len(board.mig_layout) == 3
    assert len(board.remove_select.options) == 3
    board.remove_at(7)
    assert "유닛 7에는" in board.message.value
    board.remove_at(None)
    assert "✘" in board.message.value and len(board.mig_layout) == 3
    find_by_class(board, "lk-board-clear").click()
    assert len(board.mig_layout) == 0 and board.removes.layout.display == "none"


def test_board_presets_and_fragmentation_line(board: ui.BoardApp) -> None:
    board.preset_select.value = "all-1g.10gb"
    find_by_class(board, "lk-board-preset-apply").click()
    assert len(board.mig_layout) == 7
    assert "12.5 %" in board.fragmentation.value and "단편화" in board.fragmentation.value
    assert "못 씀" in board.grid.value
    board.apply_preset("no-such-preset")
    assert "프리셋이 없습니다" in board.message.value and len(board.mig_layout) == 7


@pytest.mark.parametrize(("model", "units", "first"), [("A30", 4, "1g.6gb"),
                                                       ("RTX-PRO-6000", 12, "1g.24gb"),
                                                       ("A100-40GB", 8, "1g.5gb")])
def test_board_model_change_rebuilds_the_controls(board: ui.BoardApp, model: str, units: int,
                                                  first: str) -> None:
    board.press(None)
    pool = list(board.start_buttons)
    board.model_select.value = model
    shown = [b for b in board.start_buttons if b.layout.display is None]
    assert len(shown) == units and len(board.mig_layout) == 0
    assert board.start_buttons[:len(pool)] == pool  # buttons are reused, never closed
    assert board.profile_select.value == first
    assert find_by_class(board, f"lk-board-start-{units - 1}") is shown[-1]
    assert board.preset_select.options[0][1] == f"all-{first}"


def test_board_reproduces_the_guides_order_example(board: ui.BoardApp) -> None:
    board.model_select.value = "A100-40GB"
    for profile in ("1g.5gb", "1g.5gb", "2g.10gb"):
        board.profile_select.value = profile
        find_by_class(board, "lk-board-auto").click()
    board.profile_select.value = "3g.20gb"
    assert not board.press(None)
    assert "모두 막혔습니다" in board.message.value


def test_challenge_says_two_gpus_and_why(board: ui.BoardApp) -> None:
    challenge = ui.challenge_panel(board)
    assert "1g.10gb 0/7" in challenge.progress.value
    find_by_class(challenge, "lk-challenge-check").click()
    text = challenge.message.value
    assert "10개 필요한데" in text and "7개뿐" in text and "GPU 2장" in text
    board.apply_preset("all-1g.10gb")
    assert "1g.10gb 7/7 ✔" in challenge.progress.value
    board.model_select.value = "A30"
    assert "H100-80GB로 바꾸세요" in challenge.check()


# --- export and import --------------------------------------------------------------------------


def test_export_panel_follows_the_board_and_offers_a_download(board: ui.BoardApp) -> None:
    panel = ui.export_panel(board)
    board.apply_preset("all-balanced")
    assert panel.text.value == mig.to_nvidia_smi(board.mig_layout)
    find_by_class(panel, "lk-export-parted").click()
    assert panel.text.value == mig.to_mig_parted(board.mig_layout, "labkit")
    link = re.search(r'base64,([A-Za-z0-9+/=]+)"', panel.download.value)
    assert link is not None and base64.b64decode(link.group(1)).decode() == panel.text.value
    assert 'download="labkit-mig-config.yaml"' in panel.download.value


def test_import_reads_configs_and_commands_and_refuses_bad_ones(board: ui.BoardApp) -> None:
    panel = ui.export_panel(board)
    panel.paste.value = mig.to_mig_parted(mig.presets("H100-80GB")["all-3g.40gb"])
    find_by_class(panel, "lk-import-load").click()
    assert board.mig_layout.counts() == {"3g.40gb": 2} and "✔" in panel.import_message.value
    before = board.mig_layout.key()
    for bad, text in [
        ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: true, "
         "mig-devices: {7g.79gb: 1}}]}", "7g.79gb"),
        ("version: v2\nmig-configs: {}", "v2"),
        ("version: v1\nmig-configs: [", "YAML"),
        ("nvidia-smi mig -cgi 19,19,14,9", "1번째 줄 (9): 3g.40gb를 놓을 빈자리가 없습니다"),
        (EXCERPT.read_text(), "이 GPU에 쓸 수 있는 구성: all-disabled, all-enabled, all-1g.10gb"),
    ]:
        panel.paste.value = bad
        panel.load()
        assert "✘" in panel.import_message.value and text in panel.import_message.value, bad
        assert board.mig_layout.key() == before  # nothing changed
    panel.paste.value = "sudo nvidia-smi mig -i 0 -cgi 0:0 -C"
    panel.load()
    assert board.mig_layout.counts() == {"7g.80gb": 1}


def test_import_switches_nothing_for_another_boards_config(board: ui.BoardApp) -> None:
    panel = ui.export_panel(board)
    panel.paste.value = mig.to_mig_parted(mig.presets("A30")["all-1g.6gb"])
    panel.load()
    assert "✘" in panel.import_message.value and len(board.mig_layout) == 0


# --- the live panel -----------------------------------------------------------------------------


def test_live_panel_reads_the_simulated_gpu(sim: SimFactory, board: ui.BoardApp) -> None:
    nv, _ = sim("sim:H100-80GB")
    panel = ui.LivePanel(board, nv=nv)
    assert "NVIDIA H100 80GB HBM3" in panel.status.value and "시뮬레이션" in panel.status.value
    assert "MIG 모드: 꺼짐" in panel.state_html.value
    assert panel.dry_button is not None and panel.apply_button is None  # no variable set
    assert "LABKIT_ALLOW_MIG_APPLY=1" in find_by_class(panel, "lk-live-notice").value
    board.apply_preset("all-balanced")
    assert panel.commands.value == mig.to_nvidia_smi(board.mig_layout, 0)
    find_by_class(panel, "lk-live-dry-run").click()
    assert "dry run" in panel.result.value and "미리 보기" in panel.result.value
    assert mig_live.read_state(nv, 0).mode_current == 0


def test_live_panel_applies_when_allowed_and_refreshes(
        sim: SimFactory, board: ui.BoardApp, monkeypatch: pytest.MonkeyPatch) -> None:
    nv, lab = sim("sim:H100-80GB")
    monkeypatch.setenv(mig_live.ALLOW_ENV, "1")
    panel = ui.LivePanel(board, nv=nv)
    board.apply_preset("all-balanced")
    find_by_class(panel, "lk-live-apply").click()
    assert "적용했습니다" in panel.result.value
    assert "MIG 모드: 켜짐" in panel.state_html.value and "MIG-" in panel.state_html.value
    assert "CUDA가 볼 수 있는 MIG 장치: 4개" in panel.state_html.value
    lab.add_process(0)
    board.apply_preset("all-1g.10gb")
    panel.apply(dry_run=False)
    assert "계산 프로세스" in panel.result.value and "✘" in panel.result.value
    assert mig_live.read_state(nv, 0).layout("H100-80GB").counts() != {"1g.10gb": 7}


def test_live_panel_without_rights_says_which_commands_to_run(
        sim: SimFactory, board: ui.BoardApp, monkeypatch: pytest.MonkeyPatch) -> None:
    nv, lab = sim("sim:H100-80GB")
    monkeypatch.setenv(mig_live.ALLOW_ENV, "1")
    lab.set_mig_rights(False)
    panel = ui.LivePanel(board, nv=nv)
    board.apply_preset("all-7g.80gb")
    panel.apply(dry_run=False)
    assert "root" in panel.result.value and "명령" in panel.result.value
    assert "sudo nvidia-smi mig -i 0 -cgi 0:0 -C" in panel.commands.value


def test_live_panel_under_voila_has_no_apply_buttons_at_all(
        sim: SimFactory, board: ui.BoardApp, monkeypatch: pytest.MonkeyPatch) -> None:
    nv, _ = sim("sim:H100-80GB")
    monkeypatch.setenv(mig_live.ALLOW_ENV, "1")
    monkeypatch.setenv("VOILA_KERNEL_ID", "0d6c")
    panel = ui.LivePanel(board, nv=nv)
    assert panel.dry_button is None and panel.apply_button is None
    for css in ("lk-live-apply", "lk-live-dry-run"):
        with pytest.raises(LookupError):
            find_by_class(panel, css)
    assert "voila" in find_by_class(panel, "lk-live-notice").value
    board.apply_preset("all-balanced")
    assert "-cgi 9:4 -C" in panel.commands.value
    panel.apply(dry_run=True)  # even a direct call is refused
    assert "voila" in panel.result.value and mig_live.read_state(nv, 0).mode_current == 0


def test_live_panel_notes_a_board_for_another_model(sim: SimFactory) -> None:
    nv, _ = sim("sim:H100-80GB")
    other = ui.board_app("A30")
    panel = ui.LivePanel(other, nv=nv)
    assert "A30" in panel.status.value and "H100-80GB" in panel.status.value
    other.apply_preset("all-4g.24gb")
    panel.apply(dry_run=True)
    assert "맞지 않습니다" in panel.result.value


def test_live_panel_shows_na_when_nvml_fails(sim: SimFactory) -> None:
    nv, lab = sim("sim:H100-80GB")
    lab.inject("nvmlDeviceGetMigMode", "Unknown")
    panel = ui.LivePanel(None, nv=nv)
    assert panel.status.value.startswith("n/a") and panel.state_html.value == ""


# --- sharing modes and the workload -------------------------------------------------------------


def test_sharing_modes_table_has_the_three_modes() -> None:
    table = ui.sharing_modes()
    assert list(table.columns)[1:] == ["시분할(time-slicing)", "MPS", "MIG"]
    assert table.row("오류 격리")["MIG"].startswith("있음")
    assert table.row("메모리 대역폭 QoS")["MPS"] == "없음"


def test_workload_follows_the_board(board: ui.BoardApp) -> None:
    app = ui.workload_app(board)
    assert app.result is not None and app.result.results["mig"].oom_jobs == 7  # empty board
    assert "MIG 장치가 없습니다" in app.notes.value
    board.apply_preset("all-1g.10gb")
    r = app.result.results
    assert (r["fifo"].makespan_h, r["mig"].makespan_h) == (7, pytest.approx(1))
    done, oom, no_slot = app.chart.figure.data  # jobs per mode: finished, OOM-killed, unstarted
    assert list(done.x) == [7, 7, 7, 7] and sum(oom.x) == sum(no_slot.x) == 0
    notes = [a.text for a in app.chart.figure.layout.annotations]
    # seven 1-h jobs that use 1 of 7 slices: one after another (FIFO) or taking turns
    # (time-slicing) 7 h; side by side (MPS, seven 1g.10gb) 1 h
    # whole hours print as whole numbers (issue 17's trial: "모두 끝남: 7.00")
    assert notes == ["모두 끝남: 7 h", "모두 끝남: 7 h", "모두 끝남: 1 h", "모두 끝남: 1 h"]
    app.fields["memory_gb"].control.value = 15
    assert app.result.results["mps"].oom_jobs == 2 and "메모리가 모자라" in app.notes.value


def test_the_outcome_chart_shows_what_ran_and_what_failed_per_mode(board: ui.BoardApp) -> None:
    """Issue 17: MIG with nothing run showed "0.00 h" as if it won; OOM shortened the bars."""
    app = ui.workload_app(board)  # empty board: no MIG device for any job
    modes = list(app.result.results)
    done, oom, no_slot = app.chart.figure.data
    mig = modes.index("mig")
    assert (done.x[mig], no_slot.x[mig]) == (0, 7)
    notes = [a.text for a in app.chart.figure.layout.annotations]
    assert notes[mig] == "학생 7명 중 0명의 잡만 끝남: 시간 비교 불가"
    assert "0.00 h" not in " ".join(notes)
    assert "<th>MIG</th><td>— (일부 실패)</td><td>— (일부 실패)</td>" in app.table.value
    board.apply_preset("all-1g.10gb")
    app.fields["memory_gb"].control.value = 15  # two of seven jobs do not fit next to others
    done, oom, no_slot = app.chart.figure.data
    mps = modes.index("mps")
    assert (done.x[mps], oom.x[mps]) == (5, 2)
    notes = [a.text for a in app.chart.figure.layout.annotations]
    assert notes[mps] == "학생 7명 중 5명의 잡만 끝남: 시간 비교 불가"


@pytest.mark.parametrize(("key", "value", "text"), [
    ("max_slices", 9, "7개까지"), ("max_slices", 0, "1 이상의 정수"),
    ("n_students", 500, "200명까지"), ("n_students", 0, "1 이상의 정수"),
    ("memory_gb", -1, "0 이상"), ("duration_h", 0, "0보다 커야"),
    ("duration_h", float("nan"), "유한한"),
])
def test_workload_bad_input_shows_korean_error_and_keeps_the_result(
        board: ui.BoardApp, key: str, value: float, text: str) -> None:
    app = ui.workload_app(board)
    good = app.result
    app.fields[key].control.value = value
    assert text in app.fields[key].error.value, app.fields[key].error.value
    assert app.result is good


def test_case1_numbers_and_layout_counts() -> None:
    case1 = ui.case1_numbers()
    assert case1.rows[0][1:3] == ("7 h", "4 h")
    on_mig = list(case1.row("MIG").values())  # mode, makespan, JCT, wait, allocation, ...
    assert on_mig[1] == "1 h" and on_mig[4] == "100 %"
    counts = ui.layout_counts().data.set_index("GPU 모델")
    # units, slices and profiles from -lgipp/-lgip; 2319 layouts by enumeration (mig.md §3);
    # the maximal count is checked against a brute-force oracle in tests/test_mig_oracle.py
    assert counts.loc["H100-80GB"].tolist()[:4] == [8, 7, 7, 2319]
    assert counts.loc["H100-80GB"].iloc[4] == len(mig.maximal_layouts("H100-80GB"))


def test_exercise_answers_come_from_the_model() -> None:
    box = ui.exercises()
    for key, right, wrong in (("ex1", "4", "5"), ("ex2", "2장", "1"), ("ex3", "12.5 %", "14")):
        answer = find_by_class(box, f"lk-mig-{key}-answer")
        check = find_by_class(box, f"lk-mig-{key}-check")
        feedback = find_by_class(box, f"lk-mig-{key}-feedback")
        answer.value = wrong
        check.click()
        assert "다시 생각해 보세요" in feedback.value
        answer.value = right
        check.click()
        assert "정답입니다" in feedback.value
