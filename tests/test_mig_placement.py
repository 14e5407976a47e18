"""The pure MIG placement rules (labkit.mig.placement), exactly and as invariants.

shared/cases/mig.md case 1 (profile order matters without placements) is tested here, once, at
the layer that owns the rule; the layers above reuse the rules and are checked against a
brute-force oracle (tests/test_mig_oracle.py) instead.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.data.gpus import load_gpu_model
from labkit.gpumodels import GiProfile, MigSpec
from labkit.mig import placement as P

MIG_BOARDS = ["A30", "A100-40GB", "A100-80GB", "H100-80GB", "H100-PCIE", "H100-NVL", "H200",
              "B200", "RTX-PRO-6000"]


def spec(short: str) -> MigSpec:
    mig = load_gpu_model(short).mig
    assert mig is not None
    return mig


def prof(mig: MigSpec, key: int | str) -> GiProfile:
    found = mig.by_id(key) if isinstance(key, int) else mig.by_name(key)
    assert found is not None, key
    return found


def create(mig: MigSpec, placed: list[P.PlacedGi], profile_id: int,
           start: int | None = None) -> P.PlacedGi:
    gi = P.check_gi(mig, placed, profile_id, start)
    placed.append(gi)
    return gi


def test_mig_case1_profile_order_matters_without_placements() -> None:
    """NVIDIA MIG user guide "Instance Geometry" (A100-40GB): -cgi 19,19,14,9 fails on the 3g,
    -cgi 9,19,14,19 succeeds (3g@4, 1g@0, 2g@2, 1g@1 as the guide's -lgi shows), and with
    explicit placements 1g@0, 1g@1, 2g@2, 3g@4 every order succeeds."""
    mig, placed = spec("A100-40GB"), list[P.PlacedGi]()
    assert [create(mig, placed, pid).start for pid in (19, 19, 14)] == [6, 4, 0]
    with pytest.raises(P.PlacementError) as err:
        create(mig, placed, 9)
    assert err.value.rule == "no_free_placement" and not err.value.invalid_argument
    placed = list[P.PlacedGi]()
    assert [create(mig, placed, pid).start for pid in (9, 19, 14, 19)] == [4, 0, 2, 1]
    for order in itertools.permutations([(19, 0), (19, 1), (14, 2), (9, 4)]):
        placed = list[P.PlacedGi]()
        for pid, start in order:
            create(mig, placed, pid, start)
        assert P.used_units(placed) == set(range(8)), order


def test_seven_1g_fill_6_4_5_0_1_2_3_with_heap_ids() -> None:
    """7 x 1g on an empty H100 got GI IDs 13, 11, 12, 7, 8, 9, 10 (a public capture)."""
    mig, placed = spec("H100-80GB"), list[P.PlacedGi]()
    ids: list[int] = []
    for _ in range(7):
        gi = create(mig, placed, 19)
        ids.append(P.gi_id_for(mig, gi.start, 1, ids))
    assert [gi.start for gi in placed] == [6, 4, 5, 0, 1, 2, 3]
    assert ids == [13, 11, 12, 7, 8, 9, 10]


def test_2g_then_five_1g_like_the_guide() -> None:
    """-cgi 14,19,19,19,19,19 on A100: 2g at 4, the 1g's at 6, 0, 1, 2, 3 [G-start]."""
    mig, placed = spec("A100-40GB"), list[P.PlacedGi]()
    assert [create(mig, placed, pid).start for pid in (14, 19, 19, 19, 19, 19)] == [4, 6, 0, 1,
                                                                                     2, 3]


def test_rtx_pro_6000_2g_then_two_1g() -> None:
    """kubesimplify capture (610.43.02): -cgi 2g.48gb,1g.24gb,1g.24gb -> 2g@0, 1g@6, 1g@9."""
    mig, placed = spec("RTX-PRO-6000"), list[P.PlacedGi]()
    assert [create(mig, placed, pid).start for pid in (5, 14, 14)] == [0, 6, 9]
    ids: list[int] = []
    for gi in placed:
        ids.append(P.gi_id_for(mig, gi.start, gi.profile.memory_slices, ids))
    assert ids == [1, 5, 6]


def test_invalid_start_is_an_invalid_argument_and_overlap_is_not() -> None:
    mig, placed = spec("H100-80GB"), list[P.PlacedGi]()
    with pytest.raises(P.PlacementError) as err:
        create(mig, placed, 9, 2)
    assert err.value.rule == "invalid_placement" and err.value.invalid_argument
    create(mig, placed, 19, 4)
    with pytest.raises(P.PlacementError) as err:
        create(mig, placed, 9, 4)
    assert err.value.rule == "overlap"
    with pytest.raises(P.PlacementError) as err:
        create(mig, placed, 99)
    assert err.value.rule == "unknown_profile"


def test_me_profile_cap_of_one() -> None:
    mig, placed = spec("H100-80GB"), list[P.PlacedGi]()
    create(mig, placed, 20)
    assert P.remaining_capacity(mig, placed, prof(mig, 20)) == 0
    with pytest.raises(P.PlacementError) as err:
        create(mig, placed, 20)
    assert err.value.rule == "profile_cap"


def test_all_me_excludes_everything_but_no_me() -> None:
    """nvml.h: an ALL_ME instance "prevents allocation of all but _NO_ME profiles"."""
    mig, placed = spec("RTX-PRO-6000"), list[P.PlacedGi]()
    create(mig, placed, 65)  # 1g.24gb+me.all
    for pid in (14, 21, 47, 5):
        with pytest.raises(P.PlacementError) as err:
            create(mig, list(placed), pid)
        assert err.value.rule == "media_engines"
    create(mig, placed, 67)  # 1g.24gb-me fits
    other = [P.PlacedGi(prof(mig, 14), 0)]
    with pytest.raises(P.PlacementError, match="every media engine"):
        create(mig, other, 65)


def test_remaining_capacity_drops_for_other_profiles() -> None:
    """lgip "Free": a 3g at 4 leaves four 1g, two 2g, one 3g or 4g, and no 7g."""
    mig, placed = spec("H100-80GB"), list[P.PlacedGi]()
    create(mig, placed, 9, 4)
    free = {p.name: P.remaining_capacity(mig, placed, p) for p in mig.profiles}
    assert free == {"1g.10gb": 4, "1g.10gb+me": 1, "1g.20gb": 2, "2g.20gb": 2, "3g.40gb": 1,
                    "4g.40gb": 1, "7g.80gb": 0}


def test_compute_instance_profiles_per_gi() -> None:
    """A100 table of MIG devices: 3g: 1c x3, 2c x1, 3c x1; 4g has no 3c; 7g: 3c x2."""
    mig = spec("A100-40GB")
    offered = {name: {(ci.slices, P.ci_remaining_capacity(prof(mig, name), [], ci.id))
                      for ci, _ in P.ci_profiles(prof(mig, name))}
               for name in ("1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb")}
    assert offered == {"1g.5gb": {(1, 1)}, "2g.10gb": {(1, 2), (2, 1)},
                       "3g.20gb": {(1, 3), (2, 1), (3, 1)}, "4g.20gb": {(1, 4), (2, 2), (4, 1)},
                       "7g.40gb": {(1, 7), (2, 3), (3, 2), (4, 1), (7, 1)}}
    three = prof(mig, "3g.20gb")
    assert P.ci_default_start(three, [(0, 1)], 0) == 1
    assert P.ci_default_start(three, [(0, 3)], 0) is None
    assert P.ci_profile(prof(mig, "4g.20gb"), 2) is None


# --- invariants ---------------------------------------------------------------------------------


@st.composite
def create_sequences(draw: st.DrawFn) -> tuple[str, list[tuple[int, int | None]]]:
    board = draw(st.sampled_from(MIG_BOARDS))
    mig = spec(board)
    ops = draw(st.lists(st.tuples(st.sampled_from([p.id for p in mig.profiles]),
                                  st.one_of(st.none(), st.integers(0, mig.memory_units))),
                        max_size=12))
    return board, ops


@settings(max_examples=150, deadline=None)
@given(create_sequences())
def test_any_create_sequence_keeps_the_rules(
        case: tuple[str, list[tuple[int, int | None]]]) -> None:
    board, ops = case
    mig, placed = spec(board), list[P.PlacedGi]()
    for pid, start in ops:
        profile = mig.by_id(pid)
        assert profile is not None
        before = P.remaining_capacity(mig, placed, profile)
        try:
            create(mig, placed, pid, start)
        except P.PlacementError as err:
            if start is None:
                assert before == 0, (board, pid, err.rule)
            continue
        assert before > 0
        # no overlap, caps, compute slices
        units = [u for gi in placed for u in gi.units]
        assert len(units) == len(set(units)) and max(units) < mig.memory_units
        assert sum(gi.profile.compute_slices for gi in placed) <= mig.compute_slices
        for p in mig.profiles:
            assert sum(gi.profile.id == p.id for gi in placed) <= p.max_count
    # at the end: capacity > 0 exactly when a default create succeeds
    for p in mig.profiles:
        try:
            P.check_gi(mig, placed, p.id)
            ok = True
        except P.PlacementError:
            ok = False
        assert ok == (P.remaining_capacity(mig, placed, p) > 0), (board, p.name)
