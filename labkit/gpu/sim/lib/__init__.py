"""The simulated libnvidia-ml: functions with the C API's names, taking ctypes arguments.

pynvml's own wrappers call these exactly as they would call ``libnvidia-ml.so.1`` (see
``labkit.gpu.nvml``): scalars arrive as ints or ctypes values, out-parameters as ``byref(...)``,
caller buffers as ctypes arrays (or ``None`` to ask for a count), handles as opaque pointers
(the address of an object the simulator keeps alive). Each function returns an ``NVML_*`` code;
pynvml raises the matching ``NVMLError_*`` subclass. A function missing here surfaces as
``NVMLError_FunctionNotFound``, as with an older driver.

Semantics follow ``nvml.h`` (NVML API version 13) as summarised in the docstrings below; where
the header is silent the choice is marked **inferred**.

A package along the seams of the old ``labkit/gpu/sim/lib.py``; :class:`NvmlApi` is the union
of its parts:

- :mod:`labkit.gpu.sim.lib.base` -- :class:`NvmlBase` (the lab's attributes, handle resolution),
  the ctypes out-parameter helpers, :class:`EventSet`, :class:`GpmSample`;
- :mod:`labkit.gpu.sim.lib.device_api` -- system, device identity, memory and processes, power,
  clocks, utilization, health, events;
- :mod:`labkit.gpu.sim.lib.mig_api` -- MIG mode, GPU-instance profiles, GPU and compute
  instances, MIG devices;
- :mod:`labkit.gpu.sim.lib.gpm_api` -- GPM samples and metrics.

Used in: lessons 01 (observation) and 02 (MIG), through labkit.gpu
"""

from __future__ import annotations

from labkit.gpu.sim.lib.base import (
    NO_INIT_FUNCTIONS,
    EventSet,
    NvmlBase,
)
from labkit.gpu.sim.lib.device_api import (
    DeviceApi,
)
from labkit.gpu.sim.lib.gpm_api import (
    GpmApi,
)
from labkit.gpu.sim.lib.mig_api import (
    MigApi,
)


class NvmlApi(DeviceApi, MigApi, GpmApi):
    """The C functions; mixed into :class:`labkit.gpu.sim.lab.SimulatedLab`, which holds the state.

    The attributes used here (``devices``, ``now()``, ``driver_version``, ...) are set by the
    lab; see that class for the control API and :class:`NvmlBase` for the attributes.
    """


__all__ = [
    "NO_INIT_FUNCTIONS",
    "EventSet",
    "NvmlApi",
    "NvmlBase",
]
