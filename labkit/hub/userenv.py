"""The students' Python environment: a venv every student account can run (TLJH: /opt/tljh/user).

The hub itself runs from the checkout's ``.venv``, which often sits under ``/root`` or uses an
interpreter there (pyenv): student accounts cannot execute it. Their servers run from a separate
environment, :data:`USER_ENV` (default ``/opt/labkit-hub/user``, root-owned, world-readable),
built once from the same lock (``binder/constraints.txt``, extras ``lab`` and ``hub``) on a
Python every account can reach (Debian's ``/usr/bin/python3.11`` when the hub's own is private).
A second ``make hub`` builds nothing while the lock is unchanged (a stamp file holds its hash);
a new lock is built beside the environment in use (``<env>-<hash>``) and swapped in by renaming
a symbolic link, and never while students' servers run from it unless forced
(``serve --rebuild-env``). On each ``serve`` the checkout's ``labkit`` package is copied in
again (staged beside the old copy, then renamed in), so the students run the teacher's current
code; the notebooks are not part of it (see :mod:`labkit.hub.curriculum`).
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from labkit.i18n import t
from labkit.serve.labconfig import write_page_config

__all__ = ["USER_ENV", "ensure_user_env", "is_current", "processes_using", "python_for_everyone",
           "site_packages", "stamp", "user_python"]

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


def stamp() -> str:
    """Return the hash of what the environment is built from (``pyproject.toml`` and the lock
    ``binder/constraints.txt``): the same hash, the same environment."""
    digest = hashlib.sha256()
    for name in ("pyproject.toml", "binder/constraints.txt"):
        digest.update((REPO / name).read_bytes())
    return digest.hexdigest()


def is_current(env: Path) -> bool:
    """Whether ``env`` was built from the current lock (its stamp file holds :func:`stamp`)."""
    try:
        return (env / STAMP).read_text(encoding="utf-8").strip() == stamp()
    except OSError:
        return False


def processes_using(env: Path) -> int:
    """Return how many processes run from ``env`` now (students' servers and kernels)."""
    import psutil

    roots = {str(env)}
    if env.exists():
        roots.add(str(env.resolve()))
    count = 0
    for proc in psutil.process_iter(["exe", "cmdline"]):
        paths = [proc.info.get("exe") or "", *(proc.info.get("cmdline") or [])[:1]]
        if any(p == r or p.startswith(r + os.sep) for p in paths if p for r in roots):
            count += 1
    return count


def _pip_build(target: Path) -> None:
    """Create the venv ``target`` and install labkit's lab and hub extras from the lock."""
    subprocess.run([python_for_everyone(), "-m", "venv", str(target)], check=True)
    pip = [str(user_python(target)), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, "--upgrade", "pip"], check=True)
    subprocess.run([*pip, "-c", str(REPO / "binder/constraints.txt"), f"{REPO}[lab,hub]"],
                   check=True)


def _swap_in(env: Path, new: Path) -> None:
    """Point ``env`` (a symbolic link) at ``new`` in one rename; delete what it pointed at."""
    link = env.with_name(f".{env.name}.link")
    link.unlink(missing_ok=True)
    link.symlink_to(new.name)
    old: Path | None = None
    if env.is_symlink():
        old = env.resolve()
    elif env.exists():  # an environment of an older labkit: a real folder at the path
        old = env.with_name(f".{env.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        os.rename(env, old)
    os.replace(link, env)
    if old is not None and old != new.resolve():
        shutil.rmtree(old, ignore_errors=True)


def _replace_tree(source: Path, target: Path) -> None:
    """Copy ``source`` to ``target`` beside it first, then rename it in (never half a tree)."""
    staged = target.with_name(f".{target.name}.new")
    shutil.rmtree(staged, ignore_errors=True)
    shutil.copytree(source, staged, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    old = target.with_name(f".{target.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        os.rename(target, old)
    os.rename(staged, target)
    shutil.rmtree(old, ignore_errors=True)


@functools.cache
def site_packages(env: Path) -> Path:
    """Return the environment's site-packages folder."""
    out = subprocess.run([str(user_python(env)), "-c",
                          "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         check=True, capture_output=True, text=True)
    return Path(out.stdout.strip())


def ensure_user_env(env: Path | None = None, *, log: bool = True, force: bool = False,
                    build: Callable[[Path], None] = _pip_build,
                    in_use: Callable[[Path], int] = processes_using) -> Path:
    """Build the students' environment if missing or stale; copy labkit in. Returns its path.

    Idempotent and atomic: nothing is built while ``env``'s stamp matches :func:`stamp`; a
    stale environment is built beside it (``<env>-<hash>``) and swapped in by renaming a
    symbolic link, never while students' processes run from it (:func:`processes_using`)
    unless ``force``. labkit and its data are copied in at every call, each staged beside the
    old copy and renamed in.

    Parameters
    ----------
    env : Path, optional
        The environment's path (default :data:`USER_ENV`).
    log : bool
        Say on stdout when it builds or skips.
    force : bool
        Rebuild a stale environment even while it is in use.
    build : callable
        Builds a venv at the path it is given (default: venv + pip from the lock).
    in_use : callable
        Counts the processes running from a path.

    Raises
    ------
    subprocess.CalledProcessError
        If ``venv`` or ``pip`` fails (the environment in use stays as it was).
    """
    env = env or USER_ENV
    old = os.umask(0o022)
    try:
        if not is_current(env):
            busy = in_use(env) if env.exists() else 0
            if busy and not force:
                if log:
                    print(t("hub.cli.env.in_use", env=env, n=busy), flush=True)
            else:
                if log:
                    print(f"labkit hub: {t('hub.cli.serve.building', path=env)}", flush=True)
                env.parent.mkdir(parents=True, exist_ok=True)
                digest = stamp()
                new = env.with_name(f"{env.name}-{digest[:12]}")
                if env.exists() and new.resolve() == env.resolve():  # stamped over by hand
                    new = env.with_name(f"{new.name}-b")  # never delete what is in use
                shutil.rmtree(new, ignore_errors=True)
                build(new)
                (new / STAMP).write_text(digest, encoding="utf-8")
                _swap_in(env, new)
                site_packages.cache_clear()
        if (env / "bin" / "python").exists():
            _copy_labkit(env)
    finally:
        os.umask(old)
    return env


def _copy_labkit(env: Path) -> None:
    settings = env / "share/jupyter/lab/settings"  # every serve: follows labkit's defaults
    settings.mkdir(parents=True, exist_ok=True)
    staged = settings / ".overrides.json.new"
    staged.write_text(LAB_OVERRIDES)
    os.replace(staged, settings / "overrides.json")
    write_page_config(env)  # JupyterLab's core extensions no lesson uses, off
    _replace_tree(REPO / "labkit", site_packages(env) / "labkit")
    data = env / "share" / "labkit" / "data"
    data.parent.mkdir(parents=True, exist_ok=True)
    _replace_tree(REPO / "data", data)
    trim_for_students(env)
    subprocess.run(["chmod", "-R", "a+rX", str(env.resolve())], check=True)
