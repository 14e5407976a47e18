"""The shared simulated lab (labkit.gpu.sim.shared): one state file, many lab objects.

Two :class:`SharedLab` objects on one directory stand for two processes (the subprocess tests
in tests/test_gpu_tools.py do it with real processes).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pynvml as N
import pytest

from labkit.data.gpus import load_gpu_model
from labkit.gpu import nvml
from labkit.gpu.sim.shared import STATE_VERSION, SharedLab, lab_dir, lab_name

H100 = load_gpu_model("H100-80GB")


@pytest.fixture
def labs(tmp_path: Path) -> Iterator[tuple[SharedLab, SharedLab]]:
    a = SharedLab([H100], tmp_path / "lab")
    b = SharedLab([H100], tmp_path / "lab")
    yield a, b
    nvml.uninstall()


def _use(lab: SharedLab) -> object:
    nvml.install(lab.library)
    N.nvmlInit()
    return N.nvmlDeviceGetHandleByIndex(0)


def test_mig_layout_and_workloads_made_in_one_lab_are_seen_by_the_other(
        labs: tuple[SharedLab, SharedLab]) -> None:
    a, b = labs
    h = _use(a)
    N.nvmlDeviceSetMigMode(h, 1)
    gi = N.nvmlDeviceCreateGpuInstance(h, 9)
    N.nvmlGpuInstanceCreateComputeInstance(gi, 2)
    gi_id = N.nvmlGpuInstanceGetInfo(gi).id
    h = _use(b)
    assert N.nvmlDeviceGetMigMode(h) == [1, 1]
    mig = N.nvmlDeviceGetMigDeviceHandleByIndex(h, 0)
    assert N.nvmlDeviceGetGpuInstanceId(mig) == gi_id
    assert N.nvmlDeviceGetUUID(mig) == a.devices[0].mig_devices[0].uuid
    w = b.start("training", 0, gpu_instance_id=gi_id)
    assert w.pid == os.getpid()  # a workload belongs to the process that started it
    h = _use(a)
    assert [p.pid for p in N.nvmlDeviceGetComputeRunningProcesses(h)] == [os.getpid()]
    b.stop(w)
    assert N.nvmlDeviceGetComputeRunningProcesses(h) == []


def test_only_the_directory_owner_or_root_changes_mig(labs: tuple[SharedLab, SharedLab],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    a, _ = labs
    h = _use(a)
    monkeypatch.setattr(os, "geteuid", lambda: 4321)  # a student, not the lab's owner
    with pytest.raises(N.NVMLError_NoPermission):
        N.nvmlDeviceSetMigMode(h, 1)
    assert N.nvmlDeviceGetMigMode(h) == [0, 0]  # reading is for everyone


def test_processes_that_ended_are_reaped(labs: tuple[SharedLab, SharedLab]) -> None:
    a, b = labs
    child = subprocess.Popen(["sleep", "30"])
    try:
        a.add_process(0, pid=child.pid, name="sleep")
        h = _use(b)
        assert [p.pid for p in N.nvmlDeviceGetComputeRunningProcesses(h)] == [child.pid]
    finally:
        child.kill()
        child.wait()
    b._last_reap = 0.0
    assert N.nvmlDeviceGetComputeRunningProcesses(h) == []
    assert json.loads((b.directory / "state.json").read_text())["devices"][0]["processes"] == []


def test_a_lab_of_other_gpus_or_another_version_is_refused(tmp_path: Path) -> None:
    SharedLab([H100], tmp_path / "lab")
    with pytest.raises(ValueError, match="holds a lab of"):
        SharedLab([load_gpu_model("A30")], tmp_path / "lab")
    state = tmp_path / "lab" / "state.json"
    state.write_text(json.dumps({**json.loads(state.read_text()), "version": STATE_VERSION + 1}))
    with pytest.raises(ValueError, match="state version"):
        SharedLab([H100], tmp_path / "lab")


def test_lab_dir_names_and_refuses_someone_elses_base(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    monkeypatch.delenv("LABKIT_SIM_LAB", raising=False)
    assert lab_name(["H100-80GB"] * 8) == "8xH100-80GB"
    assert lab_name(["A30", "L40S"]) == "A30+L40S"
    monkeypatch.setenv("LABKIT_SIM_DIR", str(tmp_path))
    assert lab_dir(["H200"]) == tmp_path / "H200"
    monkeypatch.delenv("LABKIT_SIM_DIR")
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr("tempfile.gettempdir", lambda: str(tmp_path))
    base = tmp_path / f"labkit-sim-{os.getuid()}"
    base.mkdir()
    monkeypatch.setattr(os, "getuid", lambda: 4321)
    (tmp_path / "labkit-sim-4321").mkdir()  # owned by the real (test) user, not 4321
    with pytest.raises(PermissionError, match="belongs to uid"):
        lab_dir(["H200"])


def test_connect_falls_back_to_a_private_lab_when_the_shared_one_is_unusable(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import labkit.gpu as gpu

    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("LABKIT_SIM_DIR", str(blocker))  # the lab dir cannot be created
    monkeypatch.setenv("LABKIT_GPU", "sim:A30")
    gpu.disconnect()
    try:
        nv = gpu.connect()
        st = gpu.status()
        assert (st.kind, st.shared, st.reason_code) == ("sim", False, "SharedLabUnavailable")
        assert nv.nvmlDeviceGetCount() == 1
    finally:
        gpu.disconnect()
