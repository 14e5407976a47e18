"""What the exporter reads per GPU beyond the metric catalog: identity labels, MIG devices and
their GPM, and the extra dcgm-exporter default counters (:mod:`labkit.gpu.exporter`).

All NVML, through the handles the exporter's sampler already holds; a reading NVML cannot give
is left out (the exporter omits that series, as dcgm-exporter omits n/a families).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from labkit.gpu import nvml
from labkit.gpu.sampler import GPM_METRIC_IDS
from labkit.observe import CATALOG

__all__ = ["MigDevice", "MigGpm", "extra_values", "identity", "mig_devices", "nvlink_total_kib"]

_MIG_PROFILE = re.compile(r"\bMIG\s+(\S+)\s*$")
_MIB = 1 << 20


def identity(nv: Any, index: int, hostname: str, driver: str) -> dict[str, str]:
    """Return the identity labels of GPU ``index`` (missing values are empty strings)."""
    h, _ = nvml.try_query(nv.nvmlDeviceGetHandleByIndex, index)
    labels = {"gpu": str(index), "UUID": "", "pci_bus_id": "", "device": f"nvidia{index}",
              "modelName": "", "Hostname": hostname, "DCGM_FI_DRIVER_VERSION": driver}
    if h is None:
        return labels
    labels["UUID"] = str(nvml.query(nv.nvmlDeviceGetUUID, h, default=""))
    pci = nvml.query(nv.nvmlDeviceGetPciInfo, h)
    if pci is not None:
        bus = pci.busId
        labels["pci_bus_id"] = bus.decode() if isinstance(bus, bytes) else str(bus)
    minor = nvml.query(nv.nvmlDeviceGetMinorNumber, h)
    if minor is not None:
        labels["device"] = f"nvidia{minor}"
    labels["modelName"] = str(nvml.query(nv.nvmlDeviceGetName, h, default=""))
    return labels


@dataclass(frozen=True)
class MigDevice:
    labels: Mapping[str, str]
    values: Mapping[str, float]  # catalog / exporter metric key -> value in labkit's unit


#: NVML errors after which a MIG instance's GPM is not asked again (no GPM on the board).
_GPM_OFF = ("NVMLError_NotSupported", "NVMLError_FunctionNotFound", "NVMLError_NoPermission")


class MigGpm:
    """GPM profiling of MIG GPU instances (``nvmlGpmMigSampleGet``): metrics between two samples.

    One sample pair per (GPU, GPU instance), swapped every tick, like the Sampler's per-GPU GPM;
    the metrics are the catalog's GPM ones (``labkit.gpu.sampler.GPM_METRIC_IDS``), 0-100 % from
    NVML, stored as fractions. NVIDIA: samples more than 100 ms apart (the exporter's interval
    is at least that).
    """

    def __init__(self, nv: Any) -> None:
        self.nv = nv
        self.prev: dict[tuple[int, int], Any] = {}
        self.spare: dict[tuple[int, int], Any] = {}
        self.off: set[tuple[int, int]] = set()

    def read(self, gpu: int, h: Any, gi: int) -> dict[str, float]:
        key = (gpu, gi)
        if key in self.off:
            return {}
        sample = self.spare.pop(key, None)
        if sample is None:
            sample, err = nvml.try_query(self.nv.nvmlGpmSampleAlloc)
            if err is not None:
                self.off.add(key)
                return {}
        _, err = nvml.try_query(self.nv.nvmlGpmMigSampleGet, h, gi, sample)
        if err is not None:
            nvml.query(self.nv.nvmlGpmSampleFree, sample)
            if type(err).__name__ in _GPM_OFF:
                self.off.add(key)
            return {}
        prev = self.prev.get(key)
        self.prev[key] = sample
        if prev is None:
            return {}  # the first sample only starts the interval
        self.spare[key] = prev
        return self._metrics(prev, sample)

    def _metrics(self, first: Any, second: Any) -> dict[str, float]:
        nv, keys = self.nv, tuple(GPM_METRIC_IDS)
        mg = nv.c_nvmlGpmMetricsGet_t()
        mg.version = nv.NVML_GPM_METRICS_GET_VERSION
        mg.numMetrics = len(keys)
        mg.sample1, mg.sample2 = first, second
        for i, k in enumerate(keys):
            mg.metrics[i].metricId = GPM_METRIC_IDS[k]
        _, err = nvml.try_query(nv.nvmlGpmMetricsGet, mg)
        if err is not None:
            return {}
        return {k: float(mg.metrics[i].value) * CATALOG[k].nvml_scale
                for i, k in enumerate(keys) if int(mg.metrics[i].nvmlReturn) == nv.NVML_SUCCESS}

    def keep_only(self, live: set[tuple[int, int]]) -> None:
        """Free the samples of MIG instances that no longer exist."""
        for store in (self.prev, self.spare):
            for key in [k for k in store if k not in live]:
                nvml.query(self.nv.nvmlGpmSampleFree, store.pop(key))

    def close(self) -> None:
        """Free every sample."""
        self.keep_only(set())


def mig_devices(nv: Any, g: int, h: Any, parent: Mapping[str, str], gpm: MigGpm
                 ) -> list[MigDevice]:
    """Return the MIG devices of a GPU in MIG mode with their memory and GPM profiling."""
    count = int(nvml.query(nv.nvmlDeviceGetMaxMigDeviceCount, h, default=0) or 0)
    out = []
    for i in range(count):
        mig = nvml.query(nv.nvmlDeviceGetMigDeviceHandleByIndex, h, i)
        if mig is None:
            continue
        gi = nvml.query(nv.nvmlDeviceGetGpuInstanceId, mig)
        name = str(nvml.query(nv.nvmlDeviceGetName, mig, default=""))
        match = _MIG_PROFILE.search(name)
        mem = nvml.query(nv.nvmlDeviceGetMemoryInfo, mig)
        if gi is None or match is None or mem is None:
            continue
        # UUID stays the parent GPU's, as dcgm-exporter labels MIG rows (public scrapes:
        # NVIDIA/dcgm-exporter#512 and #317, tests/fixtures/observe/): the MIG device is
        # told apart by GPU_I_PROFILE and GPU_I_ID
        labels = {**parent, "GPU_I_PROFILE": match.group(1), "GPU_I_ID": str(gi)}
        values = {"fb_used_mib": mem.used / _MIB, "fb_free_mib": (mem.total - mem.used) / _MIB,
                  "fb_total_mib": mem.total / _MIB, **gpm.read(g, h, int(gi))}
        out.append(MigDevice(MappingProxyType(labels), MappingProxyType(values)))
    return out


def nvlink_total_kib(nv: Any, h: Any) -> float | None:
    """Return NVLink data TX + RX summed over the GPU's links since driver load, or None.

    ``NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX`` / ``_RX`` (KiB counters per link, ``scopeId`` =
    link; ``nvml.h``), over ``NVML_FI_DEV_NVLINK_LINK_COUNT`` links. None on a board without
    NVLink (the family is then left out, as dcgm-exporter leaves out n/a fields). [KiB]
    """
    count = nvml.query(nv.nvmlDeviceGetFieldValues, h, [nv.NVML_FI_DEV_NVLINK_LINK_COUNT])
    if not count or int(count[0].nvmlReturn) != nv.NVML_SUCCESS:
        return None
    links = int(count[0].value.uiVal)
    ids = [(f, link) for f in (nv.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX,
                               nv.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX) for link in range(links)]
    values = nvml.query(nv.nvmlDeviceGetFieldValues, h, ids) if ids else None
    if not values:
        return None
    ok = [int(v.value.ullVal) for v in values if int(v.nvmlReturn) == nv.NVML_SUCCESS]
    return float(sum(ok)) if ok else None


def extra_values(nv: Any, h: Any) -> dict[str, float]:
    """Return the exporter-only readings of one GPU (a reading NVML cannot give is absent).

    Memory clock (``nvmlDeviceGetClockInfo(NVML_CLOCK_MEM)``) [MHz], encoder and decoder
    utilization (``nvmlDeviceGetEncoderUtilization`` / ``DecoderUtilization``) [%], rows remapped
    for correctable errors (``nvmlDeviceGetRemappedRows``, its first value) [count], NVLink
    bandwidth total (:func:`nvlink_total_kib`) [KiB].
    """
    values: dict[str, float] = {}
    clock = nvml.query(nv.nvmlDeviceGetClockInfo, h, nv.NVML_CLOCK_MEM)
    if clock is not None:
        values["mem_clock_mhz"] = float(clock)
    for key, call in (("enc_util_pct", nv.nvmlDeviceGetEncoderUtilization),
                      ("dec_util_pct", nv.nvmlDeviceGetDecoderUtilization)):
        util = nvml.query(call, h)
        if util is not None:
            values[key] = float(util[0])
    rows = nvml.query(nv.nvmlDeviceGetRemappedRows, h)
    if rows is not None:
        values["remapped_rows_correctable"] = float(rows[0])
    nvlink = nvlink_total_kib(nv, h)
    if nvlink is not None:
        values["nvlink_bandwidth_total_kib"] = nvlink
    return values
