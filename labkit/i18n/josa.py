"""Korean particles (조사) that follow the word before them: 이/가, 을/를, 은/는, 와/과, 으로/로.

Most particles have one form after a final consonant (받침) and one after a vowel: 책이/사과가,
책을/사과를. 으로/로 also takes 로 after ㄹ (건물로). The choice follows how the word is *read*,
so a catalog template cannot fix it when the word comes from data ("{profile}을(를)" reads as
machine output); :func:`attach` picks it. ``labkit.i18n.t`` offers it as a format spec:
``"{profile:을/를} 놓았습니다"`` -> "3g.40gb를 놓았습니다".

How the end of a text is read (decided here; sources in brackets):

- a Hangul syllable: its own final consonant, ``(code - 0xAC00) % 28`` [Unicode 15.0 §3.12,
  "Conjoining Jamo Behavior": S = SBase + (L·VCount + V)·TCount + T, TCount = 28];
- a number: read in Sino-Korean, as Koreans read figures: the last non-zero digit (일, 이, 삼,
  사, 오, 육, 칠, 팔, 구), or for trailing zeros the place word (십, 백, 천, 만, 억, 조, 경):
  3 -> 삼 (을), 10 -> 십 (을), 1,000 -> 천 (을), 100,000,000 -> 억 (을), 2 -> 이 (를);
  decimals are read digit by digit after the point (1.5 -> 일 점 오, 를); 0 -> 영 [표준국어대사전
  의 수사 읽기];
- a unit after a number, by its Korean name: h 시간, min 분 (ㄴ); s 초, ms 밀리초, % 퍼센트, GB/GiB
  기가바이트, MB/MiB, TB, W 와트, kW 킬로와트, kWh 킬로와트시, Hz (vowel) [국립국어원 표준 단위
  읽기, e.g. "720 h" is said 칠백이십 시간]; so "720 h" takes 이/을 and "80 GB" takes 가/를;
- an acronym in capitals, letter by letter by the letters' Korean names [국립국어원, 외래어 표기
  용례의 알파벳 이름: 에이, 비, 씨, 디, 이, 에프, 지, 에이치, 아이, 제이, 케이, 엘, 엠, 엔, 오,
  피, 큐, 알, 에스, 티, 유, 브이, 더블유, 엑스, 와이, 제트]: GPU 지피유 -> "GPU가", SM 에스엠 ->
  "SM을", ETTR -> "ETTR을", NVML -> "NVML을", MIG -> "MIG를";
- a lower-case English word, by the loanword rules [외래어 표기법, 문화체육관광부 고시
  제2017-14호, 제3장 제1절 영어의 표기 제1항·제6항]: a final voiceless stop after a vowel
  is a 받침 (-p ㅂ, -t ㅅ, -k/-ck ㄱ: goodput 굿풋 -> "goodput을"), a final voiced stop or
  fricative takes 으 (-b, -d, -g, -s, -f, -v, -z, -sh, -ch, -th: pod 포드 -> 를), final -l/-le
  is ㄹ, -m/-me ㅁ, -n/-ne ㄴ, -ng ㅇ; anything else ends in a vowel (server 서버, -r, -e);
  a unit at the end of a word is read as a unit: "3g.40gb" ends in 기가바이트 -> "3g.40gb를";
- a closing parenthesis: the particle agrees with the word *before* the parentheses
  (가동률(utilization)이) [국립국어원 한국어 어문 규범, 문장 부호 제9항 소괄호 해설]; closing
  quotes and spaces are skipped.

When the end cannot be read (an emoji, an empty text), :func:`attach` writes both forms the old
way, "(이)가", rather than guess.
"""

from __future__ import annotations

import re

__all__ = ["PARTICLES", "PARTICLE_NAMES", "attach", "final_consonant", "particle"]

#: particle -> (form after a final consonant, form after a vowel). Either form, or "A/B" in
#: either order, names the particle.
PARTICLES: dict[str, tuple[str, str]] = {
    "이/가": ("이", "가"),
    "을/를": ("을", "를"),
    "은/는": ("은", "는"),
    "과/와": ("과", "와"),
    "으로/로": ("으로", "로"),
    "이나/나": ("이나", "나"),
    "이라/라": ("이라", "라"),
    "이며/며": ("이며", "며"),
    "이랑/랑": ("이랑", "랑"),
    "아/야": ("아", "야"),
    "이에요/예요": ("이에요", "예요"),
    "이었/였": ("이었", "였"),
    "으로서/로서": ("으로서", "로서"),
    "으로써/로써": ("으로써", "로써"),
}
_NAMES: dict[str, tuple[str, str]] = {}
for _key, _forms in PARTICLES.items():
    for _name in (_key, f"{_forms[1]}/{_forms[0]}", *_forms):
        _NAMES.setdefault(_name, _forms)

#: Every name a particle can be given by (a form, or both forms in either order).
PARTICLE_NAMES = frozenset(_NAMES)

_RIEUL = 8  # ㄹ as a final consonant (jongseong index)
_NONE = 0
# Final consonants by jongseong index (Unicode order): ㄱ 1, ㄴ 4, ㄹ 8, ㅁ 16, ㅂ 17, ㅅ 19, ㅇ 21
_G, _N, _L, _M, _B, _S, _NG = 1, 4, 8, 16, 17, 19, 21

#: Sino-Korean digit names' final consonants: 영 일 이 삼 사 오 육 칠 팔 구.
_DIGITS = {"0": _NG, "1": _L, "2": _NONE, "3": _M, "4": _NONE, "5": _NONE, "6": _G, "7": _L,
           "8": _L, "9": _NONE}
#: Place words for trailing zeros, by the number of zeros mod 4: 십 백 천; and by groups of
#: four: 만 억 조 경.
_PLACES = {1: _B, 2: _G, 3: _N}
_MYRIADS = {1: _N, 2: _G, 3: _NONE, 4: _NG}
#: Letter names (국립국어원): a..z. 에이 비 씨 디 이 에프 지 에이치 아이 제이 케이 엘 엠 엔 오 피 큐
#: 알 에스 티 유 브이 더블유 엑스 와이 제트.
_LETTERS = {**{c: _NONE for c in "abcdefghijkopqstuvwxy"}, "l": _L, "m": _M, "n": _N, "r": _L,
            "z": _NONE}
#: Units as read after a number (lower case): their Korean names' final consonant.
_UNITS = {"h": _N, "min": _N, "s": _NONE, "ms": _NONE, "gb": _NONE, "gib": _NONE, "mb": _NONE,
          "mib": _NONE, "tb": _NONE, "tib": _NONE, "kb": _NONE, "w": _NONE, "kw": _NONE,
          "kwh": _NONE, "mw": _NONE, "mwh": _NONE, "hz": _NONE, "ghz": _NONE, "mhz": _NONE}
#: Words of the course read otherwise than the rules above: MIG profiles' "+me" (media
#: extensions) and nvidia-smi are said letter by letter (엠이, 에스엠아이).
_WORDS = {"me": _NONE, "smi": _NONE}
_SYMBOLS = {"%": _NONE, "°c": _NONE, "℃": _NONE, "×": _NONE}  # 퍼센트, 도, 배

_NUMBER = re.compile(r"(\d[\d,]*)(?:\.(\d+))?$")
_TAIL = re.compile(r"([A-Za-z]+)$")


def _number(text: str) -> int | None:
    match = _NUMBER.search(text)
    if match is None:
        return None
    whole, decimals = match.group(1).replace(",", ""), match.group(2)
    if decimals:
        return _DIGITS[decimals[-1]]
    stripped = whole.rstrip("0")
    zeros = len(whole) - len(stripped)
    if not stripped:  # 0, 00: 영
        return _DIGITS["0"]
    if zeros == 0:
        return _DIGITS[stripped[-1]]
    if zeros < 4:  # 20 이십, 300 삼백, 4000 사천
        return _PLACES[zeros]
    return _MYRIADS.get(zeros // 4)  # the zero groups below are not read: 10^13 십조, 10^5 십만


def _english(word: str) -> int:
    w = word.lower()
    if word.isupper() or len(word) == 1:  # an acronym (or one letter): letter names
        return _LETTERS[w[-1]]
    for end, final in (("ng", _NG), ("ck", _G), ("le", _L), ("me", _M), ("ne", _N),
                       ("sh", _NONE), ("ch", _NONE), ("th", _NONE)):
        if w.endswith(end):
            return final
    last = w[-1]
    if last in "ptk" and len(w) > 1 and w[-2] in "aeiou":
        return {"p": _B, "t": _S, "k": _G}[last]
    return {"l": _L, "m": _M, "n": _N}.get(last, _NONE)


def final_consonant(text: str) -> int | None:
    """Return how ``text`` ends when read aloud in Korean: the jongseong index of its last
    syllable (0 = no final consonant, 8 = ㄹ, ... in Unicode's order), or None if unknown.

    See the module docstring for the reading rules and their sources.
    """
    s = text.rstrip(" \t\n'\"’”」』]")
    while s.endswith(")") and "(" in s:  # agree with the word before the parentheses
        s = s[:s.rindex("(")].rstrip()
    if not s:
        return None
    last = s[-1]
    if "가" <= last <= "힣":
        return (ord(last) - 0xAC00) % 28
    for symbol, final in _SYMBOLS.items():
        if s.lower().endswith(symbol):
            return final
    if last.isdigit():
        return _number(s)
    tail = _TAIL.search(s)
    if tail is None:
        return None
    word = tail.group(1)
    if word.lower() in _UNITS and s[:tail.start()].rstrip()[-1:].isdigit():
        return _UNITS[word.lower()]
    if word.lower() in _WORDS:
        return _WORDS[word.lower()]
    return _english(word)


def particle(text: str, name: str) -> str:
    """Return the form of particle ``name`` (``"이/가"``, ``"을"``, ``"으로/로"``, ...) that follows
    ``text``; ``"(이)가"`` style when the end of ``text`` cannot be read.

    Raises
    ------
    KeyError
        If ``name`` is not one of :data:`PARTICLES`.
    """
    consonant, vowel = _NAMES[name]
    final = final_consonant(text)
    if final is None:
        return f"({consonant[:-len(vowel)] or consonant}){vowel}" if consonant.endswith(vowel) \
            else f"{consonant}({vowel})"
    if final == _NONE:
        return vowel
    if final == _RIEUL and consonant.startswith("으"):  # 건물로
        return vowel
    return consonant


def attach(text: str, name: str) -> str:
    """Return ``text`` followed by the form of particle ``name`` that fits it: ``"책을"``."""
    return text + particle(text, name)
