"""JupyterLab's page config for the course (labkit.serve.labconfig): what is switched off."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from labkit.serve import labconfig

ROOT = Path(__file__).resolve().parents[1]
#: What the lessons need in JupyterLab (widgets, plotly, the upload widget, lesson 01's
#: nvdashboard, the Korean menus): never disabled.
NEEDED = ("@jupyter-widgets/jupyterlab-manager", "jupyterlab-plotly", "anywidget",
          "jupyterlab-nvdashboard", "@jupyterlab/translation-extension",
          "@jupyterlab/notebook-extension", "@jupyterlab/hub-extension")


def _installed_extensions() -> set[str]:
    """JupyterLab's own list of its core extensions, plus the installed prebuilt ones."""
    share = Path(sys.prefix) / "share" / "jupyter" / "lab"
    core = json.loads((share / "static" / "package.json").read_text())["jupyterlab"]
    prebuilt = Path(sys.prefix) / "share" / "jupyter" / "labextensions"
    names = {json.loads(p.read_text())["name"] for p in prebuilt.glob("**/package.json")
             if p.parent.parent in (prebuilt, *prebuilt.glob("@*"))}
    return set(core["extensions"]) | names


def test_every_disabled_extension_is_a_real_one_and_none_a_lesson_needs() -> None:
    installed = _installed_extensions()
    assert set(labconfig.DISABLED_EXTENSIONS) <= installed  # a typo would disable nothing
    assert not set(labconfig.DISABLED_EXTENSIONS) & set(NEEDED)
    assert set(NEEDED) - {"@jupyterlab/hub-extension"} <= installed


def test_write_page_config_writes_the_file_labextension_disable_writes(tmp_path: Path) -> None:
    path = labconfig.write_page_config(tmp_path)
    assert path == tmp_path / "etc" / "jupyter" / "labconfig" / "page_config.json"
    doc = json.loads(path.read_text())
    assert doc == {"disabledExtensions": {"@jupyterlab/debugger-extension": True,
                                          "@jupyterlab/extensionmanager-extension": True,
                                          "@jupyterlab/lsp-extension": True,
                                          "@jupyterlab/pluginmanager-extension": True,
                                          "@voila-dashboards/jupyterlab-preview": True}}
    assert [p.name for p in path.parent.iterdir()] == ["page_config.json"]  # nothing staged


def test_make_lab_and_the_students_environment_both_write_it() -> None:
    makefile = (ROOT / "Makefile").read_text()
    install = re.search(r"^\$\(VENV\)/\.lab-installed:.*?^\t@touch \$@", makefile, re.S | re.M)
    lab = re.search(r"^lab:.*?(?=^\S)", makefile, re.S | re.M)
    assert install and lab
    for block in (install.group(0), lab.group(0)):
        assert "$(BIN)/python -m labkit.serve.labconfig" in block
    assert "write_page_config(env)" in (ROOT / "labkit/hub/userenv.py").read_text()
