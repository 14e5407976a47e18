"""One reading of one metric, or the status and reason it is missing.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

# --------------------------------------------------------------------------------------------
# Readings
# --------------------------------------------------------------------------------------------


class Status(StrEnum):
    """Why a reading has no value (or ``OK``)."""

    OK = "ok"
    #: NVML_ERROR_NOT_SUPPORTED, nvidia-smi ``[Not Supported]``, DCGM blank "not supported".
    NOT_SUPPORTED = "not_supported"
    #: NVML_ERROR_NO_PERMISSION (DCGM blank "no permission").
    NO_PERMISSION = "no_permission"
    #: NVML_ERROR_GPU_IS_LOST (Xid 79: fallen off the bus), nvidia-smi ``[GPU is lost]``.
    GPU_LOST = "gpu_lost"
    #: NVML_ERROR_FUNCTION_NOT_FOUND: the driver is older than the call.
    FUNCTION_NOT_FOUND = "function_not_found"
    #: nvidia-smi ``[N/A]`` / ``[Unknown Error]``, DCGM blank "not found"/"blank".
    NOT_AVAILABLE = "not_available"
    #: GPM needs two samples >= 100 ms apart; the first one only starts the interval.
    PENDING = "pending"
    #: Any other NVML error (Unknown, Timeout, ...): missing this time, asked again next tick.
    ERROR = "error"


#: NVML error names (``NVMLError_<name>``) that map to a specific status; others are ERROR.
STATUS_OF_NVML = {
    "NotSupported": Status.NOT_SUPPORTED,
    "NoPermission": Status.NO_PERMISSION,
    "GpuIsLost": Status.GPU_LOST,
    "FunctionNotFound": Status.FUNCTION_NOT_FOUND,
    # GPM with a struct version the driver does not know: treat as "not on this GPU" (as gpud).
    "ArgumentVersionMismatch": Status.NOT_SUPPORTED,
}
#: Statuses after which the sampler stops asking (until :meth:`Sampler.reprobe`).
STICKY_STATUSES = frozenset({Status.NOT_SUPPORTED, Status.NO_PERMISSION, Status.FUNCTION_NOT_FOUND})


@dataclass(frozen=True)
class Reading:
    """One metric of one GPU at one time: a value, or the status and reason it is missing.

    Attributes
    ----------
    value : float or None
        In the metric's unit (:attr:`Metric.unit`); None unless ``status`` is ``OK``.
    status : Status
    reason : str or None
        The NVML error name (``"NotSupported"``), the log's token (``"[N/A]"``) or a short
        English phrase; None when ``OK``.
    """

    value: float | None
    status: Status = Status.OK
    reason: str | None = None

    @property
    def ok(self) -> bool:
        """Whether there is a value."""
        return self.status is Status.OK and self.value is not None

    @staticmethod
    def missing(status: Status, reason: str | None) -> Reading:
        """Return a reading without a value."""
        return Reading(None, status, reason)


def nvml_error_name(err: BaseException) -> str:
    name = type(err).__name__
    return name.removeprefix("NVMLError_") if name.startswith("NVMLError_") else name


def status_of_nvml_error(err: BaseException) -> Status:
    """Return the :class:`Status` for an NVML exception (by its ``NVMLError_<name>`` class)."""
    return STATUS_OF_NVML.get(nvml_error_name(err), Status.ERROR)


View = Mapping[str, Reading]


def value_of(view: View, key: str) -> float | None:
    r = view.get(key)
    return r.value if r is not None and r.ok else None


