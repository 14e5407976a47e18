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
from collections.abc import Mapping
from typing import Any

from labkit.data import DataError, data_dir, get_field, load_yaml
from labkit.gpumodels import ARCHITECTURES, BoardSpec, GiProfile, GpuModel, MigSpec, profile_name

__all__ = ["available_models", "load_gpu_model"]

DIR = "gpus"

_DEVICE_FIELDS: dict[str, type] = {
    "name": str, "architecture": str, "compute_capability": str, "pci_device_id": int,
    "memory_total_mib": int, "sm_count": int, "ecc": bool, "fan": bool, "gpm": bool,
}
_BOARD_FIELDS: dict[str, type] = {
    "tdp_w": float, "min_power_limit_w": float, "max_power_limit_w": float,
    "idle_power_w": float, "sm_clock_max_mhz": int, "sm_clock_idle_mhz": int,
    "mem_clock_max_mhz": int, "ambient_c": float, "temp_at_tdp_c": float,
    "thermal_time_constant_s": float, "slowdown_temp_c": int, "shutdown_temp_c": int,
    "max_operating_temp_c": int, "memory_temp_offset_c": float, "pcie_gen": int,
    "pcie_width": int, "nvlink_links": int, "power_averaged": bool, "memory_reserved_mib": int,
}
_PROFILE_FIELDS: dict[str, type] = {
    "name": str, "id": int, "nvml_profile": int, "compute_slices": int, "memory_slices": int,
    "memory_mib": int, "max_count": int, "sm_count": int, "copy_engines": int, "decoders": int,
    "encoders": int, "jpeg": int, "ofa": int, "source": str,
}


def available_models() -> list[str]:
    """Return the short names of the GPU models in ``data/gpus/`` (``"H100-80GB"``, ...), sorted."""
    return sorted(p.stem for p in (data_dir() / DIR).glob("*.yaml"))


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
    doc = load_yaml(path)
    if doc.get("short_name") != short_name:
        raise DataError(f"{path}: short_name must be {short_name!r}, got {doc.get('short_name')!r}")
    device = get_field(doc, "device", dict, where=path)
    board = get_field(doc, "board", dict, where=path)
    values = {k: get_field(device, k, t, where=f"{path}: device")
              for k, t in _DEVICE_FIELDS.items()}
    board_values = {k: get_field(board, k, t, where=f"{path}: board")
                    for k, t in _BOARD_FIELDS.items()}
    _unknown_keys(device, _DEVICE_FIELDS, f"{path}: device")
    _unknown_keys(board, _BOARD_FIELDS, f"{path}: board")
    inferred = _check_sources(doc, [*_DEVICE_FIELDS, *_BOARD_FIELDS, "mig"], path)
    if values["architecture"] not in ARCHITECTURES:
        raise DataError(f"{path}: device: architecture must be one of {sorted(ARCHITECTURES)}, "
                        f"got {values['architecture']!r}")
    try:
        major, minor = (int(x) for x in values["compute_capability"].split("."))
    except ValueError:
        raise DataError(f"{path}: device: compute_capability must look like '9.0', "
                        f"got {values['compute_capability']!r}") from None
    for key, value in {**values, **board_values}.items():
        if not isinstance(value, (bool, str)) and value < 0:
            raise DataError(f"{path}: {key} must be >= 0, got {value}")
    if not (board_values["min_power_limit_w"] <= board_values["tdp_w"]
            <= board_values["max_power_limit_w"]):
        raise DataError(f"{path}: board: need min_power_limit_w <= tdp_w <= max_power_limit_w")
    if board_values["idle_power_w"] >= board_values["tdp_w"]:
        raise DataError(f"{path}: board: idle_power_w must be below tdp_w")
    mig = _load_mig(doc.get("mig", "missing"), values["memory_total_mib"], path)
    return GpuModel(
        short_name=short_name, name=values["name"], architecture=values["architecture"],
        compute_capability=(major, minor), pci_device_id=values["pci_device_id"],
        memory_total_mib=values["memory_total_mib"], sm_count=values["sm_count"],
        board=BoardSpec(**board_values), ecc=values["ecc"], fan=values["fan"], gpm=values["gpm"],
        mig=mig, source=str(doc["source"]), as_of=str(doc["as_of"]), inferred=tuple(inferred),
    )


def _unknown_keys(section: Mapping[str, Any], fields: Mapping[str, type], where: str) -> None:
    unknown = sorted(set(section) - set(fields))
    if unknown:
        raise DataError(f"{where}: unknown key(s) {unknown}")


def _check_sources(doc: Mapping[str, Any], keys: list[str], path: str) -> list[str]:
    sources = get_field(doc, "sources", dict, where=path)
    inferred = get_field(doc, "inferred", list, where=path)
    for key in [*sources, *inferred]:
        if key not in keys:
            raise DataError(f"{path}: sources/inferred name {key!r}, which is not a figure")
    for key, text in sources.items():
        if not isinstance(text, str) or not text.strip():
            raise DataError(f"{path}: sources: {key!r} needs a source text")
    missing = [k for k in keys if k not in sources and k not in inferred]
    if missing:
        raise DataError(f"{path}: figure(s) {missing} have neither a source nor an inferred mark")
    if inferred and not str(doc.get("inferred_note", "")).strip():
        raise DataError(f"{path}: inferred figures need an 'inferred_note' saying what they are")
    return [str(k) for k in inferred]


def _load_mig(section: Any, total_mib: int, path: str) -> MigSpec | None:
    if section == "missing":
        raise DataError(f"{path}: missing key 'mig' (null for a board without MIG)")
    if section is None:
        return None
    where = f"{path}: mig"
    if not isinstance(section, dict):
        raise DataError(f"{where}: must be a mapping or null")
    slices = get_field(section, "compute_slices", int, where=where)
    units = get_field(section, "memory_units", int, where=where)
    sources = section.get("source")
    if not sources:
        raise DataError(f"{where}: missing 'source'")
    order_doc = get_field(section, "default_placement_order", dict, where=where)
    get_field(section, "default_placement_order_source", str, where=where)
    order: dict[int, tuple[int, ...]] = {}
    for size, starts in order_doc.items():
        if not isinstance(size, int) or not isinstance(starts, list):
            raise DataError(f"{where}: default_placement_order: {size!r} must map an int to a list")
        order[size] = tuple(int(s) for s in starts)
    rows = get_field(section, "profiles", list, where=where)
    profiles = [_load_profile(row, i, slices, units, total_mib, where)
                for i, row in enumerate(rows)]
    for attr in ("id", "nvml_profile", "name"):
        seen = [getattr(p, attr) for p in profiles]
        dupes = sorted({str(v) for v in seen if seen.count(v) > 1})
        if dupes:
            raise DataError(f"{where}: profiles: duplicate {attr} {dupes}")
    return MigSpec(
        compute_slices=slices, memory_units=units, profiles=tuple(profiles),
        default_order=order,
        driver_observed=str(section.get("driver_observed", "")),
        source="; ".join(sources) if isinstance(sources, list) else str(sources),
        default_order_inferred=bool(section.get("default_placement_order_inferred", True)),
    )


def _load_profile(row: Any, index: int, slices: int, units: int, total_mib: int,
                  where: str) -> GiProfile:
    here = f"{where}: profiles[{index}]"
    if not isinstance(row, dict):
        raise DataError(f"{here}: must be a mapping")
    values = {k: get_field(row, k, t, where=here) for k, t in _PROFILE_FIELDS.items()}
    here = f"{where}: profiles[{index}] ({values['name']})"
    placements = get_field(row, "placements", list, where=here)
    inferred = get_field(row, "inferred", list, where=here)
    unknown = sorted(set(row) - set(_PROFILE_FIELDS) - {"placements", "inferred"})
    if unknown:
        raise DataError(f"{here}: unknown key(s) {unknown}")
    profile = GiProfile(**values, placements=tuple(int(p) for p in placements),
                        inferred=tuple(str(x) for x in inferred))
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
