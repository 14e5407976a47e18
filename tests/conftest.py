"""Shared fixtures: a fresh simulated lab GPU for each test that asks for one."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest

import labkit.gpu as gpu
from labkit.gpu.sim import SimulatedLab

SimFactory = Callable[..., tuple[ModuleType, SimulatedLab]]

# Shared simulated labs (LABKIT_GPU=sim:..., labkit.gpu.sim.shared) of this test run live in a
# fresh directory, inherited by every kernel and server the tests start: no state from earlier
# runs, nothing left in the user's own lab.
os.environ["LABKIT_SIM_DIR"] = tempfile.mkdtemp(prefix="labkit-sim-tests-")


@pytest.fixture
def sim() -> Iterator[SimFactory]:
    """Return ``make(spec="sim:H100-80GB", **kw) -> (pynvml, lab)``: a new lab, virtual clock.

    Noise is off unless ``noise=True`` is passed, so readings are exact. The connection is
    closed after the test.
    """

    def make(spec: str = "sim:H100-80GB", **kw: Any) -> tuple[ModuleType, SimulatedLab]:
        gpu.disconnect()
        kw.setdefault("clock", "virtual")
        kw.setdefault("noise", False)
        nv = gpu.connect(spec, **kw)
        return nv, gpu.simulator()

    yield make
    gpu.disconnect()
