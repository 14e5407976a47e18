"""nvidia-smi's MIG-changing verbs over pynvml: ``-mig 1|0``, ``mig -cgi [-C]``, ``-dci``, ``-dgi``.

Messages are spelled as nvidia-smi (R550-R580) prints them, e.g. from NVIDIA's MIG user guide
("Getting Started with MIG"): ``Enabled MIG Mode for GPU 00000000:07:00.0`` / ``All done.``,
``Successfully created GPU instance ID  2 on GPU  0 using profile MIG 3g.20gb (ID  9)``,
``Successfully created compute instance ID  0 on GPU  0 GPU instance ID  2 using profile MIG
3g.20gb (ID  2)``, ``Successfully destroyed compute instance ID  0 from GPU  0 GPU instance ID
1``, ``Successfully destroyed GPU instance ID  1 from GPU  0``.

Each function returns the lines to print and raises :class:`SmiError` (text and exit status)
where nvidia-smi fails. Who may call them (simulated lab only, unless explicitly allowed; never
from voila or the hub) is decided by ``python -m labkit.gpu``, not here.

Used in: ``python -m labkit.gpu`` (a terminal next to a lesson); tests of the simulated lab
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from labkit.gpu import smi

__all__ = ["PERSISTENCE_WARNING", "SmiError", "create_gpu_instances",
           "destroy_compute_instances", "destroy_gpu_instances", "parse_profiles",
           "set_mig_mode", "set_persistence_mode"]

#: What ``nvidia-smi -mig 1|0`` adds when the GPU's persistence mode is off, after a blank
#: line and before "All done." (``{bus}``: the PCI bus id). Spelled as driver 570.169 prints
#: it (tests/fixtures/nvidia-smi/h100_pcie_mig1_persistence_scaleway_570.txt, SOURCES.md).
PERSISTENCE_WARNING = (
    "Warning: persistence mode is disabled on device {bus}. See the Known Issues section of "
    "the nvidia-smi(1) man page for more information. Run with [--help | -h] switch to get "
    "more information on how to enable persistence mode.")


class SmiError(Exception):
    """An nvidia-smi-style failure: ``str(err)`` is the text, ``status`` the exit status."""

    def __init__(self, text: str, status: int = 1) -> None:
        super().__init__(text)
        self.status = status


def _bus_id(nv: ModuleType, h: Any) -> str:
    bus = nv.nvmlDeviceGetPciInfo(h).busId
    return bus.decode() if isinstance(bus, bytes) else str(bus)


def set_mig_mode(nv: ModuleType, gpu: int, enable: bool) -> list[str]:
    """``nvidia-smi -i <gpu> -mig 1|0``: set MIG mode; a GPU in use leaves it pending.

    Raises
    ------
    SmiError
        On a GPU without MIG ("... Not Supported") or without the right (NoPermission).
    """
    h = nv.nvmlDeviceGetHandleByIndex(gpu)
    bus = _bus_id(nv, h)
    word = "Enabled" if enable else "Disabled"
    try:
        status = nv.nvmlDeviceSetMigMode(h, 1 if enable else 0)
    except nv.NVMLError as err:
        raise SmiError(f"Unable to {'enable' if enable else 'disable'} MIG Mode for GPU "
                       f"{bus}: {err}\nTerminating early due to previous errors.") from err
    if status == nv.NVML_SUCCESS:
        return [f"{word} MIG Mode for GPU {bus}", *_persistence_note(nv, h, bus), "All done."]
    reason = nv.nvmlErrorString(status)
    state = "enable" if enable else "disable"
    return [f"Warning: MIG mode is in pending {state} state for GPU {bus}:{reason}",
            f"{bus} is currently being used by one or more other processes (e.g. CUDA "
            "application or a monitoring application such as another instance of nvidia-smi). "
            "Please first kill all processes using the device and retry the command or reboot "
            "the system to make MIG mode effective.", "All done."]


def _persistence_note(nv: ModuleType, h: Any, bus: str) -> list[str]:
    """The blank line and warning nvidia-smi prints after a MIG mode change when persistence
    mode is off (none when it is on, or cannot be read)."""
    try:
        mode = nv.nvmlDeviceGetPersistenceMode(h)
    except nv.NVMLError:
        return []
    if mode == nv.NVML_FEATURE_ENABLED:
        return []
    return ["", PERSISTENCE_WARNING.format(bus=bus)]


def set_persistence_mode(nv: ModuleType, gpu: int, enable: bool) -> list[str]:
    """``nvidia-smi -i <gpu> -pm 1|0``: set persistence mode.

    Printed as nvidia-smi prints it: ``Disabled persistence mode for GPU 00000009:01:00.0.``
    then ``All done.`` (a public capture of ``nvidia-smi -pm 0``, code-search file id
    47311145429).

    Raises
    ------
    SmiError
        Where NVML refuses (NoPermission, NotSupported).
    """
    h = nv.nvmlDeviceGetHandleByIndex(gpu)
    bus = _bus_id(nv, h)
    word = "Enabled" if enable else "Disabled"
    try:
        nv.nvmlDeviceSetPersistenceMode(
            h, nv.NVML_FEATURE_ENABLED if enable else nv.NVML_FEATURE_DISABLED)
    except nv.NVMLError as err:
        raise SmiError(f"Unable to set persistence mode for GPU {bus}: {err}\n"
                       "Terminating early due to previous errors.") from err
    return [f"{word} persistence mode for GPU {bus}.", "All done."]


def parse_profiles(nv: ModuleType, h: Any, text: str) -> list[Any]:
    """Return the GI profile infos for ``-cgi``'s list (IDs or names: ``9,3g.40gb,19``).

    Raises
    ------
    SmiError
        For a profile the GPU does not have ("Invalid profile ...").
    """
    infos = smi.gi_profiles(nv, h)
    by_id = {info.id: info for info in infos}
    by_name = {smi._profile_name(nv, h, info).removeprefix("MIG "): info for info in infos}
    out = []
    for raw in text.split(","):
        item = raw.strip()
        info = by_id.get(int(item)) if item.isdigit() else by_name.get(item)
        if info is None:
            raise SmiError(f"Invalid GPU instance profile: {item!r}\n"
                           f"Failed to create GPU instances: Invalid Argument")
        out.append(info)
    return out


def _default_ci(nv: ModuleType, gi: Any) -> tuple[int, Any]:
    """Return (CI profile constant, info) of a GI's full-size CI (what ``-C`` creates)."""
    best: tuple[int, Any] | None = None
    for const in range(nv.NVML_COMPUTE_INSTANCE_PROFILE_COUNT):
        try:
            info = nv.nvmlGpuInstanceGetComputeInstanceProfileInfo(
                gi, const, nv.NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
        except (nv.NVMLError_NotSupported, nv.NVMLError_InvalidArgument):
            continue
        if best is None or info.sliceCount > best[1].sliceCount:
            best = (const, info)
    if best is None:
        raise SmiError("No compute instance profile found: Not Supported")
    return best


def create_gpu_instances(nv: ModuleType, gpu: int, profiles: str,
                         default_ci: bool) -> list[str]:
    """``nvidia-smi mig -i <gpu> -cgi <profiles> [-C]``: create GIs in order (and their CIs).

    Raises
    ------
    SmiError
        At the first failure, after printing what was created (nvidia-smi keeps those).
    """
    h = nv.nvmlDeviceGetHandleByIndex(gpu)
    lines: list[str] = []
    for info in parse_profiles(nv, h, profiles):
        name = smi._profile_name(nv, h, info)
        try:
            gi = nv.nvmlDeviceCreateGpuInstance(h, info.id)
        except nv.NVMLError as err:
            lines.append(f"Unable to create a GPU instance on GPU {gpu:>2} using profile "
                         f"{info.id}: {err}")
            raise SmiError("\n".join([*lines, f"Failed to create GPU instances: {err}"])) from err
        gi_id = nv.nvmlGpuInstanceGetInfo(gi).id
        lines.append(f"Successfully created GPU instance ID {gi_id:>2} on GPU {gpu:>2} using "
                     f"profile {name} (ID {info.id:>2})")
        if default_ci:
            const, cinfo = _default_ci(nv, gi)
            try:
                ci = nv.nvmlGpuInstanceCreateComputeInstance(gi, const)
            except nv.NVMLError as err:
                raise SmiError("\n".join([*lines, f"Failed to create compute instances: {err}"])
                               ) from err
            ci_id = nv.nvmlComputeInstanceGetInfo(ci).id
            cname = cinfo.name.decode() if isinstance(cinfo.name, bytes) else str(cinfo.name)
            lines.append(f"Successfully created compute instance ID {ci_id:>2} on GPU {gpu:>2} "
                         f"GPU instance ID {gi_id:>2} using profile {cname} (ID {const:>2})")
    return lines


def _selected(ids: list[int] | None, value: int) -> bool:
    return ids is None or value in ids


def destroy_compute_instances(nv: ModuleType, gpu: int, gi_ids: list[int] | None = None,
                              ci_ids: list[int] | None = None) -> list[str]:
    """``nvidia-smi mig -i <gpu> -dci [-gi ids] [-ci ids]``: destroy CIs (all by default).

    Raises
    ------
    SmiError
        If none matched ("No compute instances found") or one is in use.
    """
    h = nv.nvmlDeviceGetHandleByIndex(gpu)
    lines: list[str] = []
    failed: list[str] = []
    for _, gi, gi_info in smi.gpu_instances(nv, h):
        if not _selected(gi_ids, gi_info.id):
            continue
        for _, ci, ci_info in smi.compute_instances(nv, gi):
            ci_id = ci_info.id
            if not _selected(ci_ids, ci_id):
                continue
            try:
                nv.nvmlComputeInstanceDestroy(ci)
            except nv.NVMLError as err:
                failed.append(f"Unable to destroy compute instance ID {ci_id:>2} from GPU "
                              f"{gpu:>2} GPU instance ID {gi_info.id:>2}: {err}")
                continue
            lines.append(f"Successfully destroyed compute instance ID {ci_id:>2} from GPU "
                         f"{gpu:>2} GPU instance ID {gi_info.id:>2}")
    if failed:
        raise SmiError("\n".join([*lines, *failed, "Failed to destroy compute instances: "
                                  "In use by another client"]))
    if not lines:
        raise SmiError("No compute instances found: Not Found", status=6)
    return lines


def destroy_gpu_instances(nv: ModuleType, gpu: int,
                          gi_ids: list[int] | None = None) -> list[str]:
    """``nvidia-smi mig -i <gpu> -dgi [-gi ids]``: destroy GIs (all by default).

    Raises
    ------
    SmiError
        If none matched, or a GI still has compute instances or processes (In use).
    """
    h = nv.nvmlDeviceGetHandleByIndex(gpu)
    lines: list[str] = []
    failed: list[str] = []
    for _, gi, gi_info in smi.gpu_instances(nv, h):
        if not _selected(gi_ids, gi_info.id):
            continue
        try:
            nv.nvmlGpuInstanceDestroy(gi)
        except nv.NVMLError as err:
            failed.append(f"Unable to destroy GPU instance ID {gi_info.id:>2} from GPU "
                          f"{gpu:>2}: {err}")
            continue
        lines.append(f"Successfully destroyed GPU instance ID {gi_info.id:>2} from GPU {gpu:>2}")
    if failed:
        raise SmiError("\n".join([*lines, *failed,
                                  "Failed to destroy GPU instances: In use by another client"]))
    if not lines:
        raise SmiError("No GPU instances found: Not Found", status=6)
    return lines
