"""Strip outputs when a course notebook is saved: a jupyter_server pre-save hook.

JupyterLab autosaves. Without this hook a class dirties the checkout (outputs, execution
counts, widget state in every lesson) and a reopened notebook shows "Error displaying widget:
model not found" for every widget view saved without its kernel. With it, a course notebook is
written to disk exactly as ``make notebooks`` leaves it (:func:`labkit._dev.notebooks.clean`:
cells marked ``# NBVAL_CHECK_OUTPUT`` keep their text outputs, every other output and the widget
state go); the student's open tab keeps its outputs until it is closed.

What the hook keeps, it keeps in its committed form (issue 17): a marked cell whose source the
student did not change keeps the outputs AND execution count of the file on disk, and the
notebook keeps the file's ``kernelspec`` and ``language_info`` metadata (JupyterLab rewrites the
kernelspec's ``display_name`` to "Python 3 (ipykernel)" and the running Python's version into
``language_info``). So a student who runs everything and saves without changing anything writes
the bytes of the checkout back, and ``git status`` stays clean (:func:`keep_committed`).

Wiring: ``make lab`` passes ``--config=labkit/serve/config/jupyter_server_config.py``, which
sets ``c.FileContentsManager.pre_save_hook = "labkit.serve.presave.pre_save_hook"``; a class
hub's single-user servers take the same as a command-line option
(``--FileContentsManager.pre_save_hook=labkit.serve.presave.pre_save_hook`` in
``c.Spawner.args``). Both are tested against a real ``jupyter server``.

A full disk (issue 13): on the class hub a student's home is a fixed-size image
(:mod:`labkit.hub.disk`), so a save can fail with ``ENOSPC`` (or ``EDQUOT`` under quotas).
jupyter_server turns that into "Unexpected error while saving file: … [Errno 28] No space left
on device" (HTTP 500), which JupyterLab shows as is. :class:`CourseContentsManager`
(jupyter_server's default ``AsyncLargeFileManager``) answers HTTP 507 (Insufficient Storage,
RFC 4918) with a Korean message that says what to do (:func:`disk_full_error`); the file on
disk is left as it was (jupyter_server writes through a temporary file). The English detail
goes to the server's log.

Which notebooks: those under the course's ``notebooks/`` folder (the checkout's, next to the
``labkit`` package) and under every folder in ``LABKIT_COURSE_NOTEBOOKS`` (``os.pathsep``
separated: the class hub's copies in the students' homes). Other notebooks are saved as they are.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import nbformat
from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
from tornado import web

from labkit._dev.notebooks import clean, is_marked
from labkit.i18n import t

__all__ = ["COURSE_NOTEBOOKS", "DISK_FULL_ERRNOS", "KEPT_METADATA", "CourseContentsManager",
           "course_dirs", "disk_full_cause", "disk_full_error", "keep_committed",
           "make_pre_save_hook", "pre_save_hook"]

#: Notebook metadata a save takes from the file on disk (the kernel the student ran is theirs;
#: the lesson's file names the one it was written for).
KEPT_METADATA = ("kernelspec", "language_info")

#: The errors of a full file system or quota (``errno(3)``: "No space left on device",
#: "Disk quota exceeded").
DISK_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)
#: HTTP 507 Insufficient Storage (RFC 4918 section 11.5).
INSUFFICIENT_STORAGE = 507

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


def keep_committed(nb: nbformat.NotebookNode, on_disk: nbformat.NotebookNode
                   ) -> nbformat.NotebookNode:
    """Give a cleaned notebook the committed form of what cleaning keeps; returns ``nb``.

    Parameters
    ----------
    nb : NotebookNode
        The notebook being saved, already cleaned (:func:`labkit._dev.notebooks.clean`).
    on_disk : NotebookNode
        The file it replaces (nbformat 4).

    A marked code cell (``# NBVAL_CHECK_OUTPUT``) of ``nb`` whose source equals a marked cell
    of ``on_disk`` (the same cell ``id``, else the only such cell with that source) takes that
    cell's ``outputs`` and ``execution_count``; :data:`KEPT_METADATA` entries present on disk
    replace those of ``nb``. A cell the student edited keeps its own (cleaned) outputs.
    """
    marked = [c for c in on_disk.cells if is_marked(c)]
    by_id = {c.get("id"): c for c in marked if c.get("id")}
    by_source: dict[str, list[nbformat.NotebookNode]] = {}
    for c in marked:
        by_source.setdefault(c.source, []).append(c)
    for cell in nb.cells:
        if not is_marked(cell):
            continue
        same = by_id.get(cell.get("id"))
        if same is None or same.source != cell.source:
            twins = by_source.get(cell.source, [])
            same = twins[0] if len(twins) == 1 else None
        if same is not None:
            cell.outputs = same.outputs
            cell.execution_count = same.execution_count
    for key in KEPT_METADATA:
        if key in on_disk.metadata:
            nb.metadata[key] = on_disk.metadata[key]
    return nb


def _read_on_disk(os_path: Path) -> nbformat.NotebookNode | None:
    try:
        return nbformat.read(os_path, as_version=4)
    except (OSError, ValueError, AttributeError):  # no file yet, or not a notebook
        return None


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
            on_disk = _read_on_disk(os_path)
            if on_disk is not None:
                keep_committed(model["content"], on_disk)

    return hook


pre_save_hook = make_pre_save_hook()
"""The hook ``make lab`` configures: course notebooks (:func:`course_dirs`) are stripped."""


def disk_full_cause(err: BaseException) -> OSError | None:
    """Return the ``ENOSPC``/``EDQUOT`` error behind ``err`` (itself, cause or context) or None.

    jupyter_server re-raises a failed write as ``HTTPError(500)`` ``from`` the ``OSError``.
    """
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in DISK_FULL_ERRNOS:
            return current
        current = current.__cause__ or current.__context__
    return None


def disk_full_error() -> web.HTTPError:
    """Return the HTTP 507 error a full home answers a save with (the Korean message)."""
    return web.HTTPError(INSUFFICIENT_STORAGE, t("hub.save.disk_full"),
                         reason="Insufficient Storage")


class CourseContentsManager(AsyncLargeFileManager):  # type: ignore[misc]
    """jupyter_server's default contents manager; a save on a full disk says so in Korean.

    ``c.ServerApp.contents_manager_class = "labkit.serve.presave.CourseContentsManager"``
    (the class hub's single-user servers: :mod:`labkit.hub.singleuser_config`).
    """

    async def save(self, model: dict[str, Any], path: str = "") -> dict[str, Any]:
        """Save as jupyter_server does; ``ENOSPC``/``EDQUOT`` become :func:`disk_full_error`."""
        with self._disk_full_in_korean("labkit: %s not saved, the disk is full: %s", path):
            return dict(await super().save(model, path))

    async def create_checkpoint(self, path: str) -> dict[str, Any]:
        """Checkpoint as jupyter_server does (JupyterLab asks for one when it opens a notebook);
        on a full disk the Korean :func:`disk_full_error` instead of "Unhandled error"."""
        with self._disk_full_in_korean("labkit: no checkpoint of %s, the disk is full: %s", path):
            return dict(await super().create_checkpoint(path))

    @contextlib.contextmanager
    def _disk_full_in_korean(self, log_message: str, path: str) -> Iterator[None]:
        """Turn a full disk (``ENOSPC``/``EDQUOT`` anywhere in the cause chain) into the Korean
        :func:`disk_full_error`, logged with ``log_message % (path, cause)``; re-raise the rest."""
        try:
            yield
        except Exception as err:
            full = disk_full_cause(err)
            if full is None:
                raise
            self.log.warning(log_message, path, full)
            raise disk_full_error() from err
