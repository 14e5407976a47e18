"""nvidia-smi-style tables from NVML calls: ``-L``, ``mig -lgip``, ``-lgipp``, ``-lgi``, ``-lci``.

Works on the real GPU and on the simulator alike (it only calls pynvml), so simulated tables can
be compared line by line with real captures. Layouts follow nvidia-smi R550-R610 output (column
widths taken from real captures, e.g. the H100 80GB HBM3 ``-lgip`` in NVIDIA's MIG user guide
and the RTX PRO 6000 capture of driver 610.43.02).

Used in: ``python -m labkit.gpu``; lesson 02 (MIG); tests against the reference captures
"""

from __future__ import annotations

import ctypes
from types import ModuleType
from typing import Any

from labkit.gpumodels import profile_name

__all__ = ["NO_MIG", "gi_profiles", "gpu_instances", "lci", "lgi", "lgip", "lgipp", "list_gpus",
           "placements"]

_LGIP_RULE = "+" + "-" * 79 + "+"
_LGIP_HEAD = [
    "| GPU instance profiles:                                                        |",
    "| GPU   Name               ID    Instances   Memory     P2P    SM    DEC   ENC  |",
    "|                                Free/Total   GiB              CE    JPEG  OFA  |",
    "|" + "=" * 79 + "|",
]
_LGI_RULE = "+" + "-" * 57 + "+"
_LGI_HEAD = [
    "| GPU instances:                                          |",
    "| GPU   Name               Profile  Instance   Placement  |",
    "|                            ID       ID       Start:Size |",
    "|" + "=" * 57 + "|",
]
_LCI_RULE = "+" + "-" * 68 + "+"
_LCI_HEAD = [
    "| Compute instances:                                                 |",
    "| GPU     GPU       Name             Profile   Instance   Placement  |",
    "|       Instance                       ID        ID       Start:Size |",
    "|         ID                                                         |",
    "|" + "=" * 68 + "|",
]
_SUFFIX_BY_CONST = {7: "+me", 10: "+gfx", 11: "+gfx", 12: "+gfx", 13: "-me", 14: "-me",
                    15: "+me.all", 16: "+me.all", 17: "+gfx"}
NO_MIG = "No MIG-enabled devices found."


def _gpus(nv: ModuleType, gpu: int | None) -> list[int]:
    count = nv.nvmlDeviceGetCount()
    return [gpu] if gpu is not None else list(range(count))


def list_gpus(nv: ModuleType) -> str:
    """Return ``nvidia-smi -L``: one line per GPU, then its MIG devices (GI + CI pairs)."""
    lines = []
    for i in range(nv.nvmlDeviceGetCount()):
        try:
            h = nv.nvmlDeviceGetHandleByIndex(i)
            lines.append(f"GPU {i}: {nv.nvmlDeviceGetName(h)} (UUID: {nv.nvmlDeviceGetUUID(h)})")
        except nv.NVMLError as err:
            lines.append(f"GPU {i}: Unable to determine the device handle: {err}")
            continue
        for k, mig in _mig_devices(nv, h):
            profile = nv.nvmlDeviceGetName(mig).split(" MIG ", 1)[-1]
            lines.append(f"  MIG {profile:<12}Device {k:>2}: (UUID: {nv.nvmlDeviceGetUUID(mig)})")
    return "\n".join(lines)


def _mig_devices(nv: ModuleType, h: Any) -> list[tuple[int, Any]]:
    try:
        count = nv.nvmlDeviceGetMaxMigDeviceCount(h)
    except nv.NVMLError:
        return []
    found = []
    for k in range(count):
        try:
            found.append((k, nv.nvmlDeviceGetMigDeviceHandleByIndex(h, k)))
        except nv.NVMLError_NotFound:
            continue
    return found


def gi_profiles(nv: ModuleType, h: Any) -> list[Any]:
    """Return the GPU's GPU-instance profile infos (v2 structs) in nvidia-smi's lgip order.

    Enumerates ``NVML_GPU_INSTANCE_PROFILE_*`` until INVALID_ARGUMENT, skipping NOT_SUPPORTED
    (nvml.h); sorts by memory, compute slices, then ID, as ``-lgip`` lists them.
    """
    infos = []
    for const in range(nv.NVML_GPU_INSTANCE_PROFILE_COUNT):
        try:
            info = nv.nvmlDeviceGetGpuInstanceProfileInfo(h, const)
        except nv.NVMLError_NotSupported:
            continue
        except nv.NVMLError_InvalidArgument:
            break
        info._labkit_const = const
        infos.append(info)
    return sorted(infos, key=lambda p: (p.memorySizeMB, p.sliceCount, p.id))


def _profile_name(nv: ModuleType, h: Any, info: Any) -> str:
    name = info.name.decode() if isinstance(info.name, bytes) else str(info.name)
    if name.strip():
        return name if name.startswith("MIG ") else f"MIG {name}"
    total_mib = nv.nvmlDeviceGetMemoryInfo(h).total >> 20
    suffix = _SUFFIX_BY_CONST.get(getattr(info, "_labkit_const", -1), "")
    return "MIG " + profile_name(info.sliceCount, info.memorySizeMB, total_mib, suffix)


def _mig_supported(nv: ModuleType, h: Any) -> bool:
    try:
        nv.nvmlDeviceGetMigMode(h)
    except nv.NVMLError_NotSupported:
        return False
    return True


def _mig_enabled(nv: ModuleType, h: Any) -> bool:
    try:
        return bool(nv.nvmlDeviceGetMigMode(h)[0])
    except nv.NVMLError_NotSupported:
        return False


def lgip(nv: ModuleType, gpu: int | None = None) -> str:
    """Return ``nvidia-smi mig -lgip``: profiles with Free/Total, memory [GiB], SM and engines.

    "Free" is ``nvmlDeviceGetGpuInstanceRemainingCapacity``. While MIG is off that call is not
    supported and nothing is placed, so Free is the total (N/N), as a real R580 ``nvidia-smi mig
    -lgip`` prints it with MIG disabled (issue 15; data/gpus/H100-80GB.yaml
    ``mig.lgip_mig_off_source``).
    """
    rows: list[str] = []
    for i in _gpus(nv, gpu):
        h = nv.nvmlDeviceGetHandleByIndex(i)
        if not _mig_supported(nv, h):
            continue
        enabled = _mig_enabled(nv, h)
        for info in gi_profiles(nv, h):
            try:
                free = nv.nvmlDeviceGetGpuInstanceRemainingCapacity(h, info.id)
            except nv.NVMLError_NotSupported:
                free = 0 if enabled else info.instanceCount
            name = _profile_name(nv, h, info)
            mem = f"{info.memorySizeMB / 1024:.2f}"
            p2p = "Yes" if info.isP2pSupported else "No"
            inst = f"{free}/{info.instanceCount}"
            rows.append(f"|{i:>4}  {name:<19}{info.id:>3}     {inst:<11}{mem:<11}{p2p:<7}"
                        f"{info.multiprocessorCount:<7}{info.decoderCount:<6}"
                        f"{info.encoderCount:<4}|")
            rows.append(f"|{'':<63}{info.copyEngineCount:<6}{info.jpegCount:<6}"
                        f"{info.ofaCount:<4}|")
            rows.append(_LGIP_RULE)
    if not rows:
        return NO_MIG
    return "\n".join([_LGIP_RULE, *_LGIP_HEAD, *rows])


def placements(nv: ModuleType, h: Any, profile_id: int) -> list[tuple[int, int]]:
    """Return a profile's (start, size) placements (``…GetGpuInstancePossiblePlacements``)."""
    count = ctypes.c_uint(0)
    nv.nvmlDeviceGetGpuInstancePossiblePlacements(h, profile_id, None, ctypes.byref(count))
    buf = (nv.c_nvmlGpuInstancePlacement_t * count.value)()
    nv.nvmlDeviceGetGpuInstancePossiblePlacements(h, profile_id, buf, ctypes.byref(count))
    return [(buf[k].start, buf[k].size) for k in range(count.value)]


def lgipp(nv: ModuleType, gpu: int | None = None) -> str:
    """Return ``nvidia-smi mig -lgipp``: ``GPU  0 Profile ID 19 Placements: {0,1,...}:1``."""
    lines = []
    for i in _gpus(nv, gpu):
        h = nv.nvmlDeviceGetHandleByIndex(i)
        if not _mig_supported(nv, h):
            continue
        for info in gi_profiles(nv, h):
            found = placements(nv, h, info.id)
            starts = ",".join(str(s) for s, _ in found)
            size = found[0][1] if found else 0
            label = "Placements:" if len(found) > 1 else "Placement :"
            lines.append(f"GPU {i:>2} Profile ID {info.id:>2} {label} {{{starts}}}:{size}")
    return "\n".join(lines) if lines else NO_MIG


def gpu_instances(nv: ModuleType, h: Any) -> list[tuple[Any, Any, Any]]:
    """Return (profile info, GI handle, GI info) for every GI, in lgip profile order."""
    out = []
    for info in gi_profiles(nv, h):
        count = ctypes.c_uint(0)
        buf = (nv.c_nvmlGpuInstance_t * max(1, info.instanceCount))()
        nv.nvmlDeviceGetGpuInstances(h, info.id, buf, ctypes.byref(count))
        for k in range(count.value):
            out.append((info, buf[k], nv.nvmlGpuInstanceGetInfo(buf[k])))
    return out


def compute_instances(nv: ModuleType, gi: Any) -> list[tuple[Any, Any, Any]]:
    """Return (CI profile info, CI handle, CI info) for every compute instance of GI ``gi``.

    Profiles the GI does not offer (NOT_SUPPORTED / INVALID_ARGUMENT) are skipped, in CI
    profile order (``NVML_COMPUTE_INSTANCE_PROFILE_*``).
    """
    out = []
    for const in range(nv.NVML_COMPUTE_INSTANCE_PROFILE_COUNT):
        try:
            cinfo = nv.nvmlGpuInstanceGetComputeInstanceProfileInfo(
                gi, const, nv.NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
        except (nv.NVMLError_NotSupported, nv.NVMLError_InvalidArgument):
            continue
        count = ctypes.c_uint(0)
        buf = (nv.c_nvmlComputeInstance_t * max(1, cinfo.instanceCount))()
        nv.nvmlGpuInstanceGetComputeInstances(gi, const, buf, ctypes.byref(count))
        out += [(cinfo, buf[k], nv.nvmlComputeInstanceGetInfo(buf[k]))
                for k in range(count.value)]
    return out


def lgi(nv: ModuleType, gpu: int | None = None) -> str:
    """Return ``nvidia-smi mig -lgi``: GPU instances with profile ID, instance ID, placement."""
    rows: list[str] = []
    any_mig = False
    for i in _gpus(nv, gpu):
        h = nv.nvmlDeviceGetHandleByIndex(i)
        if not _mig_enabled(nv, h):
            continue
        any_mig = True
        for info, _, gi in gpu_instances(nv, h):
            place = f"{gi.placement.start}:{gi.placement.size}"
            rows.append(f"|{i:>4}  {_profile_name(nv, h, info):<20}{info.id:>4}{gi.id:>9}"
                        f"{place:>13}     |")
            rows.append(_LGI_RULE)
    if not any_mig:
        return NO_MIG
    if not rows:
        return "No GPU instances found: Not Found"
    return "\n".join([_LGI_RULE, *_LGI_HEAD, *rows])


def lci(nv: ModuleType, gpu: int | None = None) -> str:
    """Return ``nvidia-smi mig -lci``: compute instances per GPU instance."""
    rows: list[str] = []
    any_mig = False
    for i in _gpus(nv, gpu):
        h = nv.nvmlDeviceGetHandleByIndex(i)
        if not _mig_enabled(nv, h):
            continue
        any_mig = True
        for _, gi_handle, gi in gpu_instances(nv, h):
            for cinfo, _, ci in compute_instances(nv, gi_handle):
                name = cinfo.name.decode() if isinstance(cinfo.name, bytes) else cinfo.name
                place = f"{ci.placement.start}:{ci.placement.size}"
                rows.append(f"|{i:>4}{gi.id:>7}       {name:<16}{ci.profileId:>6}"
                            f"{ci.id:>10}{place:>13}     |")
                rows.append(_LCI_RULE)
    if not any_mig:
        return NO_MIG
    if not rows:
        return "No compute instances found: Not Found"
    return "\n".join([_LCI_RULE, *_LCI_HEAD, *rows])
