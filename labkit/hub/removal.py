"""``python -m labkit.hub roster remove``: take students off the class hub for good.

For each student named (or every student, ``--all``; never the teacher) it deletes, as root,
in this order:

- the roster row, first: from then on the hub refuses their login
  (:class:`labkit.hub.auth.RosterAuthenticator` reads the saved roster at each login) and
  their spawn (:class:`labkit.hub.spawner.LabkitSpawner` reads it at each start), whatever
  token they still hold;
- the hub's user and everything it holds (server, cookie, API and OAuth tokens;
  :func:`labkit.hub.sessions.end_sessions`): through the running hub's REST API, which stops
  their server, or in the stopped hub's database;
- the system account ``jupyter-<name>`` and its home (``userdel --remove``; the home image is
  unmounted first, :func:`labkit.hub.accounts.remove_system_user`);
- the home image ``<state>/homes/jupyter-<name>.img`` (:class:`labkit.hub.disk.StudentDisk`),
  the student's cgroup, their password and first-login code.

It refuses while a student's processes run (their server, a kernel) unless ``--stop``, which
kills them first, and does nothing without ``--yes`` but say what it would delete.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from labkit.hub.roster import Student, problem_text, system_username, validate_username
from labkit.hub.state import HubState
from labkit.i18n import t

__all__ = ["remove_students", "running_processes"]


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


def _remove_one(state: HubState, student: Student, mechanism: str) -> None:
    from labkit.hub.accounts import remove_system_user
    from labkit.hub.disk import StudentDisk
    from labkit.hub.limits import Limits, StudentCgroup
    from labkit.hub.spawner import kill_user_processes

    user = system_username(student.username)
    kill_user_processes(user)
    remove_system_user(student.username)
    StudentDisk(user, 16, state.images_dir).image.unlink(missing_ok=True)
    if mechanism.startswith("cgroup"):
        StudentCgroup(user, Limits(), mechanism).remove()
    state.accounts.forget([student.username])


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
    from labkit.hub.sessions import HubUnreachable, end_sessions

    try:
        require_root()
        targets = _targets(state, names, every)
    except NeedRootError as err:
        out(str(err))
        return 2
    except ValueError as err:
        out(t("hub.cli.remove.bad", reason=problem_text(err)))
        return 2
    listed = ", ".join(s.username for s in targets)
    refused = [s.username for s in targets if not stop and running_processes(s.username)]
    if not yes:  # the dry run says what would go, running servers or not (the trial)
        out(t("hub.cli.remove.confirm", names=listed, n=len(targets)))
    if refused:
        out(t("hub.cli.remove.running", names=", ".join(refused)))
    if refused or not yes:
        return 1
    gone = {s.username for s in targets}
    state.save_roster([s for s in state.roster() if s.username not in gone])
    ended, later = 0, False
    for name in sorted(gone):
        try:
            ended += end_sessions(state, name, remove=True) != "none"
        except HubUnreachable:
            later = True  # the running hub deletes them at its next start
    mechanism = detect_mechanism()
    for student in targets:
        _remove_one(state, student, mechanism)
        out(t("hub.cli.remove.done", name=student.username))
    out(t("hub.cli.remove.db_later") if later else t("hub.cli.remove.db_now", n=ended))
    return 0
