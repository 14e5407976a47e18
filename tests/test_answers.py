"""labkit.answers: the course's answer parser (issue 17's examples, properties, bad input)."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from labkit.answers import (
    AnswerError,
    parse_amount,
    parse_quantity,
    read_quantity,
    sibling_units,
)


@pytest.mark.parametrize(("text", "unit", "value"), [
    # issue 17, verbatim: the answers the old parser rejected or misread
    ("89.2억", "토큰", 8.92e9),
    ("89.2억 토큰", "토큰", 8.92e9),
    ("89억 토큰", "토큰", 8.9e9),
    ("100 시간", "h", 100),
    ("4개", "개", 4),
    ("30분", "h", 0.5),  # not 30 h
    ("1년쯤", "일", 365),  # the trial: 년 was unknown to a days question (a year is 8,760 h)
    ("2주", "일", 14),
    ("0.861", "%", 86.1),  # a ratio to a % question
    ("86.1%", "%", 86.1),
    # lesson 05 asks in 억 토큰: a bare number is already in 억, a number word is not
    ("89.2", "억 토큰", 89.2),
    ("89.2억", "억 토큰", 89.2),
    ("8,920,000,000 토큰", "억 토큰", 89.2),
    # number words and separators
    ("1,234", "원", 1234),
    ("1.2만 원", "원", 12_000),
    ("3천만 원", "원", 30_000_000),
    ("1억 2천만", "원", 120_000_000),
    ("2조", "원", 2e12),
    ("만 원", "원", 10_000),
    ("₩5,000", "원", 5000),
    ("813,192원", "원", 813_192),
    ("$1.99", "달러", 1.99),
    ("3 달러", "달러", 3),
    # time
    ("90 min", "h", 1.5),
    ("1시간 30분", "h", 1.5),
    ("2일", "h", 48),
    ("7200 s", "h", 2),
    ("0.5 h", "분", 30),
    ("53.7분", "분", 53.7),
    # power and energy
    ("30 kW", "kW", 30),
    ("30000 W", "kW", 30),
    ("1.5 MWh", "kWh", 1500),
    # counts, ratios, percentages elsewhere
    ("4장", "장", 4),
    ("8 GPU", "개", 8),
    ("1.125배", "배", 1.125),
    ("70.7%", "", 0.707),
    ("12.5", "", 12.5),
    ("86.1 퍼센트", "%", 86.1),
    ("１２", "개", 12),  # full-width digits (NFKC)
    ("−3", "h", -3),  # U+2212 minus
    # an estimate says so (issue 17's trial: "약 264일" was refused)
    ("약 264일", "일", 264),
    ("약264일", "일", 264),
    ("대략 30분", "h", 0.5),
    ("거의 90%", "%", 90),
    ("한 20개", "개", 20),
    ("264일쯤", "일", 264),
    ("264일 정도", "일", 264),
    ("약 1.2만 원 정도", "원", 12_000),
    ("30분가량", "분", 30),
    ("~5배", "배", 5),
    ("about 3 h", "h", 3),
    ("약 -3", "h", -3),
    ("약 천만 원", "원", 10_000_000),
    ("약 ₩5,000", "원", 5000),
    ("9" * 15, "", 999_999_999_999_999),  # just under 1경: still read
    # a count question takes its own counter, the general 개, or a bare number (issue 17)
    ("4장", "장", 4),
    ("4개", "장", 4),
    ("4", "장", 4),
    ("4대", "장", 4),
    ("4 GPU", "장", 4),
    ("30명", "명", 30),
    ("30개", "명", 30),
    ("89억 개", "토큰", 8.9e9),  # tokens are counted in 개 too
    ("89.2억", "억 토큰", 89.2),
    ("2랙", "개", 2),
])
def test_parse_quantity_reads_answers_as_written(text: str, unit: str, value: float) -> None:
    assert parse_quantity(text, unit) == value


def test_a_ratio_to_a_percent_question_is_flagged() -> None:
    reading = read_quantity("0.861", "%")
    assert (reading.value, reading.ratio, reading.literal) == (86.1, True, 0.861)
    assert not read_quantity("86.1", "%").ratio
    assert not read_quantity("0.861 %", "%").ratio  # a typed % is a percentage, however small


def test_reading_says_what_was_typed() -> None:
    reading = read_quantity(" 30분 ", "h")
    assert (reading.text, reading.typed_unit) == ("30분", "분")
    assert (reading.value, reading.unit) == (0.5, "h")
    reading = read_quantity("약 264일 정도", "일")  # the estimate words stay in what was typed
    assert (reading.text, reading.typed_unit, reading.value) == ("약 264일 정도", "일", 264)


@pytest.mark.parametrize(("text", "unit", "reason"), [
    ("", "h", "empty"),
    ("   ", "h", "empty"),
    ("모름", "h", "no_number"),
    ("abc", "h", "no_number"),
    ("nan", "h", "no_number"),
    ("inf", "%", "no_number"),
    ("30 40", "h", "two_numbers"),
    ("1.2.3", "h", "two_numbers"),
    ("1,2", "h", "two_numbers"),  # a decimal comma is not a thousands separator
    ("2만 3만", "원", "two_numbers"),
    ("30분 1시간", "h", "two_numbers"),  # compounds go from large to small
    ("5 foo", "h", "unit"),
    ("5 원", "h", "mismatch"),
    ("$5", "원", "mismatch"),  # dollars never become won without the question's rate
    ("30분", "%", "mismatch"),
    ("1e400", "h", "finite"),
    ("1e999999999", "h", "finite"),  # refused at once, not computed
    ("1e308 만", "h", "finite"),  # finite as typed, not once 만 applies
    ("1e308", "", "too_big"),  # issue 17: echoed back as 309 digits, accepted as a prediction
    ("1e16", "원", "too_big"),  # 1경: past every figure of the course
    ("-1e16", "h", "too_big"),
    ("1e8", "억 토큰", "too_big"),  # 10^8 x 억 tokens = 10^16 tokens
    ("1e15 일", "분", "too_big"),  # too big in the asked unit (1.44 x 10^18 분)
    ("9" * 199, "h", "too_big"),
    ("약", "일", "no_number"),  # an estimate word alone is no answer
    ("한 시간", "h", "no_number"),  # 한 is "one" here, not "about": read as written, refused
    ("쯤", "일", "no_number"),
    ("9" * 201, "h", "too_long"),  # a browser can send a megabyte: refused before parsing
    # issue 17: a token amount for a GPU question was read as 89.2억 GPUs and graded wrong
    ("89.2억 토큰", "장", "kind"),
    ("8 GPU", "토큰", "kind"),
    ("4명", "장", "kind"),
    ("4장", "명", "kind"),
    ("3토큰", "개", "kind"),  # a question in 개 counts things, not tokens
    ("2회", "랙", "kind"),
    ("10장", "억 토큰", "kind"),
])
def test_bad_answers_raise_a_korean_value_error(text: str, unit: str, reason: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_quantity(text, unit)
    assert isinstance(info.value, AnswerError) and info.value.reason == reason
    assert any("가" <= ch <= "힣" for ch in str(info.value)), str(info.value)


def test_a_count_of_another_thing_says_what_was_asked() -> None:
    with pytest.raises(AnswerError) as info:
        parse_quantity("89.2억 토큰", "장")
    assert str(info.value).startswith("토큰 수가 아니라 GPU·서버 장수(대수)를 물었습니다.")
    assert (info.value.asked_what, info.value.typed_what) == ("GPU·서버 장수(대수)", "토큰 수")


def test_long_but_readable_numbers_are_exact() -> None:
    assert parse_quantity("9" * 15 + ".5", "h") == 999_999_999_999_999.5
    assert parse_quantity("0." + "0" * 190 + "1", "h") == 1e-191


def test_an_unknown_asked_unit_is_the_lessons_bug() -> None:
    with pytest.raises(ValueError, match="asked unit"):
        parse_quantity("3", "furlongs")


def test_sibling_units_are_the_other_units_of_the_dimension() -> None:
    assert sibling_units("h") == ("분", "초", "일")
    assert sibling_units("kW") == ("W", "MW")
    assert sibling_units("%") == sibling_units("") == sibling_units("억 토큰") == ()


def test_parse_amount_keeps_the_typed_unit() -> None:
    amount = parse_amount("1.2만 원")
    assert (amount.number, amount.unit, amount.scaled) == (12_000, "원", True)


def _korean(n: int) -> str:
    """n written with 조/억/만 groups, as a student writes it ("1억 2,345만 6,789")."""
    parts = []
    for word, size in (("조", 10**12), ("억", 10**8), ("만", 10**4)):
        group, n = divmod(n, size)
        if group:
            parts.append(f"{group:,}{word}")
    if n or not parts:
        parts.append(f"{n:,}")
    return " ".join(parts)


@given(st.integers(min_value=0, max_value=10**16 - 1))
def test_korean_number_words_round_trip(n: int) -> None:
    assert parse_quantity(_korean(n) + " 원", "원") == float(n)
    assert parse_quantity(_korean(n), "원") == float(n)


@given(st.integers(min_value=1, max_value=99_999), st.integers(min_value=0, max_value=9))
def test_decimal_man_and_eok_round_trip(whole: int, tenth: int) -> None:
    """"12.3만" is 123,000 and "12.3억" is 1,230,000,000 exactly (no float drift)."""
    assert parse_quantity(f"{whole}.{tenth}만", "원") == (whole * 10 + tenth) * 1000
    assert parse_quantity(f"{whole}.{tenth}억 토큰", "억 토큰") == float(f"{whole}.{tenth}")


@given(st.integers(min_value=0, max_value=10**6), st.sampled_from(["h", "분", "초"]))
def test_time_units_convert_both_ways(minutes: int, unit: str) -> None:
    per_minute = {"h": 1 / 60, "분": 1.0, "초": 60.0}[unit]
    assert parse_quantity(f"{minutes}분", unit) == pytest.approx(minutes * per_minute, rel=1e-15)


#: One unit per dimension or kind of count, each read back in itself; any two of different
#: rows cannot be each other (the parser's oracle: these are different things).
UNITS_APART = ["원", "달러", "토큰", "장", "명", "랙", "회", "h", "kW", "kWh", "배"]


@given(st.integers(min_value=0, max_value=10**15), st.sampled_from(UNITS_APART),
       st.sampled_from(["", " "]))
def test_any_number_in_korean_words_reads_back_in_its_unit(n: int, unit: str,
                                                            gap: str) -> None:
    assert parse_quantity(f"{_korean(n)}{gap}{unit}", unit) == float(n)
    assert parse_quantity(_korean(n), unit) == float(n)  # a bare number is in the asked unit


@given(st.integers(min_value=1, max_value=10**12), st.sampled_from(UNITS_APART),
       st.sampled_from(UNITS_APART))
def test_a_unit_of_another_dimension_raises_in_korean(n: int, typed: str, asked: str) -> None:
    assume(typed != asked)
    with pytest.raises(ValueError) as info:
        parse_quantity(f"{_korean(n)} {typed}", asked)
    assert isinstance(info.value, AnswerError) and info.value.reason in ("mismatch", "kind")
    assert any("가" <= ch <= "힣" for ch in str(info.value)), str(info.value)
