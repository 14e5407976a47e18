"""Serve the lessons as voila apps (``make present`` / ``python -m labkit.serve``).

Voila is started from ``labkit/serve/config/``, a directory labkit controls: voila auto-loads
``voila.py``/``voila.json`` from its working directory, so starting it where a student can drop a
file would run that file as server config. The ``voila.py`` there guards a denial of service in
voila 0.5.13's binary-message parsing and culls idle kernels (see README, "Stack notes").

Bound to 127.0.0.1 by default; any other host requires a token (generated and printed when not
given).
"""

from __future__ import annotations

import secrets
import shutil
import sys
from pathlib import Path

__all__ = ["CONFIG_DIR", "LOCAL_HOSTS", "notebooks_dir", "voila_command", "voila_executable"]

CONFIG_DIR = Path(__file__).resolve().parent / "config"
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


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
    host: str = "127.0.0.1", port: int = 8866, token: str | None = None,
    root: Path | None = None, extra: list[str] | None = None,
) -> tuple[list[str], str | None]:
    """Return (argv, token) for voila serving ``root`` (default: all lessons).

    Parameters
    ----------
    host : str
        Interface to bind. Anything but 127.0.0.1/localhost/::1 requires a token.
    port : int
        TCP port.
    token : str, optional
        Access token; generated when ``host`` is not local and none is given.
    root : Path, optional
        A notebook or folder to serve (default :func:`notebooks_dir`).
    extra : list of str, optional
        More voila arguments.

    Raises
    ------
    ValueError
        If ``port`` is not in 1-65535.
    """
    if not 0 < int(port) < 65536:
        raise ValueError(f"port must be in 1-65535, got {port!r}")
    if host not in LOCAL_HOSTS and not token:
        token = secrets.token_urlsafe(18)
    argv = [
        voila_executable(), str((root or notebooks_dir()).resolve()),
        "--no-browser", f"--port={int(port)}", f"--Voila.ip={host}",
        "--strip_sources=True", "--show_tracebacks=False",
        "--MappingKernelManager.cull_idle_timeout=600",
        "--MappingKernelManager.cull_interval=60",
        # voila#1458: the tab-close shutdown beacon lacks an _xsrf cookie and is refused,
        # leaking a kernel per closed tab. Only the shutdown endpoint is exposed by this.
        "--Voila.tornado_settings=disable_check_xsrf=True",
        "--VoilaConfiguration.allow_theme_override=NO",
        "--VoilaConfiguration.allow_template_override=NO",
    ]
    if token:
        argv.append(f"--token={token}")
    argv += extra or []
    return argv, token
