"""Cluster state: per-GPU occupancy (whole, shared, MIG) and FGD node fragmentation.

Pure. MIG instances are placed by the board's placement rules (``labkit.mig.placement``, the
same rules the simulated driver applies).

Used in: notebooks/08_orchestration.ipynb
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from labkit.gpumodels import GiProfile, MigSpec
from labkit.mig.placement import PlacedGi, PlacementError, check_gi
from labkit.scheduling.jobs import EPS

# A holding: (global GPU index, share of that GPU, MIG memory-unit mask or 0, MIG compute slices,
# MIG profile or None).
Holding = tuple[int, float, int, int, GiProfile | None]
WHOLE, FRAC, MIG = 0, 1, 2
EMPTY, SHARED, MIGMODE = 0, 1, 2


@dataclass(frozen=True)
class Demand:
    kind: int
    count: int  # whole GPUs, or MIG instances; 1 for a share
    share: float  # per unit: 1.0 whole; s for a share; c/C for a MIG instance
    profile: GiProfile | None
    key: tuple[Any, ...]

    @property
    def total(self) -> float:
        return self.count * self.share


class ClusterState:
    """Per-GPU occupancy of the cluster (lists indexed by global GPU index)."""

    __slots__ = ("cmp", "gis", "gpn", "mem", "mode", "n", "node_empty", "node_used", "occ",
                 "slices", "spec", "used")

    def __init__(self, nodes: int, gpn: int, spec: MigSpec | None) -> None:
        self.n, self.gpn, self.spec = nodes, gpn, spec
        self.slices = spec.compute_slices if spec is not None else 7
        total = nodes * gpn
        self.gis: list[list[PlacedGi]] = [[] for _ in range(total)]
        self.used = [0.0] * total
        self.mode = [EMPTY] * total
        self.mem = [0] * total
        self.cmp = [0] * total
        self.occ = [0] * total
        self.node_empty = [gpn] * nodes
        self.node_used = [0.0] * nodes

    def copy(self) -> ClusterState:
        other = ClusterState.__new__(ClusterState)
        other.n, other.gpn, other.slices, other.spec = self.n, self.gpn, self.slices, self.spec
        other.gis = [gis[:] for gis in self.gis]
        other.used, other.mode = self.used[:], self.mode[:]
        other.mem, other.cmp, other.occ = self.mem[:], self.cmp[:], self.occ[:]
        other.node_empty, other.node_used = self.node_empty[:], self.node_used[:]
        return other

    def apply(self, holdings: Iterable[Holding]) -> None:
        for g, share, mask, c, profile in holdings:
            n = g // self.gpn
            if profile is not None:
                self.gis[g].append(PlacedGi(profile, (mask & -mask).bit_length() - 1))
            if self.occ[g] == 0:
                self.node_empty[n] -= 1
                self.mode[g] = MIGMODE if mask else SHARED
            self.occ[g] += 1
            self.used[g] += share
            self.node_used[n] += share
            self.mem[g] |= mask
            self.cmp[g] += c

    def release(self, holdings: Iterable[Holding]) -> None:
        for g, share, mask, c, profile in holdings:
            n = g // self.gpn
            if profile is not None:
                start = (mask & -mask).bit_length() - 1
                self.gis[g] = [gi for gi in self.gis[g] if gi.start != start]
            self.occ[g] -= 1
            self.mem[g] &= ~mask
            self.cmp[g] -= c
            if self.occ[g] == 0:
                self.used[g] = 0.0
                self.mode[g] = EMPTY
                self.node_empty[n] += 1
            else:
                self.used[g] -= share
            self.node_used[n] -= share
            if self.node_empty[n] == self.gpn:
                self.node_used[n] = 0.0

    def free(self, g: int) -> float:
        return max(0.0, 1.0 - self.used[g])

    # -- per-GPU feasibility --------------------------------------------------------------------
    def mig_starts(self, g: int, profile: GiProfile, every: bool = False) -> list[int]:
        """Legal free placement starts of ``profile`` on GPU ``g`` (labkit.mig.placement rules).

        With ``every`` False, only the start the driver would pick (its default order); else
        every start where a GPU instance could be created now.
        """
        if self.mode[g] == SHARED or self.cmp[g] + profile.compute_slices > self.slices:
            return []
        assert self.spec is not None
        try:
            if not every:
                return [check_gi(self.spec, self.gis[g], profile.id).start]
        except PlacementError:
            return []
        out = []
        for start in profile.placements:
            try:
                out.append(check_gi(self.spec, self.gis[g], profile.id, start).start)
            except PlacementError:
                continue
        return out

    def can_host_unit(self, g: int, d: Demand) -> bool:
        if d.kind == WHOLE:
            return self.mode[g] == EMPTY
        if d.kind == FRAC:
            return self.mode[g] != MIGMODE and self.used[g] + d.share <= 1.0 + EPS
        assert d.profile is not None
        return bool(self.mig_starts(g, d.profile))


def node_fragmentation(state: ClusterState, node: int,
                       targets: Sequence[tuple[Demand, float]]) -> float:
    """Return the FGD expected fragmentation F_n(M) of one node. [GPU]

    For each task class m of the target workload M (popularity p_m): if m cannot run on the node
    at all, all of the node's unallocated GPU capacity counts as fragmented; otherwise only the
    free capacity of GPUs that cannot host m does (for a whole-GPU class, GPUs partly used; for
    a shared class, GPUs with less free share than d_m; for a MIG class, GPUs without a legal
    free placement). F_n(M) = sum_m p_m F_n(m).

    References
    ----------
    .. [1] Weng, Yang et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with
       Fragmentation Gradient Descent", USENIX ATC'23; simulator ``pkg/utils/frag.go``
       (hkust-adsl/kubernetes-scheduler-simulator).

    Used in: notebooks/08_orchestration.ipynb
    """
    gpn = state.gpn
    gpus = range(node * gpn, node * gpn + gpn)
    frees = [state.free(g) for g in gpus]
    total_free = sum(frees)
    if total_free <= EPS:
        return 0.0
    frag = 0.0
    for d, p in targets:
        if d.kind == WHOLE:
            if state.node_empty[node] < d.count:
                f = total_free
            else:
                f = sum(fr for g, fr in zip(gpus, frees, strict=True) if state.mode[g] != EMPTY)
        else:
            f = sum(fr for g, fr in zip(gpus, frees, strict=True)
                    if not state.can_host_unit(g, d))
        frag += p * f
    return frag
