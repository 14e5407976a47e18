"""MIG layouts against a brute-force enumerator written here, from the published profile tables.

The oracle uses neither ``labkit.mig`` nor its placement rules: the tables below are copied by
hand from ``shared/reference/mig_profiles.json`` (``name: (compute slices, memory slices,
max_count, legal starts)``; real ``nvidia-smi mig -lgip``/``-lgipp`` captures where they exist,
shared/reference/mig.md §2.1, the 8-unit table assumed for H200/B200/H100 PCIe, §11.3), and the
rules are the ones NVIDIA documents (mig.md §0, §3): non-overlapping legal placements, the
per-profile cap (lgip Total), the board's compute slices, and ``nvml.h``'s "an ALL_ME instance
prevents allocation of all but _NO_ME profiles". The enumerator walks the memory units left to
right, at each unit leaving it free or starting a GI there; labkit's walks candidate placements
and asks ``check_gi``: the two are written differently on purpose.

The reference counts by enumeration (mig.md §3: 2319 layouts on the 8-unit H100 table, 84 on
A30, 1249 on RTX PRO 6000 without the ALL_ME rule) check the oracle itself.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest

from labkit import mig
from labkit.data.gpus import load_gpu_model

Profile = tuple[int, int, int, tuple[int, ...]]  # compute slices, memory slices, cap, starts

_EIGHT = (0, 1, 2, 3, 4, 5, 6)


def _eight_unit(one: str, one_2x: str, two: str, three: str, four: str, seven: str,
                me: bool = True) -> dict[str, Profile]:
    table: dict[str, Profile] = {one: (1, 1, 7, _EIGHT)}
    if me:
        table[one + "+me"] = (1, 1, 1, _EIGHT)
    table.update({one_2x: (1, 2, 4, (0, 2, 4, 6)), two: (2, 2, 3, (0, 2, 4)),
                  three: (3, 4, 2, (0, 4)), four: (4, 4, 1, (0,)), seven: (7, 8, 1, (0,))})
    return table


#: board -> (compute slices, memory units, profiles), from shared/reference/mig_profiles.json.
TABLES: dict[str, tuple[int, int, dict[str, Profile]]] = {
    "A30": (4, 4, {"1g.6gb": (1, 1, 4, (0, 1, 2, 3)), "1g.6gb+me": (1, 1, 1, (0, 1, 2, 3)),
                   "2g.12gb": (2, 2, 2, (0, 2)), "2g.12gb+me": (2, 2, 1, (0, 2)),
                   "4g.24gb": (4, 4, 1, (0,))}),
    "A100-40GB": (7, 8, _eight_unit("1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb",
                                    "7g.40gb")),
    "A100-80GB": (7, 8, _eight_unit("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb",
                                    "7g.80gb")),
    "H100-80GB": (7, 8, _eight_unit("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb",
                                    "7g.80gb")),
    "H100-PCIE": (7, 8, _eight_unit("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb",
                                    "7g.80gb")),
    "H100-NVL": (7, 8, _eight_unit("1g.12gb", "1g.24gb", "2g.24gb", "3g.47gb", "4g.47gb",
                                   "7g.94gb")),
    "H200": (7, 8, _eight_unit("1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb",
                               "7g.141gb")),
    "B200": (7, 8, _eight_unit("1g.23gb", "1g.45gb", "2g.45gb", "3g.90gb", "4g.90gb",
                               "7g.180gb")),
    "RTX-PRO-6000": (4, 12, {
        "1g.24gb": (1, 3, 4, (0, 3, 6, 9)), "1g.24gb+me": (1, 3, 1, (0, 3, 6, 9)),
        "1g.24gb+gfx": (1, 3, 4, (0, 3, 6, 9)), "1g.24gb+me.all": (1, 3, 1, (0, 3, 6, 9)),
        "1g.24gb-me": (1, 3, 4, (0, 3, 6, 9)), "2g.48gb": (2, 6, 2, (0, 6)),
        "2g.48gb+gfx": (2, 6, 2, (0, 6)), "2g.48gb+me.all": (2, 6, 1, (0, 6)),
        "2g.48gb-me": (2, 6, 2, (0, 6)), "4g.96gb": (4, 12, 1, (0,)),
        "4g.96gb+gfx": (4, 12, 1, (0,))}),
}
BOARDS = list(TABLES)

Gi = tuple[str, int]  # (profile name, start)


def _allowed(board: str, gis: list[Gi], all_me_rule: bool = True) -> bool:
    """The documented rules on a set of non-overlapping legal placements."""
    compute, _units, table = TABLES[board]
    counts = Counter(name for name, _ in gis)
    if any(n > table[name][2] for name, n in counts.items()):
        return False
    if sum(table[name][0] for name, _ in gis) > compute:
        return False
    if all_me_rule and any(name.endswith("+me.all") for name, _ in gis):
        return sum(not name.endswith("-me") for name, _ in gis) == 1
    return True


def enumerate_layouts(board: str, all_me_rule: bool = True) -> set[frozenset[Gi]]:
    """Every allowed layout: walk the units left to right, free or a GI starting there."""
    _compute, units, table = TABLES[board]
    starting = {u: [(name, size) for name, (_c, size, _m, starts) in table.items()
                    if u in starts and u + size <= units] for u in range(units)}
    found: set[frozenset[Gi]] = set()

    def walk(unit: int, gis: list[Gi]) -> None:
        if unit >= units:
            if _allowed(board, gis, all_me_rule):
                found.add(frozenset(gis))
            return
        walk(unit + 1, gis)
        for name, size in starting[unit]:
            walk(unit + size, [*gis, (name, unit)])

    walk(0, [])
    return found


def addable(board: str, layout: frozenset[Gi]) -> list[Gi]:
    """The GIs (profile, start) that could still be added to ``layout``."""
    _compute, _units, table = TABLES[board]
    used = {u for name, s in layout for u in range(s, s + table[name][1])}
    out = []
    for name, (_c, size, _m, starts) in table.items():
        for s in starts:
            if used.isdisjoint(range(s, s + size)) and _allowed(board, [*layout, (name, s)]):
                out.append((name, s))
    return out


def most_more(board: str, layout: frozenset[Gi], profile: str) -> int:
    """The most further GIs of ``profile`` that fit together (lgip "Free"), by brute force."""
    options = [gi for gi in addable(board, layout) if gi[0] == profile]
    size = TABLES[board][2][profile][1]
    for k in range(len(options), 0, -1):
        for pick in combinations(options, k):
            spans = [u for _, s in pick for u in range(s, s + size)]
            if len(spans) == len(set(spans)) and _allowed(board, [*layout, *pick]):
                return k
    return 0


def as_sets(layouts: list[mig.Layout]) -> list[frozenset[Gi]]:
    return [frozenset((gi.profile.name, gi.start) for gi in lay.instances) for lay in layouts]


# --- the oracle itself against the published counts ---------------------------------------------


def test_oracle_reproduces_the_reference_enumeration_counts() -> None:
    """mig.md §3: 2319 (8-unit H100 table), 84 (A30), 1249 (RTX PRO 6000 without ALL_ME)."""
    assert len(enumerate_layouts("H100-80GB")) == 2319
    assert len(enumerate_layouts("A30")) == 84
    assert len(enumerate_layouts("RTX-PRO-6000", all_me_rule=False)) == 1249


# --- labkit against the oracle, every modelled board --------------------------------------------


@pytest.mark.parametrize("board", BOARDS)
def test_board_data_matches_the_reference_table(board: str) -> None:
    model = load_gpu_model(board).mig
    assert model is not None
    compute, units, table = TABLES[board]
    assert (model.compute_slices, model.memory_units) == (compute, units)
    assert {p.name: (p.compute_slices, p.memory_slices, p.max_count, tuple(p.placements))
            for p in model.profiles} == table


@pytest.mark.parametrize("board", BOARDS)
def test_valid_and_maximal_layouts_are_exactly_the_oracles(board: str) -> None:
    oracle = enumerate_layouts(board)
    valid = as_sets(mig.valid_layouts(board))
    assert len(valid) == len(set(valid)) == len(oracle)
    assert set(valid) == oracle
    maximal = as_sets(mig.maximal_layouts(board))
    assert len(maximal) == len(set(maximal))
    assert set(maximal) == {lay for lay in oracle if not addable(board, lay)}
    # the one-walk count (lesson 02's table) against the brute-force oracle
    assert mig.count_layouts(board) == (
        len(oracle), sum(1 for lay in oracle if not addable(board, lay)))


@pytest.mark.parametrize("board", ["H100-80GB", "A30", "RTX-PRO-6000"])
def test_open_starts_and_free_capacity_match_the_oracle_on_every_layout(board: str) -> None:
    for lay in mig.valid_layouts(board):
        gis = frozenset((gi.profile.name, gi.start) for gi in lay.instances)
        can_add = addable(board, gis)
        for name, (_c, _size, cap, _starts) in TABLES[board][2].items():
            assert lay.open_starts(name) == tuple(s for p, s in can_add if p == name)
            assert lay.free_capacity()[name] == (most_more(board, gis, name), cap), (lay, name)
