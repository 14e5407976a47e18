"""mig-parted configs, written for a layout and read back the way ``nvidia-mig-parted`` reads them.

Pure (parsed mappings in, plain data out; the YAML text itself is parsed in
``labkit.data.mig``). Reading happens in two stages, as in mig-parted:

1. **Parse the whole file** (:func:`parse_mig_parted_spec`): the format of *every* label is
   checked, and nothing about any board. ``version`` must be ``v1``; ``mig-configs`` maps labels
   to non-empty lists of entries; each entry has ``devices`` (``"all"`` or a list of GPU
   indices), ``mig-enabled`` (a bool), optional ``device-filter`` (a PCI device ID string or a
   list of them) and ``mig-devices`` (profile name -> count; required when MIG is enabled, empty
   or absent when it is not); unknown fields are refused; every profile name must have the
   ``[<c>c.]<g>g.<gb>gb[+attr|-attr]`` format; counts are whole numbers >= 0 and not all zero.
2. **Choose a label and check it against a board** (:func:`select_config`,
   :func:`from_mig_parted`, :func:`layout_from_mig_parted`): only the chosen label's entries
   whose ``device-filter`` names the board (or that have none) and whose ``devices`` name the
   GPU are checked: every profile must exist on that board and the counts must fit one GPU.
   Entries for other boards are kept (with their filter and device list) but never checked
   against this one, so NVIDIA's own ``config-default.yaml``, with labels for every board, reads
   on each of them.

References
----------
NVIDIA/mig-parted at commit bd7160f43f16462eeb21e1eda5e67b5b6b03fd7d:

- ``api/spec/v1/spec.go``: ``Spec.UnmarshalJSON`` (missing ``version``, "unknown version",
  "at least one entry in ... is required", "unexpected field") and
  ``MigConfigSpec.UnmarshalJSON`` (required ``devices``/``mig-enabled``; ``devices`` "all" or
  ``[]int``; ``device-filter`` string or ``[]string``; "missing required field 'mig-devices'
  when 'mig-enabled' is true"; "MIG devices included when 'mig-enabled' is false" only when
  ``len(MigDevices) != 0``, so ``mig-devices: {}`` is accepted with MIG off);
- ``api/spec/v1/helpers.go``: ``MatchesDeviceFilter`` (an empty filter matches every device),
  ``MatchesAllDevices``, ``MatchesDevices``;
- ``pkg/types/mig_config.go``: ``MigConfig.AssertValidFormat`` (valid profile format, counts
  >= 0, "all counts for all MigProfiles are 0" for a non-empty all-zero map);
- ``pkg/types/device.go``: ``NewDeviceIDFromString`` (``0x<device><vendor>`` with an optional
  ``:<subsystem>``) and ``DeviceID.Matches``;
- ``cmd/nvidia-mig-parted/assert/assert.go``: ``GetSelectedMigConfig`` (the only label is
  chosen without ``-c``; with several, ``-c`` is required) and
  ``WalkSelectedMigConfigForEachGPU`` (each entry in order, for each GPU that matches its
  filter and devices);
- ``vendor/github.com/NVIDIA/go-nvlib/pkg/nvlib/device/mig_profile.go`` (go-nvlib v0.12.0):
  ``parseMigProfile`` (the profile-name format).

Used in: notebooks/02_mig.ipynb
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from labkit import validate
from labkit.gpumodels import GpuModel
from labkit.mig.layout import Layout, _spec, resolve_model
from labkit.mig.placement import PlacementError
from labkit.validate import InputError

__all__ = [
    "MigConfigSpec",
    "MigPartedEntry",
    "MigPartedSpec",
    "check_profile_format",
    "from_mig_parted",
    "labels_for",
    "layout_from_mig_parted",
    "mig_parted_config",
    "parse_mig_parted_spec",
    "select_config",
    "to_mig_parted",
]

#: The one spec version mig-parted reads (``api/spec/v1/spec.go``: ``Version = "v1"``).
VERSION = "v1"

_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")
_TOP_KEYS = ("version", "mig-configs")
_ENTRY_KEYS = ("device-filter", "devices", "mig-enabled", "mig-devices")
_ATTRIBUTE = re.compile(r"^[A-Za-z][A-Za-z0-9.]*$")


# --- the parsed file -----------------------------------------------------------------------------


@dataclass(frozen=True)
class MigConfigSpec:
    """One entry of a mig-parted label (``MigConfigSpec`` in mig-parted's ``spec.go``).

    Attributes
    ----------
    devices : str or tuple of int
        ``"all"`` or the GPU indices the entry is for (as written: mig-parted keeps duplicates).
    mig_enabled : bool
    mig_devices : tuple of (str, int)
        Profile name -> count, in file order (empty with MIG off, or ``{}``).
    device_filter : tuple of str
        PCI device IDs (``"0x233010DE"``) the entry is limited to; empty: every board.
    """

    devices: str | tuple[int, ...]
    mig_enabled: bool
    mig_devices: tuple[tuple[str, int], ...] = ()
    device_filter: tuple[str, ...] = ()

    def counts(self) -> dict[str, int]:
        """Return profile name -> count (zero counts included, as written)."""
        return dict(self.mig_devices)

    def matches_device_filter(self, pci_device_id: int) -> bool:
        """Return whether the filter names a board with this ``pciDeviceId`` (or is empty).

        A filter with a subsystem part (``0x20B010DE:0x...``) matches only that exact
        subsystem; labkit's GPU models carry no subsystem ID, so such a filter matches none of
        them. A filter that is not a device ID matches nothing (mig-parted ignores the parse
        error and compares a zero ID).
        """
        if not self.device_filter:
            return True
        return any(_device_id(f) == (pci_device_id, None) for f in self.device_filter)

    def matches_devices(self, index: int) -> bool:
        """Return whether the entry is for GPU ``index`` (``devices: all`` or listed)."""
        return self.devices == "all" or index in self.devices


@dataclass(frozen=True)
class MigPartedSpec:
    """A whole mig-parted file, its format checked (:func:`parse_mig_parted_spec`).

    Attributes
    ----------
    version : str
        ``"v1"``.
    mig_configs : mapping of str to tuple of MigConfigSpec
        Label -> its entries, in file order (empty when the file has no ``mig-configs``).
    """

    version: str
    mig_configs: Mapping[str, tuple[MigConfigSpec, ...]]

    @property
    def labels(self) -> tuple[str, ...]:
        """The labels, in file order."""
        return tuple(self.mig_configs)


def _device_id(text: str) -> tuple[int, int | None] | None:
    """Parse ``0x<device><vendor>[:0x<subdevice><subvendor>]`` (``NewDeviceIDFromString``)."""
    parts = text.split(":")
    if len(parts) > 2:
        return None
    values = []
    for part in parts:
        try:
            value = int(part, 0) if part == part.strip() else -1
        except ValueError:
            return None
        if not 0 <= value <= 0xFFFFFFFF:
            return None
        values.append(value)
    return values[0], (values[1] if len(values) == 2 else None)


def _unknown(doc: Mapping[Any, Any], allowed: Sequence[str], where: str) -> None:
    for key in doc:
        if key not in allowed:
            raise InputError(where, "choice", key,
                             f"{where}: unknown field {key!r} (allowed: {', '.join(allowed)})",
                             limit=tuple(allowed))


def check_profile_format(name: Any) -> str | None:
    """Return why ``name`` is not a MIG profile name, or None if it is one.

    go-nvlib's ``parseMigProfile``: ``<g>g.<gb>gb`` or ``<c>c.<g>g.<gb>gb``, then optionally
    ``+`` or ``-`` (not both) and a comma-separated list of unique attributes that start with a
    letter, do not end with a dot and hold only letters, digits and dots (``me``, ``me.all``,
    ``gfx``). Says nothing about whether a board has the profile.
    """
    if not isinstance(name, str) or not name:
        return "a profile name must be non-empty text"
    if "+" in name and "-" in name:
        return f"{name!r} contains both '+' and '-' attributes"
    base, sign, attrs = name.partition("+") if "+" in name else name.partition("-")
    fields = base.split(".", 2)
    suffixes = ("c", "g", "gb") if len(fields) == 3 else ("g", "gb")
    if len(fields) != len(suffixes):
        return f"{name!r}: expected <g>g.<gb>gb or <c>c.<g>g.<gb>gb"
    for text, suffix in zip(fields, suffixes, strict=True):
        number = text.removesuffix(suffix)
        if not text.endswith(suffix) or not re.fullmatch(r"[+-]?\d+", number):
            return f"{name!r}: malformed '%d{suffix}' part {text!r}"
    if sign:
        items = attrs.split(",")
        if len(set(items)) != len(items):
            return f"{name!r}: attributes repeat"
        bad = [a for a in items if not _ATTRIBUTE.match(a) or a.endswith(".")]
        if bad:
            return f"{name!r}: malformed attribute {bad[0]!r}"
    return None


def _mig_devices(value: Any, where: str) -> tuple[tuple[str, int], ...]:
    """Check a ``mig-devices`` mapping's format (``MigConfig.AssertValidFormat``)."""
    if not isinstance(value, Mapping):
        raise InputError(where, "other", value, f"{where} must map profile names to counts")
    out: list[tuple[str, int]] = []
    for name, count in value.items():
        problem = check_profile_format(name)
        if problem is not None:
            raise InputError(where, "other", name, f"{where}: invalid format: {problem}")
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise InputError(f"{where}.{name}", "integer", count,
                             f"{where}.{name}: a count must be a whole number >= 0, got "
                             f"{count!r}", limit=0)
        out.append((name, count))
    if out and not any(count for _, count in out):
        raise InputError(where, "other", dict(out),
                         f"{where}: all counts for all MIG profiles are 0")
    return tuple(out)


def _devices_field(value: Any, where: str) -> str | tuple[int, ...]:
    if value == "all":
        return "all"
    if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool)
                                       for v in value):
        return tuple(value)
    raise InputError(where, "other", value,
                     f"{where} must be 'all' or a list of GPU indices, got {value!r}")


def _filter_field(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,) if value else ()
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise InputError(where, "other", value,
                     f"{where} must be a PCI device ID or a list of them, got {value!r}")


def _entry(entry: Any, where: str) -> MigConfigSpec:
    """Check one entry's format (``MigConfigSpec.UnmarshalJSON``)."""
    if not isinstance(entry, Mapping):
        raise InputError(where, "other", entry, f"{where} must be a mapping")
    _unknown(entry, _ENTRY_KEYS, where)
    for key in ("devices", "mig-enabled"):
        if key not in entry:
            raise InputError(f"{where}.{key}", "other", None,
                             f"{where}: missing required field: {key}")
    devices = _devices_field(entry["devices"], f"{where}.devices")
    enabled = entry["mig-enabled"]
    if not isinstance(enabled, bool):
        raise InputError(f"{where}.mig-enabled", "other", enabled,
                         f"{where}.mig-enabled must be true or false, got {enabled!r}")
    filters = _filter_field(entry.get("device-filter", ""), f"{where}.device-filter")
    raw = entry.get("mig-devices")
    counts = () if raw is None else _mig_devices(raw, f"{where}.mig-devices")
    if enabled and raw is None:
        raise InputError(f"{where}.mig-devices", "other", None,
                         f"{where}: missing required field 'mig-devices' when 'mig-enabled' "
                         "is true")
    if not enabled and counts:
        raise InputError(f"{where}.mig-devices", "other", dict(counts),
                         f"{where}: MIG devices included when 'mig-enabled' is false")
    return MigConfigSpec(devices, enabled, counts, filters)


def parse_mig_parted_spec(doc: Any) -> MigPartedSpec:
    """Check the format of a whole parsed mig-parted file, every label, and return it.

    Parameters
    ----------
    doc : mapping
        The parsed YAML (``labkit.data.mig.parse_mig_parted``), or a :class:`MigPartedSpec`
        (returned as is).

    Returns
    -------
    MigPartedSpec

    Raises
    ------
    InputError
        Naming the field (``version``, ``config``, ``mig-configs``,
        ``mig-configs.<label>[<k>].<field>``): a missing or unknown ``version``, unknown fields,
        empty ``mig-configs`` or labels, a missing ``devices``/``mig-enabled``/``mig-devices``,
        ``mig-devices`` with ``mig-enabled: false``, a malformed profile name, a negative count,
        counts that are all zero. Nothing about any board.

    Used in: notebooks/02_mig.ipynb
    """
    if isinstance(doc, MigPartedSpec):
        return doc
    if doc is None:
        doc = {}
    if not isinstance(doc, Mapping):
        raise InputError("config", "other", type(doc).__name__,
                         "a mig-parted config must be a mapping with version and mig-configs")
    if "version" not in doc and doc:
        raise InputError("version", "other", None, "missing required field: version")
    if doc.get("version") != VERSION:
        raise InputError("version", "choice", doc.get("version"),
                         f"unknown version {doc.get('version')!r}; mig-parted reads v1",
                         limit=(VERSION,))
    _unknown(doc, _TOP_KEYS, "config")
    configs: dict[str, tuple[MigConfigSpec, ...]] = {}
    if "mig-configs" in doc:
        raw = doc["mig-configs"]
        if not isinstance(raw, Mapping) or not raw:
            raise InputError("mig-configs", "other", raw,
                             "at least one entry in 'mig-configs' is required")
        for label, entries in raw.items():
            where = f"mig-configs.{label}"
            if not isinstance(label, str) or not label:
                raise InputError("mig-configs", "other", label, "config names must be text")
            if not isinstance(entries, list) or not entries:
                raise InputError(where, "other", entries,
                                 f"{where}: at least one device entry is required")
            configs[label] = tuple(_entry(e, f"{where}[{k}]") for k, e in enumerate(entries))
    return MigPartedSpec(VERSION, configs)


def select_config(spec: Any, label: str | None = None) -> tuple[str, tuple[MigConfigSpec, ...]]:
    """Return the chosen label and its entries, as ``nvidia-mig-parted -c <label>`` chooses.

    Without ``label`` the file's only label is chosen; a file with several needs one.

    Raises
    ------
    InputError
        As :func:`parse_mig_parted_spec`; ``mig-configs`` (rule ``other``) for a file without
        configs; ``label`` (rule ``choice``, the labels as the limit) for a label that is not
        in the file, or none given when there are several.
    """
    parsed = parse_mig_parted_spec(spec)
    labels = parsed.labels
    if not labels:
        raise InputError("mig-configs", "other", None, "the file has no mig-configs")
    if label is None:
        if len(labels) > 1:
            raise InputError("label", "choice", None,
                             f"{len(labels)} configs in the file: choose one "
                             f"({', '.join(labels[:8])}{', ...' if len(labels) > 8 else ''})",
                             limit=labels)
        label = labels[0]
    if label not in parsed.mig_configs:
        raise InputError("label", "choice", label, f"selected mig-config not present: {label}",
                         limit=labels)
    return label, parsed.mig_configs[label]


# --- a label on a board -------------------------------------------------------------------------


@dataclass(frozen=True)
class MigPartedEntry:
    """One entry of the chosen label that applies to a board, checked against it.

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
    index : int
        The entry's position in the label's list (0-based).
    """

    label: str
    devices: str | tuple[int, ...]
    device_filter: tuple[str, ...]
    mig_enabled: bool
    layout: Layout
    index: int = 0


def _on_board(config: MigConfigSpec, board: GpuModel, where: str) -> Layout:
    """Check an entry's profiles and counts against ``board`` and return the layout."""
    spec = _spec(board)
    names: list[str] = []
    field_name = f"{where}.mig-devices"
    for name, count in config.mig_devices:
        if spec.by_name(name) is None:
            split = re.match(r"^(\d+)c\.(\d+)g\.", name)
            hint = (" (compute-instance splits are not planned here; use the GPU instance "
                    "profile)" if split else "")
            raise InputError(field_name, "choice", name,
                             f"{field_name}: {board.short_name} has no profile {name!r}{hint}",
                             limit=tuple(p.name for p in spec.profiles))
        names += [name] * count
    try:
        return Layout.from_profiles(board, names)
    except PlacementError as err:
        raise InputError(field_name, "other", config.counts(),
                         f"{field_name}: {err}") from err


def from_mig_parted(spec: Any, model: GpuModel | str,
                    label: str | None = None) -> list[MigPartedEntry]:
    """Return the chosen label's entries that apply to ``model``, each checked against it.

    An entry applies when its ``device-filter`` is empty or names the board's PCI device ID.
    Entries for other boards are skipped, never checked against this one.

    Parameters
    ----------
    spec : mapping or MigPartedSpec
        The parsed file; its whole format is checked first.
    model : GpuModel or str
        The board (``"H100-80GB"``).
    label : str, optional
        The config name; needed when the file has several.

    Returns
    -------
    list of MigPartedEntry
        In file order (possibly empty: no entry of the label is for this board).

    Raises
    ------
    InputError
        As :func:`select_config`; for an applying entry: ``mig-configs.<label>[<k>].mig-devices``
        with rule ``choice`` (a profile the board lacks, the board's profiles as the limit) or
        ``other`` (the counts do not fit one GPU).

    Used in: notebooks/02_mig.ipynb
    """
    board = resolve_model(model)
    chosen, configs = select_config(spec, label)
    out = []
    for k, config in enumerate(configs):
        if not config.matches_device_filter(board.pci_device_id):
            continue
        layout = _on_board(config, board, f"mig-configs.{chosen}[{k}]")
        out.append(MigPartedEntry(chosen, config.devices, config.device_filter,
                                  config.mig_enabled, layout, k))
    return out


def layout_from_mig_parted(spec: Any, model: GpuModel | str, label: str | None = None, *,
                           gpu: int = 0) -> Layout:
    """Return the layout the chosen label gives GPU ``gpu`` of a ``model`` node.

    mig-parted applies every matching entry in file order, so the last entry whose filter
    names the board and whose ``devices`` name the GPU decides (MIG off: an empty layout).

    Raises
    ------
    InputError
        As :func:`from_mig_parted`; ``label`` (rule ``other``) when no entry of the label is
        for this board and GPU; ``gpu`` for an index that is not a whole number >= 0.

    Used in: notebooks/02_mig.ipynb
    """
    index = validate.integer("gpu", gpu)
    board = resolve_model(model)
    chosen, configs = select_config(spec, label)
    entries = [e for e in from_mig_parted(spec, board, label)
               if configs[e.index].matches_devices(index)]
    if not entries:
        raise InputError("label", "other", chosen,
                         f"no entry of mig-config {chosen!r} is for GPU {index} of a "
                         f"{board.short_name} (device filters and device lists name others)")
    return entries[-1].layout


def labels_for(spec: Any, model: GpuModel | str) -> tuple[str, ...]:
    """Return the labels that can be applied to ``model``, in file order.

    A label can be applied when at least one entry is for the board and every entry for the
    board names only its profiles and fits one GPU (what ``apply -c <label>`` would accept).

    Used in: notebooks/02_mig.ipynb
    """
    parsed = parse_mig_parted_spec(spec)
    out = []
    for label in parsed.labels:
        try:
            entries = from_mig_parted(parsed, model, label)
        except InputError:
            continue
        if entries:
            out.append(label)
    return tuple(out)


# --- writing a layout as a config -----------------------------------------------------------------


def _device_filter(model: GpuModel) -> str:
    return f"0x{model.pci_device_id:08X}"


def _devices(value: Any, where: str) -> str | list[int]:
    if value == "all":
        return "all"
    if isinstance(value, (list, tuple)) and value and len(value) <= 64:
        out = [validate.integer(where, v) for v in value]
        if len(set(out)) == len(out):
            return out
    raise InputError(where, "other", value,
                     f"{where} must be 'all' or a list of distinct GPU indices, got {value!r}")


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
        ``label`` that is not a plain name; ``devices`` that is not "all" or distinct GPU
        indices (stricter than mig-parted's reader, which keeps duplicates).

    References
    ----------
    .. [1] NVIDIA/mig-parted ``api/spec/v1/spec.go`` (fields) and
       ``deployments/systemd/config-default.yaml`` (examples such as ``all-balanced``).

    Used in: notebooks/02_mig.ipynb
    """
    if not isinstance(label, str) or not _LABEL.match(label):
        raise InputError("label", "other", label,
                         "label must be letters, digits, '.', '_' or '-' (at most 63)")
    return {"version": VERSION, "mig-configs": {label: [{
        "device-filter": [_device_filter(layout.model)],
        "devices": _devices(devices, "devices"),
        "mig-enabled": True,
        "mig-devices": layout.counts(),
    }]}}


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
