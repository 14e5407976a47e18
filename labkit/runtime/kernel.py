"""Guards that run inside a lesson's kernel when voila serves it to a class.

Students cannot run code through a voila page (voila drops ``execute_request``), but they can set
any widget value, so a lesson bug could still be steered into writing files or starting programs.
:func:`harden_kernel` (called by ``labkit.ui.setup()``; a no-op outside voila) closes those paths:

- file-system writes outside :func:`session_dir` raise ``PermissionError`` (a Python audit hook:
  ``open`` for writing, remove/rename/mkdir/chmod/... of any path outside the session dir);
- starting programs (``subprocess``, ``os.system``, ``os.exec*``, ``os.spawn*``) raises
  ``PermissionError``;
- the kernel's address space is capped (``RLIMIT_AS``, ``$LABKIT_KERNEL_MEMORY_MIB``, default
  2048 MiB): a runaway allocation is a ``MemoryError`` in this student's kernel, not the
  machine's out-of-memory killer picking a neighbour;
- tracebacks go to the server log (the kernel's inherited stderr), never to the page; the page
  shows a short Korean note instead.

Code that changes the machine (``labkit.gpu.mig_live.apply``) calls :func:`forbid_under_voila`
first.
"""

from __future__ import annotations

import atexit
import functools
import logging
import os
import re
import shutil
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

# One detector for the whole package: labkit.runtime.voila (environment + parent process).
from labkit.runtime.voila import (
    VOILA_ENV_VARIABLES,
    VoilaForbiddenError,
    forbid_under_voila,
    running_under_voila,
)

__all__ = [
    "VOILA_ENV_VARIABLES",
    "VoilaForbiddenError",
    "forbid_under_voila",
    "harden_kernel",
    "running_under_voila",
    "session_dir",
]

DEFAULT_KERNEL_MEMORY_MIB = 2048

log = logging.getLogger("labkit.serve")


@functools.cache
def session_dir() -> Path:
    """Return this kernel's private temporary folder (created on first use, removed at exit).

    Under voila it is the only place a lesson may write files (see :func:`harden_kernel`); use it
    for exports and scratch files in every environment so lessons behave the same everywhere.
    """
    path = Path(tempfile.mkdtemp(prefix=f"labkit-session-{os.getpid()}-")).resolve()
    atexit.register(shutil.rmtree, path, True)
    return path


# --- the audit hook ----------------------------------------------------------------------------

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
# audit event -> positions of the path arguments it changes (Python's audit events table)
_PATH_EVENTS: dict[str, tuple[int, ...]] = {
    "os.remove": (0,), "os.rmdir": (0,), "os.mkdir": (0,), "os.rename": (0, 1),
    "os.link": (1,), "os.symlink": (1,), "os.chmod": (0,), "os.chown": (0,),
    "os.truncate": (0,), "os.utime": (0,), "os.chflags": (0,), "os.lchflags": (0,),
    "os.lchmod": (0,), "os.mkfifo": (0,), "os.mknod": (0,), "os.setxattr": (0,),
    "os.removexattr": (0,), "shutil.rmtree": (0,), "shutil.copyfile": (1,),
    "shutil.copytree": (1,), "shutil.move": (0, 1), "shutil.chown": (0,),
}
_PROCESS_EVENTS = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
                   "os.fork", "os.forkpty", "pty.spawn")
_state = threading.local()


def _outside(path: Any, allowed: tuple[str, ...]) -> bool:
    if isinstance(path, int) or path is None:
        return False  # an already-open descriptor
    try:
        text = os.fsdecode(path)
    except TypeError:
        return False
    full = os.path.realpath(text)
    return not any(full == root or full.startswith(root + os.sep) for root in allowed)


def _audit(allowed: tuple[str, ...], event: str, args: tuple[Any, ...]) -> None:
    if getattr(_state, "busy", False):
        return
    if event == "open":
        path, _mode, flags = (*tuple(args), None, None, None)[:3]
        if not isinstance(flags, int) or not flags & _WRITE_FLAGS:
            return
        paths: tuple[Any, ...] = (path,)
    elif event in _PATH_EVENTS:
        paths = tuple(args[i] for i in _PATH_EVENTS[event] if i < len(args))
    elif event in _PROCESS_EVENTS:
        raise PermissionError(f"voila app: starting programs is disabled ({event})")
    else:
        return
    _state.busy = True
    try:
        for path in paths:
            if _outside(path, allowed):
                raise PermissionError(
                    f"voila app: writing outside the session folder is disabled ({event} "
                    f"{os.fsdecode(path)!r}); use labkit.serve.session_dir()")
    finally:
        _state.busy = False


# --- tracebacks to the server log --------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _log_to_server(text: str) -> None:
    stream = sys.__stderr__
    if stream is not None:
        stream.write(text if text.endswith("\n") else text + "\n")
        stream.flush()


def _quiet_tracebacks() -> None:
    """Send tracebacks to the server log; the page gets a short Korean note instead."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - kernels always have IPython
        return
    shell = get_ipython()
    if shell is None or getattr(shell, "_labkit_quiet", False):
        return
    from labkit.i18n import t

    def _showtraceback(etype: type, evalue: BaseException, stb: list[str]) -> None:
        lines = "\n".join(_ANSI.sub("", line) for line in stb)
        _log_to_server(f"[labkit kernel {os.getpid()}] {etype.__name__}: {evalue}\n{lines}")
        shell._last_traceback = stb
        print(t("serve.kernel_error"))

    shell._showtraceback = _showtraceback
    shell._labkit_quiet = True
    # Exceptions in widget messages are logged ("Comm", "ipykernel.comm" loggers) with no
    # handler of their own: Python's last-resort handler would write them to sys.stderr, which
    # the kernel sends to the page. A root handler on the real stderr sends them to the log.
    handler = logging.StreamHandler(sys.__stderr__)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter(f"[labkit kernel {os.getpid()}] %(name)s: %(message)s"))
    logging.getLogger().addHandler(handler)


def _cap_memory() -> None:
    try:
        import resource
    except ImportError:  # pragma: no cover - not on Windows
        return
    try:
        mib = int(os.environ.get("LABKIT_KERNEL_MEMORY_MIB", DEFAULT_KERNEL_MEMORY_MIB))
    except ValueError:
        mib = DEFAULT_KERNEL_MEMORY_MIB
    if mib <= 0:
        return
    limit = mib * 1024 * 1024
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


_hardened = False


def harden_kernel(force: bool = False) -> bool:
    """Apply the classroom guards to this kernel when voila started it (see module docstring).

    Idempotent. Called by ``labkit.ui.setup()``.

    Parameters
    ----------
    force : bool, default False
        Apply them even outside voila (tests).

    Returns
    -------
    bool
        True if the guards are in place.
    """
    global _hardened
    if _hardened:
        return True
    if not (force or running_under_voila()):
        return False
    folder = session_dir()
    tempfile.tempdir = str(folder)  # libraries' temporary files land in the session folder too
    sys.dont_write_bytecode = True
    allowed: tuple[str, ...] = (str(folder), os.path.realpath(os.devnull))
    if os.environ.get("JUPYTERHUB_USER"):
        # on the class hub the kernel runs as the student's own account: the checked
        # exercises may record to the student's ~/.labkit (labkit.data.progress), which the
        # teacher's class page reads
        from labkit.data.progress import progress_path

        record = progress_path().parent
        record.mkdir(mode=0o700, exist_ok=True)
        allowed += (os.path.realpath(record),)
    sys.addaudithook(functools.partial(_audit, allowed))
    _cap_memory()
    _quiet_tracebacks()
    _hardened = True
    log.info("classroom guards on: writes only under %s", folder)
    return True
