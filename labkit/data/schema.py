"""The building blocks of the schemas of ``data/``: pydantic v2 models and their field types.

Each file family of ``data/`` has its schema, a pydantic model, beside its loader
(``labkit.data.<family>``): a :class:`Row` subclass for a CSV file (one model instance per data
row) or a :class:`Document` subclass for a YAML file. :func:`labkit.data.load_csv` and
:func:`labkit.data.load_document` validate a file against its model and turn every
``pydantic.ValidationError`` into a :class:`labkit.data.DataError` naming the file and the row
(CSV line) or key path (YAML) that is wrong; :func:`describe` writes those messages.

Field types used across families:

- :data:`IsoDate`: a calendar date ``YYYY-MM-DD`` parsed with :meth:`datetime.date.fromisoformat`
  (never "today" or "now"), kept as its ISO text;
- :data:`Day`: the same date as a :class:`datetime.date`;
- :data:`Text`: a non-empty string (surrounding spaces stripped);
- :data:`NonNegative` / :data:`Positive`: floats ``>= 0`` / ``> 0``;
- :data:`OptionalNonNegative`: an optional float ``>= 0`` whose empty CSV cell becomes NaN
  (as pandas would read it);
- :func:`one_of`: a string restricted to a tuple of names defined in a model module.

Source: pydantic v2 documentation, "Validators" and "Error handling" (docs.pydantic.dev).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from datetime import date, datetime
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    StringConstraints,
    ValidationError,
)

__all__ = [
    "Day",
    "Document",
    "IsoDate",
    "Lax",
    "NonNegative",
    "NonNegativeInt",
    "OptionalNonNegative",
    "Positive",
    "PositiveInt",
    "Row",
    "Schema",
    "Text",
    "describe",
    "one_of",
    "parse_iso_date",
]

_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def parse_iso_date(value: object) -> str:
    """Return ``value`` as an ISO calendar date ``YYYY-MM-DD``, strictly.

    Parameters
    ----------
    value : str or datetime.date
        Text of exactly the form ``2026-11-30`` (parsed with :meth:`datetime.date.fromisoformat`),
        or a ``date`` (PyYAML builds one from an unquoted ``2026-11-30``). Words such as
        ``"today"`` or ``"now"``, times, and the compact ``20261130`` form are refused: a data
        file's date must not depend on the day it is read.

    Returns
    -------
    str
        The date in ISO form.

    Raises
    ------
    ValueError
        If ``value`` is not such a date (the message quotes it; callers add the file and row).
    """
    if isinstance(value, date) and not isinstance(value, datetime):
        return value.isoformat()
    text = value.strip() if isinstance(value, str) else ""
    if not _ISO_DATE.fullmatch(text):
        raise ValueError(f"must be a date YYYY-MM-DD, got {value!r}")
    try:
        return date.fromisoformat(text).isoformat()
    except ValueError:
        raise ValueError(f"must be a valid date YYYY-MM-DD, got {value!r}") from None


def _nan_if_none(value: float | None) -> float:
    return math.nan if value is None else value


def _day(value: object) -> date:
    return date.fromisoformat(parse_iso_date(value))


IsoDate = Annotated[str, BeforeValidator(parse_iso_date)]
Day = Annotated[date, BeforeValidator(_day)]
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
NonNegative = Annotated[float, Field(ge=0)]
Positive = Annotated[float, Field(gt=0)]
NonNegativeInt = Annotated[int, Field(ge=0)]
PositiveInt = Annotated[int, Field(ge=1)]
OptionalNonNegative = Annotated[NonNegative | None, AfterValidator(_nan_if_none)]


Lax = Strict(False)
"""Annotation for a field of a strict schema that converts: an enum from its name, a tuple from
a YAML list (``Annotated[Season, Lax]``)."""


def one_of(choices: Sequence[str]) -> AfterValidator:
    """Return a validator restricting a ``str`` field to ``choices`` (use in ``Annotated``).

    Used where the allowed names are a tuple of a model module (``labkit.economics.DIVISIONS``)
    rather than a ``Literal`` written in the schema.
    """
    allowed = tuple(choices)

    def check(value: str) -> str:
        if value not in allowed:
            raise ValueError(f"must be one of {allowed}, got {value!r}")
        return value

    return AfterValidator(check)


class Schema(BaseModel):
    """Base of every data schema: unknown keys are errors, floats must be finite.

    YAML scalars are checked strictly (``"720"`` is not a number, ``1`` is not a bool): PyYAML
    has already typed them. Where YAML text stands for an enum (a season name) or a list for a
    fixed-length tuple, the field is annotated with :data:`Lax`.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True, strict=True,
                              defer_build=True)


class Row(Schema):
    """One data row of a CSV file of ``data/``: every row has a ``source`` and an ``as_of``.

    Columns the schema does not name are kept, as text, by :func:`labkit.data.parse_csv`. Cells
    are text, so a row converts them (``"700"`` to a float) instead of being strict.
    """

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False, frozen=True, strict=False)

    source: Text
    as_of: IsoDate


class Document(Schema):
    """A YAML file of ``data/``: a mapping with top-level ``source`` and ``as_of``."""

    source: Text
    as_of: IsoDate


_KINDS = {
    "float_parsing": "must be float", "float_type": "must be float",
    "finite_number": "must be float (finite)", "int_parsing": "must be int",
    "int_type": "must be int", "int_from_float": "must be int",
    "bool_parsing": "must be bool (true/false)", "bool_type": "must be bool (true/false)",
    "string_type": "must be text", "dict_type": "must be a mapping", "list_type": "must be a list",
    "tuple_type": "must be a list", "model_type": "must be a mapping",
    "model_attributes_type": "must be a mapping", "date_type": "must be a date YYYY-MM-DD",
    "date_from_datetime_inexact": "must be a date YYYY-MM-DD",
    "extra_forbidden": "is not a known key", "string_too_short": "is empty",
}


def _where(loc: tuple[int | str, ...], columns: bool) -> str:
    if not loc:
        return ""
    if columns:
        return f"column {loc[0]!r}"
    text = ""
    for part in loc:
        if part == "[key]":  # pydantic's mark for the key (not the value) of a mapping
            text += " (key)"
        elif isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def _sentence(error: Any, columns: bool) -> str:
    kind, given = error["type"], error.get("input")
    ctx = error.get("ctx") or {}
    if kind == "missing":
        text = "is empty" if columns else "is missing"
    elif given is None and columns:
        text = "is empty"
    elif kind == "greater_than_equal":
        text = f"must be >= {ctx['ge']}"
    elif kind == "greater_than":
        text = f"must be > {ctx['gt']}"
    elif kind == "less_than_equal":
        text = f"must be <= {ctx['le']}"
    elif kind == "less_than":
        text = f"must be < {ctx['lt']}"
    elif kind in ("literal_error", "enum"):
        text = f"must be one of {ctx.get('expected')}"
    elif kind in ("value_error", "assertion_error"):
        text = str(ctx.get("error", error["msg"]))
        return f"{_where(error['loc'], columns)} {text}".strip()
    else:
        text = _KINDS.get(kind, str(error["msg"]))
    got = "" if kind in ("missing", "extra_forbidden") or given is None else f", got {given!r}"
    if isinstance(given, (dict, list)):
        got = ""
    return f"{_where(error['loc'], columns)} {text}{got}".strip()


def describe(err: ValidationError, *, columns: bool = False, limit: int = 3) -> str:
    """Return the errors of ``err`` as one line: ``column 'power_w' must be >= 0, got '-1'``.

    Parameters
    ----------
    err : pydantic.ValidationError
        The error of one row's or one file's validation.
    columns : bool
        Name locations as CSV columns (``column 'x'``) rather than key paths
        (``mig.profiles[3].name``); an empty CSV cell reads "is empty".
    limit : int
        At most this many errors are written; the rest are counted.
    """
    errors = err.errors()
    parts = [_sentence(e, columns) for e in errors[:limit]]
    if len(errors) > limit:
        parts.append(f"and {len(errors) - limit} more")
    return "; ".join(parts)
