"""The simulated C functions of GPM (GPU performance monitoring): samples and metrics.

Semantics follow ``nvml.h`` (NVML API version 13); see :mod:`labkit.gpu.sim.lib`.

Used in: lesson 01 (observation), through labkit.gpu
"""

from __future__ import annotations

from typing import Any

import pynvml as N

from labkit.gpu.sim.activity import IDX
from labkit.gpu.sim.device import (
    NvmlReturn,
    SimDevice,
)
from labkit.gpu.sim.device import out_param as _out
from labkit.gpu.sim.device import scalar_arg as _v
from labkit.gpu.sim.lib.base import (
    _GPM_METRICS,
    _GPM_RATES,
    _GPM_ZERO,
    GpmSample,
    NvmlBase,
    _put_handle,
)


class GpmApi(NvmlBase):
    """GPM (GPU performance monitoring): samples and metrics."""

    # --- GPM ------------------------------------------------------------------------------------

    def nvmlGpmQueryDeviceSupport(self, handle: Any, ref: Any) -> int:
        """``isSupportedDevice`` is 1 on Hopper and newer."""
        dev = self._dev(handle)
        st = _out(ref)
        if st.version != N.NVML_GPM_SUPPORT_VERSION:
            return N.NVML_ERROR_ARGUMENT_VERSION_MISMATCH
        st.isSupportedDevice = 1 if dev.model.gpm else 0
        return N.NVML_SUCCESS

    def nvmlGpmQueryIfStreamingEnabled(self, handle: Any, ref: Any) -> int:
        """GPM streaming state (off); NOT_SUPPORTED before Hopper."""
        if not self._dev(handle).model.gpm:
            return N.NVML_ERROR_NOT_SUPPORTED
        _out(ref).value = 0
        return N.NVML_SUCCESS

    def nvmlGpmSampleAlloc(self, ref: Any) -> int:
        """A new sample buffer."""
        _put_handle(ref, self._register(GpmSample()))
        return N.NVML_SUCCESS

    def nvmlGpmSampleFree(self, handle: Any) -> int:
        """Free a sample buffer."""
        sample = self._obj(handle)
        if not isinstance(sample, GpmSample):
            return N.NVML_ERROR_INVALID_ARGUMENT
        self._unregister(sample)
        return N.NVML_SUCCESS

    def _gpm_dev(self, handle: Any) -> tuple[SimDevice, float]:
        dev, now = self._synced(handle)
        if not dev.model.gpm:
            raise NvmlReturn(N.NVML_ERROR_NOT_SUPPORTED)
        return dev, now

    def nvmlGpmSampleGet(self, handle: Any, sample: Any) -> int:
        """Snapshot the whole GPU's counters."""
        dev, now = self._gpm_dev(handle)
        target = self._obj(sample)
        if not isinstance(target, GpmSample):
            return N.NVML_ERROR_INVALID_ARGUMENT
        target.device_index, target.gpu_instance_id = dev.index, None
        target.t_s, target.cum = now, list(dev.cum)
        return N.NVML_SUCCESS

    def nvmlGpmMigSampleGet(self, handle: Any, gi_id: Any, sample: Any) -> int:
        """Snapshot one MIG GPU instance's counters (parent handle + GI ID)."""
        dev, now = self._gpm_dev(handle)
        target = self._obj(sample)
        if not isinstance(target, GpmSample):
            return N.NVML_ERROR_INVALID_ARGUMENT
        if not dev.mig_enabled:
            return N.NVML_ERROR_NOT_SUPPORTED
        gid = _v(gi_id)
        if gid not in dev.gpu_instances:
            return N.NVML_ERROR_INVALID_ARGUMENT
        target.device_index, target.gpu_instance_id = dev.index, gid
        target.t_s, target.cum = now, list(dev.gi_cum.get(gid, [0.0] * len(dev.cum)))
        return N.NVML_SUCCESS

    def nvmlGpmMetricsGet(self, ref: Any) -> int:
        """Metrics from two samples: percent (0-100) and MiB/s; per-metric ``nvmlReturn``."""
        mg = _out(ref)
        if mg.version != N.NVML_GPM_METRICS_GET_VERSION:
            return N.NVML_ERROR_ARGUMENT_VERSION_MISMATCH
        s1, s2 = self._obj(mg.sample1), self._obj(mg.sample2)
        if not isinstance(s1, GpmSample) or not isinstance(s2, GpmSample):
            return N.NVML_ERROR_INVALID_ARGUMENT
        if (s1.device_index is None or s1.device_index != s2.device_index
                or s1.gpu_instance_id != s2.gpu_instance_id):
            return N.NVML_ERROR_INVALID_ARGUMENT
        if mg.numMetrics > N.NVML_GPM_METRIC_MAX:
            return N.NVML_ERROR_INVALID_ARGUMENT
        dt = s2.t_s - s1.t_s
        if dt <= 0:
            return N.NVML_ERROR_INVALID_ARGUMENT
        for i in range(mg.numMetrics):
            metric = mg.metrics[i]
            mid = int(metric.metricId)
            if mid in _GPM_METRICS:
                k = IDX[_GPM_METRICS[mid]]
                metric.value = max(0.0, min(100.0, (s2.cum[k] - s1.cum[k]) / dt * 100.0))
            elif mid in _GPM_RATES:
                k = IDX[_GPM_RATES[mid]]
                scale = self.nvlink_scale(self.devices[s1.device_index]) if (
                    _GPM_RATES[mid].startswith("nvlink")) else 1.0
                metric.value = (s2.cum[k] - s1.cum[k]) * scale / dt * 1000.0 / (1 << 20)
            elif mid in _GPM_ZERO:
                metric.value = 0.0
            else:
                metric.nvmlReturn = N.NVML_ERROR_NOT_SUPPORTED
                continue
            metric.nvmlReturn = N.NVML_SUCCESS
        return N.NVML_SUCCESS
