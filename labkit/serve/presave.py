"""Strip outputs when a course notebook is saved: a jupyter_server pre-save hook.

JupyterLab autosaves. Without this hook a class dirties the checkout (outputs, execution
counts, widget state in every lesson) and a reopened notebook shows "Error displaying widget:
model not found" for every widget view saved without its kernel. With it, a course notebook is
written to disk exactly as ``make notebooks`` leaves it (:func:`labkit._dev.notebooks.clean`:
cells marked ``# NBVAL_CHECK_OUTPUT`` keep their text outputs, every other output and the widget
state go); the student's open tab keeps its outputs until it is closed.

Wiring: ``make lab`` passes ``--config=labkit/serve/config/jupyter_server_config.py``, which
sets ``c.FileContentsManager.pre_save_hook = "labkit.serve.presave.pre_save_hook"``; a class
hub's single-user servers take the same as a command-line option
(``--FileContentsManager.pre_save_hook=labkit.serve.presave.pre_save_hook`` in
``c.Spawner.args``). Both are tested against a real ``jupyter server``.

Which notebooks: those under the course's ``notebooks/`` folder (the checkout's, next to the
``labkit`` package) and under every folder in ``LABKIT_COURSE_NOTEBOOKS`` (``os.pathsep``
separated: the class hub's copies in the students' homes). Other notebooks are saved as they are.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import nbformat

from labkit._dev.notebooks import clean

__all__ = ["COURSE_NOTEBOOKS", "course_dirs", "make_pre_save_hook", "pre_save_hook"]

COURSE_NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
ENV = "LABKIT_COURSE_NOTEBOOKS"


def course_dirs() -> list[Path]:
    """Return the folders whose notebooks are stripped on save (see the module docstring)."""
    extra = [Path(p).expanduser() for p in os.environ.get(ENV, "").split(os.pathsep) if p]
    return [COURSE_NOTEBOOKS, *extra]


def _inside(path: Path, dirs: Iterable[Path]) -> bool:
    resolved = path.resolve()
    return any(resolved.is_relative_to(d.resolve()) for d in dirs)


def strip_model(model: dict[str, Any]) -> dict[str, Any]:
    """Strip a contents-API notebook model's content in place (and return the model).

    Parameters
    ----------
    model : dict
        A jupyter_server contents model with ``type == "notebook"`` and ``content`` a notebook
        as JSON (nbformat 4).

    Returns
    -------
    dict
        The same model, its ``content`` cleaned by :func:`labkit._dev.notebooks.clean`.
    """
    # nbformat.reads, not from_dict: it joins sources sent as lists of lines, which clean()
    # needs to find the NBVAL_CHECK_OUTPUT mark, and upgrades an older nbformat.
    nb = nbformat.reads(json.dumps(model["content"]), as_version=4)
    model["content"] = clean(nb)
    return model


def make_pre_save_hook(dirs: Iterable[Path | str] | None = None) -> Callable[..., None]:
    """Return a ``FileContentsManager.pre_save_hook`` that strips notebooks under ``dirs``.

    Parameters
    ----------
    dirs : iterable of path, optional
        Folders whose notebooks are stripped; default :func:`course_dirs` at each save.
    """
    fixed = None if dirs is None else [Path(d) for d in dirs]

    def hook(*, model: dict[str, Any], path: str, contents_manager: Any, **_: Any) -> None:
        if model.get("type") != "notebook" or "content" not in model:
            return
        os_path = Path(contents_manager.root_dir, path.lstrip("/"))
        if _inside(os_path, fixed if fixed is not None else course_dirs()):
            strip_model(model)

    return hook


pre_save_hook = make_pre_save_hook()
"""The hook ``make lab`` configures: course notebooks (:func:`course_dirs`) are stripped."""
