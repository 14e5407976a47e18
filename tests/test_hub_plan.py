"""labkit.hub.plan: the class's MIG layout, the operator's files, the CLI."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from labkit import mig
from labkit.gpu import mig_live
from labkit.hub import gpushare, plan
from labkit.validate import InputError
from tests.conftest import SimFactory

ROOT = Path(__file__).resolve().parents[1]


def test_plan_class_28_students_on_h100_is_4_gpus_of_7_x_1g10gb() -> None:
    p = plan.plan_class(28, "H100-80GB")
    assert (p.gpus, p.per_gpu, p.profile.name, p.mig_devices, p.spare) == (4, 7, "1g.10gb",
                                                                          28, 0)
    # placements: the seven 1g slots of an H100 are memory units 0..6 (MIG user guide)
    assert [(gi.profile.name, gi.start) for gi in p.layout.sorted_instances()] == [
        ("1g.10gb", s) for s in range(7)]
    assert p.label == "all-1g.10gb"  # mig-parted's own config name for this layout


def test_plan_class_7_students_on_a100_40gb_is_one_gpu_of_7_x_1g5gb() -> None:
    p = plan.plan_class(7, "A100-40GB")
    assert (p.gpus, p.per_gpu, p.profile.name, p.spare) == (1, 7, "1g.5gb", 0)
    assert p.label == "all-1g.5gb"


@pytest.mark.parametrize(("students", "gpus", "profile", "per_gpu", "used"), [
    (29, None, "1g.10gb", 7, 5),     # ceil(29 / 7) = 5 GPUs, 6 spare
    (28, 8, "1g.20gb", 4, 8),        # 8 GPUs: 2g.20gb gives 3 x 8 = 24 < 28, 1g.20gb 32
    (16, 8, "3g.40gb", 2, 8),        # 3g.40gb: 2 x 8 = 16, more memory than 2g.20gb x 3
    (8, 8, "7g.80gb", 1, 8),         # a whole GPU each
    (14, 2, "1g.10gb", 7, 2),
])
def test_plan_class_with_gpus_picks_the_largest_slice_that_fits(
        students: int, gpus: int | None, profile: str, per_gpu: int, used: int) -> None:
    p = plan.plan_class(students, "H100-80GB", gpus=gpus)
    assert (p.profile.name, p.per_gpu, p.gpus) == (profile, per_gpu, used)
    assert p.mig_devices >= students


def test_plan_class_largest_slice_is_the_best_by_brute_force() -> None:
    """Oracle written here: every plain H100 profile with its per-GPU count from the lgip
    table (MIG user guide, H100 80GB: 1g.10gb x7, 1g.20gb x4, 2g.20gb x3, 3g.40gb x2,
    4g.40gb x1, 7g.80gb x1), memory first."""
    table = [("7g.80gb", 80, 7, 1), ("4g.40gb", 40, 4, 1), ("3g.40gb", 40, 3, 2),
             ("2g.20gb", 20, 2, 3), ("1g.20gb", 20, 1, 4), ("1g.10gb", 10, 1, 7)]
    for gpus in range(1, 9):
        for students in range(1, 7 * gpus + 1):
            best = max((row for row in table if row[3] * gpus >= students),
                       key=lambda r: (r[1], r[2]))
            assert plan.plan_class(students, "H100-80GB", gpus=gpus).profile.name == best[0]


def test_plan_class_forced_profile() -> None:
    p = plan.plan_class(10, "H100-80GB", profile="2g.20gb")
    assert (p.gpus, p.per_gpu, p.spare) == (4, 3, 2)


@pytest.mark.parametrize(("kwargs", "field", "rule"), [
    ({"students": 28, "model": "H100-80GB", "gpus": 3}, "students", "at_most"),
    ({"students": 5, "model": "A30", "gpus": 1}, "students", "at_most"),
    ({"students": 0, "model": "H100-80GB"}, "students", "at_least"),
    ({"students": 501, "model": "H100-80GB"}, "students", "at_most"),
    ({"students": 2.5, "model": "H100-80GB"}, "students", "integer"),
    ({"students": True, "model": "H100-80GB"}, "students", "integer"),
    ({"students": 4, "model": "H100-80GB", "gpus": 0}, "gpus", "at_least"),
    ({"students": 4, "model": "H100-80GB", "gpus": 65}, "gpus", "at_most"),
    ({"students": 4, "model": "V100"}, "model", "choice"),
    ({"students": 4, "model": "L40S"}, "model", "choice"),           # no MIG
    ({"students": 4, "model": "H100-80GB", "profile": "1g.5gb"}, "profile", "choice"),
    ({"students": 8, "model": "H100-80GB", "gpus": 1, "profile": "1g.10gb"}, "students",
     "at_most"),
])
def test_plan_class_rejects_bad_input(kwargs: dict[str, object], field: str, rule: str) -> None:
    with pytest.raises(InputError) as err:
        plan.plan_class(**kwargs)  # type: ignore[arg-type]
    assert (err.value.field, err.value.rule) == (field, rule)


def test_operator_files_mig_parted_yaml_is_a_v1_config_for_the_class_gpus() -> None:
    files = plan.operator_files(plan.plan_class(28, "H100-80GB"))
    doc = yaml.safe_load(files["mig-parted.yaml"])
    assert doc == {"version": "v1", "mig-configs": {"all-1g.10gb": [{
        "device-filter": ["0x233010DE"],  # H100 SXM5 80GB PCI device ID 0x2330, vendor 10DE
        "devices": [0, 1, 2, 3], "mig-enabled": True, "mig-devices": {"1g.10gb": 7}}]}}


def test_operator_files_nvidia_smi_commands_build_the_plan_on_the_simulated_lab(
        sim: SimFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    p = plan.plan_class(28, "H100-80GB")
    script = plan.operator_files(p)["nvidia-smi-mig.sh"]
    assert script.startswith("#!/usr/bin/env bash\n") and "\nset -euo pipefail\n" in script
    nv, _ = sim("sim:4xH100-80GB")
    monkeypatch.setenv(mig_live.ALLOW_ENV, "1")
    for gpu in range(4):
        block = "\n".join(line for line in script.splitlines() if f" -i {gpu} " in line)
        assert block.count("-cgi 19:") == 7  # profile ID 19 = 1g.10gb on H100
        mig_live.apply(nv, gpu, mig.from_nvidia_smi(block, "H100-80GB"), dry_run=False)
    lab = gpushare.read_lab(nv)
    assert len(lab.mig) == 28 and not lab.whole
    assert plan.check_lab(p, lab) == []
    shares = gpushare.assign(lab, [f"s{i}" for i in range(28)], "auto")
    assert len({s.unit.uuid for s in shares.values() if s}) == 28


def test_main_plan_writes_the_operator_files(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert plan.main_plan(["--students", "28", "--gpu", "H100-80GB",
                           "--out", str(tmp_path / "ops")]) == 0
    out = capsys.readouterr().out
    assert "GPU 4장 × 1g.10gb 7개 = MIG 장치(MIG device) 28개" in out
    assert "nvidia-mig-parted apply -f" in out
    assert sorted(p.name for p in (tmp_path / "ops").iterdir()) == ["mig-parted.yaml",
                                                                    "nvidia-smi-mig.sh"]


def test_main_plan_script_is_executable_and_stops_at_the_first_failing_command(
        tmp_path: Path) -> None:
    assert plan.main_plan(["--students", "14", "--gpu", "H100-80GB",
                           "--out", str(tmp_path / "ops")]) == 0
    script = tmp_path / "ops" / "nvidia-smi-mig.sh"
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    # a stand-in nvidia-smi: logs each call, the second one fails (as on a busy GPU)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    fake = bin_dir / "nvidia-smi"
    fake.write_text(f'#!/bin/sh\necho "$*" >> {log}\n'
                    f'[ "$(wc -l < {log})" -lt 2 ] || exit 7\n', encoding="utf-8")
    fake.chmod(0o755)
    result = subprocess.run([str(script)], capture_output=True, text=True, timeout=30,
                            env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"})
    assert result.returncode == 7
    assert len(log.read_text(encoding="utf-8").splitlines()) == 2  # nothing ran after it


def test_main_plan_says_why_a_class_does_not_fit(capsys: pytest.CaptureFixture[str]) -> None:
    assert plan.main_plan(["--students", "28", "--gpu", "H100-80GB", "--gpus", "2"]) == 2
    err = capsys.readouterr().err
    assert "계획을 세울 수 없습니다" in err and "at most 14 MIG devices" in err


def test_python_m_labkit_hub_plan_runs() -> None:
    result = subprocess.run([sys.executable, "-m", "labkit.hub.plan", "--students", "7",
                             "--gpu", "A100-40GB"], cwd=ROOT, capture_output=True, text=True,
                            check=False, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "1g.5gb 7개" in result.stdout


def _units(gpu: int, profile: str, n: int) -> list[gpushare.GpuUnit]:
    return [gpushare.GpuUnit("mig", gpu, f"MIG-{gpu}-{k}", "H100", profile, k) for k in range(n)]


def test_check_lab_names_each_gpu_that_differs() -> None:
    p = plan.plan_class(14, "H100-80GB")  # 2 GPUs x 7 x 1g.10gb
    good = gpushare.LabGpus((), tuple(_units(0, "1g.10gb", 7) + _units(1, "1g.10gb", 7)))
    assert plan.check_lab(p, good) == []
    mixed = gpushare.LabGpus((), tuple(_units(0, "1g.10gb", 7) + _units(1, "1g.10gb", 3)
                                       + _units(1, "3g.40gb", 1)))
    assert plan.check_lab(p, mixed) == [
        "GPU 1: 1g.10gb MIG 장치 3개, 다른 프로필 1개 (계획: 1g.10gb 7개)."]
    off = gpushare.LabGpus((gpushare.GpuUnit("gpu", 1, "GPU-1", "H100"),),
                           tuple(_units(0, "1g.10gb", 7)))
    assert plan.check_lab(p, off) == ["GPU 1: MIG가 꺼져 있습니다(MIG mode disabled)."]


def test_main_plan_check_reads_the_simulated_lab(
        sim: SimFactory, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("LABKIT_GPU", "sim:A100-40GB")
    nv, _ = sim("sim:A100-40GB", clock="wall", noise=True)
    assert plan.main_plan(["--students", "7", "--gpu", "A100-40GB", "--check"]) == 1
    assert "GPU 0: MIG가 꺼져 있습니다" in capsys.readouterr().out
    monkeypatch.setenv(mig_live.ALLOW_ENV, "1")
    mig_live.apply(nv, 0, mig.presets("A100-40GB")["all-1g.5gb"], dry_run=False)
    assert plan.main_plan(["--students", "7", "--gpu", "A100-40GB", "--check"]) == 0
    assert "계획과 같습니다" in capsys.readouterr().out
