"""The class roster: the CSV a teacher exports from the school's records (username, display name).

Format::

    # optional comment lines
    username,display_name
    kim01,김민준
    lee02,이서연

``username`` is what the student types at login and what names their system account
``jupyter-<username>`` (:func:`system_username`). It follows one rule, :func:`validate_username`,
the stricter of what JupyterHub and ``useradd`` accept: lower case ASCII letters, digits, ``_``
and ``-``, starting with a letter (Debian's ``NAME_REGEX``; JupyterHub lower-cases login names,
so an upper-case name would log in as another), at most :data:`MAX_USERNAME` = 24 characters so
that ``jupyter-<username>`` fits Linux's 32-character limit. ``display_name`` may be Korean.
Files saved by Excel are read too: UTF-8 with a byte-order mark, or CP949 (Excel's "CSV" on a
Korean Windows). This is the one roster parser; the class hub (:mod:`labkit.hub`) reads its
roster here.

References
----------
.. [1] useradd(8): user names "may only be up to 32 characters long"; Debian's adduser
   NAME_REGEX ``^[a-z][-a-z0-9_]*$``.
.. [2] The Littlest JupyterHub, "User accounts": system users are named ``jupyter-<username>``.
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, Protocol

from labkit.data import DataError

__all__ = ["MAX_STUDENTS", "MAX_USERNAME", "RESERVED_USERNAMES", "SYSTEM_PREFIX", "RosterEntry",
           "RosterError", "RosterLike", "RosterProblem", "UsernameError", "parse_roster",
           "read_roster", "system_username", "validate_username"]

#: Most names a roster may hold (a school's class is 20-40; a whole year fits).
MAX_STUDENTS = 500
#: Prefix of every student's system account (TLJH's convention [2]_).
SYSTEM_PREFIX = "jupyter-"
#: Linux user names are at most 32 characters [1]_; 32 - len("jupyter-") = 24.
MAX_USERNAME = 32 - len(SYSTEM_PREFIX)
_USERNAME = re.compile(r"[a-z][a-z0-9_-]*")
_HEADER = ["username", "display_name"]
#: Names no student or teacher may take, whatever the machine: Debian's base-passwd system
#: accounts (/usr/share/base-passwd/passwd.master, 3.6), the usual daemons' and cloud images'
#: accounts, and names people read as "the administrator" or "the hub" (a student called
#: ``admin`` or ``root`` on the class page is a social-engineering tool). The hub also refuses
#: a name the machine already has as a system account (labkit.hub.roster).
RESERVED_USERNAMES = frozenset({
    "root", "daemon", "bin", "sys", "sync", "games", "man", "lp", "mail", "news", "uucp",
    "proxy", "www-data", "backup", "list", "irc", "gnats", "nobody", "nogroup", "systemd-network",
    "systemd-resolve", "systemd-timesync", "systemd-journal", "messagebus", "sshd", "syslog",
    "polkitd", "avahi", "postfix", "postgres", "mysql", "ubuntu", "debian", "admin",
    "administrator", "operator", "sudo", "wheel", "staff", "adm", "shadow", "docker", "guest",
    "jupyter", "jupyterhub", "labkit", "hub", "service", "services", "api", "user", "users",
})
_MAX_BYTES = 1_000_000
_MAX_DISPLAY = 64


class UsernameError(DataError):
    """A username that breaks :func:`validate_username`'s rule.

    Attributes
    ----------
    name : str
        The name as given (cut to 40 characters).
    rule : {"empty", "pattern", "reserved", "system"}
        Which part of the rule it breaks ("system": the machine has a system account of that
        name, labkit.hub.roster).
    """

    def __init__(self, name: str, rule: str, message: str) -> None:
        self.name, self.rule = name[:40], rule
        super().__init__(message)


class RosterProblem(NamedTuple):
    """One bad line of a roster file: where, which rule, the value (for the teacher's message).

    ``rule`` is one of "header", "fields", "empty", "pattern", "reserved", "system", "repeat",
    "display", "too_many" (``value``: the username, the header line, the field count, the first
    line of a repeated name, ...).
    """

    line: int
    rule: str
    value: str
    message: str


class RosterError(DataError):
    """A roster file with bad lines: every one of them (:attr:`problems`), not only the first.

    Attributes
    ----------
    where : str
        The file name.
    problems : list of RosterProblem
        Each bad line, in file order (empty for a whole-file problem: then ``rule`` says it).
    rule : str
        "lines" (see ``problems``), "encoding", "unreadable", "too_big", "no_header", "no_one".
    """

    def __init__(self, where: str, problems: list[RosterProblem], rule: str = "lines",
                 message: str = "") -> None:
        self.where, self.problems, self.rule = where, problems, rule
        super().__init__(message or "\n".join(f"{where}, line {p.line}: {p.message}"
                                              for p in problems))


@dataclass(frozen=True)
class RosterEntry:
    """One student (or teacher) of the roster.

    Attributes
    ----------
    username : str
        Login name (ASCII, see the module docstring).
    display_name : str
        Name shown on pages (Korean allowed; the username when the cell is empty).
    """

    username: str
    display_name: str = ""

    @property
    def system_user(self) -> str:
        """The account's system user name, ``jupyter-<username>``."""
        return system_username(self.username)


def validate_username(name: str) -> str:
    """Return ``name`` if it is a valid roster username (the rule of the module docstring).

    Raises
    ------
    UsernameError
        (a DataError, a ValueError) if it is empty, longer than :data:`MAX_USERNAME`, not lower
        case ASCII letters/digits/``_``/``-``, does not start with a letter, or is one of
        :data:`RESERVED_USERNAMES`.
    """
    if not name:
        raise UsernameError(name, "empty", "username is empty")
    if len(name) > MAX_USERNAME or not _USERNAME.fullmatch(name):
        raise UsernameError(
            name, "pattern", f"username {name[:40]!r} must be lower case ASCII letters, digits, "
            f"'_' or '-', start with a letter, and be at most {MAX_USERNAME} characters")
    if name in RESERVED_USERNAMES:
        raise UsernameError(name, "reserved", f"username {name!r} is a system name: choose "
                                              "another")
    return name


def system_username(username: str) -> str:
    """Return the system account name of a roster username (``jupyter-<username>``).

    Raises
    ------
    DataError
        (a ValueError) if ``username`` is not valid (:func:`validate_username`).
    """
    return SYSTEM_PREFIX + validate_username(username)


class RosterLike(Protocol):
    """Anything with a roster's two fields (a :class:`RosterEntry`, or the hub's own type)."""

    @property
    def username(self) -> str:
        """Login name."""
        ...

    @property
    def display_name(self) -> str:
        """Name shown on pages (may be empty: then the username is shown)."""
        ...


def _decode(raw: bytes, where: str) -> str:
    for encoding in ("utf-8-sig", "cp949"):
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise RosterError(where, [], "encoding",
                      f"{where}: not UTF-8 or CP949 text (save the roster as CSV UTF-8)")


def parse_roster(text: str, where: str = "<roster>",
                 is_system_account: Callable[[str], bool] | None = None) -> list[RosterEntry]:
    """Return the entries of roster CSV ``text``, in file order.

    Parameters
    ----------
    text : str
        The CSV text (``#`` lines and blank lines are skipped; a leading byte-order mark
        too).
    where : str
        The file name used in error messages.
    is_system_account : callable, optional
        Whether the machine already has a system account of that name (the hub passes
        :func:`labkit.hub.roster.is_system_account`); such a name is refused too.

    Raises
    ------
    RosterError
        (a DataError, a ValueError) naming ``where`` and EVERY bad line (:attr:`RosterError.
        problems`): a wrong header, a row with another number of fields, a bad, reserved,
        system or repeated username, a display name over 64 characters; or no students, or more
        than :data:`MAX_STUDENTS`.
    """
    entries: list[RosterEntry] = []
    problems: list[RosterProblem] = []
    seen: dict[str, int] = {}
    header_seen = False
    lines = text.removeprefix("\ufeff").splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        row = [cell.strip() for cell in next(csv.reader(io.StringIO(line)))]
        if not header_seen:
            if [c.lower() for c in row] != _HEADER:
                raise RosterError(where, [RosterProblem(
                    number, "header", line.strip()[:80], "the header must be "
                    f"'username,display_name', got {line.strip()[:80]!r}")])
            header_seen = True
            continue
        problem = _row_problem(number, row, seen, is_system_account)
        if problem is not None:
            problems.append(problem)
            continue
        seen[row[0]] = number
        entries.append(RosterEntry(row[0], row[1] or row[0]))
    if len(entries) > MAX_STUDENTS:
        problems.append(RosterProblem(number, "too_many", str(MAX_STUDENTS),
                                      f"more than {MAX_STUDENTS} names"))
    if problems:
        raise RosterError(where, problems)
    if not header_seen:
        raise RosterError(where, [], "no_header",
                          f"{where}: empty roster (expected the header 'username,display_name')")
    if not entries:
        raise RosterError(where, [], "no_one", f"{where}: the roster lists no one")
    return entries


def _row_problem(number: int, row: list[str], seen: dict[str, int],
                 is_system_account: Callable[[str], bool] | None) -> RosterProblem | None:
    """Return what is wrong with one roster row, or None."""
    if len(row) != 2:
        return RosterProblem(number, "fields", str(len(row)),
                             f"expected 2 fields (username,display_name), got {len(row)}")
    username, display = row
    try:
        validate_username(username)
    except UsernameError as err:
        return RosterProblem(number, err.rule, err.name, str(err))
    if is_system_account is not None and is_system_account(username):
        return RosterProblem(number, "system", username, f"username {username!r} is a system "
                                                         "account of this machine")
    if username in seen:
        return RosterProblem(number, "repeat", f"{username}:{seen[username]}",
                             f"username {username!r} repeats line {seen[username]}")
    if len(display) > _MAX_DISPLAY or any(not ch.isprintable() for ch in display):
        return RosterProblem(number, "display", username, "display name must be at most "
                             f"{_MAX_DISPLAY} printable characters")
    return None


def read_roster(path: str | os.PathLike[str],
                is_system_account: Callable[[str], bool] | None = None) -> list[RosterEntry]:
    """Return the entries of the roster CSV at ``path``, in file order.

    Raises
    ------
    RosterError
        (a DataError, a ValueError) naming the file and every bad line; see
        :func:`parse_roster`. Also for a missing or unreadable file, or one over 1 MB.
    """
    p = Path(path)
    try:
        with p.open("rb") as f:
            raw = f.read(_MAX_BYTES + 1)
    except OSError as err:
        raise RosterError(str(p), [], "unreadable",
                          f"{p}: cannot read the roster ({err.strerror})") from err
    if len(raw) > _MAX_BYTES:
        raise RosterError(str(p), [], "too_big", f"{p}: a roster is at most {_MAX_BYTES:,} bytes")
    return parse_roster(_decode(raw, str(p)), str(p), is_system_account)
