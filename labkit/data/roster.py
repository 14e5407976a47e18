"""The class roster: the CSV a teacher exports from the school's records (username, display name).

Format::

    # optional comment lines
    username,display_name
    kim01,김민준
    lee02,이서연

``username`` is what the student types at login: ASCII, lower case, starting with a letter,
at most 24 characters (letters, digits, ``_``, ``-``), so that the system user
``jupyter-<username>`` fits Linux's 32-character limit. ``display_name`` may be Korean. Files
saved by Excel are read too: UTF-8 with a byte-order mark, or CP949 (Excel's "CSV" on a Korean
Windows).

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

__all__ = ["MAX_STUDENTS", "RosterEntry", "RosterLike", "parse_roster", "read_roster"]

#: Most names a roster may hold (a school's class is 20-40; a whole year fits).
MAX_STUDENTS = 500
_USERNAME = re.compile(r"^[a-z][a-z0-9_-]{0,23}$")
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
    display_name: str


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
        The CSV text (``#`` lines and blank lines are skipped).
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
    lines = text.splitlines()
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
        if not _USERNAME.match(username):
            raise DataError(f"{where}, line {number}: username {username[:40]!r} must be lower"
                            " case ASCII letters, digits, '_' or '-', start with a letter, and "
                            "be at most 24 characters")
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
