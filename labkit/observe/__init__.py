"""Lesson 01 model: what to watch on a GPU, what each reading means, and when it lies.

Pure (stdlib, numpy, pandas): no widgets, no file reading, no threads, no clocks, no NVML. The
sampler that polls NVML lives in :mod:`labkit.gpu.sampler`; the readers of operators' files in
:mod:`labkit.data.observe`. This package holds what they share.

Modules (one idea each): :mod:`~labkit.observe.catalog` (metrics), :mod:`~labkit.observe.readings`
(a value or why it is missing), :mod:`~labkit.observe.signals` (derived signals and alerts),
:mod:`~labkit.observe.history` (ticks and the ring buffer), :mod:`~labkit.observe.logs` (a log
in the tidy frame), :mod:`~labkit.observe.replay` (:class:`Trace`), :mod:`~labkit.observe.wall`
(the wall exercise).

Contents

- :data:`CATALOG` — each metric: the NVML call that reads it, NVML's unit, the DCGM field and
  the nvidia-smi ``--query-gpu`` name operators know, what it means and when it lies.
- :class:`Reading`, :class:`Status` — one value, or why it is missing ("n/a" with a reason).
- :class:`History` — the bounded ring buffer that :class:`labkit.gpu.sampler.Sampler` fills.
- Derived signals: :func:`busy_not_working`, :func:`power_frac`, :func:`sm_clock_frac`,
  :func:`decode_clocks_event_reasons`, :func:`throttle`, :func:`alerts`.
- :class:`LogImport` — a log in the tidy frame (:data:`FRAME_COLUMNS`), as every reader in
  :mod:`labkit.data.observe` returns it; :func:`export_csv` writes a tidy frame back out.
- :class:`Trace` — a tidy frame indexed for replay (value of every metric at time t).
- The "what goes on the wall" exercise: :data:`PANELS`, :data:`SITUATIONS`, :func:`check_wall`.

Units: the tidy frame stores one unit per metric (``Metric.unit``): activity metrics as fractions
0-1 (NVML reports percent, GPM 0-100, DCGM profiling fields 0-1 ratios), power in W (NVML: mW),
energy in J (NVML and DCGM: mJ), memory in MiB (NVML: bytes), clocks in MHz, temperatures in
degrees C, PCIe throughput in KB/s (NVML's unit). Conversions happen once, here.

Sources (primary): NVML API reference and ``nvml.h`` (R580) for calls, units and error codes
(https://docs.nvidia.com/deploy/nvml-api/); NVML GPM functions and metric enums
(https://docs.nvidia.com/deploy/nvml-api/group__nvmlGpmFunctions.html); DCGM 4.6.0
``dcgmlib/dcgm_fields.h`` and ``dcgm_structs.h`` for field ids, units and blank sentinels
(https://github.com/NVIDIA/DCGM); dcgm-exporter README and ``etc/default-counters.csv``
(https://github.com/NVIDIA/dcgm-exporter, d5e5f51); ``nvidia-smi --help-query-gpu`` for the
query names and the CSV format.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

from labkit.observe.catalog import (
    CATALOG,
    DCGM_ALIASES,
    FRAME_COLUMNS,
    SMI_ALIASES,
    Metric,
    reference_table,
)
from labkit.observe.history import History, Snapshot
from labkit.observe.logs import (
    MAX_LOG_LINES,
    MAX_UNPARSED_FRAC,
    LogError,
    LogImport,
    UnparsedRow,
    export_csv,
)
from labkit.observe.readings import Reading, Status, View, status_of_nvml_error
from labkit.observe.replay import Trace
from labkit.observe.signals import (
    BENIGN_REASONS,
    CRITICAL_XIDS,
    POWER_LOW_FRAC,
    SCENARIO_REVEALS,
    SM_ACTIVE_LOW_FRAC,
    UTIL_BUSY_FRAC,
    Alert,
    Signal,
    alerts,
    busy_not_working,
    decode_clocks_event_reasons,
    healthy_gpus,
    power_frac,
    sm_clock_frac,
    throttle,
)
from labkit.observe.wall import (
    PANELS,
    SITUATIONS,
    WALL_MAX_PANELS,
    Situation,
    WallVerdict,
    check_wall,
)

__all__ = [
    "BENIGN_REASONS",
    "CATALOG",
    "CRITICAL_XIDS",
    "DCGM_ALIASES",
    "FRAME_COLUMNS",
    "MAX_LOG_LINES",
    "MAX_UNPARSED_FRAC",
    "PANELS",
    "POWER_LOW_FRAC",
    "SCENARIO_REVEALS",
    "SITUATIONS",
    "SMI_ALIASES",
    "SM_ACTIVE_LOW_FRAC",
    "UTIL_BUSY_FRAC",
    "WALL_MAX_PANELS",
    "Alert",
    "History",
    "LogError",
    "LogImport",
    "Metric",
    "Reading",
    "Signal",
    "Situation",
    "Snapshot",
    "Status",
    "Trace",
    "UnparsedRow",
    "View",
    "WallVerdict",
    "alerts",
    "busy_not_working",
    "check_wall",
    "decode_clocks_event_reasons",
    "export_csv",
    "healthy_gpus",
    "power_frac",
    "reference_table",
    "sm_clock_frac",
    "status_of_nvml_error",
    "throttle",
]

#: Names that left this package in the split (issue 14): where they live now. Importing them
#: here would pull a higher layer into the pure model, so an old import gets a clear error.
_MOVED = {
    **dict.fromkeys(("Sampler", "stop_all", "GPM_MIN_INTERVAL_S", "GPM_METRIC_IDS",
                     "SLOW_INTERVAL_S", "MAX_RATE_HZ", "REPROBE_S", "MAX_EVENTS_PER_TICK"),
                    "labkit.gpu.sampler"),
    **dict.fromkeys(("parse_nvidia_smi_csv", "read_dcgm_exporter", "parse_tidy_csv",
                     "detect_format", "read_log"), "labkit.data.observe"),
}


def __getattr__(name: str) -> object:
    if name in _MOVED:
        raise AttributeError(f"labkit.observe.{name} moved to {_MOVED[name]}.{name} "
                             "(lesson 01 layers: pure model / data readers / gpu sampler)")
    raise AttributeError(f"module 'labkit.observe' has no attribute {name!r}")
