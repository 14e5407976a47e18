"""labkit.mig, the planning half: layouts, nvidia-smi and mig-parted, bad input per function.

Which layouts exist, which starts are open and how many more GIs fit are checked against a
brute-force oracle in tests/test_mig_oracle.py; case 1 of shared/cases/mig.md in
tests/test_mig_placement.py. Here: the operations on a layout, the exports and how a whole
mig-parted file is read (NVIDIA/mig-parted at bd7160f4, ``api/spec/v1/spec.go``,
``pkg/types/mig_config.go``, ``cmd/nvidia-mig-parted/assert/assert.go``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit import mig
from labkit.data.gpus import load_gpu_model
from labkit.data.mig import (
    parse_mig_parted,
    read_mig_parted,
    read_mig_parted_entries,
    read_mig_parted_spec,
)
from labkit.mig import Layout, PlacementError
from labkit.validate import InputError

EXCERPT = Path(__file__).parent / "fixtures" / "mig" / "config-default-excerpt.yaml"
BALANCED = ["1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb"]


# --- layouts ------------------------------------------------------------------------------------


def test_remove_by_unit_profile_and_instance() -> None:
    lay = Layout("H100-80GB", [("3g.40gb", 4), ("1g.10gb", 0), ("1g.10gb", 1)])
    assert lay.remove(5).profile.name == "3g.40gb"
    assert lay.remove("1g.10gb", 0).start == 0
    gi = lay.instances[0]
    assert lay.remove(gi) == gi and len(lay) == 0


def test_fragmentation_seven_1g_strand_unit_7() -> None:
    """1g placements stop at 6 (-lgipp {0..6}:1), so 7 x 1g.10gb leave unit 7 unusable."""
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


def test_layout_equality_ignores_placement_order_and_names_the_board() -> None:
    a = Layout("H100-80GB", [("1g.10gb", 0), ("3g.40gb", 4)])
    b = Layout("H100-80GB", [("3g.40gb", 4), ("1g.10gb", 0)])
    assert a == b and a != Layout("H100-80GB", [("1g.10gb", 1), ("3g.40gb", 4)])
    assert a != Layout("H100-PCIE", [("1g.10gb", 0), ("3g.40gb", 4)])
    assert "1g.10gb@0" in repr(a)
    assert Layout("h100-80gb").model.short_name == "H100-80GB"
    assert Layout(load_gpu_model("A30")).model.short_name == "A30"


def test_from_profiles_reproduces_the_real_all_balanced_geometry() -> None:
    # a real -lgi on A100-80GB with all-balanced: 2g@0, 1g@2, 1g@3, 3g@4 (mig.md §2.4)
    lay = Layout.from_profiles("A100-80GB", BALANCED)
    assert [(gi.profile.name, gi.start) for gi in lay.sorted_instances()] == [
        ("2g.20gb", 0), ("1g.10gb", 2), ("1g.10gb", 3), ("3g.40gb", 4)]


def test_from_profiles_searches_when_the_default_order_fails() -> None:
    # largest first at the driver's defaults puts the 2g's at 4, 0, 2: the 1g.20gb must go to 6
    lay = Layout.from_profiles("H100-80GB", ["1g.20gb", "2g.20gb", "2g.20gb", "2g.20gb"])
    assert [(gi.profile.name, gi.start) for gi in lay.sorted_instances()] == [
        ("2g.20gb", 0), ("2g.20gb", 2), ("2g.20gb", 4), ("1g.20gb", 6)]


# --- bad input: one table per function ------------------------------------------------------------


def _layout(*args: Any) -> Callable[[], object]:
    return lambda: Layout(*args)


def _place(profile: Any, start: Any, placed: tuple[tuple[str, int], ...] = ()) -> Callable[
        [], object]:
    return lambda: Layout("H100-80GB", placed).place(profile, start)


@pytest.mark.parametrize(("call", "error", "rule"), [
    (_layout("H999"), InputError, "choice"),
    (_layout("L40S"), InputError, "choice"),  # no MIG
    (_layout(42), InputError, "choice"),
    (_layout("H100-80GB", [("3g.40gb", 0), ("3g.40gb", 0)]), PlacementError, "overlap"),
    (_place("9g.1gb", None), PlacementError, "unknown_profile"),
    (_place(99, None), PlacementError, "unknown_profile"),
    (_place("3g.40gb", 2), PlacementError, "invalid_placement"),
    (_place("1g.10gb", 7), PlacementError, "invalid_placement"),
    (_place("1g.10gb", -1), InputError, "integer"),
    (_place("1g.10gb", 2.5), InputError, "integer"),
    (_place("1g.10gb", "x"), InputError, "number"),
    (_place("3g.40gb", 4, (("2g.20gb", 4),)), PlacementError, "overlap"),
    (_place("1g.10gb+me", 1, (("1g.10gb+me", 0),)), PlacementError, "profile_cap"),
    (_place("4g.40gb", None, (("1g.10gb", 0),)), PlacementError, "no_free_placement"),
])
def test_layout_and_place_refuse_bad_input(call: Callable[[], object], error: type[Exception],
                                           rule: str) -> None:
    with pytest.raises(error) as err:
        call()
    assert getattr(err.value, "rule", None) == rule, str(err.value)


@pytest.mark.parametrize("what", [3, "1g.10gb", 99, "4g.40gb", Layout("A30").place("1g.6gb")])
def test_remove_refuses_what_is_not_there(what: Any) -> None:
    lay = Layout("H100-80GB", [("3g.40gb", 4)])
    with pytest.raises(ValueError, match="no GPU instance"):
        lay.remove(what)


@pytest.mark.parametrize(("profiles", "rule"), [
    (["3g.40gb"] * 3, "profile_cap"),
    (["4g.40gb", "4g.40gb"], "profile_cap"),
    (["3g.40gb", "3g.40gb", "1g.10gb", "1g.10gb"], "compute_slices"),
    (["3g.40gb", "3g.40gb", "1g.10gb"], "does_not_fit"),
    (["9g.1gb"], "unknown_profile"),
    (["1g.10gb"] * 17, "does_not_fit"),
])
def test_from_profiles_refuses_what_cannot_fit(profiles: list[str], rule: str) -> None:
    with pytest.raises(PlacementError) as err:
        Layout.from_profiles("H100-80GB", profiles)
    assert err.value.rule == rule


@pytest.mark.parametrize(("text", "error"), [
    ("nvidia-smi mig -cgi", InputError),
    ("nvidia-smi mig -cgi 19:x", InputError),
    (42, InputError),
    ("x" * 20_001, InputError),
    ("nvidia-smi mig -cgi 19,19,14,9", mig.CommandPlacementError),  # the guide's failing order
    ("nvidia-smi mig -cgi 9:2", mig.CommandPlacementError),
])
def test_from_nvidia_smi_refuses_bad_commands(text: Any, error: type[Exception]) -> None:
    with pytest.raises(error) as err:
        mig.from_nvidia_smi(text, "A100-40GB")
    if isinstance(err.value, mig.CommandPlacementError):
        assert err.value.line == 1 and err.value.check.rule == err.value.rule


@pytest.mark.parametrize(("label", "devices"), [
    ("", "all"), ("has space", "all"), ("a:b", "all"), ("x" * 80, "all"), (7, "all"),
    ("ok", [0, 0]), ("ok", []), ("ok", "some"), ("ok", [-1]),
])
def test_to_mig_parted_refuses_bad_labels_and_devices(label: Any, devices: Any) -> None:
    with pytest.raises(InputError):
        mig.to_mig_parted(Layout("H100-80GB"), label, devices=devices)


# --- nvidia-smi: export and parse back ----------------------------------------------------------


def test_to_nvidia_smi_enables_mig_then_creates_largest_first_with_placements() -> None:
    lay = Layout.from_profiles("H100-80GB", BALANCED)
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


# --- mig-parted: export ---------------------------------------------------------------------------


def test_mig_parted_text_is_the_config_and_names_the_placements() -> None:
    lay = Layout.from_profiles("H100-80GB", BALANCED)
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


# --- mig-parted: the whole file at parse time, one label on a board -------------------------------


def test_the_whole_file_is_read_with_every_entry_filter_and_device_list() -> None:
    spec = read_mig_parted_spec(EXCERPT.read_text())
    assert spec.labels == ("all-disabled", "all-enabled", "all-1g.5gb", "all-1g.10gb",
                           "all-1g.24gb-me", "all-balanced", "per-gpu")
    assert spec.mig_configs["all-disabled"] == (mig.MigConfigSpec("all", False),)
    assert spec.mig_configs["all-enabled"] == (mig.MigConfigSpec("all", True),)
    balanced = spec.mig_configs["all-balanced"]
    assert len(balanced) == 7
    assert balanced[-1].device_filter == ("0x20B710DE",)  # a plain string filter
    assert balanced[2].device_filter == ("0x233510DE", "0x233B10DE")
    per_gpu = spec.mig_configs["per-gpu"]
    assert [e.devices for e in per_gpu] == [(0, 1, 2, 3), (4, 5, 6, 7)]
    assert per_gpu[0].counts() == {"1g.10gb": 7, "3g.40gb": 0}


@pytest.mark.parametrize(("model", "expected"), [
    ("H100-80GB", {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}),
    ("H100-PCIE", {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}),
    ("A100-80GB", {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}),
    ("A100-40GB", {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1}),
    ("A30", {"1g.6gb": 2, "2g.12gb": 1}),
    ("H100-NVL", {"1g.12gb": 2, "2g.24gb": 1, "3g.47gb": 1}),
    ("H200", {"1g.18gb": 2, "2g.35gb": 1, "3g.71gb": 1}),
    ("B200", {"1g.23gb": 2, "2g.45gb": 1, "3g.90gb": 1}),
    ("RTX-PRO-6000", {"1g.24gb": 2, "2g.48gb": 1}),
])
def test_only_the_chosen_label_meets_the_board(model: str, expected: dict[str, int]) -> None:
    """all-balanced has one entry per board; labels for other boards are never checked."""
    text = EXCERPT.read_text()
    entries = read_mig_parted_entries(text, model, "all-balanced")
    assert len(entries) == 1 and entries[0].layout.counts() == expected
    assert read_mig_parted(text, model, "all-balanced").counts() == expected
    assert read_mig_parted(text, model, "all-disabled") == Layout(model)
    assert read_mig_parted(text, model, "all-enabled") == Layout(model)
    usable = mig.labels_for(read_mig_parted_spec(text), model)
    assert {"all-disabled", "all-enabled", "all-balanced"} <= set(usable)
    assert ("all-1g.5gb" in usable) == (model == "A100-40GB")
    assert ("all-1g.24gb-me" in usable) == (model == "RTX-PRO-6000")
    assert ("per-gpu" in usable) == (model == "H100-80GB")  # filtered out elsewhere


def test_entries_for_other_boards_and_gpus_are_kept_but_not_applied() -> None:
    text = EXCERPT.read_text()
    h100 = read_mig_parted_entries(text, "H100-80GB", "per-gpu")
    assert [(e.index, e.devices, e.layout.counts()) for e in h100] == [
        (0, (0, 1, 2, 3), {"1g.10gb": 7}), (1, (4, 5, 6, 7), {"3g.40gb": 1, "4g.40gb": 1})]
    assert read_mig_parted(text, "H100-80GB", "per-gpu", gpu=2).counts() == {"1g.10gb": 7}
    assert read_mig_parted(text, "H100-80GB", "per-gpu", gpu=5).counts() == {
        "3g.40gb": 1, "4g.40gb": 1}
    assert read_mig_parted_entries(text, "A30", "per-gpu") == []  # filtered out, not an error
    with pytest.raises(InputError) as err:
        read_mig_parted(text, "H100-80GB", "per-gpu", gpu=8)
    assert err.value.field == "label"
    a100 = read_mig_parted_entries(text, "A100-40GB", "all-1g.10gb")
    assert [(e.index, e.device_filter, e.layout.counts()) for e in a100] == [
        (1, ("0x20B010DE",), {"1g.10gb": 4})]


@pytest.mark.parametrize(("device_filter", "matches"), [
    ((), True), (("0x233010DE",), True), (("0x233010de",), True),
    (("0x20B010DE", "0x233010DE"), True),
    (("0x20B010DE",), False), (("0x233010DE:0x16C110DE",), False),  # a subsystem ID: exact only
    (("not-an-id",), False), (("0x233010DE:x",), False), (("590352606",), True),  # decimal
])
def test_device_filters_match_as_mig_parted_matches_them(device_filter: tuple[str, ...],
                                                         matches: bool) -> None:
    entry = mig.MigConfigSpec("all", False, device_filter=device_filter)
    assert entry.matches_device_filter(0x233010DE) is matches
    assert entry.matches_devices(3) and not mig.MigConfigSpec((0, 1), False).matches_devices(3)


def test_a_later_entry_for_the_same_gpu_wins_as_mig_parted_applies_them_in_order() -> None:
    doc = {"version": "v1", "mig-configs": {"x": [
        {"devices": "all", "mig-enabled": True, "mig-devices": {"1g.10gb": 7}},
        {"devices": [1], "mig-enabled": False}]}}
    assert mig.layout_from_mig_parted(doc, "H100-80GB", gpu=0).counts() == {"1g.10gb": 7}
    assert mig.layout_from_mig_parted(doc, "H100-80GB", gpu=1) == Layout("H100-80GB")


def test_a_label_is_chosen_as_mig_parted_chooses_it() -> None:
    text = EXCERPT.read_text()
    with pytest.raises(InputError) as err:  # several labels and no -c
        read_mig_parted(text, "A30")
    assert err.value.field == "label" and err.value.rule == "choice"
    assert "all-balanced" in err.value.limit and "all-1g.5gb" not in err.value.limit
    with pytest.raises(InputError) as err:
        read_mig_parted(text, "A30", "all-unknown")
    assert err.value.field == "label" and "all-balanced" in err.value.limit
    one = "version: v1\nmig-configs: {only: [{devices: all, mig-enabled: false}]}"
    assert read_mig_parted(one, "A30") == Layout("A30")  # the only label, without -c
    two = ("version: v1\nmig-configs: {only: [{devices: all, mig-enabled: false}], "
           "other: [{devices: all, mig-enabled: false}]}")
    with pytest.raises(InputError) as err:
        read_mig_parted(two, "A30")
    assert err.value.limit == ("only", "other")


@pytest.mark.skipif(not os.environ.get("LABKIT_MIG_PARTED_DEFAULT"),
                    reason="set LABKIT_MIG_PARTED_DEFAULT to NVIDIA's config-default.yaml")
@pytest.mark.parametrize("model", ["A30", "A100-40GB", "A100-80GB", "H100-80GB", "H100-PCIE",
                                   "H100-NVL", "H200", "B200", "RTX-PRO-6000"])
def test_nvidia_config_default_imports_on_every_board(model: str) -> None:
    """NVIDIA/mig-parted deployments/systemd/config-default.yaml (not in the repo; fetch it)."""
    text = Path(os.environ["LABKIT_MIG_PARTED_DEFAULT"]).read_text()
    spec = read_mig_parted_spec(text)
    assert len(spec.labels) > 20 and "all-balanced" in spec.labels
    usable = mig.labels_for(spec, model)
    assert {"all-disabled", "all-enabled", "all-balanced"} <= set(usable)
    balanced = read_mig_parted(text, model, "all-balanced")
    # 3g + 2g + 2 x 1g on 7-slice boards, 2g + 2 x 1g on 4-slice boards: every slice
    assert balanced.used_compute_slices() == balanced.spec.compute_slices
    assert len(balanced) == (4 if balanced.spec.compute_slices == 7 else 3)
    whole = [label for label in usable if label.startswith("all-") and
             read_mig_parted(text, model, label).used_compute_slices() == 0]
    assert set(whole) == {"all-disabled", "all-enabled"}


@pytest.mark.parametrize(("doc", "field", "rule"), [
    ("mig-configs: {a: [{devices: all, mig-enabled: false}]}", "version", "other"),
    ("version: v2\nmig-configs: {a: [{devices: all, mig-enabled: false}]}", "version", "choice"),
    ("", "version", "choice"),
    ("version: v1\nextra: 1\nmig-configs: {}", "config", "choice"),
    ("version: v1\nmig-configs: {}", "mig-configs", "other"),
    ("version: v1\nmig-configs: {a: []}", "mig-configs.a", "other"),
    ("version: v1\nmig-configs: {a: {devices: all}}", "mig-configs.a", "other"),
    ("version: v1\nmig-configs: {a: [{mig-enabled: true, mig-devices: {}}]}",
     "mig-configs.a[0].devices", "other"),
    ("version: v1\nmig-configs: {a: [{devices: all}]}", "mig-configs.a[0].mig-enabled", "other"),
    ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: true}]}",
     "mig-configs.a[0].mig-devices", "other"),
    ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: true, mig-devices: null}]}",
     "mig-configs.a[0].mig-devices", "other"),
    ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: false, "
     "mig-devices: {1g.10gb: 1}}]}", "mig-configs.a[0].mig-devices", "other"),
    ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: yes please}]}",
     "mig-configs.a[0].mig-enabled", "other"),
    ("version: v1\nmig-configs: {a: [{devices: some, mig-enabled: false}]}",
     "mig-configs.a[0].devices", "other"),
    ("version: v1\nmig-configs: {a: [{devices: [0, x], mig-enabled: false}]}",
     "mig-configs.a[0].devices", "other"),
    ("version: v1\nmig-configs: {a: [{devices: 0, mig-enabled: false}]}",
     "mig-configs.a[0].devices", "other"),
    ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: false, device-filter: 7}]}",
     "mig-configs.a[0].device-filter", "other"),
    ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: true, colour: red, "
     "mig-devices: {}}]}", "mig-configs.a[0]", "choice"),
    ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: true, "
     "mig-devices: {1g.10gb: 0}}]}", "mig-configs.a[0].mig-devices", "other"),  # all zero
    ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: true, "
     "mig-devices: {1g.10gb: -1}}]}", "mig-configs.a[0].mig-devices.1g.10gb", "integer"),
    ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: true, "
     "mig-devices: {1g.10gb: 1.5}}]}", "mig-configs.a[0].mig-devices.1g.10gb", "integer"),
    ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: true, "
     "mig-devices: {big: 1}}]}", "mig-configs.a[0].mig-devices", "other"),
    ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: true, "
     "mig-devices: {1g.10gb+me-x: 1}}]}", "mig-configs.a[0].mig-devices", "other"),
    ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: true, "
     "mig-devices: {1g.10gb+me+me: 1}}]}", "mig-configs.a[0].mig-devices", "other"),
    ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: true, "
     "mig-devices: {'1g.10gb+me,me': 1}}]}", "mig-configs.a[0].mig-devices", "other"),
    ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: true, "
     "mig-devices: {10.10gb: 1}}]}", "mig-configs.a[0].mig-devices", "other"),
    ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: true, "
     "mig-devices: {1g.10gb: true}}]}", "mig-configs.a[0].mig-devices.1g.10gb", "integer"),
    ("version: v1\nmig-configs: [", "config", "other"),
    ("- just\n- a list", "config", "other"),
])
def test_the_format_of_every_label_is_checked_at_parse_time(doc: str, field: str,
                                                            rule: str) -> None:
    with pytest.raises(InputError) as err:
        read_mig_parted_spec(doc)
    assert (err.value.field, err.value.rule) == (field, rule), str(err.value)


@pytest.mark.parametrize("entry", [
    "{devices: all, mig-enabled: false, mig-devices: {}}",  # mig-parted accepts this
    "{devices: [], mig-enabled: false}",
    "{devices: [3, 3], mig-enabled: false}",
    "{devices: all, mig-enabled: false, device-filter: ''}",
    "{devices: all, mig-enabled: true, mig-devices: {1c.3g.40gb: 1, 1g.10gb: 0}}",
    "{devices: all, mig-enabled: true, mig-devices: {1g.24gb+me.all: 1, 1g.24gb-me: 3}}",
])
def test_what_mig_parted_accepts_at_parse_time_is_accepted(entry: str) -> None:
    spec = read_mig_parted_spec(f"version: v1\nmig-configs: {{a: [{entry}]}}")
    assert spec.labels == ("a",)


@pytest.mark.parametrize(("devices", "field", "rule", "says"), [
    ("{1g.11gb: 1}", "mig-configs.a[0].mig-devices", "choice", "no profile '1g.11gb'"),
    ("{7g.79gb: 1}", "mig-configs.a[0].mig-devices", "choice", "7g.79gb"),  # cases/mig.md #3
    ("{1c.3g.40gb: 1}", "mig-configs.a[0].mig-devices", "choice", "compute-instance splits"),
    ("{1g.10gb: 8}", "mig-configs.a[0].mig-devices", "other", "capped"),
    ("{3g.40gb: 1, 4g.40gb: 1, 1g.10gb: 1}", "mig-configs.a[0].mig-devices", "other",
     "compute slices"),
])
def test_the_chosen_label_is_checked_against_the_board(devices: str, field: str, rule: str,
                                                       says: str) -> None:
    doc = f"version: v1\nmig-configs: {{a: [{{devices: all, mig-enabled: true, " \
          f"mig-devices: {devices}}}]}}"
    read_mig_parted_spec(doc)  # the format is fine
    with pytest.raises(InputError) as err:
        read_mig_parted(doc, "A100-80GB")
    assert (err.value.field, err.value.rule) == (field, rule), str(err.value)
    assert says in str(err.value)


def test_the_driver_names_read_on_their_board() -> None:
    """cases/mig.md #3: an A100-80GB config written with 7g.80gb and 3g.40gb is accepted."""
    doc = ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: true, "
           "mig-devices: {7g.80gb: 1}}], b: [{devices: all, mig-enabled: true, "
           "mig-devices: {3g.40gb: 2}}]}")
    assert read_mig_parted(doc, "A100-80GB", "a").counts() == {"7g.80gb": 1}
    assert read_mig_parted(doc, "A100-80GB", "b").counts() == {"3g.40gb": 2}


def test_mig_parted_yaml_error_gives_the_line_and_long_text_is_refused() -> None:
    with pytest.raises(InputError) as err:
        parse_mig_parted("version: v1\nmig-configs:\n  a: [\n")
    assert "line" in str(err.value)
    with pytest.raises(InputError):
        parse_mig_parted("#" * 200_000)


# --- properties ---------------------------------------------------------------------------------

PROFILES_8 = ["1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"]


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


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 9), st.floats(allow_nan=True),
                     st.sampled_from(["all", "v1", "1g.10gb", "3g.40gb", "1c.3g.40gb",
                                      "0x233010DE", "me", "", "x"]))
_KEYS = st.sampled_from(["version", "mig-configs", "devices", "mig-enabled", "mig-devices",
                         "device-filter", "a", "1g.10gb", "7g.80gb", "1g.10gb+me", "x"])
_DOCS = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(_KEYS, inner, max_size=5)), max_leaves=25)


@settings(max_examples=300, deadline=None)
@given(st.one_of(_DOCS, st.builds(
    lambda configs: {"version": "v1", "mig-configs": configs},
    st.dictionaries(st.sampled_from(["a", "b"]), _DOCS, max_size=2))))
def test_any_document_is_read_or_refused_with_an_input_error(doc: Any) -> None:
    """Bad input never crashes a lesson: a ValueError naming the field, nothing else."""
    try:
        spec = mig.parse_mig_parted_spec(doc)
    except InputError:
        return
    for label in spec.labels:
        try:
            mig.layout_from_mig_parted(spec, "H100-80GB", label)
        except InputError:
            continue
