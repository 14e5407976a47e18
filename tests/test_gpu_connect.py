"""connect/status: real or simulated, LABKIT_GPU, the banner, the CLI and the capture script."""

from __future__ import annotations

import ctypes
import json
from collections.abc import Iterator
from pathlib import Path

import pynvml as N
import pytest

import labkit.gpu as gpu
import labkit.ui as ui
from labkit.gpu import __main__ as cli
from labkit.gpu import backend, capture
from labkit.i18n import KO
from tests.conftest import SimFactory


def _real_nvml_present() -> bool:
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return False
    return True


no_gpu = pytest.mark.skipif(_real_nvml_present(), reason="a real NVIDIA driver is present")


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("LABKIT_GPU", raising=False)
    gpu.disconnect()
    yield
    gpu.disconnect()


@no_gpu
def test_auto_falls_back_to_the_simulated_lab_gpu_with_the_reason() -> None:
    nv = gpu.connect()
    assert nv is N
    st = gpu.status()
    assert (st.kind, st.spec, st.name) == ("sim", "sim:H100-80GB", "NVIDIA H100 80GB HBM3")
    assert (st.reason, st.reason_code) == ("NVML Shared Library Not Found", "LibraryNotFound")
    assert st.nvml_version == "13.580.65.06" and st.driver_version == "580.65.06"
    assert nv.nvmlDeviceGetCount() == 1


@no_gpu
def test_real_raises_library_not_found_and_the_banner_explains_in_korean() -> None:
    with pytest.raises(N.NVMLError_LibraryNotFound):
        gpu.connect("real")
    banner = ui.gpu_banner()  # status() then falls back to the simulator
    assert "lk-banner-sim" in banner._dom_classes
    assert KO["common.banner.reason.LibraryNotFound"] in banner.value
    assert "시뮬레이션 GPU: NVIDIA H100 80GB HBM3" in banner.value


@no_gpu
def test_labkit_gpu_real_without_gpu_gives_a_none_banner(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LABKIT_GPU", "real")
    st = gpu.status()
    assert (st.kind, st.reason_code) == ("none", "LibraryNotFound")
    banner = ui.gpu_banner()
    assert "lk-banner-none" in banner._dom_classes and "LABKIT_GPU=real" in banner.value


def test_env_overrides_auto_but_not_an_explicit_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LABKIT_GPU", "sim:A30,L40S")
    gpu.connect()
    st = gpu.status()
    assert (st.kind, st.spec, st.device_count, st.reason) == ("sim", "sim:A30,L40S", 2, None)
    assert st.name == "NVIDIA A30, NVIDIA L40S"
    gpu.connect("sim:A100-40GB")
    assert gpu.status().name == "NVIDIA A100-SXM4-40GB"
    assert "시뮬레이션 GPU: NVIDIA A100-SXM4-40GB" in ui.gpu_banner().value
    assert "이유" not in ui.gpu_banner().value  # chosen on purpose: no fallback reason


def test_bad_env_value_never_breaks_the_banner(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LABKIT_GPU", "tpu")
    with pytest.raises(ValueError, match="LABKIT_GPU"):
        gpu.connect()
    st = gpu.status()
    assert (st.kind, st.reason_code) == ("none", "BadSpec")
    assert KO["common.banner.reason.BadSpec"] in ui.gpu_banner().value


def test_no_devices_falls_back_with_its_own_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    """A driver that works but sees no GPU (observe case 1 variant: device count 0)."""
    calls = []

    def fake_init() -> None:
        calls.append("init")
        if N.nvmlLib is None:  # the "real" library: initialises, sees nothing
            N.nvmlLib = object()
            return
        N.nvmlInitWithFlags(0)

    real_count = N.nvmlDeviceGetCount
    monkeypatch.setattr(N, "nvmlInit", fake_init)
    monkeypatch.setattr(N, "nvmlShutdown", lambda: None)
    monkeypatch.setattr(N, "nvmlDeviceGetCount",
                        lambda: 0 if not hasattr(N.nvmlLib, "nvmlDeviceGetCount_v2")
                        else real_count())
    gpu.connect()
    st = gpu.status()
    assert (st.kind, st.reason_code) == ("sim", "NoDevices")
    assert KO["common.banner.reason.NoDevices"] in ui.gpu_banner().value


def test_connect_is_idempotent_and_survives_a_shutdown(sim: SimFactory) -> None:
    nv, lab = sim("sim:H100-80GB")
    assert gpu.connect("sim:H100-80GB", clock="virtual", noise=False) is nv
    assert gpu.simulator() is lab
    nv.nvmlShutdown()
    gpu.connect("sim:H100-80GB", clock="virtual", noise=False)
    assert gpu.simulator() is lab and nv.nvmlDeviceGetCount() == 1
    gpu.connect("sim:A30", clock="virtual")
    assert gpu.simulator() is not lab


def test_simulator_requires_a_simulated_connection() -> None:
    with pytest.raises(RuntimeError, match="not connected to a simulated GPU"):
        gpu.simulator()


@pytest.mark.parametrize(("spec", "models"), [
    ("sim", ["H100-80GB"]),
    ("sim:a30", ["A30"]),
    ("sim:2xA30,H100-80GB", ["A30", "A30", "H100-80GB"]),
    ("sim:8×H200", ["H200"] * 8),
])
def test_parse_spec(spec: str, models: list[str]) -> None:
    assert gpu.parse_spec(spec) == models


@pytest.mark.parametrize(("spec", "message"), [
    ("sim:V100", "unknown GPU model 'V100'"),
    ("sim:0xA30", "GPU count"),
    ("sim:65xA30", "GPU count"),
    ("real", "not a simulator spec"),
])
def test_parse_spec_errors(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        gpu.parse_spec(spec)


def test_cli_lists_gpus_and_mig_tables(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--gpu", "sim:A30"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("GPU 0: NVIDIA A30 (UUID: GPU-")
    assert "# lab GPU: sim [sim:A30]" in err
    assert cli.main(["--gpu", "sim:A30", "mig", "-lgipp"]) == 0
    assert "GPU  0 Profile ID  0 Placement : {0}:4" in capsys.readouterr()[0]
    assert cli.main(["--gpu", "sim:A30", "mig", "-lgi", "-i", "0"]) == 0
    assert capsys.readouterr()[0].strip() == "No MIG-enabled devices found."
    assert cli.main(["--gpu", "sim:A30", "mig", "-lgip", "-i", "3"]) == 1
    assert cli.main(["--gpu", "sim:V100"]) == 1


@no_gpu
def test_cli_real_without_gpu_fails_cleanly(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--gpu", "real"]) == 1
    assert "NVML Shared Library Not Found" in capsys.readouterr()[1]


def test_capture_is_read_only_and_agrees_with_the_model(sim: SimFactory, tmp_path: Path) -> None:
    nv, lab = sim("sim:H100-80GB")
    calls: list[str] = []
    library = lab.library
    for name in [n for n in dir(library) if n.startswith("nvml")]:
        fn = getattr(library, name)

        def spy(*args: object, _fn: object = fn, _name: str = name) -> object:
            calls.append(_name)
            return _fn(*args)  # type: ignore[operator]

        setattr(library, name, spy)
    from labkit.gpu import nvml

    nvml.clear_function_cache()
    doc = capture.capture(nv)
    assert calls and not [c for c in calls if any(w in c for w in ("Set", "Create", "Destroy",
                                                                   "Reset", "Register"))]
    assert doc["_meta"]["source"] and doc["_meta"]["as_of"]
    (dev,) = doc["devices"]
    assert dev["name"] == "NVIDIA H100 80GB HBM3" and dev["mig_mode"] == [0, 0]
    assert [p["id"] for p in dev["gpu_instance_profiles"] if "id" in p] == [19, 14, 9, 5, 0, 20,
                                                                           15]
    assert dev["gpm"]["supported"] is True
    assert capture.compare(json.loads(json.dumps(doc))) == []
    dev["gpu_instance_profiles"][0]["memorySizeMB"] = 10240  # a driver with other memory
    assert capture.compare(doc) == [
        "GPU 0 (H100-80GB) 1g.10gb: memory_mib real 10240 vs model 9984"]


def test_capture_command_writes_a_dated_file(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert capture.main(["--allow-sim", "--out", str(tmp_path)]) == 0
    (path,) = tmp_path.glob("*.json")
    assert "_580.65.06_NVIDIA-H100-80GB-HBM3.json" in path.name
    assert capture.main(["--compare", str(path)]) == 0
    assert "agree" in capsys.readouterr()[0]


def test_status_is_cheap_after_the_first_call(sim: SimFactory) -> None:
    sim("sim:H100-80GB")
    first = gpu.status()
    assert gpu.status() is first
    assert backend.status() is first
