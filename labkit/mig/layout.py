"""MIG layouts on one board: GPU instances placed by the driver's rules, why a placement fails.

Pure (no I/O, NVML, clocks or environment). :class:`Layout` is a set of GPU instances (GIs) on
one GPU model: :meth:`Layout.place`, :meth:`~Layout.can_place`, :meth:`~Layout.check` (a
structured :class:`PlacementCheck` that ``labkit.ui.mig_explain`` words in Korean),
:meth:`~Layout.free_capacity` (``nvidia-smi mig -lgip`` Free/Total), :meth:`~Layout.remove`,
:meth:`~Layout.fragmentation`, :meth:`Layout.from_profiles`. The rules themselves are
:mod:`labkit.mig.placement` (the simulated driver applies the same ones), never re-written here.

Profiles are named as nvidia-smi names them (``"1g.10gb"``, ``"1g.10gb+me"``); GPU models by the
lab GPU layer's short names (``"H100-80GB"``, ``"A30"``), or a :class:`GpuModel` already loaded
(a short name is loaded through ``labkit.data.gpus``, the data layer; the rules only see the
model).

Sources: NVIDIA MIG user guide (getting started, "Instance Geometry"; supported profiles),
NVML ``nvml.h`` (MIG API).

Used in: notebooks/02_mig.ipynb
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from labkit import validate
from labkit.data.gpus import available_models, load_gpu_model
from labkit.gpumodels import GiProfile, GpuModel, MigSpec
from labkit.mig import placement as rules
from labkit.mig.placement import PlacedGi, PlacementError
from labkit.validate import InputError

__all__ = [
    "Fragmentation",
    "Layout",
    "PlacementCheck",
    "default_ci_profile",
    "resolve_model",
]

_MAX_INSTANCES = 16


# --- models and profiles ----------------------------------------------------------------------


def resolve_model(model: GpuModel | str) -> GpuModel:
    """Return the MIG-capable GPU model ``model`` names (a short name or a loaded model).

    Parameters
    ----------
    model : GpuModel or str
        A model, or a short name of ``data/gpus/`` (``"H100-80GB"``; case-insensitive).

    Raises
    ------
    InputError
        ``model`` (rule ``choice``) for an unknown name or a board without MIG.
    """
    if isinstance(model, GpuModel):
        found = model
    elif isinstance(model, str):
        known = {m.lower(): m for m in available_models()}
        name = known.get(model.strip().lower())
        if name is None:
            names = tuple(sorted(known.values()))
            raise InputError("model", "choice", model,
                             f"unknown GPU model {model!r}; known: {', '.join(names)}",
                             limit=names)
        found = load_gpu_model(name)
    else:
        raise InputError("model", "choice", model, f"model must be a name, got {model!r}")
    if found.mig is None:
        raise InputError("model", "choice", found.short_name,
                         f"{found.short_name} has no MIG (no GPU instance profiles)")
    return found


def known_models() -> tuple[GpuModel, ...]:
    """Return every GPU model of ``data/gpus/`` (with or without MIG), by short name."""
    return tuple(load_gpu_model(name) for name in sorted(available_models()))


def _spec(model: GpuModel) -> MigSpec:
    assert model.mig is not None  # resolve_model guarantees it
    return model.mig


def _profile(spec: MigSpec, model_name: str, profile: str | int | GiProfile) -> GiProfile:
    if isinstance(profile, GiProfile):
        found = spec.by_id(profile.id)
        if found == profile:
            return found
    elif isinstance(profile, str):
        named = spec.by_name(profile.strip())
        if named is not None:
            return named
    elif isinstance(profile, int) and not isinstance(profile, bool):
        by_id = spec.by_id(profile)
        if by_id is not None:
            return by_id
    names = ", ".join(p.name for p in spec.profiles)
    raise PlacementError("unknown_profile",
                         f"{model_name} has no GPU instance profile {profile!r}; profiles: {names}")


def _start(start: Any) -> int | None:
    if start is None:
        return None
    return validate.integer("start", start)


def _size_order(gi: PlacedGi) -> tuple[int, int, int]:
    return (-gi.profile.memory_slices, -gi.profile.compute_slices, gi.start)


def default_ci_profile(profile: GiProfile) -> int:
    """Return the ``NVML_COMPUTE_INSTANCE_PROFILE_*`` of a GI's default (full-size) CI.

    The CI ``nvidia-smi mig -cgi ... -C`` creates: the one with all the GI's compute slices
    (``1g`` -> 0, ``2g`` -> 1, ``3g`` -> 2, ``4g`` -> 3, ``7g`` -> 4; NVIDIA MIG user guide).

    Used in: notebooks/02_mig.ipynb
    """
    for ci, _starts in rules.ci_profiles(profile):
        if ci.slices == profile.compute_slices:
            return ci.id
    raise ValueError(f"{profile.name}: no full-size compute instance profile")  # pragma: no cover


# --- layouts ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlacementCheck:
    """Why a GPU instance can or cannot go somewhere (``labkit.ui.mig_explain`` words it).

    Attributes
    ----------
    ok : bool
        Whether it can be placed.
    rule : str or None
        The :class:`PlacementError` rule it breaks (``unknown_profile``,
        ``invalid_placement``, ``overlap``, ``profile_cap``, ``media_engines``,
        ``compute_slices``, ``no_free_placement``); None when ``ok``.
    profile : str
        The profile asked for (as given, when unknown).
    start : int or None
        The start asked for (None: the driver chooses). [memory units]
    chosen_start : int or None
        Where it goes when ``ok`` (the driver's default when ``start`` is None).
    units : tuple of int
        Memory units it would occupy (when the start is known and legal).
    legal_starts : tuple of int
        Every start the profile allows at all (``-lgipp``).
    open_starts : tuple of int
        The starts where it fits now.
    blocked_units : tuple of int
        Used memory units in the way.
    blockers : tuple of str
        The GIs in the way (or holding the media engines), as ``"2g.20gb@4"``.
    count, max_count : int
        Instances of this profile already placed, and the profile's cap (lgip Total).
    compute_needed, compute_left : int
        Compute slices the profile needs and the layout has left. [slices]
    message : str
        The rule's English message (for logs).
    """

    ok: bool
    rule: str | None
    profile: str
    start: int | None
    chosen_start: int | None = None
    units: tuple[int, ...] = ()
    legal_starts: tuple[int, ...] = ()
    open_starts: tuple[int, ...] = ()
    blocked_units: tuple[int, ...] = ()
    blockers: tuple[str, ...] = ()
    count: int = 0
    max_count: int = 0
    compute_needed: int = 0
    compute_left: int = 0
    message: str = ""


@dataclass(frozen=True)
class Fragmentation:
    """Free memory no profile can use any more (stranded), on one layout.

    Attributes
    ----------
    memory_units : int
        Memory units of the board. [units]
    free_units : tuple of int
        Units no GI uses.
    stranded_units : tuple of int
        Free units that no GI that can still be placed would cover.
    free_compute_slices : int
        Compute slices no GI uses. [slices]
    unit_mib : float
        Memory per unit, the board's total over its units (for display). [MiB]
    """

    memory_units: int
    free_units: tuple[int, ...]
    stranded_units: tuple[int, ...]
    free_compute_slices: int
    unit_mib: float

    @property
    def stranded_frac(self) -> float:
        """Stranded units over all units. [fraction, 0-1]"""
        return len(self.stranded_units) / self.memory_units

    @property
    def stranded_mib(self) -> float:
        """Stranded memory, at :attr:`unit_mib` per unit. [MiB]"""
        return len(self.stranded_units) * self.unit_mib


class Layout:
    """GPU instances placed on one MIG GPU model, checked by the driver's placement rules.

    Parameters
    ----------
    model : GpuModel or str
        The board (``"H100-80GB"``, ``"A30"``, ...).
    instances : iterable of (profile, start), optional
        GIs to place first, in order (``start`` None: where the driver would put it).

    Raises
    ------
    InputError
        For an unknown model or a board without MIG.
    PlacementError
        If ``instances`` do not fit.

    Examples
    --------
    >>> lay = Layout("H100-80GB")
    >>> lay.place("3g.40gb")          # the driver's default: start 4
    PlacedGi(profile=..., start=4)
    >>> lay.free_capacity()["1g.10gb"]
    (4, 7)

    Used in: notebooks/02_mig.ipynb
    """

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __init__(self, model: GpuModel | str,
                 instances: Iterable[tuple[str | int, int | None]] = ()) -> None:
        self.model = resolve_model(model)
        self.spec = _spec(self.model)
        self._placed: list[PlacedGi] = []
        for profile, start in instances:
            self.place(profile, start)

    # -- reading ----------------------------------------------------------------------------

    @property
    def instances(self) -> tuple[PlacedGi, ...]:
        """The GIs, in the order they were placed."""
        return tuple(self._placed)

    def __len__(self) -> int:
        return len(self._placed)

    def __iter__(self) -> Iterator[PlacedGi]:
        return iter(self._placed)

    def key(self) -> tuple[str, tuple[tuple[int, int], ...]]:
        """Return (model, sorted (start, profile ID) pairs): equal layouts have equal keys."""
        return self.model.short_name, tuple(sorted((gi.start, gi.profile.id)
                                                   for gi in self._placed))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Layout) and self.key() == other.key()

    def __repr__(self) -> str:
        gis = ", ".join(f"{gi.profile.name}@{gi.start}" for gi in self.sorted_instances())
        return f"Layout({self.model.short_name!r}: {gis or 'empty'})"

    def sorted_instances(self) -> list[PlacedGi]:
        """Return the GIs by start unit."""
        return sorted(self._placed, key=lambda gi: (gi.start, gi.profile.id))

    def profile(self, profile: str | int | GiProfile) -> GiProfile:
        """Return the board's profile named ``profile`` (or with that lgip ID).

        Raises
        ------
        PlacementError
            ``unknown_profile``.
        """
        return _profile(self.spec, self.model.short_name, profile)

    def counts(self) -> dict[str, int]:
        """Return profile name -> number of GIs, in ``-lgip`` order (only profiles used)."""
        out = {}
        for p in self.spec.profiles:
            n = sum(1 for gi in self._placed if gi.profile.id == p.id)
            if n:
                out[p.name] = n
        return out

    def used_units(self) -> set[int]:
        """Return the memory units in use."""
        return rules.used_units(self._placed)

    def used_compute_slices(self) -> int:
        """Return the compute slices the GIs take. [slices]"""
        return sum(gi.profile.compute_slices for gi in self._placed)

    def holder(self, unit: int) -> PlacedGi | None:
        """Return the GI that occupies memory unit ``unit``, or None."""
        for gi in self._placed:
            if unit in gi.units:
                return gi
        return None

    # -- the rules --------------------------------------------------------------------------

    def _check(self, profile: GiProfile, start: int | None) -> PlacedGi:
        return rules.check_gi(self.spec, self._placed, profile.id, start)

    def legal_starts(self, profile: str | int | GiProfile) -> tuple[int, ...]:
        """Return every start the profile allows at all (``nvidia-smi mig -lgipp``)."""
        return tuple(self.profile(profile).placements)

    def open_starts(self, profile: str | int | GiProfile) -> tuple[int, ...]:
        """Return the starts where the profile fits now."""
        prof = self.profile(profile)
        out = []
        for start in prof.placements:
            try:
                self._check(prof, start)
            except PlacementError:
                continue
            out.append(start)
        return tuple(out)

    def can_place(self, profile: str | int | GiProfile, start: Any = None) -> bool:
        """Return whether a GI of ``profile`` fits (at ``start``, or where the driver puts it).

        Never raises for a bad profile or start: those simply do not fit.
        """
        try:
            self._check(self.profile(profile), _start(start))
        except (PlacementError, InputError):
            return False
        return True

    def check(self, profile: str | int | GiProfile, start: Any = None) -> PlacementCheck:
        """Return why ``profile`` at ``start`` fits or not (see :class:`PlacementCheck`)."""
        try:
            prof = self.profile(profile)
        except PlacementError as err:
            return PlacementCheck(False, err.rule, str(profile), None, message=str(err))
        try:
            begin = _start(start)
        except InputError as err:
            return PlacementCheck(False, "invalid_placement", prof.name, None,
                                  legal_starts=tuple(prof.placements), message=str(err))
        count = sum(1 for gi in self._placed if gi.profile.id == prof.id)
        left = self.spec.compute_slices - self.used_compute_slices()
        base: dict[str, Any] = {
            "profile": prof.name, "start": begin, "legal_starts": tuple(prof.placements),
            "open_starts": self.open_starts(prof), "count": count, "max_count": prof.max_count,
            "compute_needed": prof.compute_slices, "compute_left": left,
        }
        if begin is not None and begin in prof.placements:
            base["units"] = tuple(range(begin, begin + prof.memory_slices))
        try:
            placed = self._check(prof, begin)
        except PlacementError as err:
            blocked, blockers = self._in_the_way(prof, begin, err.rule)
            return PlacementCheck(False, err.rule, blocked_units=blocked, blockers=blockers,
                                  message=str(err), **base)
        base["units"] = tuple(placed.units)
        return PlacementCheck(True, None, chosen_start=placed.start, message="", **base)

    def _in_the_way(self, prof: GiProfile, start: int | None,
                    rule: str) -> tuple[tuple[int, ...], tuple[str, ...]]:
        if rule == "media_engines":
            if prof.all_media_engines:
                names = [gi for gi in self._placed if not gi.profile.no_media_engines]
            else:
                names = [gi for gi in self._placed if gi.profile.all_media_engines]
            return (), tuple(f"{gi.profile.name}@{gi.start}" for gi in names)
        if rule == "overlap" and start is not None:
            wanted = set(range(start, start + prof.memory_slices))
        elif rule == "no_free_placement":
            wanted = {u for s in prof.placements for u in range(s, s + prof.memory_slices)}
        else:
            return (), ()
        used = self.used_units()
        blocked = tuple(sorted(wanted & used))
        blockers = [gi for gi in self.sorted_instances() if wanted.intersection(gi.units)]
        return blocked, tuple(f"{gi.profile.name}@{gi.start}" for gi in blockers)

    # -- changing ---------------------------------------------------------------------------

    def place(self, profile: str | int | GiProfile, start: Any = None) -> PlacedGi:
        """Add a GI of ``profile`` at ``start`` (None: where the driver would put it).

        Parameters
        ----------
        profile : str or int
            Profile name (``"1g.10gb"``, ``"MIG 1g.10gb"``) or lgip profile ID.
        start : int, optional
            Placement start (``nvmlDeviceCreateGpuInstanceWithPlacement``). [memory units]

        Returns
        -------
        PlacedGi
            The new GI.

        Raises
        ------
        PlacementError
            Which rule it breaks (``.rule``); :meth:`check` gives the details.
        InputError
            ``start`` that is not a whole number >= 0.
        """
        prof = self.profile(profile)
        gi = self._check(prof, _start(start))
        self._placed.append(gi)
        return gi

    def remove(self, what: int | str | PlacedGi, start: int | None = None) -> PlacedGi:
        """Remove a GI and return it.

        Parameters
        ----------
        what : int, str or PlacedGi
            A memory unit (the GI covering it), a profile name (with ``start``: the GI of that
            profile there; without: the last one placed), or the GI itself.
        start : int, optional
            With a profile name. [memory units]

        Raises
        ------
        ValueError
            If no such GI is in the layout.
        """
        found: PlacedGi | None = None
        if isinstance(what, PlacedGi):
            found = what if what in self._placed else None
        elif isinstance(what, int) and not isinstance(what, bool):
            found = self.holder(what)
        elif isinstance(what, str):
            prof = self.profile(what)
            same = [gi for gi in self._placed if gi.profile.id == prof.id
                    and (start is None or gi.start == start)]
            found = same[-1] if same else None
        if found is None:
            raise ValueError(f"no GPU instance {what!r}"
                             + (f" at {start}" if start is not None else "") + f" in {self!r}")
        self._placed.remove(found)
        return found

    def clear(self) -> None:
        """Remove every GI."""
        self._placed.clear()

    def copy(self) -> Layout:
        """Return an independent copy."""
        new = Layout(self.model)
        new._placed = list(self._placed)
        return new

    # -- capacity ---------------------------------------------------------------------------

    def free_capacity(self) -> dict[str, tuple[int, int]]:
        """Return profile name -> (free, total), as ``nvidia-smi mig -lgip`` shows Free/Total.

        "Free" is how many more GIs of the profile fit now
        (:func:`labkit.mig.placement.remaining_capacity`, what the simulated
        ``nvmlDeviceGetGpuInstanceRemainingCapacity`` answers); "Total" the profile's cap.
        """
        return {p.name: (rules.remaining_capacity(self.spec, self._placed, p), p.max_count)
                for p in self.spec.profiles}

    def fragmentation(self) -> Fragmentation:
        """Return the free memory units, and those no profile that still fits could use.

        A free unit is stranded when no GI of any profile that can still be placed (any legal
        start) would cover it: 7 x 1g.10gb on an 8-unit board strand unit 7 (1g starts stop at
        6; NVIDIA MIG user guide, placements).
        """
        free = [u for u in range(self.spec.memory_units) if u not in self.used_units()]
        usable: set[int] = set()
        for prof in self.spec.profiles:
            for start in prof.placements:
                span = range(start, start + prof.memory_slices)
                if usable.issuperset(span) or not set(free).issuperset(span):
                    continue  # nothing new to learn, or overlaps a GI (check_gi would refuse)
                if self.can_place(prof, start):
                    usable.update(span)
        return Fragmentation(
            memory_units=self.spec.memory_units, free_units=tuple(free),
            stranded_units=tuple(u for u in free if u not in usable),
            free_compute_slices=self.spec.compute_slices - self.used_compute_slices(),
            unit_mib=self.model.memory_total_mib / self.spec.memory_units)

    def is_maximal(self) -> bool:
        """Return whether no GI of any profile (``+me`` included) can be added."""
        return not any(self.can_place(p) for p in self.spec.profiles)

    # -- building from profile counts ---------------------------------------------------------

    @classmethod
    def from_profiles(cls, model: GpuModel | str, profiles: Iterable[str | int]) -> Layout:
        """Return a layout holding exactly ``profiles`` (a multiset), with placements found.

        Largest GIs first, each where the driver would put it (its default order); when that
        leads nowhere, other legal starts are tried (depth first). The first layout found is
        returned, so the same profiles always give the same layout. This is what a tool that
        knows only profile counts (mig-parted) has to do; mig-parted itself retries creation
        orders until one works (``iteratePermutationsUntilSuccess``).

        Raises
        ------
        PlacementError
            ``unknown_profile``, ``profile_cap``, ``compute_slices`` or ``does_not_fit``.
        """
        base = cls(model)
        wanted = [base.profile(p) for p in profiles]
        if len(wanted) > _MAX_INSTANCES:
            raise PlacementError("does_not_fit", f"{len(wanted)} GPU instances is too many")
        for prof in {p.id: p for p in wanted}.values():
            n = sum(1 for p in wanted if p.id == prof.id)
            if n > prof.max_count:
                raise PlacementError("profile_cap", f"{n} x {prof.name}: capped at "
                                                    f"{prof.max_count}")
        need = sum(p.compute_slices for p in wanted)
        if need > base.spec.compute_slices:
            raise PlacementError("compute_slices", f"{need} compute slices needed, the board "
                                                   f"has {base.spec.compute_slices}")
        order = {p.id: i for i, p in enumerate(base.spec.profiles)}
        wanted.sort(key=lambda p: (-p.memory_slices, -p.compute_slices, len(p.placements),
                                   order[p.id]))
        found = base._search(wanted)
        if found is None:
            names = ", ".join(p.name for p in wanted)
            raise PlacementError("does_not_fit", f"{names} do not fit on one "
                                                 f"{base.model.short_name}")
        return found

    def _search(self, todo: list[GiProfile]) -> Layout | None:
        if not todo:
            return self
        prof, rest = todo[0], todo[1:]
        default = rules.default_start(self.spec, self._placed, prof)
        starts = ([default] if default is not None else []) + [
            s for s in sorted(prof.placements) if s != default]
        for start in starts:
            try:
                gi = self._check(prof, start)
            except PlacementError:
                continue
            nxt = self.copy()
            nxt._placed.append(gi)
            done = nxt._search(rest)
            if done is not None:
                return done
        return None


