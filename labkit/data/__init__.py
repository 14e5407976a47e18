"""Load the files in ``data/`` and validate them: the only place in labkit that reads files.

``labkit.data.<lesson>`` modules hold each file family's schema and typed loaders; the generic
loaders, the file conventions (``source`` and ``as_of`` on every row or file) and the
validation rules are described in :mod:`labkit.data.loaders`. Every problem raises
:class:`DataError` (a ``ValueError``) naming the file and, where there is one, the line.

The loaders live in :mod:`labkit.data.loaders` and are re-exported here on first use (PEP 562
``__getattr__``; :class:`DataError` is defined here), so that importing one light submodule
(``labkit.data.progress``, ``labkit.data.roster``: what every student's single-user server and
the hub load) does not import pandas, pydantic and PyYAML.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from labkit.data.loaders import (
        Column,
        data_dir,
        get_field,
        load_csv,
        load_document,
        load_json,
        load_yaml,
        parse_csv,
        parse_iso_date,
        validate,
    )

__all__ = ["Column", "DataError", "data_dir", "get_field", "load_csv", "load_document", "load_json",
           "load_yaml", "parse_csv", "parse_iso_date", "validate"]


class DataError(ValueError):
    """A data file that does not match its schema; the message names the file and line."""


def __getattr__(name: str) -> Any:
    if name in __all__:
        value = getattr(importlib.import_module("labkit.data.loaders"), name)
        globals()[name] = value  # later lookups skip this function
        return value
    raise AttributeError(f"module 'labkit.data' has no attribute {name!r}")
