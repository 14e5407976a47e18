"""GPU models as data: every file loads, names follow NVIDIA's rule, the loader names bad keys."""

from __future__ import annotations

import math
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from labkit.data import DataError
from labkit.data.gpus import available_models, load_gpu_model
from labkit.gpu.backend import parse_spec
from labkit.gpumodels import mig_memory_gb, profile_name

ROOT = Path(__file__).resolve().parents[1]
#: Every model in data/gpus/: the per-file checks below run on each, so a model added by
#: docs/architecture.md's "how to add a GPU model" is checked without editing a list here.
MODELS = available_models()
#: The short names the course was written for (issue 2); more may be added, none removed.
ISSUE_SHORT_NAMES = {"A30", "A100-40GB", "A100-80GB", "H100-80GB", "H100-PCIE", "H100-NVL",
                     "H200", "B200", "RTX-PRO-6000", "L40S"}
#: MIG geometry per board, (C compute slices, U memory units), from outside labkit: the NVIDIA
#: MIG user guide's supported-profiles tables and real ``nvidia-smi mig -lgipp`` captures
#: (/work/shared/reference/mig.md). A new MIG board adds its row here (the recipe's step 3).
MIG_GEOMETRY = {"A30": (4, 4), "A100-40GB": (7, 8), "A100-80GB": (7, 8), "H100-80GB": (7, 8),
                "H100-PCIE": (7, 8), "H100-NVL": (7, 8), "H200": (7, 8), "B200": (7, 8),
                "RTX-PRO-6000": (4, 12)}


def test_the_short_names_of_the_issue_all_exist() -> None:
    assert ISSUE_SHORT_NAMES <= set(MODELS)


def check_model_file(short: str, folder: Path) -> None:
    """The checks every GPU model file passes (``folder`` holds ``<short>.yaml``)."""
    model = load_gpu_model(short)
    assert model.short_name == short
    assert model.name.startswith("NVIDIA ")
    assert model.as_of and model.source
    assert model.board.idle_power_w < model.board.tdp_w
    doc = yaml.safe_load((folder / f"{short}.yaml").read_text())
    figures = set(doc["device"]) | set(doc["board"]) | {"mig"}
    assert figures <= set(doc["sources"]) | set(doc["inferred"])
    if model.mig is None:
        assert short not in MIG_GEOMETRY
        return
    assert short in MIG_GEOMETRY, f"add {short}'s MIG geometry to MIG_GEOMETRY (see its comment)"
    assert (model.mig.compute_slices, model.mig.memory_units) == MIG_GEOMETRY[short]
    for profile in model.mig.profiles:
        assert profile.source
        if profile.suffix in ("+me", "+me.all"):
            assert profile.max_count == 1, profile.name


@pytest.mark.parametrize("short", MODELS)
def test_model_loads_with_sources_and_its_mig_geometry(short: str) -> None:
    check_model_file(short, ROOT / "data" / "gpus")


def test_boards_without_mig_are_the_ones_nvidia_lists() -> None:
    """L40S has no MIG (NVIDIA L40S datasheet); every board of MIG_GEOMETRY is in data/."""
    assert load_gpu_model("L40S").mig is None
    assert set(MIG_GEOMETRY) <= set(MODELS)


def test_the_add_a_gpu_model_recipe_is_enough(data_copy: Path) -> None:
    """docs/architecture.md "how to add a GPU model", followed in a copy of data/: a new file
    ``<short_name>.yaml`` (here a copy of H100-80GB under another name) plus its MIG_GEOMETRY
    row passes every per-file check, and LABKIT_GPU=sim:<short_name> names it."""
    text = (data_copy / "H100-80GB.yaml").read_text()
    for old, new in [("short_name: H100-80GB", "short_name: H100-TEST"),
                     ('name: "NVIDIA H100 80GB HBM3"', 'name: "NVIDIA H100 TEST"')]:
        assert old in text
        text = text.replace(old, new, 1)
    (data_copy / "H100-TEST.yaml").write_text(text)
    MIG_GEOMETRY["H100-TEST"] = MIG_GEOMETRY["H100-80GB"]  # the recipe's step 3
    try:
        assert "H100-TEST" in available_models()
        check_model_file("H100-TEST", data_copy)
        assert parse_spec("sim:2xH100-TEST") == ["H100-TEST", "H100-TEST"]
    finally:
        del MIG_GEOMETRY["H100-TEST"]


def test_profile_ids_differ_between_boards_so_none_is_hard_coded() -> None:
    """1g is ID 19 on 7-slice boards but 14 on A30 and RTX PRO 6000 (mig.md section 1)."""
    assert load_gpu_model("H100-80GB").mig.by_name("1g.10gb").id == 19
    assert load_gpu_model("A30").mig.by_name("1g.6gb").id == 14
    assert load_gpu_model("RTX-PRO-6000").mig.by_name("1g.24gb").id == 14
    assert load_gpu_model("A30").mig.by_id(19) is None


def test_mig_case3_names_round_like_nvidia_not_floor() -> None:
    """Case mig#3: 80896 MiB is "7g.80gb", 40192 MiB "3g.40gb"; floor(MiB/1024) gives 79/39."""
    model = load_gpu_model("A100-80GB")
    seven, three = model.mig.by_id(0), model.mig.by_id(9)
    assert (seven.name, seven.memory_mib) == ("7g.80gb", 80896)
    assert (three.name, three.memory_mib) == ("3g.40gb", 40192)
    naive = [f"{p.compute_slices}g.{math.floor(p.memory_mib / 1024)}gb" for p in (seven, three)]
    assert naive == ["7g.79gb", "3g.39gb"]
    assert model.mig.by_name("7g.80gb") is seven and model.mig.by_name("MIG 3g.40gb") is three
    assert model.mig.by_name("7g.79gb") is None


@pytest.mark.parametrize(("mem", "total", "gb"), [
    (16384, 143771, 18),   # H200 1g.18gb: 141/8 = 17.6 -> 18
    (71168, 143771, 71),   # H200 3g.71gb: 70.5 rounds half away from zero
    (20992, 183359, 23),   # B200 1g.23gb: 22.5 -> 23
    (22144, 95830, 24),    # H100 NVL 1g.24gb: 23.5 -> 24
    (5952, 24576, 6),      # A30 1g.6gb
])
def test_mig_memory_gb_rule(mem: int, total: int, gb: int) -> None:
    assert mig_memory_gb(mem, total) == gb


def test_profile_name_and_bad_sizes() -> None:
    assert profile_name(1, 9984, 81559, "+me") == "1g.10gb+me"
    with pytest.raises(ValueError, match="positive"):
        mig_memory_gb(0, 81559)


# --- loader errors name the file and the key ----------------------------------------------------


@pytest.fixture
def data_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    shutil.copytree(ROOT / "data" / "gpus", tmp_path / "gpus")
    monkeypatch.setenv("LABKIT_DATA", str(tmp_path))
    load_gpu_model.cache_clear()
    yield tmp_path / "gpus"
    load_gpu_model.cache_clear()


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def test_unknown_model_lists_known_ones(data_copy: Path) -> None:
    with pytest.raises(DataError, match="no GPU model 'V100'.*H100-80GB"):
        load_gpu_model("V100")


def test_wrong_profile_name_is_rejected_with_the_rule(data_copy: Path) -> None:
    _edit(data_copy / "A100-80GB.yaml", "name: 7g.80gb", "name: 7g.79gb")
    with pytest.raises(DataError, match=r"A100-80GB.yaml: mig: profiles\[6\].*'7g.80gb'"):
        load_gpu_model("A100-80GB")


def test_figure_without_source_is_rejected(data_copy: Path) -> None:
    _edit(data_copy / "H200.yaml", "  tdp_w: \"NVIDIA H200 datasheet: SXM up to 700 W\"\n", "")
    with pytest.raises(DataError, match=r"H200.yaml: figure\(s\) \['tdp_w'\]"):
        load_gpu_model("H200")


def test_placement_outside_the_board_is_rejected(data_copy: Path) -> None:
    _edit(data_copy / "A30.yaml", "placements: [0, 2]", "placements: [0, 3]")
    with pytest.raises(DataError, match=r"A30.yaml: mig: profiles\[2\] \(2g.12gb\).*outside"):
        load_gpu_model("A30")


def test_wrong_type_names_the_key(data_copy: Path) -> None:
    _edit(data_copy / "L40S.yaml", "sm_count: 142", "sm_count: many")
    with pytest.raises(DataError, match=r"L40S.yaml: device.sm_count must be int"):
        load_gpu_model("L40S")


def test_me_cap_above_one_is_rejected(data_copy: Path) -> None:
    _edit(data_copy / "H100-80GB.yaml", "name: 1g.10gb+me, id: 20, nvml_profile: 7, "
          "compute_slices: 1, memory_slices: 1, memory_mib: 9984, max_count: 1",
          "name: 1g.10gb+me, id: 20, nvml_profile: 7, compute_slices: 1, memory_slices: 1, "
          "memory_mib: 9984, max_count: 2")
    with pytest.raises(DataError, match=r"\+me profiles are capped at 1"):
        load_gpu_model("H100-80GB")
