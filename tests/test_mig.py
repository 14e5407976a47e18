"""labkit.mig, the planning half: layouts, explanations, enumeration, nvidia-smi and mig-parted.

Reference tables are transcribed from shared/reference/mig.md (real ``nvidia-smi mig -lgipp``
captures, §2.1; counts by enumeration, §3); cases from shared/cases/mig.md.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit import mig
from labkit.data.gpus import load_gpu_model
from labkit.data.mig import parse_mig_parted, read_mig_parted, read_mig_parted_entries
from labkit.mig import Layout, PlacementError
from labkit.validate import InputError

# -lgipp, mig.md §2.1: profile name -> legal starts (size in the name's table)
LGIPP_8_UNIT = {"1g.10gb": (0, 1, 2, 3, 4, 5, 6), "1g.10gb+me": (0, 1, 2, 3, 4, 5, 6),
                "1g.20gb": (0, 2, 4, 6), "2g.20gb": (0, 2, 4), "3g.40gb": (0, 4),
                "4g.40gb": (0,), "7g.80gb": (0,)}
LGIPP_A30 = {"1g.6gb": (0, 1, 2, 3), "1g.6gb+me": (0, 1, 2, 3), "2g.12gb": (0, 2),
             "2g.12gb+me": (0, 2), "4g.24gb": (0,)}
LGIPP_RTX = {"1g.24gb": (0, 3, 6, 9), "1g.24gb+me": (0, 3, 6, 9), "1g.24gb+gfx": (0, 3, 6, 9),
             "1g.24gb+me.all": (0, 3, 6, 9), "1g.24gb-me": (0, 3, 6, 9), "2g.48gb": (0, 6),
             "2g.48gb+gfx": (0, 6), "2g.48gb+me.all": (0, 6), "2g.48gb-me": (0, 6),
             "4g.96gb": (0,), "4g.96gb+gfx": (0,)}
# -lgip Total on the same boards (mig.md §2.2-2.5, 2.14)
TOTAL_8_UNIT = {"1g.10gb": 7, "1g.10gb+me": 1, "1g.20gb": 4, "2g.20gb": 3, "3g.40gb": 2,
                "4g.40gb": 1, "7g.80gb": 1}
TOTAL_A30 = {"1g.6gb": 4, "1g.6gb+me": 1, "2g.12gb": 2, "2g.12gb+me": 1, "4g.24gb": 1}


# --- shared/cases/mig.md ------------------------------------------------------------------------


def test_mig_case1_profile_order_matters_without_placements() -> None:
    lay = Layout("A100-40GB")
    assert [lay.place(p).start for p in ("1g.5gb", "1g.5gb", "2g.10gb")] == [6, 4, 0]
    assert not lay.can_place("3g.20gb")
    with pytest.raises(PlacementError) as err:
        lay.place("3g.20gb")
    assert err.value.rule == "no_free_placement"
    text = lay.explain("3g.20gb")
    assert "0, 4" in text and "모두 막혔습니다" in text
    assert "1g.5gb@4" in text and "2g.10gb@0" in text

    first = Layout("A100-40GB")
    assert [first.place(p).start for p in ("3g.20gb", "1g.5gb", "2g.10gb", "1g.5gb")] == [
        4, 0, 2, 1]
    assert first.key() == Layout("A100-40GB", [("1g.5gb", 0), ("1g.5gb", 1), ("2g.10gb", 2),
                                               ("3g.20gb", 4)]).key()


@pytest.mark.parametrize("order", list(itertools.permutations(
    [("1g.5gb", 0), ("1g.5gb", 1), ("2g.10gb", 2), ("3g.20gb", 4)])))
def test_mig_case1_explicit_placements_succeed_in_any_order(
        order: tuple[tuple[str, int], ...]) -> None:
    lay = Layout("A100-40GB", order)
    assert lay.is_maximal() and len(lay) == 4


def test_mig_case3_driver_names_7g_80gb_and_3g_40gb() -> None:
    lay = Layout("A100-80GB")
    assert lay.profile("7g.80gb").memory_mib == 80896
    assert lay.profile("3g.40gb").memory_mib == 40192
    config: dict[str, Any] = {"version": "v1", "mig-configs": {"big": [
        {"devices": "all", "mig-enabled": True, "mig-devices": {"7g.80gb": 1}}]}}
    assert mig.layout_from_mig_parted(config, "A100-80GB").counts() == {"7g.80gb": 1}
    config["mig-configs"]["big"][0]["mig-devices"] = {"7g.79gb": 1}
    with pytest.raises(InputError) as err:
        mig.layout_from_mig_parted(config, "A100-80GB")
    assert err.value.rule == "choice" and "7g.79gb" in str(err.value)


def test_mig_case5_seven_1g_leave_no_free_capacity_anywhere() -> None:
    lay = Layout("A100-80GB", [("1g.10gb", None)] * 7)
    assert lay.free_capacity() == {"1g.10gb": (0, 7), "1g.10gb+me": (0, 1), "1g.20gb": (0, 4),
                                   "2g.20gb": (0, 3), "3g.40gb": (0, 2), "4g.40gb": (0, 1),
                                   "7g.80gb": (0, 1)}
    assert [gi.start for gi in lay.instances] == [6, 4, 5, 0, 1, 2, 3]  # observed fill order


# --- placement rules per model against the reference tables ---------------------------------


@pytest.mark.parametrize(("model", "lgipp", "total"), [
    ("H100-80GB", LGIPP_8_UNIT, TOTAL_8_UNIT), ("A100-80GB", LGIPP_8_UNIT, TOTAL_8_UNIT),
    ("H100-PCIE", LGIPP_8_UNIT, TOTAL_8_UNIT), ("A30", LGIPP_A30, TOTAL_A30),
    ("RTX-PRO-6000", LGIPP_RTX, None)])
def test_legal_starts_and_empty_free_total_match_reference(
        model: str, lgipp: dict[str, tuple[int, ...]], total: dict[str, int] | None) -> None:
    lay = Layout(model)
    assert {name: lay.legal_starts(name) for name in lgipp} == lgipp
    assert {name: lay.open_starts(name) for name in lgipp} == lgipp
    if total is not None:
        assert lay.free_capacity() == {name: (n, n) for name, n in total.items()}


@pytest.mark.parametrize(("model", "count"), [("H100-80GB", 2319), ("A30", 84)])
def test_valid_layout_count_matches_reference_enumeration(model: str, count: int) -> None:
    assert len(mig.valid_layouts(model)) == count


def test_rtx_all_media_engine_rule_removes_layouts_the_plain_count_allows() -> None:
    # mig.md §3 counts 1249 for RTX PRO 6000 "ignoring the ALL_ME exclusivity rule"
    layouts = mig.valid_layouts("RTX-PRO-6000")
    assert len(layouts) < 1249
    for lay in layouts:
        names = [gi.profile.name for gi in lay.instances]
        if any(n.endswith("+me.all") for n in names):
            assert all(n.endswith(("+me.all", "-me")) for n in names)
            assert sum(n.endswith("+me.all") for n in names) == 1


@pytest.mark.parametrize("model", ["H100-80GB", "A30", "RTX-PRO-6000"])
def test_maximal_layouts_admit_nothing_more_and_cover_every_layout(model: str) -> None:
    maximal = mig.maximal_layouts(model)
    keys = {lay.key() for lay in maximal}
    assert len(keys) == len(maximal)
    board = load_gpu_model(model)
    assert board.mig is not None
    for lay in maximal:
        assert all(not lay.can_place(p.name, s) for p in board.mig.profiles
                   for s in p.placements)
    for lay in mig.valid_layouts(model):  # every layout extends to one of them
        grown = lay.copy()
        while not grown.is_maximal():
            grown.place(next(p for p in board.mig.profiles if grown.can_place(p)))
        assert grown.key() in keys


def test_maximal_layouts_of_an_8_unit_board_include_the_familiar_ones() -> None:
    keys = {lay.key() for lay in mig.maximal_layouts("H100-80GB")}
    for profiles in (["7g.80gb"], ["4g.40gb", "3g.40gb"], ["3g.40gb", "3g.40gb"],
                     ["1g.10gb"] * 7, ["1g.10gb"] * 6 + ["1g.10gb+me"],
                     ["1g.20gb"] * 4, ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"]):
        assert Layout.from_profiles("H100-80GB", profiles).key() in keys
    three_twos = Layout("H100-80GB", [("2g.20gb", 0), ("2g.20gb", 2), ("2g.20gb", 4)])
    assert not three_twos.is_maximal()  # 1g.10gb at 6 still fits
    assert three_twos.open_starts("1g.10gb") == (6,)


def test_compute_slices_never_exceed_the_board() -> None:
    for model in ("H100-80GB", "A30", "RTX-PRO-6000"):
        board = load_gpu_model(model).mig
        assert board is not None
        for lay in mig.maximal_layouts(model):
            assert lay.used_compute_slices() <= board.compute_slices


# --- explain: one message per failure class -----------------------------------------------------


def test_explain_overlap_names_units_holder_and_open_starts() -> None:
    lay = Layout("H100-80GB", [("2g.20gb", 4)])
    text = lay.explain("3g.40gb", 4)
    assert lay.check("3g.40gb", 4).rule == "overlap"
    assert "유닛 4–7" in text and "유닛 4, 5" in text and "2g.20gb@4" in text
    assert "지금 놓을 수 있는 시작 위치: 0" in text


def test_explain_invalid_start_lists_the_legal_ones() -> None:
    lay = Layout("H100-80GB")
    assert lay.check("3g.40gb", 2).rule == "invalid_placement"
    assert "메모리 유닛 2에서 시작할 수 없습니다" in lay.explain("3g.40gb", 2)
    assert "0, 4뿐" in lay.explain("3g.40gb", 2)
    for bad in (7, 99, -1, 2.5, True, "x"):
        assert not lay.can_place("1g.10gb", bad)
        assert "1g.10gb" in lay.explain("1g.10gb", bad)


def test_explain_profile_cap_and_why_me_is_capped_at_one() -> None:
    lay = Layout("H100-80GB", [("1g.10gb+me", 0)])
    assert lay.check("1g.10gb+me").rule == "profile_cap"
    text = lay.explain("1g.10gb+me", 1)
    assert "최대 1개" in text and "미디어 엔진" in text
    threes = Layout("H100-80GB", [("3g.40gb", 0), ("3g.40gb", 4)])
    assert threes.check("3g.40gb").rule == "profile_cap"
    assert "최대 2개" in threes.explain("3g.40gb") and "미디어" not in threes.explain("3g.40gb")


def test_explain_compute_slices_left() -> None:
    lay = Layout("H100-80GB", [("3g.40gb", 4)] + [("1g.10gb", s) for s in range(4)])
    assert lay.check("1g.10gb").rule == "compute_slices"
    assert "0개 남았는데" in lay.explain("1g.10gb")


def test_explain_media_engines_both_directions() -> None:
    lay = Layout("RTX-PRO-6000", [("1g.24gb+me.all", 0)])
    assert lay.check("1g.24gb").rule == "media_engines"
    assert "1g.24gb+me.all@0" in lay.explain("1g.24gb") and "-me" in lay.explain("1g.24gb")
    assert lay.can_place("1g.24gb-me")
    other = Layout("RTX-PRO-6000", [("1g.24gb", 0)])
    assert other.check("2g.48gb+me.all").rule == "media_engines"
    assert "1g.24gb@0" in other.explain("2g.48gb+me.all")


def test_explain_unknown_profile_lists_the_boards_profiles() -> None:
    lay = Layout("A30")
    assert lay.check("1g.10gb").rule == "unknown_profile"
    text = lay.explain("1g.10gb")
    assert "A30" in text and "1g.6gb" in text and "4g.24gb" in text
    with pytest.raises(PlacementError):
        lay.place("1g.10gb")


def test_explain_success_says_where_the_driver_puts_it() -> None:
    lay = Layout("H100-80GB")
    assert "유닛 4에 놓습니다" in lay.explain("3g.40gb")
    assert "메모리 유닛 0에 놓을 수 있습니다" in lay.explain("3g.40gb", 0)


# --- layouts: place, remove, fragmentation, errors --------------------------------------------


def test_free_capacity_drops_for_other_profiles_sharing_the_memory_axis() -> None:
    lay = Layout("H100-80GB")
    lay.place("3g.40gb")
    free = lay.free_capacity()
    assert free["4g.40gb"] == (1, 1) and free["7g.80gb"] == (0, 1)
    assert free["1g.10gb"] == (4, 7) and free["2g.20gb"] == (2, 3)
    lay.place("1g.10gb", 1)
    free = lay.free_capacity()
    assert free["4g.40gb"] == (0, 1) and free["2g.20gb"] == (1, 3)


def test_remove_by_unit_profile_and_instance() -> None:
    lay = Layout("H100-80GB", [("3g.40gb", 4), ("1g.10gb", 0), ("1g.10gb", 1)])
    assert lay.remove(5).profile.name == "3g.40gb"
    assert lay.remove("1g.10gb", 0).start == 0
    gi = lay.instances[0]
    assert lay.remove(gi) == gi and len(lay) == 0
    for bad in (3, "1g.10gb", 99):
        with pytest.raises(ValueError):
            lay.remove(bad)


def test_fragmentation_seven_1g_strand_unit_7() -> None:
    lay = Layout("H100-80GB", [("1g.10gb", None)] * 7)
    frag = lay.fragmentation()
    assert frag.free_units == (7,) and frag.stranded_units == (7,)
    assert frag.stranded_frac == 1 / 8 and frag.free_compute_slices == 0
    assert Layout("H100-80GB").fragmentation().stranded_units == ()
    one_at_6 = Layout("H100-80GB", [("1g.10gb", 6), ("3g.40gb", 0)])
    assert one_at_6.fragmentation().stranded_units == (7,)  # only 1g.20gb@6/3g@4/7g reach 7
    one_at_4 = Layout("H100-80GB", [("1g.10gb", 4), ("3g.40gb", 0)])
    assert one_at_4.fragmentation().stranded_units == ()  # 1g.20gb@6 still covers 7
    odd = Layout("A30", [("1g.6gb", 0), ("1g.6gb", 3)])
    assert odd.fragmentation().stranded_units == ()


def test_unknown_or_non_mig_model_is_an_input_error() -> None:
    with pytest.raises(InputError) as err:
        Layout("H999")
    assert err.value.field == "model" and err.value.rule == "choice"
    with pytest.raises(InputError):
        Layout("L40S")
    assert Layout("h100-80gb").model.short_name == "H100-80GB"
    assert Layout(load_gpu_model("A30")).model.short_name == "A30"


def test_layout_equality_ignores_placement_order() -> None:
    a = Layout("H100-80GB", [("1g.10gb", 0), ("3g.40gb", 4)])
    b = Layout("H100-80GB", [("3g.40gb", 4), ("1g.10gb", 0)])
    assert a == b and a != Layout("H100-80GB", [("1g.10gb", 1), ("3g.40gb", 4)])
    assert a != Layout("H100-PCIE", [("1g.10gb", 0), ("3g.40gb", 4)])
    assert "1g.10gb@0" in repr(a)


def test_from_profiles_reproduces_the_real_all_balanced_geometry() -> None:
    # a real -lgi on A100-80GB with all-balanced: 2g@0, 1g@2, 1g@3, 3g@4 (mig.md §2.4)
    lay = Layout.from_profiles("A100-80GB", ["1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb"])
    assert [(gi.profile.name, gi.start) for gi in lay.sorted_instances()] == [
        ("2g.20gb", 0), ("1g.10gb", 2), ("1g.10gb", 3), ("3g.40gb", 4)]


def test_from_profiles_searches_when_the_default_order_fails_and_refuses_what_cannot_fit() -> None:
    lay = Layout.from_profiles("H100-80GB", ["1g.20gb", "2g.20gb", "2g.20gb", "2g.20gb"])
    assert lay.counts() == {"1g.20gb": 1, "2g.20gb": 3}
    for profiles, rule in [(["3g.40gb"] * 3, "profile_cap"),
                           (["4g.40gb", "4g.40gb"], "profile_cap"),
                           (["3g.40gb", "3g.40gb", "1g.10gb", "1g.10gb"], "compute_slices"),
                           (["3g.40gb", "3g.40gb", "1g.10gb"], "does_not_fit"),
                           (["9g.1gb"], "unknown_profile")]:
        with pytest.raises(PlacementError) as err:
            Layout.from_profiles("H100-80GB", profiles)
        assert err.value.rule == rule, profiles


# --- nvidia-smi: export and parse back ----------------------------------------------------------


def test_to_nvidia_smi_enables_mig_then_creates_largest_first_with_placements() -> None:
    lay = Layout.from_profiles("H100-80GB", ["1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb"])
    assert mig.to_nvidia_smi(lay, 1).splitlines() == [
        "sudo nvidia-smi -i 1 -mig 1",
        "sudo nvidia-smi mig -i 1 -cgi 9:4 -C",
        "sudo nvidia-smi mig -i 1 -cgi 14:0 -C",
        "sudo nvidia-smi mig -i 1 -cgi 19:2 -C",
        "sudo nvidia-smi mig -i 1 -cgi 19:3 -C",
    ]
    assert "sudo" not in mig.to_nvidia_smi(lay, sudo=False)


@pytest.mark.parametrize("model", ["H100-80GB", "A30", "RTX-PRO-6000"])
def test_to_nvidia_smi_parsed_back_equals_every_maximal_layout(model: str) -> None:
    for lay in mig.maximal_layouts(model):
        assert mig.from_nvidia_smi(mig.to_nvidia_smi(lay), model) == lay


def test_from_nvidia_smi_reads_names_lists_defaults_and_destroy() -> None:
    text = ("# the guide's failing order\nnvidia-smi mig -cgi 19,19,14\n"
            "nvidia-smi mig -dgi\nnvidia-smi mig -cgi 3g.20gb,19:0,2g.10gb:2 -C\n")
    lay = mig.from_nvidia_smi(text, "A100-40GB")
    assert lay == Layout("A100-40GB", [("3g.20gb", 4), ("1g.5gb", 0), ("2g.10gb", 2)])
    with pytest.raises(PlacementError):
        mig.from_nvidia_smi("nvidia-smi mig -cgi 19,19,14,9", "A100-40GB")
    for bad in ("nvidia-smi mig -cgi", "nvidia-smi mig -cgi 19:x"):
        with pytest.raises(InputError):
            mig.from_nvidia_smi(bad, "A100-40GB")


# --- mig-parted: export, read back, strict parsing --------------------------------------------


def test_mig_parted_text_is_the_config_and_names_the_placements() -> None:
    lay = Layout.from_profiles("H100-80GB", ["1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb"])
    text = mig.to_mig_parted(lay, "all-balanced")
    assert yaml.safe_load(text) == mig.mig_parted_config(lay, "all-balanced") == {
        "version": "v1", "mig-configs": {"all-balanced": [{
            "device-filter": ["0x233010DE"], "devices": "all", "mig-enabled": True,
            "mig-devices": {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}}]}}
    assert "3g.40gb@4" in text.splitlines()[0]
    assert yaml.safe_load(mig.to_mig_parted(Layout("A30"), devices=[0, 1]))[
        "mig-configs"]["labkit"][0]["mig-devices"] == {}


@pytest.mark.parametrize("model", ["H100-80GB", "A30", "RTX-PRO-6000", "B200"])
def test_mig_parted_round_trip_keeps_counts_and_canonical_layouts(model: str) -> None:
    for lay in mig.maximal_layouts(model):
        back = read_mig_parted(mig.to_mig_parted(lay), model)
        assert back.counts() == lay.counts()
        canonical = Layout.from_profiles(model, [n for n, k in lay.counts().items()
                                                 for _ in range(k)])
        assert read_mig_parted(mig.to_mig_parted(canonical), model) == canonical


def test_mig_parted_reads_the_readme_example_for_its_board_only() -> None:
    text = """
version: v1
mig-configs:
  all-disabled:
    - devices: all
      mig-enabled: false
  all-balanced:
    - device-filter: ["0x20B010DE", "0x20B110DE"]
      devices: all
      mig-enabled: true
      mig-devices: {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1}
    - device-filter: "0x233010DE"
      devices: [0, 1]
      mig-enabled: true
      mig-devices: {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}
"""
    a100 = read_mig_parted_entries(text, "A100-40GB")
    assert [(e.label, e.mig_enabled, len(e.layout)) for e in a100] == [
        ("all-disabled", False, 0), ("all-balanced", True, 4)]
    h100 = read_mig_parted_entries(text, "H100-80GB")
    assert h100[1].devices == (0, 1) and h100[1].layout.counts()["3g.40gb"] == 1
    assert read_mig_parted(text, "H100-80GB", "all-balanced") == h100[1].layout
    with pytest.raises(InputError):
        read_mig_parted(text, "A30", "all-balanced")


@pytest.mark.parametrize(("doc", "field", "rule"), [
    ("mig-configs: {a: [{devices: all, mig-enabled: false}]}", "version", "other"),
    ("version: v2\nmig-configs: {a: [{devices: all, mig-enabled: false}]}", "version", "choice"),
    ("version: v1", "mig-configs", "other"),
    ("version: v1\nextra: 1\nmig-configs: {}", "config", "choice"),
    ("version: v1\nmig-configs: {a: []}", "mig-configs.a", "other"),
    ("version: v1\nmig-configs: {a: [{mig-enabled: true, mig-devices: {}}]}",
     "mig-configs.a[0].devices", "other"),
    ("version: v1\nmig-configs: {a: [{devices: all}]}", "mig-configs.a[0].mig-enabled", "other"),
    ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: false, mig-devices: {}}]}",
     "mig-configs.a[0].mig-devices", "other"),
    ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: true}]}",
     "mig-configs.a[0].mig-devices", "other"),
    ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: yes please}]}",
     "mig-configs.a[0].mig-enabled", "other"),
    ("version: v1\nmig-configs: {a: [{devices: [0, 0], mig-enabled: false}]}",
     "mig-configs.a[0].devices", "other"),
    ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: true, colour: red, "
     "mig-devices: {}}]}", "mig-configs.a[0]", "choice"),
    ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: true, "
     "mig-devices: {1g.11gb: 1}}]}", "mig-configs.a[0].mig-devices", "choice"),
    ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: true, "
     "mig-devices: {1c.3g.40gb: 1}}]}", "mig-configs.a[0].mig-devices", "choice"),
    ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: true, "
     "mig-devices: {1g.10gb: -1}}]}", "mig-configs.a[0].mig-devices.1g.10gb", "integer"),
    ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: true, "
     "mig-devices: {1g.10gb: 8}}]}", "mig-configs.a[0].mig-devices", "other"),
    ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: true, "
     "mig-devices: {3g.40gb: 1, 4g.40gb: 1, 1g.10gb: 1}}]}", "mig-configs.a[0].mig-devices",
     "other"),
    ("version: v1\nmig-configs: [", "config", "other"),
    ("- just\n- a list", "config", "other"),
])
def test_mig_parted_strict_parsing_names_the_field(doc: str, field: str, rule: str) -> None:
    with pytest.raises(InputError) as err:
        read_mig_parted(doc, "H100-80GB")
    assert (err.value.field, err.value.rule) == (field, rule), str(err.value)


def test_mig_parted_unknown_profile_error_says_which_and_lists_the_boards() -> None:
    doc = ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: true, "
           "mig-devices: {1c.3g.40gb: 1}}]}")
    with pytest.raises(InputError) as err:
        read_mig_parted(doc, "H100-80GB")
    assert "1c.3g.40gb" in str(err.value) and "compute-instance splits" in str(err.value)
    assert "3g.40gb" in err.value.limit


def test_mig_parted_yaml_error_gives_the_line_and_long_text_is_refused() -> None:
    with pytest.raises(InputError) as err:
        parse_mig_parted("version: v1\nmig-configs:\n  a: [\n")
    assert "line" in str(err.value)
    with pytest.raises(InputError):
        parse_mig_parted("#" * 200_000)


def test_mig_parted_label_and_devices_are_checked() -> None:
    lay = Layout("H100-80GB")
    for bad in ("", "has space", "a:b", "x" * 80):
        with pytest.raises(InputError):
            mig.to_mig_parted(lay, bad)
    with pytest.raises(InputError):
        mig.to_mig_parted(lay, devices=[0, 0])


# --- properties ---------------------------------------------------------------------------------

PROFILES_8 = list(TOTAL_8_UNIT)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(PROFILES_8), st.one_of(st.none(),
                                                                 st.integers(-1, 8))),
                max_size=10))
def test_random_moves_keep_the_layout_valid(moves: list[tuple[str, int | None]]) -> None:
    lay = Layout("H100-80GB")
    for profile, start in moves:
        before = lay.free_capacity()
        ok = lay.can_place(profile, start)
        try:
            lay.place(profile, start)
        except (PlacementError, InputError):
            assert not ok
            continue
        assert ok and before[profile][0] >= 1
    units = [u for gi in lay.instances for u in gi.units]
    assert len(units) == len(set(units)) <= 8
    assert lay.used_compute_slices() <= 7
    for name, (free, total) in lay.free_capacity().items():
        assert 0 <= free <= total
        assert (free > 0) == lay.can_place(name)
    assert mig.from_nvidia_smi(mig.to_nvidia_smi(lay), "H100-80GB") == lay
    assert set(lay.fragmentation().stranded_units) <= set(lay.fragmentation().free_units)
