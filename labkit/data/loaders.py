"""The generic loaders of :mod:`labkit.data`, re-exported there (``from labkit.data import ...``).

``labkit.data.<lesson>`` modules hold each file family's schema (a pydantic model built from
:mod:`labkit.data.schema`) and the typed loaders built on it. Validation is the schema's:
:func:`load_csv` checks each row against a :class:`~labkit.data.schema.Row` model,
:func:`load_document` a YAML file against a :class:`~labkit.data.schema.Document` model; dates
are strict ``YYYY-MM-DD`` (:func:`parse_iso_date`).

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
import functools
import io
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import pandas as pd
import yaml
from pydantic import AfterValidator, Field, ValidationError, create_model

from labkit.data import DataError
from labkit.data.schema import (
    Document,
    IsoDate,
    Row,
    Schema,
    Text,
    describe,
    one_of,
    parse_iso_date,
)

__all__ = [
    "Column",
    "DataError",
    "data_dir",
    "get_field",
    "load_csv",
    "load_document",
    "load_json",
    "load_yaml",
    "parse_csv",
    "parse_iso_date",
    "validate",
]

Kind = Literal["str", "float", "int", "bool", "date"]
S = TypeVar("S", bound=Schema)
#: PyYAML's safe loader, in C (libyaml) when the wheel has it: the same documents, ~10x faster
#: (a GPU model file takes ~40 ms in pure Python).
_YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
D = TypeVar("D", bound=Document)


def data_dir() -> Path:
    """Return the data directory: ``$LABKIT_DATA`` if set, else ``data/`` beside the package."""
    env = os.environ.get("LABKIT_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "data"


def _resolve(path: str | os.PathLike[str]) -> Path:
    p = Path(path)
    return p if p.is_absolute() else data_dir() / p


@dataclass(frozen=True)
class Column:
    """One CSV column of a quick schema: a list of them is turned into a ``Row`` model.

    The file families of ``data/`` declare their rows as :class:`~labkit.data.schema.Row`
    subclasses; a list of columns is for a small reader (or a test) that needs no model of its
    own, and is validated by the same machinery.

    Parameters
    ----------
    name : str
        Column name as in the header row.
    kind : {"str", "float", "int", "bool", "date"}, default "str"
        How cells are parsed; ``date`` is strict ``YYYY-MM-DD`` (:func:`parse_iso_date`).
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


_META_COLUMNS = ("source", "as_of")
_KIND_TYPES: dict[str, Any] = {"str": Text, "float": float, "int": int, "bool": bool,
                               "date": IsoDate}


def _nan_if_none(value: Any) -> Any:
    return math.nan if value is None else value


@functools.cache
def _row_model(schema: tuple[Column, ...]) -> type[Row]:
    """Build the :class:`~labkit.data.schema.Row` model of a list of :class:`Column`."""
    fields: dict[str, Any] = {}
    for col in schema:
        kind: Any = _KIND_TYPES[col.kind]
        extras: list[Any] = []
        if col.minimum is not None and col.kind in ("float", "int"):
            extras.append(Field(ge=col.minimum))
        if col.choices is not None:
            extras.append(one_of(col.choices))
        if extras:
            kind = Annotated[kind, *extras]
        if col.nullable and col.kind in ("float", "int"):
            fields[col.name] = (Annotated[kind | None, AfterValidator(_nan_if_none)], None)
        elif col.nullable:
            fields[col.name] = (kind | None, None)
        else:
            fields[col.name] = (kind, ...)
    model: type[Row] = create_model("ColumnsRow", __base__=Row, **fields)
    return model


def validate(schema: type[S], data: Any, where: str, *, columns: bool = False) -> S:
    """Validate ``data`` against a schema; raise :class:`DataError` naming ``where``.

    Parameters
    ----------
    schema : type of labkit.data.schema.Schema
        The pydantic model of the file family.
    data : Any
        A parsed document or one CSV row (column -> cell text, ``None`` for an empty cell).
    where : str
        The file (and line) for the message.
    columns : bool
        Name CSV columns in the message rather than key paths.

    Returns
    -------
    The validated model instance.

    Raises
    ------
    DataError
        ``"<where>: <what is wrong>"``, e.g. ``"power.csv:7: column 'power_w' must be >= 0"``.
    """
    try:
        return schema.model_validate(data)
    except ValidationError as err:
        raise DataError(f"{where}: {describe(err, columns=columns)}") from None


def _header_lines(lines: Sequence[str], name: str) -> tuple[dict[str, str], int]:
    """Return the ``# key: value`` lines at the top (dates checked) and the header row's index."""
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
    for key in ("as_of", "retrieved"):
        if key in meta:
            try:
                parse_iso_date(meta[key])
            except ValueError as err:
                raise DataError(f"{name}: header line '# {key}:' {err}") from None
    return meta, first


def parse_csv(text: str, schema: type[Row] | Sequence[Column], *,
              name: str = "<text>") -> pd.DataFrame:
    """Parse CSV text with ``#`` header lines against ``schema``.

    Parameters
    ----------
    text : str
        The file's content.
    schema : type of labkit.data.schema.Row, or sequence of Column
        The row model: its fields are the columns the file must have (others are kept as
        strings); ``source`` and ``as_of`` are always required, per row or in the ``#``
        header. A list of :class:`Column` is turned into such a model.
    name : str
        The file name used in error messages.

    Returns
    -------
    pandas.DataFrame
        One row per data row, typed per ``schema`` (an empty optional number is NaN, an empty
        optional text None); ``.attrs["meta"]`` holds the header
        key/values and ``.attrs["path"]`` the file name.

    Raises
    ------
    DataError
        On a missing column, a row of the wrong width, a row without ``source``/``as_of`` or
        any other row the model rejects (bad cell, rule across columns); the message names
        the file and line and the column.
    """
    model = schema if isinstance(schema, type) else _row_model(tuple(schema))
    lines = text.splitlines()
    meta, first = _header_lines(lines, name)
    reader = csv.reader(io.StringIO("\n".join(lines[first:])))
    header = [h.strip() for h in next(reader)]
    for key in _META_COLUMNS:
        if key not in header and key not in meta:
            raise DataError(f"{name}: every row needs {key!r}: add a column or a "
                            f"'# {key}: ...' header line")
    fields = {f.alias or n: f for n, f in model.model_fields.items()}
    missing = [c for c, f in fields.items()
               if f.is_required() and c not in header and c not in meta]
    if missing:
        raise DataError(f"{name}:{first + 1}: missing column(s) {missing}; header is {header}")
    from_meta = {k: meta[k] for k in fields if k not in header and k in meta}
    rows: list[dict[str, Any]] = []
    for offset, cells in enumerate(reader, start=2):
        lineno = first + offset
        if not cells or all(not c.strip() for c in cells):
            continue
        where = f"{name}:{lineno}"
        if len(cells) != len(header):
            raise DataError(f"{where}: {len(cells)} fields, header has {len(header)}")
        raw = {k: c.strip() for k, c in zip(header, cells, strict=True)}
        record = validate(model, {**{k: v or None for k, v in raw.items()}, **from_meta},
                          where, columns=True)
        typed = record.model_dump(by_alias=True)
        rows.append({**raw, **{k: v for k, v in typed.items() if k in raw or k in from_meta}})
    columns = [*header, *from_meta]
    frame = pd.DataFrame(rows, columns=columns)
    frame.attrs["meta"] = meta
    frame.attrs["path"] = name
    return frame


def load_csv(path: str | os.PathLike[str],
             schema: type[Row] | Sequence[Column]) -> pd.DataFrame:
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
    try:
        parse_iso_date(meta["as_of"])
    except ValueError as err:
        raise DataError(f"{name}: as_of {err}") from None
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
        doc = yaml.load(p.read_text(encoding="utf-8"), Loader=_YAML_LOADER)
    except OSError as err:
        raise DataError(f"{p}: cannot read ({err.strerror})") from err
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise DataError(f"{p}{line}: invalid YAML ({err})") from err
    except ValueError as err:  # PyYAML builds dates itself: 2026-02-30 raises here
        raise DataError(f"{p}: invalid value ({err})") from err
    return _check_meta(doc, str(p))


def load_document(path: str | os.PathLike[str], schema: type[D]) -> D:
    """Load a YAML file of ``data/`` and validate it against its family's schema.

    Parameters
    ----------
    path : str or path-like
        Relative to :func:`data_dir` unless absolute.
    schema : type of labkit.data.schema.Document
        The pydantic model of the file (top-level ``source`` and ``as_of`` included).

    Returns
    -------
    The validated model.

    Raises
    ------
    DataError
        As :func:`load_yaml`, or naming the file and key path the schema rejects
        (``"…/H100-80GB.yaml: mig.profiles[3].memory_mib must be int, got 'x'"``).
    """
    doc = load_yaml(path)
    return validate(schema, doc, str(_resolve(path)))


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

    Kept for readers not yet given a schema; a file family validates through its pydantic
    model (:func:`load_document`) instead.

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
