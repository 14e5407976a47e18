"""Moved to :mod:`labkit.gpumodels` (pure GPU model types). REMOVE after the merge.

A thin re-export shim so branches written against the old path keep importing during the merge
(``labkit.scheduling``, ``labkit.sharing``, ``labkit.gpu.sim``). New code imports
``labkit.gpumodels``.
"""

from labkit.gpumodels import (
    ARCHITECTURES,
    BoardSpec,
    GiProfile,
    GpuModel,
    MigSpec,
    mig_memory_gb,
    profile_name,
)

__all__ = ["ARCHITECTURES", "BoardSpec", "GiProfile", "GpuModel", "MigSpec", "mig_memory_gb",
           "profile_name"]
