"""One source of truth for versions: pyproject ranges, binder/constraints.txt pins, env files."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def _pyproject() -> dict[str, Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = [*project["dependencies"]]
    for extra in ("lab", "test", "hub", "dev"):
        reqs += project["optional-dependencies"][extra]
    # "labkit[hub]" in test is the hub extra itself, not a dependency to pin
    return {canonicalize_name(r.name): r for r in map(Requirement, reqs)
            if canonicalize_name(r.name) != "labkit"}


def _pins(lines: list[str]) -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        name, _, version = line.partition("==")
        assert version, f"not an exact pin: {line!r}"
        pins[canonicalize_name(name)] = version.strip()
    return pins


def _constraints() -> dict[str, str]:
    return _pins((ROOT / "binder/constraints.txt").read_text().splitlines())


def _env(path: Path) -> tuple[list[str], dict[str, str]]:
    doc = yaml.safe_load(path.read_text())
    assert doc["channels"] == ["conda-forge"], path
    conda = [d for d in doc["dependencies"] if isinstance(d, str)]
    pip = next(d["pip"] for d in doc["dependencies"] if isinstance(d, dict))
    return conda, _pins(pip)


def test_every_pyproject_dependency_is_pinned_and_pin_satisfies_range() -> None:
    pins = _constraints()
    for name, req in _pyproject().items():
        assert name in pins, f"{name} is in pyproject.toml but not pinned in constraints.txt"
        assert req.specifier.contains(pins[name], prereleases=True), (
            f"{name}=={pins[name]} does not satisfy pyproject's {req.specifier}")


def test_environment_files_mirror_the_pins() -> None:
    pins = _constraints()
    runtime = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    needed = {canonicalize_name(Requirement(r).name)
              for r in [*runtime["dependencies"], *runtime["optional-dependencies"]["lab"]]}
    envs = [_env(ROOT / "environment.yml"), _env(ROOT / "binder/environment.yml")]
    for conda, pip in envs:
        assert "python=3.11" in conda and "pip" in conda
        assert needed <= set(pip), f"env files miss {needed - set(pip)}"
        for name, version in pip.items():
            assert pins.get(name) == version, f"{name}: env {version}, lock {pins.get(name)}"
    assert envs[0] == envs[1], "environment.yml and binder/environment.yml differ"


def test_root_environment_installs_labkit_and_binder_postbuild_does() -> None:
    doc = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in doc["dependencies"] if isinstance(d, dict))
    assert any(line.startswith("-e .") for line in pip)
    post = (ROOT / "binder/postBuild").read_text()
    assert post.startswith("#!/bin/bash") and "set -e" in post
    assert "pip install --no-deps -e ." in post


def test_never_depends_on_pypi_pynvml() -> None:
    names = set(_pyproject()) | set(_constraints())
    assert "pynvml" not in names, "the PyPI package pynvml downgrades nvidia-ml-py"
    assert "nvidia-ml-py" in names


def test_widget_frontend_does_not_time_out_model_lookups() -> None:
    """The installed widget frontend waits for voila's widget restore instead of a 2 s clock.

    jupyterlab_widgets 3.0.17 (ipywidgets 8.1.9, ipywidgets#4033) made ``get_model`` poll for a
    missing model for 2 s of wall-clock time. Voila renders cell outputs before its kernel
    websocket has restored the widgets; the poll's last timer then fires late on a busy machine,
    after the restore, and the output shows "Error displaying widget: model not found" for good.
    Without the poll the lookup fails at once while the restore is pending, and the output is
    re-rendered when the restore ends. README, "Stack notes".
    """
    static = Path(sys.prefix, "share/jupyter/labextensions/@jupyter-widgets/jupyterlab-manager",
                  "static")
    bodies = []
    for js in sorted(static.glob("*.js")):
        text = js.read_text(encoding="utf-8", errors="replace")
        at = text.find("widget model not found")
        while at >= 0:
            bodies.append(text[text.rfind("get_model(", 0, at):at])
            at = text.find("widget model not found", at + 1)
    assert bodies, f"no get_model in the widget frontend under {static}"
    for body in bodies:
        assert "Date.now()" not in body and "setTimeout" not in body, (
            "the installed jupyterlab_widgets times out get_model (3.0.17?): pin 3.0.16")
