"""The course's one answer parser: typed answers with units and Korean number words.

A student types an answer to a numeric exercise as they would write it on paper: ``"30분"``,
``"89.2억 토큰"``, ``"1.2만 원"``, ``"3천만 원"``, ``"1,234"``, ``"86.1%"``, ``"₩5,000"``,
``"1시간 30분"``. :func:`parse_quantity` returns the value in the unit the question asks for
(``parse_quantity("30분", "h") == 0.5``); :func:`read_quantity` also says what it understood,
for the checker's feedback ("30분 = 0.5 h로 읽었습니다", formatted by ``labkit.ui.exercises``).

Rules
-----
- Korean large-number words multiply what precedes them: 만 = 10^4, 억 = 10^8, 조 = 10^12,
  optionally after 십/백/천 (``"3천만"`` = 3 × 10^3 × 10^4); groups add up in decreasing order
  (``"1억 2천만"`` = 1.2 × 10^8). Source: 표준국어대사전, "만", "억", "조" (the 10^4 grouping).
- A bare number (no unit, no number word) is in the unit asked for, multiplier included
  (``parse_quantity("89.2", "억 토큰") == 89.2``).
- A bare fraction strictly between 0 and 1 given to a ``%`` question is read as a ratio
  (``parse_quantity("0.861", "%") == 86.1``) and :attr:`Reading.ratio` says so.
- Words of approximation are read past: a leading 약, 대략, 거의, 한, 대충, 얼추, 어림잡아,
  "about", "~" or "≈" before the number and a trailing 쯤, 정도, 가량, 남짓 or 내외 after it
  (``"약 264일"``, ``"30분쯤"``, ``"264일 정도"``): a student estimating writes them.
- A value whose size is :data:`MAX_MAGNITUDE` or more in the asked unit (``"1e308"``) is
  refused: no answer of the course is that large, and echoing it would print 309 digits.
- Units convert within one dimension only: time (h, 분, 초, 일, 주, 년 = 8,760 h), counts
  (개, 장, 대, 토큰, GPU …), percent, 배, power (W, kW, MW), energy (Wh, kWh, MWh), won,
  dollars. Won and dollars never convert into each other (the exchange rate is part of the
  question).
- A count names what it counts where its counter word does: tokens (토큰), devices (장, 대,
  GPU), people (명), racks (랙), occurrences (회, 번). "89.2억 토큰" typed for a question in 장
  is refused (reason ``"kind"``: "토큰 수가 아니라 GPU·서버 장수(대수)를 물었습니다"), not read
  as 89.2억 GPUs and graded wrong. 개, the general counter, fits any count; a question asked
  in 개 takes any counter but 토큰.

Errors are :class:`AnswerError`, a ``ValueError`` whose message is Korean and whose
``reason`` (``"empty"``, ``"too_long"``, ``"no_number"``, ``"two_numbers"``, ``"unit"``,
``"mismatch"``, ``"finite"``, ``"too_big"``) lets the UI show its own catalog text.

Used in: every lesson's exercises (``labkit.ui.exercises``).
"""

from __future__ import annotations

import itertools
import math
import re
import unicodedata
from dataclasses import dataclass
from fractions import Fraction

__all__ = ["KIND_NAMES", "MAX_CHARS", "MAX_MAGNITUDE", "Amount", "AnswerError", "Reading",
           "parse_amount", "parse_quantity", "read_quantity", "sibling_units"]

# Korean number words: 표준국어대사전 (만 10^4, 억 10^8, 조 10^12; 십 10, 백 100, 천 1000).
# Exact arithmetic (fractions) so that "89.2억" is 8.92e9 and "0.861" to a % question is 86.1,
# not their nearest binary neighbours times a rounded factor.
_BIG = {"만": Fraction(10**4), "억": Fraction(10**8), "조": Fraction(10**12)}
_SMALL = {"십": Fraction(10), "백": Fraction(100), "천": Fraction(1000)}
_ONE = Fraction(1)
_MAX_EXPONENT = 400  # beyond any float; also keeps Fraction("1e999999999") from hanging
MAX_CHARS = 200  # an answer is a number and a unit; a browser can send a megabyte
#: Answers at or beyond this size (1경 = 10^16 in the asked unit's base) are refused: the
#: largest figures of the course are yearly token counts and bills, below 1조 = 10^12.
MAX_MAGNITUDE = 10**16

# alias (casefolded) -> (dimension, factor to the dimension's base unit)
_UNITS: dict[str, tuple[str, Fraction]] = {}


def _add(dimension: str, factor: float | Fraction, *aliases: str) -> None:
    for alias in aliases:
        _UNITS[alias.casefold()] = (dimension, Fraction(factor))


_add("time", 1, "h", "hr", "hrs", "hour", "hours", "시간")
_add("time", Fraction(1, 60), "분", "min", "mins", "minute", "minutes")
_add("time", Fraction(1, 3600), "초", "s", "sec", "secs", "second", "seconds")
_add("time", 24.0, "일", "d", "day", "days", "날")
# a week and a (common) year: 7 x 24 h and 365 x 24 h, as the course counts a year (8,760 h,
# lesson 01); a month has no one length and stays unread (the message names the unit)
_add("time", 168.0, "주", "주일", "week", "weeks")
_add("time", 8760.0, "년", "해", "year", "years")
_add("count", 1.0, "개", "장", "대", "명", "회", "번", "토큰", "token", "tokens", "gpu", "gpus",
     "랙", "rack", "racks")
# What a count counts, where a counter word names it: 89.2억 토큰 is not 89.2억 GPUs. 개 is the
# general counter (no kind): "89억 개" of tokens and "4개" of GPUs are both Korean usage, but a
# question asked in 개 counts things, not tokens. (표준국어대사전: 장 for flat things such as
# cards, 대 for machines, 명 for people, 회/번 for occurrences.)
_KINDS: dict[str, str] = {
    **dict.fromkeys(("토큰", "token", "tokens"), "tokens"),
    **dict.fromkeys(("장", "대", "gpu", "gpus"), "devices"),
    "명": "people",
    **dict.fromkeys(("랙", "rack", "racks"), "racks"),
    **dict.fromkeys(("회", "번"), "events"),
}
#: What each kind of count is called in a message ("토큰 수가 아니라 GPU 장수를 물었습니다").
KIND_NAMES = {"tokens": "토큰 수", "devices": "GPU·서버 장수(대수)", "people": "사람 수",
              "racks": "랙 수", "events": "횟수", "things": "개수"}
_add("percent", 1.0, "%", "퍼센트", "프로", "pct")
_add("times", 1.0, "배", "x", "×")
_add("power", 1.0, "w", "와트")
_add("power", 1000, "kw", "킬로와트")
_add("power", 10**6, "mw", "메가와트")
_add("energy", 1, "wh")
_add("energy", 1000, "kwh", "킬로와트시")
_add("energy", 10**6, "mwh")
_add("krw", 1.0, "원", "₩", "krw", "won")
_add("usd", 1.0, "달러", "$", "usd", "dollar", "dollars", "불")

# The units a student most likely meant, per dimension (the names the lessons print).
_DISPLAY = {"time": ("h", "분", "초", "일"), "power": ("W", "kW", "MW"),
            "energy": ("Wh", "kWh", "MWh")}

_NUM = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?"
_GROUP = re.compile(rf"\s*(?P<num>{_NUM})?\s*(?P<small>[십백천])?\s*(?P<big>[만억조])?")
_PREFIX = re.compile(r"\s*(?P<sign>[+-])?\s*(?P<cur>₩|US\$|\$)?\s*")
_UNIT_TEXT = re.compile(r"[^\d.]*")
# 약/대략/거의/한 ... before a number, 쯤/정도/가량 ... at the end: an estimate, not part of it
_ABOUT = re.compile(r"^(?:약|대략|거의|한|대충|얼추|어림잡아|about|approx\.?|around|roughly|~|≈)"
                    r"\s*(?=[+\-₩$.\d십백천만억조]|US\$)", re.IGNORECASE)
_ABOUT_END = re.compile(r"\s*(?:쯤|정도|가량|남짓|내외|안팎)\s*$")
_MINUS = str.maketrans({"\u2212": "-", "\u2013": "-", "\uff0d": "-"})

_MESSAGES = {
    "empty": "답이 비어 있습니다. 숫자를 입력하세요 (예: 12.5).",
    "no_number": "숫자를 찾지 못했습니다 (입력: {text}). 예: 12.5, 30분, 1.2만 원.",
    "two_numbers": "숫자가 둘 이상 있습니다 (입력: {text}). 답은 하나만 적으세요.",
    "unit": "알 수 없는 단위입니다: {typed} (입력: {text}). 숫자만 적으면 {unit} 단위로 읽습니다.",
    "mismatch": "이 문제는 {unit} 단위로 답합니다. {typed} 단위는 바꿀 수 없습니다 (입력: {text}).",
    "kind": ("{typed_what}가 아니라 {asked_what}를 물었습니다. {unit} 단위로 답하세요 "
             "(입력: {text})."),
    "finite": "너무 크거나 유한하지 않은 값입니다 (입력: {text}).",
    "too_big": "값이 너무 큽니다 (입력: {text}). 이 과정의 답은 1경(10,000조)보다 작습니다.",
    "too_long": "답이 너무 깁니다. 숫자 하나와 단위만 적으세요 (입력: {text}…).",
}


class AnswerError(ValueError):
    """A typed answer that cannot be read in the unit asked for.

    Attributes
    ----------
    reason : str
        ``"empty"``, ``"too_long"`` (over :data:`MAX_CHARS`), ``"no_number"``,
        ``"two_numbers"``, ``"unit"`` (unknown unit),
        ``"mismatch"`` (a known unit of another dimension), ``"kind"`` (a count of another
        thing: tokens typed for a GPU question), ``"finite"`` or ``"too_big"``
        (:data:`MAX_MAGNITUDE` or more).
    text : str
        What was typed (cut to 40 characters).
    unit : str
        The unit asked for.
    typed : str
        The unit as typed, where the reason is about a unit, else ``""``.
    asked_what, typed_what : str
        For ``"kind"``: what the question counts and what the answer counted, in Korean
        (:data:`KIND_NAMES`: ``"GPU·서버 장수(대수)"``, ``"토큰 수"``), else ``""``.
    """

    def __init__(self, reason: str, text: str, unit: str, typed: str = "", *,
                 asked_what: str = "", typed_what: str = "") -> None:
        self.reason = reason
        self.text = text[:40]
        self.unit = unit
        self.typed = typed
        self.asked_what = asked_what
        self.typed_what = typed_what
        super().__init__(_MESSAGES[reason].format(text=self.text, unit=unit or "숫자",
                                                  typed=typed, asked_what=asked_what,
                                                  typed_what=typed_what))


@dataclass(frozen=True)
class Amount:
    """A typed answer split into number and unit, before any conversion.

    Attributes
    ----------
    number : float
        The number with its Korean number words applied (``"1.2만 원"`` -> 12000.0).
    unit : str
        The unit as typed, stripped (``"원"``), ``""`` when none.
    scaled : bool
        True when a number word (만, 억, 조, 십, 백, 천) was used.
    """

    number: float
    unit: str
    scaled: bool
    exact: Fraction


@dataclass(frozen=True)
class Reading:
    """What :func:`read_quantity` understood.

    Attributes
    ----------
    text : str
        The answer as typed, stripped.
    value : float
        The value in the unit asked for.
    unit : str
        The unit asked for.
    typed_unit : str
        The unit as typed (``""`` when none).
    ratio : bool
        True when a bare fraction was read as a percentage (0.861 -> 86.1 %).
    literal : float
        The number as typed in the asked unit before the ratio rule (equals ``value``
        unless ``ratio``); a checker may accept it too (0.8 meaning 0.8 %).
    """

    text: str
    value: float
    unit: str
    typed_unit: str
    ratio: bool
    literal: float


def _normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", str(text)).translate(_MINUS).strip()


def _without_about(s: str) -> str:
    """``s`` without its words of approximation ("약 264일 정도" -> "264일")."""
    if len(s) > MAX_CHARS:
        return s  # refused as too long by the caller, not scanned
    bare = _ABOUT_END.sub("", _ABOUT.sub("", s, count=1)).strip()
    return bare or s  # "쯤" alone: no number (reported as such), not an empty answer


def _fraction(num: str) -> Fraction | None:
    """A typed number exactly; None when its exponent is beyond any float."""
    mantissa, _, exponent = num.replace(",", "").lower().partition("e")
    if (exponent and abs(int(exponent)) > _MAX_EXPONENT) or len(mantissa) > _MAX_EXPONENT:
        return None
    return Fraction(mantissa) * Fraction(10) ** int(exponent or 0)


def _number_words(text: str, start: int) -> tuple[Fraction | None, bool, int] | None:
    """Read one amount (``"1억 2천만"``) at ``start``: (value, scaled?, end) or None.

    The value is None when a part is beyond any float (the caller reports "finite").
    """
    total: Fraction | None = Fraction(0)
    scaled, pos, last_big, found = False, start, Fraction(10**30), False
    while True:
        m = _GROUP.match(text, pos)
        if m is None or not (m["num"] or m["small"] or m["big"]):
            break
        big = _BIG[m["big"]] if m["big"] else _ONE
        if found and (last_big == _ONE or big >= last_big):
            break  # "30 40" or "2만 3만": a second number, not a part of this one
        num = _fraction(m["num"]) if m["num"] else _ONE
        if num is None or total is None:
            total = None
        else:
            total += num * (_SMALL[m["small"]] if m["small"] else _ONE) * big
        scaled = scaled or bool(m["small"] or m["big"])
        found, last_big, pos = True, big, m.end()
        if big == _ONE:
            break
    return (total, scaled, pos) if found else None


def _to_float(value: Fraction | None, raw: str, unit: str) -> float:
    try:
        out = float(value) if value is not None else math.inf
    except OverflowError:
        out = math.inf
    if not math.isfinite(out):
        raise AnswerError("finite", raw, unit)
    return out


def parse_amount(text: str) -> Amount:
    """Split a typed answer into its number (number words applied) and its unit as typed.

    Parameters
    ----------
    text : str
        The answer as typed (``"1.2만 원"``, ``"₩5,000"``, ``"-3 h"``).

    Returns
    -------
    Amount
        The number, the unit as typed (``""`` when none) and whether a number word was used.

    Raises
    ------
    AnswerError
        ``"empty"``, ``"too_long"``, ``"no_number"``, ``"two_numbers"`` or ``"finite"``.
        A compound such as ``"1시간 30분"`` is two amounts: see :func:`read_quantity`.
    """
    amounts = _amounts(_without_about(_normalize(text)), str(text), "")
    if len(amounts) > 1:
        raise AnswerError("two_numbers", str(text), "")
    return amounts[0]


def _amounts(s: str, raw: str, unit: str) -> list[Amount]:
    """Every (number, unit) segment of ``s``; raises on empty, no number, non-finite."""
    if not s:
        raise AnswerError("empty", raw, unit)
    if len(s) > MAX_CHARS:
        raise AnswerError("too_long", raw, unit)
    prefix = _PREFIX.match(s)
    assert prefix is not None  # the pattern matches the empty string
    sign = -1 if prefix["sign"] == "-" else 1
    currency = {"₩": "원", "$": "달러", "US$": "달러"}.get(prefix["cur"] or "", "")
    pos, out = prefix.end(), list[Amount]()
    while pos < len(s):
        read = _number_words(s, pos)
        if read is None:
            if not out:
                raise AnswerError("no_number", raw, unit)
            raise AnswerError("two_numbers", raw, unit)
        number, scaled, pos = read
        m = _UNIT_TEXT.match(s, pos)
        assert m is not None
        typed, pos = m.group().strip(), m.end()
        if currency and typed and typed != currency:
            raise AnswerError("two_numbers", raw, unit)
        exact = sign * number if number is not None else None
        out.append(Amount(_to_float(exact, raw, unit), typed or currency, scaled,
                          exact if exact is not None else Fraction(0)))
        sign = 1
    if not out:
        raise AnswerError("no_number", raw, unit)
    return out


def _kind(unit: str) -> str | None:
    """What a count unit counts (:data:`_KINDS`), None for 개 and non-count units."""
    return _KINDS.get(_normalize(unit).casefold())


def _check_kind(amount: Amount, raw: str, unit: str) -> None:
    """Refuse a count of one thing typed for a question counting another (tokens for GPUs).

    The typed 개 fits any count; a question asked in 개 counts things, not tokens.
    """
    asked_unit = _normalize(unit)
    if asked_unit[:1] in _BIG and len(asked_unit) > 1:
        asked_unit = asked_unit[1:].strip()
    asked, typed = _kind(asked_unit), _kind(amount.unit)
    if asked_unit.casefold() == "개":
        asked = "things"
    if typed is None or asked is None or typed == asked or (asked == "things"
                                                            and typed != "tokens"):
        return
    raise AnswerError("kind", raw, unit, amount.unit, asked_what=KIND_NAMES[asked],
                      typed_what=KIND_NAMES[typed])


def _asked(unit: str) -> tuple[Fraction, str | None, Fraction]:
    """The asked unit as (multiplier, dimension or None for a bare number, factor)."""
    u = _normalize(unit)
    mult = _ONE
    if u[:1] in _BIG and u[1:2] in ("", " ") and len(u) > 1:
        mult, u = _BIG[u[0]], u[1:].strip()
    if not u:
        return mult, None, _ONE
    if u.casefold() not in _UNITS:
        raise ValueError(f"labkit.answers: unknown asked unit {unit!r}")  # a lesson's bug
    dimension, factor = _UNITS[u.casefold()]
    return mult, dimension, factor


def _in_asked(amount: Amount, raw: str, unit: str,
              asked: tuple[Fraction, str | None, Fraction]) -> Fraction:
    """One segment's value in the asked unit, exactly."""
    mult, dimension, factor = asked
    if not amount.unit:
        return amount.exact / mult if amount.scaled else amount.exact
    known = _UNITS.get(amount.unit.casefold())
    if known is None:
        raise AnswerError("unit", raw, unit, amount.unit)
    typed_dimension, typed_factor = known
    if dimension is None and typed_dimension == "percent":
        return amount.exact / 100  # "70.7%" to a unitless (fraction) question
    if typed_dimension != dimension:
        raise AnswerError("mismatch", raw, unit, amount.unit)
    if dimension == "count":
        _check_kind(amount, raw, unit)
    return amount.exact * typed_factor / factor / mult


def read_quantity(text: str, unit: str) -> Reading:
    """Read a typed answer in the unit a question asks for, and say how it was read.

    Parameters
    ----------
    text : str
        The answer as typed (``"30분"``, ``"89억 토큰"``, ``"0.861"``, ``"1시간 30분"``).
    unit : str
        The unit the question asks for, as the lesson writes it (``"h"``, ``"억 토큰"``,
        ``"%"``, ``""`` for a bare number).

    Returns
    -------
    Reading
        The value in ``unit`` and what was understood.

    Raises
    ------
    AnswerError
        A ``ValueError`` with a Korean message when the answer cannot be read in ``unit``:
        empty, no number, two numbers, an unknown unit, a unit of another dimension, a
        non-finite value, or one of :data:`MAX_MAGNITUDE` or more.
    ValueError
        If ``unit`` itself is not a unit this module knows (a lesson's bug, not the student's).
    """
    asked = _asked(unit)
    raw = str(text)
    amounts = _amounts(_without_about(_normalize(raw)), raw, unit)
    if len(amounts) > 1:
        dims = [_UNITS.get(a.unit.casefold(), ("", Fraction(0))) for a in amounts]
        factors = [f for _, f in dims]
        if (not all(a.unit for a in amounts) or len({d for d, _ in dims}) != 1
                or any(b >= a for a, b in itertools.pairwise(factors))):
            raise AnswerError("two_numbers", raw, unit)  # "30 40", not "1시간 30분"
    exact = sum((_in_asked(a, raw, unit, asked) for a in amounts), Fraction(0))
    first = amounts[0]
    ratio = (asked[1] == "percent" and len(amounts) == 1 and not first.unit
             and not first.scaled and 0 < abs(exact) < 1)
    typed_unit = " ".join(a.unit for a in amounts if a.unit)
    value = _to_float(exact * 100 if ratio else exact, raw, unit)
    if abs(exact * asked[0]) >= MAX_MAGNITUDE:  # exact: 10^16 - 1 is still read
        raise AnswerError("too_big", raw, unit)
    return Reading(_normalize(raw), value, unit, typed_unit, ratio, _to_float(exact, raw, unit))


def sibling_units(unit: str) -> tuple[str, ...]:
    """Return the other units of ``unit``'s dimension a bare answer may have meant.

    ``sibling_units("h") == ("분", "초", "일")``: "30" to an hours question may be 30분.
    Empty for dimensions with one unit (%, 배, 원, counts) and for a bare number.

    Raises
    ------
    ValueError
        If ``unit`` is not a unit this module knows.
    """
    mult, dimension, factor = _asked(unit)
    return tuple(u for u in _DISPLAY.get(dimension or "", ())
                 if mult != _ONE or _UNITS[u.casefold()][1] != factor)


def parse_quantity(text: str, unit: str) -> float:
    """Return a typed answer's value in the unit asked for.

    ``parse_quantity("30분", "h") == 0.5``; ``parse_quantity("89.2억 토큰", "토큰") == 8.92e9``;
    ``parse_quantity("0.861", "%") == 86.1`` (a ratio to a % question). See :func:`read_quantity`
    for the parameters and the errors raised (``ValueError`` with a Korean message).
    """
    return read_quantity(text, unit).value
