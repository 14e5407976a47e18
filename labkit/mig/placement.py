"""MIG placement rules, once: what fits, where the driver puts it, how many more fit.

Pure (no pynvml, no I/O). The simulated libnvidia-ml applies these rules to answer the MIG calls,
and the MIG lesson's planner (``labkit.mig``) reuses them, so the planner and the (simulated)
driver can never disagree.

The rules (sources in ``data/gpus/*.yaml`` and the NVIDIA MIG user guide):

1. A GPU instance (GI) uses one of its profile's legal placements ``{start, size}`` in memory
   units (``nvidia-smi mig -lgipp``) and must not overlap a memory unit already in use
   (``nvml.h``: creation "will fail if there is overlap with the already occupied memory
   slices"). A start that is not a legal placement is an invalid argument.
2. Per-profile caps come on top: at most ``max_count`` instances of a profile (lgip "Total");
   ``+me`` profiles are capped at 1 because the media engines go to one instance.
3. An ``ALL_ME`` (``+me.all``) instance "prevents allocation of all but _NO_ME profiles"
   (``nvml.h``), and the other way round.
4. The compute slices of all GIs never exceed the board's (checked, although with the published
   placement tables memory overlap alone already guarantees it).
5. Without an explicit placement the driver picks the first free start in its own order; the
   order matters (NVIDIA MIG user guide, "Instance Geometry": 1g, 1g, 2g then 3g fails on an
   A100-40GB, 3g first succeeds). The order per placement size is board data
   (:attr:`labkit.gpumodels.MigSpec.default_order`).
6. Compute instances (CIs) take compute slices inside their GI: 1c at every slot, 2c at even
   starts, 3c at 0 (and 4 in a 7-slice GI), 4c and the full CI at 0; a 4g GI has no 3c
   (NVIDIA's table of A100 MIG devices in NVIDIA/mig-parted ``known_configs.go``; the
   placements are **inferred**: no real ``-lcipp`` was found).

Used in: lessons 01 (observation) and 02 (MIG), through labkit.gpu and labkit.mig
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from labkit.gpumodels import GiProfile, MigSpec

__all__ = [
    "CI_PROFILES",
    "CiProfile",
    "PlacedGi",
    "PlacementError",
    "check_gi",
    "ci_default_start",
    "ci_profile",
    "ci_profiles",
    "ci_remaining_capacity",
    "default_start",
    "free_units",
    "gi_id_for",
    "remaining_capacity",
    "used_units",
]


class PlacementError(ValueError):
    """A GPU or compute instance that cannot be created; ``rule`` says which rule it broke.

    Attributes
    ----------
    rule : str
        ``"unknown_profile"`` or ``"invalid_placement"`` (NVML: INVALID_ARGUMENT);
        ``"overlap"``, ``"profile_cap"``, ``"media_engines"``, ``"compute_slices"``,
        ``"no_free_placement"`` (NVML: INSUFFICIENT_RESOURCES).
    """

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule

    @property
    def invalid_argument(self) -> bool:
        """Whether NVML reports this as INVALID_ARGUMENT (else INSUFFICIENT_RESOURCES)."""
        return self.rule in ("unknown_profile", "invalid_placement")


@dataclass(frozen=True)
class PlacedGi:
    """A GPU instance in a layout: its profile and its start. [memory units]"""

    profile: GiProfile
    start: int

    @property
    def units(self) -> range:
        """The memory units it occupies."""
        return range(self.start, self.start + self.profile.memory_slices)


def used_units(placed: Iterable[PlacedGi]) -> set[int]:
    """Return the memory units the placed GIs occupy."""
    units: set[int] = set()
    for gi in placed:
        units.update(gi.units)
    return units


def free_units(spec: MigSpec, placed: Iterable[PlacedGi]) -> list[int]:
    """Return the memory units no placed GI occupies, ascending."""
    used = used_units(placed)
    return [u for u in range(spec.memory_units) if u not in used]


def check_gi(spec: MigSpec, placed: Sequence[PlacedGi], profile_id: int,
             start: int | None = None) -> PlacedGi:
    """Return where a new GPU instance goes, or raise why it cannot be created.

    Parameters
    ----------
    spec : MigSpec
        The board's MIG table.
    placed : sequence of PlacedGi
        The GIs that exist.
    profile_id : int
        The lgip profile ID.
    start : int, optional
        An explicit placement start (``nvmlDeviceCreateGpuInstanceWithPlacement``); None lets
        the driver choose (``nvmlDeviceCreateGpuInstance``). [memory units]

    Returns
    -------
    PlacedGi
        The new GI.

    Raises
    ------
    PlacementError
        ``unknown_profile``, ``invalid_placement``, ``profile_cap``, ``media_engines``,
        ``overlap``, ``compute_slices`` or ``no_free_placement``.

    Used in: lessons 02 (MIG)
    """
    profile = spec.by_id(profile_id)
    if profile is None:
        raise PlacementError("unknown_profile", f"no GPU instance profile with ID {profile_id}")
    if start is not None and start not in profile.placements:
        raise PlacementError(
            "invalid_placement",
            f"{profile.name} cannot start at {start}; legal starts {list(profile.placements)}")
    count = sum(1 for gi in placed if gi.profile.id == profile.id)
    if count >= profile.max_count:
        raise PlacementError("profile_cap",
                             f"{profile.name} is capped at {profile.max_count} instance(s)")
    _check_media_engines(placed, profile)
    used_compute = sum(gi.profile.compute_slices for gi in placed)
    if used_compute + profile.compute_slices > spec.compute_slices:
        raise PlacementError("compute_slices",
                             f"{profile.name} needs {profile.compute_slices} compute slices, "
                             f"{spec.compute_slices - used_compute} left")
    used = used_units(placed)
    if start is not None:
        clash = sorted(used.intersection(range(start, start + profile.memory_slices)))
        if clash:
            raise PlacementError("overlap",
                                 f"{profile.name}@{start} overlaps memory unit(s) {clash}")
        return PlacedGi(profile, start)
    chosen = default_start(spec, placed, profile)
    if chosen is None:
        raise PlacementError("no_free_placement",
                             f"no free placement left for {profile.name}")
    return PlacedGi(profile, chosen)


def _check_media_engines(placed: Sequence[PlacedGi], profile: GiProfile) -> None:
    if profile.all_media_engines:
        others = [gi.profile.name for gi in placed if not gi.profile.no_media_engines]
        if others:
            raise PlacementError("media_engines",
                                 f"{profile.name} takes every media engine, held by {others}")
    elif not profile.no_media_engines:
        holder = [gi.profile.name for gi in placed if gi.profile.all_media_engines]
        if holder:
            raise PlacementError("media_engines",
                                 f"{holder[0]} holds every media engine; only -me profiles fit")


def _order(spec: MigSpec, profile: GiProfile) -> tuple[int, ...]:
    order = spec.default_order.get(profile.memory_slices, ())
    ordered = [s for s in order if s in profile.placements]
    return (*ordered, *[s for s in sorted(profile.placements) if s not in ordered])


def default_start(spec: MigSpec, placed: Sequence[PlacedGi], profile: GiProfile) -> int | None:
    """Return the start the driver picks for ``profile`` without a placement (None: none free).

    The first free legal start in the board's default order for that placement size (legal
    starts missing from the order follow, ascending).

    Used in: lessons 02 (MIG)
    """
    used = used_units(placed)
    for start in _order(spec, profile):
        if used.isdisjoint(range(start, start + profile.memory_slices)):
            return start
    return None


def remaining_capacity(spec: MigSpec, placed: Sequence[PlacedGi], profile: GiProfile) -> int:
    """Return how many more GIs of ``profile`` fit (lgip "Free"; ``…RemainingCapacity``).

    The largest number of further non-overlapping legal placements in the free memory units,
    limited by the profile cap, the compute slices left and the media-engine rule **(inferred:
    NVML documents the call, not its algorithm)**.

    Used in: lessons 02 (MIG)
    """
    count = sum(1 for gi in placed if gi.profile.id == profile.id)
    cap = profile.max_count - count
    if cap <= 0:
        return 0
    try:
        _check_media_engines(placed, profile)
    except PlacementError:
        return 0
    compute_left = spec.compute_slices - sum(gi.profile.compute_slices for gi in placed)
    cap = min(cap, compute_left // profile.compute_slices)
    used = used_units(placed)
    fits = 0
    end = -1
    for start in sorted(profile.placements):  # interval scheduling: earliest end first
        if start > end and used.isdisjoint(range(start, start + profile.memory_slices)):
            fits += 1
            end = start + profile.memory_slices - 1
    return max(0, min(cap, fits))


def gi_id_for(spec: MigSpec, start: int, size: int, taken: Iterable[int]) -> int:
    """Return the GPU-instance ID the driver gives a new GI at ``start`` of ``size`` units.

    Heap numbering by placement: the full board is 0, halves 1-2, quarters 3-6, eighths 7-14
    (8-unit boards: a 1-unit GI gets 7 + start, a 2-unit GI 3 + start/2), as most captures show
    (7 x 1g on an H100 got 13, 11, 12, 7, 8, 9, 10 at starts 6, 4, 5, 0, 1, 2, 3; RTX PRO 6000 1g
    at 0, 3, 6, 9 got 3, 4, 5, 6). If that ID is taken, the lowest free one. **Inferred**: the
    driver assigns IDs; captures show counter-examples (NVIDIA/DCGM#138), so never derive a
    placement from an ID.
    """
    taken = set(taken)
    level = spec.memory_units // size if size else 1
    if size and spec.memory_units % size == 0 and level & (level - 1) == 0:
        candidate = level - 1 + start // size
        if candidate not in taken:
            return candidate
    candidate = 0
    while candidate in taken:
        candidate += 1
    return candidate


# --- compute instances ------------------------------------------------------------------------


@dataclass(frozen=True)
class CiProfile:
    """A compute-instance profile: ``NVML_COMPUTE_INSTANCE_PROFILE_*`` value and slice count.

    In every capture the CI profile number nvidia-smi prints equals the NVML constant
    (``1c`` -> 0, ``2c`` -> 1, ``3c`` -> 2, ``4c`` -> 3, ``7c`` -> 4).
    """

    id: int
    slices: int


#: CI profiles by compute slices (NVML_COMPUTE_INSTANCE_PROFILE_1/2/3/4/7/8/6_SLICE).
CI_PROFILES: tuple[CiProfile, ...] = (
    CiProfile(0, 1), CiProfile(1, 2), CiProfile(2, 3), CiProfile(3, 4), CiProfile(4, 7),
    CiProfile(5, 8), CiProfile(6, 6),
)


def _ci_starts(gi_slices: int, ci_slices: int) -> tuple[int, ...]:
    if ci_slices > gi_slices:
        return ()
    if ci_slices == gi_slices:
        return (0,)
    if ci_slices == 1:
        return tuple(range(gi_slices))
    if ci_slices == 2:
        return tuple(s for s in range(0, gi_slices - 1, 2))
    if ci_slices == 3 and gi_slices == 7:
        return (0, 4)
    if ci_slices == 4 and gi_slices == 7:
        return (0,)
    return ()  # e.g. no 3c inside a 4g GI


def ci_profiles(gi_profile: GiProfile) -> list[tuple[CiProfile, tuple[int, ...]]]:
    """Return the CI profiles a GI of ``gi_profile`` offers, with their legal starts.

    Returns
    -------
    list of (CiProfile, tuple of int)
        Smallest first; starts in compute slices inside the GI (**inferred**, see module doc).
    """
    out = []
    for ci in CI_PROFILES:
        starts = _ci_starts(gi_profile.compute_slices, ci.slices)
        if starts:
            out.append((ci, starts))
    return out


def ci_profile(gi_profile: GiProfile,
               ci_profile_id: int) -> tuple[CiProfile, tuple[int, ...]] | None:
    """Return the CI profile ``ci_profile_id`` of a GI and its starts, or None if it has none."""
    for ci, starts in ci_profiles(gi_profile):
        if ci.id == ci_profile_id:
            return ci, starts
    return None


def _ci_used(existing: Iterable[tuple[int, int]]) -> set[int]:
    used: set[int] = set()
    for start, size in existing:
        used.update(range(start, start + size))
    return used


def ci_default_start(gi_profile: GiProfile, existing: Iterable[tuple[int, int]],
                     ci_profile_id: int) -> int | None:
    """Return the first free start for a new CI, or None (``existing``: (start, size) pairs)."""
    found = ci_profile(gi_profile, ci_profile_id)
    if found is None:
        return None
    ci, starts = found
    used = _ci_used(existing)
    for start in starts:
        if used.isdisjoint(range(start, start + ci.slices)):
            return start
    return None


def ci_remaining_capacity(gi_profile: GiProfile, existing: Iterable[tuple[int, int]],
                          ci_profile_id: int) -> int:
    """Return how many more CIs of ``ci_profile_id`` fit in the GI's free compute slices."""
    found = ci_profile(gi_profile, ci_profile_id)
    if found is None:
        return 0
    ci, starts = found
    used = _ci_used(existing)
    fits, end = 0, -1
    for start in starts:
        if start > end and used.isdisjoint(range(start, start + ci.slices)):
            fits += 1
            end = start + ci.slices - 1
    return fits
