"""The spawner: each student's server under their own system account, with limits.

:class:`LabkitSpawner` is JupyterHub's LocalProcessSpawner with what a class needs:

- the server runs as ``jupyter-<username>`` (created from the roster, home 0700;
  :mod:`labkit.hub.accounts`), never as the hub's account;
- before it starts: the student's cgroup with their memory/CPU/process limits
  (:mod:`labkit.hub.limits`), their home on a fixed-size image (:mod:`labkit.hub.disk`), their
  own mount namespace with a private ``/tmp`` and a ``/proc`` that hides other users'
  processes (:mod:`labkit.hub.isolation`), the curriculum merged into ``~/labkit``
  (:mod:`labkit.hub.curriculum`, written as the student), and their GPU share in the
  environment (:func:`gpu_environment`, the one call into ``labkit.hub.gpushare``);
- while it runs: its output reaches the hub's log through a rate-bounded relay
  (:mod:`labkit.hub.serverlog`), so a student cannot fill the hub's disk through it;
- after it stops: every process left under the student's uid is killed and the cgroup removed.

JupyterLab opens at ``/user/<name>/lab`` on ``~/labkit``; voila apps are at
``/user/<name>/voila/render/<lesson>.ipynb`` (labkit's single-user config,
:mod:`labkit.hub.singleuser_config`).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import pwd
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from jupyterhub.spawner import LocalProcessSpawner, set_user_setuid
from traitlets import Bool, Dict, Float, Integer, List, Unicode, default

from labkit.hub import accounts, curriculum, disk, isolation, lifetime, serverlog
from labkit.hub.gpushare import ENV_SHARE, ShareState
from labkit.hub.limits import Limits, StudentCgroup, detect_mechanism, rlimit_preexec
from labkit.hub.preheat import ENV_WARM_LESSON, ENV_WARM_PAGE, WARM_PAGES
from labkit.hub.roster import STUDENTS_GROUP, system_username
from labkit.hub.userenv import USER_ENV, site_packages, user_python
from labkit.i18n import t

__all__ = ["ENV_WARM_LESSON", "LabkitSpawner", "gpu_environment", "warm_options"]

HOME_FOLDER = "labkit"
#: The student's Jupyter runtime folder, relative to their home (kernel sockets live there).
RUNTIME_DIR = ".labkit/run"


def gpu_environment(username: str, roster: list[str], policy: str) -> dict[str, str]:
    """Return the GPU-share environment of ``username``'s server (``CUDA_VISIBLE_DEVICES``, ...).

    The one place the hub asks :func:`labkit.hub.gpushare.environment_for` (the teacher's GPU
    policy). The teacher's own server (not on the roster) gets no share: it sees the lab as the
    hub does. :class:`labkit.hub.gpushare.NoShareLeft` propagates, so the spawn fails and the
    spawn page shows its Korean message.
    """
    from labkit.hub import gpushare

    if username not in roster:
        return {}
    return gpushare.environment_for(username, roster, policy)


def warm_options(user_options: Any, curriculum_dir: str = "") -> tuple[str | None, str]:
    """Return what a start preheats: the user options ``lesson`` and ``page`` ("수업 준비",
    :mod:`labkit.hub.warm`), as ``(lesson, page)``; ``(None, "app")`` without a lesson.

    Only a lesson notebook's exact file name of the curriculum (``03_goodput.ipynb``; the
    teacher's ``curriculum_dir``, else the checkout's lessons) is taken, and a page of
    :data:`labkit.hub.preheat.WARM_PAGES` (default its first, the app): the options come from
    whoever starts the server (the student too), and they reach the server's environment.

    Raises
    ------
    tornado.web.HTTPError
        400 (Korean) for any other option or value.
    """
    from tornado import web

    from labkit.hub.warm import LESSONS_DIR, lesson_notebook

    options = dict(user_options or {})
    lesson = options.pop("lesson", None)
    page = options.pop("page", WARM_PAGES[0])
    if options:
        raise web.HTTPError(400, t("hub.warm.bad_option",
                                   names=", ".join(str(k)[:40] for k in list(options)[:5])))
    if not isinstance(page, str) or page not in WARM_PAGES:
        raise web.HTTPError(400, t("hub.warm.bad_page", page=str(page)[:40]))
    if lesson is None:
        return None, page
    folder = Path(curriculum_dir) if curriculum_dir else LESSONS_DIR
    try:
        if isinstance(lesson, str) and lesson_notebook(lesson, folder) == lesson:
            return lesson, page
    except ValueError:
        pass
    raise web.HTTPError(400, t("hub.warm.bad_lesson_option", lesson=str(lesson)[:40]))


_RUNNABLE: set[tuple[str, str]] = set()  # (account, python) already checked by this hub


def _check_runnable(entry: pwd.struct_passwd, python: str) -> None:
    """Fail clearly if the student's account cannot run the students' Python (once per hub)."""
    if (entry.pw_name, python) in _RUNNABLE:
        return
    probe = subprocess.run([python, "-c", "import labkit.hub.curriculum"],
                           preexec_fn=set_user_setuid(entry.pw_name), capture_output=True,
                           cwd="/", timeout=60)
    if probe.returncode:
        raise PermissionError(
            f"student account {entry.pw_name} cannot run {python} with labkit "
            f"({probe.stderr.decode(errors='replace').strip()[-300:]}): put the labkit checkout "
            "rebuild the students' environment: rm -rf it and run `make hub` again")
    _RUNNABLE.add((entry.pw_name, python))


def _apply_warm_options(spawner: Any, options: Any) -> tuple[str | None, str]:
    """The spawner's ``apply_user_options``: :func:`warm_options`, and options it refuses
    are forgotten.

    JupyterHub saves a start's options in its database before applying them and starts later
    servers with them when none are given (``jupyterhub.user.User.spawn``): one refused request
    (``POST /hub/api/users/<name>/server`` with options of the student's own making) then
    refused every later login with the same 400 (the trial). So the saved options are cleared
    before the 400 is raised.

    Raises
    ------
    tornado.web.HTTPError
        400, as :func:`warm_options`.
    """
    from tornado import web

    from labkit.serve.patching import require_version

    try:
        return warm_options(options, spawner.curriculum_dir)
    except web.HTTPError:
        spawner.user_options = {}
        orm = getattr(spawner, "orm_spawner", None)
        if orm is not None:  # User.spawn saves the options there (jupyterhub 6.1)
            require_version("jupyterhub", "6.1", "7", "forgetting refused user options")
            orm.user_options = {}
            spawner.db.commit()
        raise


class LabkitSpawner(ShareState, LocalProcessSpawner):  # type: ignore[misc]
    """LocalProcessSpawner as ``jupyter-<username>`` with limits, curriculum and GPU share.

    The share is kept hub-side too (:class:`labkit.hub.gpushare.ShareState`): the class page
    reads it from the hub, not from the student's server.
    """

    curriculum_dir = Unicode(help="the teacher's notebooks/ folder (read only)").tag(config=True)
    limit_mechanism = Unicode(help="cgroup-v2 | cgroup-v1 | rlimit").tag(config=True)
    mem_limit_mib = Integer(2048).tag(config=True)
    cpu_limit_cores = Float(1.0).tag(config=True)
    nproc_limit = Integer(512).tag(config=True)
    extra_env = Dict().tag(config=True)
    roster_usernames = List(Unicode(), help="the class, in roster order (GPU shares)").tag(
        config=True)
    gpu_policy = Unicode("auto", help="auto | mig | whole | shared").tag(config=True)
    images_dir = Unicode(help="where the students' home images live (labkit.hub.disk)").tag(
        config=True)
    disk_limit_mib = Integer(0, help="each home's image size; 0: homes on the shared disk").tag(
        config=True)
    private_namespace = Bool(False, help="a private mount namespace per server "
                                         "(labkit.hub.isolation)").tag(config=True)
    tmp_limit_mib = Integer(256, help="the private /tmp's size [MiB]").tag(config=True)
    hidepid = Unicode("", help="the private /proc's hidepid option, '' for none").tag(
        config=True)
    hide_cgroups = Bool(True, help="hide classmates' cgroups in the private namespace").tag(
        config=True)
    user_env_dir = Unicode(str(USER_ENV),
                           help="the students' environment (labkit.hub.userenv)").tag(config=True)

    @default("limit_mechanism")
    def _default_mechanism(self) -> str:
        return detect_mechanism()

    @default("cmd")
    def _default_cmd(self) -> list[str]:
        return [str(Path(self.user_env_dir) / "bin" / "jupyterhub-singleuser")]

    @default("popen_kwargs")
    def _default_popen_kwargs(self) -> dict[str, Any]:
        # the server's output comes through a pipe the hub relays at a bounded rate
        return {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT}

    @default("apply_user_options")
    def _default_apply_user_options(self) -> Any:
        # the lesson and page of "수업 준비" are the only user options: checked as the hub takes
        # them (400 in Korean for anything else), instead of JupyterHub's "unhandled
        # user_options" warning
        return _apply_warm_options

    @default("notebook_dir")
    def _default_notebook_dir(self) -> str:
        return f"~/{HOME_FOLDER}"

    @default("default_url")
    def _default_url(self) -> str:
        return "/lab"

    @property
    def system_user(self) -> str:
        """The student's account name."""
        return system_username(self.user.name)

    @property
    def limits(self) -> Limits:
        """The student's limits."""
        return Limits(self.mem_limit_mib, self.cpu_limit_cores, self.nproc_limit)

    def cgroup(self) -> StudentCgroup | None:
        """The student's cgroup, or None under the rlimit mechanism."""
        if self.limit_mechanism not in ("cgroup-v2", "cgroup-v1"):
            return None
        return StudentCgroup(self.system_user, self.limits, self.limit_mechanism)

    def namespace_plan(self) -> isolation.NamespacePlan | None:
        """The student's private mount namespace, or None where the machine refuses one."""
        if not self.private_namespace:
            return None
        return isolation.NamespacePlan(tmp_mib=self.tmp_limit_mib, hidepid=self.hidepid,
                                       hide_cgroups=self.hide_cgroups)

    def student_disk(self) -> disk.StudentDisk | None:
        """The student's home image, or None where homes stay on the shared disk."""
        if self.disk_limit_mib <= 0 or not self.images_dir:
            return None
        return disk.StudentDisk(self.system_user, self.disk_limit_mib, Path(self.images_dir))

    def make_preexec_fn(self, name: str) -> Any:
        """Join the cgroup, set rlimits, enter the private mount namespace (as root), then
        become ``jupyter-<name>``."""
        group = self.cgroup()
        limits = rlimit_preexec(self.limits, self.limit_mechanism,
                                group.procs_files() if group else None)
        namespace = isolation.preexec(self.namespace_plan())
        become = set_user_setuid(system_username(name))
        hub = os.getpid()

        def preexec() -> None:
            limits()
            namespace()
            become()
            lifetime.die_with_parent(signal.SIGKILL, hub)  # after setuid, which clears it

        return preexec

    def warm_lesson(self) -> str | None:
        """Return the lesson this start preheats (:func:`warm_options` of the user options)."""
        return warm_options(self.user_options, self.curriculum_dir)[0]

    def warm_page(self) -> str:
        """Return the page of it this start prepares (:func:`warm_options`)."""
        return warm_options(self.user_options, self.curriculum_dir)[1]

    def user_env(self, env: dict[str, str]) -> dict[str, str]:
        """The student's HOME/USER/SHELL (of ``jupyter-<name>``), labkit's paths and GPU share."""
        entry = pwd.getpwnam(self.system_user)
        env.update(USER=entry.pw_name, HOME=entry.pw_dir, SHELL=entry.pw_shell or "/bin/bash")
        bindir = str(Path(self.user_env_dir) / "bin")
        env["PATH"] = os.pathsep.join([bindir, *[p for p in env.get("PATH", "").split(
            os.pathsep) if p and p != bindir]])
        site = site_packages(Path(self.user_env_dir))
        env["JUPYTER_CONFIG_PATH"] = str(site / "labkit" / "hub" / "jupyter")
        # the voila template, and first the students' kernelspec (labkit.hub.kernel: nothing
        # of a kernel on a loopback TCP port)
        env["JUPYTER_PATH"] = os.pathsep.join([str(site / "labkit" / "hub" / "jupyter"),
                                               str(site / "labkit" / "serve" / "jupyter")])
        env["LABKIT_DATA"] = str(Path(self.user_env_dir) / "share" / "labkit" / "data")
        # the student's copy of the lessons is saved without outputs (labkit.serve.presave)
        env["LABKIT_COURSE_NOTEBOOKS"] = str(Path(entry.pw_dir) / HOME_FOLDER)
        env["VIRTUAL_ENV"] = self.user_env_dir
        # the server's and kernels' runtime files (kernels' Unix sockets: KernelManager
        # transport "ipc", labkit.hub.singleuser_config) in a short 0700 folder of the home:
        # a socket path is at most 107 bytes, and jupyter's default folder with a 24-letter
        # name and a kernel's uuid would pass that
        env["JUPYTER_RUNTIME_DIR"] = str(Path(entry.pw_dir) / RUNTIME_DIR)
        env.setdefault("LABKIT_THEME", "light")
        for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env.setdefault(name, "1")
        # glibc gives each thread that allocates its own malloc arena (up to 8 x cores, each
        # holding freed memory): the server's and kernels' threads need two (mallopt(3))
        env.setdefault("MALLOC_ARENA_MAX", "2")
        env.update({str(k): str(v) for k, v in self.extra_env.items()})
        share = gpu_environment(self.user.name, self.class_roster(), self.gpu_policy)
        self.labkit_gpu_share = share.get(ENV_SHARE, "")
        env.update(share)
        lesson, page = warm_options(self.user_options, self.curriculum_dir)
        if lesson:
            env[ENV_WARM_LESSON] = lesson
            env[ENV_WARM_PAGE] = page
        return env

    async def _copy_curriculum(self, entry: pwd.struct_passwd) -> None:
        if not self.curriculum_dir:
            return
        files = curriculum.read_curriculum(Path(self.curriculum_dir))
        payload = json.dumps({k: base64.b64encode(v).decode() for k, v in files.items()})
        dest = str(Path(entry.pw_dir) / HOME_FOLDER)
        env = {"PATH": os.environ.get("PATH", ""), "HOME": entry.pw_dir}
        proc = await asyncio.create_subprocess_exec(
            str(user_python(Path(self.user_env_dir))), "-m", "labkit.hub.curriculum", dest,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=entry.pw_dir, env=env, preexec_fn=set_user_setuid(entry.pw_name))
        out, err = await proc.communicate(payload.encode())
        if proc.returncode:
            failed = RuntimeError(f"curriculum copy for {entry.pw_name} failed: "
                                  f"{err.decode(errors='replace')[-500:]}")
            # what the spawn page shows the student (JupyterHub reads jupyterhub_message);
            # the English detail above goes to the hub's log only
            failed.jupyterhub_message = t("hub.curriculum.failed")  # type: ignore[attr-defined]
            raise failed
        self.log.info("labkit: curriculum for %s: %s", entry.pw_name, out.decode().strip())

    def class_roster(self) -> list[str]:
        """Return the class's usernames in roster order, read now from the hub's saved roster.

        Read at every spawn (``$LABKIT_HUB_STATE``'s ``roster.json``), so a student imported
        while the hub runs gets their GPU share at their first start (added at the end of the
        roster, they move nobody); without a saved roster, :attr:`roster_usernames`.
        """
        from labkit.hub.state import HubState

        where = os.environ.get("LABKIT_HUB_STATE")
        if where and (Path(where) / "roster.json").exists():
            return [s.username for s in HubState(Path(where)).roster()]
        return list(self.roster_usernames)

    def join_students_group(self) -> None:
        """Put a roster student in the hub group :data:`STUDENTS_GROUP` (once).

        The class page's scopes name the group, not usernames fixed at the hub's start, so a
        student imported while the hub runs appears on it at their first start even where the
        import could not reach the hub (``roster import`` adds them through the hub's API too).
        """
        from jupyterhub import orm

        if self.user.name not in self.class_roster():
            return  # the teacher
        db = self.user.db
        group = orm.Group.find(db, STUDENTS_GROUP)
        if group is None:
            group = orm.Group(name=STUDENTS_GROUP)
            db.add(group)
        if group not in self.user.orm_user.groups:
            self.user.orm_user.groups.append(group)
            db.commit()
            self.log.info("labkit: %s joined the group %s", self.user.name, STUDENTS_GROUP)

    def check_on_roster(self) -> None:
        """Refuse a user who is not the teacher or on the saved roster (read now, at spawn).

        Whatever token they hold: a student removed (or dropped by a new roster) while the hub
        runs never gets a server, an account or a home again. The roster and the teacher are
        the hub state's (``$LABKIT_HUB_STATE``: ``roster.json``, ``settings.json``); without a
        saved roster, :attr:`roster_usernames` and the hub's admins.

        Raises
        ------
        tornado.web.HTTPError
            403, with the Korean message the spawn page shows.
        """
        from tornado import web

        from labkit.hub.state import HubState

        name = self.user.name
        where = os.environ.get("LABKIT_HUB_STATE")
        state = HubState(Path(where)) if where else None
        if state is not None and (state.root / "roster.json").exists():
            allowed = {s.username for s in state.roster()} | {state.settings().teacher}
        else:
            allowed = set(self.roster_usernames) | ({name} if self.user.admin else set())
        if name not in allowed:
            self.log.warning("labkit: refused a server for %s: not on the roster", name)
            raise web.HTTPError(403, t("hub.spawn.not_on_roster", name=name))

    async def start(self) -> Any:
        """Create the account and cgroup, merge the curriculum, then start the server.

        Whatever the student's account still runs is killed first: a server that died on its
        own (a fork bomb in its kernel, the OOM killer) is never stopped through the hub, and
        its orphaned kernels would keep the cgroup at its memory limit, so the new server
        would be killed as it starts and the student locked out.
        """
        phases = _Phases()
        self.check_on_roster()  # before anything of theirs is created again
        self.join_students_group()  # on the class page from now on
        self.warm_lesson()  # a bad user option fails before anything is done
        entry = accounts.ensure_system_user(self.user.name)
        phases.done("account")
        left = await asyncio.to_thread(kill_user_processes, entry.pw_name)
        if left:
            self.log.warning("labkit: killed %d processes left by %s before starting", left,
                             entry.pw_name)
        phases.done("leftovers")
        python = str(user_python(Path(self.user_env_dir)))
        if not self.curriculum_dir:  # else the merge below runs that Python as the student
            await asyncio.to_thread(_check_runnable, entry, python)
        phases.done("python")
        group = self.cgroup()
        if group is not None:
            await asyncio.to_thread(group.create)
        phases.done("cgroup")
        home_disk = self.student_disk()
        if home_disk is not None:
            await asyncio.to_thread(home_disk.ensure)
        phases.done("disk")
        try:
            await self._copy_curriculum(entry)
        except RuntimeError:
            await asyncio.to_thread(_check_runnable, entry, python)  # the clear message if so
            raise
        _RUNNABLE.add((entry.pw_name, python))  # it ran: no separate probe for this account
        phases.done("curriculum")
        where = await super().start()
        phases.done("popen")
        self._relay_output()
        self.log.info("labkit: spawn phases of %s: %s", entry.pw_name, phases)
        return where

    def _relay_output(self) -> None:
        """Copy the server's output pipe into the hub's log, rate-bounded (labkit.hub.serverlog)."""
        out = getattr(self.proc, "stdout", None)
        if out is None:
            return
        fd = os.dup(out.fileno())
        out.close()
        serverlog.OutputRelay.to_hub_stderr(self.system_user, fd).start()

    async def poll(self) -> int | None:
        """JupyterHub's poll, except that a pid kept from an earlier run of the hub counts as
        running only while it is still the student's (after a reboot the pid may be
        another program's: labkit.hub.lifetime)."""
        if self.proc is None and self.pid:
            try:
                uid = pwd.getpwnam(self.system_user).pw_uid
            except KeyError:
                uid = -1
            if not lifetime.pid_is_users(self.pid, uid):
                self.clear_state()
                return 0
        status: int | None = await super().poll()
        return status

    async def stop(self, now: bool = False) -> None:
        """Stop the server, kill what the student left running, remove the cgroup.

        SIGTERM first, not LocalProcessSpawner's SIGINT: jupyter_server stops cleanly on either
        once started, but a server still starting (the hub stopped mid-spawn) prints a
        KeyboardInterrupt traceback on SIGINT and simply exits on SIGTERM.
        """
        if not now and self.pid and await self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGTERM)
            await self.wait_for_death(self.term_timeout)
        await super().stop(now=now)
        await asyncio.to_thread(kill_user_processes, self.system_user)
        group = self.cgroup()
        if group is not None:
            group.remove()


class _Phases:
    """Wall time of each step of a spawn, for the hub's log (``name 0.12 s, ...``)."""

    def __init__(self) -> None:
        self._last = time.perf_counter()
        self._steps: list[tuple[str, float]] = []

    def done(self, name: str) -> None:
        now = time.perf_counter()
        self._steps.append((name, now - self._last))
        self._last = now

    def __str__(self) -> str:
        return ", ".join(f"{name} {seconds:.2f} s" for name, seconds in self._steps)


def kill_user_processes(system_user: str) -> int:
    """SIGKILL every process of ``system_user`` (a stopped server leaves nothing behind).

    Returns
    -------
    int
        How many processes were signalled.
    """
    import psutil

    try:
        uid = pwd.getpwnam(system_user).pw_uid
    except KeyError:
        return 0
    if uid == 0:
        raise ValueError("refusing to kill root's processes")
    killed = 0
    for _ in range(5):
        found = [p for p in psutil.process_iter(["uids"]) if p.info["uids"]
                 and p.info["uids"].real == uid]
        if not found:
            break
        for proc in found:
            try:
                proc.send_signal(signal.SIGKILL)
                killed += 1
            except psutil.Error:
                pass
        psutil.wait_procs(found, timeout=2)
    return killed
