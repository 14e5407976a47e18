"""Derived signals: busy-but-not-working, power and clock fractions, clocks-event reasons, alerts.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from labkit.observe.readings import Status, View, value_of

# --------------------------------------------------------------------------------------------
# Derived signals
# --------------------------------------------------------------------------------------------

#: util.gpu at or above this counts as "busy" (the dashboards' 100 %; 0.9 leaves room for the
#: 1/6-1 s sample window). Teaching threshold (labkit).
UTIL_BUSY_FRAC = 0.9
#: SM activity below this "likely means ineffective use" (NVIDIA DCGM guidance as relayed by
#: KempnerPulse docs/classification.md: >= 0.8 necessary, < 0.5 likely ineffective).
SM_ACTIVE_LOW_FRAC = 0.5
#: Without SM activity (nvidia-smi logs, pre-Hopper without DCGM), power below this share of the
#: enforced limit at util.gpu >= 0.9 is the fallback tell (cases: cupy#3557 "100 % with low
#: temperature", Qwen#970 "power low, utilization full"; 70 W of 700 W). Teaching threshold.
POWER_LOW_FRAC = 0.3


@dataclass(frozen=True)
class Signal:
    """A derived yes/no signal, or "can't tell" when an input is missing.

    Attributes
    ----------
    key : str
        ``busy_not_working``, ``throttle``, ...
    on : bool or None
        None when a needed input is n/a: a derived value of a missing reading is missing,
        never false or 0.
    value : float or None
        The number behind it (e.g. SM activity, or power / limit).
    basis : str
        Which inputs decided it (``"sm_active"``, ``"power"``; ``""`` if none).
    missing : tuple of str
        The inputs that were n/a.
    """

    key: str
    on: bool | None
    value: float | None = None
    basis: str = ""
    missing: tuple[str, ...] = ()


def power_frac(view: View) -> float | None:
    """Return power draw / enforced power limit, or None if either is missing.

    Parameters
    ----------
    view : mapping of str to Reading
        One GPU's readings (keys of :data:`CATALOG`).

    Returns
    -------
    float or None
        ``power_usage_w / power_limit_w``. [fraction; can exceed 1 briefly]

    Used in: notebooks/01_observe.ipynb
    """
    power, limit = value_of(view, "power_usage_w"), value_of(view, "power_limit_w")
    if power is None or limit is None or limit <= 0:
        return None
    return power / limit


def sm_clock_frac(view: View) -> float | None:
    """Return SM clock / max SM clock, or None if either is missing. [fraction]"""
    clock, top = value_of(view, "sm_clock_mhz"), value_of(view, "max_sm_clock_mhz")
    if clock is None or top is None or top <= 0:
        return None
    return clock / top


def busy_not_working(view: View, *, util_busy: float = UTIL_BUSY_FRAC,
                     sm_active_low: float = SM_ACTIVE_LOW_FRAC,
                     power_low: float = POWER_LOW_FRAC) -> Signal:
    """Return the "busy but not working" signal: util.gpu high while the SMs do little.

    Fires when util.gpu >= ``util_busy`` and SM activity < ``sm_active_low``. Without SM
    activity (a log from nvidia-smi, a GPU without GPM) it falls back to power: util.gpu high
    while power < ``power_low`` x the enforced limit.

    Parameters
    ----------
    view : mapping of str to Reading
        One GPU's readings.
    util_busy, sm_active_low, power_low : float
        Thresholds. [fraction]

    Returns
    -------
    Signal
        ``on`` None when util.gpu is missing, or both SM activity and power are.

    References
    ----------
    .. [1] dcgm-exporter issue 341 and cupy issue 3557: util.gpu 100 % while nothing useful
       runs; NVIDIA DCGM guidance relayed by KempnerPulse (SM active < 0.5 ineffective).

    Used in: notebooks/01_observe.ipynb
    """
    util = value_of(view, "gpu_util_frac")
    sm = value_of(view, "sm_active_frac")
    pf = power_frac(view)
    missing = tuple(k for k, v in (("gpu_util_frac", util), ("sm_active_frac", sm),
                                   ("power_frac", pf)) if v is None)
    if util is None:
        return Signal("busy_not_working", None, None, "", missing)
    if sm is not None:
        return Signal("busy_not_working", util >= util_busy and sm < sm_active_low, sm,
                      "sm_active", missing)
    if pf is not None:
        return Signal("busy_not_working", util >= util_busy and pf < power_low, pf, "power",
                      missing)
    return Signal("busy_not_working", None, None, "", missing)


#: Clocks-event reason bits (``nvmlClocksEventReason*`` in ``nvml.h``; DCGM uses the same bits).
#: 0x200 / 0x400 exist only in the deprecated throttle-named set (BoardLimit, Reliability).
CLOCKS_EVENT_REASONS: Mapping[int, str] = MappingProxyType({
    0x1: "GpuIdle", 0x2: "ApplicationsClocksSetting", 0x4: "SwPowerCap", 0x8: "HwSlowdown",
    0x10: "SyncBoost", 0x20: "SwThermalSlowdown", 0x40: "HwThermalSlowdown",
    0x80: "HwPowerBrakeSlowdown", 0x100: "DisplayClockSetting", 0x200: "BoardLimit",
    0x400: "Reliability",
})
#: Reasons that are not a loss of performance under load.
BENIGN_REASONS = frozenset({"GpuIdle", "ApplicationsClocksSetting", "DisplayClockSetting",
                            "SyncBoost"})


def decode_clocks_event_reasons(mask: int | float) -> tuple[str, ...]:
    """Return the names of the bits set in a clocks-event (throttle) reasons mask.

    Parameters
    ----------
    mask : int
        ``nvmlDeviceGetCurrentClocksEventReasons`` / ``DCGM_FI_DEV_CLOCKS_EVENT_REASONS`` /
        nvidia-smi ``clocks_event_reasons.active``.

    Returns
    -------
    tuple of str
        Names in bit order (``("SwPowerCap",)``); unknown bits as ``"0x800"``.

    Raises
    ------
    ValueError
        For a negative or non-integer mask.

    Used in: notebooks/01_observe.ipynb
    """
    if isinstance(mask, float):
        if not mask.is_integer():
            raise ValueError(f"mask must be an integer, got {mask!r}")
        mask = int(mask)
    if not isinstance(mask, int) or mask < 0:
        raise ValueError(f"mask must be a non-negative integer, got {mask!r}")
    names = []
    bit = 1
    while bit <= mask:
        if mask & bit:
            names.append(CLOCKS_EVENT_REASONS.get(bit, f"0x{bit:x}"))
        bit <<= 1
    return tuple(names)


def throttle(view: View) -> Signal:
    """Return whether clocks are held down for a reason that costs performance.

    ``on`` when a reason other than :data:`BENIGN_REASONS` is set (SwPowerCap, thermal or HW
    slowdown, power brake); ``value`` is SM clock / max; ``basis`` names the reasons.

    Used in: notebooks/01_observe.ipynb
    """
    mask = value_of(view, "clocks_event_reasons")
    if mask is None:
        return Signal("throttle", None, sm_clock_frac(view), "", ("clocks_event_reasons",))
    bad = [r for r in decode_clocks_event_reasons(mask) if r not in BENIGN_REASONS]
    return Signal("throttle", bool(bad), sm_clock_frac(view), ",".join(bad))


@dataclass(frozen=True)
class Alert:
    """An error counter or state that deserves attention.

    Attributes
    ----------
    key : str
        ``gpu_lost``, ``xid``, ``ecc_dbe``, ``remap_pending``, ``remap_failure``,
        ``pcie_replay``.
    severity : {"critical", "warning"}
    value : float or None
        The reading that raised it (the Xid code, the count).
    """

    key: str
    severity: str
    value: float | None = None


#: Xid codes after which the GPU needs a reset or reboot (NVIDIA Xid catalog: 79 fallen off the
#: bus, 48 double-bit ECC, 64 row-remap failure, 74 NVLink, 95 uncontained ECC).
CRITICAL_XIDS = frozenset({48, 64, 74, 79, 95})


def alerts(view: View) -> tuple[Alert, ...]:
    """Return the alerts one GPU's readings raise (error counters as alerts).

    A GPU whose readings are ``gpu_lost`` raises ``gpu_lost``; Xid != 0 raises ``xid``
    (critical for :data:`CRITICAL_XIDS`); uncorrectable ECC > 0, a pending row remap, a remap
    failure and PCIe replays > 0 raise their own. Missing readings raise nothing.

    Used in: notebooks/01_observe.ipynb
    """
    out: list[Alert] = []
    if any(r.status is Status.GPU_LOST for r in view.values()):
        out.append(Alert("gpu_lost", "critical", value_of(view, "xid")))
    xid = value_of(view, "xid")
    if xid:
        out.append(Alert("xid", "critical" if int(xid) in CRITICAL_XIDS else "warning", xid))
    for key, metric, severity in (("ecc_dbe", "ecc_dbe_volatile_count", "critical"),
                                  ("remap_pending", "remapped_rows_pending", "warning"),
                                  ("remap_failure", "row_remap_failure", "critical"),
                                  ("pcie_replay", "pcie_replay_count", "warning")):
        v = value_of(view, metric)
        if v:
            out.append(Alert(key, severity, v))
    return tuple(out)


def healthy_gpus(views: Mapping[int, View]) -> tuple[int, int]:
    """Return (healthy, total) GPUs: unhealthy means lost or with a critical alert.

    Parameters
    ----------
    views : mapping of int to mapping of str to Reading
        GPU index -> its latest readings.

    Used in: notebooks/01_observe.ipynb
    """
    bad = sum(1 for v in views.values() if any(a.severity == "critical" for a in alerts(v)))
    return len(views) - bad, len(views)


#: Which panel reveals each workload scenario of the simulated lab GPU (scenario names of
#: ``labkit.gpu.sim.SCENARIOS``), and the signal that fires. Teaching mapping; the tests check
#: it against the simulator.
SCENARIO_REVEALS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "idle": ("gpu_util",),
    "tiny_kernel": ("sm_active",),
    "collective_stall": ("sm_active", "power"),
    "training": ("tensor_active",),
    "memory_bound": ("dram_active",),
    "inference_small_batch": ("sm_active",),
    "dataloader_starved": ("gpu_util", "pcie"),
    "burn_in": ("clocks", "power"),
})


