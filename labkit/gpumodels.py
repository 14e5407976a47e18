"""GPU models as typed data: the board figures and MIG profile tables the simulator and lessons use.

Pure (no NVML, no I/O): ``labkit.data.gpus`` loads the ``data/gpus/<short_name>`` files into these
dataclasses, ``labkit.mig.placement`` applies the MIG rules to them, and the simulated
libnvidia-ml (``labkit.gpu.sim``) answers NVML calls from them.

Vocabulary follows nvidia-smi and mig-parted: a *GPU instance profile* (``1g.10gb``) has an
``id`` (the number ``nvidia-smi mig -lgip`` prints and the create/placement calls take) and an
``nvml_profile`` (the ``NVML_GPU_INSTANCE_PROFILE_*`` constant passed to
``nvmlDeviceGetGpuInstanceProfileInfo``); the two differ, and ``id`` differs between boards.
A *placement* is a start and a size in memory units (``nvidia-smi mig -lgipp``).

Used in: lessons 01 (observation) and 02 (MIG), through labkit.gpu and labkit.mig
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = [
    "ARCHITECTURES",
    "BoardSpec",
    "GiProfile",
    "GpuModel",
    "MigSpec",
    "mig_memory_gb",
    "profile_name",
]

#: Architectures the simulator knows, with their ``NVML_DEVICE_ARCH_*`` values
#: (nvidia-ml-py 13.615.71).
ARCHITECTURES: Mapping[str, int] = {
    "ampere": 7, "ada": 8, "hopper": 9, "blackwell": 10,
}

_NAME = re.compile(r"^(?P<g>\d+)g\.(?P<gb>\d+)gb(?P<suffix>\+me\.all|\+me|\+gfx|-me)?$")


def mig_memory_gb(memory_mib: int, total_memory_mib: int) -> int:
    """Return the ``<N>gb`` part of a MIG profile name, by NVIDIA's rounding rule.

    The name is not ``floor(MiB / 1024)`` (that gives ``7g.79gb`` for 80896 MiB on an
    A100-80GB): the profile's share of the board is rounded up to eighths and multiplied by the
    board's size in whole GiB, then rounded half away from zero.

    Parameters
    ----------
    memory_mib : int
        The profile's ``memorySizeMB``. [MiB]
    total_memory_mib : int
        The board's total memory as NVML reports it. [MiB]

    Returns
    -------
    int
        The rounded size in the name. [GB]

    Raises
    ------
    ValueError
        If either size is not positive.

    References
    ----------
    .. [1] NVIDIA/go-nvlib ``pkg/nvlib/device/mig_profile.go``, ``getMigMemorySizeGB``:
       ``round(ceil(8 * mem / total) / 8 * ceil(total / 2**30))``.
    """
    if memory_mib <= 0 or total_memory_mib <= 0:
        raise ValueError(f"memory sizes must be positive, got {memory_mib}, {total_memory_mib}")
    eighths = math.ceil(8 * memory_mib / total_memory_mib)
    total_gib = math.ceil(total_memory_mib / 1024)
    return math.floor(eighths / 8 * total_gib + 0.5)  # Go's math.Round: half away from zero


def profile_name(compute_slices: int, memory_mib: int, total_memory_mib: int,
                 suffix: str = "") -> str:
    """Return a GPU-instance profile name such as ``3g.40gb`` or ``1g.10gb+me``.

    Parameters
    ----------
    compute_slices : int
        The ``<N>g`` part. [slices]
    memory_mib, total_memory_mib : int
        See :func:`mig_memory_gb`. [MiB]
    suffix : str, default ""
        ``"+me"``, ``"+me.all"``, ``"+gfx"``, ``"-me"`` or ``""``.

    Used in: lesson 02 (MIG)
    """
    return f"{compute_slices}g.{mig_memory_gb(memory_mib, total_memory_mib)}gb{suffix}"


@dataclass(frozen=True)
class GiProfile:
    """One GPU-instance profile of a board (one row of ``nvidia-smi mig -lgip``).

    Attributes
    ----------
    name : str
        ``"1g.10gb"``, ``"1g.10gb+me"``, ... (no ``MIG`` prefix).
    id : int
        The profile ID nvidia-smi prints and create/placement/capacity calls take.
    nvml_profile : int
        The ``NVML_GPU_INSTANCE_PROFILE_*`` value for ``nvmlDeviceGetGpuInstanceProfileInfo``.
    compute_slices : int
        Compute slices (the ``Ng``). [slices]
    memory_slices : int
        Placement size. [memory units]
    memory_mib : int
        ``memorySizeMB`` (driver-dependent). [MiB]
    max_count : int
        Most instances of this profile at once (lgip "Total").
    placements : tuple of int
        Legal start units (lgipp ``{...}``). [memory units]
    sm_count, copy_engines, decoders, encoders, jpeg, ofa : int
        Resources of one instance (lgip SM, CE, DEC, ENC, JPEG, OFA).
    source : str
        Where the row comes from.
    inferred : tuple of str
        Fields the sources only imply.
    """

    name: str
    id: int
    nvml_profile: int
    compute_slices: int
    memory_slices: int
    memory_mib: int
    max_count: int
    placements: tuple[int, ...]
    sm_count: int
    copy_engines: int
    decoders: int
    encoders: int
    jpeg: int
    ofa: int
    source: str = ""
    inferred: tuple[str, ...] = ()

    @property
    def suffix(self) -> str:
        """Return the suffix: ``"+me"``, ``"+me.all"``, ``"+gfx"``, ``"-me"`` or ``""``."""
        match = _NAME.match(self.name)
        return (match.group("suffix") or "") if match else ""

    @property
    def all_media_engines(self) -> bool:
        """Whether this is an ``ALL_ME`` profile (``+me.all``): it takes every media engine."""
        return self.suffix == "+me.all"

    @property
    def no_media_engines(self) -> bool:
        """Whether this is a ``NO_ME`` profile (``-me``): it has no media engine."""
        return self.suffix == "-me"


@dataclass(frozen=True)
class MigSpec:
    """The MIG geometry of a board: slices, memory units, profiles, the driver's default order.

    Attributes
    ----------
    compute_slices : int
        Compute slices C (7 on A100/H100/H200/B200, 4 on A30 and RTX PRO 6000). [slices]
    memory_units : int
        Memory units U placements are counted in (8, 4 on A30, 12 on RTX PRO 6000). [units]
    profiles : tuple of GiProfile
        In lgip order.
    default_order : mapping of int to tuple of int
        For creation without a placement: placement size -> start units in the order the
        driver tries them (observed on 8-unit boards, inferred elsewhere). [memory units]
    driver_observed : str
        Driver the memory figures were captured on.
    source : str
        Sources of the table.
    """

    compute_slices: int
    memory_units: int
    profiles: tuple[GiProfile, ...]
    default_order: Mapping[int, tuple[int, ...]]
    driver_observed: str = ""
    source: str = ""
    default_order_inferred: bool = True

    def by_id(self, profile_id: int) -> GiProfile | None:
        """Return the profile with this lgip ID, or None."""
        for profile in self.profiles:
            if profile.id == profile_id:
                return profile
        return None

    def by_name(self, name: str) -> GiProfile | None:
        """Return the profile named ``name`` (``"3g.40gb"`` or ``"MIG 3g.40gb"``), or None."""
        name = name.removeprefix("MIG ").strip()
        for profile in self.profiles:
            if profile.name == name:
                return profile
        return None

    def by_nvml_profile(self, value: int) -> GiProfile | None:
        """Return the profile for an ``NVML_GPU_INSTANCE_PROFILE_*`` value, or None."""
        for profile in self.profiles:
            if profile.nvml_profile == value:
                return profile
        return None


@dataclass(frozen=True)
class BoardSpec:
    """Board figures the simulated telemetry is built from (NVML-native units in the names).

    Attributes
    ----------
    tdp_w : float
        Default (and enforced) power limit. [W]
    min_power_limit_w, max_power_limit_w : float
        ``nvmlDeviceGetPowerManagementLimitConstraints``. [W]
    idle_power_w : float
        Board power with no work. [W]
    sm_clock_max_mhz, sm_clock_idle_mhz, mem_clock_max_mhz : int
        Clocks. [MHz]
    ambient_c : float
        Inlet temperature the board cools towards. [degC]
    temp_at_tdp_c : float
        Steady GPU temperature at TDP. [degC]
    thermal_time_constant_s : float
        First-order thermal lag. [s]
    slowdown_temp_c, shutdown_temp_c, max_operating_temp_c : int
        ``nvmlDeviceGetTemperatureThreshold`` values. [degC]
    memory_temp_offset_c : float
        HBM/GDDR temperature above the GPU temperature under load. [degC]
    pcie_gen, pcie_width : int
        Link generation and lanes.
    nvlink_links : int
        NVLink links (0: none).
    power_averaged : bool
        Whether ``nvmlDeviceGetPowerUsage`` is a 1-s average (Ampere+ except GA100) or
        instantaneous (GA100 and older).
    memory_reserved_mib : int
        Memory the driver reserves (``nvmlMemory_v2_t.reserved``). [MiB]
    """

    tdp_w: float
    min_power_limit_w: float
    max_power_limit_w: float
    idle_power_w: float
    sm_clock_max_mhz: int
    sm_clock_idle_mhz: int
    mem_clock_max_mhz: int
    ambient_c: float
    temp_at_tdp_c: float
    thermal_time_constant_s: float
    slowdown_temp_c: int
    shutdown_temp_c: int
    max_operating_temp_c: int
    memory_temp_offset_c: float
    pcie_gen: int
    pcie_width: int
    nvlink_links: int
    power_averaged: bool
    memory_reserved_mib: int


@dataclass(frozen=True)
class GpuModel:
    """A GPU model the lab can have: identity, memory, board figures, features, MIG table.

    Attributes
    ----------
    short_name : str
        The name used in ``LABKIT_GPU=sim:<short_name>`` (``"H100-80GB"``).
    name : str
        ``nvmlDeviceGetName`` (``"NVIDIA H100 80GB HBM3"``).
    architecture : str
        A key of :data:`ARCHITECTURES`.
    compute_capability : tuple of int
        CUDA compute capability (major, minor).
    pci_device_id : int
        ``nvmlPciInfo_t.pciDeviceId`` (device << 16 | 0x10DE).
    memory_total_mib : int
        Total memory as NVML reports it. [MiB]
    sm_count : int
        Streaming multiprocessors. [SMs]
    board : BoardSpec
        Power, clocks, thermal, links.
    ecc : bool
        Whether ECC counters exist (NotSupported otherwise).
    fan : bool
        Whether a fan sensor exists (passively cooled boards: NotSupported).
    gpm : bool
        Whether NVML GPM works (Hopper and newer).
    mig : MigSpec or None
        None for a board without MIG.
    source, as_of : str
        Where the file's figures come from, and when they were checked.
    inferred : tuple of str
        Board and identity fields the sources only imply.
    """

    short_name: str
    name: str
    architecture: str
    compute_capability: tuple[int, int]
    pci_device_id: int
    memory_total_mib: int
    sm_count: int
    board: BoardSpec
    ecc: bool
    fan: bool
    gpm: bool
    mig: MigSpec | None
    source: str
    as_of: str
    inferred: tuple[str, ...] = field(default=())

    @property
    def mig_capable(self) -> bool:
        """Whether the board supports MIG."""
        return self.mig is not None
