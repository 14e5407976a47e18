"""Layout.check field by field (what lesson 02 explains), the presets and first-fit packing.

Oracle: the H100-80GB and A30 / RTX PRO 6000 MIG geometry as NVIDIA publishes it (MIG user
guide, "Supported MIG profiles" and ``nvidia-smi mig -lgipp``; data/gpus/*.yaml carry the same
table with its source): on H100-80GB 3g.40gb starts at memory unit 0 or 4 and spans 4 units, at
most 2 of them, 3 compute slices each; 1g.10gb starts at 0-6 (unit 7 is never its own), 7 of
them, 1 slice; 2g.20gb spans 2 units from 0, 2 or 4, 2 slices; 7 compute slices in all. Which
rule fires is checked against a brute force in tests/test_mig_oracle.py; here every other field
of the answer, worked out by hand from that table.
"""

from __future__ import annotations

from typing import Any

import pytest

from labkit.mig import Layout, PlacementError
from labkit.mig.layout import default_ci_profile, resolve_model
from labkit.mig.planning import pack_profiles, presets
from labkit.validate import InputError

H100_1G_STARTS = (0, 1, 2, 3, 4, 5, 6)
FOUR_1G: list[tuple[str, int | None]] = [("1g.10gb", s) for s in range(4)]

CASES: list[tuple[str, list[tuple[str, int | None]], str, Any, dict[str, Any]]] = [
    # an empty board: 3g.40gb at 0 takes units 0-3, both of its starts are open
    ("H100-80GB", [], "3g.40gb", 0, dict(
        ok=True, rule=None, profile="3g.40gb", start=0, chosen_start=0, units=(0, 1, 2, 3),
        legal_starts=(0, 4), open_starts=(0, 4), blocked_units=(), blockers=(), count=0,
        max_count=2, compute_needed=3, compute_left=7, message="")),
    # 2g.20gb at 4 holds units 4, 5: 3g.40gb at 4 (units 4-7) overlaps it; only 0 is open;
    # 7 - 2 = 5 slices left
    ("H100-80GB", [("2g.20gb", 4)], "3g.40gb", 4, dict(
        ok=False, rule="overlap", profile="3g.40gb", start=4, chosen_start=None,
        units=(4, 5, 6, 7), legal_starts=(0, 4), open_starts=(0,), blocked_units=(4, 5),
        blockers=("2g.20gb@4",), count=0, max_count=2, compute_needed=3, compute_left=5)),
    # 3g.40gb cannot start at unit 2: no units, nothing in the way
    ("H100-80GB", [], "3g.40gb", 2, dict(
        ok=False, rule="invalid_placement", profile="3g.40gb", start=2, chosen_start=None,
        units=(), legal_starts=(0, 4), open_starts=(0, 4), blocked_units=(), blockers=(),
        count=0, max_count=2, compute_needed=3, compute_left=7)),
    # 1g.10gb at 0 and 2g.20gb at 4 block both 3g.40gb starts: units 0 and 4, 5 are in the
    # way, named by start; 7 - 1 - 2 = 4 slices left
    ("H100-80GB", [("1g.10gb", 0), ("2g.20gb", 4)], "3g.40gb", None, dict(
        ok=False, rule="no_free_placement", profile="3g.40gb", start=None, chosen_start=None,
        units=(), legal_starts=(0, 4), open_starts=(), blocked_units=(0, 4, 5),
        blockers=("1g.10gb@0", "2g.20gb@4"), count=0, max_count=2, compute_needed=3,
        compute_left=4)),
    # two 3g.40gb already: the cap of 2; 7 - 6 = 1 slice left
    ("H100-80GB", [("3g.40gb", 0), ("3g.40gb", 4)], "3g.40gb", None, dict(
        ok=False, rule="profile_cap", profile="3g.40gb", start=None, chosen_start=None,
        units=(), legal_starts=(0, 4), open_starts=(), blocked_units=(), blockers=(),
        count=2, max_count=2, compute_needed=3, compute_left=1)),
    # 3g.40gb at 4 (3 slices) and four 1g.10gb (4 slices): 0 slices left for a fifth 1g
    ("H100-80GB", [("3g.40gb", 4), *FOUR_1G], "1g.10gb", None,
     dict(ok=False, rule="compute_slices", profile="1g.10gb", start=None, chosen_start=None,
          units=(), legal_starts=H100_1G_STARTS, open_starts=(), blocked_units=(),
          blockers=(), count=4, max_count=7, compute_needed=1, compute_left=0)),
    # RTX PRO 6000: a +me.all GI holds every media engine, so a plain 1g.24gb may not join it,
    # and a +me.all GI may not join a plain one
    ("RTX-PRO-6000", [("1g.24gb+me.all", 0)], "1g.24gb", None, dict(
        ok=False, rule="media_engines", blocked_units=(), blockers=("1g.24gb+me.all@0",))),
    ("RTX-PRO-6000", [("1g.24gb", 0)], "2g.48gb+me.all", None, dict(
        ok=False, rule="media_engines", blocked_units=(), blockers=("1g.24gb@0",))),
    # A30 has no 1g.10gb (its 1g is 1g.6gb): the profile as given, nothing else known
    ("A30", [], "1g.10gb", None, dict(
        ok=False, rule="unknown_profile", profile="1g.10gb", start=None, chosen_start=None,
        units=(), legal_starts=(), open_starts=(), count=0, max_count=0)),
    # a start that is no whole number: the profile's starts, to choose from
    ("H100-80GB", [], "1g.10gb", 2.5, dict(
        ok=False, rule="invalid_placement", profile="1g.10gb", start=None, chosen_start=None,
        units=(), legal_starts=H100_1G_STARTS, open_starts=(), count=0, max_count=0,
        compute_needed=0, compute_left=0, message="start must be a whole number >= 0, got 2.5")),
]


@pytest.mark.parametrize(("model", "placed", "profile", "start", "want"), CASES,
                         ids=[f"{c[0]}-{c[2]}-{c[4]['rule']}" for c in CASES])
def test_check_answers_every_field(model: str, placed: list[tuple[str, int | None]],
                                   profile: str, start: Any, want: dict[str, Any]) -> None:
    got = Layout(model, placed).check(profile, start)
    assert {k: getattr(got, k) for k in want} == want
    if got.ok:
        assert got.message == ""
    elif "message" not in want:  # the rule's English message names the profile asked for
        assert profile in got.message


def test_the_driver_chooses_the_last_open_start_for_3g() -> None:
    # nvidia-smi mig -cgi 3g.40gb on an empty H100 places it at unit 4 (MIG user guide);
    # with 4-7 taken, at 0
    empty = Layout("H100-80GB").check("3g.40gb")
    assert (empty.ok, empty.chosen_start, empty.units) == (True, 4, (4, 5, 6, 7))
    half = Layout("H100-80GB", [("3g.40gb", 4)]).check("3g.40gb")
    assert (half.ok, half.chosen_start, half.units, half.count) == (True, 0, (0, 1, 2, 3), 1)


# NVIDIA/mig-parted deployments/systemd/config-default: the named layouts for each board
# (H100-80GB: all-1g.10gb 7 x 1g.10gb, all-2g.20gb 3, all-3g.40gb 2, all-balanced 2 x 1g.10gb +
# 2g.20gb + 3g.40gb, all-7g.80gb 1; A30: all-1g.6gb 4, all-2g.12gb 2, all-4g.24gb 1,
# all-balanced 2 x 1g.6gb + 2g.12gb); 4g + 3g is the one mixed layout of a 7-slice board
PRESETS = {
    "H100-80GB": {
        "all-1g.10gb": {"1g.10gb": 7},
        "all-balanced": {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1},
        "all-2g.20gb": {"2g.20gb": 3},
        "all-3g.40gb": {"3g.40gb": 2},
        "4g.40gb+3g.40gb": {"3g.40gb": 1, "4g.40gb": 1},
        "all-7g.80gb": {"7g.80gb": 1},
    },
    "A30": {
        "all-1g.6gb": {"1g.6gb": 4},
        "all-balanced": {"1g.6gb": 2, "2g.12gb": 1},
        "all-2g.12gb": {"2g.12gb": 2},
        "all-4g.24gb": {"4g.24gb": 1},
    },
}


@pytest.mark.parametrize("model", sorted(PRESETS))
def test_presets_are_mig_parteds_default_layouts(model: str) -> None:
    got = presets(model)
    assert list(got) == list(PRESETS[model])
    assert {name: lay.counts() for name, lay in got.items()} == PRESETS[model]


def test_pack_profiles_first_fit_largest_first() -> None:
    # three 3g.40gb and two 1g.10gb on H100s, largest first: 3g, 3g fill GPU 0 (all 8 units);
    # the third 3g opens GPU 1, where both 1g.10gb fit beside it (3 + 2 = 5 of 7 slices)
    gpus = pack_profiles("H100-80GB", ["1g.10gb", "3g.40gb", "1g.10gb", "3g.40gb", "3g.40gb"])
    assert [g.counts() for g in gpus] == [{"3g.40gb": 2}, {"1g.10gb": 2, "3g.40gb": 1}]
    assert pack_profiles("H100-80GB", []) == []
    # 8 x 1g.10gb: 7 on the first GPU, 1 on a second
    assert [len(g) for g in pack_profiles("H100-80GB", ["1g.10gb"] * 8)] == [7, 1]


def test_pack_profiles_refuses_unknown_profiles_and_too_many() -> None:
    with pytest.raises(PlacementError) as err:
        pack_profiles("A30", ["1g.10gb"])
    assert err.value.rule == "unknown_profile"
    # at most 8 GPUs of 16 instances each: 129 is too many
    with pytest.raises(PlacementError) as err:
        pack_profiles("H100-80GB", ["1g.10gb"] * 129)
    assert err.value.rule == "does_not_fit"
    assert str(err.value) == "129 GPU instances is too many"


def test_errors_name_the_model_profile_and_what_is_missing() -> None:
    with pytest.raises(InputError) as bad_model:
        resolve_model("X100")
    assert (bad_model.value.field, bad_model.value.value) == ("model", "X100")
    assert "H100-80GB" in bad_model.value.limit
    assert str(bad_model.value).startswith("unknown GPU model 'X100'; known: A100-40GB, ")
    with pytest.raises(InputError) as not_a_name:
        resolve_model(42)  # type: ignore[arg-type]
    assert (not_a_name.value.field, not_a_name.value.value, str(not_a_name.value)) == (
        "model", 42, "model must be a name, got 42")
    with pytest.raises(InputError) as no_mig:
        resolve_model("L40S")  # NVIDIA L40S has no MIG
    assert (no_mig.value.field, no_mig.value.value, str(no_mig.value)) == (
        "model", "L40S", "L40S has no MIG (no GPU instance profiles)")
    lay = Layout("H100-80GB")
    for not_a_profile in (True, False, "9g.99gb"):  # a bool is no profile ID (7g.80gb is ID 0)
        with pytest.raises(PlacementError) as err:
            lay.profile(not_a_profile)  # type: ignore[arg-type]
        assert err.value.rule == "unknown_profile"
        assert str(err.value) == (
            f"H100-80GB has no GPU instance profile {not_a_profile!r}; profiles: 1g.10gb, "
            "1g.10gb+me, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb")


def test_layout_repr_and_remove_messages() -> None:
    empty = Layout("H100-80GB")
    assert repr(empty) == "Layout('H100-80GB': empty)"
    two = Layout("H100-80GB", [("2g.20gb", 4), ("3g.40gb", 0)])
    assert repr(two) == "Layout('H100-80GB': 3g.40gb@0, 2g.20gb@4)"  # by start
    with pytest.raises(ValueError, match=r"^no GPU instance '3g.40gb' at 4 in Layout\('H100-80GB': "
                                         r"empty\)$"):
        empty.remove("3g.40gb", 4)
    with pytest.raises(ValueError, match=r"^no GPU instance '3g.40gb' in Layout\('H100-80GB': "
                                         r"empty\)$"):
        empty.remove("3g.40gb")
    with pytest.raises(ValueError, match=r"^no GPU instance 2.5 in "):
        empty.remove(2.5)  # type: ignore[arg-type]


def test_small_queries_by_hand() -> None:
    lay = Layout("H100-80GB", [("3g.40gb", 0)])
    assert lay.legal_starts("3g.40gb") == (0, 4) and lay.legal_starts("1g.20gb") == (0, 2, 4, 6)
    assert list(lay) == list(lay.instances) and len(lay) == 1
    assert not lay.is_maximal() and Layout("H100-80GB", [("7g.80gb", 0)]).is_maximal()
    # the full-size CI: 1g -> 0, 2g -> 1, 3g -> 2, 4g -> 3, 7g -> 4 (NVML CI profile IDs)
    assert {p.name: default_ci_profile(p) for p in lay.spec.profiles} == {
        "1g.10gb": 0, "1g.10gb+me": 0, "1g.20gb": 0, "2g.20gb": 1, "3g.40gb": 2, "4g.40gb": 3,
        "7g.80gb": 4}
    # 7 x 1g.10gb strand unit 7: one unit of 81,559 MiB / 8 (nvidia-smi's total)
    frag = Layout("H100-80GB", [("1g.10gb", s) for s in range(7)]).fragmentation()
    assert frag.stranded_units == (7,) and frag.unit_mib == 81_559 / 8
    assert frag.stranded_mib == pytest.approx(10_194.875)


def test_from_profiles_limits_and_the_drivers_default_start() -> None:
    # 16 instances pass the count limit (and meet the cap of 7), 17 do not
    with pytest.raises(PlacementError) as cap:
        Layout.from_profiles("H100-80GB", ["1g.10gb"] * 16)
    assert cap.value.rule == "profile_cap"
    with pytest.raises(PlacementError) as many:
        Layout.from_profiles("H100-80GB", ["1g.10gb"] * 17)
    assert (many.value.rule, str(many.value)) == ("does_not_fit",
                                                  "17 GPU instances is too many")
    # 3 + 3 + 1 = 7 slices, but two 3g.40gb take all 8 units
    with pytest.raises(PlacementError) as full:
        Layout.from_profiles("H100-80GB", ["3g.40gb", "1g.10gb", "3g.40gb"])
    assert str(full.value) == "3g.40gb, 3g.40gb, 1g.10gb do not fit on one H100-80GB"
    # one 3g.40gb goes where nvidia-smi puts it by default: unit 4
    assert [gi.start for gi in Layout.from_profiles("H100-80GB", ["3g.40gb"])] == [4]
