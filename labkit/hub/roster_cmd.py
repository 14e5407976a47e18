"""``python -m labkit.hub roster ...``: the roster's subcommands (import, list, codes, slips,
set-password, reset, remove), and the passwords ``serve`` asks for (:mod:`labkit.hub.__main__`).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from labkit.hub.roster import (
    Student,
    read_roster,
    validate_username,
)
from labkit.hub.state import HubState
from labkit.i18n import t

#: The command's name, printed before its own lines the way a Unix tool names itself (as typed,
#: not translated: the catalog holds only the Korean text after it).
PROG = "labkit hub"


def _said(key: str, /, **values: Any) -> str:
    """Return the catalog line ``key`` as this command prints it: ``"labkit hub: …"``."""
    return f"{PROG}: {t(key, **values)}"


def _import_roster(state: HubState, path: str) -> list[Student]:
    """Save the roster at ``path``; give each new student a first-login code (and say so)."""
    students = read_roster(path)
    before = {s.username for s in state.roster()}
    state.save_roster(students)
    teacher = state.settings().teacher
    given = state.accounts.hand_out(s.username for s in students if s.username != teacher)
    if given:
        print(_said("hub.cli.codes.given", n=len(given)), flush=True)
    _join_students(state, [s.username for s in students if s.username != teacher])
    dropped = sorted(before - {s.username for s in students} - {teacher})
    for name in dropped:  # off the roster: their hub user, server and tokens go now
        _end_sessions(state, name, remove=True, quiet=True)
    if dropped:
        print(_said("hub.cli.roster.dropped", n=len(dropped), names=", ".join(dropped)),
              flush=True)
    return students


def _join_students(state: HubState, names: list[str]) -> None:
    """On a running hub: the roster's students in its students' group (the class page)."""
    from labkit.hub.sessions import HubUnreachable, join_students

    try:
        join_students(state, names)
    except HubUnreachable as err:  # their first start puts them in it (labkit.hub.spawner)
        print(t("hub.cli.roster.group_failed", reason=err), flush=True)


def _read_password(name: str, stream: Any = None) -> str:
    """Return a new password for ``name``: asked twice at a terminal, else standard input's
    first line.

    Raises
    ------
    labkit.hub.passwords.PasswordRejected
        Too short, too long, or typed differently twice.
    ValueError
        If standard input holds none.
    """
    from labkit.hub.passwords import MIN_PASSWORD, check_new_password

    stream = stream or sys.stdin
    if stream.isatty():
        import getpass

        first = getpass.getpass(t("hub.cli.password.prompt", name=name, n=MIN_PASSWORD))
        return check_new_password(first, getpass.getpass(t("hub.cli.password.again")))
    line = stream.readline().rstrip("\r\n")
    if not line:
        raise ValueError(t("hub.cli.password.empty"))
    return check_new_password(line)


def _set_password(state: HubState, name: str, stream: Any = None) -> None:
    """Set ``name``'s password from the terminal or standard input; end their sessions."""
    from labkit.hub.passwords import MAX_PASSWORD_BYTES, MIN_PASSWORD, PasswordRejected

    try:
        password = _read_password(name, stream)
    except PasswordRejected as err:
        limits = {"short": {"n": MIN_PASSWORD}, "long": {"max": MAX_PASSWORD_BYTES}}
        reason = t(f"hub.cli.password.{err.rule}", **limits.get(err.rule, {}))
        raise SystemExit(_said("hub.cli.password.rejected", name=name, reason=reason)) from None
    except ValueError as err:
        raise SystemExit(_said("hub.cli.password.rejected", name=name, reason=err)) from None
    state.accounts.set_password(name, password)
    print(t("hub.cli.password.done", name=name), flush=True)
    _end_sessions(state, name)


def _end_sessions(state: HubState, name: str, *, remove: bool = False,
                 quiet: bool = False) -> None:
    from labkit.hub.sessions import HubUnreachable, end_sessions

    try:
        how = end_sessions(state, name, remove=remove)
    except HubUnreachable as err:
        print(t("hub.cli.sessions.failed", name=name, reason=err), flush=True)
        return
    if how != "none" and not quiet:
        print(t("hub.cli.sessions.ended", name=name), flush=True)


def _teacher_password(state: HubState, teacher: str) -> None:
    """Make sure the teacher has a password before the hub accepts any login (ask for it)."""
    if state.accounts.has_password(teacher):
        return
    print(_said("hub.cli.serve.teacher_password", name=teacher), flush=True)
    try:
        _set_password(state, teacher)
    except SystemExit as err:
        print(err, flush=True)
    if not state.accounts.has_password(teacher):
        raise SystemExit(_said("hub.cli.serve.no_teacher_password", name=teacher))


def _password_set(state: HubState) -> set[str]:
    return state.accounts.with_password()


def _role(username: str, teacher: str) -> str:
    return t("hub.cli.role.teacher" if username == teacher else "hub.cli.role.student")


def _password_word(done: bool) -> str:
    return t("hub.cli.password.set" if done else "hub.cli.password.pending")


def cmd_roster(args: argparse.Namespace, state: HubState) -> None:
    """roster import | list | reset | remove (Korean, English terms in parentheses)."""
    teacher = state.settings().teacher
    if args.action == "remove":
        from labkit.hub.removal import remove_students

        raise SystemExit(remove_students(state, args.names, every=args.all, stop=args.stop,
                                         yes=args.yes, out=print))
    if args.action == "import":
        students = _import_roster(state, args.names[0])
        print(t("hub.cli.roster.imported", path=args.names[0], n=len(students)))
    elif args.action == "list":
        have = _password_set(state)
        roster = state.roster()
        if not roster:
            print(t("hub.cli.roster.empty"))
            return
        people = roster + ([Student(teacher)] if teacher and teacher not in
                           {s.username for s in roster} else [])
        print(t("hub.cli.roster.header"))
        for s in people:
            print(f"{s.username}\t{s.display_name or s.username}\t{s.system_user}\t"
                  f"{_role(s.username, teacher)}\t{_password_word(s.username in have)}")
    elif args.action == "codes":
        _print_codes(state, teacher, as_csv=args.csv)
    elif args.action == "slips":
        _write_slips(state, args.names[0], args.url)
    elif args.action == "set-password":
        name = _listed(state, args.names[0], teacher)
        _set_password(state, name)
    elif args.action == "reset":
        name = _listed(state, args.names[0], teacher)
        if name == teacher:
            raise SystemExit(t("hub.cli.reset.teacher", name=name))
        code = state.accounts.reset(name)
        _end_sessions(state, name, quiet=True)
        print(t("hub.cli.reset.new_code", name=name, code=code))


def _listed(state: HubState, name: str, teacher: str) -> str:
    """Return ``name`` if it is the teacher or a roster student (else exit, in Korean)."""
    validate_username(name)
    if name not in {s.username for s in state.roster()} | {teacher}:
        raise SystemExit(t("hub.cli.roster.not_listed", name=name))
    return name


def _print_codes(state: HubState, teacher: str, *, as_csv: bool) -> None:
    codes = state.accounts.codes()
    rows = [(s.display_name or s.username, s.username, codes[s.username])
            for s in state.roster() if s.username in codes and s.username != teacher]
    if not rows:
        print(t("hub.cli.codes.none"))
        return
    if as_csv:
        import csv

        # UTF-8 with a BOM, as results.csv: a Korean Excel opens the names unbroken (trial)
        sys.stdout.write("\ufeff")
        out = csv.writer(sys.stdout, lineterminator="\n")
        out.writerow([t("hub.slips.name"), t("hub.slips.username"), t("hub.slips.code")])
        out.writerows(rows)
        return
    print(t("hub.cli.codes.header"))
    for row in rows:
        print("\t".join(row))


def _write_slips(state: HubState, path: str, url: str | None) -> None:
    """Write the A4 slips page (0600; given to the user who ran sudo, to open it)."""
    from labkit.hub.slips import slips_html

    settings = state.settings()
    if url is None:
        from labkit.hub.tls import class_url

        url = class_url(settings.host, int(settings.port),
                        bool(settings.extra.get("ssl_cert")))
    codes = {k: v for k, v in state.accounts.codes().items() if k != settings.teacher}
    page = slips_html(state.roster(), codes, url)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(page)
    owner = os.environ.get("SUDO_UID"), os.environ.get("SUDO_GID")
    if os.geteuid() == 0 and owner[0] and owner[1]:
        os.chown(path, int(owner[0]), int(owner[1]))
    print(t("hub.cli.slips.written", path=path,
            n=sum(1 for s in state.roster() if s.username in codes)))
