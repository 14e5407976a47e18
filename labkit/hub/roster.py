"""The class roster: who may log in to the class hub (pure: text in, students out).

A roster is a CSV file with a header row ``username,display_name`` (UTF-8, with or without the
byte-order mark Excel writes), one student a row::

    username,display_name
    minji,김민지
    jisoo,이지수

Usernames are what a student types at the login page and what names their system account
(``jupyter-<username>``, the convention of The Littlest JupyterHub, https://tljh.jupyter.org):
lowercase ASCII letters, digits, ``-`` and ``_``, starting with a letter, at most
:data:`MAX_USERNAME` characters so the system name fits Linux's 32-character limit
(``useradd(8)``). Display names may be Korean.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

__all__ = ["MAX_USERNAME", "SYSTEM_PREFIX", "Student", "parse_roster", "render_roster",
           "system_username", "validate_username"]

#: Prefix of every student's system account (TLJH's convention).
SYSTEM_PREFIX = "jupyter-"
#: Linux user names are at most 32 characters (useradd(8)); 32 - len("jupyter-").
MAX_USERNAME = 32 - len(SYSTEM_PREFIX)
_USERNAME = re.compile(r"[a-z][a-z0-9_-]*")
_HEADER = ("username", "display_name")


@dataclass(frozen=True)
class Student:
    """One roster row.

    Attributes
    ----------
    username : str
        Login name (ASCII, see the module docstring).
    display_name : str
        Name shown to the teacher (may be Korean; empty means the username).
    """

    username: str
    display_name: str = ""

    @property
    def system_user(self) -> str:
        """The student's system account name, ``jupyter-<username>``."""
        return system_username(self.username)


def validate_username(name: str) -> str:
    """Return ``name`` if it is a valid roster username.

    Raises
    ------
    ValueError
        If it is empty, too long, not lowercase ASCII letters/digits/``-``/``_``, or does not
        start with a letter.
    """
    if not name:
        raise ValueError("username is empty")
    if len(name) > MAX_USERNAME:
        raise ValueError(f"username {name!r} is longer than {MAX_USERNAME} characters")
    if not _USERNAME.fullmatch(name):
        raise ValueError(f"username {name!r} must be lowercase ASCII letters, digits, '-' or '_',"
                         " starting with a letter")
    return name


def system_username(username: str) -> str:
    """Return the system account name of a roster username (``jupyter-<username>``).

    Raises
    ------
    ValueError
        If ``username`` is not valid (see :func:`validate_username`).
    """
    return SYSTEM_PREFIX + validate_username(username)


def parse_roster(text: str, source: str = "roster") -> list[Student]:
    """Parse roster CSV text into students, in file order.

    Parameters
    ----------
    text : str
        The CSV text (a leading byte-order mark is ignored).
    source : str
        Name of the file, for error messages.

    Returns
    -------
    list of Student
        At least one student.

    Raises
    ------
    ValueError
        If the header is not ``username,display_name``, a row has a bad username (the message
        names the file and row), a username repeats, or there is no student.
    """
    rows = list(csv.reader(io.StringIO(text.lstrip("\ufeff"))))
    rows = [r for r in rows if any(cell.strip() for cell in r)]
    if not rows:
        raise ValueError(f"{source}: empty roster (expected a header 'username,display_name')")
    header = tuple(cell.strip().lower() for cell in rows[0])
    if header[:1] != _HEADER[:1] or not set(header) <= set(_HEADER):
        raise ValueError(f"{source}: the first row must be 'username,display_name', "
                         f"got {','.join(rows[0])!r}")
    students: list[Student] = []
    seen: dict[str, int] = {}
    for number, row in enumerate(rows[1:], start=2):
        cells = dict(zip(header, (cell.strip() for cell in row), strict=False))
        if len(row) > len(header):
            raise ValueError(f"{source}, row {number}: {len(row)} fields, expected "
                             f"{len(header)} (a comma in a name? quote it)")
        name = cells.get("username", "")
        try:
            validate_username(name)
        except ValueError as err:
            raise ValueError(f"{source}, row {number}: {err}") from None
        if name in seen:
            raise ValueError(f"{source}, row {number}: username {name!r} repeats row "
                             f"{seen[name]}")
        seen[name] = number
        students.append(Student(name, cells.get("display_name", "")))
    if not students:
        raise ValueError(f"{source}: no student rows under the header")
    return students


def render_roster(students: list[Student]) -> str:
    """Return roster CSV text for ``students`` (the inverse of :func:`parse_roster`)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(_HEADER)
    for student in students:
        writer.writerow((student.username, student.display_name))
    return out.getvalue()
