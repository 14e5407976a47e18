"""The hub's processes live and die together: no orphans after a crash, a quick clean stop.

JupyterHub starts configurable-http-proxy and its managed services (idle culler, class page)
with ``start_new_session=True`` and no way to pass a ``preexec_fn``; killed hard, the hub left
them running, holding the public port, the proxy's API and the services' tokens. Three parts:

- :func:`tied` wraps such a command as ``python -m labkit.hub.lifetime --parent PID --run DIR --
  CMD...``: the wrapper asks the kernel for ``PR_SET_PDEATHSIG`` (``SIGKILL`` when the thread
  that started it dies; prctl(2)), checks the parent is still the hub (else it exits at once),
  marks the process with ``LABKIT_HUB_RUN=DIR`` and execs the command (the setting survives
  exec; it is cleared only by a set-user-ID exec or a change of credentials, so the students'
  servers set it after ``setuid``: :func:`die_with_parent`). JupyterHub's public settings
  (``ConfigurableHTTPProxy.command``, a service's ``command``) take the wrapped command: no
  patch of JupyterHub's internals.
- :func:`supervise` runs ``jupyterhub`` as its child (tied the same way): the first SIGINT or
  SIGTERM is forwarded once as SIGTERM (JupyterHub stops its services, servers and proxy), and
  whatever still runs after :data:`STOP_GRACE_S` is killed, so the whole hub is down within
  :data:`STOP_DEADLINE_S`; a second signal kills at once.
- :func:`clean_previous_run`, at every start (and after every stop): a hub still running on
  the same state directory is refused; processes marked with this state directory (a proxy or
  service of an earlier run) and every process of the class's accounts (servers and kernels
  whose hub is gone) are killed; the pid files of the earlier run are removed, so JupyterHub
  never signals a pid that a reboot gave to another program (its own check,
  ``ConfigurableHTTPProxy._check_previous_process``, only asks whether the pid exists). The proxy
  is always started anew, so it holds no route of the earlier run; JupyterHub adds back only
  servers whose process is alive (:func:`pid_is_users` guards that check against reused pids).

This module imports only the standard library at import time (the wrapper is on every start
of the proxy and services).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

__all__ = ["ENV_RUN", "PR_SET_PDEATHSIG", "STOP_DEADLINE_S", "STOP_GRACE_S", "HubAlreadyRunning",
           "clean_previous_run", "die_with_parent", "pid_is_users", "run_processes", "supervise",
           "tied"]

#: prctl(2) option: the signal this process gets when its parent thread dies
#: (``<linux/prctl.h>``: ``#define PR_SET_PDEATHSIG 1``).
PR_SET_PDEATHSIG = 1
#: The environment variable that marks every process of one hub run: the state directory.
ENV_RUN = "LABKIT_HUB_RUN"
#: The supervisor's own pid file in the state directory.
PID_FILE = "labkit-hub.pid"
#: Pid files an earlier run may leave (JupyterHub's ``pid_file``, the proxy's ``pid_file``:
#: :func:`labkit.hub.config.configure`).
STALE_PID_FILES = ("jupyterhub.pid", "proxy.pid")
#: After forwarding a stop, how long JupyterHub gets to stop its services, servers and proxy
#: itself (it sends SIGINT, then SIGTERM, then SIGKILL to each: about 2-4 s measured with one
#: student on this 2-core machine) before the rest is killed. [s]
STOP_GRACE_S = 7.0
#: The issue's goal for Ctrl+C / SIGTERM: the whole hub down within this. [s]
STOP_DEADLINE_S = 10.0


class HubAlreadyRunning(RuntimeError):
    """A hub of the same state directory still runs (``pid``)."""

    def __init__(self, pid: int) -> None:
        super().__init__(f"a class hub already runs on this state directory (pid {pid})")
        self.pid = pid


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def die_with_parent(sig: int = signal.SIGKILL, parent: int | None = None) -> None:
    """Ask the kernel to send ``sig`` to this process when its parent thread dies.

    Call it in the child (a ``preexec_fn``, after any ``setuid``; prctl(2) ``PR_SET_PDEATHSIG``).
    If ``parent`` is given and this process's parent is no longer it (it died before the
    request), the process exits at once.

    Raises
    ------
    OSError
        If prctl fails (not Linux).
    """
    if _libc().prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_PDEATHSIG): {os.strerror(err)}")
    if parent is not None and os.getppid() != parent:
        os._exit(1)


def tied(command: Sequence[str], run_dir: Path | str, parent: int | None = None) -> list[str]:
    """Return ``command`` wrapped so that it dies with ``parent`` (default: this process).

    The wrapped process is marked ``LABKIT_HUB_RUN=run_dir`` (:func:`run_processes` finds it).
    """
    pid = os.getpid() if parent is None else int(parent)
    return [sys.executable, "-m", "labkit.hub.lifetime", "--parent", str(pid),
            "--run", str(run_dir), "--", *command]


def _environ_of(pid: int) -> dict[str, str]:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    pairs = (item.partition(b"=") for item in raw.split(b"\0") if item)
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, _, v in pairs}


def _ancestors() -> set[int]:
    found, pid = {os.getpid()}, os.getpid()
    while pid > 1:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            break
        pid = int(stat.rpartition(")")[2].split()[1])
        found.add(pid)
    return found


def _pids() -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]


def run_processes(run_dir: Path | str) -> list[int]:
    """Return the pids marked with ``run_dir`` (:func:`tied`), this process and its ancestors
    excepted."""
    mark, mine = str(run_dir), _ancestors()
    return [pid for pid in _pids() if pid not in mine and _environ_of(pid).get(ENV_RUN) == mark]


def _uid_of(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def pid_is_users(pid: int, uid: int) -> bool:
    """Return whether ``pid`` runs and belongs to ``uid`` (a reused pid belongs to another)."""
    return pid > 0 and _uid_of(pid) == uid


def _kill_all(pids: Iterable[int], timeout_s: float = 3.0) -> int:
    """SIGKILL ``pids``; wait until they are gone (at most ``timeout_s``); return how many."""
    sent = []
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
            sent.append(pid)
        except OSError:
            pass
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() and not _zombie(p)
                                              for p in sent):
        time.sleep(0.05)
    return len(sent)


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z"
    except OSError:
        return True


def _live_pid_file(path: Path) -> int | None:
    try:
        pid = int(path.read_text().strip())
    except (OSError, ValueError):
        return None
    return pid if pid > 0 and Path(f"/proc/{pid}").exists() and not _zombie(pid) else None


def _is_hub_command(pid: int) -> bool:
    """Whether ``pid`` runs ``python -m labkit.hub ... serve`` (not a reused pid)."""
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"labkit.hub" in words and b"serve" in words


def clean_previous_run(run_dir: Path, uids: Iterable[int]) -> dict[str, int]:
    """Remove what an earlier run of the hub on ``run_dir`` left (see the module docstring).

    Parameters
    ----------
    run_dir : Path
        The hub's state directory.
    uids : iterable of int
        The class's accounts (students and teacher): every process of theirs is killed.

    Returns
    -------
    dict
        ``{"hub": n, "students": n, "pid_files": n}``: processes killed, pid files removed.

    Raises
    ------
    HubAlreadyRunning
        If the supervisor of another run of this state directory is alive.
    ValueError
        If ``uids`` holds 0 (root's processes are never killed).
    """
    targets = {int(u) for u in uids}
    if 0 in targets:
        raise ValueError("refusing to kill root's processes")
    previous = _live_pid_file(run_dir / PID_FILE)
    if previous is not None and previous not in _ancestors() and _is_hub_command(previous):
        raise HubAlreadyRunning(previous)
    hub = _kill_all(run_processes(run_dir))
    students = 0
    for _ in range(3):  # a dying server's kernel may fork once more
        found = [pid for pid in _pids() if _uid_of(pid) in targets and not _zombie(pid)]
        if not found:
            break
        students += _kill_all(found)
    removed = 0
    for name in STALE_PID_FILES:
        path = run_dir / name
        if path.exists():
            path.unlink(missing_ok=True)
            removed += 1
    return {"hub": hub, "students": students, "pid_files": removed}


def supervise(command: Sequence[str], *, run_dir: Path, env: dict[str, str], cwd: Path,
              after: Callable[[], object] = lambda: None,
              grace_s: float = STOP_GRACE_S) -> int:
    """Run ``command`` (jupyterhub) as a tied child until it exits; return its exit status.

    SIGINT/SIGTERM: forwarded once as SIGTERM; after ``grace_s`` the child is killed; a second
    signal kills it at once. Afterwards every process marked with ``run_dir`` is killed and
    ``after()`` runs (the caller's cleanup of the students' processes). The supervisor's pid
    is kept in ``run_dir/labkit-hub.pid`` while it runs.

    Returns
    -------
    int
        The child's exit status (0 after a requested stop; ``128 + n`` for a signal n).
    """
    parent = os.getpid()
    pid_file = run_dir / PID_FILE
    pid_file.write_text(f"{parent}\n")
    stopping: list[float] = []

    def child_setup() -> None:
        os.setpgid(0, 0)  # a terminal's Ctrl+C reaches the supervisor only: one stop, not two
        die_with_parent(signal.SIGKILL, parent)

    child = subprocess.Popen(list(command), env={**env, ENV_RUN: str(run_dir)}, cwd=cwd,
                             preexec_fn=child_setup)

    def on_signal(signum: int, _frame: object) -> None:
        if stopping:
            _kill_all([child.pid], timeout_s=0)
            return
        stopping.append(time.monotonic())
        try:
            child.send_signal(signal.SIGTERM)
        except OSError:
            pass

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        while True:
            try:
                status = child.wait(timeout=0.2)
                break
            except subprocess.TimeoutExpired:
                if stopping and time.monotonic() - stopping[0] > grace_s:
                    _kill_all([child.pid], timeout_s=1)
        _kill_all(run_processes(run_dir))
        after()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        pid_file.unlink(missing_ok=True)
    if stopping and status in (-signal.SIGTERM, -signal.SIGKILL):
        return 0
    return 128 - status if status < 0 else status


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m labkit.hub.lifetime --parent PID --run DIR -- CMD...``: die with PID, exec."""
    args = list(sys.argv[1:] if argv is None else argv)
    if "--" not in args:
        raise SystemExit("usage: python -m labkit.hub.lifetime --parent PID --run DIR -- CMD...")
    split = args.index("--")
    options, command = args[:split], args[split + 1:]
    values = dict(zip(options[::2], options[1::2], strict=False))
    if not command or set(values) != {"--parent", "--run"}:
        raise SystemExit("usage: python -m labkit.hub.lifetime --parent PID --run DIR -- CMD...")
    die_with_parent(signal.SIGKILL, int(values["--parent"]))
    os.environ[ENV_RUN] = values["--run"]
    os.execvp(command[0], command)


if __name__ == "__main__":
    main()
