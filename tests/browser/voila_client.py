"""A scripted voila "student" without a browser: fetch a page, talk to its kernel's websocket.

Used by the security tests (what a hostile client can send) and by the classroom benchmark (30
students on one machine). It speaks the Jupyter kernel websocket protocols voila serves:
``v1.kernel.websocket.jupyter.org`` (what browsers negotiate) and the legacy JSON/binary framing
(a client that asks for no subprotocol).
"""

from __future__ import annotations

import itertools
import json
import re
import struct
import time
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import websocket  # websocket-client

V1 = "v1.kernel.websocket.jupyter.org"
_KERNEL_ID = re.compile(r'"kernelId":\s*"([0-9a-f-]{36})"')


@dataclass
class Page:
    """A voila page fetched over HTTP (the notebook has run server-side when it returns)."""

    html: str
    kernel_id: str
    first_byte_s: float
    complete_s: float


def fetch_page(base_url: str, notebook: str, token: str | None = None,
               timeout: float = 180) -> Page:
    """GET ``voila/render/<notebook>`` and return its HTML and kernel id.

    Raises
    ------
    urllib.error.HTTPError
        For a refused page (e.g. 503 when the class is full).
    LookupError
        If the page holds no kernel id.
    """
    url = f"{base_url}voila/render/{notebook}" + (f"?token={token}" if token else "")
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=timeout) as response:
        first = response.read(1)
        first_byte = time.perf_counter() - start
        html = (first + response.read()).decode("utf-8")
    complete = time.perf_counter() - start
    match = _KERNEL_ID.search(html)
    if match is None:
        raise LookupError(f"no kernel id in {url}")
    return Page(html, match.group(1), first_byte, complete)


@dataclass
class Message:
    """One kernel message received over the websocket."""

    channel: str
    header: dict[str, Any]
    parent_header: dict[str, Any]
    metadata: dict[str, Any]
    content: dict[str, Any]
    buffers: list[bytes] = field(default_factory=list)
    raw: bytes | str = b""
    binary: bool = False

    @property
    def msg_type(self) -> str:
        return str(self.header.get("msg_type", ""))

    @property
    def parent_id(self) -> str:
        return str(self.parent_header.get("msg_id", ""))


def encode_v1(channel: str, msg: dict[str, Any], buffers: list[bytes] | None = None) -> bytes:
    """Serialize a message with the v1 websocket protocol (as jupyter_server does)."""
    parts = [json.dumps(msg[k]).encode() for k in ("header", "parent_header", "metadata",
                                                   "content")]
    parts += list(buffers or [])
    chan = channel.encode()
    offsets = [8 * (1 + 1 + len(parts) + 1)]
    offsets.append(offsets[-1] + len(chan))
    for part in parts:
        offsets.append(offsets[-1] + len(part))
    head = struct.pack("<Q", len(offsets)) + b"".join(struct.pack("<Q", o) for o in offsets)
    return head + chan + b"".join(parts)


def decode_v1(data: bytes) -> Message:
    """Parse a v1 websocket message."""
    n = int.from_bytes(data[:8], "little")
    offsets = [int.from_bytes(data[8 * (i + 1): 8 * (i + 2)], "little") for i in range(n)]
    channel = data[offsets[0]:offsets[1]].decode()
    parts = [data[offsets[i]:offsets[i + 1]] for i in range(1, n - 1)]
    header, parent, metadata, content = (json.loads(p) if p else {} for p in parts[:4])
    return Message(channel, header, parent, metadata, content, [bytes(b) for b in parts[4:]],
                   data, True)


def decode_legacy_binary(data: bytes) -> Message:
    """Parse a legacy binary message (4-byte big-endian part count and offsets)."""
    nbufs = struct.unpack("!i", data[:4])[0]
    offsets = [*struct.unpack("!" + "I" * nbufs, data[4: 4 * (nbufs + 1)]), len(data)]
    parts = [data[a:b] for a, b in itertools.pairwise(offsets)]
    msg = json.loads(parts[0])
    return Message(msg.get("channel", ""), msg["header"], msg["parent_header"],
                   msg.get("metadata", {}), msg["content"], [bytes(p) for p in parts[1:]],
                   data, True)


class KernelClient:
    """A websocket connection to one voila kernel (``protocol``: "v1" or "legacy")."""

    def __init__(self, base_url: str, kernel_id: str, *, protocol: str = "v1",
                 token: str | None = None, timeout: float = 60) -> None:
        self.session = uuid.uuid4().hex
        self.protocol = protocol
        self.timeout = timeout
        url = base_url.replace("http://", "ws://", 1)
        url += f"api/kernels/{kernel_id}/channels?session_id={self.session}"
        if token:
            url += f"&token={token}"
        self.ws = websocket.create_connection(
            url, timeout=timeout, subprotocols=[V1] if protocol == "v1" else None)
        self.backlog: list[Message] = []

    def close(self) -> None:
        """Close the websocket (the kernel stays until culled or shut down)."""
        self.ws.close()

    def send(self, msg_type: str, content: dict[str, Any], channel: str = "shell",
             buffers: list[bytes] | None = None, metadata: dict[str, Any] | None = None) -> str:
        """Send a message; return its msg_id."""
        msg_id = uuid.uuid4().hex
        msg = {
            "header": {"msg_id": msg_id, "msg_type": msg_type, "session": self.session,
                       "username": "student", "version": "5.3",
                       "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
            "parent_header": {}, "metadata": metadata or {}, "content": content,
        }
        if self.protocol == "v1":
            self.ws.send_binary(encode_v1(channel, msg, buffers))
        else:
            self.ws.send(json.dumps({**msg, "channel": channel, "buffers": []}))
        return msg_id

    def recv(self, timeout: float | None = None) -> Message:
        """Return the next message (raises ``websocket.WebSocketTimeoutException``)."""
        self.ws.settimeout(timeout or self.timeout)
        opcode, data = self.ws.recv_data()
        if opcode == websocket.ABNF.OPCODE_TEXT:
            msg = json.loads(data.decode())
            return Message(msg.get("channel", ""), msg["header"], msg["parent_header"],
                           msg.get("metadata", {}), msg["content"], [], data.decode(), False)
        if self.protocol == "v1":
            return decode_v1(data)
        return decode_legacy_binary(data)

    def collect(self, msg_id: str, timeout: float | None = None, *,
                reply: bool = True) -> list[Message]:
        """Return every message answering ``msg_id`` until the kernel is idle (and, with
        ``reply``, has sent its shell reply)."""
        deadline = time.monotonic() + (timeout or self.timeout)
        got: list[Message] = []
        idle, replied = False, not reply
        while not (idle and replied):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no idle/reply for {msg_id} within the timeout")
            msg = self.recv(left)
            if msg.parent_id != msg_id:
                self.backlog.append(msg)
                continue
            got.append(msg)
            if msg.msg_type == "status" and msg.content.get("execution_state") == "idle":
                idle = True
            if msg.channel == "shell" or msg.msg_type.endswith("_reply"):
                replied = True
        return got

    def iopub_only(self, msg_id: str, timeout: float | None = None) -> list[Message]:
        """Like :meth:`collect` for requests with no shell reply (``comm_msg``)."""
        return self.collect(msg_id, timeout, reply=False)

    def kernel_info(self, timeout: float | None = None) -> dict[str, Any]:
        """Ask for kernel_info (proves the kernel answers); return the reply content."""
        replies = [m for m in self.collect(self.send("kernel_info_request", {}), timeout)
                   if m.msg_type == "kernel_info_reply"]
        return replies[0].content

    def widget_states(self) -> dict[str, dict[str, Any]]:
        """Return every widget's synced state by comm id (``comm_info`` + ``request_state``)."""
        reply = next(m for m in self.collect(self.send("comm_info_request",
                                                       {"target_name": "jupyter.widget"}))
                     if m.msg_type == "comm_info_reply")
        states: dict[str, dict[str, Any]] = {}
        for comm_id in reply.content["comms"]:
            msg_id = self.comm_msg(comm_id, {"method": "request_state"})
            for msg in self.iopub_only(msg_id):
                data = msg.content.get("data", {})
                if msg.msg_type == "comm_msg" and data.get("method") == "update":
                    states[comm_id] = data["state"]
        return states

    def comm_msg(self, comm_id: str, data: dict[str, Any],
                 buffers: list[bytes] | None = None) -> str:
        """Send a ``comm_msg`` to a widget; return its msg_id."""
        return self.send("comm_msg", {"comm_id": comm_id, "data": data}, buffers=buffers)

    def set_state(self, comm_id: str, state: dict[str, Any], *,
                  until: Callable[[list[Message]], object] | None = None,
                  settle_s: float = 1.0) -> list[Message]:
        """Set synced traits of a widget as a browser would; return the kernel's answers.

        A lesson app recomputes a browser's change after a short debounce
        (``labkit.ui.components.DEBOUNCE_S``), once the kernel has gone idle: the answers are
        read past idle until ``until(answers)`` holds, or else until ``settle_s`` seconds pass
        with no further answer.
        """
        msg_id = self.comm_msg(comm_id, {"method": "update", "state": state, "buffer_paths": []})
        got = self.iopub_only(msg_id)
        deadline = time.monotonic() + self.timeout
        while not (until is not None and until(got)):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                msg = self.recv(min(left, settle_s) if until is None else left)
            except websocket.WebSocketTimeoutException:
                break
            if msg.parent_id == msg_id:
                got.append(msg)
            else:
                self.backlog.append(msg)
        return got


def request_states(client: KernelClient) -> dict[str, dict[str, Any]]:
    """Fetch every widget's state in one request, as the page's widget manager does.

    (ipywidgets 8: a ``jupyter.widget.control`` comm, protocol 1.0.0, method ``request_states``.)

    Raises
    ------
    RuntimeError
        If the kernel does not answer with the states.
    """
    comm_id = uuid.uuid4().hex
    client.iopub_only(client.send("comm_open", {
        "comm_id": comm_id, "target_name": "jupyter.widget.control", "data": {}},
        metadata={"version": "1.0.0"}))
    for msg in client.iopub_only(client.comm_msg(comm_id, {"method": "request_states"})):
        data = msg.content.get("data", {})
        if msg.msg_type == "comm_msg" and data.get("method") == "update_states":
            return {k: v["state"] for k, v in data["states"].items()}
    raise RuntimeError("the kernel sent no widget states")


def find_widget(states: dict[str, dict[str, Any]], css_class: str) -> str:
    """Return the comm id of the widget carrying ``css_class``.

    Raises
    ------
    LookupError
        If none does.
    """
    for comm_id, state in states.items():
        if css_class in state.get("_dom_classes", ()):
            return comm_id
    raise LookupError(f"no widget with class {css_class!r}")


def interaction_state(state: dict[str, Any], how: str, value: Any) -> dict[str, Any] | None:
    """Return the state update a browser sends for a main interaction (None for a click)."""
    if how in ("fill", "slider", "toggle"):
        return {"value": value}
    if how == "select":
        return {"index": list(state.get("_options_labels", ())).index(value)}
    return None


def displayed_plots(messages: list[Message]) -> list[dict[str, Any]]:
    """Return the plotly figures shown (in Output widgets) among ``messages``.

    A figure arrives either as a ``display_data`` message or, as
    :class:`labkit.ui.components.FigureOutput` sends it, as a ``comm_msg`` that sets an Output
    widget's ``outputs`` state.
    """
    mime = "application/vnd.plotly.v1+json"
    plots: list[dict[str, Any]] = []
    for m in messages:
        if m.msg_type == "display_data" and mime in m.content.get("data", {}):
            plots.append(m.content["data"][mime])
        elif m.msg_type == "comm_msg":
            data = m.content.get("data", {})
            state = data.get("state", {}) if data.get("method") == "update" else {}
            for out in state.get("outputs") or ():
                if isinstance(out, dict) and mime in out.get("data", {}):
                    plots.append(out["data"][mime])
    return plots
