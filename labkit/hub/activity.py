"""A student's use of a voila app counts as activity of their server (the hub's idle culler).

The idle culler (jupyterhub-idle-culler, :mod:`labkit.hub.config`) stops a server whose
``last_activity`` in the hub is older than the teacher's timeout. The hub learns a server's
activity two ways: the single-user server posts ``ServerWebApplication.last_activity()`` to the
hub every ``$JUPYTERHUB_ACTIVITY_INTERVAL`` seconds, and the hub reads the proxy's per-route
activity every ``JupyterHub.last_activity_interval`` seconds. Both default to 300 s, so a
teacher's timeout near or under that would cull a student who is working; and a voila app
page served is not an API request, so jupyter_server does not count it.

- :func:`report_interval_s` makes both intervals a quarter of the cull timeout (at most 300 s,
  at least 5 s), so activity reaches the hub well before the timeout;
- :func:`record_voila_activity` marks every voila page the server serves (``/voila/...``,
  status < 400) as activity, through tornado's ``log_function`` setting (called once per
  finished request) and jupyter_server's ``*_last_activity`` settings hook;
- a voila kernel's widget traffic (``comm_msg`` from a moved control, and the kernel's replies
  to it) is counted by jupyter_server itself: voila's kernels are the server's own
  ``MappingKernelManager``'s, whose activity tracking counts every IOPub message but the
  ``untracked_message_types`` (``comm_msg`` is not one of them).

References
----------
.. [1] jupyter_server ``serverapp.ServerWebApplication.last_activity`` ("Any setting that ends
   with a key that ends with ``_last_activity`` is counted here") and
   ``MappingKernelManager.untracked_message_types``.
.. [2] jupyterhub ``singleuser.mixins`` (``JUPYTERHUB_ACTIVITY_INTERVAL``, default 300 s) and
   ``JupyterHub.last_activity_interval`` (default 300 s).
.. [3] tornado ``Application.log_request`` (the ``log_function`` setting).
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

__all__ = ["VOILA_ACTIVITY", "record_voila_activity", "report_interval_s"]

#: The web app setting that holds the last voila page served (a ``*_last_activity`` key).
VOILA_ACTIVITY = "voila_last_activity"
#: JupyterHub's default reporting intervals (both 300 s). [s]
_DEFAULT_INTERVAL_S = 300


def report_interval_s(cull_timeout_s: int) -> int:
    """Return how often servers and the proxy report activity for a ``cull_timeout_s`` culler.

    A quarter of the timeout, 5 .. 300 s (JupyterHub's default): activity is at most a quarter
    of the timeout old when the culler looks. [s]
    """
    return max(5, min(_DEFAULT_INTERVAL_S, int(cull_timeout_s) // 4))


def record_voila_activity(web_app: Any) -> None:
    """Count every voila page ``web_app`` serves as the server's activity (see the module).

    Parameters
    ----------
    web_app : jupyter_server.serverapp.ServerWebApplication
        The single-user server's tornado application.
    """
    settings = web_app.settings
    if settings.get("_labkit_voila_activity"):
        return
    prefix = settings.get("base_url", "/").rstrip("/") + "/voila/"
    log_request = settings.get("log_function")

    def log_function(handler: Any) -> None:
        if handler.request.path.startswith(prefix) and handler.get_status() < 400:
            settings[VOILA_ACTIVITY] = _dt.datetime.now(_dt.UTC)
        if log_request is not None:
            log_request(handler)

    settings["log_function"] = log_function
    settings["_labkit_voila_activity"] = True
