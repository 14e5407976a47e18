"""The NVML calls monitoring tools make beyond the lessons' own: nvitop, gpustat, nvdashboard.

nvitop 1.x, gpustat 1.x and jupyterlab-nvdashboard 0.15 read device modes, BAR1, serials,
encoder/decoder and per-process utilization, NVLink state and field values. A call missing here
would surface as ``NVMLError_FunctionNotFound`` (and, in nvitop, a traceback per call); what a
real datacenter board does not support answers ``NVML_ERROR_NOT_SUPPORTED`` instead, as real
hardware does. ``docs/sim-nvml-calls.md`` lists every call each tool makes and the answer.

Semantics follow ``nvml.h`` (NVML API version 13); each docstring names what real hardware does
and marks **inferred** where no capture shows it. Board figures come from :data:`BOARD_EXTRA`
(cited per entry) because ``data/gpus/*.yaml`` does not carry tool-only figures yet.

Used in: the tools a lesson runs from a terminal (``!nvitop -1``, ``!gpustat``), nvdashboard
"""

from __future__ import annotations

from typing import Any

import pynvml as N

from labkit.gpu.sim.activity import IDX
from labkit.gpu.sim.device import (
    MigDevice,
    NvmlReturn,
    SimDevice,
    _noise,
    listed_processes,
    put_process_entry,
)
from labkit.gpu.sim.device import out_param as _out
from labkit.gpu.sim.device import scalar_arg as _v

__all__ = ["BOARD_EXTRA", "NVLINK_SPEED_MBPS", "ToolsApi"]

#: Per-architecture figures tools read and ``data/gpus`` does not carry: BAR1 size [MiB],
#: NVLink version (``NVML_NVLINK_VERSION_*``) and per-link speed [MB/s].
#: Sources: BAR1 "Total : 131072 MiB" in ``nvidia-smi -q`` of H100 SXM/PCIe and H200 boards,
#: 65536 MiB on A100 80GB / 32768 MiB on A100 40GB and A30 (public ``nvidia-smi -q`` captures in
#: NVIDIA forum and GitHub threads, e.g. NVIDIA/gpu-operator and pytorch issues quoting the -q
#: output); NVLink 3 = 25 GB/s per link per direction (A100), NVLink 4 = 26.562 GB/s as
#: ``nvidia-smi nvlink -s`` prints on H100 SXM, NVLink 5 = 50 GB/s (B200 datasheet: 1.8 TB/s over
#: 18 links); version constants from nvml.h (``NVML_NVLINK_VERSION_3_0`` = 4, ``4_0`` = 6,
#: ``5_0`` = 7). Boards not listed: 16384 MiB BAR1 (**inferred**).
BOARD_EXTRA: dict[str, dict[str, int]] = {
    "ampere": {"bar1_mib": 65536, "nvlink_version": N.NVML_NVLINK_VERSION_3_0,
               "nvlink_mbps": 25000},
    "hopper": {"bar1_mib": 131072, "nvlink_version": N.NVML_NVLINK_VERSION_4_0,
               "nvlink_mbps": 26562},
    "blackwell": {"bar1_mib": 131072, "nvlink_version": N.NVML_NVLINK_VERSION_5_0,
                  "nvlink_mbps": 50000},
}
_BAR1_BY_MODEL = {"A100-40GB": 32768, "A30": 32768, "L40S": 65536}  # same sources as above
#: Per-link speed fields nvdashboard sums (``NVML_FI_DEV_NVLINK_SPEED_MBPS_L0..L11``).
NVLINK_SPEED_MBPS = {getattr(N, f"NVML_FI_DEV_NVLINK_SPEED_MBPS_L{i}"): i for i in range(12)}
#: BAR1 the driver maps for itself once a context exists. [MiB] (**inferred**; -q shows 1-5 MiB)
_BAR1_USED_MIB = 3
#: The sampling period ``nvidia-smi -q`` prints for encoder/decoder utilization. [us]
_CODEC_PERIOD_US = 167_000


def _extra(dev: SimDevice) -> dict[str, int]:
    base = dict(BOARD_EXTRA.get(dev.model.architecture,
                                {"bar1_mib": 16384, "nvlink_version": 0, "nvlink_mbps": 0}))
    base["bar1_mib"] = _BAR1_BY_MODEL.get(dev.model.short_name, base["bar1_mib"])
    return base


class ToolsApi:
    """C functions for the tools; mixed into :class:`labkit.gpu.sim.lab.SimulatedLab`.

    Relies on the handle resolution of :class:`labkit.gpu.sim.lib.NvmlApi` (``_any``, ``_dev``,
    ``_synced``) and on ``devices`` / ``now()`` of the lab.
    """

    devices: list[SimDevice]
    seed: int

    def _any(self, handle: Any) -> SimDevice | MigDevice:  # pragma: no cover - NvmlApi
        raise NotImplementedError

    def _dev(self, handle: Any) -> SimDevice:  # pragma: no cover - NvmlApi
        raise NotImplementedError

    def _synced(self, handle: Any) -> tuple[SimDevice, float]:  # pragma: no cover - NvmlApi
        raise NotImplementedError

    def now(self) -> float:  # pragma: no cover - the lab
        raise NotImplementedError

    # --- modes and identity -----------------------------------------------------------------

    def nvmlDeviceGetPersistenceMode(self, handle: Any, ref: Any) -> int:
        """Persistence mode: enabled by default (lab servers run nvidia-persistenced, as NVIDIA
        advises for datacenter GPUs), off after ``nvmlDeviceSetPersistenceMode(h, 0)``; a MIG
        device answers for its parent (**inferred**)."""
        obj = self._any(handle)
        parent = obj.parent if isinstance(obj, MigDevice) else obj
        _out(ref).value = getattr(parent, "persistence_mode", N.NVML_FEATURE_ENABLED)
        return N.NVML_SUCCESS

    def nvmlDeviceSetPersistenceMode(self, handle: Any, mode: Any) -> int:
        """Set persistence mode (``nvidia-smi -i N -pm 0|1``); a MIG device handle is
        NOT_SUPPORTED, a mode other than 0/1 INVALID_ARGUMENT (nvml.h: "Requires root")."""
        dev = self._dev(handle)
        value = _v(mode)
        if value not in (N.NVML_FEATURE_DISABLED, N.NVML_FEATURE_ENABLED):
            return N.NVML_ERROR_INVALID_ARGUMENT
        dev.persistence_mode = value
        return N.NVML_SUCCESS

    def nvmlDeviceGetComputeMode(self, handle: Any, ref: Any) -> int:
        """``NVML_COMPUTEMODE_DEFAULT`` (the factory setting)."""
        self._any(handle)
        _out(ref).value = N.NVML_COMPUTEMODE_DEFAULT
        return N.NVML_SUCCESS

    def nvmlDeviceGetDisplayActive(self, handle: Any, ref: Any) -> int:
        """No display is active on a datacenter board (``Display Active: Disabled``)."""
        self._dev(handle)
        _out(ref).value = N.NVML_FEATURE_DISABLED
        return N.NVML_SUCCESS

    def nvmlDeviceGetDisplayMode(self, handle: Any, ref: Any) -> int:
        """No display attached (``Display Mode: Disabled``)."""
        self._dev(handle)
        _out(ref).value = N.NVML_FEATURE_DISABLED
        return N.NVML_SUCCESS

    def nvmlDeviceGetDriverModel_v2(self, handle: Any, current: Any, pending: Any) -> int:
        """NOT_SUPPORTED: driver models (WDDM/TCC/MCDM) exist only on Windows (nvml.h)."""
        self._any(handle)
        return N.NVML_ERROR_NOT_SUPPORTED

    nvmlDeviceGetDriverModel = nvmlDeviceGetDriverModel_v2

    def nvmlDeviceGetSerial(self, handle: Any, buf: Any, size: Any) -> int:
        """The board serial: 13 digits, deterministic per lab seed and GPU (**inferred**)."""
        dev = self._dev(handle)
        digits = int((_noise(self.seed, 91, dev.index) + 1.0) * 5e11)
        text = f"1654{digits:012d}"[:13].encode()
        if buf is None or len(text) + 1 > _v(size):
            return N.NVML_ERROR_INSUFFICIENT_SIZE
        buf.value = text
        return N.NVML_SUCCESS

    def nvmlDeviceGetMinorNumber(self, handle: Any, ref: Any) -> int:
        """``/dev/nvidia<minor>``: the index order (as on a freshly booted server)."""
        _out(ref).value = self._dev(handle).index
        return N.NVML_SUCCESS

    def nvmlDeviceGetBrand(self, handle: Any, ref: Any) -> int:
        """``NVML_BRAND_NVIDIA`` (datacenter boards)."""
        self._any(handle)
        _out(ref).value = N.NVML_BRAND_NVIDIA
        return N.NVML_SUCCESS

    # --- memory ---------------------------------------------------------------------------------

    def nvmlDeviceGetBAR1MemoryInfo(self, handle: Any, ref: Any) -> int:
        """BAR1 aperture: total from :data:`BOARD_EXTRA`; a MIG device gets its GI's share of
        memory slices (**inferred**). [bytes]"""
        obj = self._any(handle)
        dev = obj.parent if isinstance(obj, MigDevice) else obj
        total = _extra(dev)["bar1_mib"]
        if isinstance(obj, MigDevice) and dev.model.mig is not None:
            total = total * obj.gpu_instance.profile.memory_slices // dev.model.mig.memory_units
        used = _BAR1_USED_MIB if (obj.parent.processes if isinstance(obj, MigDevice)
                                  else obj.processes) else 1
        st = _out(ref)
        st.bar1Total, st.bar1Used = total << 20, used << 20
        st.bar1Free = st.bar1Total - st.bar1Used
        return N.NVML_SUCCESS

    def nvmlDeviceGetConfComputeMemSizeInfo(self, handle: Any, ref: Any) -> int:
        """Confidential-computing memory split: CC off, so nothing protected (Hopper+);
        NOT_SUPPORTED before Hopper (nvml.h: "Hopper or newer")."""
        dev = self._dev(handle)
        if dev.model.architecture not in ("hopper", "blackwell"):
            return N.NVML_ERROR_NOT_SUPPORTED
        st = _out(ref)
        st.protectedMemSizeKib = 0
        st.unprotectedMemSizeKib = dev.model.memory_total_mib * 1024
        return N.NVML_SUCCESS

    # --- utilization ----------------------------------------------------------------------------

    def _codec(self, handle: Any, util_ref: Any, period_ref: Any) -> int:
        self._any(handle)
        _out(util_ref).value = 0  # lab scenarios run no video work
        _out(period_ref).value = _CODEC_PERIOD_US
        return N.NVML_SUCCESS

    def nvmlDeviceGetEncoderUtilization(self, handle: Any, util: Any, period: Any) -> int:
        """NVENC utilization (0: no video work) and the sampling period. [%, us]"""
        return self._codec(handle, util, period)

    def nvmlDeviceGetDecoderUtilization(self, handle: Any, util: Any, period: Any) -> int:
        """NVDEC utilization (0: no video work) and the sampling period. [%, us]"""
        return self._codec(handle, util, period)

    def nvmlDeviceGetJpgUtilization(self, handle: Any, util: Any, period: Any) -> int:
        """NVJPG utilization (0) and the sampling period. [%, us]"""
        return self._codec(handle, util, period)

    def nvmlDeviceGetOfaUtilization(self, handle: Any, util: Any, period: Any) -> int:
        """OFA utilization (0) and the sampling period. [%, us]"""
        return self._codec(handle, util, period)

    def nvmlDeviceGetProcessUtilization(self, handle: Any, buf: Any, count_ref: Any,
                                        last_seen: Any) -> int:
        """Per-process SM/memory utilization samples since ``last_seen`` [us].

        NOT_FOUND when no process ran (as the driver answers an idle GPU); NOT_SUPPORTED on a
        MIG-enabled GPU (per-process accounting is per MIG device there, **inferred** from
        nvidia-smi pmon refusing MIG mode). ``buf=None`` asks for the count
        (INSUFFICIENT_SIZE).
        """
        dev, now = self._synced(handle)
        if dev.mig_enabled:
            return N.NVML_ERROR_NOT_SUPPORTED
        procs = {p.pid: p for p in dev.processes}
        count = _out(count_ref)
        if not procs:
            count.value = 0
            return N.NVML_ERROR_NOT_FOUND
        if buf is None or count.value < len(procs):
            count.value = len(procs)
            return N.NVML_ERROR_INSUFFICIENT_SIZE
        stamp = int((now + getattr(self, "_epoch_s", 0.0)) * 1e6)
        for i, pid in enumerate(procs):
            sm = mem = 0.0
            for w in dev.running(now):
                if w.pid == pid:
                    vec = w.vector_at(now)
                    sm += w.weight * vec[IDX["kernel"]]
                    mem += w.weight * vec[IDX["mem_copy"]]
            buf[i].pid, buf[i].timeStamp = pid, stamp
            buf[i].smUtil, buf[i].memUtil = round(min(sm, 1.0) * 100), round(min(mem, 1.0) * 100)
            buf[i].encUtil = buf[i].decUtil = 0
        count.value = len(procs)
        return N.NVML_SUCCESS

    def nvmlDeviceGetMPSComputeRunningProcesses_v3(self, handle: Any, count_ref: Any,
                                                   buf: Any) -> int:
        """No MPS server runs in the lab: no MPS processes."""
        self._any(handle)
        _out(count_ref).value = 0
        return N.NVML_SUCCESS

    def nvmlDeviceGetRunningProcessDetailList(self, handle: Any, ref: Any) -> int:
        """R550+ process list (``nvmlProcessDetailList_v1``): mode 0 compute, 1 graphics, 2 MPS.

        Same processes as ``nvmlDeviceGetComputeRunningProcesses_v3`` (a MIG device lists its
        own); ``procArray`` NULL or too short gives INSUFFICIENT_SIZE with the count.
        """
        obj = self._any(handle)
        st = _out(ref)
        if st.version != N.nvmlProcessDetailList_v1:
            return N.NVML_ERROR_ARGUMENT_VERSION_MISMATCH
        if st.mode not in (0, 1, 2):
            return N.NVML_ERROR_INVALID_ARGUMENT
        procs = listed_processes(obj) if st.mode == 0 else []
        if not procs:
            st.numProcArrayEntries = 0
            return N.NVML_SUCCESS
        if not st.procArray or st.numProcArrayEntries < len(procs):
            st.numProcArrayEntries = len(procs)
            return N.NVML_ERROR_INSUFFICIENT_SIZE
        for i, p in enumerate(procs):
            entry = st.procArray[i]
            put_process_entry(entry, p)
            entry.usedGpuCcProtectedMemory = 0
        st.numProcArrayEntries = len(procs)
        return N.NVML_SUCCESS

    # --- NVLink -----------------------------------------------------------------------------------

    def _link(self, handle: Any, link: Any) -> SimDevice:
        """A physical GPU with NVLink and a link number below its count.

        NOT_SUPPORTED on a board without NVLink (and on MIG device handles); INVALID_ARGUMENT
        for a link past the count (nvml.h: ``link`` is "Specifies the NvLink link to be
        queried", valid up to the link count).
        """
        dev = self._dev(handle)
        if dev.board.nvlink_links == 0:
            raise NvmlReturn(N.NVML_ERROR_NOT_SUPPORTED)
        if not 0 <= _v(link) < dev.board.nvlink_links:
            raise NvmlReturn(N.NVML_ERROR_INVALID_ARGUMENT)
        return dev

    def nvmlDeviceGetNvLinkVersion(self, handle: Any, link: Any, ref: Any) -> int:
        """``NVML_NVLINK_VERSION_*`` of a link (Hopper: 4.0 = 6)."""
        dev = self._link(handle, link)
        _out(ref).value = _extra(dev)["nvlink_version"]
        return N.NVML_SUCCESS

    def nvmlDeviceGetNvLinkState(self, handle: Any, link: Any, ref: Any) -> int:
        """Every link of an NVLink board is up (``NVML_FEATURE_ENABLED``)."""
        self._link(handle, link)
        _out(ref).value = N.NVML_FEATURE_ENABLED
        return N.NVML_SUCCESS

    def nvmlDeviceGetNvLinkRemotePciInfo_v2(self, handle: Any, link: Any, ref: Any) -> int:
        """The NVSwitch at the other end is not modelled: NOT_SUPPORTED (**inferred**)."""
        self._link(handle, link)
        return N.NVML_ERROR_NOT_SUPPORTED

    def nvmlDeviceGetNvLinkUtilizationCounter(self, handle: Any, link: Any, counter: Any,
                                              rx: Any, tx: Any) -> int:
        """Deprecated counters: NOT_SUPPORTED since Hopper (use the throughput fields)."""
        self._link(handle, link)
        return N.NVML_ERROR_NOT_SUPPORTED

    def nvlink_scale(self, dev: SimDevice) -> float:
        """Share of a scenario's NVLink traffic a GPU carries: 1 with peers over NVLink, else 0."""
        return 1.0 if dev.board.nvlink_links > 0 and len(self.devices) > 1 else 0.0

    def nvlink_field(self, dev: SimDevice, fid: int, scope: int) -> tuple[int, float] | int:
        """An NVLink field value for ``nvmlDeviceGetFieldValues``, or an ``NVML_ERROR_*`` code.

        ``NVML_FI_DEV_NVLINK_LINK_COUNT`` is the board's links (18 on H100 SXM); throughput
        (``..._THROUGHPUT_DATA_TX/RX``, KiB counters) is per link for ``scopeId`` < count and
        INVALID_ARGUMENT past it; speeds (``..._SPEED_MBPS_L<n>``) per link in MB/s.
        """
        ull = N.NVML_VALUE_TYPE_UNSIGNED_LONG_LONG
        links = dev.board.nvlink_links
        if fid == N.NVML_FI_DEV_NVLINK_LINK_COUNT:
            return (N.NVML_VALUE_TYPE_UNSIGNED_INT, links) if links else N.NVML_ERROR_NOT_SUPPORTED
        if not links:
            return N.NVML_ERROR_NOT_SUPPORTED
        if fid in NVLINK_SPEED_MBPS:
            if NVLINK_SPEED_MBPS[fid] >= links:
                return N.NVML_ERROR_INVALID_ARGUMENT
            return ull, _extra(dev)["nvlink_mbps"]
        if fid == N.NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON:
            return ull, _extra(dev)["nvlink_mbps"]
        if not 0 <= scope < links:
            return N.NVML_ERROR_INVALID_ARGUMENT
        tx = fid in (N.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX,
                     N.NVML_FI_DEV_NVLINK_THROUGHPUT_RAW_TX)
        channel = "nvlink_tx_kbps" if tx else "nvlink_rx_kbps"
        return ull, int(dev.cum[IDX[channel]] * self.nvlink_scale(dev) / links)


#: The throughput fields :meth:`ToolsApi.nvlink_field` answers per link.
NVLINK_THROUGHPUT_FIELDS = frozenset({
    N.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, N.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX,
    N.NVML_FI_DEV_NVLINK_THROUGHPUT_RAW_TX, N.NVML_FI_DEV_NVLINK_THROUGHPUT_RAW_RX})
#: Every field ID :meth:`ToolsApi.nvlink_field` answers.
NVLINK_FIELDS = frozenset({N.NVML_FI_DEV_NVLINK_LINK_COUNT, N.NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON,
                           *NVLINK_SPEED_MBPS, *NVLINK_THROUGHPUT_FIELDS})
