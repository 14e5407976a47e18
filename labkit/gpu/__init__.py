"""The lab GPU: one NVML path (pynvml), over the real libnvidia-ml or a simulated one.

Lessons talk to the GPU through exactly one API, pynvml's::

    import labkit.gpu as gpu
    nv = gpu.connect()                 # pynvml, initialised ("auto": real GPU, else simulated)
    h = nv.nvmlDeviceGetHandleByIndex(0)
    nv.nvmlDeviceGetPowerUsage(h)      # [mW]
    gpu.status()                       # kind "real"/"sim", name, nvml_version, reason

``connect(spec)``: ``"auto"`` (default; ``$LABKIT_GPU`` overrides it), ``"real"``, or
``"sim:<model>[,<model>...]"`` with the short names of ``data/gpus/``: A30, A100-40GB,
A100-80GB, H100-80GB, H100-PCIE, H100-NVL, H200, B200, RTX-PRO-6000 (MIG boards) and L40S (no
MIG); ``sim:8xH100-80GB`` for eight alike. On a machine without the NVIDIA driver, ``"auto"``
falls back to ``sim:H100-80GB`` and ``status().reason`` says why.

With a simulated lab, :func:`simulator` returns its control API (workloads, faults, clock):
see :mod:`labkit.gpu.sim`; it applies the pure MIG placement rules of
:mod:`labkit.mig.placement` to the typed GPU models of :mod:`labkit.gpumodels`. Tables like
``nvidia-smi -L`` / ``mig -lgip`` / ``-lgipp`` / ``-lgi`` / ``-lci``: :mod:`labkit.gpu.smi` and
``python -m labkit.gpu`` (which also has nvidia-smi's MIG verbs ``-mig``, ``mig -cgi/-dci/-dgi``
for the simulated lab: :mod:`labkit.gpu.smi_mig`). A read-only capture for real hardware:
``python -m labkit.gpu.capture``. With ``LABKIT_GPU=sim:...`` all processes share one simulated
lab (:mod:`labkit.gpu.sim.shared`), nvitop and gpustat included (:mod:`labkit.gpu.sim.hook`).

Only this package imports pynvml, and only on first use.

Used in: every lesson's banner; lessons 01 (observation) and 02 (MIG)
"""

from labkit.gpu.backend import GpuStatus, connect, disconnect, parse_spec, simulator, status

__all__ = ["GpuStatus", "connect", "disconnect", "parse_spec", "simulator", "status"]
