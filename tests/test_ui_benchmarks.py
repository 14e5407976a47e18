"""Lesson 06's widgets, server side: the claim checker, the rack check, numbers, exercises."""

from __future__ import annotations

import pytest

from labkit.ui import benchmarks as ui
from labkit.ui.components import find_by_class


def test_claim_app_starts_on_case7() -> None:
    claim = ui.claim_app()
    n = claim.result.normalization
    assert n.step("per_accelerator").ratio == pytest.approx(3.98, abs=0.01)
    assert n.ratio == pytest.approx(1.39, abs=0.01)
    assert "3.98배" in claim.steps.value and "1.39배" in claim.steps.value
    assert claim.checklist.value.count("⚠") == 4  # precision, count, power (TDP), preview
    claim.fields["precision_gain"].control.value = 1.54
    assert claim.result.normalization.ratio == pytest.approx(1.81, abs=0.01)


def test_claim_app_other_baseline_and_bad_rows() -> None:
    claim = ui.claim_app()
    frame = claim.results
    v50 = next(i for i, r in enumerate(frame) if r.version == "v5.0"
               and r.system.startswith("DGX-H100") and r.scenario == "Server")
    claim.fields["baseline"].control.value = v50
    assert claim.result.normalization.step("per_accelerator").ratio == pytest.approx(
        10_755.6 / 3_888.3, abs=0.01)
    assert "다른 라운드" in claim.checklist.value
    with pytest.raises(ValueError):
        claim.compute({**claim.values(), "claimant": 999})
    with pytest.raises(ValueError):
        claim.compute({**claim.values(), "claimant": -1})


def test_rack_app_verdicts() -> None:
    racks = ui.rack_app()
    assert racks.result.verdict == "partly" and "부분적으로만" in racks.verdict.value
    assert "랙 4개 → 2개" in racks.verdict.value
    racks.fields["new_server_kw"].control.value = 10.2
    assert racks.result.verdict == "holds"
    racks.fields["demand_tokens_per_s"].control.value = 752
    assert racks.result.verdict == "fails" and "성립하지 않음" in racks.verdict.value


def test_rack_app_server_bigger_than_rack_shows_error_beside_it() -> None:
    racks = ui.rack_app()
    good = racks.result
    # issue 17's trial: a rack lowered below the 14.3 kW box was told under the server's
    # control, echoing the server; the message is under the control just changed, echoing it
    racks.fields["rack_kw"].control.value = 12  # holds a 10.2 kW box, not a 14.3 kW one
    error = racks.fields["rack_kw"].error.value
    assert "서버 한 대의 전력(14.3 kW)보다 작습니다 (입력: 12)" in error
    assert racks.fields["new_server_kw"].error.value == ""
    assert racks.result is good
    racks.fields["new_server_kw"].control.value = 10.2
    assert racks.fields["new_server_kw"].error.value == ""
    assert racks.fields["rack_kw"].error.value == ""
    assert racks.result.old.racks == 10 and racks.result.verdict == "holds"
    # the server raised past the rack: under the server, echoing the server
    racks.fields["new_server_kw"].control.value = 13
    assert "랙 전력(12 kW)보다 큽니다 (입력: 13)" in racks.fields["new_server_kw"].error.value
    assert racks.fields["rack_kw"].error.value == ""
    # both servers past a rack lowered further: the larger one is the limit
    racks.reset()
    racks.fields["rack_kw"].control.value = 8
    assert "(14.3 kW)보다 작습니다 (입력: 8)" in racks.fields["rack_kw"].error.value


def test_case_numbers_06_hold_case7() -> None:
    text = ui.case_numbers_06().to_string()
    for value in ("3.98배", "2.58배", "1.99배", "2.79배", "1.81배", "1.39배", "3.16배", "1.11배"):
        assert value in text, value


def test_exercises_06_checked() -> None:
    box = ui.exercises_06()
    for key, answer in (("ex06_1", "1.12"), ("ex06_2", "1.47"), ("ex06_3", "7")):
        find_by_class(box, f"lk-econ-{key}-answer").value = answer
        find_by_class(box, f"lk-econ-{key}-check").click()
        assert "정답" in find_by_class(box, f"lk-econ-{key}-feedback").value, key


def test_tables_carry_provenance() -> None:
    assert len(ui.mlperf_table()) == 39
    assert {"기준일", "신뢰도", "출처"} <= set(ui.defaults_table().columns)
    assert len(ui.defaults_table()) == 10


def test_missing_mlperf_field_reads_in_korean() -> None:
    from labkit.benchmarks import BenchmarkResult
    from labkit.i18n import error_text

    with pytest.raises(ValueError) as err:
        BenchmarkResult.from_record({"system": "s", "accelerator": "X", "total_accel": 8,
                                     "precision": "FP8"})
    assert "꼭 있어야 하는 값이 비어 있습니다" in error_text(err.value, prefix="econ")


def test_lesson_06_builders_are_still_found_under_ui_economics() -> None:
    from labkit.ui import economics

    for name in economics.MOVED_TO_BENCHMARKS:
        assert getattr(economics, name) is getattr(ui, name)
    with pytest.raises(AttributeError):
        economics.no_such_builder  # noqa: B018


@pytest.mark.parametrize(("preset", "per_chip", "final"), [
    # data/economics/mlperf_inference_llm.csv, Server rows; TDP B200 1,000 W, H100 700 W;
    # precision slider at its default 2 (FP4 vs FP8: one halving)
    ("announced", 10_755.6 / (21_605.8 / 8), 10_755.6 / (21_605.8 / 8) / 2 * 700 / 1000),
    ("baseline_v50", 10_755.6 / (31_106.28 / 8), 10_755.6 / (31_106.28 / 8) / 2 * 0.7),
    ("same_date", 98_443.3 / 31_106.28, 98_443.3 / 31_106.28 / 2 * 0.7),
])
def test_claim_presets_give_the_lessons_numbers(preset: str, per_chip: float,
                                                final: float) -> None:
    claim = ui.claim_app()
    claim.preset.value = preset
    n = claim.result.normalization
    assert n.step("per_accelerator").ratio == pytest.approx(per_chip, rel=1e-6)
    assert n.ratio == pytest.approx(final, rel=1e-6)
    assert f"{per_chip:.2f}배" in claim.steps.value


def test_claim_same_date_preset_is_the_3_16_of_the_text() -> None:
    # the narrative's "v5.0 DGX-H100 ... 칩당 3.16배" (shared cases economics.md case 7 row 4)
    claim = ui.claim_app()
    claim.preset.value = "same_date"
    assert f"{claim.result.normalization.step('per_accelerator').ratio:.2f}" == "3.16"
    assert "3.16배" in ui.case_numbers_06().to_string()
    # changing a dropdown by hand names the pair "custom"; picking the pair again names it
    claim.fields["claimant"].control.value = 0
    assert claim.preset.value == "custom"
    pair = ui.CLAIM_PRESETS["same_date"]
    assert pair[0][0] == pair[1][0] == "v5.0"
    claim.preset.value = "custom"  # "직접 고르기" leaves the dropdowns as they are
    assert claim.result.claimant_index == 0


def test_rack_chart_legend_sits_inside_the_figure() -> None:
    legend = ui.rack_app().chart.figure.layout.legend
    assert legend.orientation == "h" and legend.xanchor == "right" and legend.x == 1


def test_claim_dropdowns_and_table_show_labels_not_submitted_ids() -> None:
    # issue 17's trial: the dropdowns showed "NVIDIA DGX-H100_H100-SXM-80GBx8_TRT"; a student
    # reads the system as people write it (the data file's label)
    claim = ui.claim_app()
    options = [label for label, _ in claim.fields["claimant"].control.options]
    shown = (" ".join(options) + " " + ui.mlperf_table().to_string() + " "
             + claim.checklist.value)  # the checklist's "같은 벤치마크 (…)" too (the re-check)
    for submitted in ("DGX-H100_H100-SXM-80GBx8_TRT", "IBM_Cloud_gx3", "xe9680_h100_x8_vllm_092",
                      "b200_x8", "llama3_1", "fp8_trtllm", "_TRT", "llama2-70b", "llama3.1-"):
        assert submitted not in shown
    # MLPerf's benchmark ids as people write them: the model, its size, the accuracy target
    assert "Llama 2 70B (기준 정확도의 99.9 %)" in shown and "Llama 3.1 405B" in shown
    assert any(o.startswith("v5.0 · NVIDIA DGX H100 · H100 SXM ×8 · TensorRT-LLM · ")
               for o in options)
    assert "RedHat IBM 클라우드 gx3 가상 서버 · L40S ×1 · vLLM" in " ".join(options)


def test_the_precision_slider_says_it_is_at_its_max_and_keeps_its_unit_beside_it() -> None:
    """Issue 17's trial: 99999999 typed into the readout showed 2.00 with no note (the slider
    starts at its max, so the clamped value changed nothing and reached no kernel); the unit
    line ("배 (2 = 이론 최대, …)") wrapped below the slider."""
    claim = ui.claim_app()
    field = claim.fields["precision_gain"]
    # the unit line already names the max ("2 = 이론 최대"): no note on the untouched slider
    assert field.error.value == "" and "이론 최대" in field.unit_html.value
    field.control.set_state({"max": 100.0, "value": 99_999_999.0})  # a client past the range
    assert (field.control.value, field.control.max) == (2.0, 2.0)
    assert "이하여야" in field.error.value
    field.control.set_state({"value": 1.5})
    assert field.error.value == "" and claim.result is not None
    # label 250 px + slider + the unit's ~230 px fit one 800-px output row
    assert field.control.layout.width == "300px" and "이론 최대" in field.unit_html.value
