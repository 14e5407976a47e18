"""Read-only capture of a real lab GPU, to check the simulator's model of it.

Run on a machine with an NVIDIA GPU (H100/H200 class)::

    python -m labkit.gpu.capture                 # writes data/captures/<date>_<driver>_<gpu>.json
    python -m labkit.gpu.capture --out /tmp/cap  # elsewhere
    python -m labkit.gpu.capture --compare data/captures/<file>.json   # diff against data/gpus

It only *reads* (``nvmlDeviceGet*``, ``nvmlSystemGet*``, ``nvmlGpm*`` sampling): it never changes
MIG mode, power limits, clocks or any other setting, and creates no instances. Captured per GPU:
name, PCI device ID, memory, power limits, clocks, temperature thresholds, MIG mode, every
GPU-instance profile (NVML constant -> profile ID, memory, SMs, engines, caps), its possible
placements and remaining capacity, existing GPU/compute instances, GPM support (and one 0.5 s
GPM reading), plus the ``nvidia-smi mig -lgip/-lgipp`` tables as labkit renders them. The
output is a JSON file with ``_meta.source``/``as_of`` like every file in ``data/``.

Used in: keeping data/gpus/ true to the lab's hardware
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import platform
import re
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from labkit.gpu import smi

__all__ = ["capture", "compare", "main"]


def _q(nv: ModuleType, func: Any, *args: Any) -> Any:
    """Call ``func``; return its value, or ``{"error": <NVMLError name>}``."""
    try:
        value = func(*args)
    except nv.NVMLError as err:
        return {"error": type(err).__name__}
    return value.decode() if isinstance(value, bytes) else value


def _gpm(nv: ModuleType, h: Any) -> dict[str, Any]:
    support = _q(nv, nv.nvmlGpmQueryDeviceSupport, h)
    if isinstance(support, dict):
        return {"supported": support}
    out: dict[str, Any] = {"supported": bool(support.isSupportedDevice)}
    if not support.isSupportedDevice:
        return out
    ids = [nv.NVML_GPM_METRIC_SM_UTIL, nv.NVML_GPM_METRIC_SM_OCCUPANCY,
           nv.NVML_GPM_METRIC_ANY_TENSOR_UTIL, nv.NVML_GPM_METRIC_DRAM_BW_UTIL]
    s1, s2 = nv.nvmlGpmSampleAlloc(), nv.nvmlGpmSampleAlloc()
    try:
        nv.nvmlGpmSampleGet(h, s1)
        time.sleep(0.5)  # NVML: samples should be more than 100 ms apart
        nv.nvmlGpmSampleGet(h, s2)
        mg = nv.c_nvmlGpmMetricsGet_t()
        mg.version = nv.NVML_GPM_METRICS_GET_VERSION
        mg.numMetrics = len(ids)
        mg.sample1, mg.sample2 = s1, s2
        for i, mid in enumerate(ids):
            mg.metrics[i].metricId = mid
        nv.nvmlGpmMetricsGet(mg)
        out["metrics_pct"] = {str(mid): (mg.metrics[i].value if mg.metrics[i].nvmlReturn == 0
                                         else {"error": int(mg.metrics[i].nvmlReturn)})
                              for i, mid in enumerate(ids)}
    except nv.NVMLError as err:
        out["metrics_error"] = type(err).__name__
    finally:
        nv.nvmlGpmSampleFree(s1)
        nv.nvmlGpmSampleFree(s2)
    return out


def _profiles(nv: ModuleType, h: Any) -> list[dict[str, Any]]:
    rows = []
    for const in range(nv.NVML_GPU_INSTANCE_PROFILE_COUNT):
        info = _q(nv, nv.nvmlDeviceGetGpuInstanceProfileInfo, h, const)
        if isinstance(info, dict):
            rows.append({"nvml_profile": const, **info})
            continue
        row: dict[str, Any] = {"nvml_profile": const}
        for name, _ in info._fields_:
            value = getattr(info, name)
            row[name] = value.decode() if isinstance(value, bytes) else value
        placements = _q(nv, smi.placements, nv, h, info.id)
        row["placements"] = placements
        row["remaining_capacity"] = _q(nv, nv.nvmlDeviceGetGpuInstanceRemainingCapacity, h,
                                       info.id)
        rows.append(row)
    return rows


def _device(nv: ModuleType, i: int) -> dict[str, Any]:
    h = _q(nv, nv.nvmlDeviceGetHandleByIndex, i)
    if isinstance(h, dict):
        return {"index": i, **h}
    mem = _q(nv, nv.nvmlDeviceGetMemoryInfo, h)
    pci = _q(nv, nv.nvmlDeviceGetPciInfo, h)
    limits = _q(nv, nv.nvmlDeviceGetPowerManagementLimitConstraints, h)
    out: dict[str, Any] = {
        "index": i,
        "name": _q(nv, nv.nvmlDeviceGetName, h),
        "pci_device_id": f"0x{pci.pciDeviceId:08X}" if not isinstance(pci, dict) else pci,
        "memory_total_mib": (mem.total >> 20) if not isinstance(mem, dict) else mem,
        "architecture": _q(nv, nv.nvmlDeviceGetArchitecture, h),
        "compute_capability": _q(nv, nv.nvmlDeviceGetCudaComputeCapability, h),
        "power_limit_default_mw": _q(nv, nv.nvmlDeviceGetPowerManagementDefaultLimit, h),
        "power_limit_enforced_mw": _q(nv, nv.nvmlDeviceGetEnforcedPowerLimit, h),
        "power_limit_constraints_mw": limits,
        "power_usage_mw": _q(nv, nv.nvmlDeviceGetPowerUsage, h),
        "temperature_c": _q(nv, nv.nvmlDeviceGetTemperature, h, nv.NVML_TEMPERATURE_GPU),
        "temperature_thresholds_c": {
            name: _q(nv, nv.nvmlDeviceGetTemperatureThreshold, h, value)
            for name, value in (("shutdown", nv.NVML_TEMPERATURE_THRESHOLD_SHUTDOWN),
                                ("slowdown", nv.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN),
                                ("gpu_max", nv.NVML_TEMPERATURE_THRESHOLD_GPU_MAX))},
        "clocks_max_mhz": {name: _q(nv, nv.nvmlDeviceGetMaxClockInfo, h, value)
                           for name, value in (("sm", nv.NVML_CLOCK_SM),
                                               ("mem", nv.NVML_CLOCK_MEM))},
        "clocks_mhz": {name: _q(nv, nv.nvmlDeviceGetClockInfo, h, value)
                       for name, value in (("sm", nv.NVML_CLOCK_SM), ("mem", nv.NVML_CLOCK_MEM))},
        "fan_pct": _q(nv, nv.nvmlDeviceGetFanSpeed, h),
        "ecc_mode": _q(nv, nv.nvmlDeviceGetEccMode, h),
        "pcie": {"gen": _q(nv, nv.nvmlDeviceGetCurrPcieLinkGeneration, h),
                 "width": _q(nv, nv.nvmlDeviceGetCurrPcieLinkWidth, h)},
        "mig_mode": _q(nv, nv.nvmlDeviceGetMigMode, h),
        "max_mig_device_count": _q(nv, nv.nvmlDeviceGetMaxMigDeviceCount, h),
        "gpm": _q(nv, _gpm, nv, h),
    }
    fields = _q(nv, nv.nvmlDeviceGetFieldValues, h,
                [nv.NVML_FI_DEV_IS_MIG_MODE_INDEPENDENT_MIG_QUERY_CAPABLE,
                 nv.NVML_FI_DEV_POWER_AVERAGE, nv.NVML_FI_DEV_POWER_INSTANT])
    if not isinstance(fields, dict):
        out["field_values"] = {str(f.fieldId): (f.value.uiVal if f.nvmlReturn == 0
                                                else {"error": int(f.nvmlReturn)}) for f in fields}
    if not isinstance(out["mig_mode"], dict):
        out["gpu_instance_profiles"] = _profiles(nv, h)
    return out


def capture(nv: ModuleType) -> dict[str, Any]:
    """Return everything this module reads, as a JSON-ready mapping (read-only calls only)."""
    now = _dt.datetime.now(_dt.UTC)
    driver = _q(nv, nv.nvmlSystemGetDriverVersion)
    doc: dict[str, Any] = {
        "_meta": {
            "source": f"labkit.gpu.capture (read-only NVML queries) on {platform.node() or 'host'}",
            "as_of": now.date().isoformat(),
            "captured_at": now.isoformat(timespec="seconds"),
            "driver_version": driver,
            "nvml_version": _q(nv, nv.nvmlSystemGetNVMLVersion),
            "cuda_driver_version": _q(nv, nv.nvmlSystemGetCudaDriverVersion),
            "pynvml": "nvidia-ml-py 13.615.71",
        },
        "devices": [_device(nv, i) for i in range(nv.nvmlDeviceGetCount())],
    }
    doc["tables"] = {name: _q(nv, render, nv) for name, render in (
        ("L", smi.list_gpus), ("lgip", smi.lgip), ("lgipp", smi.lgipp), ("lgi", smi.lgi),
        ("lci", smi.lci))}
    return doc


def compare(doc: dict[str, Any]) -> list[str]:
    """Return the differences between a capture and the matching ``data/gpus`` model.

    The model is found by device name. Each line names the GPU, the profile and the figure.
    """
    from labkit.data.gpus import available_models, load_gpu_model

    models = {load_gpu_model(m).name: load_gpu_model(m) for m in available_models()}
    diffs = []
    for dev in doc.get("devices", []):
        model = models.get(dev.get("name"))
        if model is None:
            diffs.append(f"GPU {dev.get('index')}: no data/gpus model named {dev.get('name')!r}")
            continue
        where = f"GPU {dev['index']} ({model.short_name})"
        if dev.get("memory_total_mib") != model.memory_total_mib:
            diffs.append(f"{where}: memory_total_mib {dev.get('memory_total_mib')} "
                         f"vs model {model.memory_total_mib}")
        for row in dev.get("gpu_instance_profiles", []):
            if "error" in row or model.mig is None:
                continue
            prof = model.mig.by_id(row["id"])
            if prof is None:
                diffs.append(f"{where}: profile ID {row['id']} missing from the model")
                continue
            pairs = (("nvml_profile", row["nvml_profile"], prof.nvml_profile),
                     ("memory_mib", row["memorySizeMB"], prof.memory_mib),
                     ("sm_count", row["multiprocessorCount"], prof.sm_count),
                     ("max_count", row["instanceCount"], prof.max_count),
                     ("copy_engines", row["copyEngineCount"], prof.copy_engines),
                     ("decoders", row["decoderCount"], prof.decoders),
                     ("encoders", row["encoderCount"], prof.encoders),
                     ("jpeg", row["jpegCount"], prof.jpeg), ("ofa", row["ofaCount"], prof.ofa))
            for name, real, sim in pairs:
                if real != sim:
                    diffs.append(f"{where} {prof.name}: {name} real {real} vs model {sim}")
            if isinstance(row.get("placements"), list):
                starts = tuple(s for s, _ in row["placements"])
                if starts != prof.placements:
                    diffs.append(f"{where} {prof.name}: placements real {starts} "
                                 f"vs model {prof.placements}")
    return diffs


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-")


def main(argv: list[str] | None = None) -> int:
    """Capture (or compare) and return the exit status."""
    parser = argparse.ArgumentParser(prog="python -m labkit.gpu.capture",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=None,
                        help="output folder (default: data/captures)")
    parser.add_argument("--compare", type=Path, default=None,
                        help="compare an existing capture with data/gpus instead of capturing")
    parser.add_argument("--allow-sim", action="store_true",
                        help="capture the simulator (to test this script)")
    args = parser.parse_args(argv)
    if args.compare is not None:
        diffs = compare(json.loads(args.compare.read_text(encoding="utf-8")))
        print("\n".join(diffs) if diffs else "capture and data/gpus agree")
        return 0
    import pynvml

    from labkit.data import data_dir
    from labkit.gpu import backend

    try:
        nv = backend.connect("sim" if args.allow_sim else "real")
    except pynvml.NVMLError as err:
        print(f"no real GPU here: {err} ({type(err).__name__})", file=sys.stderr)
        return 1
    doc = capture(nv)
    meta = doc["_meta"]
    first = doc["devices"][0].get("name", "gpu") if doc["devices"] else "none"
    out_dir = args.out or data_dir() / "captures"
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{meta['as_of']}_{_slug(str(meta['driver_version']))}_{_slug(first)}.json"
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(path)
    for line in compare(doc):
        print(line)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
