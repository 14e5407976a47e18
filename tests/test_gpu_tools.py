"""The tools operators run, unmodified, against the shared simulated lab (issue 15).

``python -m labkit.gpu mig -cgi 9,14,19,19 -C`` in one process, a workload started by a
kernel-like process, then ``nvitop -1``, ``gpustat --json`` and nvdashboard's GPU handlers in
others: what they print must show the four MIG devices and the real process (pid, user,
command). Expected values come from NVIDIA's MIG user guide and real H100 captures, not from
labkit: the H100 80GB HBM3 profiles 3g.40gb (ID 9, 40448 MiB = 39.50 GiB), 2g.20gb (ID 14,
20096 MiB), 1g.10gb (ID 19, 9984 MiB) (data/gpus/H100-80GB.yaml sources; MIG user guide
"Supported MIG Profiles", H100 80GB table).
"""

from __future__ import annotations

import getpass
import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from labkit.gpu.sim.hook import install_pth
from tests.conftest import SimFactory

PY = sys.executable
BIN = Path(sys.executable).parent
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]")
# GI profile ID -> (nvitop's name, memory nvitop prints) on an H100 80GB HBM3
MIG_DEVICES = {"3g.40gb": "39.50GiB", "2g.20gb": "20096MiB", "1g.10gb": "9984MiB"}


@pytest.fixture
def lab_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """Environment of one shared simulated H100 lab in ``tmp_path`` (the .pth hook installed)."""
    install_pth()  # what `make` does; idempotent
    env = {**os.environ, "LABKIT_GPU": "sim:H100-80GB", "LABKIT_SIM_DIR": str(tmp_path),
           "TERM": "xterm-256color", "COLUMNS": "100", "LC_ALL": "C.UTF-8"}
    env.pop("LABKIT_SIM_LAB", None)
    yield env


def _run(args: list[str], env: dict[str, str], timeout: float = 120) -> str:
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout,
                          check=False)
    assert done.returncode == 0, f"{args}: rc {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


KERNEL = textwrap.dedent("""
    import sys, time
    import labkit.gpu as gpu
    gpu.connect()                          # LABKIT_GPU=sim:H100-80GB: the shared lab
    lab = gpu.simulator()
    gi = int(sys.argv[1])
    w = lab.start("training", 0, gpu_instance_id=gi)
    print(w.pid, flush=True)
    time.sleep(120)
""")


@pytest.fixture
def kernel(lab_env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    """A kernel-like process that made the MIG layout's 3g GI busy with a training workload."""
    out = _run([PY, "-m", "labkit.gpu", "mig", "-cgi", "9,14,19,19", "-C"], lab_env)
    gi_3g = int(re.search(r"GPU instance ID\s+(\d+) on GPU  0 using profile MIG 3g\.40gb",
                          out).group(1))  # type: ignore[union-attr]
    proc = subprocess.Popen([PY, "-c", KERNEL, str(gi_3g)], env=lab_env, text=True,
                            stdout=subprocess.PIPE)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert int(line) == proc.pid, "the workload belongs to the process that started it"
    yield proc
    proc.kill()
    proc.wait(timeout=30)


def test_cgi_output_is_spelled_as_nvidia_smi(lab_env: dict[str, str]) -> None:
    out = _run([PY, "-m", "labkit.gpu", "mig", "-cgi", "9,14,19,19", "-C"], lab_env)
    lines = out.strip().splitlines()
    # MIG user guide: "Successfully created GPU instance ID  2 on GPU  0 using profile MIG
    # 3g.20gb (ID  9)" and "... compute instance ID  0 on GPU  0 GPU instance ID  2 using
    # profile MIG 3g.20gb (ID  2)"; H100: the first 3g goes to placement 4 (GI ID 2)
    assert lines[0] == "Enabled MIG Mode for GPU 00000000:1B:00.0"
    assert lines[1] == ("Successfully created GPU instance ID  2 on GPU  0 using profile "
                        "MIG 3g.40gb (ID  9)")
    assert lines[2] == ("Successfully created compute instance ID  0 on GPU  0 GPU instance "
                        "ID  2 using profile MIG 3g.40gb (ID  2)")
    assert sum("created GPU instance" in x for x in lines) == 4
    again = subprocess.run([PY, "-m", "labkit.gpu", "mig", "-cgi", "0"], env=lab_env,
                           capture_output=True, text=True, timeout=120, check=False)
    assert again.returncode == 1
    assert "Unable to create a GPU instance on GPU  0 using profile 0: Insufficient Resources" in (
        again.stdout)


def test_nvitop_one_shot_shows_the_mig_devices_and_the_kernel(
        lab_env: dict[str, str], kernel: subprocess.Popen[str]) -> None:
    if not (BIN / "nvitop").exists():
        pytest.skip("nvitop is not installed (the test extra pins it)")
    out = ANSI.sub("", _run([str(BIN / "nvitop"), "-1"], lab_env))
    assert "Traceback" not in out and "FunctionNotFound" not in out
    rows = [(m, line) for line in out.splitlines()
            if (m := re.search(r"(\d+:\d+)\s+(\S+) @ GI/CI:", line))]
    assert [(m[1], m[2]) for m, _ in rows] == [("0:0", "3g.40gb"), ("0:1", "2g.20gb"),
                                               ("0:2", "1g.10gb"), ("0:3", "1g.10gb")]
    for m, row in rows:
        assert MIG_DEVICES[m[2]] in row
    assert "H100 80GB HBM3" in out and "Enabled" in out
    user = getpass.getuser()
    proc_rows = [line for line in out.splitlines() if f" {kernel.pid} " in line]
    assert proc_rows, out
    assert user in proc_rows[0] and "No Such Process" not in proc_rows[0]
    assert re.search(rf"0:0\s+{kernel.pid} ", proc_rows[0])  # on MIG device 0: the 3g.40gb


def test_gpustat_json_lists_the_kernel_with_real_pid_user_and_command(
        lab_env: dict[str, str], kernel: subprocess.Popen[str]) -> None:
    if not (BIN / "gpustat").exists():
        pytest.skip("gpustat is not installed (the test extra pins it)")
    data = json.loads(_run([str(BIN / "gpustat"), "--json"], lab_env))
    (gpu,) = data["gpus"]
    assert gpu["name"] == "NVIDIA H100 80GB HBM3"
    assert gpu["memory.total"] == 81559  # nvidia-smi's 81559 MiB (MIG user guide, H100)
    assert gpu["utilization.gpu"] is None  # NOT_SUPPORTED on a MIG-enabled GPU (nvml.h)
    (proc,) = gpu["processes"]
    assert proc["pid"] == kernel.pid and proc["username"] == getpass.getuser()
    assert proc["full_command"][:2] == [PY, "-c"]
    # the training scenario holds 85 % of the 3g.40gb's 40448 MiB
    assert proc["gpu_memory_usage"] == -(-40448 * 85 // 100)
    text = _run([str(BIN / "gpustat")], lab_env)
    assert "NVIDIA H100 80GB HBM3" in text and str(kernel.pid) not in text  # -p not asked


def test_processes_of_a_dead_kernel_are_reaped(lab_env: dict[str, str],
                                               kernel: subprocess.Popen[str]) -> None:
    probe = "import labkit.gpu as g; nv = g.connect(); h = nv.nvmlDeviceGetHandleByIndex(0); " \
            "print([p.pid for p in nv.nvmlDeviceGetComputeRunningProcesses(h)])"
    assert _run([PY, "-c", probe], lab_env).strip() == f"[{kernel.pid}]"
    kernel.kill()
    kernel.wait(timeout=30)
    assert _run([PY, "-c", probe], lab_env).strip() == "[]"


NVDASHBOARD = textwrap.dedent("""
    import json
    from jupyterlab_nvdashboard.apps import gpu   # nvmlInit + NvLinkVersion at import
    out = {"ngpus": gpu.ngpus, "nvlink_ver": gpu.nvlink_ver, "max_bw": gpu.max_bw,
           "pci_gen": gpu.pci_gen}
    for name in ("GPUUtilizationWebSocketHandler", "GPUUsageWebSocketHandler",
                 "GPUResourceWebSocketHandler", "PCIStatsWebSocketHandler",
                 "NVLinkThroughputWebSocketHandler"):
        handler = object.__new__(getattr(gpu, name))
        sent = []
        handler.write_message = sent.append
        handler.send_data()
        out[name] = json.loads(sent[-1])
    print(json.dumps(out))
""")


def test_nvdashboard_gpu_apps_return_data(lab_env: dict[str, str]) -> None:
    pytest.importorskip("jupyterlab_nvdashboard", reason="the test extra pins it")
    env = {**lab_env, "LABKIT_GPU": "sim:8xH100-80GB"}
    data = json.loads(_run([PY, "-c", NVDASHBOARD], env))
    assert data["ngpus"] == 8 and data["pci_gen"] == 5
    assert data["nvlink_ver"] == 6  # NVML_NVLINK_VERSION_4_0 (nvml.h): Hopper's NVLink 4
    # nvdashboard: sum of NVML_FI_DEV_NVLINK_SPEED_MBPS_L0..L11 x 2^20 / 2; 12 fields of 18
    # links at 26562 MB/s (nvidia-smi nvlink -s on H100 SXM: 26.562 GB/s per link)
    assert data["max_bw"] == 12 * 26562 * 1024**2 / 2
    assert data["GPUUtilizationWebSocketHandler"]["gpu_utilization"] == [0] * 8
    usage = data["GPUUsageWebSocketHandler"]
    assert usage["total_memory"] == [81559 << 20] * 8
    assert set(data["GPUResourceWebSocketHandler"]) >= {"gpu_utilization_total", "rx_total"}
    assert data["PCIStatsWebSocketHandler"]["max_rxtx_tp"] == 16 * 3938.0 * 1024 * 1024
    assert data["NVLinkThroughputWebSocketHandler"]["nvlink_rx"] == [0] * 8


def test_tools_make_no_call_the_simulator_lacks(lab_env: dict[str, str], tmp_path: Path,
                                                 kernel: subprocess.Popen[str]) -> None:
    """Every NVML function nvitop and gpustat look up exists (LABKIT_SIM_TRACE)."""
    trace = tmp_path / "trace.jsonl"
    env = {**lab_env, "LABKIT_SIM_TRACE": str(trace)}
    for tool in (["nvitop", "-1"], ["gpustat", "--json"]):
        if (BIN / tool[0]).exists():
            _run([str(BIN / tool[0]), *tool[1:]], env)
    lines = [json.loads(x) for x in trace.read_text().splitlines()]
    assert lines, "no traced process"
    missing = {name for line in lines for name, code, _ in line["calls"]
               if code == "FunctionNotFound"}
    assert missing == set(), missing
    documented = (Path(__file__).resolve().parents[1] / "docs/sim-nvml-calls.md").read_text()
    called = {name for line in lines for name, _, _ in line["calls"]}
    undocumented = {name for name in called if f"`{name}`" not in documented}
    assert undocumented == set(), f"add to docs/sim-nvml-calls.md: {sorted(undocumented)}"


def test_mig_changes_are_refused_on_a_real_gpu_and_from_the_hub(
        lab_env: dict[str, str]) -> None:
    hub = {**lab_env, "JUPYTERHUB_API_TOKEN": "x"}
    done = subprocess.run([PY, "-m", "labkit.gpu", "-i", "0", "-mig", "1"], env=hub,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2 and "JupyterHub" in done.stderr
    voila = {**lab_env, "VOILA_KERNEL_ID": "x"}
    done = subprocess.run([PY, "-m", "labkit.gpu", "mig", "-dgi"], env=voila,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2 and "voila" in done.stderr
    from labkit.gpu.__main__ import _change_refused

    assert "--allow-real-gpu-changes" in (_change_refused("real", False) or "")


def test_nvlink_fields_of_an_h100_sxm_in_eight_gpu_training(sim: SimFactory) -> None:
    """NVLink as DCGM reads it: 18 links on H100 SXM (H100 datasheet: 18 NVLink 4 links,
    900 GB/s), traffic while all eight GPUs train, INVALID_ARGUMENT past the last link."""
    nv, lab = sim("sim:8xH100-80GB")
    h = nv.nvmlDeviceGetHandleByIndex(3)
    (count,) = nv.nvmlDeviceGetFieldValues(h, [nv.NVML_FI_DEV_NVLINK_LINK_COUNT])
    assert (count.nvmlReturn, count.value.uiVal) == (nv.NVML_SUCCESS, 18)
    for i in range(8):
        lab.start("training", i)
    lab.advance(10)
    rx = nv.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX
    values = nv.nvmlDeviceGetFieldValues(h, [(rx, link) for link in range(20)])
    assert [v.nvmlReturn for v in values] == [nv.NVML_SUCCESS] * 18 + [
        nv.NVML_ERROR_INVALID_ARGUMENT] * 2
    total_kib = sum(v.value.ullVal for v in values[:18])
    assert total_kib == pytest.approx(60_000_000 * 10, rel=1e-6)  # 60 GB/s [KB/s] x 10 s
    assert nv.nvmlDeviceGetNvLinkVersion(h, 17) == nv.NVML_NVLINK_VERSION_4_0
    with pytest.raises(nv.NVMLError_InvalidArgument):
        nv.nvmlDeviceGetNvLinkVersion(h, 18)
    nv1, _ = sim("sim:H100-PCIE")
    h1 = nv1.nvmlDeviceGetHandleByIndex(0)
    (count,) = nv1.nvmlDeviceGetFieldValues(h1, [nv1.NVML_FI_DEV_NVLINK_LINK_COUNT])
    assert count.nvmlReturn == nv1.NVML_ERROR_NOT_SUPPORTED
    with pytest.raises(nv1.NVMLError_NotSupported):
        nv1.nvmlDeviceGetNvLinkVersion(h1, 0)


def test_calls_real_linux_hardware_does_not_support_are_not_supported(sim: SimFactory) -> None:
    nv, lab = sim()
    h = nv.nvmlDeviceGetHandleByIndex(0)
    calls = [nv.nvmlDeviceGetDriverModel, nv.nvmlDeviceGetFanSpeed]
    if hasattr(nv, "nvmlDeviceGetDriverModel_v2"):  # the wrapper is new in nvidia-ml-py 13.595
        calls.append(nv.nvmlDeviceGetDriverModel_v2)
    for call in calls:
        with pytest.raises(nv.NVMLError_NotSupported):
            call(h)
    assert nv.nvmlDeviceGetPersistenceMode(h) == nv.NVML_FEATURE_ENABLED
    assert nv.nvmlDeviceGetComputeMode(h) == nv.NVML_COMPUTEMODE_DEFAULT
    assert nv.nvmlDeviceGetDisplayActive(h) == nv.nvmlDeviceGetDisplayMode(h) == 0
    assert len(nv.nvmlDeviceGetSerial(h)) == 13
    bar1 = nv.nvmlDeviceGetBAR1MemoryInfo(h)
    assert bar1.bar1Total == 131072 << 20  # nvidia-smi -q on H100: BAR1 Total 131072 MiB
    assert nv.nvmlDeviceGetEncoderUtilization(h) == [0, 167_000]
    with pytest.raises(nv.NVMLError_NotFound):
        nv.nvmlDeviceGetProcessUtilization(h, 0)  # no process ran
    w = lab.start("training")
    lab.advance(1)
    (sample,) = nv.nvmlDeviceGetProcessUtilization(h, 0)
    assert (sample.pid, sample.smUtil) == (w.pid, 100)
    cc = nv.nvmlDeviceGetConfComputeMemSizeInfo(h)
    assert (cc.protectedMemSizeKib, cc.unprotectedMemSizeKib) == (0, 81559 * 1024)


def test_a_fault_injected_in_one_process_is_seen_by_another(lab_env: dict[str, str]) -> None:
    inject = ("import labkit.gpu as g; g.connect(); "
              "g.simulator().inject('nvmlDeviceGetPowerUsage', 'NotSupported')")
    _run([PY, "-c", inject], lab_env)
    probe = ("import labkit.gpu as g, pynvml; nv = g.connect()\n"
             "h = nv.nvmlDeviceGetHandleByIndex(0)\n"
             "try:\n nv.nvmlDeviceGetPowerUsage(h); print('read')\n"
             "except pynvml.NVMLError_NotSupported: print('NotSupported')")
    assert _run([PY, "-c", probe], lab_env).strip() == "NotSupported"
    gpustat = json.loads(_run([str(BIN / "gpustat"), "--json"], lab_env)) if (
        BIN / "gpustat").exists() else None
    if gpustat is not None:
        assert gpustat["gpus"][0]["power.draw"] is None  # gpustat's safenvml: n/a
    _run([PY, "-c", "import labkit.gpu as g; g.connect(); g.simulator().clear_faults()"], lab_env)
    assert _run([PY, "-c", probe], lab_env).strip() == "read"


def test_voila_kernels_keep_a_private_lab(lab_env: dict[str, str]) -> None:
    probe = "import labkit.gpu as g; g.connect(); print(g.status().shared)"
    assert _run([PY, "-c", probe], lab_env).strip() == "True"
    assert _run([PY, "-c", probe], {**lab_env, "LABKIT_SERVED_BY": "voila"}).strip() == "False"


FIXTURES = Path(__file__).resolve().parent / "fixtures" / "nvidia-smi"


def _lgi_rows(text: str) -> list[tuple[str, int, int, str]]:
    rows = []
    for line in text.splitlines():
        m = re.match(r"\|\s+\d+\s+MIG (\S+)\s+(\d+)\s+(\d+)\s+(\d+:\d+)\s+\|", line)
        if m:
            rows.append((m[1], int(m[2]), int(m[3]), m[4]))
    return sorted(rows, key=lambda r: r[2])


def test_cgi_then_lgi_matches_a_real_h100_capture(lab_env: dict[str, str]) -> None:
    """``-cgi 9,14,14`` then ``-lgi`` in another process equals go-nvml#146's H100 capture."""
    _run([PY, "-m", "labkit.gpu", "mig", "-cgi", "9,14,14"], lab_env)
    got = _lgi_rows(_run([PY, "-m", "labkit.gpu", "mig", "-lgi"], lab_env))
    want = _lgi_rows((FIXTURES / "h100_lgi_3g_2g_2g.txt").read_text())
    assert want == [("3g.40gb", 9, 2, "4:4"), ("2g.20gb", 14, 3, "0:2"), ("2g.20gb", 14, 4, "2:2")]
    assert got == want
