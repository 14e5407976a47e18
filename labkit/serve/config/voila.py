# Voila configuration loaded from this folder (labkit.serve starts voila here).
# Guard for an unauthenticated denial of service in voila 0.5.13: a client that opens the kernel
# websocket without the v1 subprotocol makes read_header_from_binary_message read a ~1e17 offset
# count from legacy framing and build a list that size (100 % CPU, memory until killed).
# Reproduced and guarded here on 2026-11-30 (labkit jupyter-stack notes, section 5).
c = get_config()  # noqa: F821
c.MappingKernelManager.cull_idle_timeout = 600
c.MappingKernelManager.cull_interval = 60

import voila.tornado.kernel_websocket_handler as _kwh  # noqa: E402

_orig = _kwh.read_header_from_binary_message


def _safe_read_header(ws_msg):  # type: ignore[no-untyped-def]
    n = int.from_bytes(ws_msg[:8], "little")
    if n < 3 or n > 1024 or 8 * (n + 1) > len(ws_msg):
        return None
    return _orig(ws_msg)


if getattr(_orig, "__name__", "") != "_safe_read_header":
    _kwh.read_header_from_binary_message = _safe_read_header
