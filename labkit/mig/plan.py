"""A GPU's MIG state as NVML shows it, and the pure plan that turns it into a layout.

Pure: the state types (filled by ``labkit.gpu.mig_live.read_state``) and :func:`plan`, the
validate -> plan half of validate -> plan -> apply (``labkit.gpu.mig_live.apply`` runs it).

Used in: notebooks/02_mig.ipynb
"""

from __future__ import annotations

from dataclasses import dataclass

from labkit.gpumodels import GiProfile, GpuModel
from labkit.mig.layout import Layout, _size_order, default_ci_profile
from labkit.mig.placement import PlacedGi

__all__ = ["ComputeInstanceState", "GpuInstanceState", "MigDeviceState", "MigState", "MigStep",
           "plan"]


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

