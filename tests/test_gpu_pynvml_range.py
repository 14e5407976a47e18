"""labkit's GPU layer on the oldest and the newest nvidia-ml-py of pyproject.toml's range.

Each release is installed into a temporary directory (``pip install --no-deps --target``) and put
first on ``PYTHONPATH`` of a subprocess that runs the simulator's own tests (hook, MIG, the
issue-15 corrections): the private loader names the hook uses and every wrapper and constant
the simulator touches must be there. Skipped, with the reason, when the package index cannot be
reached (pip fails to download).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from labkit.gpu import nvml

ROOT = Path(__file__).resolve().parents[1]
TESTS = ["tests/test_gpu_hook.py", "tests/test_gpu_mig.py", "tests/test_gpu_sim_corrections.py",
         "tests/test_gpu_faults.py"]


def _oldest() -> str:
    (lower,) = [s.version for s in SpecifierSet(nvml.PYNVML_RANGE) if s.operator == ">="]
    return lower


@pytest.mark.parametrize("version", [_oldest(), nvml.PYNVML_VERSION])
def test_gpu_layer_works_with_nvidia_ml_py(version: str, tmp_path: Path) -> None:
    assert version in SpecifierSet(nvml.PYNVML_RANGE)
    target = tmp_path / "site"
    got = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                          "--disable-pip-version-check", "--target", str(target),
                          f"nvidia-ml-py=={version}"], capture_output=True, text=True,
                         timeout=300, check=False)
    if got.returncode != 0:
        pytest.skip(f"cannot install nvidia-ml-py=={version} (offline?): {got.stderr[-300:]}")
    env = {**os.environ, "PYTHONPATH": str(target)}
    env.pop("LABKIT_GPU", None)
    probe = subprocess.run([sys.executable, "-c", "import importlib.metadata as m, pynvml; "
                            "print(m.version('nvidia-ml-py'), pynvml.__file__)"], env=env,
                           capture_output=True, text=True, timeout=120, check=True)
    assert probe.stdout.split()[0] == version and str(target) in probe.stdout
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                          "--no-header", *TESTS], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
