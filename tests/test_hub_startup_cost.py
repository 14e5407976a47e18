"""What every student's server and lesson kernel loads at start (issue 13's class storm).

On 2 cores a class of 30 starts 30 single-user servers and 30 kernels at once, so each import
that a server or kernel does not need costs the class its seconds (``benchmarks/bench_hub.py``).
These tests keep the heavy libraries out of the paths that do not use them, and check that the
lazy re-exports that made it so still hand out the same objects.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import labkit.data
import labkit.data.loaders
import labkit.reliability


def _imported_after(code: str, watch: tuple[str, ...]) -> list[str]:
    """Run ``code`` in a fresh interpreter; return which of ``watch`` it imported."""
    probe = (f"{code}\nimport json, sys\n"
             f"print(json.dumps([m for m in {list(watch)!r} if m in sys.modules]))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True, timeout=120)
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


HEAVY = ("pandas", "numpy", "pydantic", "yaml", "scipy", "plotly", "ipywidgets")


def test_student_server_extensions_import_no_data_libraries() -> None:
    """labkit's part of a student's server (config, extensions) loads none of the lesson
    libraries: pandas alone was ~0.5 CPU-s and ~60 MB in each of 30 servers."""
    code = ("import labkit.hub.singleuser_config, labkit.hub.singleuser, "
            "labkit.hub.activity, labkit.serve.presave")
    assert _imported_after(code, ("pandas", "pydantic", "scipy", "plotly", "ipywidgets")) == []


def test_light_data_modules_do_not_import_the_loaders() -> None:
    assert _imported_after("import labkit.data.progress, labkit.data.roster", HEAVY) == []
    assert _imported_after("import labkit.data", HEAVY) == []


def test_lesson_checks_do_not_import_scipy() -> None:
    """Every lesson lists its tasks through ``labkit.ui.checks``, which uses lesson 04's
    failure scaling only: scipy (the checkpoint's Lambert W) stays out of lesson 03's kernel."""
    assert _imported_after("import labkit.ui.checks", ("scipy",)) == []
    assert _imported_after("from labkit.reliability import young_interval", ("scipy",)) == [
        "scipy"]


def test_data_re_exports_are_the_loaders_objects() -> None:
    for name in labkit.data.__all__:
        assert getattr(labkit.data, name) is getattr(labkit.data.loaders, name), name
    from labkit.data import DataError, load_csv

    assert issubclass(DataError, ValueError)
    assert load_csv is labkit.data.loaders.load_csv
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        labkit.data.nope  # noqa: B018


def test_reliability_re_exports_every_public_name_of_its_submodules() -> None:
    import importlib

    for name in labkit.reliability.__all__:
        owner = labkit.reliability._SUBMODULE[name]
        module = importlib.import_module(f"labkit.reliability.{owner}")
        assert getattr(labkit.reliability, name) is getattr(module, name), name
    assert labkit.reliability.month.__name__ == "labkit.reliability.month"
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        labkit.reliability.nope  # noqa: B018


def test_students_servers_switch_off_unused_extensions_and_keep_terminals() -> None:
    from traitlets.config import Config

    from labkit.hub.singleuser_config import configure

    c = Config()
    configure(c)
    extensions = c.ServerApp.jpserver_extensions
    assert extensions["jupyter_lsp"] is False
    assert extensions["notebook_shim"] is False
    assert extensions["labkit.hub.singleuser"] is True
    assert "jupyter_server_terminals" not in extensions  # enabled by its own config.d file
    assert "jupyterlab" not in extensions and "voila.server_extension" not in extensions


def test_trim_for_students_compiles_labkit_and_removes_unused_packages(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from labkit.hub import userenv

    site = tmp_path / "lib" / "site-packages"
    (site / "rfc3987_syntax").mkdir(parents=True)
    (site / "labkit").mkdir()
    monkeypatch.setattr(userenv, "site_packages", lambda env: site)
    ran: list[list[str]] = []
    monkeypatch.setattr(userenv.subprocess, "run", lambda cmd, **kw: ran.append(cmd))
    userenv.trim_for_students(tmp_path)
    python = str(tmp_path / "bin" / "python")
    assert ran == [[python, "-m", "pip", "uninstall", "-y", "-q", "rfc3987-syntax"],
                   [python, "-m", "compileall", "-q", "-j", "0", str(site / "labkit")]]
    (site / "rfc3987_syntax").rmdir()
    ran.clear()
    userenv.trim_for_students(tmp_path)  # already gone: only the compile
    assert [cmd[2] for cmd in ran] == ["compileall"]


def test_spawn_phases_read_back_from_the_hub_log() -> None:
    from benchmarks.bench_hub import spawn_phases

    log = "\n".join([
        "[I 2026-12-01 15:29:56.889 JupyterHub spawner:247] labkit: spawn phases of "
        "jupyter-a: account 0.00 s, disk 0.44 s, curriculum 0.72 s",
        "[I 2026-12-01 15:29:57.102 JupyterHub spawner:247] labkit: spawn phases of "
        "jupyter-b: account 0.02 s, disk 0.30 s, curriculum 1.50 s",
        "[I 2026-12-01 15:30:48.103 JupyterHub base:1192] User a took 54.288 seconds to start",
        "[I 2026-12-01 15:30:48.103 JupyterHub log:192] 200 GET /hub/api/users/a 59.20ms",
    ])
    found = spawn_phases(log)
    assert set(found) == {"account", "disk", "curriculum", "hub_spawn_total"}
    assert found["disk"] == {"n": 2, "p50_ms": 370.0, "p95_ms": 440.0, "max_ms": 440.0}
    assert found["hub_spawn_total"]["max_ms"] == 54288.0


def test_spawner_phases_name_each_step_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    from labkit.hub import spawner

    clock = iter([10.0, 10.25, 11.0])
    monkeypatch.setattr(spawner.time, "perf_counter", lambda: next(clock))
    phases = spawner._Phases()
    phases.done("disk")
    phases.done("curriculum")
    assert str(phases) == "disk 0.25 s, curriculum 0.75 s"
