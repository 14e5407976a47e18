"""labkit.data.benchmarks: the MLPerf table holds the published figures; bad rows fail loudly."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from labkit.data import DataError, data_dir
from labkit.data.benchmarks import benchmark_results, load_mlperf

# Published figures, copied by hand from the MLCommons results (via the curated table
# ../shared/reference/mlperf_inference_llm.csv: inference_results_v4.1 summary_results.json
# @4a0c8741, v5.0 mlperf_log_summary.txt, inference_results_v5.1 summary_results.json
# @965182b0): (round, system, benchmark, scenario as run, tokens/s, system watts or None)
PUBLISHED = [
    ("v4.1", "DGX-H100_H100-SXM-80GBx8_TRT", "llama2-70b-99", "Offline", 24524.9, None),
    ("v4.1", "H200-SXM-141GBx8_TRT_MaxQ", "llama2-70b-99", "Server", 23113.1, 6280.21),
    ("v4.1", "B200-SXM-180GBx1_TRT", "llama2-70b-99", "Server", 10755.6, None),
    ("v5.0", "DGX-H100_H100-SXM-80GBx8_TRT", "llama2-70b-99.9", "Server", 31106.28, None),
    ("v5.0", "H200-SXM-141GBx8_TRT", "llama2-70b-interactive-99.9", "Server", 19424.25, None),
    ("v5.1", "SR680a_V3_B200SXMx8_TRT", "llama2-70b-99", "Server", 99159.3, 10442.3),
    ("v5.1", "GB300-NVL72_GB300-288GB_aarch64x72_TRT", "llama3.1-405b", "Offline", 16104.1,
     None),
]
PUBLISHED_ROWS = 39  # rows of the curated reference table


@pytest.mark.parametrize("published", PUBLISHED, ids=lambda p: f"{p[0]}-{p[1]}-{p[3]}")
def test_mlperf_table_holds_the_published_figures(published: tuple) -> None:  # type: ignore[type-arg]
    version, system, benchmark, scenario, result, watts = published
    frame = load_mlperf()
    hits = frame[(frame["version"] == version) & (frame["system"] == system)
                 & (frame["benchmark"] == benchmark) & (frame["scenario"] == scenario)]
    assert len(hits) == 1
    row = hits.iloc[0]
    assert row["result"] == result
    assert (math.isnan(row["power_w_system"]) if watts is None
            else row["power_w_system"] == watts)


def test_mlperf_table_shape_and_joined_power() -> None:
    frame = load_mlperf()
    assert len(frame) == PUBLISHED_ROWS
    assert set(frame["version"]) == {"v4.1", "v5.0", "v5.1"}
    assert (frame["reliability"] == "primary").all()
    per_accel = frame["result"] / frame["total_accel"]
    assert ((per_accel - frame["result_per_accel"]).abs() <= 0.06).all()
    h100 = frame[frame["accelerator"] == "H100-SXM-80GB"]
    assert (h100["tdp_w"] == 700).all()  # NVIDIA H100 SXM datasheet: up to 700 W
    assert math.isnan(frame[frame["accelerator"] == "GB300"]["tdp_w"].iloc[0])
    interactive = frame[frame["benchmark"] == "llama2-70b-interactive-99.9"]
    assert list(interactive["scenario"]) == ["Server"] and list(interactive["slo"]) == [
        "Interactive"]
    assert frame["sparsity"].sum() == 1  # the one open-division sparse H200 row
    assert len(benchmark_results(frame)) == PUBLISHED_ROWS


def _copy(tmp_path: Path, name: str, edit) -> Path:  # type: ignore[no-untyped-def]
    text = (data_dir() / "economics" / name).read_text(encoding="utf-8")
    path = tmp_path / name
    path.write_text(edit(text), encoding="utf-8")
    return path


def _first_row(text: str, old: str, new: str) -> str:
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    assert old in lines[header + 1]
    lines[header + 1] = lines[header + 1].replace(old, new, 1)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [(",24524.9,", ",,", "'result' is empty"), (",FP8,", ",FP3,", "'precision'"),
     (",Offline,Offline,", ",Batch,Offline,", "'scenario'"),
     (",H100-SXM-80GB,8,1,8,", ",H100-SXM-80GB,8,1,4,", "total_accel")],
)
def test_mlperf_loader_rejects_bad_rows(tmp_path: Path, old: str, new: str,
                                        message: str) -> None:
    path = _copy(tmp_path, "mlperf_inference_llm.csv", lambda t: _first_row(t, old, new))
    with pytest.raises(DataError, match=message):
        load_mlperf(path)


# --- people's labels: what lesson 06 shows instead of the submitted system ids ---------------

#: Labels written by hand from MLCommons' system descriptions for a few submitted ids
#: (submitter, system id) -> what a student reads.
LABELS = {
    ("NVIDIA", "DGX-H100_H100-SXM-80GBx8_TRT"): "DGX H100 · H100 SXM ×8 · TensorRT-LLM",
    ("RedHat", "IBM_Cloud_gx3-48x240x2l40s_vLLM"): "IBM 클라우드 gx3 가상 서버 · L40S ×1 · vLLM",
    ("Krai", "xe9680_h100_x8_vllm_092 (model: llama3_1-70b-fp8_dyn)"):
        "XE9680 · H100 ×8 · vLLM 0.9.2 · Llama 3.1 70B FP8(동적 양자화)",
    ("Cisco", "HGX-H100_H100-SXM-80GBx16_TRT"): "HGX H100 2대 · H100 SXM ×16 · TensorRT-LLM",
}


def test_every_mlperf_row_has_a_peoples_label() -> None:
    frame = load_mlperf()
    for (submitter, system), label in LABELS.items():
        rows = frame[(frame["submitter"] == submitter) & (frame["system"] == system)]
        assert len(rows) and set(rows["label"]) == {label}
    for row in frame.itertuples():
        # no id left in what is shown: no snake_case, no "x8"-style counts, the count as ×N
        assert "_" not in row.label and not re.search(r"\dx\d|\bx\d+\b", row.label), row.label
        assert f"×{row.total_accel}" in row.label, (row.label, row.total_accel)
    systems = frame.groupby(["submitter", "system"])["label"].nunique()
    assert (systems == 1).all()
    assert not frame.groupby(["submitter", "label"])["system"].nunique().gt(1).any()


_DGX = "DGX H100 · H100 SXM ×8 · TensorRT-LLM"
_H200 = "H200 SXM ×8 · TensorRT-LLM"


@pytest.mark.parametrize(("edit", "message"), [
    (lambda t: _first_row(t, f",{_DGX},", ",,"), "'label' is empty"),
    (lambda t: _first_row(t, f",{_DGX},", ",DGX H100,"), "row 2: .* differs from row 1"),
    (lambda t: t.replace(f",{_DGX},", f",{_H200},"),
     "row 3: .* is already DGX-H100_H100-SXM-80GBx8_TRT"),
], ids=["empty", "two-labels-one-system", "one-label-two-systems"])
def test_mlperf_loader_rejects_bad_labels(  # type: ignore[no-untyped-def]
        tmp_path: Path, edit, message: str) -> None:
    path = _copy(tmp_path, "mlperf_inference_llm.csv", edit)
    with pytest.raises(DataError, match=message):
        load_mlperf(path)
