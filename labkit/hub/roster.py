"""The class roster as the hub uses it: :mod:`labkit.data.roster` (the one parser and rule).

The hub's names for the reader's: a :class:`Student` is a :class:`labkit.data.roster.RosterEntry`
(``username``, ``display_name``, ``system_user``); :func:`validate_username` and
:func:`system_username` (``jupyter-<username>``) are the reader's one username rule.
"""

from __future__ import annotations

from labkit.data.roster import (
    MAX_USERNAME,
    SYSTEM_PREFIX,
    RosterEntry,
    read_roster,
    system_username,
    validate_username,
)

__all__ = ["MAX_USERNAME", "SYSTEM_PREFIX", "Student", "read_roster", "system_username",
           "validate_username"]

#: One roster row (the hub's name for :class:`labkit.data.roster.RosterEntry`).
Student = RosterEntry
