"""labkit's jupyter_server extension, loaded in every student's single-user server.

Each student's server is their own (their uid, their files): they may run any code in it. What
still matters there is that a malformed message cannot hang the server, and that a voila app
page gives nothing away:

- **incoming binary websocket frames** are checked before jupyter_server parses them, in both
  framings (:func:`guard_kernel_websocket_frames`): the v1 protocol's 8-byte offset count
  (``v1.kernel.websocket.jupyter.org``; one 72-byte frame with a count of 2**63-1 made the
  parser loop for ever) and the legacy framing's 4-byte buffer count (a count of 5e7 made
  it allocate gigabytes). A bad frame closes that websocket only; voila's own outgoing-header
  parser gets the same guard (:func:`labkit.serve.server.guard_binary_header_parsing`);
- **XSRF stays on** everywhere except voila's tab-close shutdown beacon (voila#1458:
  ``navigator.sendBeacon`` cannot send the ``_xsrf`` token), which is accepted only from this
  server's own origin (:func:`same_origin_shutdown_beacon`);
- voila apps render with labkit's template, ``show_tracebacks=False`` and stripped sources;
  kernels that voila starts hide tracebacks from the page (:mod:`labkit.serve.runtime`).

Every patch checks the installed release first (:mod:`labkit.serve.patching`).
Enabled by ``labkit/hub/jupyter/jupyter_server_config.py`` (``$JUPYTER_CONFIG_PATH`` set by the
spawner).
"""

from __future__ import annotations

import struct
from typing import Any
from urllib.parse import urlsplit

from labkit.serve.patching import require_attribute, require_version

__all__ = ["MAX_FRAME_PARTS", "MalformedFrameError", "check_legacy_frame", "check_v1_frame",
           "guard_kernel_websocket_frames", "same_origin_shutdown_beacon"]

#: Most parts a kernel message frame may have: header, parent header, metadata, content and
#: binary buffers (widgets send a handful). Far above any real message, far below a DoS.
MAX_FRAME_PARTS = 1024
_PATCH = "the binary websocket frame guard"


class MalformedFrameError(ValueError):
    """A binary websocket frame whose header does not describe the frame."""


def check_v1_frame(frame: bytes) -> None:
    """Check a v1-protocol frame's offset table (``jupyter_server`` ``deserialize_msg_from_ws_v1``).

    Layout: 8-byte little-endian offset count ``n``, then ``n`` 8-byte offsets into the frame
    (jupyter_server docs, "Kernel websocket protocols", v1). ``n`` must be 2..1024, the table must
    fit in the frame, and the offsets must be non-decreasing and inside the frame.

    Raises
    ------
    MalformedFrameError
        Otherwise.
    """
    if len(frame) < 8:
        raise MalformedFrameError("v1 frame shorter than its offset count")
    n = int.from_bytes(frame[:8], "little")
    if not 2 <= n <= MAX_FRAME_PARTS or 8 * (n + 1) > len(frame):
        raise MalformedFrameError(f"v1 frame with offset count {n} for {len(frame)} bytes")
    offsets = [int.from_bytes(frame[8 * (i + 1):8 * (i + 2)], "little") for i in range(n)]
    if offsets != sorted(offsets) or offsets[-1] > len(frame) or offsets[0] < 8 * (n + 1):
        raise MalformedFrameError("v1 frame offsets outside the frame")


def check_legacy_frame(frame: bytes) -> None:
    """Check a legacy binary frame's buffer table (``deserialize_binary_message``).

    Layout: 4-byte big-endian buffer count ``nbufs``, then ``nbufs`` 4-byte offsets
    (jupyter_server ``services/kernels/connection/base.py``). ``nbufs`` must be 1..1024 and the
    table must fit in the frame.

    Raises
    ------
    MalformedFrameError
        Otherwise.
    """
    if len(frame) < 4:
        raise MalformedFrameError("legacy frame shorter than its buffer count")
    (nbufs,) = struct.unpack("!i", frame[:4])
    if not 1 <= nbufs <= MAX_FRAME_PARTS or 4 * (nbufs + 1) > len(frame):
        raise MalformedFrameError(f"legacy frame with buffer count {nbufs} for {len(frame)} bytes")


def _guarded(original: Any, check: Any) -> Any:
    def guarded(frame: bytes) -> Any:
        if isinstance(frame, bytes | bytearray | memoryview):
            check(frame)
        return original(frame)

    guarded._labkit_guard = True  # type: ignore[attr-defined]
    guarded.__wrapped__ = original  # type: ignore[attr-defined]
    return guarded


def guard_kernel_websocket_frames() -> None:
    """Check every incoming binary kernel-websocket frame before jupyter_server parses it.

    Patches ``deserialize_msg_from_ws_v1`` and ``deserialize_binary_message`` where
    ``jupyter_server.services.kernels.connection.channels`` calls them (the one websocket
    connection class every kernel websocket, JupyterLab's and voila's, goes through in a
    jupyter_server 2 single-user server). A malformed frame raises :class:`MalformedFrameError`
    in the handler; tornado logs it and closes that websocket.

    Raises
    ------
    PatchNotApplicableError
        If jupyter_server is outside 2.0-3.0 or the functions moved.
    """
    require_version("jupyter_server", "2.0", "3.0", _PATCH)
    from jupyter_server.services.kernels.connection import base, channels

    for module in (base, channels):
        for name, check in (("deserialize_msg_from_ws_v1", check_v1_frame),
                            ("deserialize_binary_message", check_legacy_frame)):
            current = require_attribute(module, name, _PATCH)
            if not getattr(current, "_labkit_guard", False):
                setattr(module, name, _guarded(current, check))


def _same_origin(handler: Any) -> bool:
    origin = handler.request.headers.get("Origin") or handler.request.headers.get("Referer")
    if not origin:
        return False
    return urlsplit(origin).netloc == handler.request.host


def same_origin_shutdown_beacon() -> None:
    """Accept voila's tab-close shutdown beacon from this server's own origin only.

    ``navigator.sendBeacon`` cannot add jupyter_server's ``_xsrf`` token, so the POST to
    ``/voila/api/shutdown/<kernel id>`` is refused and the kernel leaks until culled
    (voila#1458). For that one handler the XSRF token check is replaced by an ``Origin``
    (or ``Referer``) check: a page on another site still cannot shut the kernel down.

    Raises
    ------
    PatchNotApplicableError
        If voila is outside 0.5.x or the handler moved.
    """
    require_version("voila", "0.5.0", "0.6", "the voila shutdown-beacon XSRF exemption")
    from voila import shutdown_kernel_handler

    handler = require_attribute(shutdown_kernel_handler, "VoilaShutdownKernelHandler",
                                "the voila shutdown-beacon XSRF exemption")
    if getattr(handler, "_labkit_same_origin", False):
        return
    original = handler.check_xsrf_cookie

    def check_xsrf_cookie(self: Any) -> Any:
        if _same_origin(self):
            return None
        return original(self)

    handler.check_xsrf_cookie = check_xsrf_cookie
    handler._labkit_same_origin = True


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "labkit.hub.singleuser"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    from labkit.hub.activity import record_voila_activity
    from labkit.serve.server import guard_binary_header_parsing

    record_voila_activity(serverapp.web_app)  # a voila app in use keeps the server (culler)
    guard_kernel_websocket_frames()
    guard_binary_header_parsing()
    same_origin_shutdown_beacon()
    serverapp.log.info("labkit: websocket frame guards and voila settings loaded")
    from labkit.hub.preheat import schedule

    schedule(serverapp)  # "수업 준비": the lesson in $LABKIT_WARM_LESSON, if any
