"""Record a short, read-only telemetry trace of a real GPU for lesson 01's replay.

Run on a machine with an NVIDIA GPU while *you* run a workload (a training script, a one-thread
spin kernel, an NCCL job with a late rank, ...); labkit only reads::

    python -m labkit._dev.record_trace --label training --seconds 180 --hz 10
    python -m labkit._dev.record_trace --label tiny_kernel --gpus 0 --out /tmp/traces

It calls ``nvmlDeviceGet*`` and the GPM sampling functions through labkit's sampler (util.gpu
and the GPM metrics side by side, every field failing on its own) and never changes a setting:
no clocks, power limits, MIG mode or processes. The output is labkit's tidy CSV
(``labkit.observe.export_csv``) with ``# source``, ``# as_of``, GPU, driver, NVML version,
rate and label, named ``<date>_<gpu>_<driver>_<label>.csv``; put it in ``data/traces/`` and the
lesson's replay lists it next to the constructed traces.

``--allow-sim`` records the simulated GPU instead (a dry run of this script; the file then says
"simulated" in its source line).

Used in: data/traces/ (real traces for notebooks/01_observe.ipynb)
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from labkit import observe
from labkit.gpu.sampler import Sampler

#: Longest recording (a few minutes is the intent; the file stays small). [s]
MAX_SECONDS = 1800.0


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-")[:40] or "gpu"


def record(label: str, seconds: float, hz: float, out: Path, *, gpus: Sequence[int] | None = None,
           allow_sim: bool = False) -> Path:
    """Record ``seconds`` of telemetry at ``hz`` and write the tidy CSV; return its path.

    Raises
    ------
    ValueError
        For a bad label, duration or rate, or no real GPU without ``allow_sim``.
    """
    import labkit.gpu as gpu

    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,40}", label):
        raise ValueError(f"label must be 1-40 letters, digits, '_', '.', '-', got {label!r}")
    if not 0 < seconds <= MAX_SECONDS:
        raise ValueError(f"seconds must be in (0, {MAX_SECONDS:g}], got {seconds!r}")
    try:
        nv = gpu.connect("auto" if allow_sim else "real")
    except Exception as err:  # the NVML error of a machine without a driver
        raise ValueError(f"no real GPU ({err}); use --allow-sim for a dry run") from err
    status = gpu.status()
    if status.kind != "real" and not allow_sim:
        raise ValueError(f"no real GPU ({status.reason}); use --allow-sim for a dry run")
    sampler = Sampler(nv, capacity=int(seconds * hz) + 10, slow_interval_s=1.0)
    sampler.set_rate(hz)
    ticks = max(1, round(seconds * hz))
    sampler.run(ticks, rate_hz=hz, sleep=time.sleep)
    sampler.close()
    frame = sampler.history.frame()
    if gpus is not None:
        frame = frame[frame["gpu"].isin(list(gpus))]
    kind = "real" if status.kind == "real" else "simulated"
    names = {d.index: d.name for d in sampler.devices}
    shown = ", ".join(f"GPU {g} {names.get(g, '')}" for g in sorted(set(frame["gpu"])))
    text = observe.export_csv(
        frame,
        source=(f"recorded read-only with python -m labkit._dev.record_trace on a {kind} "
                f"{status.name} (driver {status.driver_version}, NVML {status.nvml_version}); "
                f"{shown}; workload run by the operator: {label}"),
        as_of=time.strftime("%Y-%m-%d"),
        extra={"title": f"{kind} GPU telemetry, workload {label}", "gpu": status.name,
               "driver": status.driver_version, "nvml": status.nvml_version,
               "rate_hz": f"{hz:g}", "segments": f"{label}@0",
               "license": "CC0 (labkit recording)"})
    out.mkdir(parents=True, exist_ok=True)
    name = (f"{time.strftime('%Y-%m-%d')}_{_slug(status.name)}_{_slug(status.driver_version)}"
            f"_{label}{'' if kind == 'real' else '_sim'}.csv")
    path = out / name
    path.write_text(text, encoding="utf-8")
    return path


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: see the module docstring."""
    from labkit.data import data_dir

    parser = argparse.ArgumentParser(prog="python -m labkit._dev.record_trace",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--label", required=True, help="the workload you run (training, ...)")
    parser.add_argument("--seconds", type=float, default=180.0)
    parser.add_argument("--hz", type=float, default=10.0, help="sampling rate (<= 10)")
    parser.add_argument("--gpus", type=int, nargs="*", help="GPU indices to keep (default all)")
    parser.add_argument("--out", type=Path, default=None, help="folder (default data/traces)")
    parser.add_argument("--allow-sim", action="store_true", help="dry run on the simulated GPU")
    args = parser.parse_args(argv)
    try:
        path = record(args.label, args.seconds, args.hz, args.out or data_dir() / "traces",
                      gpus=args.gpus, allow_sim=args.allow_sim)
    except ValueError as err:
        print(f"record_trace: {err}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
