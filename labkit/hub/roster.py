"""The class roster as the hub uses it: :mod:`labkit.data.roster` (the one parser and rule).

The hub's names for the reader's: a :class:`Student` is a :class:`labkit.data.roster.RosterEntry`
(``username``, ``display_name``, ``system_user``); :func:`validate_username` and
:func:`system_username` (``jupyter-<username>``) are the reader's one username rule. The hub
adds the machine's own names: :func:`read_roster` also refuses a username that is a system
account here (:func:`is_system_account`), and :func:`problem_text` says what is wrong in the
teacher's language, every bad line of the file at once.
"""

from __future__ import annotations

import os
import pwd

from labkit.data.roster import (
    MAX_USERNAME,
    SYSTEM_PREFIX,
    RosterEntry,
    RosterError,
    UsernameError,
    system_username,
    validate_username,
)
from labkit.data.roster import read_roster as _read_roster
from labkit.i18n import t

__all__ = ["MAX_USERNAME", "STUDENTS_GROUP", "SYSTEM_PREFIX", "SYS_UID_MAX", "Student",
           "check_username",
           "is_system_account", "problem_text", "read_roster", "system_username",
           "validate_username"]

#: The hub group of the class's students: the class page's scopes name it
#: (``read:servers!group=students``), and a student joins it at import and at their first start.
STUDENTS_GROUP = "students"

#: One roster row (the hub's name for :class:`labkit.data.roster.RosterEntry`).
Student = RosterEntry
#: The highest uid of a system account (Debian's login.defs ``SYS_UID_MAX``; ``nobody`` is
#: 65534, outside the users' 1000-59999).
SYS_UID_MAX = 999


def is_system_account(name: str) -> bool:
    """Whether this machine has a system account ``name`` (uid <= 999, or ``nobody``'s 65534).

    A person's own login (uid 1000 and up) is not one: a teacher may use their usual name.
    """
    try:
        uid = pwd.getpwnam(name).pw_uid
    except KeyError:
        return False
    return uid <= SYS_UID_MAX or uid == 65534


def check_username(name: str) -> str:
    """Return ``name`` if it may be a hub user here: the roster rule and not a system account.

    Raises
    ------
    UsernameError
        (a ValueError) breaking :func:`validate_username`, or rule "system".
    """
    validate_username(name)
    if is_system_account(name):
        raise UsernameError(name, "system", f"username {name!r} is a system account of this "
                                            "machine")
    return name


def read_roster(path: str | os.PathLike[str]) -> list[Student]:
    """Return the roster CSV at ``path`` (:func:`labkit.data.roster.read_roster`), refusing
    this machine's system account names too.

    Raises
    ------
    RosterError
        Naming every bad line (:func:`problem_text` says it in Korean).
    """
    return _read_roster(path, is_system_account=is_system_account)


def _problem(rule: str, name: str, value: str = "", first: str = "") -> str:
    """One bad name or line in Korean: each rule's text takes its own values."""
    by_rule: dict[str, dict[str, object]] = {
        "header": {"value": value}, "fields": {"value": value}, "empty": {},
        "pattern": {"name": name, "max": MAX_USERNAME}, "repeat": {"name": name, "first": first},
        "too_many": {"value": value}}
    values = by_rule.get(rule, {"name": name})
    return t(f"hub.roster.error.{rule}", **values)


def problem_text(err: ValueError) -> str:
    """Return a roster or username error as the teacher reads it (Korean, every bad line).

    Any other ValueError gives its own message.
    """
    if isinstance(err, UsernameError):
        return _problem(err.rule, err.name)
    if not isinstance(err, RosterError):
        return str(err)
    if not err.problems:
        return t(f"hub.roster.file.{err.rule}", path=err.where)
    lines = [t("hub.roster.file.lines", path=err.where, n=len(err.problems))]
    for p in err.problems:
        name, _, first = p.value.partition(":")
        lines.append("  " + t("hub.roster.line", line=p.line) + " "
                     + _problem(p.rule, name, p.value, first))
    return "\n".join(lines)
