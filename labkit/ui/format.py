"""Number and table formatting for the Korean UI (units as the course writes them).

:func:`people_table` is the one table formatter every lesson uses: Korean headers with units,
no index column, no scientific notation, 만/억 where natural, words for booleans, blanks for
missing values, long sources as numbered footnotes.
"""

from __future__ import annotations

import html
import math
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from labkit.i18n import t

__all__ = ["Col", "Table", "count", "default_columns", "fixed", "hours", "krw", "large", "number",
           "pairs_table", "pct", "people_table", "ratio", "rows_table"]


def _bad(x: float) -> bool:
    return x is None or not math.isfinite(x)


def fixed(x: float, digits: int) -> str:
    """``x`` to ``digits`` decimals, without them where they are all zeros: a whole number
    reads as one ('70', '640', '2'), not '70.0', '640.0', '2.00' (issue 17's trials)."""
    text = f"{x:,.{digits}f}"
    whole, _, decimals = text.partition(".")
    return whole if decimals.strip("0") == "" else text


def pct(fraction: float, digits: int = 1) -> str:
    """0.8889 -> '88.9 %'; 0.7 -> '70 %'."""
    return "n/a" if _bad(fraction) else f"{fixed(fraction * 100, digits)} %"


def hours(h: float, digits: int = 0) -> str:
    """640 -> '640 h'; 1.5 -> '1.5 h' (digits=1); 7.0 -> '7 h' (digits=2)."""
    return "n/a" if _bad(h) else f"{fixed(h, digits)} h"


def _integral(x: float) -> bool:
    """Whether ``x`` is a whole number (4.0: a count or a cell a person reads as '4')."""
    return float(x).is_integer()


def count(n: float, digits: int = 0) -> str:
    """5201.3 -> '5,201.3' (digits=1): fixed decimals, as a live reading keeps them (70.0 W).

    A table cell goes through :func:`number`, which writes a whole number as one (4.0 -> '4').
    """
    return "n/a" if _bad(n) else f"{n:,.{digits}f}"


def ratio(x: float, digits: int = 3) -> str:
    """1.26984 -> '1.270'; 2.0 -> '2'."""
    return "n/a" if _bad(x) else fixed(x, digits)


def krw(amount: float) -> str:
    """Won with the Korean large units: 58,030,000,000 -> '580억 3,000만 원'."""
    if _bad(amount):
        return "n/a"
    sign = "−" if amount < 0 else ""
    won = round(abs(amount))
    if won < 10_000:
        return f"{sign}{won:,} 원"
    jo, rest = divmod(won, 10**12)
    eok, rest = divmod(rest, 10**8)
    man = rest // 10**4
    parts = [f"{jo:,}조" if jo else "", f"{eok:,}억" if eok else "", f"{man:,}만" if man else ""]
    return sign + " ".join(p for p in parts if p) + " 원"


# --- tables for people -------------------------------------------------------------------------

#: Cell kinds of :class:`Col`.
KINDS = ("text", "number", "int", "pct", "krw", "large", "bool", "date", "note")
#: Text longer than this goes to a numbered footnote under the table. [characters]
NOTE_CHARS = 40


#: The most significant digits a number shown to people carries (the whole part is never cut:
#: 31,106.28 -> '31,106'); issue 17's people's format: at most 4 significant digits.
PEOPLE_DIGITS = 4


def number(x: float, digits: int | None = None) -> str:
    """A plain number with comma grouping, never in scientific notation.

    ``digits=None`` keeps at most :data:`PEOPLE_DIGITS` significant digits (never fewer than
    the whole part, never more than 3 decimals) and drops trailing zeros: 300000 -> '300,000',
    132.197 -> '132.2', 6,254.85 -> '6,255', 0.888889 -> '0.889', 1.50 -> '1.5';
    ``digits=n`` rounds to n decimals. A whole number is written without a decimal point
    either way (4.0 -> '4', 7.0 with ``digits=2`` -> '7': issue 17's "4.0"/"7.00" cells).
    """
    if _bad(x):
        return ""
    if _integral(x):
        return "0" if x == 0 else f"{x:,.0f}"
    if digits is not None:
        return f"{x:,.{digits}f}"
    if x == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(x))) + 1  # digits before the point (<= 0 below 1)
    decimals = min(3, max(0, PEOPLE_DIGITS - magnitude))
    text = f"{x:,.{decimals}f}"
    text = text.rstrip("0").rstrip(".") if "." in text else text
    return "0" if text in ("-0", "") else text


def large(x: float, digits: int | None = None) -> str:
    """A count with the Korean large units where they read naturally.

    At or above 1억 (1e8) in 억 (8.92e9 -> '89.2억'); round figures (whole thousands) at or
    above 10만 in 만 (12,000,000 -> '1,200만', 300,000 -> '30만'); anything else as
    :func:`number` (31,106.28 -> '31,106', 20,000 -> '20,000').
    """
    if _bad(x):
        return ""
    if abs(x) >= 1e8:
        return number(x / 1e8, 1 if digits is None else digits).removesuffix(".0") + "억"
    if abs(x) >= 1e5 and float(x) % 1_000 == 0:
        return number(x / 1e4) + "만"
    return number(x, digits)


@dataclass(frozen=True)
class Col:
    """How one column of a :func:`people_table` is shown.

    Parameters
    ----------
    header : str
        Korean header, with its unit in parentheses where it has one ("가격 (USD)").
    kind : str, default "text"
        One of :data:`KINDS`: ``number`` (:func:`number`), ``int``, ``pct`` (a fraction shown
        as %), ``krw`` (:func:`krw`), ``large`` (:func:`large`: 만/억), ``bool`` (예/아니요),
        ``date`` (YYYY-MM-DD), ``note`` (long text to a numbered footnote), ``text``.
    digits : int, optional
        Decimals for ``number``/``pct``/``large`` (default: as the kind chooses).
    words : mapping, optional
        Text cells replaced by these words (a data file's English codes -> Korean).
    """

    header: str
    kind: str = "text"
    digits: int | None = None
    words: Mapping[str, str] | None = None


@dataclass(frozen=True)
class Table:
    """A table for people: Korean headers, formatted cells, footnotes; no index column.

    ``data`` keeps the values (numbers as numbers) under the same headers, for code and
    tests; the notebook shows :meth:`_repr_html_` (JupyterLab, voila) or :meth:`to_string`.
    """

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    footnotes: tuple[str, ...]
    numeric: tuple[bool, ...]
    data: pd.DataFrame
    caption: str = ""

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def columns(self) -> list[str]:
        """The headers, as :attr:`pandas.DataFrame.columns` would list them."""
        return list(self.headers)

    def cell(self, row: int, header: str) -> str:
        """The shown text of one cell."""
        return self.rows[row][self.headers.index(header)]

    def row(self, label: str) -> dict[str, str]:
        """The shown cells of the row whose first cell is ``label``, by header.

        Raises
        ------
        KeyError
            If no row starts with ``label``.
        """
        for cells in self.rows:
            if cells[0] == label:
                return dict(zip(self.headers, cells, strict=True))
        raise KeyError(label)

    def to_string(self) -> str:
        """Plain text: aligned columns, then the footnotes (deterministic, for nbval)."""
        grid = [self.headers, *self.rows]
        widths = [max(_width(r[i]) for r in grid) for i in range(len(self.headers))]
        lines = ["  ".join(_pad(c, w, right=n) for c, w, n in
                           zip(r, widths, self.numeric, strict=True)).rstrip() for r in grid]
        text = "\n".join(lines)
        notes = [f"[{i}] {n}" for i, n in enumerate(self.footnotes, 1)]
        return "\n".join([*([self.caption] if self.caption else []), text, *notes])

    def __repr__(self) -> str:
        return self.to_string()

    def _repr_html_(self) -> str:
        e = html.escape
        style = "padding:3px 10px;border-bottom:1px solid #ddd;vertical-align:top"
        head = "".join(f'<th style="{style};text-align:{"right" if n else "left"};'
                       f'white-space:nowrap">{e(h)}</th>'
                       for h, n in zip(self.headers, self.numeric, strict=True))
        body = "".join(
            "<tr>" + "".join(
                f'<td style="{style};text-align:{"right" if n else "left"}'
                f'{";white-space:nowrap" if n else ";max-width:24em;overflow-wrap:anywhere"}">'
                f"{e(c)}</td>"
                for c, n in zip(row, self.numeric, strict=True)) + "</tr>"
            for row in self.rows)
        caption = (f'<caption style="text-align:left;font-weight:700;padding:4px 0">'
                   f"{e(self.caption)}</caption>" if self.caption else "")
        notes = "".join(f"<li>{e(n)}</li>" for n in self.footnotes)
        notes_html = (f'<ol class="lk-footnotes" style="font-size:0.85em;color:#555;'
                      f'margin:4px 0 0 1.5em;padding:0">{notes}</ol>' if notes else "")
        return (f'<div class="lk-table"><table style="border-collapse:collapse;'
                f'line-height:1.45">{caption}<thead><tr>{head}</tr></thead>'
                f"<tbody>{body}</tbody></table>{notes_html}</div>")


def _width(text: str) -> int:
    """Columns a terminal gives ``text`` (Hangul and other wide characters take two)."""
    return sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in text)


def _pad(text: str, width: int, *, right: bool) -> str:
    fill = " " * (width - _width(text))
    return fill + text if right else text + fill


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value).strip()


def _cell(value: Any, col: Col, notes: list[str]) -> str:
    """Format one cell; long notes are appended to ``notes`` and shown as their number."""
    if col.kind in ("text", "note"):
        text = _text(value)
        text = col.words.get(text, text) if col.words else text
        if col.kind == "note" and len(text) > NOTE_CHARS:
            if text not in notes:
                notes.append(text)
            return f"[{notes.index(text) + 1}]"
        return text
    if col.kind == "bool":
        if isinstance(value, str):
            value = {"true": True, "false": False}.get(value.strip().lower(), value)
        if not isinstance(value, (bool, np.bool_)):
            return ""
        return t("common.table.yes") if value else t("common.table.no")
    if col.kind == "date":
        return _text(value)[:10]
    if value is None or isinstance(value, str) or _bad(float(value)):
        return _text(value) if isinstance(value, str) else ""
    x = float(value)
    formats: dict[str, Callable[[float], str]] = {
        "number": lambda v: number(v, col.digits), "int": lambda v: number(v, 0),
        "pct": lambda v: pct(v, 1 if col.digits is None else col.digits),
        "krw": krw, "large": lambda v: large(v, col.digits)}
    return formats[col.kind](x)


def people_table(frame: pd.DataFrame, columns: Mapping[str, Col] | None = None, *,
                 caption: str = "") -> Table:
    """Return ``frame`` as a :class:`Table` for people (the one table formatter of the course).

    Parameters
    ----------
    frame : pandas.DataFrame
        The values (its index is dropped: tables for people have no index column).
    columns : mapping of str to Col, optional
        The frame's columns to show, in order, and how. Default: every column under its own
        name (whole numbers as ``int``, other numbers as ``number``, the rest as text), and a
        named or labelled index first, as a column: the row labels of a table built with
        ``set_index`` (:func:`default_columns`).
    caption : str, optional
        A title above the table.

    Raises
    ------
    KeyError
        If a column is not in ``frame``.
    ValueError
        If a :class:`Col` has an unknown kind.

    Notes
    -----
    No scientific notation, NaN/None as a blank, booleans as 예/아니요, long ``note`` text
    (sources) as a numbered footnote under the table, the same text sharing one number.
    """
    if columns is None:
        frame, columns = default_columns(frame)
    for col in columns.values():
        if col.kind not in KINDS:
            raise ValueError(f"unknown column kind {col.kind!r}; expected one of {KINDS}")
    notes: list[str] = []
    records = frame[list(columns)].to_dict("records")
    rows = tuple(tuple(_cell(r[key], col, notes) for key, col in columns.items())
                 for r in records)
    numeric = tuple(c.kind in ("number", "int", "pct", "krw", "large") for c in columns.values())
    data = frame[list(columns)].reset_index(drop=True)
    data.columns = [c.header for c in columns.values()]
    return Table(tuple(c.header for c in columns.values()), rows, tuple(notes), numeric, data,
                 caption)


def default_columns(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Col]]:
    """Return ``frame`` with its row labels as its first column, and a :class:`Col` per column.

    A default ``RangeIndex`` without a name is dropped; any other index (``set_index``) becomes
    the first column under its name. Whole-number columns are ``int``, other numeric columns
    ``number``, everything else text (cells already formatted for people stay as they are).
    """
    if not (isinstance(frame.index, pd.RangeIndex) and frame.index.name is None):
        frame = frame.reset_index()
    columns = {}
    for name in frame.columns:
        dtype = frame[name].dtype
        types = pd.api.types
        kind = ("int" if types.is_integer_dtype(dtype) and not types.is_bool_dtype(dtype)
                else "number" if types.is_float_dtype(dtype) else "text")
        columns[name] = Col(str(name), kind)
    return frame, columns


def rows_table(rows: Sequence[Sequence[Any]], headers: Sequence[str], *,
               text_columns: int = 1, caption: str = "") -> Table:
    """Return rows already formatted for people as a :class:`Table`.

    The first ``text_columns`` columns are labels (left-aligned), the others figures
    (right-aligned); cells are shown as given (NaN/None as blanks).
    """
    keys = [f"c{i}" for i in range(len(headers))]
    frame = pd.DataFrame([list(r) for r in rows], columns=keys)
    return people_table(frame, {k: Col(h, "text" if i < text_columns else "number")
                                for i, (k, h) in enumerate(zip(keys, headers, strict=True))},
                        caption=caption)


def pairs_table(rows: Sequence[tuple[str, str]], item: str, value: str) -> Table:
    """Return (label, shown value) pairs as a two-column :class:`Table` (key-number lists)."""
    return rows_table(rows, [item, value])


# --- numbers read back to people (answers, predictions) --------------------------------------

__all__ += ["READABLE_MAX", "quantity", "readable"]

#: The Korean large units :func:`readable` writes, largest first (표준국어대사전: 만 10^4,
#: 억 10^8, 조 10^12).
_LARGE_UNITS = ((10**12, "조"), (10**8, "억"), (10**4, "만"))
#: From here :func:`readable` writes values in 만/억/조 (below it, 12,345 reads as written).
_LARGE_FROM = 10**5
#: At and beyond 1경 (10^16) :func:`readable` prints no digits: no figure of the course is
#: that large, and a typed ``1e308`` would otherwise print 309 of them.
READABLE_MAX = 10**16
_UNIT_WORDS = {"만": 10**4, "억": 10**8, "조": 10**12}


def _significant(x: float, sig: int, max_decimals: int = 6) -> str:
    """``x`` (>= 0) to ``sig`` significant digits, comma-grouped, trailing zeros dropped."""
    if x == 0:
        return "0"
    decimals = max(0, min(max_decimals, sig - 1 - math.floor(math.log10(x))))
    text = f"{x:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def readable(x: float, sig: int = 4) -> str:
    """A number as people write it back: at most ``sig`` significant digits, never scientific.

    From 10만 on in the largest Korean unit that fits (123,456 -> '12.35만', 8.92e9 ->
    '89.2억', 3e12 -> '3조'); below it whole numbers as written (8,784 -> '8,784') and
    fractions to ``sig`` digits (0.86111 -> '0.8611', 264.0 -> '264'). A nonzero value below
    0.000001 is '약 0'; 1경 (:data:`READABLE_MAX`) and beyond is '1경 이상' (negative: '−1경 이하').
    Non-finite values are 'n/a'.
    """
    if _bad(x):
        return "n/a"
    sign, a = ("−" if x < 0 else ""), abs(float(x))
    if a >= READABLE_MAX:
        return "−1경 이하" if x < 0 else "1경 이상"
    if a >= _LARGE_FROM:
        for i, (size, word) in enumerate(_LARGE_UNITS):
            if a >= size:
                text = _significant(a / size, sig)
                if i > 0 and float(text.replace(",", "")) >= 10_000:  # 9,999.96만 -> 1억
                    size, word = _LARGE_UNITS[i - 1]
                    text = _significant(a / size, sig)
                return f"{sign}{text}{word}"
    text = f"{a:,.0f}" if a >= 1_000 else _significant(a, sig)
    return "약 0" if text == "0" and a > 0 else sign + text


def quantity(x: float, unit: str = "", sig: int = 4) -> str:
    """A value and its unit as Korean writes them: '4개', '264일', '0.5 h', '86.1 %'.

    A unit of Hangul attaches to a number that ends in a digit ('4개', '30분', '813,192원') and
    follows a Korean large unit after a space ('1.2만 원', '89.2억 토큰'); other units follow
    after a space ('0.5 h', '3 kW'). An asked unit led by 만/억/조 (``"억 토큰"``) is written
    in its plain unit (89.2 '억 토큰' -> '89.2억 토큰'; 150,000 '억 토큰' -> '15조 토큰').
    Won below 1억 are exact, as a bill prints them ('813,192원'); everything else is
    :func:`readable`.
    """
    unit = unit.strip()
    if unit[:1] in _UNIT_WORDS and unit[1:2] == " " and not _bad(x):
        x, unit = x * _UNIT_WORDS[unit[0]], unit[2:].strip()
    if unit == "원" and not _bad(x) and abs(x) < 10**8:
        number = ("−" if round(x) < 0 else "") + f"{abs(round(x)):,}"
    else:
        number = readable(x, sig)
    if not unit:
        return number
    if "가" <= unit[0] <= "힣" and number[-1:].isdigit():
        return f"{number}{unit}"
    return f"{number} {unit}"
