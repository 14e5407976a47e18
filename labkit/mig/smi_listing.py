"""A server's MIG layout read from what nvidia-smi prints: ``-L``, ``mig -lgi``, ``-lci``,
``-lgip``, ``-lgipp``.

Operators share their MIG state as nvidia-smi text (a file or a paste, several commands one after
another, several GPUs). :func:`read_nvidia_smi_mig` turns it into one :class:`Layout` per GPU:

- ``mig -lgi``: the GPU instances with their placements (``Start:Size``): exact;
- ``mig -lci``: the compute instances; their GPU instances' profiles follow from the CI names
  (``MIG 1c.3g.40gb`` is a CI of a ``3g.40gb`` GI);
- ``-L``: the GPUs by name (which board) and their MIG devices (one per GI + CI);
- ``mig -lgip``: the profiles with Free/Total (which board, and a check of the layout);
- ``mig -lgipp``: the possible placements (which board, checked against the board's table).

Without ``-lgi`` the placements are not in the text: they are inferred the way the driver
places GIs created without a placement (:meth:`Layout.from_profiles`), and the result says so.
Rows are recognised by their shape, not by column widths (the tables grew from 79 to 81
columns around R570, ``Name`` got wider), so any driver's tables and pastes with prompts or
other output around them are read. Nothing is guessed silently: an unknown board, a listing the
board's tables contradict, or profiles several boards share without ``model`` raise
:class:`SmiListingError` with a ``rule`` the UI words in Korean.

Pure (text in, layouts out).

References
----------
.. [1] NVIDIA MIG user guide, "Getting Started with MIG" (R580): ``nvidia-smi mig -lgip``,
   ``-lgipp``, ``-lgi``, ``-lci`` and ``-L`` examples.
.. [2] Real captures in ``tests/fixtures/nvidia-smi/`` (SOURCES.md names each).

Used in: notebooks/02_mig.ipynb
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from labkit.gpumodels import GpuModel
from labkit.mig.layout import Layout, known_models, resolve_model
from labkit.mig.placement import PlacementError

__all__ = ["MAX_LISTING_CHARS", "SmiListingError", "SmiMigGpu", "parse_nvidia_smi_mig",
           "read_nvidia_smi_mig"]

#: Longest text read: ``-lgip`` of 8 RTX PRO 6000s (11 profiles, 3 lines each) is ~22 kB;
#: a paste of every listing for 8 GPUs stays well under this. [characters]
MAX_LISTING_CHARS = 200_000

#: ``nvidia-smi -L``: ``GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-...)``.
_L_GPU = re.compile(r"^GPU (?P<gpu>\d+): (?P<name>.+?) \(UUID: [^)]*\)\s*$")
#: ``-L``'s MIG device lines: ``  MIG 3g.40gb     Device  0: (UUID: MIG-...)``.
_L_MIG = re.compile(r"^\s+MIG (?P<profile>\S+)\s+Device\s+(?P<dev>\d+): \(UUID: [^)]*\)\s*$")
#: ``-lgi`` rows: GPU, name, profile ID, instance ID, start:size.
_LGI = re.compile(r"^\|\s*(?P<gpu>\d+)\s+MIG (?P<profile>\S+)\s+(?P<pid>\d+)\s+(?P<gi>\d+)\s+"
                  r"(?P<start>\d+):(?P<size>\d+)\s*\|$")
#: ``-lci`` rows: GPU, GI ID, name, CI profile ID, CI ID, start:size.
_LCI = re.compile(r"^\|\s*(?P<gpu>\d+)\s+(?P<gi>\d+)\s+MIG (?P<profile>\S+)\s+(?P<pid>\d+)\s+"
                  r"(?P<ci>\d+)\s+(?P<start>\d+):(?P<size>\d+)\s*\|$")
#: ``-lgip`` first row of a profile: GPU, name, ID, free/total, GiB, P2P, SM, DEC, ENC.
_LGIP = re.compile(r"^\|\s*(?P<gpu>\d+)\s+MIG (?P<profile>\S+)\s+(?P<pid>\d+)\s+"
                   r"(?P<free>\d+)/(?P<total>\d+)\s+(?P<gib>[\d.]+)\s+(?:Yes|No)\s+"
                   r"(?P<sm>\d+)\s+\d+\s+\d+\s*\|$")
#: ``-lgipp``: ``GPU  0 Profile ID 19 Placements: {0,1,2,3,4,5,6}:1``.
_LGIPP = re.compile(r"^GPU\s+(?P<gpu>\d+)\s+Profile ID\s+(?P<pid>\d+)\s+Placements?\s*:\s*"
                    r"\{(?P<starts>[\d,\s]*)\}:(?P<size>\d+)\s*$")
#: A CI name: ``1c.3g.40gb`` (a CI of 1 slice in a 3g.40gb GI) or the GI's own name.
_CI_NAME = re.compile(r"^(?:(?P<c>\d+)c\.)?(?P<gi>\d+g\.\d+gb.*)$")

#: nvidia-smi -L names of boards that share a ``data/gpus/`` table with another name
#: (PCIe and SXM A100s have the same MIG profiles: NVIDIA MIG user guide, "Supported MIG
#: Profiles", A100 tables; the names as -L prints them: NVIDIA/go-dcgm issue #30 "NVIDIA A100
#: 80GB PCIe", NVIDIA/gpu-operator issue #132 "NVIDIA A100-PCIE-40GB").
_NAME_ALIASES: Mapping[str, str] = MappingProxyType({
    "NVIDIA A100 80GB PCIe": "A100-80GB",
    "NVIDIA A100-PCIE-40GB": "A100-40GB",
    "NVIDIA A100-SXM-80GB": "A100-80GB",
    "NVIDIA H100 80GB HBM3": "H100-80GB",
})


class SmiListingError(ValueError):
    """A listing that cannot be shown as a layout: ``rule`` says why (the UI words it).

    Attributes
    ----------
    rule : str
        ``"empty"`` (no nvidia-smi MIG row), ``"no_mig"`` (nvidia-smi says no MIG-enabled
        device), ``"unknown_board"`` (a board or profile labkit has no table for),
        ``"ambiguous_board"`` (several boards have these profiles: give ``model``),
        ``"model_mismatch"`` (``model`` is not the board the listing names),
        ``"inconsistent"`` (two listings, or a listing and the board's tables, disagree),
        ``"placement"`` (GIs that overlap or sit where the board allows none),
        ``"busy_unknown"`` (``-lgip`` shows GIs in use but nothing says which),
        ``"malformed"`` (a row of an -lgi/-lci table, or one naming a MIG profile, that
        does not have its listing's shape: never dropped), ``"placements_differ"``
        (``-lgipp``'s placements are no board's), ``"no_mig_board"`` (``-L`` names only
        boards without MIG), ``"other_listing"`` (only output labkit does not read:
        ``-lcip``, plain ``nvidia-smi``; ``detail`` names it), ``"too_long"``.
    gpu : int or None
        The GPU index the problem is on.
    line : int or None
        The 1-based line of the text.
    detail : str
        What was read (a profile, a board name, the boards that fit), echoed in the message.
    """

    def __init__(self, rule: str, message: str, *, gpu: int | None = None,
                 line: int | None = None, detail: str = "") -> None:
        super().__init__(message)
        self.rule = rule
        self.gpu = gpu
        self.line = line
        self.detail = detail


@dataclass(frozen=True)
class SmiMigGpu:
    """One GPU of a listing, as the board shows it.

    Attributes
    ----------
    gpu : int
        nvidia-smi's GPU index.
    layout : Layout
        Its GPU instances (placements exact from ``-lgi``, else inferred).
    name : str or None
        The board's name as ``-L`` prints it.
    listings : tuple of str
        The commands whose output named this GPU (``"-L"``, ``"-lgi"``, ``"-lci"``,
        ``"-lgip"``, ``"-lgipp"``).
    placements_inferred : bool
        True when no ``-lgi`` row gave the placements (``-L`` or ``-lci`` alone): they are
        where the driver puts GIs created without a placement.
    instances_listed : bool
        False when the text says which board but not which GIs it has (``-lgipp`` alone;
        ``-lgip`` with every profile free): the layout is then the empty board.
    free : mapping of str to tuple of int
        ``-lgip``'s Free/Total by profile name (empty without ``-lgip``).
    """

    gpu: int
    layout: Layout
    name: str | None = None
    listings: tuple[str, ...] = ()
    placements_inferred: bool = False
    instances_listed: bool = True
    free: Mapping[str, tuple[int, int]] = field(default_factory=dict)


@dataclass
class _Gpu:
    """What the text says about one GPU, before it becomes a layout."""

    name: str | None = None
    name_line: int = 0
    listings: set[str] = field(default_factory=set)
    mig_devices: list[tuple[str, int]] = field(default_factory=list)   # (name, line)
    gis: list[tuple[str, int, int, int, int, int]] = field(default_factory=list)
    cis: list[tuple[int, str, int]] = field(default_factory=list)      # (gi id, name, line)
    lgip: list[tuple[str, int, int, int, int, int]] = field(default_factory=list)
    lgipp: list[tuple[int, tuple[int, ...], int, int]] = field(default_factory=list)


#: A MIG profile name inside a table row (``MIG 1g.10gb``, ``MIG 1c.3g.40gb``): a row that
#: has one is a row of some MIG listing, never decoration.
_ROW_PROFILE = re.compile(r"\bMIG \d+(?:c\.\d+)?g\.")
#: Table titles: which listing the rows below belong to (``-lcip``'s rows are not read).
_TABLES = (("GPU instances:", "-lgi"), ("Compute instances:", "-lci"),
           ("GPU instance profiles:", "-lgip"), ("Compute instance profiles:", "-lcip"))


def _malformed(number: int, line: str, listing: str | None) -> SmiListingError:
    gpu = re.match(r"^\|\s*(\d+)\s", line)
    return SmiListingError(
        "malformed", f"line {number}: a {listing or 'MIG'} row that does not read: "
        f"{line.strip()!r}", gpu=int(gpu[1]) if gpu else None, line=number,
        detail=line.strip()[:120])


# long: one pass over the pasted lines, one branch per nvidia-smi table it may be inside
def _scan(text: str) -> tuple[dict[int, _Gpu], bool, set[str]]:
    """Return what each GPU's rows say, whether "No MIG-enabled devices found" appeared, and
    the listings labkit does not read that the text holds (``-lcip``, plain ``nvidia-smi``).

    A row of an ``-lgi`` or ``-lci`` table (below its ``===`` line), or a row naming a MIG
    profile outside any table labkit skips, that does not have its listing's shape is refused
    (``malformed``), never dropped: dropping it would show its units free.
    """
    gpus: dict[int, _Gpu] = {}
    current: int | None = None  # the -L GPU the MIG device lines belong to
    no_mig = False
    others: set[str] = set()
    table: str | None = None    # the listing whose table the line is in
    rows = False                # below that table's === line
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip().replace("\t", "    ")
        if "No MIG-enabled devices found" in line:
            no_mig = True
        if "NVIDIA-SMI" in line and "Driver Version" in line:
            others.add("nvidia-smi")
        if m := _L_GPU.match(line):
            current = int(m["gpu"])
            g = gpus.setdefault(current, _Gpu())
            g.name, g.name_line = m["name"].strip(), number
            g.listings.add("-L")
            continue
        if (m := _L_MIG.match(raw.rstrip())) and current is not None:
            gpus[current].mig_devices.append((m["profile"], number))
            continue
        if not line.lstrip().startswith(("|", "+")):
            table, rows = None, False
        elif title := next((t for key, t in _TABLES if key in line), None):
            table, rows = title, False
            if title == "-lcip":
                others.add("nvidia-smi mig -lcip")
            continue
        elif line.lstrip().startswith("|="):
            rows = table is not None
            continue
        line = line.strip()
        if not line.startswith(("|", "GPU")):
            current = None if line else current
            continue
        if m := _LGI.match(line):
            g = gpus.setdefault(int(m["gpu"]), _Gpu())
            g.listings.add("-lgi")
            g.gis.append((m["profile"], int(m["pid"]), int(m["gi"]), int(m["start"]),
                          int(m["size"]), number))
        elif m := _LCI.match(line):
            g = gpus.setdefault(int(m["gpu"]), _Gpu())
            g.listings.add("-lci")
            g.cis.append((int(m["gi"]), m["profile"], number))
        elif m := _LGIP.match(line):
            g = gpus.setdefault(int(m["gpu"]), _Gpu())
            g.listings.add("-lgip")
            g.lgip.append((m["profile"], int(m["pid"]), int(m["free"]), int(m["total"]),
                           int(m["sm"]), number))
        elif m := _LGIPP.match(line):
            g = gpus.setdefault(int(m["gpu"]), _Gpu())
            g.listings.add("-lgipp")
            starts = tuple(int(s) for s in m["starts"].replace(" ", "").split(",") if s)
            g.lgipp.append((int(m["pid"]), starts, int(m["size"]), number))
        elif line.startswith("|") and line.strip("| ") and (
                (rows and table in ("-lgi", "-lci"))
                or (table in (None, "-lgi", "-lci", "-lgip") and _ROW_PROFILE.search(line))):
            raise _malformed(number, line, table)
    return gpus, no_mig, others


@dataclass(frozen=True)
class _Board:
    short_name: str
    model: GpuModel


@functools.cache
def _boards() -> tuple[_Board, ...]:
    return tuple(_Board(model.short_name, model) for model in known_models()
                 if model.mig is not None)


def _gi_name(ci_name: str) -> str | None:
    m = _CI_NAME.match(ci_name)
    return m["gi"] if m else None


def _fits(board: _Board, g: _Gpu, *, placements: bool = True) -> tuple[bool, str, int | None]:
    """Whether every row of ``g`` agrees with ``board``'s tables; else what does not (in
    nvidia-smi's own words, no English: the UI echoes it) and on which line.

    ``placements=False`` leaves ``-lgipp``'s placement lists out (the board the rest fits).
    """
    spec = board.model.mig
    assert spec is not None
    for profile, pid, *_rest, line in g.gis:
        prof = spec.by_id(pid)
        if prof is None or prof.name != profile:
            return False, f"{profile} (ID {pid})", line
    for profile, pid, free, total, sm, line in g.lgip:
        prof = spec.by_id(pid)
        if prof is None or prof.name != profile or prof.max_count != total or \
                prof.sm_count != sm:
            return False, f"{profile} (ID {pid}, {free}/{total}, SM {sm})", line
    for pid, starts, size, line in g.lgipp:
        prof = spec.by_id(pid)
        if prof is None or prof.memory_slices != size or (placements and tuple(
                sorted(prof.placements)) != tuple(sorted(starts))):
            return False, f"Profile ID {pid} {{{','.join(map(str, starts))}}}:{size}", line
    for name, line in [*g.mig_devices, *[(n, ln) for _, n, ln in g.cis]]:
        gi = _gi_name(name)
        if gi is None or spec.by_name(gi) is None:
            return False, name, line
    return True, "", None


def _named_board(name: str, boards: tuple[_Board, ...]) -> str | None:
    """Return the short name of the board ``-L`` names ``name``, or None.

    Older drivers (R450..R470) print the names without ``NVIDIA`` (``A100-SXM4-40GB``: NVIDIA
    MIG user guide's -L example; NVIDIA/gpu-operator docs, driver 450): both forms are read.
    """
    for candidate in (name, f"NVIDIA {name}"):
        short = _NAME_ALIASES.get(candidate) or next(
            (b.short_name for b in boards if b.model.name == candidate), None)
        if short is not None:
            return short
    return None


def _placements_text(board: _Board, g: _Gpu) -> str:
    """``-lgipp``'s rows as this board has them (``A30: Profile ID 5 {0,2}:2``)."""
    spec = board.model.mig
    assert spec is not None
    parts = []
    for pid, starts, _size, _line in g.lgipp:
        prof = spec.by_id(pid)
        if prof is not None and tuple(sorted(prof.placements)) != tuple(sorted(starts)):
            parts.append(f"Profile ID {pid} {{{','.join(map(str, sorted(prof.placements)))}}}"
                         f":{prof.memory_slices}")
    return f"{board.short_name}: {', '.join(parts)}"


def _board_for(gpu: int, g: _Gpu, model: GpuModel | None, boards: tuple[_Board, ...]
               ) -> GpuModel:
    """Return the board ``g`` is, from its -L name and its rows (and ``model``)."""
    named: GpuModel | None = None
    if g.name is not None:
        short = _named_board(g.name, boards)
        if short is None:
            raise SmiListingError(
                "unknown_board", f"line {g.name_line}: GPU {gpu} is a {g.name!r}, a board "
                "labkit has no MIG table for", gpu=gpu, line=g.name_line, detail=g.name)
        named = next(b.model for b in boards if b.short_name == short)
    fitting = [b for b in boards if _fits(b, g)[0]]
    if named is not None:
        ok, why, line = _fits(next(b for b in boards if b.model is named), g)
        if not ok:
            raise SmiListingError("inconsistent", f"GPU {gpu}: line {line}: {why} is not on a "
                                  f"{named.short_name} ({g.name})", gpu=gpu, line=line,
                                  detail=f"{why} / {named.short_name}")
        if model is not None and model.short_name != named.short_name:
            raise SmiListingError("model_mismatch", f"GPU {gpu} is a {named.short_name} "
                                  f"({g.name}), not a {model.short_name}", gpu=gpu,
                                  line=g.name_line,
                                  detail=f"{named.short_name} / {model.short_name}")
        return named
    if model is not None:
        if model.short_name not in {b.short_name for b in fitting}:
            _, why, line = _fits(next(b for b in boards if b.short_name == model.short_name), g)
            raise SmiListingError("model_mismatch", f"GPU {gpu}: line {line}: {why} is not on "
                                  f"a {model.short_name}", gpu=gpu, line=line,
                                  detail=f"{why} / {model.short_name}")
        return model
    if not fitting:
        near = [b for b in boards if g.lgipp and _fits(b, g, placements=False)[0]]
        if near:
            _, why, line = _fits(near[0], g)
            raise SmiListingError(
                "placements_differ", f"GPU {gpu}: line {line}: {why} is no board's "
                "placements", gpu=gpu, line=line,
                detail=f"{why} / " + "; ".join(_placements_text(b, g) for b in near))
        listed = sorted({r[0] for r in g.gis} | {r[0] for r in g.lgip}
                        | {f"Profile ID {r[0]}" for r in g.lgipp}
                        | {n for n, _ in g.mig_devices} | {n for _, n, _ in g.cis})
        raise SmiListingError("unknown_board", f"GPU {gpu}: no board labkit knows has these "
                              "profiles", gpu=gpu, detail=", ".join(listed)[:200])
    if len(fitting) > 1:
        names = ", ".join(b.short_name for b in fitting)
        raise SmiListingError("ambiguous_board", f"GPU {gpu}: these profiles are on several "
                              f"boards ({names}); say which (model=...)", gpu=gpu, detail=names)
    return fitting[0].model


def _profiles_from_cis(gpu: int, g: _Gpu) -> dict[int, str]:
    """Return GI ID -> GI profile name, from -lci's CI names (every CI of a GI must agree)."""
    out: dict[int, str] = {}
    for gi_id, name, line in g.cis:
        gi = _gi_name(name) or name
        if out.setdefault(gi_id, gi) != gi:
            raise SmiListingError("inconsistent", f"line {line}: GPU {gpu} GI {gi_id} has CIs "
                                  f"of {out[gi_id]} and {gi}", gpu=gpu, line=line,
                                  detail=f"GI {gi_id}: {out[gi_id]} / {gi}")
    return out


def _profiles_from_devices(g: _Gpu, model: GpuModel) -> list[str]:
    """Return the GI profiles ``-L``'s MIG devices imply (largest first).

    A device named after its GI (``3g.40gb``) is one GI; ``Nc.`` devices of one GI profile
    fill GIs of it, ``g`` compute slices each, so ``ceil(sum N / g)`` GIs hold them.
    """
    spec = model.mig
    assert spec is not None
    whole: list[str] = []
    shared: dict[str, int] = {}
    for name, _line in g.mig_devices:
        m = _CI_NAME.match(name)
        assert m is not None  # _fits checked every name
        if m["c"] is None:
            whole.append(m["gi"])
        else:
            shared[m["gi"]] = shared.get(m["gi"], 0) + int(m["c"])
    for gi, slices in shared.items():
        prof = spec.by_name(gi)
        assert prof is not None
        whole += [gi] * math.ceil(slices / prof.compute_slices)
    return whole


# long: one case per listing kind (-lgi exact, -lci or -L inferred, none), cross-checked
def _layout(gpu: int, g: _Gpu, model: GpuModel) -> tuple[Layout, bool, bool]:
    """Return (layout, placements inferred, instances listed) of one GPU."""
    layout = Layout(model)
    if g.gis:
        seen: dict[int, int] = {}
        for profile, pid, gi_id, start, size, line in g.gis:
            if gi_id in seen:
                raise SmiListingError("inconsistent", f"line {line}: GPU {gpu} lists GPU "
                                      f"instance {gi_id} twice", gpu=gpu, line=line,
                                      detail=f"GI {gi_id}")
            seen[gi_id] = pid
            prof = layout.profile(pid)
            if size != prof.memory_slices:
                raise SmiListingError("inconsistent", f"line {line}: {profile} is "
                                      f"{prof.memory_slices} memory units, the row says {size}",
                                      gpu=gpu, line=line, detail=f"{profile} {start}:{size}")
            try:
                layout.place(pid, start)
            except PlacementError as err:
                raise SmiListingError("placement", f"line {line}: GPU {gpu} {profile} at "
                                      f"{start}:{size}: {err}", gpu=gpu, line=line,
                                      detail=f"{profile} {start}:{size}") from err
        ci_gis = _profiles_from_cis(gpu, g)
        names = {gi_id: layout.profile(pid).name for gi_id, pid in seen.items()}
        for gi_id, gi in ci_gis.items():
            if names.get(gi_id) != gi:
                line = next(ln for i, _, ln in g.cis if i == gi_id)
                raise SmiListingError("inconsistent", f"line {line}: GPU {gpu} has a compute "
                                      f"instance in GI {gi_id} ({gi}), which -lgi lists "
                                      f"{'as ' + names[gi_id] if gi_id in names else 'nowhere'}",
                                      gpu=gpu, line=line, detail=f"GI {gi_id}: {gi}")
        if g.mig_devices:
            implied = _profiles_from_devices(g, model)
            counts = layout.counts()
            for gi in set(implied):
                if implied.count(gi) > counts.get(gi, 0):
                    raise SmiListingError("inconsistent", f"GPU {gpu}: -L shows MIG devices "
                                          f"of {implied.count(gi)} x {gi}, -lgi lists "
                                          f"{counts.get(gi, 0)}", gpu=gpu,
                                          detail=f"{gi}: {implied.count(gi)} / "
                                                 f"{counts.get(gi, 0)}")
        return layout, False, True
    if g.cis:
        profiles = sorted(_profiles_from_cis(gpu, g).values())
    elif g.mig_devices:
        profiles = _profiles_from_devices(g, model)
    else:
        listed = not (g.lgipp or g.lgip) or any(free < total for _, _, free, total, _, _ in g.lgip)
        if listed and g.lgip:
            raise SmiListingError("busy_unknown", f"GPU {gpu}: -lgip shows GPU instances in "
                                  "use, but no -lgi, -lci or -L listing says which", gpu=gpu)
        return layout, False, bool("-L" in g.listings and not g.lgip and not g.lgipp)
    try:
        return Layout.from_profiles(model, profiles), True, True
    except PlacementError as err:
        raise SmiListingError("placement", f"GPU {gpu}: {', '.join(profiles)} do not fit on "
                              f"one {model.short_name}: {err}", gpu=gpu,
                              detail=", ".join(profiles)) from err


def _check_free(gpu: int, g: _Gpu, layout: Layout) -> None:
    """-lgip's Free must be what still fits on the layout -lgi gave (the same GPU, same time)."""
    free = layout.free_capacity()
    for profile, _pid, count, _total, _sm, line in g.lgip:
        want = free[profile][0]
        if count != want:
            raise SmiListingError("inconsistent", f"line {line}: -lgip says {count} more "
                                  f"{profile} fit on GPU {gpu}; on the GIs -lgi lists, {want} do",
                                  gpu=gpu, line=line, detail=f"{profile}: {count} / {want}")


def parse_nvidia_smi_mig(text: str, model: GpuModel | str | None = None
                         ) -> dict[int, SmiMigGpu]:
    """Return every GPU a pasted or saved nvidia-smi MIG listing names, with its layout.

    Parameters
    ----------
    text : str
        Output of ``nvidia-smi -L``, ``nvidia-smi mig -lgi``, ``-lci``, ``-lgip``,
        ``-lgipp`` (any of them, one after another, any driver's table widths).
    model : GpuModel or str, optional
        The board (a ``data/gpus/`` short name), for GPUs the text does not name (``-lgi``
        alone: several boards have the same profile names and IDs). Checked against the board
        the text names (``-L``'s GPU name, ``-lgip``'s SM counts, ``-lgipp``'s placements)
        where it names one.

    Returns
    -------
    dict of int to SmiMigGpu
        By GPU index, sorted. GPUs ``-L`` lists without MIG devices on boards labkit has no MIG
        table for (an L40S, a workstation's GeForce) are left out; a listing of only such GPUs
        is refused (``unknown_board``, or ``no_mig`` for boards known to have no MIG).

    Raises
    ------
    SmiListingError
        See its ``rule``: no MIG rows, an unknown board, an ambiguous one without ``model``,
        ``model`` against the listing, listings that disagree (with each other or the board's
        placement and capacity rules), GIs that cannot be where the text puts them.
    InputError
        ``model`` (rule ``choice``) for a model labkit does not know.

    Used in: notebooks/02_mig.ipynb
    """
    if not isinstance(text, str):
        raise SmiListingError("empty", f"expected text, got {type(text).__name__}")
    if len(text) > MAX_LISTING_CHARS:
        raise SmiListingError("too_long", f"{len(text):,} characters, more than "
                              f"{MAX_LISTING_CHARS:,}", detail=f"{MAX_LISTING_CHARS:,}")
    given = resolve_model(model) if model is not None else None
    gpus, no_mig, others = _scan(text)
    boards = _boards()
    out: dict[int, SmiMigGpu] = {}
    left_out: list[tuple[int, _Gpu]] = []
    for gpu in sorted(gpus):
        g = gpus[gpu]
        if g.listings == {"-L"} and g.name is not None and not g.mig_devices and \
                _named_board(g.name, boards) is None:
            left_out.append((gpu, g))  # -L names a board without MIG devices or a MIG table:
            continue                   # nothing to show (a workstation's other GPU)
        board = _board_for(gpu, g, given, boards)
        layout, inferred, listed = _layout(gpu, g, board)
        if g.lgip and g.gis:
            _check_free(gpu, g, layout)
        free = {p: (f, t) for p, _pid, f, t, _sm, _ln in g.lgip}
        out[gpu] = SmiMigGpu(gpu, layout, g.name, tuple(sorted(g.listings)), inferred, listed,
                             MappingProxyType(free))
    if not out:
        unknown = [(gpu, g) for gpu, g in left_out if not _known_without_mig(str(g.name))]
        if unknown:
            gpu, g = unknown[0]
            raise SmiListingError("unknown_board", f"line {g.name_line}: GPU {gpu} is a "
                                  f"{g.name!r}, a board labkit has no MIG table for", gpu=gpu,
                                  line=g.name_line, detail=str(g.name))
        if no_mig:
            raise SmiListingError("no_mig", "nvidia-smi says: No MIG-enabled devices found")
        if left_out:
            gpu, g = left_out[0]
            raise SmiListingError("no_mig_board", f"line {g.name_line}: GPU {gpu} is a "
                                  f"{g.name!r}, a board without MIG", gpu=gpu,
                                  line=g.name_line, detail=str(g.name))
        if others:
            raise SmiListingError("other_listing", "the text is output of "
                                  f"{', '.join(sorted(others))}, which has no MIG layout",
                                  detail=", ".join(sorted(others)))
        raise SmiListingError("empty", "no nvidia-smi -L, mig -lgi, -lci, -lgip or -lgipp "
                              "row in the text")
    return out


def _known_without_mig(name: str) -> bool:
    return any(m.name in (name, f"NVIDIA {name}") and m.mig is None for m in known_models())


def read_nvidia_smi_mig(text: str, model: GpuModel | str | None = None) -> dict[int, Layout]:
    """Return ``{gpu index: Layout}`` of an nvidia-smi MIG listing (see
    :func:`parse_nvidia_smi_mig`, which also says where placements were inferred).

    Raises
    ------
    SmiListingError, InputError
        As :func:`parse_nvidia_smi_mig`.

    Used in: notebooks/02_mig.ipynb
    """
    return {gpu: found.layout for gpu, found in parse_nvidia_smi_mig(text, model).items()}
