"""The students' Python environment: a venv every student account can run (TLJH: /opt/tljh/user).

The hub itself runs from the checkout's ``.venv``, which often sits under ``/root`` or uses an
interpreter there (pyenv): student accounts cannot execute it. Their servers run from a separate
environment, :data:`USER_ENV` (default ``/opt/labkit-hub/user``, root-owned, world-readable),
built once from the same lock (``binder/constraints.txt``, extras ``lab`` and ``hub``) on a
Python every account can reach (Debian's ``/usr/bin/python3.11`` when the hub's own is private).
On each ``serve`` the checkout's ``labkit`` package is copied in again, so the students run the
teacher's current code; the notebooks are not part of it (see :mod:`labkit.hub.curriculum`).
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["USER_ENV", "ensure_user_env", "python_for_everyone", "site_packages", "user_python"]

USER_ENV = Path(os.environ.get("LABKIT_HUB_USER_ENV", "/opt/labkit-hub/user"))
REPO = Path(__file__).resolve().parents[2]
STAMP = ".labkit-env-stamp"
#: JupyterLab's defaults for every student: no news checks (an offline classroom), Korean menus
#: (jupyterlab-language-pack-ko-kr, in the lab extra) -- the same as ``make lab`` writes.
LAB_OVERRIDES = ('{"@jupyterlab/apputils-extension:notification":'
                 '{"fetchNews":"false","checkForUpdates":false},'
                 '"@jupyterlab/translation-extension:plugin":{"locale":"ko_KR"}}')

#: Installed with the lock (jupyter_events requires ``jsonschema[format-nongpl]``) but used by no
#: student's server, and costly in every one of them: ``rfc3987-syntax`` builds ~40 Earley parsers
#: when imported (2.1 CPU-s and 25 MB per server, measured here; jsonschema#1428), and
#: jsonschema's format checkers import it as each server starts. It checks only the ``iri`` and
#: ``iri-reference`` formats, which no Jupyter schema uses; without it jsonschema skips them.
UNUSED_PACKAGES = ("rfc3987-syntax",)


def trim_for_students(env: Path) -> None:
    """Make the environment cheap to start in every student's server (each ``serve``).

    - labkit (just copied in) is compiled: student accounts cannot write ``__pycache__`` in the
      root-owned environment, so each server and kernel would compile its sources again;
    - :data:`UNUSED_PACKAGES` are uninstalled (also from an environment built before).

    Raises
    ------
    subprocess.CalledProcessError
        If ``compileall`` or ``pip uninstall`` fails.
    """
    python = str(user_python(env))
    site = site_packages(env)
    for name in UNUSED_PACKAGES:
        if (site / name.replace("-", "_")).is_dir():
            subprocess.run([python, "-m", "pip", "uninstall", "-y", "-q", name], check=True)
    subprocess.run([python, "-m", "compileall", "-q", "-j", "0", str(site / "labkit")],
                   check=True)


def _world_reachable(path: Path) -> bool:
    real = path.resolve()
    for parent in [real, *real.parents]:
        mode = parent.stat().st_mode
        if parent != real and not mode & 0o001:  # directories: o+x
            return False
    return bool(real.stat().st_mode & 0o005 == 0o005)


def python_for_everyone() -> str:
    """Return a Python >= 3.11 (same minor version as the hub's) that any account can run.

    Raises
    ------
    FileNotFoundError
        If there is none (install Debian's python3 or put the interpreter in /opt or /usr).
    """
    minor = f"python{sys.version_info.major}.{sys.version_info.minor}"
    candidates = [Path(getattr(sys, "_base_executable", sys.executable)), Path("/usr/bin") / minor,
                  Path("/usr/local/bin") / minor]
    for candidate in candidates:
        if candidate.exists() and _world_reachable(candidate):
            return str(candidate)
    raise FileNotFoundError(f"no {minor} that student accounts can run (tried "
                            f"{', '.join(map(str, candidates))}): apt-get install {minor}-venv")


def user_python(env: Path | None = None) -> Path:
    """The students' Python (``<env>/bin/python``)."""
    return (env or USER_ENV) / "bin" / "python"


def _stamp() -> str:
    digest = hashlib.sha256()
    for name in ("pyproject.toml", "binder/constraints.txt"):
        digest.update((REPO / name).read_bytes())
    return digest.hexdigest()


@functools.cache
def site_packages(env: Path) -> Path:
    """Return the environment's site-packages folder."""
    out = subprocess.run([str(user_python(env)), "-c",
                          "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         check=True, capture_output=True, text=True)
    return Path(out.stdout.strip())


def ensure_user_env(env: Path | None = None, *, log: bool = True) -> Path:
    """Build the students' environment if missing or stale; copy labkit in. Returns its path.

    Raises
    ------
    subprocess.CalledProcessError
        If ``venv`` or ``pip`` fails.
    """
    env = env or USER_ENV
    old = os.umask(0o022)
    try:
        if not (env / STAMP).exists() or (env / STAMP).read_text() != _stamp():
            if log:
                print(f"labkit hub: building the students' environment in {env} "
                      "(once; 1-3 min)", flush=True)
            shutil.rmtree(env, ignore_errors=True)
            env.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run([python_for_everyone(), "-m", "venv", str(env)], check=True)
            pip = [str(user_python(env)), "-m", "pip", "install", "-q"]
            subprocess.run([*pip, "--upgrade", "pip"], check=True)
            subprocess.run([*pip, "-c", str(REPO / "binder/constraints.txt"),
                            f"{REPO}[lab,hub]"], check=True)
            (env / STAMP).write_text(_stamp())
            site_packages.cache_clear()
        settings = env / "share/jupyter/lab/settings"  # every serve: follows labkit's defaults
        settings.mkdir(parents=True, exist_ok=True)
        (settings / "overrides.json").write_text(LAB_OVERRIDES)
        target = site_packages(env) / "labkit"
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(REPO / "labkit", target,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        data = env / "share" / "labkit" / "data"
        shutil.rmtree(data, ignore_errors=True)
        shutil.copytree(REPO / "data", data)
        trim_for_students(env)
        subprocess.run(["chmod", "-R", "a+rX", str(env)], check=True)
    finally:
        os.umask(old)
    return env
