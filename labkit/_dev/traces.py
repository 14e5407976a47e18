"""Construct lesson 01's replay traces in ``data/traces/`` from the simulated lab GPU.

These files are **constructed**, not recorded on hardware: a simulated H100 (``labkit.gpu``,
virtual clock, seed 0) runs the workload scenarios one after another while labkit's sampler
reads it through NVML; the readings are then printed the way ``nvidia-smi --query-gpu ...
--format=csv`` and dcgm-exporter print them (formats from ``nvidia-smi --help-query-gpu`` and
the dcgm-exporter README). Deterministic: running it again gives the same bytes, and a test
checks that the committed files match.

    python -m labkit._dev.traces            # rewrite data/traces/sim-*
    python -m labkit._dev.traces --check    # exit 1 if the committed files differ

Real traces (``python -m labkit._dev.record_trace`` on a machine with a GPU) go next to them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path

from labkit.gpu.sampler import Sampler
from labkit.observe import Reading, Snapshot, Status

#: The scenarios in order and how long each runs. [s]
SEGMENTS: tuple[tuple[str, float], ...] = (
    ("idle", 20), ("training", 20), ("collective_stall", 20), ("tiny_kernel", 20),
    ("dataloader_starved", 20), ("burn_in", 20))
#: Wall-clock time printed for t = 0 (the data's as_of day).
START = datetime(2026, 11, 30, 10, 0, 0)
AS_OF = "2026-11-30"
HOST = "lab-gpu-01"
SMI_FIELDS = ("timestamp", "index", "name", "pci.bus_id", "pstate", "utilization.gpu",
              "utilization.memory", "memory.used", "memory.total", "power.draw",
              "enforced.power.limit", "temperature.gpu", "clocks.sm", "clocks.max.sm",
              "clocks_event_reasons.active")
#: dcgm-exporter fields written (the default counters plus SM activity/occupancy and the
#: clocks-event reasons, which an operator enables by editing default-counters.csv).
DCGM_FIELDS: tuple[tuple[str, str, str, str], ...] = (
    # field, metric key, format, help text (dcgm-exporter's default-counters.csv wording)
    ("DCGM_FI_DEV_SM_CLOCK", "sm_clock_mhz", "int", "SM clock frequency (in MHz)."),
    ("DCGM_FI_DEV_GPU_TEMP", "gpu_temp_c", "int", "GPU temperature (in C)."),
    ("DCGM_FI_DEV_POWER_USAGE", "power_usage_w", "w", "Power draw (in W)."),
    ("DCGM_FI_DEV_GPU_UTIL", "gpu_util_frac", "pct", "GPU utilization (in %)."),
    ("DCGM_FI_DEV_FB_USED", "fb_used_mib", "int", "Framebuffer memory used (in MiB)."),
    ("DCGM_FI_DEV_XID_ERRORS", "xid", "int", "Value of the last XID error encountered."),
    ("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "clocks_event_reasons", "int",
     "Current clock event reasons (bitmask)."),
    ("DCGM_FI_PROF_SM_ACTIVE", "sm_active_frac", "ratio",
     "The ratio of cycles an SM has at least 1 warp assigned."),
    ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "tensor_active_frac", "ratio",
     "Ratio of cycles the tensor (HMMA) pipe is active."),
    ("DCGM_FI_PROF_DRAM_ACTIVE", "dram_active_frac", "ratio",
     "Ratio of cycles the device memory interface is active sending or receiving data."),
)


def _segments_line() -> str:
    out, t = [], 0.0
    for name, length in SEGMENTS:
        out.append(f"{name}@{t:g}")
        t += length
    return ",".join(out)


def record(step_s: float) -> tuple[list[Snapshot], dict[str, str]]:
    """Run the scenarios on a fresh simulated H100 and sample every ``step_s``.

    Returns the snapshots and the GPU's identity (name, uuid, pci.bus_id, driver).
    """
    import labkit.gpu as gpu

    gpu.disconnect()
    nv = gpu.connect("sim:H100-80GB", seed=0, clock="virtual", noise=True)
    lab = gpu.simulator()
    try:
        h = nv.nvmlDeviceGetHandleByIndex(0)
        ident = {"name": nv.nvmlDeviceGetName(h), "uuid": nv.nvmlDeviceGetUUID(h),
                 "pci.bus_id": nv.nvmlDeviceGetPciInfo(h).busId,
                 "driver": nv.nvmlSystemGetDriverVersion()}
        ident = {k: v.decode() if isinstance(v, bytes) else str(v) for k, v in ident.items()}
        sampler = Sampler(nv, clock=lab.now, slow_interval_s=0.0, capacity=10_000)
        snaps: list[Snapshot] = []
        t = 0.0
        for name, length in SEGMENTS:
            lab.stop(device=0)
            if name != "idle":
                lab.start(name, 0)
            end = t + length
            while t < end - 1e-9:
                snaps.append(sampler.poll())
                lab.advance(step_s)
                t += step_s
        sampler.close()
        return snaps, ident
    finally:
        gpu.disconnect()


def _v(snap: Snapshot, key: str) -> Reading:
    r = snap.get(0, key)
    return r if r is not None else Reading.missing(Status.NOT_AVAILABLE, "not read")


def nvidia_smi_csv() -> str:
    """Return the constructed ``nvidia-smi --query-gpu=... --format=csv -lms 1000`` log."""
    snaps, ident = record(1.0)
    lines = [
        "# title: nvidia-smi CSV log of a simulated H100 running six workload scenarios",
        "# source: constructed by labkit (python -m labkit._dev.traces) from its simulated "
        f"H100-80GB (labkit.gpu.sim, seed 0, driver {ident['driver']}); nvidia-smi CSV "
        "layout per nvidia-smi --help-query-gpu; not a recording of real hardware",
        f"# as_of: {AS_OF}",
        f"# command: nvidia-smi --query-gpu={','.join(SMI_FIELDS)} --format=csv -lms 1000",
        f"# segments: {_segments_line()}",
        "# license: CC0 (constructed data)",
        "timestamp, index, name, pci.bus_id, pstate, utilization.gpu [%], "
        "utilization.memory [%], memory.used [MiB], memory.total [MiB], power.draw [W], "
        "enforced.power.limit [W], temperature.gpu, clocks.sm [MHz], clocks.max.sm [MHz], "
        "clocks_event_reasons.active",
    ]
    for snap in snaps:
        stamp = START + timedelta(seconds=snap.t_s)
        ts = stamp.strftime("%Y/%m/%d %H:%M:%S.") + f"{stamp.microsecond // 1000:03d}"

        def num(key: str, fmt: str, unit: str, scale: float = 1.0, snap: Snapshot = snap
                ) -> str:
            r = _v(snap, key)
            if not r.ok or r.value is None:
                return "[N/A]"
            return f"{r.value * scale:{fmt}}{unit}"

        reasons = _v(snap, "clocks_event_reasons")
        cells = [ts, "0", ident["name"], ident["pci.bus_id"], "P0",
                 num("gpu_util_frac", ".0f", " %", 100),
                 num("mem_copy_util_frac", ".0f", " %", 100),
                 num("fb_used_mib", ".0f", " MiB"), num("fb_total_mib", ".0f", " MiB"),
                 num("power_usage_w", ".2f", " W"), num("power_limit_w", ".2f", " W"),
                 num("gpu_temp_c", ".0f", ""), num("sm_clock_mhz", ".0f", " MHz"),
                 num("max_sm_clock_mhz", ".0f", " MHz"),
                 f"0x{int(reasons.value or 0):016x}" if reasons.ok else "[N/A]"]
        lines.append(", ".join(cells))
    return "\n".join(lines) + "\n"


def dcgm_exporter_text(step_s: float = 1.25) -> str:
    """Return the constructed dcgm-exporter scrapes (``curl -s host:9400/metrics``, repeated)."""
    snaps, ident = record(step_s)
    labels = (f'gpu="0",UUID="{ident["uuid"]}",pci_bus_id="{ident["pci.bus_id"]}",'
              f'device="nvidia0",modelName="{ident["name"]}",Hostname="{HOST}"')
    lines = [
        "# title: dcgm-exporter scrapes of a simulated H100 running six workload scenarios",
        "# source: constructed by labkit (python -m labkit._dev.traces) from its simulated "
        f"H100-80GB (labkit.gpu.sim, seed 0, driver {ident['driver']}); Prometheus text as "
        "dcgm-exporter prints it (README, default-counters.csv, d5e5f51); not a recording of "
        "real hardware",
        f"# as_of: {AS_OF}",
        f"# command: while sleep {step_s:g}; do curl -s localhost:9400/metrics; done "
        "(HELP/TYPE lines kept for the first scrape only)",
        f"# interval_s: {step_s:g}",
        f"# segments: {_segments_line()}",
        "# license: CC0 (constructed data)",
    ]
    for k, snap in enumerate(snaps):
        for field, key, fmt, help_text in DCGM_FIELDS:
            if k == 0:
                lines += [f"# HELP {field} {help_text}", f"# TYPE {field} gauge"]
            r = _v(snap, key)
            if key == "xid":
                value = f"{int(r.value or 0)}"
            elif not r.ok or r.value is None:
                # DCGM_INT64_BLANK (0x7ffffffffffffff0) + 2 = not supported; + 0 = blank (a
                # profiling field before its first sample period ends)
                value = str(0x7FFFFFFFFFFFFFF0 + (2 if r.status is Status.NOT_SUPPORTED else 0))
            elif fmt == "int":
                value = f"{r.value:.0f}"
            elif fmt == "pct":
                value = f"{r.value * 100:.0f}"
            elif fmt == "w":
                value = f"{r.value:.3f}"
            else:
                value = f"{r.value:.6f}"
            lines.append(f"{field}{{{labels}}} {value}")
    return "\n".join(lines) + "\n"


FILES = {
    "sim-h100_nvidia-smi_scenarios.csv": nvidia_smi_csv,
    "sim-h100_dcgm-exporter_scenarios.prom": dcgm_exporter_text,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Write (or ``--check``) the constructed traces."""
    parser = argparse.ArgumentParser(prog="python -m labkit._dev.traces", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args(argv)
    from labkit.data import data_dir

    folder = data_dir() / "traces"
    folder.mkdir(parents=True, exist_ok=True)
    bad = 0
    for name, build in FILES.items():
        text = build()
        path: Path = folder / name
        if args.check:
            same = path.exists() and path.read_text(encoding="utf-8") == text
            print(f"{name}: {'ok' if same else 'DIFFERS'}")
            bad += not same
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path} ({len(text):,} bytes)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
