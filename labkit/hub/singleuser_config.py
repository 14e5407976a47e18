"""The settings of every student's single-user server (loaded from its jupyter_server config).

Applied by ``labkit/hub/jupyter/jupyter_server_config.py``: enables labkit's server extension
(:mod:`labkit.hub.singleuser`), serves voila apps at ``/user/<name>/voila/render/<lesson>`` with
labkit's template (the same as ``make present``, MathJax from nowhere), culls idle kernels, and
caps websocket message size.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from labkit.i18n import t
from labkit.serve.server import CULL_IDLE_TIMEOUT_S, CULL_INTERVAL_S, WEBSOCKET_MAX_MESSAGE_BYTES

__all__ = ["SINGLEUSER_TEMPLATES", "configure"]

#: The student's server's own error pages (jupyter_server's error.html and 404.html, in Korean).
SINGLEUSER_TEMPLATES = Path(__file__).resolve().parent / "singleuser_templates"
#: Set by the hub's config in every student's server when the hub serves HTTPS.
ENV_HUB_TLS = "LABKIT_HUB_TLS"


def configure(c: Any) -> None:
    """Apply labkit's single-user settings to the jupyter_server config ``c``."""
    import os

    from labkit.serve.server import TEMPLATE_ROOT

    # labkit's voila template (voila collects template paths from JUPYTER_PATH at load)
    known = [p for p in os.environ.get("JUPYTER_PATH", "").split(os.pathsep) if p]
    os.environ["JUPYTER_PATH"] = os.pathsep.join(dict.fromkeys([str(TEMPLATE_ROOT), *known]))
    # plain dicts: jupyterhub-singleuser reads tornado_settings with ``in`` (not a lazy value);
    # extensions enabled in jupyter_server_config.d (voila, jupyterlab, terminals) are found
    # separately, except those named here (ServerApp.find_server_extensions)
    c.ServerApp.jpserver_extensions = {"labkit.hub.singleuser": True,
                                        **dict.fromkeys(UNUSED_EXTENSIONS, False)}
    # kernels on Unix sockets in the student's runtime folder (0700, in their 0700 home;
    # $JUPYTER_RUNTIME_DIR, set by the spawner), never on loopback TCP ports: every account
    # on the machine can connect to a 127.0.0.1 port, and a ZeroMQ SUB socket on a kernel's
    # IOPub port receives its code and output without the key (the key signs, it does not
    # authenticate). JupyterLab's and voila's kernels both come from the server's
    # MappingKernelManager, whose kernel managers read this (jupyter_client ConnectionFileMixin)
    c.KernelManager.transport = "ipc"
    # 수업 준비 renders the warmed lesson's app before the bell and this kernel manager hands
    # that page to voila's handler (labkit.hub.voila_pool); otherwise jupyter_server's own
    c.ServerApp.kernel_manager_class = "labkit.hub.voila_pool.LessonPoolKernelManager"
    # no MathJax from the internet (a school network may have none; nothing a page loads leaves
    # the machine): as the server extension, voila reads mathjax_url/mathjax_config from the
    # server's settings and, without them, sends voila's JS cdnjs's URL (voila.utils
    # get_page_config); None for both, as the standalone voila of `make present` has them, and
    # voila's JS loads no MathJax (no lesson has TeX math)
    c.ServerApp.tornado_settings = {"websocket_max_message_size": WEBSOCKET_MAX_MESSAGE_BYTES,
                                    "mathjax_url": None, "mathjax_config": None}
    if os.environ.get(ENV_HUB_TLS) == "1":  # the hub serves HTTPS: the server's own _xsrf
        # cookie Secure too (jupyter_server's default is {"path": base_url}, kept)
        c.ServerApp.tornado_settings["xsrf_cookie_kwargs"] = {
            "path": os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/"), "secure": True}
    # every error page the student's server renders in Korean: jupyter_server's (a missing
    # file, another student's server) from labkit's templates, voila's from the labkit voila
    # template; both read the catalog through labkit_t
    c.ServerApp.extra_template_paths = [str(SINGLEUSER_TEMPLATES)]
    c.ServerApp.jinja_template_vars = {"labkit_t": t}
    # the lessons (~/labkit, $LABKIT_COURSE_NOTEBOOKS) are saved without outputs: a reopened
    # lesson never shows "model not found" (labkit.serve.presave)
    c.FileContentsManager.pre_save_hook = "labkit.serve.presave.pre_save_hook"
    # a save on a full home (its fixed-size image, labkit.hub.disk) answers in Korean, and a
    # deleted file frees its space at once: the trash (~/.local/share/Trash) would keep it on
    # the same image, where a student cannot empty it from JupyterLab
    c.ServerApp.contents_manager_class = "labkit.serve.presave.CourseContentsManager"
    c.FileContentsManager.delete_to_trash = False
    c.MappingKernelManager.cull_idle_timeout = CULL_IDLE_TIMEOUT_S
    c.MappingKernelManager.cull_interval = CULL_INTERVAL_S
    c.VoilaConfiguration.template = "labkit"
    c.VoilaConfiguration.theme = "light"
    c.VoilaConfiguration.strip_sources = True
    c.VoilaConfiguration.show_tracebacks = False
    c.VoilaConfiguration.allow_theme_override = "NO"
    c.VoilaConfiguration.allow_template_override = "NO"
    c.VoilaConfiguration.classic_tree = True
    c.VoilaConfiguration.resources = {"labkit": {
        "course": t("serve.course"), "back": t("serve.back"), "lang": "ko"}}
    c.VoilaExecutor.cell_error_instruction = t("serve.cell_error")
    c.HTMLExporter.language_code = "ko"


#: Server extensions installed with the lab extra that no student page uses, switched off in
#: every student's server (each costs import and start-up time, and memory, in every server):
#: ``jupyter_lsp`` serves language servers to JupyterLab's LSP client, which is off by default
#: (``@jupyterlab/lsp-extension`` setting ``activate: "off"``) and no language server is
#: installed; ``notebook_shim`` carries classic-notebook settings to extensions that need them
#: (nbclassic, notebook 7), neither of which is installed. The terminals stay: students use them.
UNUSED_EXTENSIONS = ("jupyter_lsp", "notebook_shim")
