"""The "what goes on the wall" exercise: panels, situations and the rubric.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from labkit import validate

# --------------------------------------------------------------------------------------------
# "What goes on the wall"
# --------------------------------------------------------------------------------------------

#: The dashboard's panels (a wall shows at most three). Values: the metrics each one shows.
PANELS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "gpu_util": ("gpu_util_frac",),
    "sm_active": ("sm_active_frac", "sm_occupancy_frac"),
    "tensor_active": ("tensor_active_frac",),
    "dram_active": ("dram_active_frac", "mem_copy_util_frac"),
    "memory": ("fb_used_mib", "fb_total_mib"),
    "power": ("power_usage_w", "power_limit_w", "energy_j"),
    "temperature": ("gpu_temp_c", "memory_temp_c", "fan_speed_frac"),
    "clocks": ("sm_clock_mhz", "max_sm_clock_mhz", "clocks_event_reasons"),
    "pcie": ("pcie_tx_kb_per_s", "pcie_rx_kb_per_s"),
    "errors": ("xid", "ecc_dbe_volatile_count", "remapped_rows_uncorrectable",
               "remapped_rows_pending", "row_remap_failure", "pcie_replay_count"),
})
#: Most panels a wall holds in the exercise (the course: choosing is the hard part).
WALL_MAX_PANELS = 3


@dataclass(frozen=True)
class Situation:
    """A situation of the wall exercise and its rubric.

    Attributes
    ----------
    key : str
    essential : tuple of str
        Panels the wall must show.
    misleading : tuple of str
        Panels that look relevant but mislead here (the wall fails with them).
    """

    key: str
    essential: tuple[str, ...]
    misleading: tuple[str, ...]


#: The exercise's situations (from the course framing: night shift, a slowed training run, one
#: GPU shared by a class). Rubric: labkit teaching choice, reasons in the lesson text.
SITUATIONS: Mapping[str, Situation] = MappingProxyType({s.key: s for s in (
    # on call at night: only what needs a human now - a lost GPU, Xid, ECC; heat next
    Situation("night_oncall", ("errors",), ("gpu_util", "tensor_active")),
    # a run slowed down: is the GPU doing math, and are the clocks held down?
    Situation("slow_training", ("sm_active", "clocks"), ("gpu_util",)),
    # thirty students on one GPU: memory runs out first; util.gpu is 100 % from anyone's loop
    Situation("shared_class", ("memory", "sm_active"), ("gpu_util",)),
)})


@dataclass(frozen=True)
class WallVerdict:
    """The check of one wall.

    Attributes
    ----------
    ok : bool
        All essential panels chosen and no misleading one.
    missing : tuple of str
        Essential panels not chosen.
    misleading : tuple of str
        Misleading panels chosen.
    """

    ok: bool
    missing: tuple[str, ...]
    misleading: tuple[str, ...]


def check_wall(situation: str, panels: Iterable[str]) -> WallVerdict:
    """Check a choice of at most three panels for a situation of the wall exercise.

    Parameters
    ----------
    situation : str
        A key of :data:`SITUATIONS`.
    panels : iterable of str
        Keys of :data:`PANELS` (duplicates count once).

    Returns
    -------
    WallVerdict

    Raises
    ------
    labkit.validate.InputError
        ``situation`` / ``panels`` (rule ``choice``) for an unknown key; ``panels`` (rule
        ``at_most``) for more than :data:`WALL_MAX_PANELS`.

    Used in: notebooks/01_observe.ipynb
    """
    validate.one_of("situation", situation, SITUATIONS)
    chosen: list[str] = []
    for p in panels:
        validate.one_of("panels", p, PANELS)
        if p not in chosen:
            chosen.append(p)
    validate.at_most("panels", len(chosen), WALL_MAX_PANELS, "WALL_MAX_PANELS")
    rubric = SITUATIONS[situation]
    missing = tuple(p for p in rubric.essential if p not in chosen)
    misleading = tuple(p for p in chosen if p in rubric.misleading)
    return WallVerdict(not missing and not misleading, missing, misleading)


