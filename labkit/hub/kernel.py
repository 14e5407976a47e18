"""The students' kernel on the class hub: ipykernel with nothing on a loopback TCP port.

Every account on the machine can connect to a 127.0.0.1 port. The kernel's channels are on
Unix sockets in the student's 0700 runtime folder (``KernelManager.transport = "ipc"``,
:mod:`labkit.hub.singleuser_config`), but ipykernel still opens two TCP ports of its own:

- the IOPub "pipe" for forked subprocesses (``IOPubThread._setup_pipe_in``: a ZeroMQ PULL
  socket on ``tcp://127.0.0.1:<random>``, its messages checked by a random prefix): a
  classmate can connect to it. Here it is bound on a Unix socket beside the kernel's others
  (:func:`ipc_fork_pipe`);
- debugpy, once a debugger attaches (``Debugger.get_host_port``): whoever connects to it runs
  code as the student. The kernelspec says ``"debugger": false`` (JupyterLab offers no
  debugger) and :func:`no_debugger` turns ipykernel's debugger off.

Started by the kernelspec ``labkit/hub/jupyter/kernels/python3/kernel.json`` (first on the
students' ``$JUPYTER_PATH``, set by the spawner), ``python -m labkit.hub.kernel -f <file>``.
Each patch checks the installed ipykernel first (:mod:`labkit.serve.patching`).
"""

from __future__ import annotations

import os
import secrets
from typing import Any

from labkit.serve.patching import require_attribute, require_version

__all__ = ["ipc_fork_pipe", "main", "no_debugger"]

_PATCH = "the students' kernel without loopback TCP ports"


def _pipe_path() -> str:
    """A fresh socket path in the kernel's runtime folder (``$JUPYTER_RUNTIME_DIR``)."""
    from jupyter_core.paths import jupyter_runtime_dir

    return os.path.join(jupyter_runtime_dir(), f"pipe-{os.getpid()}-{secrets.token_hex(4)}")


def ipc_fork_pipe() -> None:
    """Bind ipykernel's IOPub pipe for forked subprocesses on a Unix socket, not TCP.

    Replaces ``IOPubThread._setup_pipe_in`` and ``_setup_pipe_out`` (ipykernel 6.x-7.x
    ``iostream.py``) with the same steps on ``ipc://<runtime folder>/pipe-<pid>-<random>``.

    Raises
    ------
    PatchNotApplicableError
        If ipykernel is outside 6.0-8.0 or the methods moved.
    """
    require_version("ipykernel", "6.0", "8.0", _PATCH)
    import zmq
    from ipykernel import iostream
    from zmq.eventloop.zmqstream import ZMQStream

    thread = require_attribute(iostream, "IOPubThread", _PATCH)
    for name in ("_setup_pipe_in", "_setup_pipe_out", "_handle_pipe_msg"):
        require_attribute(thread, name, _PATCH)
    if getattr(thread, "_labkit_ipc_pipe", False):
        return

    def _setup_pipe_in(self: Any) -> None:
        self._pipe_uuid = os.urandom(16)
        pipe_in = self.socket.context.socket(zmq.PULL)
        pipe_in.linger = 0
        self._labkit_pipe = "ipc://" + _pipe_path()
        try:
            pipe_in.bind(self._labkit_pipe)
        except zmq.ZMQError:  # as ipykernel does: subprocess output is then unavailable
            self._pipe_flag = False
            pipe_in.close()
            return
        self._pipe_in = ZMQStream(pipe_in, self.io_loop)
        self._pipe_in.on_recv(self._handle_pipe_msg)

    def _setup_pipe_out(self: Any) -> tuple[Any, Any]:
        ctx = zmq.Context()  # a new context after fork, as ipykernel's
        pipe_out = ctx.socket(zmq.PUSH)
        pipe_out.linger = 3000
        pipe_out.connect(self._labkit_pipe)
        return ctx, pipe_out

    thread._setup_pipe_in = _setup_pipe_in
    thread._setup_pipe_out = _setup_pipe_out
    thread._labkit_ipc_pipe = True


def no_debugger() -> None:
    """Turn ipykernel's debugger off (its debugpy would listen on a loopback TCP port).

    Raises
    ------
    PatchNotApplicableError
        If ipykernel is outside 6.0-8.0 or ``debugger._is_debugpy_available`` moved.
    """
    require_version("ipykernel", "6.0", "8.0", _PATCH)
    from ipykernel import debugger

    require_attribute(debugger, "_is_debugpy_available", _PATCH)
    debugger._is_debugpy_available = False


def main() -> None:
    """Start ipykernel (``ipykernel_launcher``'s arguments) with both patches applied."""
    ipc_fork_pipe()
    no_debugger()
    from ipykernel import kernelapp

    kernelapp.launch_new_instance()


if __name__ == "__main__":
    main()
