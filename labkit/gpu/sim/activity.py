"""Workload scenarios of the simulated lab GPU: what the SMs, tensor pipes, DRAM and PCIe do.

A scenario is a cycle of phases; each phase holds the activity *channels* as fractions (0-1)
or rates, constant for the phase. The simulated device sums the running workloads' channels
(weighted by the share of SMs each one owns: 1 for a whole GPU, ``gi.sm / gpu.sm`` for a MIG
GPU instance) and derives every reading from that one timeline, so readings agree:
``utilization.gpu`` is the share of time a kernel ran, GPM ``SM_UTIL`` the share of SMs busy,
power follows the phase's dynamic power (capped at the power limit), temperature follows power,
energy integrates power.

Channel meanings follow DCGM/NVML GPM: ``kernel`` = NVML ``utilization.gpu`` (time with at least
one kernel running), ``sm_active`` = ``DCGM_FI_PROF_SM_ACTIVE`` / GPM ``SM_UTIL``,
``sm_occupancy``, ``tensor_active``, ``dram_active`` = the DCGM profiling ratios, ``mem_copy`` =
NVML ``utilization.memory``; PCIe and NVLink rates in KB/s (NVML's unit);
``dyn_power`` = the share of the board's dynamic power range (TDP - idle) the phase draws, so
power = idle + dyn_power x (TDP - idle), possibly above the limit (then capped).

The numbers are a teaching model. Anchors: a healthy training rank on an H100 reads
util 100 %, SM active 0.85, tensor 0.6, 650 W of 700 W, and a rank stalled in a collective reads
util 100 %, SM active 0.01, tensor 0, ~70 W (dcgm-exporter#341, cupy#3557, NCCL#403); one thread
on one SM keeps util.gpu at ~100 % while SM activity is 1/132 on an H100 (StackOverflow 40937894;
packet.ai "GPU utilization: the lie your dashboard tells"); NVIDIA's guidance relayed by
KempnerPulse: SM active >= 0.8 is necessary, not sufficient. Everything else is **inferred**.

Used in: lessons 01 (observation) and 02 (MIG), through labkit.gpu.sim
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["CHANNELS", "SCENARIOS", "Phase", "Scenario", "scenario"]

#: Channel order of phase vectors.
CHANNELS: tuple[str, ...] = (
    "kernel", "sm_active", "sm_occupancy", "tensor_active", "dram_active", "fp64_active",
    "fp32_active", "fp16_active", "integer_active", "mem_copy", "pcie_tx_kbps", "pcie_rx_kbps",
    "nvlink_tx_kbps", "nvlink_rx_kbps", "dyn_power",
)
IDX: Mapping[str, int] = {name: i for i, name in enumerate(CHANNELS)}
#: Channels that are fractions (a sum of workloads is clipped to 1 when shown).
FRACTION_CHANNELS = frozenset(CHANNELS[:10])


@dataclass(frozen=True)
class Phase:
    """One constant stretch of a scenario.

    Attributes
    ----------
    duration_s : float
        Length of the phase in the cycle (``math.inf`` for a steady scenario). [s]
    values : mapping of str to float
        Channel values (missing channels are 0). Fractions in [0, 1]; rates in KB/s;
        ``dyn_power`` a share of (TDP - idle), may exceed 1.
    busy_sms : int, optional
        If set, ``sm_active`` is ``busy_sms / SMs`` of the GPU or GPU instance it runs on, and
        ``sm_occupancy`` one warp of 64 on those SMs.
    """

    duration_s: float
    values: Mapping[str, float]
    busy_sms: int | None = None

    def vector(self, sm_count: int) -> tuple[float, ...]:
        """Return the channel vector for a GPU (or GPU instance) with ``sm_count`` SMs."""
        values = dict(self.values)
        if self.busy_sms is not None and sm_count > 0:
            share = min(1.0, self.busy_sms / sm_count)
            values["sm_active"] = share
            values["sm_occupancy"] = share / 64  # one warp of 64 resident per busy SM
        return tuple(float(values.get(name, 0.0)) for name in CHANNELS)


@dataclass(frozen=True)
class Scenario:
    """A named workload students can start and stop on a (simulated) GPU or GPU instance.

    Attributes
    ----------
    name : str
        The key in :data:`SCENARIOS`.
    title : str
        One line in English (the lessons' Korean labels live in the UI catalog).
    phases : tuple of Phase
        The cycle; one steady phase for most scenarios.
    memory_frac : float
        Device memory the process allocates, as a share of the GPU (instance). [fraction]
    creates_process : bool
        Whether starting it attaches a process (``idle`` does not).
    """

    name: str
    title: str
    phases: tuple[Phase, ...]
    memory_frac: float = 0.0
    creates_process: bool = True
    extra: Mapping[str, str] = field(default_factory=dict)

    @property
    def period_s(self) -> float:
        """Cycle length (``inf`` for a steady scenario). [s]"""
        return math.fsum(p.duration_s for p in self.phases)


_TRAIN = {"kernel": 1.0, "sm_active": 0.85, "sm_occupancy": 0.45, "tensor_active": 0.60,
          "dram_active": 0.40, "fp32_active": 0.10, "fp16_active": 0.05, "integer_active": 0.08,
          "mem_copy": 0.35, "pcie_tx_kbps": 200_000, "pcie_rx_kbps": 1_500_000,
          # data-parallel gradient all-reduce over NVLink: 60 GB/s each way per GPU (inferred;
          # counted only on boards with NVLink and with peers, see ToolsApi.nvlink_scale)
          "nvlink_tx_kbps": 60_000_000, "nvlink_rx_kbps": 60_000_000,
          # 650 W of 700 W on an H100 with 70 W idle: (650 - 70) / (700 - 70)
          "dyn_power": (650 - 70) / (700 - 70)}

SCENARIOS: Mapping[str, Scenario] = {s.name: s for s in (
    Scenario("idle", "Nothing running", (Phase(math.inf, {}),), creates_process=False),
    Scenario("tiny_kernel", "A one-thread kernel in a loop: util.gpu ~100 %, SM activity 1/SMs",
             (Phase(math.inf, {"kernel": 1.0, "integer_active": 0.001, "dyn_power": 0.02},
                    busy_sms=1),), memory_frac=0.006),
    Scenario("memory_bound", "Element-wise kernels streaming memory: DRAM busy, no tensor work",
             (Phase(math.inf, {"kernel": 1.0, "sm_active": 0.90, "sm_occupancy": 0.60,
                               "dram_active": 0.90, "fp32_active": 0.08, "integer_active": 0.10,
                               "mem_copy": 0.90, "pcie_tx_kbps": 50_000, "pcie_rx_kbps": 50_000,
                               "dyn_power": 0.55}),), memory_frac=0.5),
    Scenario("training", "Tensor-heavy training (healthy rank)", (Phase(math.inf, _TRAIN),),
             memory_frac=0.85),
    Scenario("inference_small_batch", "Small-batch inference: short kernels, gaps between them",
             (Phase(math.inf, {"kernel": 0.60, "sm_active": 0.30, "sm_occupancy": 0.12,
                               "tensor_active": 0.15, "dram_active": 0.45, "fp16_active": 0.03,
                               "fp32_active": 0.05, "integer_active": 0.05, "mem_copy": 0.40,
                               "pcie_tx_kbps": 300_000, "pcie_rx_kbps": 300_000,
                               "dyn_power": 0.35}),), memory_frac=0.45),
    Scenario("dataloader_starved", "Training that waits on its data loader 60 % of the time",
             (Phase(0.8, _TRAIN),
              Phase(1.2, {"pcie_rx_kbps": 6_000_000, "dyn_power": 0.0})), memory_frac=0.85),
    Scenario("collective_stall", "A rank spinning in an NCCL collective, waiting for a late peer",
             (Phase(math.inf, {"kernel": 1.0, "sm_active": 0.01, "sm_occupancy": 0.005,
                               "integer_active": 0.005, "dyn_power": 0.0}),),
             memory_frac=0.85),
    Scenario("burn_in", "A burn-in test drawing more than the power limit: clocks drop",
             (Phase(math.inf, {"kernel": 1.0, "sm_active": 1.0, "sm_occupancy": 0.75,
                               "tensor_active": 0.95, "dram_active": 0.70, "fp16_active": 0.10,
                               "fp32_active": 0.10, "integer_active": 0.05, "mem_copy": 0.60,
                               "dyn_power": 1.25}),), memory_frac=0.6),
)}


def scenario(name: str) -> Scenario:
    """Return the scenario called ``name``.

    Raises
    ------
    ValueError
        If there is no such scenario (the message lists the known ones).
    """
    try:
        return SCENARIOS[name]
    except KeyError:
        raise ValueError(f"unknown scenario {name!r}; known: {', '.join(SCENARIOS)}") from None
