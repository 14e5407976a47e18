"""Shared fixtures: a fresh simulated lab GPU for each test that asks for one."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import settings

import labkit.gpu as gpu
from labkit.gpu.sim import SimulatedLab

SimFactory = Callable[..., tuple[ModuleType, SimulatedLab]]

# Property tests check values, not speed (speed lives in benchmarks/): no per-example deadline,
# which a 2-core CI machine running the hub's tests beside them would miss at random
# (hypothesis's FlakyFailure / DeadlineExceeded, seen at 344 ms against the default 200 ms).
settings.register_profile("labkit", deadline=None)
settings.load_profile("labkit")

# Shared simulated labs (LABKIT_GPU=sim:..., labkit.gpu.sim.shared) of this test run live in a
# fresh directory, inherited by every kernel and server the tests start: no state from earlier
# runs, nothing left in the user's own lab.
os.environ["LABKIT_SIM_DIR"] = tempfile.mkdtemp(prefix="labkit-sim-tests-")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the chromium tests last, after every other test and notebook.

    Playwright's sync API keeps an asyncio loop running in the main thread while the session's
    chromium (the ``browser`` fixture below) is open: every later ``asyncio.run`` (the warm-up
    and spawner tests) and nbval's kernel client then fail with "cannot be called from a running
    event loop" (CI, stop 27). A stable sort keeps each group's own order.
    """
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)


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


@pytest.fixture(scope="session")
def prometheus_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, float]]:
    """A real Prometheus (Debian's) scraping labkit's exporter every second, on loopback.

    The exporter runs in a subprocess on ``tests.prometheus_servers.LAB_SPEC`` (two simulated
    H100s, GPU 0 training, GPU 1 idle). Yields (Prometheus base URL, Unix time before the
    exporter started) once 8 s of samples are stored; both servers are stopped after the session.
    """
    import time

    from tests.prometheus_servers import exporter_process, prometheus_process, wait_for_samples

    work = tmp_path_factory.mktemp("prometheus")
    started = time.time()
    with exporter_process(work) as target, prometheus_process(target, work) as url:
        wait_for_samples(url, gpus=2, seconds=8)
        yield url, started


# --- the one chromium of a test session ---------------------------------------------------------
# Here, not in tests/browser/conftest.py: the hub's browser tests use it too, and Playwright's
# sync API refuses a second instance while one is open in the same session.


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """A headless Debian chromium driven by Playwright (one per session)."""
    from tests.browser.conftest import CHROMIUM, FLAGS

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} not found: run `make test` (installs Debian's chromium) "
                    "or set LABKIT_CHROMIUM")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    """A fresh page (own context) sized like a classroom laptop."""
    from tests.browser.conftest import RENDER_TIMEOUT_MS

    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, locale="ko-KR")  # type: ignore[attr-defined]
    ctx.set_default_timeout(RENDER_TIMEOUT_MS)
    pg = ctx.new_page()
    yield pg
    ctx.close()
