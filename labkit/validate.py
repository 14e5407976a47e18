"""Input checks shared by the pure models.

Every model checks its inputs on entry and raises :class:`InputError`, a ``ValueError`` that
names the field, the rule it broke and the value. The English message is for code and logs; the
widgets (``labkit.ui``) translate ``field``/``rule``/``limit`` into a Korean message shown beside
the offending control. Checks never clamp or coerce silently.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from numbers import Real
from typing import Any

__all__ = [
    "InputError",
    "at_least",
    "at_most",
    "finite",
    "fraction",
    "integer",
    "non_negative",
    "one_of",
    "positive",
]


class InputError(ValueError):
    """A bad input value: which field, which rule, which value.

    Attributes
    ----------
    field : str
        The parameter name as the model spells it (``"reserved_h"``, ``"losses.rewind"``).
    rule : str
        One of ``"number"``, ``"finite"``, ``"positive"``, ``"non_negative"``, ``"fraction"``,
        ``"at_most"``, ``"at_least"``, ``"integer"``, ``"choice"``, ``"other"``; the UI has a
        message per rule.
    value : object
        The rejected value.
    limit : object
        The bound (or the allowed choices) where the rule has one, else ``None``.
    """

    def __init__(
        self, field: str, rule: str, value: Any, message: str, *, limit: Any = None
    ) -> None:
        self.field = field
        self.rule = rule
        self.value = value
        self.limit = limit
        super().__init__(message)


def finite(field: str, value: Any) -> float:
    """Return ``value`` as a float; raise :class:`InputError` unless it is a finite real number."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise InputError(field, "number", value, f"{field} must be a number, got {value!r}")
    x = float(value)
    if not math.isfinite(x):
        raise InputError(field, "finite", value, f"{field} must be finite, got {value!r}")
    return x


def positive(field: str, value: Any) -> float:
    """Return ``value`` as a float; raise :class:`InputError` unless it is finite and > 0."""
    x = finite(field, value)
    if x <= 0:
        raise InputError(field, "positive", value, f"{field} must be > 0, got {value!r}")
    return x


def non_negative(field: str, value: Any) -> float:
    """Return ``value`` as a float; raise :class:`InputError` unless it is finite and >= 0."""
    x = finite(field, value)
    if x < 0:
        raise InputError(field, "non_negative", value, f"{field} must be >= 0, got {value!r}")
    return x


def fraction(field: str, value: Any, *, allow_zero: bool = False) -> float:
    """Return ``value`` as a float in (0, 1] (or [0, 1] with ``allow_zero``); else raise."""
    x = finite(field, value)
    low_ok = x >= 0 if allow_zero else x > 0
    if not (low_ok and x <= 1):
        interval = "[0, 1]" if allow_zero else "(0, 1]"
        raise InputError(
            field, "fraction", value, f"{field} must be in {interval}, got {value!r}",
            limit=interval,
        )
    return x


def at_most(field: str, value: Any, limit: float, limit_name: str) -> float:
    """Return ``value`` as a float; raise :class:`InputError` if it exceeds ``limit``."""
    x = finite(field, value)
    if x > limit:
        raise InputError(
            field, "at_most", value,
            f"{field} must be <= {limit_name} ({limit:g}), got {value!r}", limit=limit,
        )
    return x


def at_least(field: str, value: Any, limit: float) -> float:
    """Return ``value`` as a float; raise :class:`InputError` if it is below ``limit``."""
    x = finite(field, value)
    if x < limit:
        raise InputError(field, "at_least", value,
                         f"{field} must be >= {limit:g}, got {value!r}", limit=limit)
    return x


def integer(field: str, value: Any, *, minimum: int = 0) -> int:
    """Return ``value`` as an int >= ``minimum``; floats must be whole numbers."""
    x = finite(field, value)
    if x != int(x) or x < minimum:
        raise InputError(
            field, "integer", value,
            f"{field} must be a whole number >= {minimum}, got {value!r}", limit=minimum,
        )
    return int(x)


def one_of(field: str, value: Any, choices: Iterable[str]) -> str:
    """Return ``value`` if it is one of ``choices``; else raise :class:`InputError`."""
    allowed = tuple(choices)
    if value not in allowed:
        raise InputError(
            field, "choice", value,
            f"{field} must be one of {', '.join(map(str, allowed))}; got {value!r}",
            limit=allowed,
        )
    return str(value)
