"""MIG planning for lesson 02: layouts, presets, exports, and the pure plan for a live GPU.

A package along the seams of the old ``labkit/mig.py``; this module re-exports its public
names (the live NVML half moved to :mod:`labkit.gpu.mig_live`):

- :mod:`labkit.mig.placement` -- the driver's placement rules, once (the simulator uses them);
- :mod:`labkit.mig.layout` -- :class:`Layout`, :class:`PlacementCheck`, :class:`Fragmentation`;
- :mod:`labkit.mig.planning` -- :func:`presets`, :func:`pack_profiles`, :func:`valid_layouts`,
  :func:`maximal_layouts`, :func:`count_layouts`;
- :mod:`labkit.mig.nvidia_smi` -- ``nvidia-smi mig -cgi`` commands out and back in;
- :mod:`labkit.mig.smi_listing` -- a server's layout read from ``nvidia-smi -L``/``mig -lgi``/
  ``-lci``/``-lgip``/``-lgipp`` output (:func:`read_nvidia_smi_mig`);
- :mod:`labkit.mig.mig_parted` -- mig-parted configs, read the way mig-parted reads them;
- :mod:`labkit.mig.plan` -- the MIG state types and :func:`plan` (validate -> plan; the apply
  step is :func:`labkit.gpu.mig_live.apply`).

Pure: nothing here touches NVML, the environment, threads or clocks. The Korean wording of a
:class:`PlacementCheck` is the UI's (``labkit.ui.mig_explain``).

Used in: notebooks/02_mig.ipynb
"""

from __future__ import annotations

from labkit.mig.layout import (
    Fragmentation,
    Layout,
    PlacementCheck,
    default_ci_profile,
    resolve_model,
)
from labkit.mig.mig_parted import (
    MigConfigSpec,
    MigPartedEntry,
    MigPartedSpec,
    from_mig_parted,
    labels_for,
    layout_from_mig_parted,
    mig_parted_config,
    parse_mig_parted_spec,
    select_config,
    to_mig_parted,
)
from labkit.mig.nvidia_smi import CommandPlacementError, from_nvidia_smi, to_nvidia_smi
from labkit.mig.placement import PlacedGi, PlacementError
from labkit.mig.plan import (
    ComputeInstanceState,
    GpuInstanceState,
    MigDeviceState,
    MigState,
    MigStep,
    plan,
)
from labkit.mig.planning import (
    count_layouts,
    maximal_layouts,
    pack_profiles,
    presets,
    valid_layouts,
)
from labkit.mig.smi_listing import (
    SmiListingError,
    SmiMigGpu,
    parse_nvidia_smi_mig,
    read_nvidia_smi_mig,
)

__all__ = [
    "CommandPlacementError",
    "ComputeInstanceState",
    "Fragmentation",
    "GpuInstanceState",
    "Layout",
    "MigConfigSpec",
    "MigDeviceState",
    "MigPartedEntry",
    "MigPartedSpec",
    "MigState",
    "MigStep",
    "PlacedGi",
    "PlacementCheck",
    "PlacementError",
    "SmiListingError",
    "SmiMigGpu",
    "count_layouts",
    "default_ci_profile",
    "from_mig_parted",
    "from_nvidia_smi",
    "labels_for",
    "layout_from_mig_parted",
    "maximal_layouts",
    "mig_parted_config",
    "pack_profiles",
    "parse_mig_parted_spec",
    "parse_nvidia_smi_mig",
    "plan",
    "presets",
    "read_nvidia_smi_mig",
    "resolve_model",
    "select_config",
    "to_mig_parted",
    "to_nvidia_smi",
    "valid_layouts",
]
