"""labkit.serve.presave: course notebooks are saved without outputs (unit and a real server)."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from labkit.i18n import t
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


@contextmanager
def _jupyter_server(tmp_path: Path, course: Path, wiring: str, *more: str
                    ) -> Iterator[tuple[str, str]]:
    """A real `jupyter server` over ``tmp_path`` with the pre-save hook wired by ``wiring``
    (``presave.ENV`` naming ``course``); yield its base URL and token, stop it at the end."""
    port, token = _free_port(), "presave-test-token"
    env = {**os.environ, presave.ENV: str(course), "JUPYTER_CONFIG_DIR": str(tmp_path / "cfg"),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt")}
    argv = [sys.executable, "-m", "jupyter_server", wiring, *more,
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
        yield base, token
    finally:
        stop_process(server, timeout_s=15)
        log.close()


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
    with _jupyter_server(tmp_path, course, wiring) as (base, token):
        model = {"type": "notebook", "format": "json", "content": _notebook()}
        _request(f"{base}/api/contents/notebooks/03_goodput.ipynb", token, "PUT", model)
        _request(f"{base}/api/contents/mine/scratch.ipynb", token, "PUT", model)
    _assert_stripped((course / "03_goodput.ipynb").read_text(encoding="utf-8"))
    mine = json.loads((tmp_path / "mine" / "scratch.ipynb").read_text(encoding="utf-8"))
    assert mine["cells"][1]["outputs"], "a notebook outside the course keeps its outputs"


def _rerun(committed: nbformat.NotebookNode) -> dict[str, Any]:
    """What JupyterLab sends after Run All + save of an unchanged lesson: new execution counts
    (marked cells too, same text), every output, widget state, its own kernelspec name and the
    kernel's Python version."""
    nb = nbformat.reads(nbformat.writes(committed), as_version=4)
    n = 40
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        n += 1
        cell.execution_count = n
        for out in cell.outputs:
            if "execution_count" in out:
                out.execution_count = n
        if not cell.outputs:
            cell.outputs = [new_output("display_data", {WIDGET_VIEW: {"model_id": f"m{n}"},
                                                        "text/plain": "VBox()"})]
        cell.metadata["execution"] = {"iopub.status.idle": "2026-12-01T14:00:00.000Z"}
    nb.metadata.setdefault("kernelspec", {})["display_name"] = "Python 3.13 (other kernel)"
    nb.metadata.setdefault("language_info", {})["version"] = "3.13.1"
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    return json.loads(nbformat.writes(nb))


def _marked_with_output(nb: nbformat.NotebookNode) -> list[int]:
    return [i for i, c in enumerate(nb.cells) if c.cell_type == "code"
            and c.source.lstrip().startswith("# NBVAL_CHECK_OUTPUT") and c.outputs]


def test_hook_keeps_the_committed_counts_and_kernelspec(tmp_path: Path) -> None:
    course = tmp_path / "notebooks"
    course.mkdir()
    disk = course / "01_observe.ipynb"
    original = (ROOT / "notebooks" / "01_observe.ipynb").read_bytes()
    disk.write_bytes(original)
    committed = nbformat.reads(original.decode(), as_version=4)
    assert _marked_with_output(committed), "lesson 01 has marked cells with outputs"
    model: dict[str, Any] = {"type": "notebook", "format": "json",
                             "content": _rerun(committed)}
    presave.make_pre_save_hook([course])(model=model, path="notebooks/01_observe.ipynb",
                                         contents_manager=SimpleNamespace(root_dir=str(tmp_path)))
    saved = model["content"]
    assert saved.metadata["kernelspec"] == committed.metadata["kernelspec"]
    assert saved.metadata["kernelspec"]["display_name"] == "Python 3 (ipykernel)"  # the file's
    assert saved.metadata["language_info"] == committed.metadata["language_info"]
    for i in _marked_with_output(committed):
        assert saved.cells[i].execution_count == committed.cells[i].execution_count
        assert saved.cells[i].outputs == committed.cells[i].outputs
    assert nbformat.writes(saved) + "\n" == original.decode()  # as jupyter_server writes it


def test_an_edited_marked_cell_keeps_its_new_output() -> None:
    lesson = _notebook()
    lesson["metadata"]["kernelspec"] = {"display_name": "Python 3", "language": "python",
                                        "name": "python3"}
    committed = presave.strip_model({"content": lesson})["content"]
    rerun = nbformat.reads(json.dumps(_rerun(committed)), as_version=4)
    marked = rerun.cells[3]
    marked.source = marked.source.replace("42", "43")
    marked.outputs = [new_output("stream", name="stdout", text="43\n")]
    marked.execution_count = 9
    model = {"content": json.loads(nbformat.writes(rerun))}
    presave.strip_model(model)
    presave.keep_committed(model["content"], committed)
    assert model["content"].cells[3].execution_count == 9
    assert model["content"].cells[3].outputs[0]["text"] == "43\n"


def test_a_real_jupyter_server_writes_an_unchanged_lesson_back_byte_for_byte(
        tmp_path: Path) -> None:
    """Run All + save of lesson 01, through the contents API of a real `jupyter server` with
    `make lab`'s config: the file on disk is the checkout's, byte for byte (issue 17)."""
    course = tmp_path / "notebooks"
    course.mkdir()
    original = (ROOT / "notebooks" / "01_observe.ipynb").read_bytes()
    (course / "01_observe.ipynb").write_bytes(original)
    model = {"type": "notebook", "format": "json",
             "content": _rerun(nbformat.reads(original.decode(), as_version=4))}
    with _jupyter_server(tmp_path, course, f"--config={CONFIG}") as (base, token):
        _request(f"{base}/api/contents/notebooks/01_observe.ipynb", token, "PUT", model)
    assert (course / "01_observe.ipynb").read_bytes() == original


def test_disk_full_cause_finds_enospc_behind_jupyter_servers_error() -> None:
    from tornado import web

    try:
        try:
            raise OSError(errno.ENOSPC, "No space left on device")
        except OSError as err:
            raise web.HTTPError(500, f"Unexpected error while saving file: x {err}") from err
    except web.HTTPError as wrapped:
        assert presave.disk_full_cause(wrapped) is not None
    assert presave.disk_full_cause(OSError(errno.EDQUOT, "Disk quota exceeded")) is not None
    assert presave.disk_full_cause(OSError(errno.EACCES, "Permission denied")) is None
    assert presave.disk_full_cause(ValueError("x")) is None


def test_the_hubs_single_user_servers_use_the_disk_full_manager() -> None:
    from traitlets.config import Config

    from labkit.hub.singleuser_config import configure

    c = Config()
    configure(c)
    assert c.ServerApp.contents_manager_class == "labkit.serve.presave.CourseContentsManager"
    assert c.FileContentsManager.delete_to_trash is False  # a deleted file frees the image


def _status_and_message(url: str, token: str, method: str, body: dict[str, Any] | None = None
                        ) -> tuple[int, str]:
    try:
        _request(url, token, method, body)
    except urllib.error.HTTPError as err:
        return err.code, str(json.loads(err.read() or b"{}").get("message", ""))
    return 200, ""


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
def test_a_save_on_a_full_home_answers_in_korean_and_keeps_the_file(tmp_path: Path) -> None:
    """Issue 13: a student's full home (here a 1 MiB tmpfs) through a real `jupyter server`'s
    contents API: HTTP 507 with the Korean message, the saved file unchanged; after deleting
    a file (no trash) the save goes through."""
    home = tmp_path / "home"
    home.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0755", "tmpfs", str(home)],
                   check=True)
    try:
        small = {"type": "notebook", "format": "json", "content": _notebook()}
        big = json.loads(json.dumps(small))
        big["content"]["cells"][0]["source"] = "가" * 200_000  # ~600 kB of UTF-8
        wiring = ("--ServerApp.contents_manager_class="
                  "labkit.serve.presave.CourseContentsManager")
        with _jupyter_server(home, tmp_path / "course", wiring,
                             "--FileContentsManager.delete_to_trash=False") as (base, token):
            url = f"{base}/api/contents/mine.ipynb"
            assert _status_and_message(url, token, "PUT", small)[0] in (200, 201)
            before = (home / "mine.ipynb").read_bytes()
            free = os.statvfs(home).f_bavail * os.statvfs(home).f_frsize
            (home / "filler.bin").write_bytes(b"x" * (free - 64 * 1024))  # 64 kB stay free
            code, message = _status_and_message(url, token, "PUT", big)
            assert code == presave.INSUFFICIENT_STORAGE, (code, message)
            assert message == t("hub.save.disk_full"), message
            assert "No space" not in message and "Errno" not in message
            assert (home / "mine.ipynb").read_bytes() == before  # the last good save stays
            deleted = _status_and_message(f"{base}/api/contents/filler.bin", token, "DELETE")
            assert deleted[0] in (200, 204), deleted
            assert _status_and_message(url, token, "PUT", big)[0] in (200, 201)
            assert not list(home.glob(".Trash*"))  # the deleted file went nowhere (no trash)
    finally:
        subprocess.run(["umount", "-l", str(home)], check=False)


def test_a_checkpoint_on_a_full_disk_answers_in_korean(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Stop 20's hub trial: JupyterLab asks for a checkpoint when it opens a notebook; on a full
    home that failed as "Unhandled error". The file checkpoints' copy raising ENOSPC (as the
    kernel does) must come back as the Korean 507."""
    import asyncio

    from jupyter_server.services.contents.filecheckpoints import AsyncFileCheckpoints
    from tornado.web import HTTPError

    async def full(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(AsyncFileCheckpoints, "create_checkpoint", full)
    manager = presave.CourseContentsManager(root_dir=str(tmp_path))
    (tmp_path / "mine.ipynb").write_text("{}", encoding="utf-8")
    with ThreadPoolExecutor(1) as worker:  # Playwright's loop may run in the main thread
        outcome = worker.submit(
            lambda: asyncio.run(_caught(manager.create_checkpoint("mine.ipynb")))).result()
    assert isinstance(outcome, HTTPError), outcome
    assert (outcome.status_code, outcome.log_message) == (presave.INSUFFICIENT_STORAGE,
                                                          t("hub.save.disk_full"))


async def _caught(call: Any) -> object:
    try:
        return await call
    except Exception as err:  # the error is the result under test
        return err
