"""Read ``nvidia-smi -q`` (text) and ``nvidia-smi -q -x`` (XML) snapshots.

A snapshot is "what is on this GPU right now": identity per GPU (name, UUID, PCI bus id), MIG
mode and MIG devices (GPU instance and compute instance ids, memory), the active clocks-event
(throttle) reasons, ECC and remapped-row counters, and the processes; plus one row of readings
per GPU in lesson 01's tidy frame (utilization, memory, power, temperatures, clocks).

Both layouts become one tree of ``(key, value, children)`` nodes first (XML: element tags; text:
the labels, lower-cased, spaces as ``_``, nesting from the 4-space indentation), then one table
of paths per layout picks the readings. When the file's own counts disagree (``attached_gpus``
4 but one ``<gpu>``, MIG mode enabled without MIG devices) the snapshot says so in
``warnings``.

XML safety: parsed with the standard library's expat-based :mod:`xml.etree.ElementTree`
(``defusedxml`` is not in the project's lock). nvidia-smi's files carry only a ``<!DOCTYPE ...
SYSTEM "nvsmi_device_vNN.dtd">`` line; expat never fetches external DTDs, and a file that
declares entities (``<!ENTITY``, the "billion laughs" vector) is rejected before parsing.

Sources: the layouts of real captures (tests/fixtures/observe/SOURCES.md): nvidia-smi 535
``-q -x`` (DTD v12) and 590 ``-q`` text.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from labkit.data.observe.common import tidy_log
from labkit.observe.catalog import CATALOG
from labkit.observe.logs import LogError, LogImport
from labkit.observe.readings import Reading, Status
from labkit.observe.signals import CLOCKS_EVENT_REASONS

__all__ = ["GpuSnapshot", "MigDeviceSnapshot", "ProcessSnapshot", "SmiSnapshot",
           "SnapshotWarning", "looks_like_query", "parse_nvidia_smi_query"]


@dataclass(frozen=True)
class Node:
    """One entry of a -q tree: a key, its value (None for a section) and its children."""

    key: str
    value: str | None
    children: tuple[Node, ...] = ()

    def get(self, path: str) -> Node | None:
        """Return the first node at ``path`` (``"a/b"``) below this one, or None."""
        node: Node | None = self
        for part in path.split("/"):
            node = next((c for c in node.children if c.key == part), None) if node else None
        return node

    def text(self, path: str) -> str | None:
        """Return the value at ``path``, or None."""
        node = self.get(path)
        return node.value if node is not None else None

    def all(self, key: str) -> tuple[Node, ...]:
        """Return every direct child named ``key``."""
        return tuple(c for c in self.children if c.key == key)


class SnapshotWarning(str):
    """A warning about a snapshot: the English text, plus a ``code`` and ``params`` for the UI.

    Codes: ``attached_gpus`` (params ``attached``, ``listed``), ``mig_without_devices``
    (``gpu``), ``devices_without_mig`` (``gpu``, ``n``), ``mig_pending`` (``gpu``, ``now``,
    ``pending``).
    """

    code: str
    params: Mapping[str, Any]

    def __new__(cls, text: str, code: str, **params: Any) -> SnapshotWarning:
        obj = super().__new__(cls, text)
        obj.code = code
        obj.params = MappingProxyType(params)
        return obj


@dataclass(frozen=True)
class MigDeviceSnapshot:
    """A MIG device listed in the snapshot (GPU instance + compute instance)."""

    index: int | None
    gi_id: int | None
    ci_id: int | None
    memory_total_mib: float | None
    memory_used_mib: float | None
    sm_count: int | None


@dataclass(frozen=True)
class ProcessSnapshot:
    """A process on the GPU: host PID, type (``C`` compute, ``G`` graphics), name, memory."""

    pid: int | None
    type: str
    name: str
    used_memory_mib: float | None
    gi_id: int | None
    ci_id: int | None


@dataclass(frozen=True)
class GpuSnapshot:
    """One GPU of a snapshot.

    Attributes
    ----------
    index : int
        Position in the file (nvidia-smi lists GPUs in index order).
    name, uuid, pci_bus_id : str
    mig_mode : str
        ``"Enabled"``, ``"Disabled"`` or ``"N/A"`` (current mode; ``mig_mode_pending`` next).
    mig_devices : tuple of MigDeviceSnapshot
    clocks_event_reasons : tuple of str
        Active reasons, NVML names (``"SwPowerCap"``).
    ecc : mapping of str to float or None
        Volatile/aggregate uncorrectable and correctable counts found.
    remapped_rows : mapping of str to float or None
        ``correctable``, ``uncorrectable``, ``pending``, ``failure`` (empty when N/A).
    processes : tuple of ProcessSnapshot
    readings : mapping of str to Reading
        Catalog metric -> reading (as in the tidy frame).
    """

    index: int
    name: str
    uuid: str
    pci_bus_id: str
    mig_mode: str
    mig_mode_pending: str
    mig_devices: tuple[MigDeviceSnapshot, ...]
    clocks_event_reasons: tuple[str, ...]
    ecc: Mapping[str, float | None]
    remapped_rows: Mapping[str, float | None]
    processes: tuple[ProcessSnapshot, ...]
    readings: Mapping[str, Reading] = field(default_factory=dict)


@dataclass(frozen=True)
class SmiSnapshot:
    """A ``nvidia-smi -q`` / ``-q -x`` snapshot (see :func:`parse_nvidia_smi_query`)."""

    gpus: tuple[GpuSnapshot, ...]
    log: LogImport
    warnings: tuple[SnapshotWarning, ...]
    timestamp: datetime | None
    driver_version: str
    cuda_version: str
    attached_gpus: int | None

    @property
    def frame(self) -> pd.DataFrame:
        """The tidy rows (:data:`~labkit.observe.FRAME_COLUMNS`), one time per GPU."""
        return self.log.frame

    @property
    def source(self) -> str:
        """File name."""
        return self.log.source


# -- the two layouts as one tree ------------------------------------------------------------

_ENTITY = re.compile(r"<!ENTITY", re.IGNORECASE)


def _from_xml(text: str, source: str) -> Node:
    if _ENTITY.search(text):
        raise LogError(f"{source}: XML declares entities (<!ENTITY>); nvidia-smi never does, "
                       "refusing to expand them", kind="xml", source=source)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as err:
        line = err.position[0] if err.position else None
        raise LogError(f"{source}, line {line}: not well-formed XML ({err})", kind="xml",
                       source=source, line=line) from None
    if root.tag != "nvidia_smi_log":
        raise LogError(f"{source}: XML root is <{root.tag}>, not <nvidia_smi_log>",
                       kind="layout", source=source)

    def conv(el: ET.Element) -> Node:
        kids = tuple(conv(c) for c in el)
        value = (el.text or "").strip()
        key = el.tag
        if el.tag == "gpu" and "id" in el.attrib:
            kids = (Node("pci_bus_id", el.attrib["id"]), *kids)
        return Node(key, value if not kids else (value or None), kids)

    return conv(root)


def _text_key(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", label.strip().lower()).strip("_")


def _from_text(lines: Sequence[str], source: str) -> Node:
    """Build the tree from -q text: ``Label : value`` lines, nesting by indentation."""
    stack: list[tuple[int, str, str | None, list[Node]]] = [(-1, "nvidia_smi_log", None, [])]

    def close() -> None:
        _, key, value, kids = stack.pop()
        stack[-1][3].append(Node(key, value, tuple(kids)))

    for raw in lines:
        if not raw.strip() or raw.lstrip().startswith("=") or raw.startswith("#"):
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        label, sep, value = raw.strip().partition(" : ") if " : " in raw else (
            raw.strip().rstrip(":").strip(), "", "")
        if not sep and raw.rstrip().endswith(":"):
            value = ""
        while stack[-1][0] >= indent:
            close()
        key = _text_key(label)
        if raw.startswith("GPU ") and indent == 0:  # "GPU 00000000:01:00.0" opens a GPU
            stack.append((indent, "gpu", None, [Node("pci_bus_id", label[4:].strip())]))
        else:
            stack.append((indent, key, value.strip() if sep else None, []))
    while len(stack) > 1:
        close()
    return Node("nvidia_smi_log", None, tuple(stack[0][3]))


# -- values ---------------------------------------------------------------------------------

_NUMBER = re.compile(r"^([-+]?\d+(?:\.\d+)?)\s*([A-Za-z%/]*)$")
_UNIT_FACTOR = {"%": 0.01, "W": 1.0, "MiB": 1.0, "C": 1.0, "MHz": 1.0, "": 1.0, "us": 1.0}
_NOT_SUPPORTED = ("not supported", "[not supported]", "requested functionality has been "
                  "deprecated")


def _reading(raw: str | None, unit: str) -> Reading:
    if raw is None:
        return Reading.missing(Status.NOT_AVAILABLE, "not in file")
    token = raw.strip()
    if token.lower() in _NOT_SUPPORTED:
        return Reading.missing(Status.NOT_SUPPORTED, token)
    if token.lower() in ("n/a", "[n/a]", "", "unknown error", "[unknown error]"):
        return Reading.missing(Status.NOT_AVAILABLE, token or "empty")
    if token.lower() in ("yes", "active", "enabled"):
        return Reading(1.0)
    if token.lower() in ("no", "not active", "disabled"):
        return Reading(0.0)
    match = _NUMBER.match(token)
    if not match or match.group(2) not in _UNIT_FACTOR:
        return Reading.missing(Status.ERROR, f"not a number: {token[:30]}")
    factor = _UNIT_FACTOR[match.group(2)] if unit == "frac" or match.group(2) != "%" else 1.0
    return Reading(float(match.group(1)) * factor)


def _int(raw: str | None) -> int | None:
    try:
        return int(str(raw).strip())
    except ValueError:
        return None


def _num(raw: str | None) -> float | None:
    r = _reading(raw, "")
    return r.value if r.ok else None


#: Metric -> candidate paths in the XML tree and in the text tree (first present wins).
_PATHS: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] = MappingProxyType({
    "gpu_util_frac": (("utilization/gpu_util",), ("utilization/gpu",)),
    "mem_copy_util_frac": (("utilization/memory_util",), ("utilization/memory",)),
    "fb_used_mib": (("fb_memory_usage/used",), ("fb_memory_usage/used",)),
    "fb_total_mib": (("fb_memory_usage/total",), ("fb_memory_usage/total",)),
    "power_usage_w": (("power_readings/power_draw", "gpu_power_readings/power_draw",
                       "gpu_power_readings/average_power_draw"),
                      ("gpu_power_readings/average_power_draw", "gpu_power_readings/power_draw",
                       "power_readings/power_draw")),
    "power_limit_w": (("power_readings/enforced_power_limit",
                       "gpu_power_readings/current_power_limit",
                       "gpu_power_readings/enforced_power_limit"),
                      ("gpu_power_readings/current_power_limit",
                       "power_readings/enforced_power_limit")),
    "gpu_temp_c": (("temperature/gpu_temp",), ("temperature/gpu_current_temp",)),
    "memory_temp_c": (("temperature/memory_temp",), ("temperature/memory_current_temp",)),
    "fan_speed_frac": (("fan_speed",), ("fan_speed",)),
    "sm_clock_mhz": (("clocks/sm_clock",), ("clocks/sm",)),
    "max_sm_clock_mhz": (("max_clocks/sm_clock",), ("max_clocks/sm",)),
    "ecc_dbe_volatile_count": (("ecc_errors/volatile/dram_uncorrectable",
                                "ecc_errors/volatile/double_bit/total"),
                               ("ecc_errors/volatile/dram_uncorrectable",
                                "ecc_errors/volatile/double_bit/total")),
    "remapped_rows_uncorrectable": (("remapped_rows/remapped_row_unc",),
                                    ("remapped_rows/uncorrectable_error",)),
    "remapped_rows_pending": (("remapped_rows/remapped_row_pending",),
                              ("remapped_rows/pending",)),
    "row_remap_failure": (("remapped_rows/remapped_row_failure",),
                          ("remapped_rows/remapping_failure_occurred",)),
})
#: Reason names (XML suffix / text label key) -> NVML name.
_REASONS = {"gpu_idle": "GpuIdle", "idle": "GpuIdle",
            "applications_clocks_setting": "ApplicationsClocksSetting",
            "sw_power_cap": "SwPowerCap", "hw_slowdown": "HwSlowdown",
            "hw_thermal_slowdown": "HwThermalSlowdown",
            "hw_power_brake_slowdown": "HwPowerBrakeSlowdown", "sync_boost": "SyncBoost",
            "sw_thermal_slowdown": "SwThermalSlowdown",
            "display_clocks_setting": "DisplayClockSetting",
            "display_clock_setting": "DisplayClockSetting"}
_BIT_OF = {name: bit for bit, name in CLOCKS_EVENT_REASONS.items()}


def _readings(gpu: Node, xml: bool) -> dict[str, Reading]:
    out: dict[str, Reading] = {}
    for metric, (xml_paths, text_paths) in _PATHS.items():
        paths = xml_paths if xml else text_paths
        raw = next((v for p in paths if (v := gpu.text(p)) is not None), None)
        if raw is None:  # a section printed as one value ("Remapped Rows : N/A")
            raw = next((v for p in paths if (v := gpu.text(p.rsplit("/", 1)[0])) is not None
                        and "/" in p), None)
        out[metric] = _reading(raw, CATALOG[metric].unit)
    return out


def _reasons(gpu: Node) -> tuple[tuple[str, ...], Reading]:
    section = next((gpu.get(k) for k in ("clocks_event_reasons", "clocks_throttle_reasons")
                    if gpu.get(k) is not None), None)
    if section is None or not section.children:
        return (), Reading.missing(Status.NOT_AVAILABLE, "not in file")
    active, mask = [], 0

    def walk(node: Node) -> None:
        nonlocal mask
        for child in node.children:
            name = re.sub(r"^clocks_(event|throttle)_reason_", "", child.key)
            nvml = _REASONS.get(name)
            if nvml and (child.value or "").strip().lower() == "active":
                active.append(nvml)
                mask |= _BIT_OF.get(nvml, 0)
            walk(child)  # text nests HW Thermal / Power Brake under HW Slowdown

    walk(section)
    return tuple(active), Reading(float(mask))


def _mig_devices(gpu: Node, xml: bool) -> tuple[MigDeviceSnapshot, ...]:
    """The MIG devices of a GPU: under ``<mig_devices>`` (XML) or, in text, under a "MIG
    Devices" line or straight under the GPU (both layouts occur); text memory under "Shared FB
    Memory Usage" (newer drivers) or "FB Memory Usage" (older ones, and the XML)."""
    section = gpu.get("mig_devices")
    if xml:
        nodes = section.children if section is not None else gpu.all("mig_device")
    else:
        nodes = (section.all("mig_device") if section is not None else ()) or \
            gpu.all("mig_device")
    out = []
    for d in nodes:
        mem = "fb_memory_usage" if xml or d.get("shared_fb_memory_usage") is None \
            else "shared_fb_memory_usage"
        out.append(MigDeviceSnapshot(
            _int(d.text("index")), _int(d.text("gpu_instance_id")),
            _int(d.text("compute_instance_id")), _num(d.text(f"{mem}/total")),
            _num(d.text(f"{mem}/used")),
            _int(d.text("device_attributes/shared/multiprocessor_count"))))
    return tuple(out)


def _processes(gpu: Node, xml: bool) -> tuple[ProcessSnapshot, ...]:
    section = gpu.get("processes")
    if section is None:
        return ()
    if xml:
        return tuple(ProcessSnapshot(
            _int(p.text("pid")), p.text("type") or "", p.text("process_name") or "",
            _num(p.text("used_memory")), _int(p.text("gpu_instance_id")),
            _int(p.text("compute_instance_id"))) for p in section.all("process_info"))
    out: list[ProcessSnapshot] = []
    gi = ci = None
    for node in section.children:  # text: GI, CI, then "Process ID" with Type/Name/memory
        if node.key == "gpu_instance_id":
            gi = _int(node.value)
        elif node.key == "compute_instance_id":
            ci = _int(node.value)
        elif node.key == "process_id":
            out.append(ProcessSnapshot(_int(node.value), node.text("type") or "",
                                       node.text("name") or "",
                                       _num(node.text("used_gpu_memory")), gi, ci))
    return tuple(out)


def _ecc(gpu: Node) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for scope in ("volatile", "aggregate"):
        node = gpu.get(f"ecc_errors/{scope}")
        for child in node.children if node else ():
            if child.value is not None:
                out[f"{scope}.{child.key}"] = _num(child.value)
            for sub in child.children:
                out[f"{scope}.{child.key}.{sub.key}"] = _num(sub.value)
    return out


def _remapped(gpu: Node) -> dict[str, float | None]:
    node = gpu.get("remapped_rows")
    if node is None or not node.children:
        return {}
    return {c.key: _num(c.value) for c in node.children}


def _gpu(node: Node, index: int, xml: bool) -> GpuSnapshot:
    reasons, mask = _reasons(node)
    readings = _readings(node, xml)
    readings["clocks_event_reasons"] = mask
    mode = "mig_mode/current_mig" if xml else "mig_mode/current"
    pending = "mig_mode/pending_mig" if xml else "mig_mode/pending"
    return GpuSnapshot(
        index=index, name=node.text("product_name") or "",
        uuid=node.text("uuid") or node.text("gpu_uuid") or "",
        pci_bus_id=node.text("pci_bus_id") or "", mig_mode=node.text(mode) or "N/A",
        mig_mode_pending=node.text(pending) or "N/A", mig_devices=_mig_devices(node, xml),
        clocks_event_reasons=reasons, ecc=MappingProxyType(_ecc(node)),
        remapped_rows=MappingProxyType(_remapped(node)), processes=_processes(node, xml),
        readings=MappingProxyType(readings))


def _warnings(root: Node, gpus: Sequence[GpuSnapshot]) -> list[SnapshotWarning]:
    out = []
    attached = _int(root.text("attached_gpus"))
    if attached is not None and attached != len(gpus):
        out.append(SnapshotWarning(
            f"attached_gpus says {attached} but the file lists {len(gpus)} GPU(s) "
            "(nvidia-smi -i, or a cut file)", "attached_gpus", attached=attached,
            listed=len(gpus)))
    for g in gpus:
        if g.mig_mode == "Enabled" and not g.mig_devices:
            out.append(SnapshotWarning(f"GPU {g.index}: MIG mode is Enabled but no MIG devices "
                                       "are listed", "mig_without_devices", gpu=g.index))
        if g.mig_mode == "Disabled" and g.mig_devices:
            out.append(SnapshotWarning(
                f"GPU {g.index}: MIG mode is Disabled but {len(g.mig_devices)} MIG devices are "
                "listed", "devices_without_mig", gpu=g.index, n=len(g.mig_devices)))
        if g.mig_mode != g.mig_mode_pending and "N/A" not in (g.mig_mode, g.mig_mode_pending):
            out.append(SnapshotWarning(
                f"GPU {g.index}: MIG mode {g.mig_mode} now, {g.mig_mode_pending} after a GPU "
                "reset", "mig_pending", gpu=g.index, now=g.mig_mode, pending=g.mig_mode_pending))
    return out


def _frame(gpus: Sequence[GpuSnapshot]) -> pd.DataFrame:
    rows = [(0.0, g.index, m, np.nan if r.value is None else r.value, CATALOG[m].unit,
             str(r.status), r.reason or "") for g in gpus for m, r in g.readings.items()]
    return pd.DataFrame(rows, columns=["timestamp_s", "gpu", "metric", "value", "unit",
                                       "status", "reason"])


def _timestamp(raw: str | None) -> datetime | None:
    if not raw:
        return None
    try:
        return datetime.strptime(raw.strip(), "%a %b %d %H:%M:%S %Y")
    except ValueError:
        return None


def looks_like_query(text: str) -> str | None:
    """Return ``"xml"``, ``"text"`` or None: is this an ``nvidia-smi -q`` snapshot?"""
    head = text.lstrip()[:2000]
    if head.startswith("<?xml") or "<nvidia_smi_log" in head:
        return "xml"
    if "NVSMI LOG" in head or re.search(r"^Attached GPUs\s+:", head, re.MULTILINE):
        return "text"
    return None


def parse_nvidia_smi_query(text: str, *, source: str = "<text>") -> SmiSnapshot:
    """Read the text of an ``nvidia-smi -q`` or ``nvidia-smi -q -x`` snapshot.

    Parameters
    ----------
    text : str
        The file's content (the layout is detected).
    source : str
        File name for messages.

    Returns
    -------
    SmiSnapshot
        ``.gpus`` (identity, MIG mode and devices, reasons, ECC, remapped rows, processes),
        ``.frame`` (one row per catalog reading per GPU at ``timestamp_s == 0``), ``.log``
        (the same as a :class:`~labkit.observe.LogImport`, format ``nvidia-smi-q`` or
        ``nvidia-smi-q-xml``) and ``.warnings`` (the file's own counts disagreeing).

    Raises
    ------
    LogError
        (a ``ValueError``) naming the file (and line): not a -q snapshot, XML that is not
        well-formed or declares entities, no GPU in the file.

    Used in: notebooks/01_observe.ipynb
    """
    kind = looks_like_query(text)
    if kind is None:
        raise LogError(f"{source}, line 1: not an nvidia-smi -q snapshot (no 'NVSMI LOG' "
                       "header, no <nvidia_smi_log>)", kind="layout", source=source, line=1)
    xml = kind == "xml"
    root = _from_xml(text, source) if xml else _from_text(text.splitlines(), source)
    gpus = tuple(_gpu(node, k, xml) for k, node in enumerate(root.all("gpu")))
    if not gpus:
        raise LogError(f"{source}: the snapshot lists no GPU", kind="layout", source=source)
    warnings = _warnings(root, gpus)
    stamp = _timestamp(root.text("timestamp"))
    devices: dict[int, dict[str, Any]] = {
        g.index: {"name": g.name, "uuid": g.uuid, "pci.bus_id": g.pci_bus_id,
                  "mig_mode": g.mig_mode} for g in gpus}
    log = tidy_log(_frame(gpus), source=source, fmt="nvidia-smi-q-xml" if xml else
                   "nvidia-smi-q", data_lines=len(gpus), unparsed=[], start=stamp,
                   devices=devices, ignored=(), meta={})
    return SmiSnapshot(gpus, log, tuple(warnings), stamp, root.text("driver_version") or "",
                       root.text("cuda_version") or "", _int(root.text("attached_gpus")))
