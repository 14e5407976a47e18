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
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from labkit.data import DataError

__all__ = ["MAX_STUDENTS", "MAX_USERNAME", "SYSTEM_PREFIX", "RosterEntry", "RosterLike",
           "parse_roster", "read_roster", "system_username", "validate_username"]

#: Most names a roster may hold (a school's class is 20-40; a whole year fits).
MAX_STUDENTS = 500
#: Prefix of every student's system account (TLJH's convention [2]_).
SYSTEM_PREFIX = "jupyter-"
#: Linux user names are at most 32 characters [1]_; 32 - len("jupyter-") = 24.
MAX_USERNAME = 32 - len(SYSTEM_PREFIX)
_USERNAME = re.compile(r"[a-z][a-z0-9_-]*")
_HEADER = ["username", "display_name"]
_MAX_BYTES = 1_000_000
_MAX_DISPLAY = 64


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
    DataError
        (a ValueError) if it is empty, longer than :data:`MAX_USERNAME`, not lower case ASCII
        letters/digits/``_``/``-``, or does not start with a letter.
    """
    if not name:
        raise DataError("username is empty")
    if len(name) > MAX_USERNAME or not _USERNAME.fullmatch(name):
        raise DataError(f"username {name[:40]!r} must be lower case ASCII letters, digits, '_' "
                        f"or '-', start with a letter, and be at most {MAX_USERNAME} characters")
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
    raise DataError(f"{where}: not UTF-8 or CP949 text (save the roster as CSV UTF-8)")


def parse_roster(text: str, where: str = "<roster>") -> list[RosterEntry]:
    """Return the entries of roster CSV ``text``, in file order.

    Parameters
    ----------
    text : str
        The CSV text (``#`` lines and blank lines are skipped; a leading byte-order mark
        too).
    where : str
        The file name used in error messages.

    Raises
    ------
    DataError
        (a ValueError) naming ``where`` and the line: a wrong header, a row with another number
        of fields, a bad or repeated username, a display name over 64 characters, no students,
        or more than :data:`MAX_STUDENTS`.
    """
    entries: list[RosterEntry] = []
    seen: dict[str, int] = {}
    header_seen = False
    lines = text.removeprefix("\ufeff").splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        row = [cell.strip() for cell in next(csv.reader(io.StringIO(line)))]
        if not header_seen:
            if [c.lower() for c in row] != _HEADER:
                raise DataError(f"{where}, line {number}: the header must be "
                                f"'username,display_name', got {line.strip()[:80]!r}")
            header_seen = True
            continue
        if len(row) != 2:
            raise DataError(f"{where}, line {number}: expected 2 fields (username,display_name),"
                            f" got {len(row)}")
        username, display = row
        try:
            validate_username(username)
        except DataError as err:
            raise DataError(f"{where}, line {number}: {err}") from None
        if username in seen:
            raise DataError(f"{where}, line {number}: username {username!r} repeats line "
                            f"{seen[username]}")
        if len(display) > _MAX_DISPLAY or any(not ch.isprintable() for ch in display):
            raise DataError(f"{where}, line {number}: display name must be at most "
                            f"{_MAX_DISPLAY} printable characters")
        seen[username] = number
        entries.append(RosterEntry(username, display or username))
        if len(entries) > MAX_STUDENTS:
            raise DataError(f"{where}, line {number}: more than {MAX_STUDENTS} names")
    if not header_seen:
        raise DataError(f"{where}: empty roster (expected the header 'username,display_name')")
    if not entries:
        raise DataError(f"{where}: the roster lists no one")
    return entries


def read_roster(path: str | os.PathLike[str]) -> list[RosterEntry]:
    """Return the entries of the roster CSV at ``path``, in file order.

    Raises
    ------
    DataError
        (a ValueError) naming the file and line; see :func:`parse_roster`. Also for a missing
        or unreadable file, or one over 1 MB.
    """
    p = Path(path)
    try:
        with p.open("rb") as f:
            raw = f.read(_MAX_BYTES + 1)
    except OSError as err:
        raise DataError(f"{p}: cannot read the roster ({err.strerror})") from err
    if len(raw) > _MAX_BYTES:
        raise DataError(f"{p}: a roster is at most {_MAX_BYTES:,} bytes")
    return parse_roster(_decode(raw, str(p)), str(p))
