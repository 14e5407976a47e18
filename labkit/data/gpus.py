"""Loader for the GPU models (``data/gpus/<short_name>.yaml``) into :mod:`labkit.gpumodels`.

One file per model. Each file has ``short_name``, ``source``, ``as_of``, a ``device`` and a
``board`` section of figures, ``sources`` (one per figure, or an ``inferred`` entry with
``inferred_note`` for figures no source states), and ``mig`` (null for a board without MIG)
with the profile table in lgip order, one row per profile with its own ``source`` and
``inferred`` list.

Checks: every figure has a source or is marked inferred; profile names follow NVIDIA's naming
rule (``7g.80gb``, not ``7g.79gb``); IDs and NVML constants are unique; placements are inside
the board and as long as the profile; caps are consistent (``+me`` at most 1). Every problem
raises :class:`labkit.data.DataError` naming the file and the key.

Used in: lessons 01 (observation) and 02 (MIG), through labkit.gpu
"""

from __future__ import annotations

import functools
from typing import Annotated, Self

from pydantic import ConfigDict, Field, model_validator

from labkit.data import DataError, data_dir, load_document
from labkit.data.schema import (
    Document,
    NonNegative,
    NonNegativeInt,
    PositiveInt,
    Schema,
    Text,
    one_of,
)
from labkit.gpumodels import ARCHITECTURES, BoardSpec, GiProfile, GpuModel, MigSpec, profile_name

__all__ = ["SIM_BEHAVIOUR_KEYS", "GpuModelFile", "available_models", "load_gpu_model",
           "load_sim_behaviour", "mig_models"]

DIR = "gpus"


class DeviceSection(Schema):
    """``device``: the identity NVML reports (nvmlDeviceGetName, ...GetCudaComputeCapability)."""

    name: Text
    architecture: Annotated[str, one_of(sorted(ARCHITECTURES))]
    compute_capability: Annotated[str, Field(pattern=r"^\d+\.\d+$")]
    pci_device_id: NonNegativeInt
    memory_total_mib: NonNegativeInt
    sm_count: NonNegativeInt
    ecc: bool
    fan: bool
    gpm: bool


class BoardSection(Schema):
    """``board``: power [W], clocks [MHz], thermals [degC, s], PCIe/NVLink (the simulator's)."""

    tdp_w: NonNegative
    min_power_limit_w: NonNegative
    max_power_limit_w: NonNegative
    idle_power_w: NonNegative
    sm_clock_max_mhz: NonNegativeInt
    sm_clock_idle_mhz: NonNegativeInt
    mem_clock_max_mhz: NonNegativeInt
    ambient_c: NonNegative
    temp_at_tdp_c: NonNegative
    thermal_time_constant_s: NonNegative
    slowdown_temp_c: NonNegativeInt
    shutdown_temp_c: NonNegativeInt
    max_operating_temp_c: NonNegativeInt
    memory_temp_offset_c: NonNegative
    pcie_gen: NonNegativeInt
    pcie_width: NonNegativeInt
    nvlink_links: NonNegativeInt
    power_averaged: bool
    memory_reserved_mib: NonNegativeInt

    @model_validator(mode="after")
    def _power_limits(self) -> Self:
        if not self.min_power_limit_w <= self.tdp_w <= self.max_power_limit_w:
            raise ValueError("board: need min_power_limit_w <= tdp_w <= max_power_limit_w")
        if self.idle_power_w >= self.tdp_w:
            raise ValueError("board: idle_power_w must be below tdp_w")
        return self


class ProfileEntry(Schema):
    """One of ``mig.profiles``: a GPU instance profile as ``nvidia-smi mig -lgip`` lists it."""

    name: Text
    id: NonNegativeInt
    nvml_profile: NonNegativeInt
    compute_slices: PositiveInt
    memory_slices: PositiveInt
    memory_mib: NonNegativeInt
    max_count: NonNegativeInt
    sm_count: NonNegativeInt
    copy_engines: NonNegativeInt
    decoders: NonNegativeInt
    encoders: NonNegativeInt
    jpeg: NonNegativeInt
    ofa: NonNegativeInt
    source: Text
    placements: list[int]
    inferred: list[str]


class MigSection(Schema):
    """``mig``: the MIG table (``nvidia-smi mig -lgip`` / ``-lgipp``) in lgip order."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False, frozen=True)

    compute_slices: PositiveInt
    memory_units: PositiveInt
    source: Text | list[Text]
    default_placement_order: dict[int, list[int]]
    default_placement_order_source: Text
    default_placement_order_inferred: bool = True
    driver_observed: str = ""
    profiles: list[ProfileEntry]


class GpuModelFile(Document):
    """``data/gpus/<short_name>.yaml``: one GPU model.

    ``device``, ``board`` and each MIG profile accept only their documented keys (add a new
    figure as an optional field here first); other top-level keys are ignored.
    """

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False, frozen=True)

    short_name: Text
    device: DeviceSection
    board: BoardSection
    sources: dict[str, Text]
    inferred: list[str]
    inferred_note: str = ""
    mig: MigSection | None


_DEVICE_FIELDS = tuple(DeviceSection.model_fields)
_BOARD_FIELDS = tuple(BoardSection.model_fields)


def available_models() -> list[str]:
    """Return the short names of the GPU models in ``data/gpus/`` (``"H100-80GB"``, ...), sorted."""
    return sorted(p.stem for p in (data_dir() / DIR).glob("*.yaml"))


def mig_models() -> tuple[str, ...]:
    """Return the short names of the MIG-capable GPU models in ``data/gpus/``, sorted."""
    return tuple(m for m in available_models() if load_gpu_model(m).mig is not None)


@functools.cache
def load_gpu_model(short_name: str) -> GpuModel:
    """Load and validate one GPU model.

    Parameters
    ----------
    short_name : str
        The file stem in ``data/gpus/`` and the name in ``LABKIT_GPU=sim:<short_name>``.

    Returns
    -------
    GpuModel
        Identity, board figures, features and the MIG table (None without MIG).

    Raises
    ------
    labkit.data.DataError
        If the model is unknown, or the file breaks a rule (the message names file and key).
    """
    known = available_models()
    if short_name not in known:
        raise DataError(f"{DIR}/: no GPU model {short_name!r}; known: {', '.join(known)}")
    path = f"{DIR}/{short_name}.yaml"
    doc = load_document(path, GpuModelFile)
    if doc.short_name != short_name:
        raise DataError(f"{path}: short_name must be {short_name!r}, got {doc.short_name!r}")
    device = doc.device
    inferred = _check_sources(doc, [*_DEVICE_FIELDS, *_BOARD_FIELDS, "mig"], path)
    major, minor = (int(x) for x in device.compute_capability.split("."))
    mig = _load_mig(doc.mig, device.memory_total_mib, path)
    return GpuModel(
        short_name=short_name, name=device.name, architecture=device.architecture,
        compute_capability=(major, minor), pci_device_id=device.pci_device_id,
        memory_total_mib=device.memory_total_mib, sm_count=device.sm_count,
        board=BoardSpec(**doc.board.model_dump()), ecc=device.ecc, fan=device.fan,
        gpm=device.gpm, mig=mig, source=doc.source, as_of=doc.as_of, inferred=tuple(inferred),
    )


def _check_sources(doc: GpuModelFile, keys: list[str], path: str) -> list[str]:
    for key in [*doc.sources, *doc.inferred]:
        if key not in keys:
            raise DataError(f"{path}: sources/inferred name {key!r}, which is not a figure")
    missing = [k for k in keys if k not in doc.sources and k not in doc.inferred]
    if missing:
        raise DataError(f"{path}: figure(s) {missing} have neither a source nor an inferred mark")
    if doc.inferred and not doc.inferred_note.strip():
        raise DataError(f"{path}: inferred figures need an 'inferred_note' saying what they are")
    return [str(k) for k in doc.inferred]


def _load_mig(section: MigSection | None, total_mib: int, path: str) -> MigSpec | None:
    if section is None:
        return None
    where = f"{path}: mig"
    profiles = [_load_profile(row, i, section.compute_slices, section.memory_units, total_mib,
                              where) for i, row in enumerate(section.profiles)]
    for attr in ("id", "nvml_profile", "name"):
        seen = [getattr(p, attr) for p in profiles]
        dupes = sorted({str(v) for v in seen if seen.count(v) > 1})
        if dupes:
            raise DataError(f"{where}: profiles: duplicate {attr} {dupes}")
    sources = section.source
    return MigSpec(
        compute_slices=section.compute_slices, memory_units=section.memory_units,
        profiles=tuple(profiles),
        default_order={k: tuple(v) for k, v in section.default_placement_order.items()},
        driver_observed=section.driver_observed,
        source="; ".join(sources) if isinstance(sources, list) else sources,
        default_order_inferred=section.default_placement_order_inferred,
    )


def _load_profile(row: ProfileEntry, index: int, slices: int, units: int, total_mib: int,
                  where: str) -> GiProfile:
    here = f"{where}: profiles[{index}] ({row.name})"
    values = row.model_dump(exclude={"placements", "inferred"})
    profile = GiProfile(**values, placements=tuple(row.placements),
                        inferred=tuple(row.inferred))
    expected = profile_name(profile.compute_slices, profile.memory_mib, total_mib, profile.suffix)
    if profile.name != expected:
        raise DataError(f"{here}: name must be {expected!r} by NVIDIA's naming rule "
                        f"(go-nvlib getMigMemorySizeGB), got {profile.name!r}")
    if not 1 <= profile.compute_slices <= slices:
        raise DataError(f"{here}: compute_slices must be 1..{slices}")
    for start in profile.placements:
        if start < 0 or start + profile.memory_slices > units:
            raise DataError(f"{here}: placement {start}:{profile.memory_slices} is outside "
                            f"{units} memory units")
    if not profile.placements or not 1 <= profile.max_count <= len(profile.placements):
        raise DataError(f"{here}: max_count must be 1..{len(profile.placements)} (its placements)")
    if profile.suffix in ("+me", "+me.all") and profile.max_count != 1:
        raise DataError(f"{here}: {profile.suffix} profiles are capped at 1 (media engines)")
    return profile


class SimBehaviourSection(Schema):
    """A model file's optional ``sim_behaviour``: driver behaviour the simulator reproduces.

    Every rule the section sets needs a source text in ``sources`` (rules the simulator applies
    to every model, such as ``gi_create_in_use``, may have a source without a value).
    """

    rev2_ci_profile: PositiveInt | None = None
    sources: dict[str, Text] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _sourced(self) -> Self:
        for key in SIM_BEHAVIOUR_KEYS:
            if getattr(self, key) is not None and key not in self.sources:
                raise ValueError(f"{key!r} needs a source in sim_behaviour.sources")
        return self


class _SimBehaviourFile(Document):
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False, frozen=True)

    sim_behaviour: SimBehaviourSection | None = None


#: Keys of a model file's optional ``sim_behaviour`` section (besides ``sources``) and their type.
SIM_BEHAVIOUR_KEYS: dict[str, type] = {"rev2_ci_profile": int}


@functools.cache
def load_sim_behaviour(short_name: str) -> dict[str, object]:
    """Load a model's ``sim_behaviour``: driver behaviour the simulator reproduces, with sources.

    Returns
    -------
    dict
        ``sources`` (rule -> source text) and the keys of :data:`SIM_BEHAVIOUR_KEYS` that the
        file sets (``rev2_ci_profile``: the ``NVML_COMPUTE_INSTANCE_PROFILE_*`` a 1-slice
        REV2 GI offers). Empty ``sources`` for a file without the section.

    Raises
    ------
    labkit.data.DataError
        For an unknown model or key, a wrong type, or a rule without a source.
    """
    load_gpu_model(short_name)  # validates the name and the rest of the file
    section = load_document(f"{DIR}/{short_name}.yaml", _SimBehaviourFile).sim_behaviour
    if section is None:
        return {"sources": {}}
    out: dict[str, object] = {"sources": dict(section.sources)}
    out |= {key: getattr(section, key) for key in SIM_BEHAVIOUR_KEYS
            if getattr(section, key) is not None}
    return out
