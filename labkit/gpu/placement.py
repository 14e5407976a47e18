"""Moved to :mod:`labkit.mig.placement` (the pure MIG placement rules). REMOVE after the merge.

A thin re-export shim so branches written against the old path keep importing during the merge
(``labkit.scheduling``, ``labkit.gpu.sim``). New code imports ``labkit.mig.placement``.
"""

from labkit.mig.placement import (
    CI_PROFILES,
    CiProfile,
    PlacedGi,
    PlacementError,
    check_gi,
    ci_default_start,
    ci_profile,
    ci_profiles,
    ci_remaining_capacity,
    default_start,
    free_units,
    gi_id_for,
    remaining_capacity,
    used_units,
)

__all__ = ["CI_PROFILES", "CiProfile", "PlacedGi", "PlacementError", "check_gi",
           "ci_default_start", "ci_profile", "ci_profiles", "ci_remaining_capacity",
           "default_start", "free_units", "gi_id_for", "remaining_capacity", "used_units"]
