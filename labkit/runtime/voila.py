"""Whether this kernel serves a voila app, for code that must never run there (MIG apply).

Voila starts one kernel per page and gives it ``VOILA_*`` environment variables (voila 0.5:
``voila/handler.py`` and ``voila/voila_kernel_manager.py`` set ``VOILA_KERNEL_ID``,
``VOILA_BASE_URL``, ``VOILA_SERVER_URL``, ``VOILA_REQUEST_URL``, ``VOILA_APP_PORT``,
``VOILA_PREHEAT``, ...), also when voila runs as a Jupyter server extension. A student on a voila
page cannot run code, so cannot unset them. As a second sign, the kernel's parent process is the
``voila`` program when voila serves from the command line (Linux ``/proc``).

Once a process has been seen under voila the answer stays True. labkit's voila config also sets
``LABKIT_SERVED_BY=voila`` in the server's environment, which every kernel inherits.

Used in: labkit.gpu.mig_live.apply (lesson 02) and labkit.runtime.kernel (the classroom kernel
guards);
re-exported as ``labkit.serve.running_under_voila`` / ``forbid_under_voila``.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["VOILA_ENV_VARIABLES", "VoilaForbiddenError", "forbid_under_voila",
           "running_under_voila"]

#: Variables voila 0.5 puts in every kernel's environment (and labkit's own serving marker).
VOILA_ENV_VARIABLES = ("VOILA_KERNEL_ID", "VOILA_PREHEAT", "VOILA_BASE_URL", "VOILA_SERVER_URL",
                       "VOILA_REQUEST_URL", "VOILA_APP_PORT", "VOILA_APP_IP",
                       "VOILA_WS_BASE_URL", "VOILA_WS_PROTOCOL")
SERVED_BY = "LABKIT_SERVED_BY"


def _in_environment() -> bool:
    return (os.environ.get(SERVED_BY) == "voila"
            or any(name in os.environ for name in VOILA_ENV_VARIABLES))


def _parent_is_voila() -> bool:
    try:
        raw = Path(f"/proc/{os.getppid()}/cmdline").read_bytes()
    except OSError:
        return False
    for arg in raw.split(b"\0")[:4]:  # the program, or python + the script / -m module
        name = os.path.basename(arg.decode(errors="replace"))
        if name in ("voila", "voila.exe") or name.startswith("voila-"):
            return True
    return False


def _detected() -> bool:
    return _in_environment() or _parent_is_voila()


_seen = _detected()  # decided at import, before lesson code runs; sticky afterwards


def running_under_voila() -> bool:
    """Return True in a kernel that voila started (a lesson page opened as an app).

    Independent of any ``LABKIT_ALLOW_*`` setting.
    """
    global _seen
    if not _seen and _detected():
        _seen = True
    return _seen


class VoilaForbiddenError(PermissionError):
    """Something that changes the lab machine was attempted from a voila app."""


def forbid_under_voila(action: str) -> None:
    """Raise :class:`VoilaForbiddenError` inside a voila kernel, whatever else is set.

    Parameters
    ----------
    action : str
        What was attempted, for the message (``"MIG apply"``).

    Raises
    ------
    VoilaForbiddenError
        Under voila (a ``PermissionError``).
    """
    if running_under_voila():
        raise VoilaForbiddenError(
            f"{action} is not allowed from a voila app: run it from JupyterLab or a terminal")
