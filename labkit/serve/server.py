"""Server side of classroom serving, applied by labkit's voila config (``config/voila.py``).

:func:`configure` runs inside the voila server process when voila loads its config file, and:

- guards the denial of service in voila 0.5.13's binary-header parsing (see
  :func:`guard_binary_header_parsing`);
- culls idle kernels and accepts the tab-close shutdown beacon (voila#1458);
- serves labkit's template (gallery of lessons, Korean fonts, course title, Korean error pages)
  with a content security policy that keeps every request on this server;
- caps the kernels and the memory of the class (:class:`CappedKernelManager`): past the cap a
  student gets a Korean "the class is full" page, never a hung server;
- caps the server's own address space (``RLIMIT_AS``) and limits websocket messages (uploads).

Limits come from the environment (set by ``python -m labkit.serve``; see :class:`Limits`).
"""

from __future__ import annotations

import asyncio
import functools
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager

from labkit.i18n import t
from labkit.serve.lessons import NOTEBOOK_PATTERN, read_lesson
from labkit.serve.patching import require_attribute, require_version

__all__ = [
    "TEMPLATE",
    "TEMPLATE_ROOT",
    "THUMBNAILS",
    "CappedKernelManager",
    "Limits",
    "configure",
    "gallery_entries",
    "guard_binary_header_parsing",
]

#: A Jupyter data folder holding labkit's voila template (``nbconvert/templates/labkit``). The
#: template sits under ``nbconvert/``, not ``voila/``: a ``voila/`` folder here would become
#: voila's data dir (``jupyter_path("voila")[0]``) and hide its themes.
TEMPLATE_ROOT = Path(__file__).resolve().parent / "jupyter"
TEMPLATE = "labkit"
TEMPLATE_DIR = TEMPLATE_ROOT / "nbconvert" / "templates" / TEMPLATE
THUMBNAILS = TEMPLATE_DIR / "static" / "thumbnails"

#: Idle kernels (no open page) are shut down after this long (the stack notes' setting). [s]
CULL_IDLE_TIMEOUT_S = 600
CULL_INTERVAL_S = 60
#: A websocket message larger than this closes the connection (tornado's default is 10 MiB);
#: uploads are checked again, smaller, in Python (``labkit.ui.files``). [bytes]
WEBSOCKET_MAX_MESSAGE_BYTES = 8 * 1024 * 1024
#: After a page takes a warm kernel, voila starts its replacement this much later (voila's
#: default is 1 s): a class arriving together takes the warm kernels without the replacements
#: (each runs the whole notebook) competing for the same cores. [s]
POOL_REFILL_DELAY_S = 20.0
#: A pool kernel waiting for room re-checks this often. [s]
POOL_RETRY_S = 5.0
#: A server-side kernel channel waiting for a message re-polls its socket this often. [s]
CHANNEL_REPOLL_S = 1.0
#: Every request stays on this server: no CDN (offline classrooms; no student data to third
#: parties). 'unsafe-inline'/'unsafe-eval' are needed by voila's page and widget bundles.
CONTENT_SECURITY_POLICY = "; ".join([
    "default-src 'self'",
    "script-src 'self' 'unsafe-inline' 'unsafe-eval' blob:",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self' ws: wss:",
    "worker-src 'self' blob:",
    "frame-ancestors 'self'",
    "form-action 'self'",
    "base-uri 'self'",
])


# --- limits --------------------------------------------------------------------------------------


def _env_int(env: dict[str, str] | os._Environ[str], name: str, default: int) -> int:
    raw = env.get(name, "")
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name} must be an integer, got {raw!r}") from None
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


def _physical_memory_mib() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20)
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 8192


@dataclass(frozen=True)
class Limits:
    """How big a class one voila server takes.

    Attributes
    ----------
    max_kernels : int
        Kernels at once, warm pool included (``$LABKIT_MAX_KERNELS``, default 40). Each open
        lesson page holds one kernel (~100-150 MiB).
    max_memory_mib : int
        No new page once the server and its kernels hold this much resident memory
        (``$LABKIT_MAX_MEMORY_MIB``, default 75 % of physical memory). [MiB]
    server_memory_mib : int
        Address-space cap of the voila server process (``$LABKIT_SERVER_MEMORY_MIB``, default
        4096; 0 = none): a runaway server gets ``MemoryError`` instead of taking the machine. [MiB]
    """

    max_kernels: int = 40
    max_memory_mib: int = 8192
    server_memory_mib: int = 4096

    @classmethod
    def from_environ(cls, env: dict[str, str] | os._Environ[str] | None = None) -> Limits:
        """Read the limits from ``env`` (default ``os.environ``).

        Raises
        ------
        ValueError
            If a variable is not a non-negative integer, or ``LABKIT_MAX_KERNELS`` is 0.
        """
        env = os.environ if env is None else env
        limits = cls(
            max_kernels=_env_int(env, "LABKIT_MAX_KERNELS", cls.max_kernels),
            max_memory_mib=_env_int(env, "LABKIT_MAX_MEMORY_MIB",
                                    int(_physical_memory_mib() * 0.75)),
            server_memory_mib=_env_int(env, "LABKIT_SERVER_MEMORY_MIB", cls.server_memory_mib),
        )
        if limits.max_kernels < 1:
            raise ValueError("LABKIT_MAX_KERNELS must be >= 1")
        return limits


def serving_rss_mib(pid: int | None = None) -> float:
    """Return the resident memory of a process and all its descendants (server + kernels). [MiB]"""
    import psutil

    root = psutil.Process(pid)
    total = 0
    for proc in [root, *root.children(recursive=True)]:
        try:
            total += proc.memory_info().rss
        except psutil.Error:
            continue
    return total / 2**20


class CappedKernelManager(AsyncMappingKernelManager):  # type: ignore[misc]
    """voila's kernel manager with a cap on kernels and memory (see :class:`Limits`).

    A page's kernel that would pass a cap is refused with HTTP 503 (voila shows labkit's Korean
    "class is full" page); a warm-pool kernel waits until there is room. voila builds its
    preheating manager on top of this class (``VoilaConfiguration.multi_kernel_manager_class``).
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.limits = Limits.from_environ()
        self._starting = 0
        self._rss: tuple[float, float] = (0.0, 0.0)  # (when, MiB)

    def _rss_mib(self) -> float:
        now = time.monotonic()
        if now - self._rss[0] > 1.0:
            self._rss = (now, serving_rss_mib())
        return self._rss[1]

    def refusal(self) -> str | None:
        """Return why no kernel may start now (``"full"`` or ``"memory"``), or None."""
        if len(self.list_kernel_ids()) + self._starting >= self.limits.max_kernels:
            return "full"
        if self._rss_mib() >= self.limits.max_memory_mib:
            return "memory"
        return None

    def _has_ready_pool_kernel(self, notebook: str) -> bool:
        pools = getattr(self, "_pools", {})  # voila's preheating manager (voila 0.5)
        for task in pools.get(notebook, ())[:1]:  # voila takes the first one
            if task.done() and not task.cancelled() and task.exception() is None:
                return True
        return False

    def admission_refusal(self, notebook: str | None) -> str | None:
        """Return why a page for ``notebook`` may not open now, or None.

        A warm pool kernel that is ready may be handed out at the kernel cap (it is counted
        already); a new kernel may not.
        """
        reason = self.refusal()
        if reason == "full" and notebook and self._has_ready_pool_kernel(notebook):
            return None
        return reason

    async def start_kernel(self, *args: Any, **kwargs: Any) -> str:  # type: ignore[override]
        """Start a kernel if the caps allow (a page: else HTTP 503; a pool kernel: else wait)."""
        from tornado import web

        pooled = (kwargs.get("env") or {}).get("VOILA_PREHEAT") == "True"
        while (reason := self.refusal()) is not None:
            if not pooled:
                self.log.warning("labkit: refusing a new page (%s; %d kernels, %.0f MiB)",
                                 reason, len(self.list_kernel_ids()), self._rss_mib())
                raise web.HTTPError(503, reason, reason="Class is full")
            await asyncio.sleep(POOL_RETRY_S)
        self._starting += 1
        try:
            kernel_id: str = await super().start_kernel(*args, **kwargs)
        finally:
            self._starting -= 1
        return kernel_id


def _admit_pages(handler_class: Any) -> None:
    """Check the caps before a page request reaches voila's pool or kernel start."""
    require_version("voila", "0.5.0", "0.6", "the class-full admission check")
    require_attribute(handler_class, "get", "the class-full admission check")
    if getattr(handler_class.get, "_labkit_admission", False):
        return
    from tornado import web

    original = handler_class.get

    @web.authenticated
    @functools.wraps(original)
    async def get(self: Any, path: str | None = None) -> None:
        check = getattr(self.kernel_manager, "admission_refusal", None)
        if check is not None:
            reason = check(self.notebook_path or path)
            if reason is not None:
                raise web.HTTPError(503, reason, reason="Class is full")
        await original(self, path)

    get._labkit_admission = True  # type: ignore[attr-defined]
    handler_class.get = get


# --- the DoS guard -------------------------------------------------------------------------------


def _checked_offsets(original: Any) -> Any:
    def _safe_read_header(ws_msg: bytes) -> Any:
        n = int.from_bytes(ws_msg[:8], "little")
        if n < 3 or n > 1024 or 8 * (n + 1) > len(ws_msg):
            return None
        return original(ws_msg)

    _safe_read_header._labkit_guard = True  # type: ignore[attr-defined]
    return _safe_read_header


def guard_binary_header_parsing() -> None:
    """Guard voila 0.5.13's ``read_header_from_binary_message`` against legacy framing.

    A client that opens the kernel websocket without the ``v1.kernel.websocket.jupyter.org``
    subprotocol gets the legacy binary framing (a 4-byte big-endian buffer count); voila reads
    its first 8 bytes as a little-endian offset count (~1e17) and builds a list that long: 100 %
    CPU and memory growing until the server is killed. The guard returns "no header" for an
    offset count that cannot be a v1 message (< 3, > 1024, or past the message's end).
    Found and reproduced 2026-11-30 (voila 0.5.13 ``voila/tornado/kernel_websocket_handler.py``).

    Raises
    ------
    PatchNotApplicableError
        If voila is outside 0.5.x or the function moved.
    """
    require_version("voila", "0.5.0", "0.6", "the binary-header DoS guard")
    import voila.tornado.kernel_websocket_handler as kwh

    require_attribute(kwh, "read_header_from_binary_message", "the binary-header DoS guard")
    if not getattr(kwh.read_header_from_binary_message, "_labkit_guard", False):
        kwh.read_header_from_binary_message = _checked_offsets(kwh.read_header_from_binary_message)


# --- pages stuck "executing" -------------------------------------------------------------------


def repoll_kernel_channels() -> None:
    """Make the server's kernel channels re-poll their socket instead of waiting on one poll.

    voila renders a page by waiting for each cell's ``execute_reply`` and iopub messages with
    no timeout. On a loaded machine a page sometimes never finishes: the kernel is idle, its
    last message was sent, and the server waits forever (measured here: 1-4 of 24 page loads on
    2 busy cores, with ipykernel 6.31 and 7.4 alike; the kernel is culled 10 minutes later).
    ZMQ signals readiness through an edge-triggered descriptor, and a send on the same socket
    can consume the edge of a message that arrived meanwhile (the mechanism of ipykernel#1554
    on the kernel side), so an asyncio poller can miss it. A poll that expires and starts again
    re-reads the socket's state and finds the message; waiting in slices of
    :data:`CHANNEL_REPOLL_S` costs nothing when messages flow.
    """
    from queue import Empty

    require_version("jupyter_client", "8.0", "9.0", "the kernel-channel re-poll")
    from jupyter_client.channels import AsyncZMQSocketChannel

    original = require_attribute(AsyncZMQSocketChannel, "get_msg", "the kernel-channel re-poll")
    if getattr(original, "_labkit_repoll", False):
        return

    async def get_msg(self: Any, timeout: float | None = None) -> dict[str, Any]:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = CHANNEL_REPOLL_S if deadline is None else deadline - time.monotonic()
            try:
                result: dict[str, Any] = await original(self, max(0.0, min(CHANNEL_REPOLL_S,
                                                                           left)))
                return result
            except Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise

    get_msg._labkit_repoll = True  # type: ignore[attr-defined]
    AsyncZMQSocketChannel.get_msg = get_msg  # type: ignore[method-assign]


# --- the gallery ---------------------------------------------------------------------------------


def gallery_entries(root: Path | str) -> list[dict[str, Any]]:
    """Return the gallery's cards for the lessons in ``root``, by number.

    Each card: ``name`` (notebook file), ``stem``, ``number``, ``title``, ``goals``,
    ``duration``, ``thumbnail`` (template-static path or None) and ``problem`` (why the header
    could not be read, or None). Never raises for a broken notebook: the card says so.
    """
    cards = []
    for notebook in sorted(Path(root).glob(NOTEBOOK_PATTERN)):
        card: dict[str, Any] = {"name": notebook.name, "stem": notebook.stem,
                                "number": notebook.name[:2], "title": notebook.stem,
                                "goals": [], "duration": None, "problem": None}
        try:
            lesson = read_lesson(notebook)
        except ValueError as err:
            card["problem"] = str(err)
        else:
            card.update(title=lesson.title, goals=list(lesson.goals), duration=lesson.duration)
        thumb = THUMBNAILS / f"{notebook.stem}.png"
        card["thumbnail"] = f"static/thumbnails/{thumb.name}" if thumb.is_file() else None
        cards.append(card)
    return cards


# --- the config ----------------------------------------------------------------------------------


def _cap_server_memory(limits: Limits) -> None:
    if not limits.server_memory_mib:
        return
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return
    limit = limits.server_memory_mib * 2**20
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    # soft limit only: kernels inherit it and may lower their own (labkit.runtime.kernel)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def configure(c: Any) -> None:
    """Apply labkit's classroom settings to voila's config ``c`` (see the module docstring)."""
    limits = Limits.from_environ()
    guard_binary_header_parsing()
    repoll_kernel_channels()
    from voila.tornado.handler import TornadoVoilaHandler

    _admit_pages(TornadoVoilaHandler)
    _cap_server_memory(limits)

    # Kernels inherit the server's environment: mark them (labkit.serve.running_under_voila),
    # and keep each to one BLAS thread (30 kernels on a few cores).
    os.environ["LABKIT_SERVED_BY"] = "voila"
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")
    # labkit's template (read when voila collects template paths, right after this file)
    known = os.environ.get("JUPYTER_PATH", "").split(os.pathsep)
    paths = [str(TEMPLATE_ROOT), *filter(None, known)]
    os.environ["JUPYTER_PATH"] = os.pathsep.join(dict.fromkeys(paths))

    c.MappingKernelManager.cull_idle_timeout = CULL_IDLE_TIMEOUT_S
    c.MappingKernelManager.cull_interval = CULL_INTERVAL_S
    c.VoilaConfiguration.multi_kernel_manager_class = (
        "labkit.serve.server.CappedKernelManager")
    c.VoilaConfiguration.classic_tree = True
    c.VoilaKernelManager.fill_delay = POOL_REFILL_DELAY_S
    c.VoilaConfiguration.resources = {"labkit": {
        "course": t("serve.course"), "back": t("serve.back"), "lang": "ko"}}
    c.VoilaExecutor.cell_error_instruction = t("serve.cell_error")
    c.HTMLExporter.language_code = "ko"
    c.Voila.tornado_settings = {
        # voila#1458: the tab-close shutdown beacon has no _xsrf cookie and is refused, leaking
        # a kernel per closed tab. This exposes only kernel shutdown, to callers who know the id.
        "disable_check_xsrf": True,
        "websocket_max_message_size": WEBSOCKET_MAX_MESSAGE_BYTES,
        "headers": {"Content-Security-Policy": CONTENT_SECURITY_POLICY,
                    "X-Content-Type-Options": "nosniff",
                    "Referrer-Policy": "same-origin"},
        "jinja_template_vars": {
            "labkit_t": t,
            "labkit_lessons": lambda: gallery_entries(served_root()),
            "labkit_limits": limits,
        },
    }


def served_root() -> Path:
    """Return the folder the running voila serves (``notebooks/`` outside a voila server)."""
    from voila.app import Voila

    if Voila.initialized():
        return Path(Voila.instance().root_dir)
    from labkit.serve import notebooks_dir

    return notebooks_dir()
