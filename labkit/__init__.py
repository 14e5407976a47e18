"""labkit: the school mini AI datacenter lab.

Pure models (no widgets, no I/O) live in top-level modules (``labkit.goodput``, ...); widgets in
``labkit.ui``; file loading in ``labkit.data``; the lab GPU (NVML, real or simulated) in
``labkit.gpu``. Importing ``labkit`` itself is cheap: nothing heavy is imported here.
"""

__version__ = "0.1.0"
