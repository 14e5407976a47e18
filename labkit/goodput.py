"""Goodput arithmetic: the month's ledger, its hardware equivalent, and straggler slowdown.

Pure: numbers in, numbers out; no widgets, no I/O. Goodput is a fraction (0-1) of the reserved
wall-clock hours; "%" appears only in the UI.

Definitions follow the course worksheet ("Goodput을 실제로 계산해 보기": 4,096 GPUs, 720 h) and
the time-ratio definitions of goodput/ETTR:

- goodput = effective hours / reserved hours, where effective = reserved - all losses
  (ml-goodput-measurement README, AI-Hypercomputer, v0.2.3, 2026; Llama 3 paper §3.3.4,
  "effective training time", Dubey et al. 2024);
- a straggler is a *rate* loss; the worksheet books it as equivalent hours:
  equivalent_h = stepping_h x (1 - 1/S), S = actual / ideal step time.

Used in: notebooks/03_goodput.ipynb
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType

import pandas as pd

from labkit import validate

__all__ = [
    "HardwareEquivalent",
    "Loss",
    "Worksheet",
    "hardware_equivalent",
    "hardware_factor",
    "straggler_equivalent_h",
    "straggler_slowdown",
]


#: Longest period a ledger covers: one leap year (366 d x 24 h). A month is 720-744 h. [h]
MAX_RESERVED_H = 8_784.0


class Loss(StrEnum):
    """The worksheet's loss lines, in the order the course lists them."""

    PLANNED_MAINTENANCE = "planned_maintenance"
    FAILURE_STOPS = "failure_stops"
    CHECKPOINT_WRITES = "checkpoint_writes"
    REWIND = "rewind"
    STRAGGLER = "straggler"


@dataclass(frozen=True)
class Worksheet:
    """One period's goodput ledger: reserved hours minus named losses.

    Parameters
    ----------
    reserved_h : float
        Wall-clock hours reserved for the job or cluster in the period (720 for a 30-day
        month). Must be > 0. [h]
    losses : Mapping[str, float]
        Loss lines in ledger order, name -> hours lost (``Loss`` names for the standard lines;
        any other names are allowed). Each >= 0; their sum must not exceed ``reserved_h``.
        A ``"straggler"`` line is a rate loss booked as equivalent hours. [h]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        Naming the field (``reserved_h`` or ``losses.<name>``) for NaN/inf, a non-number,
        ``reserved_h <= 0`` or above :data:`MAX_RESERVED_H` (a leap year), a negative loss,
        or losses summing above ``reserved_h``.

    Examples
    --------
    >>> ws = Worksheet(720, {"planned_maintenance": 8, "failure_stops": 22,
    ...                      "checkpoint_writes": 6, "rewind": 14, "straggler": 30})
    >>> ws.effective_h, round(ws.goodput, 6)
    (640.0, 0.888889)

    Used in: notebooks/03_goodput.ipynb
    """

    reserved_h: float
    losses: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        reserved = validate.at_most("reserved_h", validate.positive("reserved_h", self.reserved_h),
                                    MAX_RESERVED_H, "one leap year")
        if not isinstance(self.losses, Mapping):
            raise validate.InputError(
                "losses", "other", self.losses,
                f"losses must be a mapping of name -> hours, got {type(self.losses).__name__}",
            )
        clean: dict[str, float] = {}
        for name, hours in self.losses.items():
            clean[str(name)] = validate.non_negative(f"losses.{name}", hours)
        total = sum(clean.values())
        if total > reserved * (1 + 1e-12):
            worst = max(clean, key=clean.__getitem__)
            raise validate.InputError(
                f"losses.{worst}", "at_most", clean[worst],
                f"losses sum to {total:g} h, more than reserved_h ({reserved:g} h); "
                f"largest line: losses.{worst}",
                limit=reserved,
            )
        object.__setattr__(self, "reserved_h", reserved)
        object.__setattr__(self, "losses", MappingProxyType(clean))

    @property
    def lost_h(self) -> float:
        """Sum of all loss lines. [h]"""
        return float(sum(self.losses.values()))

    @property
    def effective_h(self) -> float:
        """Effective (productive) hours: reserved minus all losses. [h]"""
        return max(self.reserved_h - self.lost_h, 0.0)

    @property
    def goodput(self) -> float:
        """Effective hours / reserved hours. [fraction, 0-1]"""
        return self.effective_h / self.reserved_h

    @property
    def stepping_h(self) -> float:
        """Hours in which training steps ran: reserved minus every loss but the straggler. [h]"""
        return self.effective_h + self.losses.get(Loss.STRAGGLER, 0.0)

    def table(self) -> pd.DataFrame:
        """Return the ledger, one row per worksheet line, as printed in the course.

        Returns
        -------
        pandas.DataFrame
            Columns ``line`` (str: ``"reserved"``, each loss name, ``"effective"``), ``kind``
            (``"reserved"``/``"loss"``/``"effective"``), ``hours`` (signed: reserved and effective
            positive, losses negative) [h], and ``fraction_of_reserved`` (hours / reserved_h,
            signed) [fraction]. Reserved plus the loss rows sum to the effective row.
        """
        rows = [("reserved", "reserved", self.reserved_h)]
        rows += [(name, "loss", -h) for name, h in self.losses.items()]
        rows.append(("effective", "effective", self.effective_h))
        frame = pd.DataFrame(rows, columns=["line", "kind", "hours"])
        frame["fraction_of_reserved"] = frame["hours"] / self.reserved_h
        return frame


def hardware_factor(goodput: float, reference: float) -> float:
    """Return how many times the hardware a cluster at ``goodput`` needs to match ``reference``.

    A cluster that keeps a fraction ``goodput`` of its hours productive delivers ``goodput``
    useful GPU-hours per GPU-hour bought; to deliver what a cluster at ``reference`` delivers it
    needs ``reference / goodput`` times as many GPUs (course worksheet: 0.889 / 0.70 = 1.27,
    "27 % more hardware").

    Parameters
    ----------
    goodput : float
        The other cluster's goodput. [fraction, (0, 1]]
    reference : float
        The reference goodput (the worksheet's). [fraction, (0, 1]]

    Returns
    -------
    float
        ``reference / goodput``. [unitless]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        If either value is NaN, not a number, or outside (0, 1].
    """
    g = validate.fraction("goodput", goodput)
    ref = validate.fraction("reference", reference)
    return ref / g


@dataclass(frozen=True)
class HardwareEquivalent:
    """What a goodput gap costs in GPUs and money (see :func:`hardware_equivalent`)."""

    factor: float
    gpus_needed: float
    extra_gpus: float
    extra_cost_krw: float


def hardware_equivalent(
    n_gpus: float, goodput: float, reference: float, gpu_price_krw: float
) -> HardwareEquivalent:
    """Return the GPUs (and their price) a cluster at ``goodput`` needs to match ``reference``.

    Parameters
    ----------
    n_gpus : float
        GPUs of the reference cluster (4,096 in the worksheet). Must be > 0. [GPUs]
    goodput, reference : float
        As in :func:`hardware_factor`. [fraction, (0, 1]]
    gpu_price_krw : float
        Price of one GPU, all-in. Must be >= 0. [KRW]

    Returns
    -------
    HardwareEquivalent
        ``factor`` = reference / goodput; ``gpus_needed`` = n_gpus x factor (fractional, as
        arithmetic; 4,096 x 1.2698 = 5,201.3); ``extra_gpus`` = gpus_needed - n_gpus (negative
        when ``goodput`` beats ``reference``); ``extra_cost_krw`` = extra_gpus x price. [GPUs, KRW]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For a bad goodput/reference (see :func:`hardware_factor`), ``n_gpus <= 0`` or a
        negative price.
    """
    n = validate.positive("n_gpus", n_gpus)
    price = validate.non_negative("gpu_price_krw", gpu_price_krw)
    factor = hardware_factor(goodput, reference)
    needed = n * factor
    return HardwareEquivalent(factor, needed, needed - n, (needed - n) * price)


def straggler_slowdown(equivalent_h: float, stepping_h: float) -> float:
    """Return the step slowdown S that a straggler loss of ``equivalent_h`` hours means.

    Slow steps still count as training time; booked as a loss they are
    ``equivalent_h = stepping_h x (1 - 1/S)``, so ``S = stepping_h / (stepping_h - equivalent_h)``
    (worksheet: 670 / 640 = 1.047, steps 4.7 % slower than ideal).

    Parameters
    ----------
    equivalent_h : float
        Straggler loss booked as hours. Must be >= 0 and < ``stepping_h``. [h]
    stepping_h : float
        Hours in which steps ran (reserved minus every other loss). Must be > 0. [h]

    Returns
    -------
    float
        S = actual / ideal step time, >= 1. [unitless]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For NaN, non-numbers, ``stepping_h <= 0``, a negative ``equivalent_h`` or
        ``equivalent_h >= stepping_h`` (an infinite slowdown).
    """
    stepping = validate.positive("stepping_h", stepping_h)
    eq = validate.non_negative("equivalent_h", equivalent_h)
    if eq >= stepping:
        raise validate.InputError(
            "equivalent_h", "at_most", equivalent_h,
            f"equivalent_h must be < stepping_h ({stepping:g} h), got {equivalent_h!r}",
            limit=stepping,
        )
    return stepping / (stepping - eq)


def straggler_equivalent_h(slowdown: float, stepping_h: float) -> float:
    """Return the hours a step slowdown ``S`` costs over ``stepping_h``: stepping_h x (1 - 1/S).

    Inverse of :func:`straggler_slowdown`.

    Parameters
    ----------
    slowdown : float
        S = actual / ideal step time; must be >= 1. [unitless]
    stepping_h : float
        Hours in which steps ran. Must be > 0. [h]

    Returns
    -------
    float
        Equivalent hours lost. [h]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For NaN, non-numbers, ``slowdown < 1`` or ``stepping_h <= 0``.
    """
    stepping = validate.positive("stepping_h", stepping_h)
    s = validate.finite("slowdown", slowdown)
    if s < 1:
        raise validate.InputError(
            "slowdown", "at_least", slowdown, f"slowdown must be >= 1, got {slowdown!r}", limit=1.0
        )
    return stepping * (1 - 1 / s)
