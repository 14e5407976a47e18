"""labkit.gpu.exporter: dcgm-exporter's format from the simulated lab, parsed by
prometheus_client's own text parser (not labkit's), NVML errors -> absent series."""

from __future__ import annotations

import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from labkit.gpu.exporter import FAMILIES, Exporter, main, parse_sim_workloads
from labkit.gpu.sim import SCENARIOS
from tests.conftest import SimFactory

pytestmark = pytest.mark.serial  # timing-bound: make test runs it alone (second tier)

# dcgm-exporter's label set (internal/pkg/rendermetrics gpuMetricsFormat, NVIDIA/dcgm-exporter)
DCGM_LABELS = {"gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname",
               "DCGM_FI_DRIVER_VERSION"}
# Every enabled line of dcgm-exporter's etc/default-counters.csv (NVIDIA/dcgm-exporter @00d6d34)
# but DCGM_FI_DEV_VGPU_LICENSE_STATUS (no vGPU in the lab: n/a, so omitted as dcgm-exporter does)
DEFAULT_COUNTERS = {
    "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_MEM_CLOCK", "DCGM_FI_DEV_MEMORY_TEMP",
    "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
    "DCGM_FI_DEV_PCIE_TX_THROUGHPUT", "DCGM_FI_DEV_PCIE_RX_THROUGHPUT",
    "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL",
    "DCGM_FI_DEV_ENC_UTIL", "DCGM_FI_DEV_DEC_UTIL",
    "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_USED",
    "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
    "DCGM_FI_DEV_ROW_REMAP_FAILURE"}
PROFILING = {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_SM_ACTIVE",
             "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_DRAM_ACTIVE",
             "DCGM_FI_PROF_PCIE_TX_BYTES", "DCGM_FI_PROF_PCIE_RX_BYTES"}


def _samples(exporter: Exporter) -> dict[tuple[str, str], tuple[float, dict[str, str]]]:
    out = {}
    for fam in text_string_to_metric_families(exporter.scrape().decode()):
        for s in fam.samples:
            # prometheus_client's parser names a counter's samples <family>_total; on the wire
            # (and in Prometheus) they are <family>, as dcgm-exporter writes them
            name = fam.name if s.name == f"{fam.name}_total" else s.name
            out[(name, s.labels.get("gpu", "") + "/" + s.labels.get("GPU_I_ID", ""))] = (
                s.value, s.labels)
    return out


def _ready(sim: SimFactory, spec: str = "sim:2xH100-80GB", **kw: Any) -> tuple[Any, Any, Exporter]:
    nv, lab = sim(spec, **kw)
    lab.start("training", device=0)
    lab.advance(5.0)  # past the 1 s utilization / power windows
    exporter = Exporter(nv, port=0, clock=lab.now, hostname="lab1")
    exporter.collect_once()
    lab.advance(1.0)
    exporter.collect_once()  # the second GPM sample: profiling fields now have values
    return nv, lab, exporter


def test_families_cover_dcgm_exporter_defaults_and_profiling() -> None:
    names = {f.name for f in FAMILIES}
    assert DEFAULT_COUNTERS <= names and PROFILING <= names
    assert len(names) == len(FAMILIES) >= 20
    kinds = {f.name: f.kind for f in FAMILIES}
    assert kinds["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"] == "counter"
    assert kinds["DCGM_FI_DEV_GPU_UTIL"] == "gauge"


def test_scrape_values_labels_and_units_of_a_training_gpu(sim: SimFactory) -> None:
    nv, _lab, exporter = _ready(sim)
    got = _samples(exporter)
    train = SCENARIOS["training"].phases[0].values
    h0 = nv.nvmlDeviceGetHandleByIndex(0)
    mem = nv.nvmlDeviceGetMemoryInfo(h0)
    value, labels = got[("DCGM_FI_DEV_GPU_UTIL", "0/")]
    assert value == 100.0  # percent, as DCGM
    assert set(labels) == DCGM_LABELS
    assert labels["UUID"] == nv.nvmlDeviceGetUUID(h0)
    assert labels["pci_bus_id"] == nv.nvmlDeviceGetPciInfo(h0).busId
    assert labels["modelName"] == nv.nvmlDeviceGetName(h0)
    assert labels["Hostname"] == "lab1" and labels["device"] == "nvidia0"
    assert got[("DCGM_FI_PROF_SM_ACTIVE", "0/")][0] == train["sm_active"]  # 0-1 ratio
    assert got[("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "0/")][0] == train["tensor_active"]
    assert got[("DCGM_FI_PROF_DRAM_ACTIVE", "0/")][0] == train["dram_active"]
    assert got[("DCGM_FI_DEV_MEM_COPY_UTIL", "0/")][0] == train["mem_copy"] * 100
    assert got[("DCGM_FI_DEV_FB_USED", "0/")][0] == mem.used / 2**20
    assert got[("DCGM_FI_DEV_FB_FREE", "0/")][0] == (mem.total - mem.used) / 2**20
    # W and MHz and mJ, as NVML says in mW / MHz / mJ
    assert got[("DCGM_FI_DEV_POWER_USAGE", "0/")][0] == nv.nvmlDeviceGetPowerUsage(h0) / 1000
    assert got[("DCGM_FI_DEV_MEM_CLOCK", "0/")][0] == nv.nvmlDeviceGetClockInfo(
        h0, nv.NVML_CLOCK_MEM)
    assert got[("DCGM_FI_PROF_PCIE_RX_BYTES", "0/")][0] == train["pcie_rx_kbps"] * 1000
    assert got[("DCGM_FI_DEV_GPU_UTIL", "1/")][0] == 0.0  # GPU 1 idle
    assert got[("DCGM_FI_DEV_XID_ERRORS", "0/")][0] == 0.0
    exporter.stop()


def test_default_counters_beyond_the_catalog_read_nvml(sim: SimFactory) -> None:
    """Encoder/decoder, correctable remapped rows, NVLink total and PCIe throughput: the values
    NVML gives for the same GPU, read here through pynvml's own calls."""
    nv, _lab, exporter = _ready(sim)
    got = _samples(exporter)
    for g in (0, 1):
        h = nv.nvmlDeviceGetHandleByIndex(g)
        assert got[("DCGM_FI_DEV_ENC_UTIL", f"{g}/")][0] == nv.nvmlDeviceGetEncoderUtilization(h)[0]
        assert got[("DCGM_FI_DEV_DEC_UTIL", f"{g}/")][0] == nv.nvmlDeviceGetDecoderUtilization(h)[0]
        assert got[("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", f"{g}/")][0] == \
            nv.nvmlDeviceGetRemappedRows(h)[0]
        links = nv.nvmlDeviceGetFieldValues(h, [nv.NVML_FI_DEV_NVLINK_LINK_COUNT])[0].value.uiVal
        assert links == 18  # H100 SXM5: 18 NVLink 4 links (NVIDIA H100 datasheet)
        fields = [(f, k) for f in (nv.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX,
                                   nv.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX) for k in range(links)]
        total = sum(v.value.ullVal for v in nv.nvmlDeviceGetFieldValues(h, fields))
        assert got[("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", f"{g}/")][0] == total
        assert got[("DCGM_FI_DEV_PCIE_TX_THROUGHPUT", f"{g}/")][0] == \
            nv.nvmlDeviceGetPcieThroughput(h, nv.NVML_PCIE_UTIL_TX_BYTES)
    exporter.stop()


def test_board_without_nvlink_omits_the_nvlink_family(sim: SimFactory) -> None:
    nv, lab = sim("sim:L40S")
    exporter = Exporter(nv, port=0, hostname="lab1", clock=lab.now)
    exporter.collect_once()
    names = {fam.name for fam in text_string_to_metric_families(exporter.scrape().decode())}
    assert "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL" not in names  # n/a: left out, never a blank
    assert "DCGM_FI_DEV_ENC_UTIL" in names
    exporter.stop()


def test_gpu_util_families_come_back_after_mig_is_turned_off(sim: SimFactory) -> None:
    nv, lab = sim("sim:H100-80GB")
    lab.start("training", device=0)
    lab.advance(5.0)
    exporter = Exporter(nv, port=0, hostname="lab1", clock=lab.now)
    exporter.collect_once()
    assert ("DCGM_FI_DEV_GPU_UTIL", "0/") in _samples(exporter)
    h = nv.nvmlDeviceGetHandleByIndex(0)
    lab.stop(device=0)  # MIG mode changes only on an idle GPU
    nv.nvmlDeviceSetMigMode(h, nv.NVML_DEVICE_MIG_ENABLE)
    assert nv.nvmlDeviceGetMigMode(h)[0] == nv.NVML_DEVICE_MIG_ENABLE
    lab.advance(1.0)
    exporter.collect_once()
    exporter.collect_once()
    got = _samples(exporter)
    assert ("DCGM_FI_DEV_GPU_UTIL", "0/") not in got  # NVML: NotSupported in MIG mode
    assert ("DCGM_FI_DEV_MEM_COPY_UTIL", "0/") not in got
    nv.nvmlDeviceSetMigMode(h, nv.NVML_DEVICE_MIG_DISABLE)
    lab.start("training", device=0)
    lab.advance(5.0)
    exporter.collect_once()  # sees the mode change and asks NVML again
    lab.advance(1.0)
    exporter.collect_once()
    got = _samples(exporter)
    assert got[("DCGM_FI_DEV_GPU_UTIL", "0/")][0] == 100.0
    assert ("DCGM_FI_DEV_MEM_COPY_UTIL", "0/") in got
    exporter.stop()


def test_nvml_errors_leave_the_series_out_never_fail(sim: SimFactory) -> None:
    _nv, lab, exporter = _ready(sim)
    lab.inject("nvmlDeviceGetPowerUsage", "NotSupported", device=1)
    lab.inject("nvmlDeviceGetClockInfo", "Unknown", device=0)
    exporter.sampler.reprobe()
    exporter.collect_once()
    got = _samples(exporter)
    assert ("DCGM_FI_DEV_POWER_USAGE", "1/") not in got
    assert ("DCGM_FI_DEV_POWER_USAGE", "0/") in got
    assert ("DCGM_FI_DEV_MEM_CLOCK", "0/") not in got
    assert ("DCGM_FI_DEV_FAN_SPEED", "0/") not in got  # H100: no fan (NotSupported)
    lab.xid(1, 79)  # GPU 1 falls off the bus: everything but its last Xid goes
    exporter.collect_once()
    exporter.collect_once()
    got = _samples(exporter)
    assert ("DCGM_FI_DEV_GPU_UTIL", "1/") not in got
    assert got[("DCGM_FI_DEV_XID_ERRORS", "1/")][0] == 79.0
    assert ("DCGM_FI_DEV_GPU_UTIL", "0/") in got
    exporter.stop()


def test_mig_devices_carry_gpu_i_profile_and_gpu_i_id(sim: SimFactory) -> None:
    nv, lab = sim("sim:H100-80GB")
    h = nv.nvmlDeviceGetHandleByIndex(0)
    nv.nvmlDeviceSetMigMode(h, nv.NVML_DEVICE_MIG_ENABLE)
    gis = [nv.nvmlDeviceCreateGpuInstance(h, 19) for _ in range(2)]  # two 1g.10gb
    for gi in gis:
        nv.nvmlGpuInstanceCreateComputeInstance(gi, nv.NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE)
    migs = [nv.nvmlDeviceGetMigDeviceHandleByIndex(h, i) for i in range(2)]
    gi_ids = [nv.nvmlDeviceGetGpuInstanceId(m) for m in migs]
    lab.start("training", 0, gpu_instance_id=gi_ids[0])  # one instance trains, one idles
    lab.advance(5.0)
    exporter = Exporter(nv, port=0, hostname="lab1", clock=lab.now)
    exporter.collect_once()
    lab.advance(1.0)
    exporter.collect_once()  # second GPM sample of each GPU instance
    got = _samples(exporter)
    busy, idle = (f"0/{gi_ids[0]}", f"0/{gi_ids[1]}")
    value, labels = got[("DCGM_FI_DEV_FB_USED", busy)]
    assert set(labels) == DCGM_LABELS | {"GPU_I_PROFILE", "GPU_I_ID"}
    assert labels["GPU_I_PROFILE"] == "1g.10gb"
    assert labels["UUID"] == nv.nvmlDeviceGetUUID(nv.nvmlDeviceGetHandleByIndex(0))  # parent
    assert value == nv.nvmlDeviceGetMemoryInfo(migs[0]).used / 2**20
    # DCP metrics per GPU instance (dcgm-exporter's MIG rows): the training one reads the
    # scenario's ratios, the idle one zero
    train = SCENARIOS["training"].phases[0].values
    assert got[("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", busy)][0] == train["tensor_active"]
    assert got[("DCGM_FI_PROF_DRAM_ACTIVE", busy)][0] == train["dram_active"]
    assert got[("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", idle)][0] == 0.0
    assert ("DCGM_FI_DEV_FB_USED", "0/") in got  # the whole GPU keeps its own series
    exporter.stop()
    assert not exporter.collector._gpm.prev  # GPM samples freed


def test_http_endpoint_serves_metrics(sim: SimFactory) -> None:
    nv, _lab = sim("sim:H100-80GB")
    exporter = Exporter(nv, port=0, interval_s=0.5)
    exporter.start()
    try:
        with urllib.request.urlopen(exporter.url, timeout=10) as r:
            text = r.read().decode()
        assert r.headers["Content-Type"].startswith("text/plain")
        names = {f.name for f in text_string_to_metric_families(text)}
        assert {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_POWER_USAGE"} <= names
        post = urllib.request.Request(exporter.url.replace("/metrics", "/api/v1/query_range"),
                                      data=b"query=up", method="POST")
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(post, timeout=10)
        assert err.value.code == 405  # an exporter, not a Prometheus API
    finally:
        exporter.stop()


# dcgm-exporter's own /metrics types these counter (public captures, e.g. the
# tests/fixtures/observe/dcgm_two_gpus.prom scrape: "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION
# counter" followed by samples named DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, no _total)
DCGM_COUNTERS = {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER"}


def test_counters_are_typed_counter_without_total(sim: SimFactory) -> None:
    _nv, _lab, exporter = _ready(sim)
    text = exporter.scrape().decode()
    typed = dict(line.split()[2:4] for line in text.splitlines() if line.startswith("# TYPE"))
    assert "untyped" not in typed.values()
    counters = {f.name for f in FAMILIES if f.kind == "counter"}
    assert DCGM_COUNTERS <= counters
    for name in counters & set(typed):
        assert typed[name] == "counter" and f"\n{name}{{" in text  # samples keep the name
    assert not any(n.endswith("_total") for n in typed)
    families = {f.name: f for f in text_string_to_metric_families(text)}
    energy = families["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"]
    assert energy.type == "counter"
    # the parser's own model of a counter (OpenMetrics): samples <family>_total
    assert {s.name for s in energy.samples} == {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION_total"}


@pytest.mark.parametrize(("items", "message"), [
    (["no_such"], "unknown scenario"),
    (["x=training"], "not an integer"),
    (["5=training"], "no GPU 5"),
])
def test_sim_workload_bad_input(items: list[str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_sim_workloads(items, 2)


def test_sim_workload_all_and_one_gpu() -> None:
    assert parse_sim_workloads(["training", "1=idle"], 2) == [
        (0, "training"), (1, "training"), (1, "idle")]


@pytest.mark.parametrize("argv", [["--interval", "0"], ["--port", "70000"]])
def test_cli_bad_arguments_exit_1(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--gpu", "sim:H100-80GB", *argv]) == 1
    assert "cannot start" in capsys.readouterr().err


def test_cli_refuses_sim_workload_on_real_gpu_spec() -> None:
    proc = subprocess.run([sys.executable, "-m", "labkit.gpu.exporter", "--gpu", "real",
                           "--sim-workload", "training", "--port", "0"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "cannot start" in proc.stderr


def test_cli_serves_then_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    from tests.prometheus_servers import exporter_process

    with exporter_process(tmp_path, spec="sim:H100-80GB", workloads=("training",)) as target:
        with urllib.request.urlopen(f"http://{target}/metrics", timeout=10) as r:
            names = {f.name for f in text_string_to_metric_families(r.read().decode())}
        assert "DCGM_FI_DEV_GPU_UTIL" in names
    log = (tmp_path / "exporter.log").read_text()
    assert "sim [sim:H100-80GB]" in log and "Traceback" not in log


def test_cli_exits_0_on_sigterm(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "labkit.gpu.exporter", "--gpu", "sim",
                             "--port", "0"], stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        assert "serving http://127.0.0.1:" in proc.stderr.readline()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
