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

import os
import string
from typing import Any

from labkit.i18n import josa
from labkit.i18n.ko import KO
from labkit.validate import InputError

__all__ = ["CATALOGS", "KO", "error_text", "language", "t"]

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


def _shown(value: object, width: int = 24) -> object:
    """A rejected input as the page echoes it: floats in ``g`` form, long text cut (a browser
    can send a 309-digit number or a megabyte of text)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int) and abs(value) >= 10**15:
        try:
            value = float(value)
        except OverflowError:  # beyond any float: cut below
            pass
    text = f"{value:g}" if isinstance(value, float) else str(value)
    return text if len(text) <= width else text[:width - 1] + "…"


def error_text(err: ValueError, *, prefix: str | None = None) -> str:
    """Return the user-facing text of a model error, in the UI language.

    An :class:`~labkit.validate.InputError` is translated by its rule (``error.<rule>``, or the
    more specific ``<prefix>.<field>.<rule>`` / ``<prefix>.<rule>`` when the catalog has one); any
    other ValueError shows its own message.
    """
    if isinstance(err, InputError):
        field = err.field.rsplit(".", 1)[-1]
        limit = err.limit
        if isinstance(limit, tuple):
            limit = ", ".join(map(str, limit))
        elif isinstance(limit, float):
            limit = f"{limit:g}"
        values = {"value": _shown(err.value), "limit": limit, "message": str(err)}
        catalog = CATALOGS[language()]
        for key in ([f"{prefix}.{field}.{err.rule}", f"{prefix}.{err.rule}"] if prefix else []):
            if key in catalog or key in KO:
                return t(key, **values)
        return t(f"error.{err.rule}", **values)
    return t("error.other", message=str(err))
