"""Poll NVML at a chosen rate into a :class:`labkit.observe.History` (threads, clocks, handles).

Moved out of the pure :mod:`labkit.observe` model: the sampler owns the polling thread, the
registry of running samplers (stopped at exit) and ``time.monotonic``. A package of two parts:

- :mod:`labkit.gpu.sampler.readers` -- what is read and how: the NVML reader table, the field
  values and GPM metrics, the per-GPU state (:data:`GPM_METRIC_IDS`, rates and limits);
- :mod:`labkit.gpu.sampler.poller` -- :class:`Sampler` (probe, poll, errors, the thread) and
  :func:`stop_all`.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

from labkit.gpu.sampler.poller import (
    Sampler,
    stop_all,
)
from labkit.gpu.sampler.readers import (
    GPM_METRIC_IDS,
    GPM_MIN_INTERVAL_S,
    MAX_EVENTS_PER_TICK,
    MAX_RATE_HZ,
    REPROBE_S,
    SLOW_INTERVAL_S,
    Reader,
)
from labkit.gpu.sampler.readers import (
    _address as _address,  # the tests compare handles by address
)

__all__ = [
    "GPM_METRIC_IDS",
    "GPM_MIN_INTERVAL_S",
    "MAX_EVENTS_PER_TICK",
    "MAX_RATE_HZ",
    "REPROBE_S",
    "SLOW_INTERVAL_S",
    "Reader",
    "Sampler",
    "stop_all",
]
