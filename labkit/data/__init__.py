"""Load the files in ``data/`` and validate them: the only place in labkit that reads files.

This package holds the generic loaders; ``labkit.data.<lesson>`` modules hold each lesson's
schemas and typed loaders built on them.

Conventions (see README, "Data files"):

- CSV: optional ``# key: value`` lines at the top (``title``, ``source``, ``as_of``, ``license``,
  ...), then a header row of snake_case columns with unit suffixes, then rows. Every row must have
  a ``source`` and an ``as_of``: either as columns or, for the whole file, in the ``#`` header.
  The ``#`` lines are stripped here, not by pandas ``comment='#'`` (which would also cut a ``#``
  inside a quoted field).
- YAML / JSON: a mapping with top-level ``source`` and ``as_of`` (or a ``_meta`` mapping that
  holds them).

Every problem raises :class:`DataError` (a ``ValueError``) naming the file and, where there is
one, the line.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pandas as pd
import yaml

__all__ = [
    "Column",
    "DataError",
    "data_dir",
    "get_field",
    "load_csv",
    "load_json",
    "load_yaml",
    "parse_csv",
]

Kind = Literal["str", "float", "int", "bool", "date"]


class DataError(ValueError):
    """A data file that does not match its schema; the message names the file and line."""


def data_dir() -> Path:
    """Return the data directory: ``$LABKIT_DATA`` if set, else ``data/`` beside the package."""
    env = os.environ.get("LABKIT_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "data"


def _resolve(path: str | os.PathLike[str]) -> Path:
    p = Path(path)
    return p if p.is_absolute() else data_dir() / p


@dataclass(frozen=True)
class Column:
    """One CSV column of a schema.

    Parameters
    ----------
    name : str
        Column name as in the header row.
    kind : {"str", "float", "int", "bool", "date"}, default "str"
        How cells are parsed; ``date`` is ISO 8601 (``2026-11-30``).
    nullable : bool, default False
        Whether empty cells are allowed (they become NaN / None).
    choices : tuple of str, optional
        The allowed values of a ``str`` column.
    minimum : float, optional
        The smallest allowed value of a numeric column.
    """

    name: str
    kind: Kind = "str"
    nullable: bool = False
    choices: tuple[str, ...] | None = None
    minimum: float | None = None


_META_COLUMNS = (Column("source"), Column("as_of", "date"))


def _parse_cell(col: Column, raw: str, where: str) -> Any:
    text = raw.strip()
    if text == "":
        if col.nullable:
            return math.nan if col.kind in ("float", "int") else None
        raise DataError(f"{where}: column {col.name!r} is empty")
    try:
        if col.kind == "float":
            value: Any = float(text)
            if not math.isfinite(value):
                raise ValueError(text)
        elif col.kind == "int":
            value = int(text)
        elif col.kind == "bool":
            if text.lower() not in ("true", "false"):
                raise ValueError(text)
            value = text.lower() == "true"
        elif col.kind == "date":
            value = pd.Timestamp(text).date().isoformat()
        else:
            value = text
    except ValueError:
        raise DataError(f"{where}: column {col.name!r} must be {col.kind}, got {raw!r}") from None
    if col.choices is not None and value not in col.choices:
        raise DataError(f"{where}: column {col.name!r} must be one of {col.choices}, got {raw!r}")
    if col.minimum is not None and col.kind in ("float", "int") and value < col.minimum:
        raise DataError(f"{where}: column {col.name!r} must be >= {col.minimum}, got {raw!r}")
    return value


def parse_csv(text: str, schema: Sequence[Column], *, name: str = "<text>") -> pd.DataFrame:
    """Parse CSV text with ``#`` header lines against ``schema``.

    Parameters
    ----------
    text : str
        The file's content.
    schema : sequence of Column
        The columns the file must have (others are kept as strings). ``source`` and ``as_of``
        are always required, per row or in the header.
    name : str
        The file name used in error messages.

    Returns
    -------
    pandas.DataFrame
        One row per data row, typed per ``schema``; ``.attrs["meta"]`` holds the header
        key/values and ``.attrs["path"]`` the file name.

    Raises
    ------
    DataError
        On a missing column, an unparseable or out-of-range cell, a row of the wrong width,
        or a row without ``source``/``as_of``; the message names the file and line.
    """
    lines = text.splitlines()
    meta: dict[str, str] = {}
    first = 0
    while first < len(lines) and (lines[first].startswith("#") or not lines[first].strip()):
        body = lines[first].lstrip("#").strip()
        if ":" in body:
            key, value = body.split(":", 1)
            meta[key.strip()] = value.strip()
        first += 1
    if first >= len(lines):
        raise DataError(f"{name}: no header row")
    reader = csv.reader(io.StringIO("\n".join(lines[first:])))
    header = [h.strip() for h in next(reader)]
    by_name = {c.name: c for c in schema}
    for meta_col in _META_COLUMNS:
        by_name.setdefault(meta_col.name, meta_col)
        if meta_col.name not in header and meta_col.name not in meta:
            raise DataError(
                f"{name}: every row needs {meta_col.name!r}: add a column or a "
                f"'# {meta_col.name}: ...' header line"
            )
    missing = [c for c in by_name if c not in header and c not in meta]
    if missing:
        raise DataError(f"{name}:{first + 1}: missing column(s) {missing}; header is {header}")
    rows: list[dict[str, Any]] = []
    for offset, cells in enumerate(reader, start=2):
        lineno = first + offset
        if not cells or all(not c.strip() for c in cells):
            continue
        where = f"{name}:{lineno}"
        if len(cells) != len(header):
            raise DataError(f"{where}: {len(cells)} fields, header has {len(header)}")
        row: dict[str, Any] = {}
        for key, raw in zip(header, cells, strict=True):
            col = by_name.get(key)
            row[key] = _parse_cell(col, raw, where) if col else raw.strip()
        for meta_col in _META_COLUMNS:
            if meta_col.name not in header:
                row[meta_col.name] = _parse_cell(meta_col, meta[meta_col.name], f"{name} header")
        rows.append(row)
    frame = pd.DataFrame(rows, columns=[*header, *[c.name for c in _META_COLUMNS
                                                    if c.name not in header]])
    frame.attrs["meta"] = meta
    frame.attrs["path"] = name
    return frame


def load_csv(path: str | os.PathLike[str], schema: Sequence[Column]) -> pd.DataFrame:
    """Load and validate a CSV file of ``data/`` (relative paths are under :func:`data_dir`).

    See :func:`parse_csv` for the returned frame and the errors raised. A missing file raises
    :class:`DataError` too.
    """
    p = _resolve(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as err:
        raise DataError(f"{p}: cannot read ({err.strerror})") from err
    return parse_csv(text, schema, name=str(p))


def _check_meta(doc: Any, name: str) -> dict[str, Any]:
    if not isinstance(doc, Mapping):
        raise DataError(f"{name}: top level must be a mapping")
    meta = doc.get("_meta", doc)
    for key in ("source", "as_of"):
        if not isinstance(meta, Mapping) or not meta.get(key):
            raise DataError(f"{name}: missing top-level {key!r} (or _meta.{key})")
    return dict(doc)


def load_yaml(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Load a YAML mapping of ``data/`` and check its ``source``/``as_of``.

    Raises
    ------
    DataError
        If the file is missing, is not valid YAML (with the line), is not a mapping, or lacks
        ``source``/``as_of``.
    """
    p = _resolve(path)
    try:
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))
    except OSError as err:
        raise DataError(f"{p}: cannot read ({err.strerror})") from err
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise DataError(f"{p}{line}: invalid YAML ({err})") from err
    return _check_meta(doc, str(p))


def load_json(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Load a JSON mapping of ``data/`` and check its ``_meta.source``/``as_of``.

    Raises
    ------
    DataError
        If the file is missing, is not valid JSON (with the line), or lacks the metadata.
    """
    p = _resolve(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except OSError as err:
        raise DataError(f"{p}: cannot read ({err.strerror})") from err
    except json.JSONDecodeError as err:
        raise DataError(f"{p}:{err.lineno}: invalid JSON ({err.msg})") from err
    return _check_meta(doc, str(p))


def get_field(doc: Mapping[str, Any], key: str, kind: type, *, where: str) -> Any:
    """Return ``doc[key]`` checked to be of ``kind`` (``float`` accepts ints).

    Raises
    ------
    DataError
        Naming ``where`` (file and key path) if the key is missing or has the wrong type.
    """
    if key not in doc:
        raise DataError(f"{where}: missing key {key!r}")
    value = doc[key]
    ok = (
        isinstance(value, (int, float)) and not isinstance(value, bool)
        if kind is float
        else isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    )
    if not ok:
        raise DataError(f"{where}: {key!r} must be {kind.__name__}, got {value!r}")
    return float(value) if kind is float else value
