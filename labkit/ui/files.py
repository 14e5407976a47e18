"""File upload and download for lesson apps, safe for a class.

A browser can send any bytes through an ``ipywidgets.FileUpload`` (and any value: voila lets a
client set synced traits directly), so an app never trusts the widget: :func:`read_upload`
checks the count, size, file type and text encoding and raises
:class:`~labkit.validate.InputError` (shown in Korean beside the control). Nothing is written on
the server: an upload stays in memory, and an export goes back to the student's browser as a
download link (:func:`download_link`); scratch files belong in ``labkit.serve.session_dir()``.

The websocket itself refuses messages over 8 MiB (``labkit.serve.server``), so an upload never
costs the server more than that; :data:`DEFAULT_MAX_UPLOAD_BYTES` is the lessons' own limit.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

import ipywidgets as widgets

from labkit.i18n import error_text, t
from labkit.validate import InputError

__all__ = [
    "DEFAULT_MAX_UPLOAD_BYTES",
    "UPLOAD_ERRORS",
    "Upload",
    "download_link",
    "file_upload",
    "read_upload",
    "upload_error_text",
]

#: Largest upload a lesson accepts by default (a month of nvidia-smi CSV at 1 s is ~1 MB). [bytes]
DEFAULT_MAX_UPLOAD_BYTES = 2 * 1024 * 1024
#: Largest export offered as a download link (it travels inside the page). [bytes]
MAX_DOWNLOAD_BYTES = 4 * 1024 * 1024
#: Catalog prefix of the upload messages (``error_text(err, prefix=UPLOAD_ERRORS)``).
UPLOAD_ERRORS = "serve.upload"


def _size(n: int) -> str:
    return f"{n / 2**20:.1f} MB" if n >= 2**20 else f"{n / 1024:.0f} KB" if n >= 1024 else f"{n} B"


@dataclass(frozen=True)
class Upload:
    """One uploaded file, checked by :func:`read_upload`.

    Attributes
    ----------
    name : str
        The file's base name as the browser gave it (never used as a server path).
    data : bytes
        Its content.
    """

    name: str
    data: bytes

    def text(self) -> str:
        """Return the content decoded as UTF-8 (a BOM is dropped).

        Raises
        ------
        InputError
            Field ``encoding``, rule ``other``, if it is not UTF-8 text.
        """
        try:
            return self.data.decode("utf-8-sig")
        except UnicodeDecodeError as err:
            raise InputError("encoding", "other", self.name,
                             f"{self.name} is not UTF-8 text ({err.reason})") from err


def read_upload(value: Any, *, max_bytes: int = DEFAULT_MAX_UPLOAD_BYTES,
                suffixes: Iterable[str] = (".csv",)) -> Upload:
    """Check a ``FileUpload`` value (ipywidgets 8: a tuple of dicts) and return the file.

    Parameters
    ----------
    value : sequence of mapping
        ``upload.value``: each item has ``name`` and ``content`` (bytes or memoryview).
    max_bytes : int, default DEFAULT_MAX_UPLOAD_BYTES
        Largest accepted size. [bytes]
    suffixes : iterable of str, default (".csv",)
        Accepted file name endings (case-insensitive).

    Returns
    -------
    Upload

    Raises
    ------
    InputError
        Field ``files`` (rule ``at_least``: none chosen; ``at_most``: more than one), ``size``
        (``at_most``), ``suffix`` (``choice``), or ``files`` (``other``: not a FileUpload value).
    """
    allowed = tuple(s.lower() for s in suffixes)
    if not isinstance(value, Sequence) or isinstance(value, (str, bytes)):
        raise InputError("files", "other", type(value).__name__,
                         f"not a FileUpload value: {type(value).__name__}")
    if len(value) == 0:
        raise InputError("files", "at_least", 0, "no file chosen", limit=1)
    if len(value) > 1:
        raise InputError("files", "at_most", len(value), "one file at a time", limit=1)
    item = value[0]
    if not isinstance(item, Mapping):
        raise InputError("files", "other", type(item).__name__, "not a FileUpload item")
    name = PurePath(str(item.get("name", ""))).name or "upload"
    content = item.get("content", b"")
    if not isinstance(content, (bytes, bytearray, memoryview)):
        raise InputError("files", "other", type(content).__name__, "content is not bytes")
    size = len(content) if not isinstance(content, memoryview) else content.nbytes
    if size > max_bytes:
        raise InputError("size", "at_most", _size(size), f"{name} is {size} bytes",
                         limit=_size(max_bytes))
    if allowed and not name.lower().endswith(allowed):
        raise InputError("suffix", "choice", name, f"{name} is not one of {allowed}",
                         limit=allowed)
    return Upload(name, bytes(content))


def upload_error_text(err: ValueError) -> str:
    """Return the Korean message for an error from :func:`read_upload` / :meth:`Upload.text`."""
    return error_text(err, prefix=UPLOAD_ERRORS)


def file_upload(css_class: str, *, suffixes: Iterable[str] = (".csv",)) -> widgets.FileUpload:
    """Return a one-file ``FileUpload`` for ``suffixes``, with CSS class ``css_class``.

    The ``accept`` filter only guides the browser's file dialog; check with :func:`read_upload`.
    """
    upload = widgets.FileUpload(accept=",".join(suffixes), multiple=False)
    upload.add_class(css_class)
    return upload


#: A download link drawn as a button (``download_link(..., button=True)``): the colours of
#: the lessons' primary buttons, so a student finds it beside the other controls.
_BUTTON_STYLE = ("display:inline-block;padding:6px 14px;border-radius:4px;background:#2f6fb0;"
                 "color:#fff;text-decoration:none;font-weight:600")


def download_link(filename: str, data: bytes, mime: str = "text/csv",
                  css_class: str = "lk-download", *, label: str | None = None,
                  button: bool = False) -> widgets.HTML:
    """Return a link that saves ``data`` as ``filename`` in the student's browser.

    The bytes travel inside the page (a ``data:`` URL): nothing is written on the server.
    ``label`` replaces the default text ("<file> 내려받기 (size)"), the size kept after it;
    ``button`` draws the link as a button.

    Raises
    ------
    InputError
        Field ``size``, rule ``at_most``, if ``data`` is over 4 MiB.
    """
    if len(data) > MAX_DOWNLOAD_BYTES:
        raise InputError("size", "at_most", _size(len(data)), "export too large",
                         limit=_size(MAX_DOWNLOAD_BYTES))
    name = html.escape(PurePath(filename).name, quote=True)
    href = f"data:{html.escape(mime, quote=True)};base64,{base64.b64encode(data).decode()}"
    text = (t("serve.download", name=PurePath(filename).name, size=_size(len(data)))
            if label is None else f"{label} ({_size(len(data))})")
    style = f' role="button" style="{_BUTTON_STYLE}"' if button else ""
    link = widgets.HTML(f'<a download="{name}" href="{href}"{style}>{html.escape(text)}</a>')
    link.add_class(css_class)
    return link
