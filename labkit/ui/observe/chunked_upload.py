"""A file upload that checks the size in the browser and sends the file in chunks.

ipywidgets' ``FileUpload`` sends the whole file in one websocket message; a message over the
server's limit (tornado's ``websocket_max_message_size``: 10 MiB by default, 8 MiB for labkit's
voila and the class hub, ``labkit.serve.server.WEBSOCKET_MAX_MESSAGE_BYTES``) closes the
connection and the upload vanishes without a word. :class:`ChunkedUpload` (an ``anywidget``
ES module) reads the chosen file in the browser:

- larger than :attr:`ChunkedUpload.max_bytes`: nothing is sent but ``{"kind": "too_large",
  "name", "size"}``, and :attr:`ChunkedUpload.refused` is set (the app writes the Korean
  message beside the control);
- otherwise ``{"kind": "start", "name", "size", "count"}`` then ``count`` messages
  ``{"kind": "chunk", "index"}`` with one binary buffer of at most :attr:`chunk_bytes` each, far
  under any websocket limit; the kernel joins them and sets :attr:`value` in ``FileUpload``'s
  own shape (a tuple of one dict with ``name``, ``type``, ``size``, ``content``,
  ``last_modified``), so an app reads it as it reads a ``FileUpload``.

Messages are checked in the kernel as untrusted (a client can send anything): sizes, counts and
order; a bad sequence is dropped and reported in :attr:`refused` with ``kind`` "bad".

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

import anywidget
import traitlets

__all__ = ["CHUNK_BYTES", "ChunkedUpload"]

#: Bytes per chunk message: far under the 8 MiB websocket limit, few messages per file. [bytes]
CHUNK_BYTES = 1024 * 1024

_ESM = r"""
function render({ model, el }) {
  const label = document.createElement("label");
  label.className = "lk-chunked-upload-button jupyter-button";
  const input = document.createElement("input");
  input.type = "file";
  input.accept = model.get("accept");
  input.style.display = "none";
  const text = document.createElement("span");
  text.textContent = model.get("description");
  label.append(input, text);
  label.title = model.get("description");
  const status = document.createElement("span");
  status.className = "lk-chunked-upload-status";
  el.append(label, status);
  model.on("change:description", () => { text.textContent = model.get("description"); });
  input.addEventListener("change", async () => {
    const file = input.files && input.files[0];
    if (!file) return;
    input.value = "";
    if (file.size > model.get("max_bytes")) {
      model.send({ kind: "too_large", name: file.name, size: file.size });
      return;
    }
    const chunk = model.get("chunk_bytes");
    const count = Math.max(1, Math.ceil(file.size / chunk));
    model.send({ kind: "start", name: file.name, size: file.size, count });
    for (let i = 0; i < count; i++) {
      const part = await file.slice(i * chunk, Math.min(file.size, (i + 1) * chunk)).arrayBuffer();
      model.send({ kind: "chunk", index: i }, undefined, [part]);
      status.textContent = " " + Math.round((100 * (i + 1)) / count) + " %";
    }
    status.textContent = "";
  });
}
export default { render };
"""

_CSS = """
.lk-chunked-upload-button { display: inline-flex; align-items: center; padding: 0 12px;
  height: 28px; cursor: pointer; border-radius: 2px; }
.lk-chunked-upload-status { margin-left: 6px; color: #555; }
"""


class ChunkedUpload(anywidget.AnyWidget):  # type: ignore[misc]
    """An upload button that refuses an over-size file in the browser and sends the rest in
    chunks (see the module docstring).

    Parameters
    ----------
    description : str
        The button's text.
    accept : str
        Suffixes offered by the file dialog (``".csv,.txt"``).
    max_bytes : int
        Largest file sent. [bytes]
    chunk_bytes : int, default CHUNK_BYTES
        Bytes per message. [bytes]
    """

    _esm = _ESM
    _css = _CSS
    description = traitlets.Unicode("").tag(sync=True)
    accept = traitlets.Unicode("").tag(sync=True)
    max_bytes = traitlets.Int(0).tag(sync=True)
    chunk_bytes = traitlets.Int(CHUNK_BYTES).tag(sync=True)
    #: The received file, as ``FileUpload.value`` (kernel side only).
    value = traitlets.Tuple()
    #: The last refusal: ``{"kind": "too_large", "name", "size"}`` or ``{"kind": "bad", ...}``.
    refused = traitlets.Dict()

    def __init__(self, *, description: str, accept: str, max_bytes: int,
                 chunk_bytes: int = CHUNK_BYTES, **kwargs: Any) -> None:
        super().__init__(description=description, accept=accept, max_bytes=max_bytes,
                         chunk_bytes=chunk_bytes, **kwargs)
        self._pending: dict[str, Any] | None = None
        self._parts: list[bytes] = []
        self.on_msg(self._on_msg)

    def _refuse(self, kind: str, name: str = "", size: int = 0) -> None:
        self._pending, self._parts = None, []
        self.refused = {"kind": kind, "name": name, "size": size}

    def _on_msg(self, _widget: Any, content: Any, buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        kind = content.get("kind")
        if kind == "too_large":
            self._refuse("too_large", str(content.get("name", ""))[:200],
                         _int(content.get("size")))
        elif kind == "start":
            self._start(content)
        elif kind == "chunk":
            self._chunk(content, buffers or [])

    def _start(self, content: dict[str, Any]) -> None:
        name, size, count = str(content.get("name", ""))[:200], _int(content.get("size")), \
            _int(content.get("count"))
        if size > self.max_bytes:
            self._refuse("too_large", name, size)
            return
        if size < 0 or count != max(1, math.ceil(size / self.chunk_bytes)):
            self._refuse("bad", name, size)
            return
        self._pending, self._parts = {"name": name, "size": size, "count": count}, []

    def _chunk(self, content: dict[str, Any], buffers: list[Any]) -> None:
        job = self._pending
        if job is None:
            return
        if _int(content.get("index")) != len(self._parts) or len(buffers) != 1:
            self._refuse("bad", job["name"], job["size"])
            return
        part = bytes(buffers[0])
        received = sum(map(len, self._parts)) + len(part)
        if len(part) > self.chunk_bytes or received > job["size"]:
            self._refuse("bad", job["name"], job["size"])
            return
        self._parts.append(part)
        if len(self._parts) < job["count"]:
            return
        if received != job["size"]:
            self._refuse("bad", job["name"], job["size"])
            return
        data, self._pending, self._parts = b"".join(self._parts), None, []
        self.value = ({"name": job["name"], "type": "", "size": len(data),
                       "content": memoryview(data), "last_modified": datetime.now(tz=UTC)},)


def _int(value: Any) -> int:
    """Return ``value`` as an int (-1 for anything that is not a non-bool integral number)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return -1
    return int(value) if float(value).is_integer() else -1
