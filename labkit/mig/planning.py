"""MIG planning over layouts: presets, packing profiles onto GPUs, every valid/maximal layout.

Pure. Built on :class:`labkit.mig.layout.Layout` and the rules of :mod:`labkit.mig.placement`.

Used in: notebooks/02_mig.ipynb
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from labkit.gpumodels import GiProfile, GpuModel, MigSpec
from labkit.mig import placement as rules
from labkit.mig.layout import _MAX_INSTANCES, Layout, _spec, resolve_model
from labkit.mig.placement import PlacedGi, PlacementError

__all__ = ["count_layouts", "maximal_layouts", "pack_profiles", "presets", "valid_layouts"]


def presets(model: GpuModel | str) -> dict[str, Layout]:
    """Return the board's usual layouts by mig-parted name (``all-1g.10gb``, ``all-balanced``).

    Built from the board's plain profiles (no ``+me``/``+gfx``/``-me``): every smallest-memory
    1g; ``all-balanced`` as NVIDIA's default mig-parted config has it (7-slice boards: 3g + 2g +
    2 x 1g; 4-slice boards: 2g + 2 x 1g); all of the next sizes; 4g + 3g; the whole GPU.

    References
    ----------
    .. [1] NVIDIA/mig-parted ``deployments/systemd/config-default`` (all-1g.10gb, all-balanced,
       all-2g.20gb, all-3g.40gb, all-7g.80gb per board).

    Used in: notebooks/02_mig.ipynb
    """
    board = resolve_model(model)
    spec = _spec(board)
    plain = [p for p in spec.profiles if not p.suffix]

    def smallest(g: int) -> GiProfile | None:
        found = [p for p in plain if p.compute_slices == g]
        return min(found, key=lambda p: (p.memory_slices, p.id)) if found else None

    def fill(p: GiProfile) -> list[str]:
        return [p.name] * rules.remaining_capacity(spec, [], p)

    out: dict[str, Layout] = {}
    sizes = sorted({p.compute_slices for p in plain})
    one = smallest(1)
    if one is not None:
        out[f"all-{one.name}"] = Layout.from_profiles(board, fill(one))
    half = [smallest(g) for g in ((3, 2) if spec.compute_slices == 7 else (2,))]
    if one is not None and all(p is not None for p in half):
        names = [p.name for p in half if p is not None] + [one.name, one.name]
        out["all-balanced"] = Layout.from_profiles(board, names)
    for g in sizes[1:]:
        p = smallest(g)
        if p is not None and rules.remaining_capacity(spec, [], p) > 1:
            out[f"all-{p.name}"] = Layout.from_profiles(board, fill(p))
    three, four = smallest(3), smallest(4)
    if three is not None and four is not None:
        out[f"{four.name}+{three.name}"] = Layout.from_profiles(board, [four.name, three.name])
    whole = max(plain, key=lambda p: (p.compute_slices, p.memory_slices))
    out[f"all-{whole.name}"] = Layout.from_profiles(board, [whole.name])
    return out


def pack_profiles(model: GpuModel | str, profiles: Iterable[str | int]) -> list[Layout]:
    """Return GPUs (layouts) that hold ``profiles`` between them: first fit, largest first.

    Each GPU instance goes to the first GPU whose layout can still be rebuilt with it
    (:meth:`Layout.from_profiles`), else to a new GPU. First-fit decreasing is a heuristic: it
    can use more GPUs than the fewest possible.

    Raises
    ------
    PlacementError
        ``unknown_profile``.

    Used in: notebooks/02_mig.ipynb
    """
    board = resolve_model(model)
    base = Layout(board)
    wanted = [base.profile(p) for p in profiles]
    if len(wanted) > 8 * _MAX_INSTANCES:
        raise PlacementError("does_not_fit", f"{len(wanted)} GPU instances is too many")
    wanted.sort(key=lambda p: (-p.memory_slices, -p.compute_slices))
    gpus: list[list[str]] = []
    layouts: list[Layout] = []
    for prof in wanted:
        for k, names in enumerate(gpus):
            try:
                layouts[k] = Layout.from_profiles(board, [*names, prof.name])
            except PlacementError:
                continue
            names.append(prof.name)
            break
        else:
            gpus.append([prof.name])
            layouts.append(Layout.from_profiles(board, [prof.name]))
    return layouts



# --- enumeration --------------------------------------------------------------------------------


def _candidates(spec: MigSpec) -> list[tuple[GiProfile, int]]:
    order = {p.id: i for i, p in enumerate(spec.profiles)}
    cands = [(p, s) for p in spec.profiles for s in p.placements]
    cands.sort(key=lambda c: (c[1], order[c[0].id]))
    return cands


def _walk(spec: MigSpec) -> Iterator[tuple[list[PlacedGi], bool]]:
    """Yield every valid layout once (as a GI list) and whether it is maximal."""
    cands = _candidates(spec)
    masks = [sum(1 << u for u in range(s, s + p.memory_slices)) for p, s in cands]

    def fits(placed: list[PlacedGi], used: int, j: int) -> PlacedGi | None:
        if used & masks[j]:
            return None  # overlaps: check_gi would say "overlap" (a shortcut, not a rule)
        p, s = cands[j]
        try:
            return rules.check_gi(spec, placed, p.id, s)
        except PlacementError:
            return None

    def rec(i: int, placed: list[PlacedGi], used: int) -> Iterator[tuple[list[PlacedGi], bool]]:
        addable = [(j, gi) for j in range(len(cands))
                   if (gi := fits(placed, used, j)) is not None]
        yield placed, not addable
        for j, gi in addable:
            if j >= i:
                yield from rec(j + 1, [*placed, gi], used | masks[j])

    yield from rec(0, [], 0)


def _as_layout(model: GpuModel, placed: list[PlacedGi]) -> Layout:
    lay = Layout(model)
    lay._placed = sorted(placed, key=lambda gi: (gi.start, gi.profile.id))
    return lay


def valid_layouts(model: GpuModel | str) -> list[Layout]:
    """Return every valid layout of ``model`` (the empty one included), each once.

    Every set of GIs with legal, non-overlapping placements that respects the profile caps, the
    media-engine rule and the compute slices (:func:`labkit.mig.placement.check_gi`).

    Used in: notebooks/02_mig.ipynb
    """
    m = resolve_model(model)
    return [_as_layout(m, placed) for placed, _ in _walk(_spec(m))]


def maximal_layouts(model: GpuModel | str) -> list[Layout]:
    """Return every layout of ``model`` to which no further GI of any profile can be added.

    "Any profile" includes the ``+me`` variants and every other profile the board lists. Sorted
    by their :meth:`Layout.key`.

    Parameters
    ----------
    model : GpuModel or str
        The board (``"H100-80GB"``).

    Returns
    -------
    list of Layout

    Used in: notebooks/02_mig.ipynb
    """
    m = resolve_model(model)
    found = [_as_layout(m, placed) for placed, maximal in _walk(_spec(m)) if maximal]
    return sorted(found, key=lambda lay: lay.key())


def count_layouts(model: GpuModel | str) -> tuple[int, int]:
    """Return how many layouts of ``model`` are valid and how many of them are maximal.

    ``(len(valid_layouts(model)), len(maximal_layouts(model)))`` in one walk of the layouts
    instead of two, without building a :class:`Layout` for each (lesson 02's count table runs
    before its first chart: 0.32 -> 0.13 CPU-s for its three boards, measured with
    ``benchmarks/bench_kernel_first_chart.py``).

    Used in: notebooks/02_mig.ipynb
    """
    valid = maximal = 0
    for _placed, is_maximal in _walk(_spec(resolve_model(model))):
        valid += 1
        maximal += is_maximal
    return valid, maximal
