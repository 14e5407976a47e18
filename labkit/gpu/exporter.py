"""``python -m labkit.gpu.exporter``: a dcgm-exporter-compatible ``/metrics`` endpoint.

Serves the lab GPUs (the real ones through NVML, or the simulated lab with
``LABKIT_GPU=sim:...``) in dcgm-exporter's Prometheus format, so a school's Prometheus and the
operator's Grafana dashboard (Grafana catalog 12239, which queries these family names) can watch
the class lab exactly as they watch real GPUs::

    python -m labkit.gpu.exporter                         # :9400 on 127.0.0.1, collect every 1 s
    python -m labkit.gpu.exporter --host 0.0.0.0 --port 9400 --interval 5
    LABKIT_GPU=sim:8xH100-80GB python -m labkit.gpu.exporter --sim-workload training
    LABKIT_GPU=sim:2xH100-80GB python -m labkit.gpu.exporter --sim-workload 0=training

How it reads: one :class:`labkit.gpu.sampler.Sampler` (the lesson's own NVML reader and metric
catalog, :data:`labkit.observe.CATALOG`) polls every ``--interval`` seconds on a background
thread, like dcgm-exporter's collect interval (``-c``; its default is 30 s, ``pkg/cmd/app.go``);
a scrape only formats the latest readings, so scrapes are cheap and never call NVML. Two
families the catalog does not read are added on the same thread: ``DCGM_FI_DEV_MEM_CLOCK``
(``nvmlDeviceGetClockInfo(h, NVML_CLOCK_MEM)``), the rest of dcgm-exporter's default counters
(encoder/decoder utilization, rows remapped for correctable errors, NVLink bandwidth total, PCIe
throughput; :data:`_EXTRA_FAMILIES`) and, for MIG devices, their memory
(``nvmlDeviceGetMemoryInfo`` on the MIG device handle) and profiling metrics (GPM of the GPU
instance, ``nvmlGpmMigSampleGet``; Hopper and newer), as dcgm-exporter reports DCP metrics per
GPU instance. ``DCGM_FI_DEV_FB_FREE`` is
``total - used`` of the same ``nvmlDeviceGetMemoryInfo`` reading.

A reading NVML could not give (NotSupported, NoPermission, GpuIsLost, GPM warming up, ...) is
left out of the scrape: that series is absent, the endpoint never fails. (dcgm-exporter itself
prints DCGM's blank sentinel, e.g. ``9223372036854775794``, which every consumer must then
filter; absence is what a PromQL query treats as "no data".)

Format (dcgm-exporter ``internal/pkg/rendermetrics``, the ``gpuMetricsFormat`` template, and
``etc/default-counters.csv`` / ``etc/dcp-metrics-included.csv`` for names, types and help,
https://github.com/NVIDIA/dcgm-exporter, read at 00d6d34 / 084a245)::

    DCGM_FI_DEV_SM_CLOCK{gpu="0",UUID="GPU-...",pci_bus_id="00000000:01:00.0",device="nvidia0",
        modelName="NVIDIA H100 80GB HBM3",Hostname="lab1",DCGM_FI_DRIVER_VERSION="580.65.06"} 1980

MIG devices add ``GPU_I_PROFILE`` (``"1g.10gb"``) and ``GPU_I_ID``. Units are DCGM's: percent
for ``DCGM_FI_DEV_GPU_UTIL``, 0-1 ratios for ``DCGM_FI_PROF_*``, W, mJ, MiB, MHz, degrees C,
bytes/s for ``DCGM_FI_PROF_PCIE_*_BYTES``. The endpoint is written by ``prometheus_client``
(a custom collector). dcgm-exporter types its counters ``# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION
counter`` with samples named exactly the family (no ``_total``); prometheus_client 0.26's text
writer (``exposition.generate_latest``) renames a counter family to ``<name>_total`` in its
HELP/TYPE lines, so the collector yields counters untyped and :func:`exposition` writes their
TYPE line as dcgm-exporter does. ``/metrics`` is served in the text format 0.0.4 only (as
dcgm-exporter); any method but GET/HEAD gets 405.

Used in: notebooks/01_observe.ipynb (lesson 01's live Prometheus source), tests, benchmarks
"""

from __future__ import annotations

import argparse
import logging
import signal
import socket
import socketserver
import sys
import threading
import time
import wsgiref.simple_server
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import Metric
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.registry import Collector

from labkit.gpu import nvml
from labkit.gpu.exporter_devices import (
    MigDevice,
    MigGpm,
    extra_values,
    identity,
    mig_devices,
)
from labkit.gpu.sampler import Sampler
from labkit.observe import CATALOG, Reading, Snapshot

__all__ = [
    "DEFAULT_PORT",
    "FAMILIES",
    "DcgmCollector",
    "Exporter",
    "Family",
    "counter_families",
    "exposition",
    "main",
    "parse_sim_workloads",
]

#: dcgm-exporter's default listen port (``-a :9400``, ``pkg/cmd/app.go``).
DEFAULT_PORT = 9400
#: Collect interval bounds: the Sampler's fastest rate (10 Hz) and one hour. [s]
MIN_INTERVAL_S = 0.1
MAX_INTERVAL_S = 3600.0


@dataclass(frozen=True)
class Family:
    """One exported metric family.

    Attributes
    ----------
    name : str
        The DCGM field name dcgm-exporter prints (``DCGM_FI_DEV_GPU_UTIL``).
    kind : {"gauge", "counter"}
        Its type in dcgm-exporter's counters CSV.
    help : str
        The help text (the CSV's, where the field is there).
    metric : str
        The :data:`labkit.observe.CATALOG` key it is read from, or an exporter-only key
        (``"mem_clock_mhz"``, ``"fb_free_mib"``).
    scale : float
        ``dcgm_value = labkit_value * scale`` (the inverse of ``Metric.dcgm_scale``).
    """

    name: str
    kind: str
    help: str
    metric: str
    scale: float = 1.0


#: Help texts and types of dcgm-exporter's ``etc/default-counters.csv`` and
#: ``etc/dcp-metrics-included.csv``; fields in neither file get the DCGM field description
#: (``dcgm_fields.h``, DCGM 4.6.0).
_HELP: Mapping[str, tuple[str, str]] = MappingProxyType({
    "DCGM_FI_DEV_SM_CLOCK": ("gauge", "SM clock frequency (in MHz)."),
    "DCGM_FI_DEV_MEM_CLOCK": ("gauge", "Memory clock frequency (in MHz)."),
    "DCGM_FI_DEV_MEMORY_TEMP": ("gauge", "Memory temperature (in C)."),
    "DCGM_FI_DEV_GPU_TEMP": ("gauge", "GPU temperature (in C)."),
    "DCGM_FI_DEV_POWER_USAGE": ("gauge", "Power draw (in W)."),
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": (
        "counter", "Total energy consumption since boot (in mJ)."),
    "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": ("counter", "Total number of PCIe retries."),
    "DCGM_FI_DEV_GPU_UTIL": ("gauge", "GPU utilization (in %)."),
    "DCGM_FI_DEV_MEM_COPY_UTIL": ("gauge", "Memory utilization (in %)."),
    "DCGM_FI_DEV_XID_ERRORS": ("gauge", "Value of the last XID error encountered."),
    "DCGM_FI_DEV_FB_FREE": ("gauge", "Framebuffer memory free (in MiB)."),
    "DCGM_FI_DEV_FB_USED": ("gauge", "Framebuffer memory used (in MiB)."),
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": ("counter", "Total number of double-bit volatile ECC errors."),
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": (
        "counter", "Number of remapped rows for uncorrectable errors"),
    "DCGM_FI_DEV_ROW_REMAP_FAILURE": ("gauge", "Whether remapping of rows has failed"),
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE": ("gauge", "Ratio of time the graphics engine is active."),
    "DCGM_FI_PROF_SM_ACTIVE": (
        "gauge", "The ratio of cycles an SM has at least 1 warp assigned."),
    "DCGM_FI_PROF_SM_OCCUPANCY": ("gauge", "The ratio of number of warps resident on an SM."),
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": (
        "gauge", "Ratio of cycles the tensor (HMMA) pipe is active."),
    "DCGM_FI_PROF_DRAM_ACTIVE": (
        "gauge", "Ratio of cycles the device memory interface is active sending or receiving "
                 "data."),
    "DCGM_FI_PROF_PCIE_TX_BYTES": (
        "gauge", "The rate of data transmitted over the PCIe bus - including both protocol "
                 "headers and data payloads - in bytes per second."),
    "DCGM_FI_PROF_PCIE_RX_BYTES": (
        "gauge", "The rate of data received over the PCIe bus - including both protocol "
                 "headers and data payloads - in bytes per second."),
    "DCGM_FI_DEV_CLOCKS_EVENT_REASONS": (
        "gauge", "Current clock event reasons (bitmask of DCGM_CLOCKS_EVENT_REASON_*)."),
    "DCGM_FI_DEV_FB_TOTAL": ("gauge", "Total framebuffer memory (in MiB)."),
    "DCGM_FI_DEV_ENFORCED_POWER_LIMIT": ("gauge", "Effective power limit (in W)."),
    "DCGM_FI_DEV_FAN_SPEED": ("gauge", "Fan speed (in %)."),
    "DCGM_FI_DEV_MAX_SM_CLOCK": ("gauge", "Maximum SM clock (in MHz)."),
    "DCGM_FI_DEV_PCIE_TX_THROUGHPUT": (
        "counter", "Total number of bytes transmitted through PCIe TX (in KB) via NVML."),
    "DCGM_FI_DEV_PCIE_RX_THROUGHPUT": (
        "counter", "Total number of bytes received through PCIe RX (in KB) via NVML."),
    "DCGM_FI_DEV_ENC_UTIL": ("gauge", "Encoder utilization (in %)."),
    "DCGM_FI_DEV_DEC_UTIL": ("gauge", "Decoder utilization (in %)."),
    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS": (
        "counter", "Number of remapped rows for correctable errors"),
    "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL": (
        "counter", "Total number of NVLink bandwidth counters for all lanes"),
})
#: Families of ``etc/default-counters.csv`` (NVIDIA/dcgm-exporter @00d6d34) beyond the metric
#: catalog, each with the exporter-only key it is read into (:meth:`DcgmCollector.on_snapshot`)
#: or the catalog key of the same NVML reading. ``DCGM_FI_DEV_VGPU_LICENSE_STATUS`` is left
#: out: the lab has no vGPU (dcgm-exporter omits n/a families too).
_EXTRA_FAMILIES: tuple[tuple[str, str], ...] = (
    ("DCGM_FI_DEV_PCIE_TX_THROUGHPUT", "pcie_tx_kb_per_s"),  # nvmlDeviceGetPcieThroughput
    ("DCGM_FI_DEV_PCIE_RX_THROUGHPUT", "pcie_rx_kb_per_s"),
    ("DCGM_FI_DEV_ENC_UTIL", "enc_util_pct"),               # nvmlDeviceGetEncoderUtilization
    ("DCGM_FI_DEV_DEC_UTIL", "dec_util_pct"),               # nvmlDeviceGetDecoderUtilization
    ("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "remapped_rows_correctable"),
    ("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "nvlink_bandwidth_total_kib"),
)


def _families() -> tuple[Family, ...]:
    out = []
    for m in CATALOG.values():
        if m.dcgm_field is None or m.dcgm_field not in _HELP:
            continue
        kind, text = _HELP[m.dcgm_field]
        out.append(Family(m.dcgm_field, kind, text, m.key, 1.0 / m.dcgm_scale))
        if m.key == "fb_used_mib":
            kind, text = _HELP["DCGM_FI_DEV_FB_FREE"]
            out.append(Family("DCGM_FI_DEV_FB_FREE", kind, text, "fb_free_mib"))
        if m.key == "sm_clock_mhz":
            kind, text = _HELP["DCGM_FI_DEV_MEM_CLOCK"]
            out.append(Family("DCGM_FI_DEV_MEM_CLOCK", kind, text, "mem_clock_mhz"))
    for name, key in _EXTRA_FAMILIES:
        kind, text = _HELP[name]
        out.append(Family(name, kind, text, key))
    return tuple(out)


#: Every family the exporter serves: catalog order, then :data:`_EXTRA_FAMILIES` (33 on a GPU
#: that supports them all).
FAMILIES: tuple[Family, ...] = _families()

#: Labels of every series, in dcgm-exporter's order; MIG devices add ``GPU_I_PROFILE`` and
#: ``GPU_I_ID`` after ``modelName``; ``DCGM_FI_DRIVER_VERSION`` is dcgm-exporter's label field.
LABELS: tuple[str, ...] = ("gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname",
                           "DCGM_FI_DRIVER_VERSION")
MIG_LABELS: tuple[str, ...] = ("gpu", "UUID", "pci_bus_id", "device", "modelName",
                               "GPU_I_PROFILE", "GPU_I_ID", "Hostname", "DCGM_FI_DRIVER_VERSION")
_log = logging.getLogger("labkit.gpu")
def counter_families() -> tuple[str, ...]:
    """Return the names of the families dcgm-exporter types ``counter``."""
    return tuple(f.name for f in FAMILIES if f.kind == "counter")


def exposition(registry: CollectorRegistry) -> bytes:
    """Return ``registry``'s text exposition (format 0.0.4) with dcgm-exporter's counter types.

    prometheus_client writes each counter family untyped here (see the module docstring); its
    ``# TYPE <name> untyped`` line becomes ``# TYPE <name> counter`` for every name of
    :func:`counter_families`, samples unchanged (no ``_total``), as dcgm-exporter prints them.
    """
    text = bytes(generate_latest(registry))
    for name in counter_families():
        text = text.replace(f"# TYPE {name} untyped\n".encode(),
                            f"# TYPE {name} counter\n".encode())
    return text


class _ThreadingWSGIServer(socketserver.ThreadingMixIn, wsgiref.simple_server.WSGIServer):
    daemon_threads = True


class _QuietHandler(wsgiref.simple_server.WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Do not log every scrape."""


class DcgmCollector(Collector):
    """A ``prometheus_client`` collector of the latest readings, in dcgm-exporter's format.

    Parameters
    ----------
    sampler : labkit.gpu.sampler.Sampler
        Polled elsewhere (:class:`Exporter` runs it); only its ``history.latest`` is read here.
    nv : module
        The NVML module (``labkit.gpu.connect()``), for the identity labels read once.
    hostname : str, optional
        The ``Hostname`` label (default: this machine's name, as dcgm-exporter).
    """

    def __init__(self, sampler: Sampler, nv: Any, *, hostname: str | None = None) -> None:
        self.sampler = sampler
        self.nv = nv
        host = socket.gethostname() if hostname is None else hostname
        driver = str(nvml.query(nv.nvmlSystemGetDriverVersion, default=""))
        self.identity: dict[int, dict[str, str]] = {
            g: identity(nv, g, host, driver) for g in sampler.gpus}
        self._extra: dict[int, dict[str, float]] = {}
        self._mig: dict[int, list[MigDevice]] = {}
        self._gpm = MigGpm(nv)
        self._mig_mode: dict[int, bool] = {}
        self._lock = threading.Lock()

    def on_snapshot(self, _snap: Snapshot | None = None) -> None:
        """Read the exporter-only values (memory clock, MIG devices) after a sampler tick.

        Never raises: an unexpected error is logged and the previous values are kept, so the
        sampler thread (which stops on a callback error) keeps the endpoint fresh.
        """
        try:
            self._read_extra()
        except Exception:  # a long-running service: log, keep serving the catalog's metrics
            _log.exception("labkit.gpu.exporter: reading memory clock / MIG devices failed")

    def _read_extra(self) -> None:
        extra: dict[int, dict[str, float]] = {}
        mig: dict[int, list[MigDevice]] = {}
        changed = False
        for g in self.sampler.gpus:
            h, err = nvml.try_query(self.nv.nvmlDeviceGetHandleByIndex, g)
            if h is None or err is not None:
                continue
            extra[g] = extra_values(self.nv, h)
            mode = nvml.query(self.nv.nvmlDeviceGetMigMode, h)
            mig_on = bool(mode) and int(mode[0]) == 1
            # MIG on or off changes what NVML supports for the whole GPU (util.gpu, memory copy
            # util, row remapping: NotSupported under MIG); the sampler remembers NotSupported,
            # so it must ask again when the mode changes
            changed |= self._mig_mode.get(g, mig_on) != mig_on
            self._mig_mode[g] = mig_on
            mig[g] = mig_devices(self.nv, g, h, self.identity[g], self._gpm) if mig_on else []
        self._gpm.keep_only({(g, int(d.labels["GPU_I_ID"])) for g, ds in mig.items() for d in ds})
        with self._lock:
            self._extra, self._mig = extra, mig
        if changed:
            self.sampler.reprobe()

    def _values(self, gpu: int) -> dict[str, float]:
        latest: Mapping[str, Reading] = self.sampler.history.latest(gpu)
        values = {k: float(r.value) for k, r in latest.items()
                  if r.ok and r.value is not None}
        if "fb_used_mib" in values and "fb_total_mib" in values:
            values["fb_free_mib"] = values["fb_total_mib"] - values["fb_used_mib"]
        with self._lock:
            values.update(self._extra.get(gpu, {}))
        return values

    def collect(self) -> Iterator[Metric]:
        """Yield one metric family per :data:`FAMILIES` entry that has at least one sample."""
        per_gpu = {g: self._values(g) for g in self.sampler.gpus}
        with self._lock:
            mig = {g: list(v) for g, v in self._mig.items()}
        for fam in FAMILIES:
            metric = Metric(fam.name, fam.help, "gauge" if fam.kind == "gauge" else "unknown")
            for g, values in per_gpu.items():
                value = values.get(fam.metric)
                if value is None:
                    continue
                self._add(metric, fam, self.identity[g], LABELS, value * fam.scale)
            for devices in mig.values():
                for dev in devices:
                    value = dev.values.get(fam.metric)
                    if value is not None:
                        self._add(metric, fam, dev.labels, MIG_LABELS, value)
            if metric.samples:
                yield metric

    @staticmethod
    def _add(metric: Metric, fam: Family, labels: Mapping[str, str], names: Sequence[str],
             value: float) -> None:
        values = [labels.get(n, "") for n in names]
        value = float(f"{value:.12g}")  # 45 % x 0.01 reads 0.45, not 0.44999999999999996
        metric.add_sample(fam.name, dict(zip(names, values, strict=True)), value)

    def close(self) -> None:
        """Free the MIG GPM samples (after the sampler thread stopped)."""
        self._gpm.close()

    def describe(self) -> list[Metric]:
        """Return nothing: families depend on what the GPUs support (no describe-time reads)."""
        return []


class Exporter:
    """A running exporter: the sampler thread and the HTTP endpoint.

    Parameters
    ----------
    nv : module
        The NVML module (``labkit.gpu.connect()``).
    host : str, default "127.0.0.1"
        Address to listen on (``0.0.0.0`` for a school's Prometheus on another machine).
    port : int, default DEFAULT_PORT
        TCP port (0: any free port; :attr:`port` then says which).
    interval_s : float, default 1.0
        Collect interval (0.1 .. 3600). [s]
    hostname : str, optional
        The ``Hostname`` label.
    clock : callable, default time.monotonic
        The sampler's clock (tests pass the simulated lab's ``lab.now``). [s]

    Raises
    ------
    ValueError
        For an interval outside 0.1 .. 3600 s or a port outside 0 .. 65535.
    OSError
        If the port cannot be bound (in :meth:`start`).
    """

    def __init__(self, nv: Any, *, host: str = "127.0.0.1", port: int = DEFAULT_PORT,
                 interval_s: float = 1.0, hostname: str | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not MIN_INTERVAL_S <= interval_s <= MAX_INTERVAL_S:
            raise ValueError(f"interval must be {MIN_INTERVAL_S} .. {MAX_INTERVAL_S} s, "
                             f"got {interval_s}")
        if not 0 <= port <= 65535:
            raise ValueError(f"port must be 0 .. 65535, got {port}")
        self.host, self.port, self.interval_s = host, port, interval_s
        self.sampler = Sampler(nv, capacity=2, slow_interval_s=interval_s, clock=clock)
        self.collector = DcgmCollector(self.sampler, nv, hostname=hostname)
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(self.collector)
        self._server: Any = None
        self._thread: threading.Thread | None = None

    def collect_once(self) -> None:
        """Poll NVML once and refresh the exporter-only values (tests, first scrape)."""
        self.sampler.poll()
        self.collector.on_snapshot()

    def start(self) -> None:
        """Take a first reading, start sampling and serving (returns at once)."""
        self.collect_once()
        server = wsgiref.simple_server.make_server(
            self.host, self.port, self._wsgi, server_class=_ThreadingWSGIServer,
            handler_class=_QuietHandler)
        thread = threading.Thread(target=server.serve_forever, daemon=True,
                                  name="labkit-exporter-http")
        thread.start()
        self._server, self._thread = server, thread
        self.port = int(server.server_address[1])
        self.sampler.start(1.0 / self.interval_s, max_run_s=None,
                           on_snapshot=self.collector.on_snapshot)

    @property
    def url(self) -> str:
        """The metrics URL."""
        return f"http://{self.host}:{self.port}/metrics"

    def scrape(self) -> bytes:
        """Return what ``/metrics`` would serve now (the text exposition format)."""
        return exposition(self.registry)

    def _wsgi(self, environ: dict[str, Any], start_response: Callable[..., Any]
              ) -> list[bytes]:
        method = environ.get("REQUEST_METHOD", "GET")
        if method not in ("GET", "HEAD"):
            start_response("405 Method Not Allowed", [("Allow", "GET, HEAD"),
                                                      ("Content-Type", "text/plain")])
            return [b"Method Not Allowed\n"]
        body = self.scrape()
        start_response("200 OK", [("Content-Type", CONTENT_TYPE_PLAIN_0_0_4),
                                  ("Content-Length", str(len(body)))])
        return [] if method == "HEAD" else [body]

    def stop(self) -> None:
        """Stop sampling and serving."""
        self.sampler.stop()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None
        self.sampler.close()
        self.collector.close()


def parse_sim_workloads(items: Sequence[str], gpu_count: int) -> list[tuple[int, str]]:
    """Return ``(gpu, scenario)`` pairs of ``--sim-workload`` values.

    ``NAME`` starts the scenario on every GPU; ``G=NAME`` on GPU ``G`` only.

    Raises
    ------
    ValueError
        For an unknown scenario, a GPU index that is not an integer or not in the lab.
    """
    from labkit.gpu.sim import SCENARIOS

    out: list[tuple[int, str]] = []
    for item in items:
        where, sep, name = item.rpartition("=")
        name = name.strip()
        if name not in SCENARIOS:
            raise ValueError(f"--sim-workload {item!r}: unknown scenario; known: "
                             f"{', '.join(SCENARIOS)}")
        if not sep:
            out.extend((g, name) for g in range(gpu_count))
            continue
        try:
            g = int(where)
        except ValueError:
            raise ValueError(f"--sim-workload {item!r}: GPU {where!r} is not an integer") \
                from None
        if not 0 <= g < gpu_count:
            raise ValueError(f"--sim-workload {item!r}: no GPU {g} (the lab has {gpu_count})")
        out.append((g, name))
    return out


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m labkit.gpu.exporter", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="TCP port (default 9400)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1; 0.0.0.0 for the network)")
    parser.add_argument("--interval", type=float, default=1.0,
                        help="collect interval in seconds (default 1; dcgm-exporter: 30)")
    parser.add_argument("--gpu", default="auto",
                        help="auto (default; $LABKIT_GPU overrides), real, or sim:<model>[,...]")
    parser.add_argument("--hostname", default=None, help="Hostname label (default: this host)")
    parser.add_argument("--sim-workload", action="append", default=[], metavar="[GPU=]NAME",
                        help="simulated lab only: start a workload scenario (repeatable)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the exporter until SIGINT/SIGTERM; return the exit status (1: cannot start)."""
    args = _parser().parse_args(argv)
    import pynvml

    from labkit.gpu import backend

    try:
        nv = backend.connect(args.gpu)
        st = backend.status()
        if args.sim_workload:
            if st.kind != "sim":
                raise ValueError("--sim-workload needs the simulated lab (LABKIT_GPU=sim:...)")
            lab = backend.simulator()
            for g, name in parse_sim_workloads(args.sim_workload, st.device_count):
                lab.start(name, device=g)
        exporter = Exporter(nv, host=args.host, port=args.port, interval_s=args.interval,
                            hostname=args.hostname)
        exporter.start()
    except (pynvml.NVMLError, ValueError, OSError) as err:
        print(f"labkit.gpu.exporter: cannot start: {err}", file=sys.stderr)
        return 1
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):  # before saying "serving": a stop is clean
        signal.signal(sig, lambda *_: done.set())
    print(f"# labkit.gpu.exporter: {st.kind} [{st.spec}] {st.name}; serving {exporter.url} "
          f"every {args.interval:g} s", file=sys.stderr, flush=True)
    done.wait()
    exporter.stop()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
