"""Korean particles after a word, checked against how the word is read aloud.

The oracle is independent of labkit.i18n.josa: every case is written with its Korean reading,
and the particle follows from the reading's last syllable by Unicode arithmetic (a Hangul
syllable's final consonant is ``(code - 0xAC00) % 28``, 0 = none, 8 = ㄹ; Unicode 15.0 §3.12).
Numbers are read by a Sino-Korean reader written here.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from labkit.i18n import josa, t

PAIRS = {"이/가": ("이", "가"), "을/를": ("을", "를"), "은/는": ("은", "는"),
         "과/와": ("과", "와"), "으로/로": ("으로", "로")}


def oracle(reading: str, pair: str) -> str:
    """The particle after a text whose Korean reading ends in ``reading``'s last syllable."""
    final = (ord(reading.rstrip()[-1]) - 0xAC00) % 28
    consonant, vowel = PAIRS[pair]
    if final == 0 or (final == 8 and pair == "으로/로"):
        return vowel
    return consonant


DIGIT = "영일이삼사오육칠팔구"


def read_number(n: int) -> str:
    """Sino-Korean reading of 0 <= n < 10**20 (만, 억, 조, 경; 일 dropped before 십/백/천/만)."""
    if n == 0:
        return "영"
    words: list[str] = []
    for k, myriad in enumerate(("", "만", "억", "조", "경")):
        group = n // 10 ** (4 * k) % 10_000
        if not group:
            continue
        text = ""
        for place, name in ((1000, "천"), (100, "백"), (10, "십"), (1, "")):
            d = group // place % 10
            if d:
                text += ("" if d == 1 and name else DIGIT[d]) + name
        if myriad == "만" and text == "일":
            text = ""
        words.insert(0, text + myriad)
    return "".join(words)


@given(st.characters(min_codepoint=0xAC00, max_codepoint=0xD7A3),
       st.sampled_from(sorted(PAIRS)))
def test_every_hangul_syllable_takes_the_particle_of_its_final_consonant(
    syllable: str, pair: str
) -> None:
    assert josa.particle("단어" + syllable, pair) == oracle(syllable, pair)


@given(st.integers(min_value=0, max_value=10**19), st.sampled_from(sorted(PAIRS)))
@example(10**13, "과/와")  # 십조와: hypothesis found "십" read where the zero groups end in 조
@example(20 * 10**4, "이/가")  # 이십만이
def test_integers_take_the_particle_of_their_korean_reading(n: int, pair: str) -> None:
    assert josa.particle(str(n), pair) == oracle(read_number(n), pair)
    assert josa.particle(f"{n:,}", pair) == oracle(read_number(n), pair)


def test_the_number_reader_of_this_test_reads_known_figures() -> None:
    assert [read_number(n) for n in (10, 16_384, 100_000_000, 10_000, 2_000_000_003)] == [
        "십", "만육천삼백팔십사", "일억", "만", "이십억삼"]


@pytest.mark.parametrize(("text", "reading"), [
    ("사과", "사과"), ("책", "책"), ("건물", "건물"), ("SM 활동", "활동"),
    ("1.5", "일점오"), ("0.25", "영점이오"), ("3.0", "삼점영"),
    ("720 h", "칠백이십 시간"), ("30 min", "삼십 분"), ("80 GB", "팔십 기가바이트"),
    ("88.9 %", "팔십팔점구 퍼센트"), ("5 s", "오 초"), ("13.3 kW", "십삼점삼 킬로와트"),
    ("3g.40gb", "삼지 점 사십기가바이트"), ("1g.10gb+me", "일지 점 십기가바이트 플러스 엠이"),
    ("7g.80gb", "칠지 점 팔십기가바이트"), ("H100-80GB", "에이치백 팔십기가바이트"),
    ("A30", "에이삼십"), ("GPU", "지피유"), ("SM", "에스엠"), ("ETTR", "이티티알"),
    ("NVML", "엔브이엠엘"), ("DCGM", "디씨지엠"), ("MIG", "엠아이지"), ("PUE", "피유이"),
    ("MTBF", "엠티비에프"), ("goodput", "굿풋"), ("badput", "배드풋"), ("server", "서버"),
    ("pod", "포드"), ("table", "테이블"), ("time", "타임"), ("line", "라인"),
    ("spring", "스프링"), ("book", "북"), ("stop", "스톱"), ("bus", "버스"),
    ("nvidia-smi", "엔비디아 에스엠아이"),
    ("가동률(utilization)", "가동률"), ("'빈 유닛'", "유닛"), ("MIG 장치(MIG device)", "장치"),
    ("2g.20gb@0", "이지 점 이십기가바이트 앳 영"),
])
@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_words_numbers_and_units_take_the_particle_of_how_they_are_read(
    text: str, reading: str, pair: str
) -> None:
    assert josa.particle(text, pair) == oracle(reading, pair)
    assert josa.attach(text, pair) == text + oracle(reading, pair)


@pytest.mark.parametrize("name", ["이/가", "가/이", "이", "가"])
def test_a_particle_is_named_by_either_form_or_both(name: str) -> None:
    assert josa.particle("책", name) == "이" and josa.particle("사과", name) == "가"


@pytest.mark.parametrize(("pair", "written"), [
    ("이/가", "이(가)"), ("을/를", "을(를)"), ("은/는", "은(는)"), ("으로/로", "(으)로")])
def test_an_unreadable_end_writes_both_forms(pair: str, written: str) -> None:
    assert josa.particle("🙂", pair) == written
    assert josa.particle("", pair) == written


def test_an_unknown_particle_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        josa.particle("책", "에게")


def test_catalog_templates_take_particles_as_format_specs() -> None:
    assert t("mig.board.placed", profile="3g.40gb", units="4–7", start=4).startswith(
        "3g.40gb를 유닛")
    assert t("mig.board.model_changed", model="A30").startswith("A30으로 바꿨습니다")
    assert t("mig.board.model_changed", model="NVIDIA H100 80GB").startswith(
        "NVIDIA H100 80GB로 바꿨습니다")
    assert t("observe.signal.busy_on", basis="SM 활동", value="0.8 %").endswith(
        "SM 활동이 0.8 %")
    assert t("error.fraction", limit="0, 100", value=120).startswith("허용 범위 0, 100을")
    assert t("error.fraction", limit="0, 1", value=2).startswith("허용 범위 0, 1을")
    assert t("error.fraction", limit="0, 2", value=3).startswith("허용 범위 0, 2를")
