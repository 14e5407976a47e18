"""Lesson 01's widgets, server side: panels and n/a reasons, scenarios, start/stop, the wall
exercise, replay with validated uploads, the tables the notebook checks."""

from __future__ import annotations

import base64
import re
import threading
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import labkit.gpu as gpu
from labkit import observe as ob
from labkit.data.observe import read_log
from labkit.i18n import t
from labkit.ui import observe as ui
from labkit.ui.components import find_by_class
from tests.conftest import SimFactory

FIXTURES = Path(__file__).parent / "fixtures" / "observe"


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def _panel(app: Any, key: str) -> str:
    return _text(app.cards[key].value)


def _no_sampler_threads() -> bool:
    return not any(t.name == "labkit-observe-sampler" and t.is_alive()
                   for t in threading.enumerate())


@pytest.fixture
def board(sim: SimFactory) -> Any:
    nv, lab = sim()
    app = ui.dashboard(nv=nv, lab=lab, clock=lab.now, sleep=lab.advance)
    yield app, lab
    app.close()


def test_dashboard_starts_stopped_with_a_first_look(board: Any) -> None:
    app, _ = board
    assert app.sampler is not None and not app.sampler.running and _no_sampler_threads()
    assert app.sampler.ticks == 2  # one GPM interval, so SM activity has a value
    assert _panel(app, "gpu_util").startswith("GPU 사용률 util.gpu 0 %")
    assert " 0 %" in _panel(app, "sm_active")
    assert "70.0 W" in _panel(app, "power") and "700.0 W" in _panel(app, "power")
    assert "n/a — 이 GPU에서 지원하지 않음 (NotSupported)" in _panel(app, "temperature")  # fan
    assert "GpuIdle" in _panel(app, "clocks")
    assert "이상 없음" in _panel(app, "errors")
    assert "멈춤" in _text(app.status.value)
    assert app.activity.figure is not None and app.power.figure is not None
    assert app.scenario is None  # the scenario switcher is the scenario lab's
    assert find_by_class(app, "lk-observe-run") is app.run


def test_dashboard_follows_the_gpu_and_says_busy_but_not_working(board: Any) -> None:
    app, lab = board
    lab.start("collective_stall", 0)
    app.sampler.run(3, sleep=lab.advance)
    app.render(force=True)
    assert "util.gpu 100 %" in _panel(app, "gpu_util")
    assert " 1 %" in _panel(app, "sm_active")
    assert "바쁘지만 일하지 않음" in _text(app.signals.value)
    activity = app.activity.figure
    names = [tr.name for tr in activity.data]
    sm = activity.data[names.index("SM 활동 (SM active)")].y
    assert sm[-1] == pytest.approx(1.0)


@pytest.mark.parametrize(("preset", "panel", "still_ok"), [
    ("vgpu", "pcie", "power"),          # case 2: PCIe counters missing in a VM
    ("consumer", "power", "gpu_util"),  # case 3: no power sensor
    ("old_driver", "sm_active", "gpu_util"),
])
def test_observe_cases_fault_makes_one_panel_na_page_alive(
        sim: SimFactory, preset: str, panel: str, still_ok: str) -> None:
    nv, lab = sim()
    lab.apply_preset(preset)
    app = ui.dashboard(nv=nv, lab=lab, clock=lab.now, sleep=lab.advance)
    app.sampler.run(3, sleep=lab.advance)
    app.render(force=True)
    assert "n/a — " in _panel(app, panel)
    assert "n/a" not in _panel(app, still_ok).split(" ", 3)[-1][:12]
    assert app.error.value == ""
    app.close()


def test_observe_case8_lost_gpu_panels_and_fleet(sim: SimFactory) -> None:
    nv, lab = sim("sim:4xH100-80GB")
    app = ui.dashboard(nv=nv, lab=lab, clock=lab.now, sleep=lab.advance)
    lab.xid(2, 79)
    app.sampler.run(2, sleep=lab.advance)
    app.gpu.value = 2
    assert "GPU가 버스에서 떨어짐" in _panel(app, "power")
    assert "LOST" in _panel(app, "errors") and "Xid 79" in _panel(app, "errors")
    assert "건강한 GPU 3/4" in _text(app.status.value)
    app.gpu.value = 1
    assert "W" in _panel(app, "power") and "n/a" not in _panel(app, "power")
    app.close()


def test_observe_case1_no_gpu_page_explains_and_replay_still_works(
        monkeypatch: pytest.MonkeyPatch) -> None:
    gpu.disconnect()
    monkeypatch.setenv("LABKIT_GPU", "real")
    try:
        app = ui.dashboard()
        assert app.sampler is None
        assert "GPU를 읽을 수 없습니다" in _text(find_by_class(app, "lk-observe-nogpu").value)
        assert ui.scenario_lab().sampler is None
        replay = ui.replay_app()
        assert replay.trace is not None
    finally:
        gpu.disconnect()


def test_start_stop_runs_and_ends_the_thread(sim: SimFactory) -> None:
    nv, lab = sim(clock="wall")
    app = ui.dashboard(nv=nv, lab=lab)
    app.run.value = True
    assert app.sampler.running and app.run.description == "■ 측정 멈춤"
    app.run.value = False
    assert not app.sampler.running and _no_sampler_threads()
    assert app.run.description == "▶ 측정 시작"
    app.close()


def test_running_the_cell_again_stops_the_old_dashboard(sim: SimFactory) -> None:
    nv, lab = sim(clock="wall")
    first = ui.dashboard(nv=nv, lab=lab)
    first.start()
    second = ui.dashboard(nv=nv, lab=lab)
    assert not first.sampler.running and not second.sampler.running
    assert _no_sampler_threads()
    second.close()


def test_rate_and_scenario_inputs_are_validated(sim: SimFactory) -> None:
    nv, lab = sim()
    app = ui.scenario_lab(nv=nv, lab=lab, clock=lab.now, sleep=lab.advance)
    app._on_rate({"new": 50})  # a browser can send any value
    assert "최대 10 Hz" in _text(app.error.value)
    assert app.sampler.rate_hz == 2.0
    app._on_scenario({"new": "rm -rf /"})
    assert "알 수 없는 작업" in _text(app.error.value)
    assert lab.workloads(0) == []
    app.close()


def test_scenario_lab_switch_shows_what_reveals_it(sim: SimFactory) -> None:
    nv, lab = sim()
    app = ui.scenario_lab(nv=nv, lab=lab, clock=lab.now, sleep=lab.advance)
    assert app.scenario is not None and app.scenario.value == "idle"
    app.scenario.value = "tiny_kernel"
    try:
        assert [w.scenario.name for w in lab.workloads(0)] == ["tiny_kernel"]
        assert app.sampler.running  # picking a scenario starts sampling
        assert "SM 활동" in _text(app.reveal.value)
    finally:
        app.stop()
    app.sampler.run(3, sleep=lab.advance)
    app.render(force=True)
    assert "util.gpu 100 %" in _panel(app, "gpu_util") and "0.8 %" in _panel(app, "sm_active")
    app.scenario.value = "burn_in"
    app.stop()
    app.sampler.run(3, sleep=lab.advance)
    app.render(force=True)
    assert "SwPowerCap" in _panel(app, "clocks")
    assert "클럭이 눌림" in _text(app.signals.value)
    app.scenario.value = "idle"
    app.stop()
    assert lab.workloads(0) == []
    app.close()


def test_export_gives_a_csv_that_reads_back(board: Any) -> None:
    app, _ = board
    app.export.click()
    href = re.search(r'base64,([A-Za-z0-9+/=]+)"', app.export_link.value)
    assert href
    text = base64.b64decode(href.group(1)).decode("utf-8")
    log = read_log(text, source="export.csv")
    assert log.format == "labkit-tidy" and "power_usage_w" in set(log.frame.metric)
    assert "NVIDIA H100 80GB HBM3" in log.metadata["source"]


# --- the wall ----------------------------------------------------------------------------------


def _wall(box: Any, situation: str, panels: list[str]) -> str:
    for p in ob.PANELS:
        find_by_class(box, f"lk-wall-{situation}-{p}").value = p in panels
    find_by_class(box, f"lk-wall-{situation}-check").click()
    return _text(find_by_class(box, f"lk-wall-{situation}-feedback").value)


def test_wall_exercise_checks_and_explains() -> None:
    box = ui.wall_exercise()
    assert _wall(box, "night_oncall", ["errors", "temperature"]).startswith("✔ 좋은 선택")
    wrong = _wall(box, "slow_training", ["gpu_util", "power"])
    assert wrong.startswith("✘") and "SM 활동" in wrong and "클럭" in wrong
    assert "util.gpu는 100 %로 똑같이" in wrong
    too_many = _wall(box, "shared_class", ["memory", "sm_active", "errors", "power"])
    assert "3개까지만" in too_many and "4" in too_many


# --- replay ------------------------------------------------------------------------------------


def _upload(name: str, data: bytes) -> tuple[dict[str, Any], ...]:
    return ({"name": name, "type": "text/csv", "size": len(data),
             "content": memoryview(data), "last_modified": datetime(2026, 11, 30)},)


def test_replay_starts_on_the_shipped_trace_and_scrubs() -> None:
    app = ui.replay_app()
    assert app.trace is not None and app.source.value == "sim-h100_dcgm-exporter_scenarios.prom"
    assert "util.gpu 0 %" in _panel(app, "gpu_util")  # idle at t = 0
    app.time.value = 40  # t = 50 s: the collective stall
    assert "util.gpu 100 %" in _panel(app, "gpu_util") and " 1 %" in _panel(app, "sm_active")
    assert "바쁘지만 일하지 않음" in _text(app.signals.value)
    assert "이 로그에 없음" in _panel(app, "temperature")  # HBM temperature not exported
    line = next(s for s in app.activity.figure.layout.shapes if s.type == "line")
    assert line.x0 == pytest.approx(50.0)
    app.source.value = "sim-h100_nvidia-smi_scenarios.csv"
    assert "SM 활동이 없습니다" in _text(app.info.value)
    app.time.value = 50
    assert "n/a" in _panel(app, "sm_active")
    assert "전력/한도" in _text(app.signals.value)  # decided by power instead


def test_replay_upload_reads_in_memory_and_clears_the_widget() -> None:
    app = ui.replay_app()
    data = (FIXTURES / "smi_units_multi_gpu.csv").read_bytes()
    app.upload.value = _upload("night.csv", data)
    assert app.log_import is not None and app.log_import.source == "night.csv"
    assert app.upload.value == ()
    assert [o[1] for o in app.gpu.options] == [0, 1]
    assert app.error.value == ""


def test_replay_upload_noheader_with_field_list_and_unparsed_rows() -> None:
    app = ui.replay_app()
    app.fields.value = "timestamp,index,utilization.gpu,power.draw,clocks.sm"
    data = (FIXTURES / "smi_noheader_nounits.csv").read_bytes() + b"garbage, row\n"
    app.upload.value = _upload("noheader.csv", data)
    assert app.log_import is not None and app.log_import.rows == 5
    assert "읽지 못한 줄 1개" in _text(app.info.value)
    assert "5번째 줄: 칸이 2개인데 헤더는 5칸입니다" in _text(app.info.value)


@pytest.mark.parametrize(("value", "message"), [
    (_upload("big.csv", b"x" * (ui.MAX_UPLOAD_BYTES + 1)), "한 번에 올릴 수 있는 67.1 MB보다"),
    (_upload("run.exe", b"timestamp\n"), "받을 수 없습니다"),
    (_upload("a.csv", b"x") + _upload("b.csv", b"y"), "하나만"),
    (_upload("bin.csv", b"\xff\xfe\x00garbage"), "UTF-8"),
    (_upload("notes.txt", b"dear diary\ntoday the GPU was hot\n"), "notes.txt 1번째 줄"),
    (({"name": "x.csv", "content": "not bytes"},), "읽지 못했습니다"),
])
def test_replay_bad_uploads_show_korean_errors_and_keep_the_log(value: Any,
                                                                message: str) -> None:
    app = ui.replay_app()
    before = app.log_import
    app._on_upload({"new": value})  # as the widget would, even with values a browser forged
    assert message in _text(app.error.value) + _text(app.upload_error.value)
    assert app.log_import is before
    assert app.upload.value == ()


def test_replay_ignores_forged_trace_names_and_slider_values() -> None:
    app = ui.replay_app()
    app._on_source({"new": "../../etc/passwd"})
    assert "없는 로그" in _text(app.error.value)
    app.time.unobserve(app._on_position, names="value")
    app.time.max = 10**6
    app.time.value = 10**6  # past the trace: falls back to the start
    app.render()
    assert app.position()[1] == 0.0


# --- tables ------------------------------------------------------------------------------------


def test_reference_table_rows_and_names() -> None:
    table = ui.reference_table()
    assert len(table) == len(ob.CATALOG)
    assert table.headers[0] == "지표"  # every column has a Korean header, no index column
    row = list(table.row("GPU 사용률 (util.gpu)").values())[1:]
    assert row == ["DCGM_FI_DEV_GPU_UTIL (203)", "nvmlDeviceGetUtilizationRates(h).gpu",
                   "utilization.gpu", "% / % / %", "비율 0–1"]
    assert list(table.row("SM 활동 (SM active)").values())[3] == "—"


def test_trace_summary_shows_the_lie() -> None:
    table = ui.trace_summary()
    assert [r[0] for r in table.rows] == ["쉬는 중", "건강한 학습", "집합 통신 대기",
                                          "스레드 하나짜리 커널", "데이터 로더 대기",
                                          "전력 한도 (번인)"]
    tiny = list(table.row("스레드 하나짜리 커널").values())[1:]
    train = list(table.row("건강한 학습").values())[1:]
    assert tiny[0] == "100 %" and tiny[1] == "1 %" and tiny[-1] == "예"
    assert train[-1] == "아니오"
    assert list(table.row("집합 통신 대기").values())[-1] == "예"


def test_unit_pitfalls_table() -> None:
    table = ui.unit_pitfalls()
    assert all(h.strip() for h in table.headers)
    values = [r[2] for r in table.rows]
    assert values[:3] == ["4.0 W", "123.5 kJ", "71.4 W"]
    assert values[3] == values[4] == "37.5 %"


def test_with_gaps_breaks_lines_where_sampling_stopped() -> None:
    import pandas as pd

    frame = pd.DataFrame({"a": [1.0, np.nan, 3.0, 4.0]},
                         index=pd.Index([0.0, 1.0, 2.0, 10.0], name="timestamp_s"))
    out = ui.with_gaps(frame, 3.0)
    assert list(out.index) == [0.0, 1.0, 2.0, 3.5, 10.0]
    assert list(out["a"].fillna(-1)) == [1.0, 1.0, 3.0, -1, 4.0]  # carried, then a break
    assert ui.with_gaps(frame.iloc[0:0], 3.0).empty


# --- uploads of every operator format (real captures, tests/fixtures/observe/SOURCES.md) -------


@pytest.mark.parametrize(("name", "fmt_words"), [
    ("smi_query_gpu_tee.csv", "nvidia-smi CSV"),
    ("dmon_mutc_TD.txt", "nvidia-smi dmon"),
    ("smi_q_h100_mig.txt", "nvidia-smi -q 스냅샷"),
    ("smi_qx_a100_mig.xml", "nvidia-smi -q -x 스냅샷"),
    ("dcgm_readme_k8s.prom", "dcgm-exporter"),
])
def test_replay_upload_accepts_each_operator_format(name: str, fmt_words: str) -> None:
    app = ui.replay_app()
    app.upload.value = _upload(name, (FIXTURES / name).read_bytes())
    assert app.error.value == ""
    assert app.log_import is not None and app.log_import.source == name
    assert fmt_words in _text(app.info.value)


@pytest.mark.parametrize(("name", "shown"), [
    ("smi_query_gpu_tee.csv", True), ("dcgm_readme_k8s.prom", False),
    ("dcgm_two_gpus.prom", False), ("dmon_mutc_TD.txt", False), ("smi_q_h100_mig.txt", False),
    ("smi_qx_a100_mig.xml", False),
])
def test_replay_says_no_sm_activity_only_for_a_query_gpu_log(name: str, shown: bool) -> None:
    # issue 16: "nvidia-smi는 util.gpu만 기록합니다" was shown for dcgm-exporter, dmon and -q
    app = ui.replay_app()
    app.upload.value = _upload(name, (FIXTURES / name).read_bytes())
    assert app.log_import is not None and app.log_import.source == name
    no_sm = _text(t("observe.replay.no_sm_active"))
    assert (no_sm in _text(app.info.value)) is shown


def test_replay_upload_powershell_utf16_log_reads() -> None:
    text = (FIXTURES / "smi_query_gpu_tee.csv").read_text(encoding="utf-8")
    data = b"\xff\xfe" + text.replace("\n", "\r\n").encode("utf-16-le")  # PowerShell's >
    app = ui.replay_app()
    app.upload.value = _upload("gpu-log.csv", data)
    assert app.error.value == "" and app.log_import is not None
    assert app.log_import.rows == 5


def test_replay_upload_unknown_encoding_says_resave_in_korean() -> None:
    data = ("# note\n" + (FIXTURES / "smi_query_gpu_tee.csv").read_text()).encode("utf-8")
    data = data.replace(b"# note", b"# caf\xe9")  # Latin-1: neither UTF-8 nor Korean CP949
    app = ui.replay_app()
    before = app.log_import
    app.upload.value = _upload("latin1.csv", data)
    message = _text(app.upload_error.value)
    assert "문자 인코딩(encoding)을 알 수 없습니다" in message and "UTF-8" in message
    assert "latin1.csv" in message and "1번째 줄" in message and app.log_import is before
    assert "바이트" not in message


def test_replay_upload_reads_cp949_and_says_a_png_is_not_a_log() -> None:
    text = "# 메모: 실습실\n" + (FIXTURES / "smi_query_gpu_tee.csv").read_text()
    app = ui.replay_app()
    app.upload.value = _upload("excel.csv", text.encode("cp949"))
    assert app.log_import is not None and app.log_import.source == "excel.csv"
    assert _text(app.upload_error.value) == ""
    app.upload.value = _upload("shot.csv", b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    message = _text(app.upload_error.value)
    assert "로그가 아닙니다" in message and "인코딩" not in message
    assert app.log_import.source == "excel.csv"


def test_replay_snapshot_shows_what_is_on_the_gpu_now() -> None:
    app = ui.replay_app()
    app.upload.value = _upload("a100.xml", (FIXTURES / "smi_qx_a100_mig.xml").read_bytes())
    shown = _text(app.snapshot.value)
    assert "지금 이 GPU에 있는 것" in shown
    assert "NVIDIA A100-SXM4-80GB" in shown and "MIG 모드(MIG mode): 지금 켜짐(Enabled)" in shown
    assert "GPU 인스턴스(GI) 3" in shown and "19968" in shown
    assert "GPU 4개라고 적혀 있는데 실제로는 1개만" in shown  # attached_gpus 4, one <gpu>
    app.upload.value = _upload("h100.txt", (FIXTURES / "smi_q_h100_mig.txt").read_bytes())
    shown = _text(app.snapshot.value)
    assert "PID 21198 ./gpu_burn" in shown and "GI 2" in shown
    app.source.value = app.source.options[0][1]
    app._on_source({"new": app.source.options[0][1]})
    assert app.snapshot.value == ""  # a trace is not a snapshot


def test_replay_noheader_upload_waits_for_a_field_set_with_a_preview() -> None:
    text = (FIXTURES / "smi_query_gpu_tee.csv").read_text()
    body = "".join(ln + "\n" for ln in text.splitlines()[1:])  # as --format=csv,noheader
    app = ui.replay_app()
    before = app.log_import
    app.upload.value = _upload("noheader.csv", body.encode())
    assert "헤더 없는(noheader)" in _text(app.upload_error.value) and app.log_import is before
    assert "2024/01/16 14:44:16.977" in _text(app.preview.value)
    assert "열 8개" in _text(app.preview.value)
    app.fields.value = ("timestamp,pstate,temperature.gpu,utilization.gpu,utilization.memory,"
                        "memory.total,memory.free,memory.used")
    assert app.error.value == app.upload_error.value == "" and app.log_import is not before
    assert app.log_import is not None and app.log_import.rows == 5
    assert app.preview.value == ""


def test_replay_field_picker_fills_the_field_list() -> None:
    app = ui.replay_app()
    app.field_set.value = "util_power"
    assert app.fields.value.startswith("timestamp,index,utilization.gpu")


def test_dcgm_blank_reason_is_korean_in_the_panel() -> None:
    from labkit.data.observe import read_dcgm_exporter

    log = read_dcgm_exporter((FIXTURES / "dcgm_readme_k8s.prom").read_text())
    view = ob.Trace(log.frame).view(0, 0.0)
    html_text = _text(ui._value_text("memory_temp_c", view["memory_temp_c"]))
    assert "DCGM 빈 값(DCGM blank): 이 GPU에서 지원하지 않음" in html_text
    assert "9223372036854775794" not in html_text


@pytest.mark.parametrize(("reason", "words"), [
    ("not in file", "값이 없음 (파일에 기록되지 않음)"), ("empty", "값이 없음 (빈 칸)"),
    ("[N/A]", "값이 없음 ([N/A])"),  # nvidia-smi's own token stays, after the Korean
])
def test_a_readers_reason_for_a_missing_value_is_korean(reason: str, words: str) -> None:
    # issue 16: an -q -x upload showed "n/a — 값이 없음 (not in file)"
    shown = _text(ui._value_text("power_limit_w",
                                ob.Reading.missing(ob.Status.NOT_AVAILABLE, reason)))
    assert words in shown
    assert "not in file" not in shown and "(empty)" not in shown


def test_replay_field_change_rereads_the_noheader_file_and_a_new_file_starts_afresh() -> None:
    # issue 16: after one noheader file a change of the field list did nothing, and a second
    # noheader file was read with the leftover list
    text = (FIXTURES / "smi_query_gpu_tee.csv").read_text()
    body = "".join(ln + "\n" for ln in text.splitlines()[1:])
    names = ["timestamp", "pstate", "temperature.gpu", "utilization.gpu", "utilization.memory",
             "memory.total", "memory.free", "memory.used"]
    app = ui.replay_app()
    app.upload.value = _upload("first.csv", body.encode())
    app.fields.value = ",".join(names)
    first = app.log_import
    assert first is not None and "gpu_temp_c" in set(first.frame["metric"])
    fixed = [n if n != "memory.free" else "memory.reserved" for n in names]  # a fix-up
    app.fields.value = ",".join(fixed)  # re-reads first.csv with the new list
    again = app.log_import
    assert again is not first and again is not None and again.source == "first.csv"
    assert "memory.reserved" in set(again.frame["metric"])
    assert "memory.reserved" not in set(first.frame["metric"])
    assert _text(app.upload_error.value) == ""
    app.upload.value = _upload("second.csv", body.encode())  # a new file: the list is reset
    assert app.fields.value == "" and app.field_set.value == ""
    assert app.log_import is again  # waits for its own field list
    assert "헤더 없는(noheader)" in _text(app.upload_error.value)
    app.close()


def test_replay_one_moment_says_so_and_dmon_gpus_have_a_name() -> None:
    # issue 16: a single scrape showed an empty chart (axis -1..1); dmon GPUs read "GPU 0:"
    app = ui.replay_app()
    app.upload.value = _upload("one.prom", (FIXTURES / "dcgm_two_gpus.prom").read_bytes())
    assert app.trace is not None and len(app.trace.times) == 1
    assert "한 순간의 측정값만" in _text(app.one_moment.value)
    assert app.activity.layout.display == "none" and app.power.layout.display == "none"
    assert any("n/a" not in _text(c.value) for c in app.cards.values())  # cards still show
    app.upload.value = _upload("mutc.txt", (FIXTURES / "dmon_mutc_TD.txt").read_bytes())
    assert app.one_moment.value == "" and app.activity.layout.display is None
    labels = [label for label, _ in app.gpu.options]
    assert labels and all(not label.rstrip().endswith(":") for label in labels)
    assert labels[0] == "GPU 0 (nvidia-smi dmon)"
