"""A simulated lab GPU that sits under pynvml in place of libnvidia-ml.

Lessons never import this package: they call ``labkit.gpu.connect()`` and use pynvml. Tests and
the lessons' *scenario controls* (start a workload, pull a GPU off the bus) use the control API
of the :class:`SimulatedLab` returned by ``labkit.gpu.simulator()``.

Quick tour (every call below is outside the NVML surface)::

    import labkit.gpu as gpu
    nv = gpu.connect("sim:H100-80GB", clock="virtual")   # pynvml, on a simulated H100
    lab = gpu.simulator()

    # time: "virtual" stands still until advance(); "wall" (default) runs with real time
    lab.advance(30.0); lab.now()

    # workloads: scenarios students switch between (labkit.gpu.sim.SCENARIOS)
    w = lab.start("training", device=0)          # also attaches a process (w.pid)
    lab.stop(w); lab.stop(device=0)              # one, or all on a GPU
    lab.start("tiny_kernel", 0, gpu_instance_id=1)   # MIG: run on a MIG device
    lab.add_process(0, used_memory_mib=512)      # a bare process holding the GPU
    lab.remove_process(pid)

    # settings a teacher (or a scenario) changes
    lab.set_power_limit(0, 500)                  # [W]; readings hit SwPowerCap sooner
    lab.set_ambient(0, 45)                       # hotter inlet air [degC]
    lab.set_mig_rights(False)                    # MIG changes -> NVMLError_NoPermission
    lab.set_reset_possible(False)                # a VM: MIG enable stays pending
    lab.set_legacy_mig_queries(True)             # pre-R550: profile queries need MIG on
    lab.reset_gpu(0)                             # applies pending MIG mode, clears "lost"
    lab.pin(0, "power_usage_mw", 4034)           # exact readings for unit exercises

    # faults (each surfaces as the matching pynvml exception)
    lab.inject("nvmlDeviceGetPowerUsage", "NotSupported", device=1)    # per device, per call
    lab.inject("nvmlDeviceGetTemperature", "Unknown", count=3)         # the next 3 calls
    lab.inject("nvmlDeviceGetFieldValues", "NotSupported", field=138)  # one field entry
    lab.remove_function("nvmlGpmSampleGet")      # NVMLError_FunctionNotFound (old driver)
    lab.fail_init("DriverNotLoaded")             # next nvmlInit fails (or LibraryNotFound,
                                                 # LibRmVersionMismatch)
    lab.apply_preset("consumer")                 # or "vgpu", "old_driver"
    lab.xid(2, 79, at_s=30)                      # GPU 2 falls off the bus at t = 30 s
    lab.ecc_error(0, uncorrected=True)           # counters, DBE event, pending row remap
    lab.set_call_latency(0.02)                   # every NVML call costs 20 ms
    lab.clear_faults()

Defaults: as freshly installed (MIG disabled, no instances, no processes) with the right to
change MIG, so ``nvmlDeviceSetMigMode(h, 1)`` takes effect at once; profile and placement
queries answer with MIG off (R550+ drivers).

One lab for many processes: with ``LABKIT_GPU=sim:<models>`` (wall clock, outside voila)
``connect()`` returns a :class:`~labkit.gpu.sim.shared.SharedLab` whose state (MIG layout,
workloads with their real pids, faults) every process of the lab shares through a locked state
file, and the ``labkit_sim.pth`` hook (:mod:`~labkit.gpu.sim.hook`) puts it under pynvml for
unmodified tools (nvitop, gpustat, nvdashboard). ``LABKIT_SIM_TRACE=<file>`` lists the NVML
calls a process makes.

Modules: :mod:`~labkit.gpu.sim.activity` (scenarios), :mod:`~labkit.gpu.sim.device`
(physics and state of one GPU), :mod:`~labkit.gpu.sim.lib` (the C functions: a package of
mixins, ``base``, ``device_api``, ``mig_api``, ``gpm_api``), :mod:`~labkit.gpu.sim.tools_api`
(the calls monitoring tools add), :mod:`~labkit.gpu.sim.lab` (the lab: clock and plumbing) with
:mod:`~labkit.gpu.sim.lab_controls` (processes, workloads, settings) and
:mod:`~labkit.gpu.sim.lab_faults` (injected errors, presets, Xids), :mod:`~labkit.gpu.sim.state`
(the lab as ``state.json`` data), :mod:`~labkit.gpu.sim.shared` (the shared lab: file, lock,
pids), :mod:`~labkit.gpu.sim.hook` (the pynvml hook). MIG rules come from
:mod:`labkit.mig.placement`, GPU figures from ``data/gpus/``.

Used in: lessons 01 (observation) and 02 (MIG), and the tests of labkit.gpu
"""

from labkit.gpu.sim.activity import SCENARIOS, Scenario
from labkit.gpu.sim.device import Workload
from labkit.gpu.sim.lab import PRESETS, READINGS, SimulatedLab, error_code

__all__ = ["PRESETS", "READINGS", "SCENARIOS", "Scenario", "SimulatedLab", "Workload",
           "error_code"]
