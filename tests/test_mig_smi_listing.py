"""labkit.mig.read_nvidia_smi_mig on real nvidia-smi captures (fixtures/nvidia-smi/SOURCES.md).

Expected layouts are read off the captures by eye (a ``-lgi`` row's Start:Size) or follow from
the MIG user guide's placement tables by hand (four 1g.20gb on an 8-unit board can only start at
0, 2, 4, 6), never from labkit's output. The round trip drives the simulated lab through
nvidia-smi's own commands (``python -m labkit.gpu``'s functions) and reads its text back.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from labkit.gpu import smi, smi_mig
from labkit.mig import Layout, SmiListingError, parse_nvidia_smi_mig, read_nvidia_smi_mig
from tests.conftest import SimFactory

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "nvidia-smi"


def _text(name: str) -> str:
    return (FIXTURES / name).read_text()


def _gis(layout: Layout) -> list[tuple[str, int]]:
    return sorted((gi.profile.name, gi.start) for gi in layout.instances)


def test_read_lgi_of_two_a100_gpus_dcgm138() -> None:
    got = read_nvidia_smi_mig(_text("a100_80gb_lgi_two_gpus_dcgm138.txt"), model="A100-80GB")
    balanced = [("1g.10gb", 2), ("1g.10gb", 3), ("2g.20gb", 0), ("3g.40gb", 4)]
    assert sorted(got) == [0, 1]
    assert _gis(got[0]) == balanced and _gis(got[1]) == balanced
    assert got[0].model.short_name == "A100-80GB"
    # 2 + 1 + 1 + 4 memory units and 2 + 1 + 1 + 3 compute slices: all 8 and all 7 used
    assert got[0].is_maximal() and got[0].open_starts("1g.10gb") == ()


def test_read_lgi_alone_needs_the_model_and_checks_it() -> None:
    text = _text("a100_80gb_lgi_two_gpus_dcgm138.txt")
    with pytest.raises(SmiListingError) as info:
        read_nvidia_smi_mig(text)
    assert info.value.rule == "ambiguous_board"
    assert {"A100-80GB", "H100-80GB"} <= set(info.value.detail.split(", "))
    with pytest.raises(SmiListingError) as info:
        read_nvidia_smi_mig(text, model="A30")
    assert info.value.rule == "model_mismatch"


def test_read_h100_lgi_of_go_nvml_146() -> None:
    got = read_nvidia_smi_mig(_text("h100_lgi_3g_2g_2g.txt"), model="H100-80GB")
    assert list(got) == [2]
    assert _gis(got[2]) == [("2g.20gb", 0), ("2g.20gb", 2), ("3g.40gb", 4)]


def test_read_L_alone_infers_placements_and_says_so() -> None:
    found = parse_nvidia_smi_mig(_text("a100_80gb_L_four_gpus_telegraf5812.txt"))
    assert sorted(found) == [0, 1, 2, 3]
    gpu0 = found[0]
    assert gpu0.name == "NVIDIA A100-SXM4-80GB" and gpu0.layout.model.short_name == "A100-80GB"
    assert gpu0.placements_inferred and gpu0.listings == ("-L",)
    assert _gis(gpu0.layout) == [("1g.20gb", s) for s in (0, 2, 4, 6)]  # the only four starts
    assert all(len(found[g].layout) == 0 for g in (1, 2, 3))


def test_read_L_with_a_shell_prompt_seven_1g() -> None:
    got = read_nvidia_smi_mig(_text("a100_80gb_L_7x1g_datadog33120.txt"))
    assert _gis(got[0]) == [("1g.10gb", s) for s in range(7)]  # 1g starts stop at 6
    assert got[0].fragmentation().stranded_units == (7,)


def test_read_81_column_lgip_names_the_board_by_sm_counts() -> None:
    found = parse_nvidia_smi_mig(_text("h100_pcie_lgip_81col_scaleway_570.txt"))
    assert found[0].layout.model.short_name == "H100-PCIE"  # 14/46/114 SM: not the SXM board
    assert not found[0].instances_listed and len(found[0].layout) == 0
    assert found[0].free["3g.40gb"] == (2, 2)
    with pytest.raises(SmiListingError) as info:
        read_nvidia_smi_mig(_text("h100_pcie_lgip_81col_scaleway_570.txt"), model="H100-80GB")
    assert info.value.rule == "model_mismatch"


def test_read_lgip_in_use_without_lgi_is_refused() -> None:
    with pytest.raises(SmiListingError) as info:
        read_nvidia_smi_mig(_text("a100_80gb_lgip_in_use_migparted97.txt"))
    assert info.value.rule == "busy_unknown" and info.value.gpu == 0


def test_read_rtx_pro_6000_partial_lgip_and_lgipp() -> None:
    text = _text("rtx_pro_6000_lgip_81col_gke564.txt") + _text(
        "rtx_pro_6000_lgipp_kubesimplify_610.txt")
    found = parse_nvidia_smi_mig(text)
    assert found[0].layout.model.short_name == "RTX-PRO-6000"
    assert found[0].listings == ("-lgip", "-lgipp")
    assert found[0].layout.spec.memory_units == 12


def test_read_lgipp_checks_the_boards_placements() -> None:
    text = _text("a100_lgipp_mig_user_guide.txt")
    assert len(read_nvidia_smi_mig(text, model="A100-80GB")[0]) == 0
    with pytest.raises(SmiListingError) as info:
        read_nvidia_smi_mig(text, model="A30")  # A30: {0,1,2,3}:1 for ID 14 ...
    assert info.value.rule == "model_mismatch"
    wrong = text.replace("{0,4}:4", "{0,2}:4")
    with pytest.raises(SmiListingError) as info:
        read_nvidia_smi_mig(wrong, model="A100-80GB")
    assert info.value.rule == "model_mismatch" and "line 5" in str(info.value)


def test_read_L_and_lgi_together_must_agree() -> None:
    lgi = "\n".join(ln for ln in _text("a100_80gb_lgi_two_gpus_dcgm138.txt").splitlines()
                    if not ln.startswith("|   1 "))  # GPU 0 only: -L names that board alone
    listing = ("GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-x)\n"
               "  MIG 3g.40gb     Device  0: (UUID: MIG-a)\n"
               "  MIG 2g.20gb     Device  1: (UUID: MIG-b)\n")
    found = parse_nvidia_smi_mig(listing + lgi)  # -L names the board: no model needed
    assert found[0].listings == ("-L", "-lgi") and not found[0].placements_inferred
    too_many = listing + "  MIG 3g.40gb     Device  2: (UUID: MIG-c)\n"
    with pytest.raises(SmiListingError) as info:
        parse_nvidia_smi_mig(too_many + lgi)
    assert info.value.rule == "inconsistent" and info.value.gpu == 0


@pytest.mark.parametrize(("text", "rule"), [
    ("", "empty"),
    ("$ nvidia-smi mig -lgi\nNo MIG-enabled devices found.\n", "no_mig"),
    ("GPU 0: NVIDIA GeForce RTX 4090 (UUID: GPU-1)\n  MIG 1g.10gb     Device  0: (UUID: MIG-1)\n",
     "unknown_board"),
    ("|   0  MIG 3g.40gb          9        2          4:4     |\n"
     "|   0  MIG 1g.10gb         19        9          5:1     |\n", "placement"),
    ("|   0  MIG 3g.40gb          9        2          4:2     |\n", "inconsistent"),
    ("|   0  MIG 3g.40gb          9        2          4:4     |\n"
     "|   0  MIG 2g.20gb         14        2          0:2     |\n", "inconsistent"),
    ("|   0  MIG 9g.99gb         77        2          0:8     |\n", "model_mismatch"),
    ("x" * 200_001, "too_long"),
])
def test_read_nvidia_smi_mig_refuses_bad_listings(text: str, rule: str) -> None:
    with pytest.raises(SmiListingError) as info:
        read_nvidia_smi_mig(text, model="H100-80GB")
    assert info.value.rule == rule


def test_read_L_leaves_out_gpus_without_mig_tables() -> None:
    text = ("GPU 0: NVIDIA GeForce RTX 4090 (UUID: GPU-1)\n"
            "GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-2)\n"
            "  MIG 7g.80gb     Device  0: (UUID: MIG-3)\n")
    assert _gis(read_nvidia_smi_mig(text)[1]) == [("7g.80gb", 0)]
    with pytest.raises(SmiListingError) as info:
        read_nvidia_smi_mig(text.split("\n")[0] + "\n")
    assert info.value.rule == "unknown_board" and "RTX 4090" in info.value.detail
    with pytest.raises(SmiListingError) as info:
        read_nvidia_smi_mig("GPU 0: NVIDIA L40S (UUID: GPU-1)\n")
    assert info.value.rule == "no_mig_board" and info.value.detail == "NVIDIA L40S"


def test_read_unknown_profiles_without_model_is_unknown_board() -> None:
    with pytest.raises(SmiListingError) as info:
        read_nvidia_smi_mig("|   0  MIG 9g.99gb         77        2          0:8     |\n")
    assert info.value.rule == "unknown_board"


# -- the round trip: simulator -> nvidia-smi text -> layout ------------------------------------

@pytest.mark.parametrize(("model", "profiles"), [
    ("H100-80GB", "9,14,19"),
    ("A100-80GB", "9,14,19,19"),
    ("A30", "5,14,14"),
    ("H200", "19,19,19,19,19,19,19"),
    ("RTX-PRO-6000", "14,5,14"),
])
def test_simulator_text_reads_back_as_the_same_layout(sim: SimFactory, model: str,
                                                      profiles: str) -> None:
    nv, _ = sim(f"sim:2x{model}")
    smi_mig.set_mig_mode(nv, 1, True)
    smi_mig.create_gpu_instances(nv, 1, profiles, default_ci=True)
    h = nv.nvmlDeviceGetHandleByIndex(1)
    want = sorted((info.id, gi.placement.start) for info, _, gi in smi.gpu_instances(nv, h))
    lgi, lci, listing = smi.lgi(nv), smi.lci(nv), smi.list_gpus(nv)
    lgip, lgipp = smi.lgip(nv), smi.lgipp(nv)
    everything = parse_nvidia_smi_mig("\n".join([listing, lgi, lci, lgip, lgipp]))
    assert sorted(everything) == [0, 1]
    got = everything[1].layout
    assert got.model.short_name == model and not everything[1].placements_inferred
    assert sorted((gi.profile.id, gi.start) for gi in got.instances) == want
    assert len(everything[0].layout) == 0
    # each listing alone: -lgi exact (given the board), -L and -lci the same profiles
    assert read_nvidia_smi_mig(lgi, model=model)[1] == got
    for alone in (listing, lci):
        found = parse_nvidia_smi_mig(alone, model=model)[1]
        assert found.layout.counts() == got.counts()
        assert found.placements_inferred


def test_mig_mode_change_warns_when_persistence_mode_is_off(sim: SimFactory) -> None:
    nv, _ = sim("sim:H100-80GB")
    bus = smi_mig._bus_id(nv, nv.nvmlDeviceGetHandleByIndex(0))
    on = smi_mig.set_mig_mode(nv, 0, True)
    assert on == [f"Enabled MIG Mode for GPU {bus}", "All done."]  # nvidia-persistenced runs
    assert smi_mig.set_persistence_mode(nv, 0, False) == [
        f"Disabled persistence mode for GPU {bus}.", "All done."]
    real = _text("h100_pcie_mig1_persistence_scaleway_570.txt").replace(
        "00000000:01:00.0", bus).splitlines()
    assert smi_mig.set_mig_mode(nv, 0, False)[0] == f"Disabled MIG Mode for GPU {bus}"
    assert smi_mig.set_mig_mode(nv, 0, True) == real  # the capture, line for line


def test_python_m_labkit_gpu_mig_1_warns_like_nvidia_smi(tmp_path: Path) -> None:
    """``python -m labkit.gpu -i 0 -pm 0`` then ``-i 0 -mig 1`` in the shared simulated lab
    print what nvidia-smi 570.169 printed on a server without nvidia-persistenced."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "LABKIT_GPU": "sim:H100-80GB", "LABKIT_SIM_DIR": str(tmp_path)}
    env.pop("LABKIT_SIM_LAB", None)

    def run(*args: str) -> list[str]:
        done = subprocess.run([sys.executable, "-m", "labkit.gpu", *args], env=env,
                              capture_output=True, text=True, timeout=120, check=True)
        return done.stdout.splitlines()

    off = run("-i", "0", "-pm", "0")
    bus = off[0].removeprefix("Disabled persistence mode for GPU ").removesuffix(".")
    assert off == [f"Disabled persistence mode for GPU {bus}.", "All done."]
    real = _text("h100_pcie_mig1_persistence_scaleway_570.txt").replace(
        "00000000:01:00.0", bus).splitlines()
    assert run("-i", "0", "-mig", "1") == real


# -- never silently wrong: rows that do not read, old names, the reasons given ------------------

A30_LGI = "a30_lgi_4x1g_summerlo.txt"


def test_read_a30_lgi_of_four_1g_summerlo() -> None:
    got = read_nvidia_smi_mig(_text(A30_LGI), model="A30")
    assert _gis(got[0]) == [("1g.6gb", s) for s in range(4)]  # 0:1 .. 3:1 in the capture


@pytest.mark.parametrize(("old", "new", "line"), [
    ("14        3          0:1", "14        3         -1:1", 7),   # a negative start
    ("14        3          0:1", "14                   0:1", 7),   # the GI-id column gone
    ("14        5          2:1", "14        5          2  ", 11),  # Start without :Size
    ("14        5          2:1     |", "14   5   ", 11),              # the row cut mid-way
])
def test_a_gi_row_that_does_not_read_is_refused_never_dropped(old: str, new: str,
                                                               line: int) -> None:
    text = _text(A30_LGI)
    assert old in text
    with pytest.raises(SmiListingError) as info:
        read_nvidia_smi_mig(text.replace(old, new, 1), model="A30")
    assert info.value.rule == "malformed" and info.value.line == line
    assert info.value.gpu == 0 and "MIG 1g.6gb" in info.value.detail


def test_a_profile_row_outside_any_table_that_does_not_read_is_refused() -> None:
    rows = "|   0  MIG 3g.40gb          9        2          4:4     |\n" \
           "|   0  MIG 2g.20gb         14        3          0-2     |\n"
    with pytest.raises(SmiListingError) as info:
        read_nvidia_smi_mig(rows, model="H100-80GB")
    assert info.value.rule == "malformed" and info.value.line == 2


def test_old_driver_L_names_without_nvidia_are_read() -> None:
    """R450's -L (the GPU operator docs' example, driver 450.80.02) prints ``A100-SXM4-40GB``."""
    found = parse_nvidia_smi_mig(_text("a100_40gb_L_driver450_gpu_operator.txt"))
    assert found[0].layout.model.short_name == "A100-40GB" and found[0].placements_inferred
    assert found[0].layout.counts() == {"3g.20gb": 1, "2g.10gb": 1, "1g.5gb": 1}
    eighty = "GPU 0: A100-SXM4-80GB (UUID: GPU-1)\n  MIG 7g.80gb Device 0: (UUID: MIG-1)\n"
    assert _gis(read_nvidia_smi_mig(eighty)[0]) == [("7g.80gb", 0)]
    for name in ("A100 80GB PCIe", "A100-PCIE-40GB", "H100 80GB HBM3", "A30", "H200",
                 "RTX PRO 6000 Blackwell Server Edition", "H100 PCIe"):
        assert parse_nvidia_smi_mig(f"GPU 0: {name} (UUID: GPU-1)\n")[0].name == name


def test_lgipp_with_placements_no_board_has_says_so() -> None:
    text = _text("a30_lgipp_summerlo.txt")
    assert read_nvidia_smi_mig(text)[0].model.short_name == "A30"
    with pytest.raises(SmiListingError) as info:
        read_nvidia_smi_mig(text.replace("{0,2}:2", "{0,1}:2"))
    assert info.value.rule == "placements_differ" and info.value.line == 4
    assert info.value.detail == "Profile ID 5 {0,1}:2 / A30: Profile ID 5 {0,2}:2"


@pytest.mark.parametrize(("text", "detail"), [
    ("+------+\n| Compute instance profiles:  |\n| GPU  GPU   Name  Profile  Instances |\n"
     "|======|\n|   0      1       MIG 1g.10gb      0*     1/1       14     1     0 |\n",
     "nvidia-smi mig -lcip"),
    ("| NVIDIA-SMI 570.169   Driver Version: 570.169   CUDA Version: 12.8 |\n"
     "|   0  NVIDIA H100 PCIe   On  | 00000000:01:00.0 Off |   0 |\n", "nvidia-smi"),
])
def test_listings_labkit_does_not_read_are_named(text: str, detail: str) -> None:
    with pytest.raises(SmiListingError) as info:
        read_nvidia_smi_mig(text)
    assert info.value.rule == "other_listing" and info.value.detail == detail


def test_refusal_details_have_no_english_words() -> None:
    """The UI echoes ``detail`` inside Korean sentences: nvidia-smi's own words only."""
    with pytest.raises(SmiListingError) as info:
        read_nvidia_smi_mig(_text(A30_LGI), model="A100-80GB")
    assert info.value.rule == "model_mismatch" and info.value.line == 7
    assert info.value.detail == "1g.6gb (ID 14) / A100-80GB"


def test_a_cp949_listing_saved_by_korean_notepad_is_read(tmp_path: Path) -> None:
    from labkit.data.mig import read_nvidia_smi_mig_file

    note = "우리 학교 서버 (A30) MIG 구성, 3월 4일\r\n"
    file = tmp_path / "lgi.txt"
    file.write_bytes((note + _text(A30_LGI).replace("\n", "\r\n")).encode("cp949"))
    assert _gis(read_nvidia_smi_mig_file(file, model="A30")[0]) == [
        ("1g.6gb", s) for s in range(4)]
