"""수업 준비 for the app: the warmed lesson's voila page rendered before the bell (issue 24).

The warm-up (:mod:`labkit.hub.warm`) starts each student's server with the lesson as its user
option (``$LABKIT_WARM_LESSON``). Besides the JupyterLab session (:mod:`labkit.hub.preheat`),
the server renders that lesson as its voila app once, in a kernel of its own: every cell run,
the page's HTML kept. The student's first request for ``/user/<name>/voila/render/<lesson>``
then gets that page at once, and its widgets from a kernel that has already run them, instead
of waiting for a fresh kernel to run the lesson (7.4 CPU-s for lesson 03: 30 students on
2 cores is 111 s however early the servers were started; benchmarks/results/
bench_hub_warm30.json). One page per warm-up: later requests render as before.

How: the student's server's kernel manager (:class:`LessonPoolKernelManager`,
``ServerApp.kernel_manager_class`` in :mod:`labkit.hub.singleuser_config`) answers the three
questions voila's page handler asks a kernel manager for a preheated page (voila 0.5
``VoilaHandler.get_generator``: ``notebook_data``, ``get_pool_size``, ``get_rendered_notebook``,
the protocol of voila's own ``VoilaKernelManager``, which only the standalone ``voila``
application can install: it reads that application's attributes). The page is rendered by
voila's ``NotebookRenderer`` with the handler's own configuration (the route's arguments), as
voila's pool renders it. The kernel is the server's own (Unix sockets in the student's runtime
folder, :mod:`labkit.hub.kernel`), with voila's ``VOILA_*`` variables, so a lesson's guards
know it serves an app (:mod:`labkit.runtime.voila`). It is never culled while it waits.

Nothing here comes from outside the student's server: the lesson name is the spawner's
checked file name (:func:`labkit.hub.spawner.warm_options`).
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass
from typing import Any

from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager
from jupyter_server.utils import ApiPath

from labkit.serve.patching import require_attribute, require_version

__all__ = ["LessonPoolKernelManager", "prerender"]

_PATCH = "the warmed lesson's voila page rendered before the bell"


@dataclass(frozen=True)
class _Page:
    """A lesson's page rendered (or rendering) before the bell, in a kernel of its own."""

    render_task: asyncio.Task[Any]  # voila's generate_content_hybrid: (snippets, the rest)
    renderer: Any  # voila's NotebookRenderer (its rendered_cache, stop_generator)
    kernel_id: str

    @property
    def failed(self) -> bool:
        task = self.render_task
        return task.done() and (task.cancelled() or task.exception() is not None)


class LessonPoolKernelManager(AsyncMappingKernelManager):  # type: ignore[misc]
    """The student's server's kernel manager, holding at most one page per lesson rendered
    before the bell (:func:`prerender`) for voila's page handler to serve.

    Attributes
    ----------
    notebook_data : dict
        Lesson path (relative to the server's root, as voila's handler names it) -> the
        rendered page's ``template`` and ``theme`` (what voila's handler compares with the
        request's) while its page waits; empty otherwise.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.notebook_data: dict[str, dict[str, Any]] = {}
        self._waiting: dict[str, _Page] = {}

    def get_pool_size(self, notebook_path: str) -> int:
        """How many rendered pages of ``notebook_path`` wait: 1 or 0 (voila's handler)."""
        page = self._waiting.get(notebook_path)
        return 0 if page is None or page.failed else 1

    async def get_rendered_notebook(self, notebook_name: str, **_kwargs: Any,
                                    ) -> tuple[asyncio.Task[Any], list[str], str]:
        """Hand the waiting page of ``notebook_name`` to voila's handler (once).

        Returns voila's triple: the rendering task (its result: the snippets rendered and the
        generator of the rest), the snippets already rendered, the page's kernel id.

        Raises
        ------
        KeyError
            If no page of ``notebook_name`` waits (voila asks only after :meth:`get_pool_size`).
        """
        page = self._waiting.pop(notebook_name)
        self.notebook_data.pop(notebook_name, None)
        page.renderer.stop_generator = True  # what is not rendered yet, the handler renders
        self.log.info("labkit: serving %s from the page rendered before the bell (kernel %s)",
                      notebook_name, page.kernel_id)
        return page.render_task, page.renderer.rendered_cache, page.kernel_id

    async def cull_kernel_if_idle(self, kernel_id: str) -> None:
        """Cull as jupyter_server does, except a kernel whose page waits for its student."""
        if any(page.kernel_id == kernel_id for page in self._waiting.values()):
            return
        await super().cull_kernel_if_idle(kernel_id)

    def hold(self, notebook: str, page: _Page) -> None:
        """Keep ``page`` (see :func:`prerender`) as the waiting page of ``notebook``."""
        self._waiting[notebook] = page
        self.notebook_data[notebook] = {"template": page.renderer.template_name,
                                        "theme": page.renderer.theme}


def _voila_route(web_app: Any) -> dict[str, Any]:
    """The arguments voila's server extension gave its page handler (its configuration)."""
    from voila.tornado.handler import TornadoVoilaHandler

    # tornado routes a server extension's handlers (added per host pattern) in a nested router
    routers = [web_app.default_router, web_app.wildcard_router]
    while routers:
        for rule in getattr(routers.pop(), "rules", ()):
            if rule.target is TornadoVoilaHandler:
                return dict(rule.target_kwargs)
            if hasattr(rule.target, "rules"):
                routers.append(rule.target)
    raise RuntimeError("labkit: voila's page handler is not routed in this server")


async def prerender(serverapp: Any, notebook: str) -> str | None:
    """Render ``notebook`` (relative to the server's root) as its voila page in a new kernel
    and keep it for the student's first request; return the kernel id.

    None (nothing done) when the server's kernel manager is not a
    :class:`LessonPoolKernelManager` or voila's page handler is not routed.

    Raises
    ------
    labkit.serve.patching.PatchNotApplicableError
        If voila is outside 0.5.x or its renderer moved.
    OSError, RuntimeError, ValueError
        If the notebook cannot be read or the kernel does not start.
    """
    manager = serverapp.kernel_manager
    if not isinstance(manager, LessonPoolKernelManager):
        serverapp.log.warning("labkit: no page rendered before the bell: the kernel manager is "
                              "%s", type(manager).__name__)
        return None
    require_version("voila", "0.5.0", "0.6", _PATCH)
    from voila import notebook_renderer, utils

    renderer_class = require_attribute(notebook_renderer, "NotebookRenderer", _PATCH)
    env_names = require_attribute(utils, "ENV_VARIABLE", _PATCH)
    page_config_of = require_attribute(utils, "get_page_config", _PATCH)
    try:
        route = _voila_route(serverapp.web_app)
    except RuntimeError as err:
        serverapp.log.warning("%s", err)
        return None
    settings = serverapp.web_app.settings
    configuration = route["voila_configuration"]
    base_url = settings.get("base_url", "/")
    renderer = renderer_class(
        voila_configuration=configuration, traitlet_config=route.get("config"),
        notebook_path=notebook, template_paths=route.get("template_paths", []),
        config_manager=settings.get("config_manager"),
        contents_manager=serverapp.contents_manager, base_url=base_url,
        kernel_spec_manager=serverapp.kernel_spec_manager,
        page_config=page_config_of(base_url=base_url, settings=settings, log=serverapp.log,
                                   voila_configuration=configuration),
        mathjax_config=settings.get("mathjax_config"), mathjax_url=settings.get("mathjax_url"))
    await renderer.initialize()
    env = {**os.environ,
           env_names.VOILA_PREHEAT: "True", env_names.VOILA_BASE_URL: base_url,
           env_names.VOILA_SERVER_URL: settings.get("server_url", "/")}
    kernel_id = str(await manager.start_kernel(
        kernel_name=renderer.notebook.metadata.kernelspec.name,
        path=ApiPath(os.path.dirname(notebook)), env=env))
    started = time.monotonic()
    render_task = asyncio.ensure_future(
        renderer.generate_content_hybrid(kernel_id, manager.get_kernel(kernel_id)))

    def rendered(task: asyncio.Future[Any]) -> None:  # the operator's log: when it is ready
        if task.cancelled() or task.exception() is not None:
            serverapp.log.warning("labkit: rendering %s's app before the bell failed: %r",
                                  notebook, None if task.cancelled() else task.exception())
            return
        serverapp.log.info("labkit: rendered %s's app before the bell in %.1f s (kernel %s)",
                           notebook, time.monotonic() - started, kernel_id)

    render_task.add_done_callback(rendered)
    manager.hold(notebook, _Page(render_task, renderer, kernel_id))
    return kernel_id
