"""``python -m labkit.hub roster remove``: take students off the class hub for good.

For each student named (or every student, ``--all``; never the teacher) it deletes, as root:

- the system account ``jupyter-<name>`` and its home (``userdel --remove``; the home image is
  unmounted first, :func:`labkit.hub.accounts.remove_system_user`);
- the home image ``<state>/homes/jupyter-<name>.img`` (:class:`labkit.hub.disk.StudentDisk`) and
  the student's cgroup;
- the password (first-use store), and the roster row, so a running hub refuses the next login
  at once (:class:`labkit.hub.auth.RosterAuthenticator` reads the saved roster at each login);
- the hub's database user (servers, tokens): now when the hub is stopped (``jupyterhub.orm``),
  else by the hub itself at its next start (``Authenticator.delete_invalid_users``), so a
  running hub's memory never disagrees with its database.

It refuses while a student's processes run (their server, a kernel) unless ``--stop``, which
kills them first, and does nothing without ``--yes`` but say what it would delete.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from labkit.hub.roster import Student, system_username, validate_username
from labkit.hub.state import HubState
from labkit.i18n import t

__all__ = ["hub_is_running", "remove_students", "running_processes"]


def running_processes(username: str) -> int:
    """Return how many processes the student's system account runs now."""
    import pwd

    import psutil

    try:
        uid = pwd.getpwnam(system_username(username)).pw_uid
    except KeyError:
        return 0
    count = 0
    for proc in psutil.process_iter(["uids"]):
        uids = proc.info.get("uids")
        if uids is not None and uids.real == uid:
            count += 1
    return count


def hub_is_running(state: HubState) -> bool:
    """Whether this state's hub answers on its public port (``/hub/health``)."""
    from labkit.hub.tls import hub_answers

    settings = state.settings()
    return hub_answers(int(settings.port), settings.extra.get("ssl_cert"))


def _targets(state: HubState, names: Sequence[str], every: bool) -> list[Student]:
    """Return the roster rows to remove (validated; never the teacher).

    Raises
    ------
    ValueError
        Naming nobody, the teacher, or someone not on the roster.
    """
    teacher = state.settings().teacher
    roster = {s.username: s for s in state.roster()}
    if every == bool(names):
        raise ValueError(t("hub.cli.remove.which"))
    wanted = [n for n in roster if n != teacher] if every else [
        validate_username(n) for n in names]
    for name in wanted:
        if name == teacher:
            raise ValueError(t("hub.cli.remove.teacher", name=name))
        if name not in roster:
            raise ValueError(t("hub.cli.roster.not_listed", name=name))
    return [roster[n] for n in dict.fromkeys(wanted)]


def _delete_hub_users(state: HubState, names: Sequence[str]) -> int:
    """Delete the users from the stopped hub's database; return how many were there."""
    from jupyterhub import orm

    session = orm.new_session_factory(state.db_url)()
    try:
        found = [u for u in (orm.User.find(session, n) for n in names) if u is not None]
        for user in found:
            session.delete(user)
        session.commit()
    finally:
        session.close()
    return len(found)


def _remove_one(state: HubState, student: Student, mechanism: str) -> None:
    from labkit.hub.accounts import remove_system_user
    from labkit.hub.auth import reset_password
    from labkit.hub.disk import StudentDisk
    from labkit.hub.limits import Limits, StudentCgroup
    from labkit.hub.spawner import kill_user_processes

    user = system_username(student.username)
    kill_user_processes(user)
    remove_system_user(student.username)
    StudentDisk(user, 16, state.images_dir).image.unlink(missing_ok=True)
    if mechanism.startswith("cgroup"):
        StudentCgroup(user, Limits(), mechanism).remove()
    reset_password(state.passwords_file, student.username)


def remove_students(state: HubState, names: Sequence[str], *, every: bool = False,
                    stop: bool = False, yes: bool = False,
                    out: Callable[[str], object] = print) -> int:
    """Remove students from the hub (see the module docstring); return the exit status.

    Parameters
    ----------
    state : HubState
    names : sequence of str
        Roster usernames (empty with ``every``).
    every : bool
        Every student of the roster (not the teacher).
    stop : bool
        Kill a student's running processes first (else a running student is refused).
    yes : bool
        Really delete (else only say what would go).
    out : callable
        Where the Korean lines go.

    Returns
    -------
    int
        0 when removed; 1 when refused (running servers) or not confirmed; 2 on a bad name.
    """
    from labkit.hub.accounts import NeedRootError, require_root
    from labkit.hub.limits import detect_mechanism

    try:
        require_root()
        targets = _targets(state, names, every)
    except NeedRootError as err:
        out(str(err))
        return 2
    except ValueError as err:
        out(t("hub.cli.remove.bad", reason=str(err)))
        return 2
    listed = ", ".join(s.username for s in targets)
    running = [s.username for s in targets if running_processes(s.username)]
    if running and not stop:
        out(t("hub.cli.remove.running", names=", ".join(running)))
        return 1
    if not yes:
        out(t("hub.cli.remove.confirm", names=listed, n=len(targets)))
        return 1
    mechanism = detect_mechanism()
    for student in targets:
        _remove_one(state, student, mechanism)
        out(t("hub.cli.remove.done", name=student.username))
    gone = {s.username for s in targets}
    state.save_roster([s for s in state.roster() if s.username not in gone])
    if hub_is_running(state):
        out(t("hub.cli.remove.db_later"))
    else:
        _delete_hub_users(state, sorted(gone))
        out(t("hub.cli.remove.db_now", n=len(gone)))
    return 0
