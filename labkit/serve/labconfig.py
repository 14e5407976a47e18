"""JupyterLab's page config for the course: the core extensions a lesson never uses, disabled.

Written to ``<env>/etc/jupyter/labconfig/page_config.json`` (the file ``jupyter labextension
disable --level=sys_prefix`` writes) by ``make`` for the course's venv and by
:mod:`labkit.hub.userenv` for the students' environment. Each one disabled costs something on
every page or kernel, and no lesson, exercise or the teacher's guide uses it:

- ``@jupyterlab/debugger-extension``: asks every new kernel for its debugger state
  (``debug_request``), which makes ipykernel start debugpy in the student's kernel;
- ``@jupyterlab/extensionmanager-extension`` and ``@jupyterlab/pluginmanager-extension``:
  installing or switching off extensions is the operator's job (``make``), not a student's
  (the extension manager also lists PyPI, which a classroom network may not reach);
- ``@jupyterlab/lsp-extension``: language-server support; no language server is installed;
- ``@voila-dashboards/jupyterlab-preview``: voila's preview button in the notebook toolbar;
  the teacher presents with ``make present`` and the class hub, never from a student's lab.

The Korean language pack, ipywidgets, plotly, anywidget and nvdashboard are not touched
(``tests/browser/test_lab_korean.py``, ``test_lab_clean_open.py``). Measured with
``benchmarks/bench_lab_load.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["DISABLED_EXTENSIONS", "page_config", "write_page_config"]

DISABLED_EXTENSIONS: tuple[str, ...] = (
    "@jupyterlab/debugger-extension",
    "@jupyterlab/extensionmanager-extension",
    "@jupyterlab/lsp-extension",
    "@jupyterlab/pluginmanager-extension",
    "@voila-dashboards/jupyterlab-preview",
)


def page_config() -> dict[str, Any]:
    """Return the ``page_config.json`` document: ``{"disabledExtensions": {name: true}}``."""
    return {"disabledExtensions": dict.fromkeys(DISABLED_EXTENSIONS, True)}


def write_page_config(prefix: Path) -> Path:
    """Write :func:`page_config` as ``<prefix>/etc/jupyter/labconfig/page_config.json``.

    Parameters
    ----------
    prefix : pathlib.Path
        The environment's ``sys.prefix`` (the venv, the students' environment).

    Returns
    -------
    pathlib.Path
        The file written (replaced whole: the course owns this environment's page config).
    """
    path = prefix / "etc" / "jupyter" / "labconfig" / "page_config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    staged = path.with_name(".page_config.json.new")
    staged.write_text(json.dumps(page_config(), indent=2) + "\n", encoding="utf-8")
    staged.replace(path)
    return path


if __name__ == "__main__":  # python -m labkit.serve.labconfig [PREFIX]: the Makefile's step
    print(write_page_config(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(sys.prefix)))
