"""MIG planning for lesson 02: layouts, why a placement fails, exports, and the live GPU.

Two halves:

- **Planning (pure).** :class:`Layout` is a set of GPU instances (GIs) on one GPU model:
  :meth:`Layout.place`, :meth:`~Layout.can_place`, :meth:`~Layout.explain` (plain Korean),
  :meth:`~Layout.free_capacity` (``nvidia-smi mig -lgip`` Free/Total), :meth:`~Layout.remove`,
  :meth:`~Layout.fragmentation`; :func:`maximal_layouts` enumerates every layout nothing more
  fits into; :func:`to_nvidia_smi` / :func:`from_nvidia_smi` and :func:`to_mig_parted` /
  :func:`from_mig_parted` export and read back. The rules themselves are
  :mod:`labkit.gpu.placement` (the simulated driver applies the same ones), never re-written
  here.
- **Live (through NVML).** :func:`read_state`, :func:`plan` (pure) and :func:`apply` take the
  NVML module that ``labkit.gpu.connect()`` returns, so the same code drives a real GPU and the
  simulated lab GPU. ``apply`` is off unless ``LABKIT_ALLOW_MIG_APPLY=1`` and never runs inside a
  voila app.

Profiles are named as nvidia-smi names them (``"1g.10gb"``, ``"1g.10gb+me"``); GPU models by the
lab GPU layer's short names (``"H100-80GB"``, ``"A30"``), or a :class:`GpuModel` already loaded
(a short name is loaded once through ``labkit.data.gpus``; the planning code only sees the
model).

Sources: NVIDIA MIG user guide (getting started, "Instance Geometry"; supported profiles),
NVML ``nvml.h`` (MIG API), ``nvidia-smi mig -h`` (``-cgi`` profile tuples with a ``:start``
placement), NVIDIA/mig-parted ``api/spec/v1/spec.go`` and ``pkg/mig/config/config.go`` (the
config format; apply clears and retries orders; roll back on failure).

Used in: notebooks/02_mig.ipynb
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from labkit import validate
from labkit.gpu import placement as rules
from labkit.gpu import smi
from labkit.gpu.models import GiProfile, GpuModel, MigSpec
from labkit.gpu.placement import PlacedGi, PlacementError
from labkit.validate import InputError

__all__ = [
    "ALLOW_ENV",
    "ApplyResult",
    "ComputeInstanceState",
    "Fragmentation",
    "GpuInstanceState",
    "Layout",
    "MigApplyError",
    "MigDeviceState",
    "MigPartedEntry",
    "MigState",
    "MigStep",
    "NvmlCall",
    "PlacedGi",
    "PlacementCheck",
    "PlacementError",
    "apply",
    "apply_allowed",
    "default_ci_profile",
    "from_mig_parted",
    "from_nvidia_smi",
    "layout_from_mig_parted",
    "maximal_layouts",
    "mig_parted_config",
    "pack_profiles",
    "plan",
    "presets",
    "read_state",
    "resolve_model",
    "to_mig_parted",
    "to_nvidia_smi",
    "valid_layouts",
]

#: The teacher's switch: ``apply`` changes a GPU only when this is ``"1"``.
ALLOW_ENV = "LABKIT_ALLOW_MIG_APPLY"
#: Most GPU instances a layout can hold (the largest boards have 7 compute slices, 12 units).
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
        from labkit.data.gpus import available_models, load_gpu_model

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
    """Why a GPU instance can or cannot go somewhere (what :meth:`Layout.explain` words).

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

    def explain(self, profile: str | int | GiProfile, start: Any = None) -> str:
        """Return, in plain Korean, whether and why ``profile`` fits at ``start``.

        Names the memory units in the way and who holds them, the cap reached (with why ``+me``
        profiles are capped at 1), the compute slices left, and which start positions exist at
        all and which are open now.

        Used in: notebooks/02_mig.ipynb
        """
        return explain_check(self.check(profile, start), self.model.short_name,
                             [p.name for p in self.spec.profiles])

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
            Which rule it breaks (``.rule``); :meth:`explain` words it.
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
        (:func:`labkit.gpu.placement.remaining_capacity`, what the simulated
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


# --- explanations (Korean) ----------------------------------------------------------------------

# The lesson's wording of each placement rule. Kept with the model (not in the UI catalog) because
# Layout.explain is part of the model's API that the tests and the widgets share.
_KO = {
    "ok_start": "{profile}을(를) 메모리 유닛 {start}에 놓을 수 있습니다 "
                "(유닛 {units} 사용, 연산 슬라이스 {compute}개).",
    "ok_default": "{profile}을(를) 놓을 수 있습니다. 시작 위치를 정하지 않으면 드라이버가 "
                  "유닛 {start}에 놓습니다(유닛 {units} 사용).",
    "unknown_profile": "{model}에는 '{profile}' 프로필이 없습니다. 이 GPU의 프로필: {profiles}.",
    "invalid_placement": "{profile}은(는) 메모리 유닛 {start}에서 시작할 수 없습니다. 이 프로필이 "
                         "시작할 수 있는 위치는 {legal}뿐입니다.",
    "overlap": "{profile}을(를) 유닛 {start}에 놓으려면 메모리 유닛 {units}이(가) 비어 있어야 "
               "하는데, 유닛 {blocked}은(는) 이미 {blockers}이(가) 쓰고 있습니다.",
    "no_free_placement": "{profile}을(를) 놓을 빈자리가 없습니다. 이 프로필이 시작할 수 있는 위치 "
                         "{legal}이(가) 모두 막혔습니다(유닛 {blocked}: {blockers}).",
    "profile_cap": "{profile}은(는) GPU 하나에 최대 {max_count}개까지 만들 수 있는데 이미 "
                   "{count}개가 있습니다.",
    "profile_cap_me": " +me 프로필은 미디어 엔진(디코더·JPEG·OFA)을 한 인스턴스에만 줄 수 있어서 "
                      "1개가 한도입니다.",
    "media_engines_all": "{profile}은(는) 미디어 엔진을 모두 가져가는 프로필이라 미디어 엔진이 "
                         "있는 다른 인스턴스({blockers})와 함께 둘 수 없습니다.",
    "media_engines": "{blockers}이(가) 미디어 엔진을 모두 가져갔으므로, 지금은 -me 프로필만 "
                     "더 놓을 수 있습니다.",
    "compute_slices": "연산 슬라이스(compute slice)가 {left}개 남았는데 {profile}은(는) {need}개가 "
                      "필요합니다.",
    "open": " 지금 놓을 수 있는 시작 위치: {open}.",
    "open_none": " 지금은 이 프로필을 놓을 수 있는 자리가 없습니다.",
    "none": "없음",
}


def _units_text(units: Sequence[int]) -> str:
    units = sorted(units)
    if not units:
        return _KO["none"]
    if len(units) > 2 and units[-1] - units[0] == len(units) - 1:
        return f"{units[0]}–{units[-1]}"
    return ", ".join(str(u) for u in units)


def _list_text(items: Sequence[Any]) -> str:
    return ", ".join(str(i) for i in items) if items else _KO["none"]


def explain_check(check: PlacementCheck, model: str, profiles: Sequence[str]) -> str:
    """Return the Korean sentence for a :class:`PlacementCheck` (see :meth:`Layout.explain`)."""
    values = {
        "profile": check.profile, "start": check.start, "model": model,
        "profiles": ", ".join(profiles), "legal": _list_text(check.legal_starts),
        "units": _units_text(check.units), "blocked": _units_text(check.blocked_units),
        "blockers": _list_text(check.blockers), "max_count": check.max_count,
        "count": check.count, "left": check.compute_left, "need": check.compute_needed,
        "compute": check.compute_needed,
    }
    if check.ok:
        values["start"] = check.chosen_start
        return _KO["ok_start" if check.start is not None else "ok_default"].format(**values)
    rule = check.rule or "unknown_profile"
    if rule == "unknown_profile":
        return _KO["unknown_profile"].format(**values)
    if rule == "media_engines" and check.profile.endswith("+me.all"):
        text = _KO["media_engines_all"].format(**values)
    elif rule == "invalid_placement" and check.start is None:
        text = _KO["invalid_placement"].format(**{**values, "start": "?"})
    elif rule in _KO:
        text = _KO[rule].format(**values)
    else:
        return check.message
    if rule == "profile_cap" and check.profile.endswith("+me"):
        text += _KO["profile_cap_me"]
    if rule in ("invalid_placement", "overlap", "compute_slices", "profile_cap",
                "media_engines"):
        text += (_KO["open"].format(open=_list_text(check.open_starts)) if check.open_starts
                 else _KO["open_none"])
    return text


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
    media-engine rule and the compute slices (:func:`labkit.gpu.placement.check_gi`).

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


# --- nvidia-smi ---------------------------------------------------------------------------------


def to_nvidia_smi(layout: Layout, gpu: int = 0, *, sudo: bool = True) -> str:
    """Return the ``nvidia-smi`` commands that build ``layout`` on GPU ``gpu``.

    Enable MIG, then one ``nvidia-smi mig -cgi <profile ID>:<start> -C`` per GI (the GI at an
    explicit placement plus its default compute instance), largest first. With explicit
    placements the creation order cannot make a step fail (NVIDIA MIG user guide, "Instance
    Geometry": only creation *without* placements depends on the order). Start from a GPU
    with no GIs (``nvidia-smi mig -dci`` then ``-dgi`` remove existing ones).

    Parameters
    ----------
    layout : Layout
    gpu : int, default 0
        The GPU index (``-i``).
    sudo : bool, default True
        Prefix each command with ``sudo`` (MIG changes need root; NVML "Requires root").

    References
    ----------
    .. [1] ``nvidia-smi mig -h``: ``-cgi`` takes profile tuples, "a profile name or ID and an
       optional placement specifier, which consists of a colon and a placement start index".

    Used in: notebooks/02_mig.ipynb
    """
    index = validate.integer("gpu", gpu)
    pre = "sudo " if sudo else ""
    lines = [f"{pre}nvidia-smi -i {index} -mig 1"]
    for gi in sorted(layout.instances, key=_size_order):
        lines.append(f"{pre}nvidia-smi mig -i {index} -cgi {gi.profile.id}:{gi.start} -C")
    return "\n".join(lines)


_CGI = re.compile(r"^(?:sudo\s+)?nvidia-smi\s+mig\s+(?P<args>.*)$")


def from_nvidia_smi(text: str, model: GpuModel | str) -> Layout:
    """Return the layout that ``nvidia-smi mig -cgi`` commands in ``text`` build.

    Reads ``-cgi`` profile tuples (ID or name, optional ``:start``; comma-separated); a tuple
    without a start goes where the driver would put it. ``-dgi`` (destroy all) empties the
    layout; other lines (``-mig 1``, ``-dci``, comments) are skipped.

    Raises
    ------
    InputError
        ``nvidia_smi`` (rule ``other``) for a line it cannot read.
    PlacementError
        If a GI does not fit.

    Used in: notebooks/02_mig.ipynb
    """
    if not isinstance(text, str) or len(text) > 20_000:
        raise InputError("nvidia_smi", "other", "...", "expected at most 20,000 characters")
    layout = Layout(model)
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        match = _CGI.match(line)
        if not match:
            continue
        args = match.group("args").split()
        if "-dgi" in args:
            layout.clear()
            continue
        for flag in ("-cgi", "--create-gpu-instance"):
            if flag in args:
                pos = args.index(flag)
                if pos + 1 >= len(args):
                    raise InputError("nvidia_smi", "other", raw,
                                     f"line {number}: {flag} needs a profile list")
                for item in args[pos + 1].split(","):
                    profile, _, start = item.partition(":")
                    key: str | int = int(profile) if profile.isdigit() else profile
                    if start and not start.isdigit():
                        raise InputError("nvidia_smi", "other", raw,
                                         f"line {number}: bad placement {item!r}")
                    begin = int(start) if start else None
                    try:
                        layout.place(key, begin)
                    except PlacementError as err:  # say why, in the lesson's words
                        raise PlacementError(err.rule, f"line {number} ({item}): "
                                             f"{layout.explain(key, begin)}") from err
    return layout


# --- mig-parted ---------------------------------------------------------------------------------

_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")


def _device_filter(model: GpuModel) -> str:
    return f"0x{model.pci_device_id:08X}"


def mig_parted_config(layout: Layout, label: str = "labkit", *,
                      devices: str | Sequence[int] = "all") -> dict[str, Any]:
    """Return the mig-parted config (``version: v1``) for ``layout`` as plain data.

    One config ``label`` with one entry: ``device-filter`` (the board's PCI device ID, so the
    profile names only meet the board they belong to), ``devices``, ``mig-enabled: true`` and
    ``mig-devices`` (profile name -> count). mig-parted stores counts, not placements: it
    re-creates GIs without placements, trying orders until one works.

    Raises
    ------
    InputError
        ``label`` that is not a plain name; ``devices`` that is not "all" or GPU indices.

    References
    ----------
    .. [1] NVIDIA/mig-parted ``api/spec/v1/spec.go`` (fields) and
       ``deployments/systemd/config-default`` (examples such as ``all-balanced``).

    Used in: notebooks/02_mig.ipynb
    """
    if not isinstance(label, str) or not _LABEL.match(label):
        raise InputError("label", "other", label,
                         "label must be letters, digits, '.', '_' or '-' (at most 63)")
    return {"version": "v1", "mig-configs": {label: [{
        "device-filter": [_device_filter(layout.model)],
        "devices": _devices(devices, "devices"),
        "mig-enabled": True,
        "mig-devices": layout.counts(),
    }]}}


def _devices(value: Any, where: str) -> str | list[int]:
    if value == "all":
        return "all"
    if isinstance(value, (list, tuple)) and value and len(value) <= 64:
        out = [validate.integer(where, v) for v in value]
        if len(set(out)) == len(out):
            return out
    raise InputError(where, "other", value,
                     f"{where} must be 'all' or a list of distinct GPU indices, got {value!r}")


def to_mig_parted(layout: Layout, label: str = "labkit", *,
                  devices: str | Sequence[int] = "all") -> str:
    """Return ``layout`` as a mig-parted config file (YAML text, ``version: v1``).

    The text of :func:`mig_parted_config`, with a comment naming the board and the planned
    placements (mig-parted itself keeps only counts). Apply it with
    ``nvidia-mig-parted apply -f <file> -c <label>``.

    Used in: notebooks/02_mig.ipynb
    """
    config = mig_parted_config(layout, label, devices=devices)
    entry = config["mig-configs"][label][0]
    placements = ", ".join(f"{gi.profile.name}@{gi.start}" for gi in layout.sorted_instances())
    dev = entry["devices"]
    lines = [
        f"# {layout.model.name} ({layout.model.short_name}): {placements or 'no GPU instances'}",
        "# mig-parted keeps profile counts only; the placements above are labkit's plan.",
        "version: v1",
        "mig-configs:",
        f"  {label}:",
        f'    - device-filter: ["{entry["device-filter"][0]}"]',
        f"      devices: {dev if dev == 'all' else '[' + ', '.join(map(str, dev)) + ']'}",
        "      mig-enabled: true",
    ]
    counts = entry["mig-devices"]
    if not counts:
        lines.append("      mig-devices: {}")
    else:
        lines.append("      mig-devices:")
        lines += [f'        "{name}": {n}' for name, n in counts.items()]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class MigPartedEntry:
    """One device entry of a mig-parted config that applies to a board.

    Attributes
    ----------
    label : str
        The config name (``-c``).
    devices : str or tuple of int
        ``"all"`` or GPU indices.
    device_filter : tuple of str
        PCI device IDs the entry is limited to (empty: any).
    mig_enabled : bool
    layout : Layout
        The GIs (empty when MIG is off), placed by :meth:`Layout.from_profiles`.
    """

    label: str
    devices: str | tuple[int, ...]
    device_filter: tuple[str, ...]
    mig_enabled: bool
    layout: Layout


_TOP_KEYS = ("version", "mig-configs")
_ENTRY_KEYS = ("device-filter", "devices", "mig-enabled", "mig-devices")
_CI_SPLIT = re.compile(r"^\d+c\.")


def _unknown(doc: Mapping[str, Any], allowed: Sequence[str], where: str) -> None:
    for key in doc:
        if key not in allowed:
            raise InputError(where, "choice", key,
                             f"{where}: unknown field {key!r} (allowed: {', '.join(allowed)})",
                             limit=tuple(allowed))


def from_mig_parted(spec: Any, model: GpuModel | str) -> list[MigPartedEntry]:
    """Read a mig-parted config (already parsed into mappings) for one board, strictly.

    Every field is checked as mig-parted's v1 spec does: ``version`` must be ``v1``; unknown
    keys, a missing ``devices``/``mig-enabled``, ``mig-devices`` under ``mig-enabled: false``,
    and for entries that apply to this board (no ``device-filter``, or one naming its PCI
    device ID) every profile name and count. Nothing is created: the result is layouts.

    Parameters
    ----------
    spec : mapping
        The parsed file (``version``, ``mig-configs``).
    model : GpuModel or str
        The board the configs are read for.

    Returns
    -------
    list of MigPartedEntry
        The entries that apply to the board, in file order.

    Raises
    ------
    InputError
        Naming the field (``mig-configs.all-balanced[0].mig-devices``), the rule and the
        value: unknown profile names (rule ``choice``, the board's profiles as the limit),
        compute-instance splits (``1c.3g.40gb``), bad counts, profiles that do not fit.

    Used in: notebooks/02_mig.ipynb
    """
    board = resolve_model(model)
    if not isinstance(spec, Mapping):
        raise InputError("config", "other", type(spec).__name__,
                         "a mig-parted config must be a mapping with version and mig-configs")
    _unknown(spec, _TOP_KEYS, "config")
    if "version" not in spec:
        raise InputError("version", "other", None, "missing required field: version")
    if spec["version"] != "v1":
        raise InputError("version", "choice", spec["version"],
                         f"version must be v1, got {spec['version']!r}", limit=("v1",))
    configs = spec.get("mig-configs")
    if not isinstance(configs, Mapping) or not configs:
        raise InputError("mig-configs", "other", configs,
                         "missing required field: mig-configs (a mapping of config names)")
    out: list[MigPartedEntry] = []
    for label, entries in configs.items():
        where = f"mig-configs.{label}"
        if not isinstance(label, str) or not label:
            raise InputError("mig-configs", "other", label, "config names must be text")
        if not isinstance(entries, list) or not entries:
            raise InputError(where, "other", entries, f"{where} must be a list of device entries")
        for k, entry in enumerate(entries):
            found = _entry(entry, f"{where}[{k}]", label, board)
            if found is not None:
                out.append(found)
    return out


def _entry(entry: Any, where: str, label: str, board: GpuModel) -> MigPartedEntry | None:
    if not isinstance(entry, Mapping):
        raise InputError(where, "other", entry, f"{where} must be a mapping")
    _unknown(entry, _ENTRY_KEYS, where)
    for key in ("devices", "mig-enabled"):
        if key not in entry:
            raise InputError(f"{where}.{key}", "other", None, f"{where}: missing required field: "
                                                               f"{key}")
    devices = _devices(entry["devices"], f"{where}.devices")
    enabled = entry["mig-enabled"]
    if not isinstance(enabled, bool):
        raise InputError(f"{where}.mig-enabled", "other", enabled,
                         f"{where}.mig-enabled must be true or false, got {enabled!r}")
    filters = entry.get("device-filter", [])
    if isinstance(filters, str):
        filters = [filters]
    if not isinstance(filters, list) or not all(isinstance(f, str) for f in filters):
        raise InputError(f"{where}.device-filter", "other", filters,
                         f"{where}.device-filter must be a PCI device ID or a list of them")
    if not enabled and "mig-devices" in entry:
        raise InputError(f"{where}.mig-devices", "other", entry["mig-devices"],
                         f"{where}: mig-devices is not allowed with mig-enabled: false")
    if enabled and "mig-devices" not in entry:
        raise InputError(f"{where}.mig-devices", "other", None,
                         f"{where}: missing required field: mig-devices")
    applies = not filters or _device_filter(board).lower() in (f.lower() for f in filters)
    if not applies:
        return None
    counts = entry.get("mig-devices") or {}
    if not isinstance(counts, Mapping):
        raise InputError(f"{where}.mig-devices", "other", counts,
                         f"{where}.mig-devices must map profile names to counts")
    spec = _spec(board)
    names: list[str] = []
    for name, n in counts.items():
        field_name = f"{where}.mig-devices"
        if not isinstance(name, str) or spec.by_name(name) is None:
            hint = (" (compute-instance splits are not planned here; use the GPU instance "
                    "profile)" if isinstance(name, str) and _CI_SPLIT.match(name) else "")
            raise InputError(field_name, "choice", name,
                             f"{field_name}: {board.short_name} has no profile {name!r}{hint}",
                             limit=tuple(p.name for p in spec.profiles))
        count = validate.integer(f"{field_name}.{name}", n)
        names += [name] * count
    try:
        layout = Layout.from_profiles(board, names)
    except PlacementError as err:
        raise InputError(f"{where}.mig-devices", "other", dict(counts),
                         f"{where}.mig-devices: {err}") from err
    chosen: str | tuple[int, ...] = devices if isinstance(devices, str) else tuple(devices)
    return MigPartedEntry(label, chosen, tuple(filters), enabled, layout)


def layout_from_mig_parted(spec: Any, model: GpuModel | str, label: str | None = None) -> Layout:
    """Return the layout of config ``label`` (or the only/first one) for ``model``.

    Raises
    ------
    InputError
        As :func:`from_mig_parted`, or ``label`` (rule ``choice``) when no entry of that name
        applies to the board.

    Used in: notebooks/02_mig.ipynb
    """
    entries = from_mig_parted(spec, model)
    if label is not None:
        entries = [e for e in entries if e.label == label]
    if not entries:
        board = resolve_model(model)
        raise InputError("label", "choice", label,
                         f"no mig-parted config{' ' + repr(label) if label else ''} for "
                         f"{board.short_name}")
    return entries[0].layout


# --- live: state through NVML -------------------------------------------------------------------


@dataclass(frozen=True)
class ComputeInstanceState:
    """A compute instance (``nvmlComputeInstanceGetInfo``): ID, profile, placement in slices."""

    id: int
    profile_id: int
    start: int
    size: int
    name: str


@dataclass(frozen=True)
class GpuInstanceState:
    """A GPU instance (``nvmlGpuInstanceGetInfo``) and its compute instances."""

    id: int
    profile_id: int
    profile: str
    start: int
    size: int
    compute_instances: tuple[ComputeInstanceState, ...]


@dataclass(frozen=True)
class MigDeviceState:
    """A MIG device (GI + CI) as CUDA sees it: index, ``MIG-...`` UUID, GI and CI IDs."""

    index: int
    uuid: str
    gpu_instance_id: int
    compute_instance_id: int
    name: str


@dataclass(frozen=True)
class MigState:
    """One GPU's MIG state read through NVML.

    Attributes
    ----------
    index : int
        GPU index.
    name : str
        ``nvmlDeviceGetName``.
    mig_supported : bool
        False on a board without MIG (``nvmlDeviceGetMigMode``: NOT_SUPPORTED).
    mode_current, mode_pending : int or None
        ``nvmlDeviceGetMigMode`` (1 enabled, 0 disabled); pending differs until the next reset.
    gpu_instances : tuple of GpuInstanceState
        By start unit.
    mig_devices : tuple of MigDeviceState
    processes : tuple of int
        PIDs of compute processes on the GPU.
    """

    index: int
    name: str
    mig_supported: bool
    mode_current: int | None
    mode_pending: int | None
    gpu_instances: tuple[GpuInstanceState, ...] = ()
    mig_devices: tuple[MigDeviceState, ...] = ()
    processes: tuple[int, ...] = ()

    @property
    def enabled(self) -> bool:
        """Whether MIG mode is on now."""
        return self.mode_current == 1

    @property
    def pending(self) -> bool:
        """Whether a mode change waits for a GPU reset."""
        return self.mode_current != self.mode_pending

    def layout(self, model: GpuModel | str) -> Layout:
        """Return the GIs as a :class:`Layout` of ``model`` (raises PlacementError if foreign)."""
        lay = Layout(model)
        for gi in self.gpu_instances:
            lay.place(gi.profile_id, gi.start)
        return lay


def _text(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _profile_name(info: Any) -> str:
    return _text(getattr(info, "name", b"")).removeprefix("MIG ").strip()


@dataclass
class _Live:
    """GI/CI handles next to their state (apply needs the handles)."""

    gi: Any
    state: GpuInstanceState
    cis: list[tuple[Any, ComputeInstanceState]]


def _compute_instances(nv: ModuleType, gi: Any) -> list[tuple[Any, ComputeInstanceState]]:
    out = []
    for const in range(nv.NVML_COMPUTE_INSTANCE_PROFILE_COUNT):
        try:
            info = nv.nvmlGpuInstanceGetComputeInstanceProfileInfo(
                gi, const, nv.NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
        except (nv.NVMLError_NotSupported, nv.NVMLError_InvalidArgument):
            continue
        count = ctypes.c_uint(0)
        buf = (nv.c_nvmlComputeInstance_t * max(1, info.instanceCount))()
        nv.nvmlGpuInstanceGetComputeInstances(gi, const, buf, ctypes.byref(count))
        for k in range(count.value):
            ci = nv.nvmlComputeInstanceGetInfo(buf[k])
            out.append((buf[k], ComputeInstanceState(
                ci.id, ci.profileId, ci.placement.start, ci.placement.size,
                _profile_name(info))))
    return sorted(out, key=lambda pair: pair[1].start)


def _live(nv: ModuleType, h: Any) -> list[_Live]:
    found = []
    for info, gi, gi_info in smi.gpu_instances(nv, h):
        cis = _compute_instances(nv, gi)
        state = GpuInstanceState(gi_info.id, info.id, _profile_name(info),
                                 gi_info.placement.start, gi_info.placement.size,
                                 tuple(c for _, c in cis))
        found.append(_Live(gi, state, cis))
    return sorted(found, key=lambda x: (x.state.start, x.state.id))


def _mig_devices(nv: ModuleType, h: Any) -> tuple[MigDeviceState, ...]:
    out = []
    for k in range(nv.nvmlDeviceGetMaxMigDeviceCount(h)):
        try:
            mig = nv.nvmlDeviceGetMigDeviceHandleByIndex(h, k)
        except nv.NVMLError_NotFound:
            continue
        out.append(MigDeviceState(k, _text(nv.nvmlDeviceGetUUID(mig)),
                                  nv.nvmlDeviceGetGpuInstanceId(mig),
                                  nv.nvmlDeviceGetComputeInstanceId(mig),
                                  _text(nv.nvmlDeviceGetName(mig))))
    return tuple(out)


def _read(nv: ModuleType, index: int) -> tuple[Any, MigState, list[_Live]]:
    h = nv.nvmlDeviceGetHandleByIndex(index)
    name = _text(nv.nvmlDeviceGetName(h))
    pids = tuple(p.pid for p in nv.nvmlDeviceGetComputeRunningProcesses(h))
    try:
        current, pending = nv.nvmlDeviceGetMigMode(h)
    except nv.NVMLError_NotSupported:
        return h, MigState(index, name, False, None, None, processes=pids), []
    live = _live(nv, h) if current == 1 else []
    devices = _mig_devices(nv, h) if current == 1 else ()
    state = MigState(index, name, True, int(current), int(pending),
                     tuple(x.state for x in live), devices, pids)
    return h, state, live


def read_state(nv: ModuleType, index: int = 0) -> MigState:
    """Return GPU ``index``'s MIG mode, GPU and compute instances, MIG devices and processes.

    Only reads (the ``nvidia-smi -q``/``mig -lgi``/``-lci``/``-L`` queries), the same calls on
    a real and a simulated GPU.

    Parameters
    ----------
    nv : module
        The NVML module from ``labkit.gpu.connect()``.
    index : int, default 0
        GPU index.

    Raises
    ------
    nv.NVMLError
        From any query (the UI shows it as "n/a" with the reason).
    InputError
        ``index`` that is not a whole number >= 0.

    Used in: notebooks/02_mig.ipynb
    """
    return _read(nv, validate.integer("index", index))[1]


# --- live: plan and apply -----------------------------------------------------------------------


@dataclass(frozen=True)
class MigStep:
    """One change ``apply`` makes, in order.

    Attributes
    ----------
    action : str
        ``"enable_mig"``, ``"destroy_ci"``, ``"destroy_gi"``, ``"create_gi"``, ``"create_ci"``.
    profile : str
        GI profile name (GI steps and ``create_ci``).
    profile_id : int or None
        GI profile ID (``-lgip`` ID).
    start, size : int or None
        GI placement. [memory units]
    gpu_instance_id, compute_instance_id : int or None
        The existing instance a destroy step removes (``create_ci`` on a kept GI: its ID).
    ci_profile_id : int or None
        ``NVML_COMPUTE_INSTANCE_PROFILE_*`` of a CI step.
    """

    action: str
    profile: str = ""
    profile_id: int | None = None
    start: int | None = None
    size: int | None = None
    gpu_instance_id: int | None = None
    compute_instance_id: int | None = None
    ci_profile_id: int | None = None


def _has_default_ci(gi: GpuInstanceState, profile: GiProfile) -> bool:
    cis = gi.compute_instances
    return (len(cis) == 1 and cis[0].profile_id == default_ci_profile(profile)
            and cis[0].start == 0)


def plan(state: MigState, layout: Layout) -> list[MigStep]:
    """Return the steps that turn ``state`` into ``layout`` (pure; nothing is called).

    Enable MIG if it is off; destroy the CIs and GIs that are not in the layout; create the
    missing GIs at their explicit placements, largest first; then give each new GI (and each
    kept GI without exactly its default CI) the default full-size CI. A GPU already in the
    layout needs no step (mig-parted's "apply changes (if necessary)").

    Raises
    ------
    ValueError
        If the GPU has no MIG, or a GI on it is not a profile of the layout's board.

    Used in: notebooks/02_mig.ipynb
    """
    if not state.mig_supported:
        raise ValueError(f"GPU {state.index} ({state.name}) has no MIG")
    steps: list[MigStep] = []
    if not state.enabled:
        steps.append(MigStep("enable_mig"))
    target = {(gi.start, gi.profile.id): gi for gi in layout.instances}
    keep, redo_ci = set(), []
    for gi in state.gpu_instances:
        key = (gi.start, gi.profile_id)
        if key in target and key not in keep:
            keep.add(key)
            if not _has_default_ci(gi, target[key].profile):
                steps += [MigStep("destroy_ci", gi.profile, gi.profile_id, gi.start, gi.size,
                                  gi.id, ci.id, ci.profile_id) for ci in gi.compute_instances]
                redo_ci.append((target[key], gi.id))
            continue
        steps += [MigStep("destroy_ci", gi.profile, gi.profile_id, gi.start, gi.size, gi.id,
                          ci.id, ci.profile_id) for ci in gi.compute_instances]
        steps.append(MigStep("destroy_gi", gi.profile, gi.profile_id, gi.start, gi.size, gi.id))
    new = sorted((gi for key, gi in target.items() if key not in keep), key=_size_order)
    steps += [MigStep("create_gi", gi.profile.name, gi.profile.id, gi.start,
                      gi.profile.memory_slices) for gi in new]
    with_ci: list[tuple[PlacedGi, int | None]] = [(placed, None) for placed in new]
    for placed, gi_id in with_ci + redo_ci:
        steps.append(MigStep("create_ci", placed.profile.name, placed.profile.id, placed.start,
                             placed.profile.memory_slices, gi_id,
                             ci_profile_id=default_ci_profile(placed.profile)))
    return steps


@dataclass(frozen=True)
class NvmlCall:
    """One NVML call ``apply`` made (or, in a dry run, would make).

    Attributes
    ----------
    function : str
        The NVML function (``nvmlDeviceCreateGpuInstanceWithPlacement``).
    arguments : str
        Its arguments, readable (``profileId=9, placement=4:4``).
    outcome : str
        ``"ok"`` (with the value), the NVML error name, or ``"dry run"``.
    changes : bool
        Whether the call changes the GPU.
    rollback : bool
        Whether it undoes an earlier step.
    """

    function: str
    arguments: str
    outcome: str
    changes: bool = False
    rollback: bool = False


@dataclass(frozen=True)
class ApplyResult:
    """What :func:`apply` did (or would do, with ``dry_run``).

    Attributes
    ----------
    dry_run : bool
    steps : tuple of MigStep
        The plan.
    log : tuple of NvmlCall
        Every NVML call, in order.
    state : MigState
        The GPU afterwards (unchanged after a dry run).
    """

    dry_run: bool
    steps: tuple[MigStep, ...]
    log: tuple[NvmlCall, ...]
    state: MigState

    @property
    def changed(self) -> bool:
        """Whether any call changed the GPU."""
        return any(c.changes and c.outcome.startswith("ok") for c in self.log)


class MigApplyError(RuntimeError):
    """``apply`` refused or failed; ``reason`` says why, ``log`` what was called.

    Attributes
    ----------
    reason : str
        ``"voila"`` (never from a voila app), ``"disabled"`` (``LABKIT_ALLOW_MIG_APPLY`` not
        set), ``"not_supported"`` (no MIG), ``"model_mismatch"`` (the layout is for another
        board), ``"processes"`` (compute processes run), ``"pending"`` (a MIG mode change
        waits for a reset), ``"no_permission"`` (not root: run ``commands`` instead),
        ``"failed"`` (an NVML call failed; what was done is rolled back).
    commands : str
        The ``nvidia-smi`` commands that build the layout (to run by hand).
    log : tuple of NvmlCall
    rolled_back : bool
        Whether changes were undone.
    """

    def __init__(self, reason: str, message: str, *, commands: str = "",
                 log: Sequence[NvmlCall] = (), rolled_back: bool = False) -> None:
        super().__init__(message)
        self.reason = reason
        self.commands = commands
        self.log = tuple(log)
        self.rolled_back = rolled_back


def apply_allowed(dry_run: bool = False) -> tuple[bool, str | None]:
    """Return (allowed, reason) for :func:`apply` here and now.

    Never inside a voila app (reason ``"voila"``), whatever is set. A real apply also needs
    ``LABKIT_ALLOW_MIG_APPLY=1`` (reason ``"disabled"``); a dry run (it only reads) does not.

    Used in: notebooks/02_mig.ipynb
    """
    from labkit.runtime.voila import running_under_voila

    if running_under_voila():
        return False, "voila"
    if not dry_run and os.environ.get(ALLOW_ENV) != "1":
        return False, "disabled"
    return True, None


def _arg(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return "·"


class _Traced:
    """The NVML module with every ``nvml*`` call that passes through it logged."""

    def __init__(self, nv: ModuleType, log: list[NvmlCall]) -> None:
        self._nv = nv
        self._log = log

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._nv, name)
        if not (name.startswith("nvml") and callable(value)):
            return value

        def call(*args: Any, **kwargs: Any) -> Any:
            text = ", ".join(_arg(a) for a in args)
            try:
                out = value(*args, **kwargs)
            except self._nv.NVMLError as err:
                self._log.append(NvmlCall(name, text, type(err).__name__))
                raise
            shown = out if isinstance(out, (int, str, list)) else None
            self._log.append(NvmlCall(name, text, "ok" if shown is None else f"ok: {shown}"))
            return out

        return call


class _Recorder:
    """Logs the calls that change the GPU; in a dry run, logs them without calling."""

    def __init__(self, nv: ModuleType, dry_run: bool) -> None:
        self.nv = nv
        self.dry_run = dry_run
        self.log: list[NvmlCall] = []
        self.rollback = False

    def change(self, function: str, arguments: str, call: Callable[[], Any]) -> Any:
        if self.dry_run:
            self.log.append(NvmlCall(function, arguments, "dry run", True, self.rollback))
            return None
        try:
            value = call()
        except self.nv.NVMLError as err:
            self.log.append(NvmlCall(function, arguments, type(err).__name__, True,
                                     self.rollback))
            raise
        self.log.append(NvmlCall(function, arguments, "ok", True, self.rollback))
        return value


def _check_board(nv: Any, h: Any, state: MigState, layout: Layout, rec: _Recorder,
                 commands: str) -> None:
    """Check that the GPU offers the layout's profiles at its placements (reads only)."""
    infos = smi.gi_profiles(nv, h)
    if not infos:  # an old driver answers profile queries only with MIG on
        if state.name != layout.model.name:
            raise MigApplyError("model_mismatch",
                                f"GPU {state.index} is a {state.name}, the layout is for "
                                f"{layout.model.name}", commands=commands, log=rec.log)
        return
    by_name = {_profile_name(i): i for i in infos}
    for gi in layout.instances:
        info = by_name.get(gi.profile.name)
        if info is None or info.id != gi.profile.id:
            raise MigApplyError("model_mismatch",
                                f"GPU {state.index} ({state.name}) has no profile "
                                f"{gi.profile.name} with ID {gi.profile.id}; the layout is for "
                                f"{layout.model.short_name}", commands=commands, log=rec.log)
        starts = smi.placements(nv, h, info.id)
        if (gi.start, gi.profile.memory_slices) not in starts:
            raise MigApplyError("model_mismatch",
                                f"GPU {state.index} does not offer {gi.profile.name} at "
                                f"{gi.start}:{gi.profile.memory_slices}", commands=commands,
                                log=rec.log)


def _validate_plan(state: MigState, layout: Layout, steps: Sequence[MigStep]) -> None:
    """Replay the plan on the pure rules: every create must succeed after the destroys."""
    kept = [(s.start, s.profile_id) for s in steps if s.action == "destroy_gi"]
    after = Layout(layout.model)
    for gi in state.gpu_instances:
        if (gi.start, gi.profile_id) not in kept:
            after.place(gi.profile_id, gi.start)
    for step in steps:
        if step.action == "create_gi":
            after.place(step.profile_id or 0, step.start)
    if after != layout:
        raise ValueError(f"internal: the plan gives {after!r}, not {layout!r}")  # pragma: no cover


def apply(nv: ModuleType, index: int, layout: Layout, dry_run: bool = True) -> ApplyResult:
    """Make GPU ``index``'s MIG layout equal ``layout``, through NVML, or roll back.

    Order: refuse inside voila and (for a real apply) without ``LABKIT_ALLOW_MIG_APPLY=1``;
    read the GPU (mode, processes, instances, its profiles and placements); refuse while compute
    processes run; plan (:func:`plan`) and replay the whole plan on the placement rules — all
    before the first call that changes the GPU. Then enable MIG if needed, destroy what goes,
    create the GIs with explicit placements (``nvmlDeviceCreateGpuInstanceWithPlacement``), then
    their default CIs. If a call fails, what was created is destroyed and what was destroyed is
    re-created (mig-parted clears a partial state the same way).

    Parameters
    ----------
    nv : module
        The NVML module from ``labkit.gpu.connect()`` (real or simulated GPU).
    index : int
        GPU index.
    layout : Layout
        The target; its board must match the GPU's profiles.
    dry_run : bool, default True
        Only read and report the calls that would be made.

    Returns
    -------
    ApplyResult
        The plan, the log of NVML calls and the state afterwards.

    Raises
    ------
    MigApplyError
        ``reason`` ``voila``, ``disabled``, ``not_supported``, ``model_mismatch``,
        ``processes``, ``pending``, ``no_permission`` (with the ``nvidia-smi`` commands to run
        as root instead) or ``failed`` (rolled back).
    nv.NVMLError
        From a read that fails.

    Used in: notebooks/02_mig.ipynb
    """
    gpu = validate.integer("index", index)
    commands = to_nvidia_smi(layout, gpu)
    allowed, why = apply_allowed(dry_run)
    if not allowed:
        message = ("MIG apply is never available in a voila app" if why == "voila" else
                   f"MIG apply is off: set {ALLOW_ENV}=1 before starting JupyterLab "
                   "(or run the commands yourself)")
        raise MigApplyError(str(why), message, commands=commands)
    rec = _Recorder(nv, dry_run)
    traced: Any = _Traced(nv, rec.log)
    try:
        h, state, live = _read(traced, gpu)
        if not state.mig_supported:
            raise MigApplyError("not_supported", f"GPU {gpu} ({state.name}) has no MIG",
                                log=rec.log)
        _check_board(traced, h, state, layout, rec, commands)
    except nv.NVMLError_NoPermission as err:
        raise MigApplyError("no_permission", f"NVML: {err}; run as root instead:\n{commands}",
                            commands=commands, log=rec.log) from err
    if state.processes:
        raise MigApplyError("processes", f"GPU {gpu} runs compute processes "
                                         f"{list(state.processes)}: stop them first",
                            commands=commands, log=rec.log)
    if state.pending:
        raise MigApplyError("pending", f"GPU {gpu}: MIG mode change pending (current "
                                       f"{state.mode_current}, pending {state.mode_pending}); "
                                       f"reset the GPU first (nvidia-smi -i {gpu} -r)",
                            commands=commands, log=rec.log)
    steps = plan(state, layout)
    _validate_plan(state, layout, steps)
    done = _Execution(nv, h, rec, live)
    try:
        for step in steps:
            done.run(step)
    except (nv.NVMLError, MigApplyError) as err:
        if isinstance(err, nv.NVMLError_NoPermission) and not done.undo:
            raise MigApplyError("no_permission", f"NVML: {err}; run as root instead:\n"
                                                 f"{commands}", commands=commands,
                                log=rec.log) from err
        problems = done.roll_back()
        note = f"; rollback problems: {problems}" if problems else ""
        reason = err.reason if isinstance(err, MigApplyError) else "failed"
        raise MigApplyError(reason, f"GPU {gpu}: {err}; changes rolled back{note}",
                            commands=commands, log=rec.log, rolled_back=True) from err
    after = state if dry_run else read_state(nv, gpu)
    return ApplyResult(dry_run, tuple(steps), tuple(rec.log), after)


class _Execution:
    """Runs plan steps, remembering how to undo each."""

    def __init__(self, nv: ModuleType, h: Any, rec: _Recorder, live: list[_Live]) -> None:
        self.nv, self.h, self.rec = nv, h, rec
        self.gis: dict[int, Any] = {x.state.start: x.gi for x in live}  # start -> GI handle
        self.cis: dict[tuple[int, int], Any] = {(x.state.id, c.id): handle for x in live
                                                for handle, c in x.cis}
        self.by_id: dict[int, Any] = {x.state.id: x.gi for x in live}
        self.undo: list[Callable[[], None]] = []

    def run(self, step: MigStep) -> None:
        nv, rec = self.nv, self.rec
        if step.action == "enable_mig":
            status = rec.change("nvmlDeviceSetMigMode", "mode=1",
                                lambda: nv.nvmlDeviceSetMigMode(self.h, nv.NVML_DEVICE_MIG_ENABLE))
            self.undo.append(lambda: self._set_mode(nv.NVML_DEVICE_MIG_DISABLE))
            if status not in (None, nv.NVML_SUCCESS):
                raise MigApplyError("pending", f"MIG mode is pending (activationStatus "
                                               f"{status}): the GPU needs a reset")
        elif step.action == "destroy_ci":
            assert step.gpu_instance_id is not None and step.compute_instance_id is not None
            handle = self.cis[(step.gpu_instance_id, step.compute_instance_id)]
            rec.change("nvmlComputeInstanceDestroy",
                       f"GI {step.gpu_instance_id} CI {step.compute_instance_id}",
                       lambda: nv.nvmlComputeInstanceDestroy(handle))
            self.undo.append(functools.partial(self._recreate_ci, step))
        elif step.action == "destroy_gi":
            assert step.start is not None
            handle = self.gis.pop(step.start)
            rec.change("nvmlGpuInstanceDestroy", f"GI {step.gpu_instance_id} "
                                                 f"({step.profile}@{step.start})",
                       lambda: nv.nvmlGpuInstanceDestroy(handle))
            self.undo.append(functools.partial(self._create_gi, step))
        elif step.action == "create_gi":
            self._create_gi(step)
            self.undo.append(functools.partial(self._destroy_gi, step))
        elif step.action == "create_ci":
            ci = self._create_ci(step)
            self.undo.append(functools.partial(self._destroy_ci, ci, step))

    def _set_mode(self, mode: int) -> None:
        self.rec.change("nvmlDeviceSetMigMode", f"mode={mode}",
                        lambda: self.nv.nvmlDeviceSetMigMode(self.h, mode))

    def _gi_handle(self, step: MigStep) -> Any:
        if step.start in self.gis:
            return self.gis[step.start]
        return self.by_id[step.gpu_instance_id or 0]

    def _create_gi(self, step: MigStep) -> None:
        nv = self.nv
        assert step.start is not None and step.size is not None
        place = nv.c_nvmlGpuInstancePlacement_t(step.start, step.size)
        gi = self.rec.change(
            "nvmlDeviceCreateGpuInstanceWithPlacement",
            f"profileId={step.profile_id} ({step.profile}), placement={step.start}:{step.size}",
            lambda: nv.nvmlDeviceCreateGpuInstanceWithPlacement(self.h, step.profile_id,
                                                                ctypes.byref(place)))
        self.gis[step.start] = gi

    def _destroy_gi(self, step: MigStep) -> None:
        handle = self.gis.pop(step.start or 0)
        self.rec.change("nvmlGpuInstanceDestroy", f"{step.profile}@{step.start}",
                        lambda: self.nv.nvmlGpuInstanceDestroy(handle))

    def _create_ci(self, step: MigStep) -> Any:
        gi = self._gi_handle(step)
        return self.rec.change(
            "nvmlGpuInstanceCreateComputeInstance",
            f"GI {step.profile}@{step.start}, ciProfile={step.ci_profile_id}",
            lambda: self.nv.nvmlGpuInstanceCreateComputeInstance(gi, step.ci_profile_id))

    def _destroy_ci(self, ci: Any, step: MigStep) -> None:
        self.rec.change("nvmlComputeInstanceDestroy", f"CI on {step.profile}@{step.start}",
                        lambda: self.nv.nvmlComputeInstanceDestroy(ci))

    def _recreate_ci(self, step: MigStep) -> None:
        gi = self._gi_handle(step)
        self.rec.change(
            "nvmlGpuInstanceCreateComputeInstance",
            f"GI {step.profile}@{step.start}, ciProfile={step.ci_profile_id}",
            lambda: self.nv.nvmlGpuInstanceCreateComputeInstance(gi, step.ci_profile_id))

    def roll_back(self) -> list[str]:
        """Undo every completed step, newest first; return the problems met."""
        self.rec.rollback = True
        problems = []
        while self.undo:
            action = self.undo.pop()
            try:
                action()
            except (self.nv.NVMLError, KeyError) as err:
                problems.append(f"{type(err).__name__}: {err}")
        return problems
