"""UI strings by language: :func:`t` looks a dotted key up in the current language's catalog.

Korean (``labkit.i18n.ko``) is the course's language and the fallback. Another language is
one more module with a dict of the same keys, registered in :data:`CATALOGS` and chosen with
``$LABKIT_LANG``; ``tests/test_messages.py`` checks every used key exists and that every
catalog has the same keys and placeholders as Korean.

Templates are ``str.format`` templates with one addition: a Korean particle as the format spec
attaches the form that fits the value (:mod:`labkit.i18n.josa`): ``"{profile:을/를} 놓았습니다"``
gives "3g.40gb를 놓았습니다", "{basis:이/가}" gives "SM 활동이"; never "을(를)".
"""

from __future__ import annotations

import math
import os
import string
from typing import Any

from labkit.i18n import josa
from labkit.i18n.ko import KO
from labkit.validate import InputError

__all__ = ["CATALOGS", "KO", "error_text", "first_few", "language", "t"]

CATALOGS: dict[str, dict[str, str]] = {"ko": KO}
DEFAULT_LANGUAGE = "ko"


def language() -> str:
    """Return the UI language: ``$LABKIT_LANG`` when a catalog exists for it, else Korean."""
    lang = os.environ.get("LABKIT_LANG", DEFAULT_LANGUAGE)
    return lang if lang in CATALOGS else DEFAULT_LANGUAGE


class _Formatter(string.Formatter):
    """``str.format`` plus particle specs: ``{name:이/가}`` is the value and its particle."""

    def format_field(self, value: Any, format_spec: str) -> str:
        if format_spec in josa.PARTICLE_NAMES:
            return josa.attach(format(value, ""), format_spec)
        return str(super().format_field(value, format_spec))


_FORMATTER = _Formatter()


def t(key: str, /, **values: Any) -> str:
    """Return the UI string ``key`` in the current language, formatted with ``values``.

    Falls back to Korean for a key the current language lacks.

    Raises
    ------
    KeyError
        If no catalog has ``key`` (a bug: tests check every key used in labkit/ui).
    """
    catalog = CATALOGS[language()]
    template = catalog.get(key, KO.get(key))
    if template is None:
        raise KeyError(f"no UI string for {key!r}")
    return _FORMATTER.vformat(template, (), values) if values else template


def first_few(names: list[str], n: int) -> str:
    """Return the first ``n`` of ``names`` joined with ", ", and " …" when some are left out.

    >>> first_few(["minji", "jisoo", "kim"], 2)
    'minji, jisoo …'
    """
    return ", ".join(names[:n]) + (" …" if len(names) > n else "")


def _human(value: object) -> object:
    """A limit as people write it: 10,000,000 not 1e+07; 8,784 not 8784; 0.001014 not
    1.01354e-03 (four significant digits; ``g`` form only below 0.0001 or past 10**15)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    if not math.isfinite(value):
        return f"{value:g}"
    if value == int(value) and abs(value) < 10**15:
        return f"{int(value):,}"
    if 1e-4 <= abs(value) < 10**15:
        digits = max(0, 3 - math.floor(math.log10(abs(value))))
        return f"{value:,.{digits}f}".rstrip("0").rstrip(".")
    return f"{value:g}"


def _shown(value: object, width: int = 24) -> object:
    """A rejected input as the page echoes it: floats in ``g`` form, long text cut (a browser
    can send a 309-digit number or a megabyte of text)."""
    if isinstance(value, bool) or value is None:
        return value
    from labkit.answers import MAX_MAGNITUDE

    if isinstance(value, int) and abs(value) >= MAX_MAGNITUDE:
        try:
            value = float(value)
        except OverflowError:  # beyond any float: said in words below
            return "1경 이상" if value > 0 else "−1경 이하"
    if isinstance(value, float) and math.isfinite(value) and abs(value) >= MAX_MAGNITUDE:
        # 1e308 typed: "1경 이상" (the course's limit, labkit.answers), never "1e+308"
        text = "1경 이상" if value > 0 else "−1경 이하"
    elif isinstance(value, float) and math.isfinite(value) and value == int(value):
        text = f"{int(value):,}"  # 50000000 typed: "50,000,000", not "5e+07"
    else:
        text = f"{value:g}" if isinstance(value, float) else str(value)
    return text if len(text) <= width else text[:width - 1] + "…"


_UNSET: Any = object()
_INTERVALS = {"(0, 1]": "error.interval.open_closed", "[0, 1]": "error.interval.closed"}


def error_text(err: ValueError, *, prefix: str | None = None, typed: Any = _UNSET,
               scale: float = 1.0) -> str:
    """Return the user-facing text of a model error, in the UI language.

    An :class:`~labkit.validate.InputError` is translated by its rule: the most specific of
    ``<prefix>.<field>.<rule>`` (the whole dotted field, its last part, its first part:
    ``losses.rewind`` tries ``rewind`` then ``losses``), ``<prefix>.<rule>`` and
    ``error.<rule>`` that the catalog has. Any other ValueError shows its own message.

    ``typed`` is what the control held (echoed as ``{value}`` instead of the model's value) and
    ``scale`` the control's unit per model unit (limits are shown in the control's unit: a
    fraction's ``0, 1`` as ``0, 100`` on a percent slider).
    """
    if isinstance(err, InputError):
        parts = err.field.split(".")
        limit = err.limit
        if limit in _INTERVALS:  # validate.fraction's "(0, 1]": in words, in the control's unit
            limit = t(_INTERVALS[limit], low=0, high=_human(scale))
        elif isinstance(limit, tuple):
            limit = ", ".join(str(_human(v * scale if isinstance(v, (int, float)) else v))
                              for v in limit)
        elif isinstance(limit, (int, float)) and not isinstance(limit, bool):
            limit = _human(limit * scale)
        value = err.value if typed is _UNSET else typed
        values = {"value": _shown(value), "limit": limit, "message": str(err)}
        catalog = CATALOGS[language()]
        fields = dict.fromkeys([err.field, parts[-1], parts[0]])
        keys = [f"{prefix}.{f}.{err.rule}" for f in fields] + [f"{prefix}.{err.rule}"]
        for key in keys if prefix else []:
            if key in catalog or key in KO:
                return t(key, **values)
        return t(f"error.{err.rule}", **values)
    return t("error.other", message=str(err))
