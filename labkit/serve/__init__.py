"""Serve the lessons as voila apps (``make present`` / ``python -m labkit.serve``).

Voila is started from ``labkit/serve/config/``, a directory labkit controls: voila auto-loads
``voila.py``/``voila.json`` from its working directory, so starting it where a student can drop a
file would run that file as server config. The ``voila.py`` there applies
:func:`labkit.serve.server.configure`: the guard for a denial of service in voila 0.5.13's
binary-message parsing, kernel culling, labkit's template and gallery, and caps on kernels and
memory (see README, "Stack notes").

Bound to 127.0.0.1 only: ``make present`` is the teacher's own screen. A class works on the
class hub (``make hub``, :mod:`labkit.hub`), where every student has their own server and
account; there is no shared classroom mode with a common token.

Inside a lesson's kernel, :mod:`labkit.runtime.kernel` provides the classroom guards
(:func:`running_under_voila`, :func:`forbid_under_voila`, :func:`session_dir`). This package
imports nothing heavy: kernels import it from ``labkit.ui.setup()``.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from labkit.runtime.kernel import (
    VoilaForbiddenError,
    forbid_under_voila,
    harden_kernel,
    running_under_voila,
    session_dir,
)

__all__ = [
    "CONFIG_DIR",
    "HOST",
    "THEMES",
    "VoilaForbiddenError",
    "forbid_under_voila",
    "harden_kernel",
    "notebooks_dir",
    "running_under_voila",
    "serve_environment",
    "session_dir",
    "voila_command",
    "voila_executable",
]

CONFIG_DIR = Path(__file__).resolve().parent / "config"
#: The only interface ``make present`` binds (the teacher's own screen).
HOST = "127.0.0.1"
#: voila options that would expose the server beyond this machine or drop its checks.
_REFUSED_EXTRA = ("--Voila.ip", "--ip", "--token", "--Voila.token", "--ServerApp.ip",
                  "--ServerApp.token", "--IdentityProvider.token")
THEMES = ("light", "dark")


def notebooks_dir() -> Path:
    """Return the repository's ``notebooks/`` folder."""
    return Path(__file__).resolve().parents[2] / "notebooks"


def voila_executable() -> str:
    """Return the ``voila`` script beside this Python.

    Not ``python -m voila``: run from :data:`CONFIG_DIR`, ``-m`` would put that folder first on
    ``sys.path`` and import the config file ``voila.py`` as the voila package.
    """
    script = Path(sys.executable).with_name("voila")
    found = str(script) if script.exists() else shutil.which("voila")
    if not found:
        raise FileNotFoundError("voila is not installed: run `make present` (installs it)")
    return found


def voila_command(
    port: int = 8866, root: Path | None = None, extra: list[str] | None = None, *,
    theme: str = "light", warm: dict[str, int] | None = None,
) -> list[str]:
    """Return the argv of voila serving ``root`` (default: all lessons) on 127.0.0.1.

    Run it with :data:`CONFIG_DIR` as the working directory (voila loads labkit's config
    from there) and :func:`serve_environment` in the environment.

    Parameters
    ----------
    port : int
        TCP port on 127.0.0.1.
    root : Path, optional
        A notebook or folder to serve (default :func:`notebooks_dir`).
    extra : list of str, optional
        More voila arguments (after labkit's, so they win); never the interface or a token.
    theme : {"light", "dark"}, default "light"
        Page theme (locked: a URL cannot change it).
    warm : dict, optional
        Notebook file name (relative to ``root``) -> kernels kept preheated for it (voila's
        kernel pool: the page appears without waiting for the notebook to run). Other notebooks
        get none.

    Raises
    ------
    ValueError
        If ``port`` is not in 1-65535, ``theme`` is unknown, a ``warm`` count is negative, or
        ``extra`` sets the interface or a token (a class uses ``make hub``).
    """
    if not 0 < int(port) < 65536:
        raise ValueError(f"port must be in 1-65535, got {port!r}")
    if theme not in THEMES:
        raise ValueError(f"theme must be one of {THEMES}, got {theme!r}")
    if any(int(n) < 0 for n in (warm or {}).values()):
        raise ValueError(f"warm kernel counts must be >= 0, got {warm!r}")
    for arg in extra or []:
        if arg.split("=", 1)[0] in _REFUSED_EXTRA:
            raise ValueError(f"{arg.split('=', 1)[0]}: make present serves {HOST} only; "
                             "a class uses the class hub (make hub)")
    argv = [
        voila_executable(), str((root or notebooks_dir()).resolve()),
        "--no-browser", f"--port={int(port)}", f"--Voila.ip={HOST}",
        "--template=labkit", f"--theme={theme}",
        "--strip_sources=True", "--show_tracebacks=False",
        "--MappingKernelManager.cull_idle_timeout=600",
        "--MappingKernelManager.cull_interval=60",
        "--VoilaConfiguration.allow_theme_override=NO",
        "--VoilaConfiguration.allow_template_override=NO",
    ]
    if any(int(n) > 0 for n in (warm or {}).values()):
        pools = json.dumps({"default": {"pool_size": 0},
                            **{name: {"pool_size": int(n)} for name, n in (warm or {}).items()}})
        argv += ["--preheat_kernel=True", f"--VoilaKernelManager.kernel_pools_config={pools}"]
    for arg in extra or []:  # an extra option replaces labkit's value for the same option
        name = arg.split("=", 1)[0]
        argv = [a for a in argv if not (a.startswith("--") and a.split("=", 1)[0] == name)]
        argv.append(arg)
    return argv


def serve_environment(
    *, theme: str = "light", max_kernels: int | None = None, max_memory_mib: int | None = None,
    kernel_memory_mib: int | None = None, server_memory_mib: int | None = None,
) -> dict[str, str]:
    """Return the environment variables that carry labkit's serving limits to voila.

    Read by :class:`labkit.serve.server.Limits` (server) and :mod:`labkit.runtime.kernel`
    (kernels); ``None`` keeps the default. ``LABKIT_THEME`` makes ``ui.setup()`` pick the plot
    template that matches the page.
    """
    env = {"LABKIT_THEME": theme}
    for name, value in (("LABKIT_MAX_KERNELS", max_kernels),
                        ("LABKIT_MAX_MEMORY_MIB", max_memory_mib),
                        ("LABKIT_KERNEL_MEMORY_MIB", kernel_memory_mib),
                        ("LABKIT_SERVER_MEMORY_MIB", server_memory_mib)):
        if value is not None:
            if int(value) < 0:
                raise ValueError(f"{name} must be >= 0, got {value!r}")
            env[name] = str(int(value))
    return env
