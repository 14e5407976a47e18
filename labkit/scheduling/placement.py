"""Placement: where a job's GPUs go among the nodes that can take it (pack, spread, FGD).

Pure. ``"pack"`` is best fit, ``"spread"`` worst fit, ``"fgd"`` fragmentation gradient descent
(Weng, Yang et al., USENIX ATC'23): the placement that increases the node's expected
fragmentation F_n(M) least (:func:`labkit.scheduling.node_fragmentation`).

Used in: notebooks/08_orchestration.ipynb
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from labkit.scheduling.jobs import EPS
from labkit.scheduling.state import (
    EMPTY,
    FRAC,
    MIGMODE,
    WHOLE,
    ClusterState,
    Demand,
    Holding,
    node_fragmentation,
)

Score = tuple[Any, ...]


class Placer:
    """Choose holdings for a demand on a cluster state (never applies them for good).

    Parameters
    ----------
    nodes, gpus_per_node : int
        The cluster's shape.
    placement : {"pack", "spread", "fgd"}
        The rule that ranks the candidate places.
    targets : sequence of (Demand, float)
        FGD's target workload: job classes and their popularity (sums to 1).
    """

    def __init__(self, nodes: int, gpus_per_node: int, placement: str,
                 targets: Sequence[tuple[Demand, float]]) -> None:
        self.N, self.G = nodes, gpus_per_node
        self.placement = placement
        self.fgd = placement == "fgd"
        self.targets = list(targets)

    # -- scores (lower is better) ---------------------------------------------------------------
    def score(self, st: ClusterState, node: int, g: int, frag_before: float | None) -> Score:
        """Score a placement already applied to ``st``."""
        node_free = self.G - st.node_used[node]
        gpu_free = st.free(g)
        if frag_before is None:
            return self.fit_score(node_free, gpu_free, node, g)
        delta = node_fragmentation(st, node, self.targets) - frag_before
        return (round(delta, 9), round(node_free, 9), round(gpu_free, 9), node, g)

    def fit_score(self, node_free: float, gpu_free: float, node: int, g: int) -> Score:
        """Best fit (pack) or worst fit (spread) from the free capacity left after placing."""
        if self.placement == "pack":
            return (round(node_free, 9), round(gpu_free, 9), node, g)
        return (-round(node_free, 9), -round(gpu_free, 9), node, g)

    def _trial_score(self, st: ClusterState, node: int, hold: list[Holding],
                     frag_before: float | None) -> Score:
        """Apply ``hold`` to ``st``, score it and undo it."""
        st.apply(hold)
        score = self.score(st, node, hold[0][0], frag_before)
        st.release(hold)
        return score

    def _before(self, st: ClusterState, node: int) -> float | None:
        return node_fragmentation(st, node, self.targets) if self.fgd else None

    # -- placing ----------------------------------------------------------------------------------
    def place(self, st: ClusterState, d: Demand, mask: frozenset[int] | None = None,
              only_node: int | None = None) -> list[Holding] | None:
        """Choose where ``d`` goes on ``st`` (not applied); None if it does not fit.

        ``mask``: GPUs reserved for another job (not to be used); ``only_node``: look on that
        node only.
        """
        nodes = range(self.N) if only_node is None else (only_node,)
        best: tuple[Score, list[Holding]] | None = None
        for n in nodes:
            found = self._on_node(st, d, n, mask)
            if found is not None and (best is None or found[0] < best[0]):
                best = found
        return None if best is None else best[1]

    def _on_node(self, st: ClusterState, d: Demand, n: int, mask: frozenset[int] | None
                 ) -> tuple[Score, list[Holding]] | None:
        if d.kind == WHOLE:
            return self._whole(st, d, n, mask)
        if d.kind == FRAC:
            return self._shared(st, d, n, mask)
        return self._mig(st, d, n, mask)

    def _gpus(self, n: int, mask: frozenset[int] | None) -> list[int]:
        return [g for g in range(n * self.G, n * self.G + self.G) if mask is None or g not in mask]

    def _whole(self, st: ClusterState, d: Demand, n: int, mask: frozenset[int] | None
               ) -> tuple[Score, list[Holding]] | None:
        """Whole GPUs: the first ``d.count`` empty GPUs of the node."""
        k = d.count
        if st.node_empty[n] < k:
            return None
        gs = [g for g in self._gpus(n, mask) if st.mode[g] == EMPTY][:k]
        if len(gs) < k:
            return None
        hold: list[Holding] = [(g, 1.0, 0, 0, None) for g in gs]
        if self.fgd:
            return self._trial_score(st, n, hold, self._before(st, n)), hold
        return self.fit_score(self.G - st.node_used[n] - k, 0.0, n, gs[0]), hold

    def _shared(self, st: ClusterState, d: Demand, n: int, mask: frozenset[int] | None
                ) -> tuple[Score, list[Holding]] | None:
        """A share of one GPU: the best GPU of the node with room for it."""
        s = d.share
        if self.G - st.node_used[n] < s - EPS:
            return None
        before = self._before(st, n)
        best: tuple[Score, list[Holding]] | None = None
        for g in self._gpus(n, mask):
            if st.mode[g] == MIGMODE or st.used[g] + s > 1.0 + EPS:
                continue
            hold: list[Holding] = [(g, s, 0, 0, None)]
            if self.fgd:
                score = self._trial_score(st, n, hold, before)
            else:
                score = self.fit_score(self.G - st.node_used[n] - s, 1.0 - st.used[g] - s, n, g)
            if best is None or score < best[0]:
                best = (score, hold)
        return best

    def _mig(self, st: ClusterState, d: Demand, n: int, mask: frozenset[int] | None
             ) -> tuple[Score, list[Holding]] | None:
        """MIG instances: placed one by one (each at its best legal start) on the node."""
        if self.G - st.node_used[n] < d.total - EPS:
            return None
        before = self._before(st, n)
        placed: list[Holding] = []
        for _ in range(d.count):
            pick = self._mig_instance(st, d, n, mask, before)
            if pick is None:
                break
            placed.append(pick)
            st.apply([pick])
        st.release(placed)
        if len(placed) < d.count:
            return None
        return self._trial_score(st, n, placed, before), placed

    def _mig_instance(self, st: ClusterState, d: Demand, n: int, mask: frozenset[int] | None,
                      before: float | None) -> Holding | None:
        profile = d.profile
        assert profile is not None
        pick: tuple[Score, Holding] | None = None
        for g in self._gpus(n, mask):
            for start in st.mig_starts(g, profile, every=self.fgd):
                mask_bits = ((1 << profile.memory_slices) - 1) << start
                h: Holding = (g, d.share, mask_bits, profile.compute_slices, profile)
                score = self._trial_score(st, n, [h], before)
                if pick is None or score < pick[0]:
                    pick = (score, h)
        return None if pick is None else pick[1]
