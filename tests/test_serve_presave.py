"""labkit.serve.presave: course notebooks are saved without outputs (unit and a real server)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from labkit.serve import presave
from labkit.serve.processes import stop_process, wait_until_answers

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "labkit" / "serve" / "config" / "jupyter_server_config.py"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _notebook() -> dict[str, Any]:
    """A saved lesson as the browser sends it: outputs, counts, a widget view, widget state."""
    plain = new_code_cell("x = 1\nx", execution_count=3, outputs=[
        new_output("execute_result", {"text/plain": "1"}, execution_count=3)])
    widget = new_code_cell("ui.panel()", execution_count=4, outputs=[
        new_output("display_data", {WIDGET_VIEW: {"model_id": "abc", "version_major": 2,
                                                   "version_minor": 0},
                                    "text/plain": "VBox()"})])
    marked = new_code_cell("# NBVAL_CHECK_OUTPUT\nprint(42)\nfig", execution_count=5, outputs=[
        new_output("stream", name="stdout", text="42\n"),
        new_output("display_data", {"image/png": "iVBOR", "text/plain": "<Figure>"})])
    nb = new_notebook(cells=[new_markdown_cell("# 제목"), plain, widget, marked])
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    return json.loads(nbformat.writes(nb))


def _assert_stripped(text: str) -> None:
    content = nbformat.reads(text, as_version=4)  # sources and texts joined, as nbformat reads
    assert "widgets" not in content["metadata"]
    _md, plain, widget, marked = content["cells"]
    assert (plain["outputs"], plain["execution_count"]) == ([], None)
    assert (widget["outputs"], widget["execution_count"]) == ([], None)
    # the marked cell keeps its text outputs (nbval checks them), not the image
    assert marked["execution_count"] == 5
    assert [o["output_type"] for o in marked["outputs"]] == ["stream", "display_data"]
    assert marked["outputs"][1]["data"] == {"text/plain": "<Figure>"}


def test_hook_strips_a_course_notebook_model(tmp_path: Path) -> None:
    course = tmp_path / "notebooks"
    course.mkdir()
    hook = presave.make_pre_save_hook([course])
    model = {"type": "notebook", "format": "json", "content": _notebook()}
    hook(model=model, path="notebooks/03_goodput.ipynb",
         contents_manager=SimpleNamespace(root_dir=str(tmp_path)))
    _assert_stripped(nbformat.writes(model["content"]))


def test_hook_leaves_other_notebooks_and_files_alone(tmp_path: Path) -> None:
    (tmp_path / "notebooks").mkdir()
    hook = presave.make_pre_save_hook([tmp_path / "notebooks"])
    manager = SimpleNamespace(root_dir=str(tmp_path))
    content = _notebook()
    model = {"type": "notebook", "format": "json", "content": json.loads(json.dumps(content))}
    hook(model=model, path="mine/scratch.ipynb", contents_manager=manager)
    assert model["content"] == content
    text = {"type": "file", "format": "text", "content": "notebooks/x"}
    hook(model=text, path="notebooks/notes.txt", contents_manager=manager)
    assert text["content"] == "notebooks/x"


def test_course_dirs_are_the_checkouts_notebooks_and_the_environment(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert presave.COURSE_NOTEBOOKS == ROOT / "notebooks"
    monkeypatch.setenv(presave.ENV, f"{tmp_path / 'a'}{os.pathsep}{tmp_path / 'b'}")
    assert presave.course_dirs() == [ROOT / "notebooks", tmp_path / "a", tmp_path / "b"]


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _request(url: str, token: str, method: str = "GET", body: dict[str, Any] | None = None
             ) -> dict[str, Any]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={
        "Authorization": f"token {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read() or b"{}")


@pytest.mark.parametrize("wiring", [
    f"--config={CONFIG}",  # make lab
    # the class hub's single-user servers (c.Spawner.args), see labkit.serve.presave
    "--FileContentsManager.pre_save_hook=labkit.serve.presave.pre_save_hook",
])
def test_a_real_jupyter_server_saves_course_notebooks_without_outputs(tmp_path: Path,
                                                                      wiring: str) -> None:
    """`jupyter server` with the hook: a PUT through the contents API lands clean on disk."""
    course = tmp_path / "notebooks"
    (tmp_path / "mine").mkdir()
    course.mkdir()
    port, token = _free_port(), "presave-test-token"
    env = {**os.environ, presave.ENV: str(course), "JUPYTER_CONFIG_DIR": str(tmp_path / "cfg"),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt")}
    argv = [sys.executable, "-m", "jupyter_server", wiring,
            f"--ServerApp.root_dir={tmp_path}", "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}", "--ServerApp.open_browser=False"]
    if os.geteuid() == 0:
        argv.append("--allow-root")
    log = (tmp_path / "server.log").open("wb")
    server = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_answers(f"{base}/api/status", server, timeout_s=60, what="jupyter server",
                           log_path=tmp_path / "server.log")  # a 403 without the token: up
        model = {"type": "notebook", "format": "json", "content": _notebook()}
        _request(f"{base}/api/contents/notebooks/03_goodput.ipynb", token, "PUT", model)
        _request(f"{base}/api/contents/mine/scratch.ipynb", token, "PUT", model)
    finally:
        stop_process(server, timeout_s=15)
        log.close()
    _assert_stripped((course / "03_goodput.ipynb").read_text(encoding="utf-8"))
    mine = json.loads((tmp_path / "mine" / "scratch.ipynb").read_text(encoding="utf-8"))
    assert mine["cells"][1]["outputs"], "a notebook outside the course keeps its outputs"
