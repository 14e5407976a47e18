"""A student's server preheats the lesson of "수업 준비" itself (:mod:`labkit.hub.warm`).

The warm-up starts the server through the hub with the lesson as its user option; the spawner
checks it (a lesson notebook's file name only) and passes it as ``$LABKIT_WARM_LESSON``
(:meth:`labkit.hub.spawner.LabkitSpawner.warm_lesson`), and the page the class will open as
``$LABKIT_WARM_PAGE`` (one of :data:`WARM_PAGES`). When the server has started, :func:`schedule`
(called by labkit's server extension, :mod:`labkit.hub.singleuser`) prepares that one page in the
server itself, with the server's own managers, in one kernel:

- ``"app"``: the lesson's voila app is rendered once, for the student's first request
  (:mod:`labkit.hub.voila_pool`): voila's own preheated pool (``make present``'s
  ``--preheat_kernel``) lives in a kernel manager only the standalone ``voila`` application
  installs, so the students' servers' kernel manager speaks its protocol instead;
- ``"lab"``: one notebook session of the lesson whose first code cell (the imports and
  ``ui.setup()``) has run: JupyterLab picks that session up when the student opens the lesson.

One page, not both: a second idle kernel of the lesson cost each warmed server ~70 MiB of its
own (``benchmarks/bench_hub.py --warm``, 30 students on 2 cores: PSS 281 -> 211 MiB, RSS 371 ->
269 MiB per warmed idle server; issue 24's goal: < 350 MB). No
request and no token comes from outside: the class page's token, which may act for every
student, never reaches the student's server (issue 23).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = ["ENV_WARM_LESSON", "ENV_WARM_PAGE", "KERNEL_TIMEOUT_S", "WARM_PAGES",
           "first_code_cell", "preheat", "schedule"]

#: The student's server's environment: the lesson it preheats (set by the spawner).
ENV_WARM_LESSON = "LABKIT_WARM_LESSON"
#: ... and which page of it: one of :data:`WARM_PAGES` (set by the spawner).
ENV_WARM_PAGE = "LABKIT_WARM_PAGE"
#: The pages a warm-up prepares, the first the default: the lesson's voila app (the first chart
#: at the bell, what ``benchmarks/bench_hub.py --warm`` measures) or its JupyterLab session.
WARM_PAGES = ("app", "lab")

#: The lesson's imports in a fresh kernel while other servers start on a 2-core machine. [s]
KERNEL_TIMEOUT_S = 180.0


def first_code_cell(notebook: Path) -> str:
    """Return the source of ``notebook``'s first code cell ('' if it has none)."""
    import nbformat

    cells = nbformat.read(notebook, as_version=4).cells
    return next((str(c.source) for c in cells if c.cell_type == "code"), "")


async def preheat(serverapp: Any, notebook: str, timeout_s: float = KERNEL_TIMEOUT_S) -> str:
    """Open a session of ``notebook`` (relative to the server's root) and run its first code
    cell; return the session's kernel id."""
    session = await serverapp.session_manager.create_session(
        path=notebook, name=notebook, type="notebook", kernel_name=None)
    kernel_id = str(session["kernel"]["id"])
    code = first_code_cell(Path(serverapp.root_dir).expanduser() / notebook)
    if not code:
        return kernel_id
    client = serverapp.kernel_manager.get_kernel(kernel_id).client()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=timeout_s)
        await client.execute_interactive(code, silent=True, store_history=False,
                                         timeout=timeout_s, output_hook=lambda _msg: None)
    finally:
        client.stop_channels()
    return kernel_id


def schedule(serverapp: Any, environ: Any = None) -> bool:
    """Prepare ``$LABKIT_WARM_PAGE`` (default: the app) of ``$LABKIT_WARM_LESSON`` once the
    server's loop runs; return whether a lesson and a known page are set."""
    from tornado.ioloop import IOLoop

    env = environ if environ is not None else os.environ
    notebook = env.get(ENV_WARM_LESSON, "")
    page = env.get(ENV_WARM_PAGE, "") or WARM_PAGES[0]
    if not notebook or Path(notebook).name != notebook:  # the spawner's check, once more
        return False
    if page not in WARM_PAGES:
        return False

    async def run() -> None:
        from labkit.hub.voila_pool import prerender
        from labkit.serve.patching import PatchNotApplicableError

        if page == "lab":
            try:
                kernel_id = await preheat(serverapp, notebook)
            except (OSError, RuntimeError, ValueError, KeyError, TimeoutError) as err:
                serverapp.log.warning("labkit: preheating %s failed: %r", notebook, err)
            else:
                serverapp.log.info("labkit: preheated %s (kernel %s)", notebook, kernel_id)
            return
        try:  # the app: its page rendered once, for the student's first request
            page_kernel = await prerender(serverapp, notebook)
        except (OSError, RuntimeError, ValueError, KeyError, TimeoutError,
                PatchNotApplicableError) as err:
            serverapp.log.warning("labkit: rendering %s's app before the bell failed: %r",
                                  notebook, err)
            return
        if page_kernel is not None:
            serverapp.log.info("labkit: rendering %s's app before the bell (kernel %s)",
                               notebook, page_kernel)

    # the server's own loop (ServerApp.init_ioloop, before the extensions load); runs once it
    # has started
    (getattr(serverapp, "io_loop", None) or IOLoop.current()).add_callback(run)
    return True
