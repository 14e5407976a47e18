"""Lesson 01 readers: a day of 1 Hz ``nvidia-smi dmon`` on 8 GPUs and a 100 MB ``--query-gpu`` CSV.

Goals (issue 16): >= 1 million rows/s and peak memory < 3x the file. A "row" is one data line of
the log (one GPU at one time), as an operator counts them.

1. dmon: ``nvidia-smi dmon -s pucm -o DT`` layout (date, time, gpu, pwr, gtemp, mtemp, sm, mem,
   enc, dec, jpg, ofa, mclk, pclk, fb, bar1, ccpm), 86,400 s x 8 GPUs = 691,200 lines, the header
   repeated every 200 lines as nvidia-smi prints it; read with ``read_nvidia_smi_dmon``.
2. CSV: ``--query-gpu=timestamp,index,name,pci.bus_id,utilization.gpu,utilization.memory,
   memory.used,memory.total,power.draw,temperature.gpu,clocks.sm --format=csv`` lines until the
   file reaches 100 MB; read with ``read_nvidia_smi_csv``.

Each file is generated here (deterministic values, seeded), written to a temporary folder, and
read in a fresh child process that reports wall seconds and its peak resident memory
(``ru_maxrss``) minus the peak of a child that only imports labkit (the baseline).

The machine is shared (2 cores, other work running): the load average is recorded with the
figures.

Wall seconds on a shared machine are mostly waiting for a core, so the child's CPU seconds
(``cpu_s``, ``rows_per_cpu_s``) are reported too, and tidy rows per second beside lines.

Measured 2026-12-01 on the shared 2-core helper machine (load average 5.5-7.9), full size, the
same generated files (the CSV's date rolling at midnight) read by the code before (commit
9b6b07d) and after the chunked readers:

=====================  ==========================  ==========================
                        before                      after
=====================  ==========================  ==========================
dmon, 691,200 lines    11.3 s (3.7 s CPU),          6.2 s (2.8 s CPU),
(74.6 MiB, 9.7 M       61 k lines/s, 0.86 M tidy    112 k lines/s, 1.57 M tidy
tidy rows)             rows/s; 1,061 MiB = 14.2x    rows/s; 216 MiB = 2.90x
CSV, 800,000 lines     18.0 s (6.0 s CPU),          4.4 s (4.1 s CPU),
(95.4 MiB, 5.6 M       45 k lines/s, 0.31 M tidy    182 k lines/s, 1.28 M tidy
tidy rows)             rows/s; 891 MiB = 9.3x       rows/s; 130 MiB = 1.36x
=====================  ==========================  ==========================

A second run of "after" (load average 2.1, with numpy-parsed dmon time cells): dmon 4.2 s
(2.7 s CPU), 165 k lines/s, 2.31 M tidy rows/s, 213 MiB = 2.86x; CSV 5.8 s (4.0 s CPU),
137 k lines/s, 0.96 M tidy rows/s, 130 MiB = 1.36x (wall time moves with the load; CPU does not).

Memory meets the goal (< 3x); the tidy frame itself is ~21 bytes per reading (float64 time and
value, int8 gpu, four int8 categorical codes: 194 MiB for the dmon day), read in 1 MiB chunks.
Speed meets 1 million rows/s counted as tidy rows (readings), not as log lines: pandas' C parser
alone splits ~60 MB/s of whitespace-separated text here (~1.1 s CPU of the dmon day's 2.8 s).

Run: ``.venv/bin/python benchmarks/bench_observe_readers.py [--csv-mb 100] [--dmon-hours 24]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import save

GPUS = 8
DAY_S = 86_400
DMON_HEADER = ("#Date       Time        gpu   pwr gtemp mtemp    sm   mem   enc   dec   jpg   ofa"
               "  mclk  pclk    fb  bar1  ccpm\n"
               "#YYYYMMDD   HH:MM:SS    Idx     W     C     C     %     %     %     %     %     %"
               "   MHz   MHz    MB    MB    MB\n")
CSV_HEADER = ("timestamp, index, name, pci.bus_id, utilization.gpu [%], utilization.memory [%], "
              "memory.used [MiB], memory.total [MiB], power.draw [W], temperature.gpu, "
              "clocks.sm [MHz]\n")


def write_dmon(path: Path, seconds: int = DAY_S) -> int:
    """Write ``seconds`` (default a day) of 1 Hz dmon on 8 GPUs; return the data lines."""
    lines = 0
    with path.open("w", encoding="utf-8") as fh:
        for s in range(seconds):
            if s % 25 == 0:  # 25 ticks x 8 GPUs = 200 lines per screen
                fh.write(DMON_HEADER)
            hh, mm, ss = s // 3600, s // 60 % 60, s % 60
            for g in range(GPUS):
                busy = (s // 600 + g) % 3 != 0
                pwr, sm, mem, pclk = (650, 97, 40, 1980) if busy else (90, 0, 0, 345)
                fh.write(f" 20250908   {hh:02d}:{mm:02d}:{ss:02d}    {g:3d}   {pwr:3d}"
                         f"    {60 + g:2d}    {70 + g:2d}   {sm:3d}   {mem:3d}"
                         f"     0     0     0     0  2619  {pclk:4d} {70000 + g:5d}     5     0\n")
                lines += 1
    return lines


def write_csv(path: Path, target_bytes: int) -> int:
    """Write --query-gpu CSV lines (8 GPUs per second) until ``target_bytes``; return lines."""
    lines = 0
    with path.open("w", encoding="utf-8") as fh:
        fh.write(CSV_HEADER)
        size, s = len(CSV_HEADER), 0
        start = datetime(2025, 9, 8)
        while size < target_bytes:
            # the date rolls over at midnight, as nvidia-smi's does (100 MB is ~28 h)
            stamp = (start + timedelta(seconds=s)).strftime("%Y/%m/%d %H:%M:%S")
            for g in range(GPUS):
                busy = (s // 600 + g) % 3 != 0
                line = (f"{stamp}.{g * 11:03d}, {g}, "
                        f"NVIDIA H100 80GB HBM3, 00000000:{0x18 + g:02X}:00.0, "
                        f"{100 if busy else 0} %, {40 if busy else 0} %, {70000 + g} MiB, "
                        f"81559 MiB, {650.25 if busy else 90.5} W, {60 + g}, "
                        f"{1980 if busy else 345} MHz\n")
                fh.write(line)
                size += len(line)
                lines += 1
            s += 1
    return lines


def child(kind: str, path: str) -> None:
    """Read one file in this (child) process and print seconds, rows, peak RSS as JSON."""
    from labkit.data import observe as dobs

    start, cpu0 = time.perf_counter(), time.process_time()
    if kind == "dmon":
        log = dobs.read_nvidia_smi_dmon(path, max_bytes=1 << 31)
    elif kind == "csv":
        log = dobs.read_nvidia_smi_csv(path, max_bytes=1 << 31)
    else:
        log = None
    seconds = time.perf_counter() - start
    cpu_s = time.process_time() - cpu0
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": seconds, "cpu_s": cpu_s, "rows": log.rows if log else 0,
                      "tidy_rows": len(log.frame) if log else 0, "peak_rss_kib": peak_kib}))


def measure(kind: str, path: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    out = subprocess.run([sys.executable, __file__, "--child", kind, str(path)], check=True,
                         capture_output=True, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--child", nargs=2)
    parser.add_argument("--csv-mb", type=float, default=100.0)
    parser.add_argument("--dmon-hours", type=float, default=24.0)
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child)
        return 0
    result: dict[str, object] = {"load_before": os.getloadavg(), "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        base = measure("none", Path(tmp))
        result["baseline_peak_rss_mib"] = round(base["peak_rss_kib"] / 1024, 1)
        for kind, write in (("dmon", lambda p: write_dmon(p, int(args.dmon_hours * 3600))),
                            ("csv", lambda p: write_csv(p, int(args.csv_mb * 1e6)))):
            path = Path(tmp) / f"log.{kind}"
            lines = write(path)
            size_mib = path.stat().st_size / (1 << 20)
            got = measure(kind, path)
            extra_mib = (got["peak_rss_kib"] - base["peak_rss_kib"]) / 1024
            result[kind] = {
                "lines": lines, "file_mib": round(size_mib, 1), "seconds": round(got["seconds"], 2),
                "cpu_s": round(got["cpu_s"], 2),
                "rows_per_s": round(got["rows"] / got["seconds"]),
                "rows_per_cpu_s": round(got["rows"] / got["cpu_s"]),
                "tidy_rows_per_s": round(got["tidy_rows"] / got["seconds"]),
                "tidy_rows": got["tidy_rows"],
                "peak_rss_over_baseline_mib": round(extra_mib, 1),
                "memory_x_file": round(extra_mib / size_mib, 2),
                "load_after": os.getloadavg(),
            }
            path.unlink()
    save("observe_readers", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
