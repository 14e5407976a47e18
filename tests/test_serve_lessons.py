"""labkit.serve.lessons: every lesson's header is readable and has a main interaction."""

from __future__ import annotations

from pathlib import Path

import pytest

from labkit.serve.lessons import (
    MAIN_INTERACTIONS,
    Lesson,
    MainInteraction,
    discover,
    main_interaction,
    parse_header,
)

LESSONS = discover()
HEADER = """# 03. Goodput 계산 — 운영 개선이 곧 예산이다

**학습 목표**
1. 손실 장부(ledger)로 *goodput*을 계산한다.
2. 차이를 **돈**으로 말한다.

**과정에서의 위치**: 01 → 02

**소요 시간**: 30분
"""


def test_parse_header_reads_title_goals_and_duration() -> None:
    lesson = parse_header(HEADER, Path("03_goodput.ipynb"))
    goals = ("손실 장부(ledger)로 goodput을 계산한다.", "차이를 돈으로 말한다.")
    title = "Goodput 계산 — 운영 개선이 곧 예산이다"
    assert lesson == Lesson(Path("03_goodput.ipynb"), "03", title, goals, "30분")
    assert lesson.name == "03_goodput.ipynb" and lesson.stem == "03_goodput"


@pytest.mark.parametrize(("markdown", "name", "match"), [
    ("제목 없음\n**학습 목표**\n1. a", "03_x.ipynb", "must start with '# NN. 제목'"),
    ("", "03_x.ipynb", "must start with"),
    ("# 04. 다른 번호\n**학습 목표**\n1. a", "03_x.ipynb", "does not match the file name"),
    ("# 03. 목표 없음\n\n본문", "03_x.ipynb", "no numbered goals"),
    ("# 03. 목록 없음\n**학습 목표**\n- a", "03_x.ipynb", "no numbered goals"),
])
def test_parse_header_names_the_notebook_and_the_problem(markdown: str, name: str,
                                                         match: str) -> None:
    with pytest.raises(ValueError, match=match) as err:
        parse_header(markdown, Path(name))
    assert name in str(err.value)


def test_discover_reads_every_committed_lesson() -> None:
    assert LESSONS, "no lessons in notebooks/"
    assert [lesson.number for lesson in LESSONS] == sorted(lesson.number for lesson in LESSONS)
    for lesson in LESSONS:
        assert lesson.title and lesson.goals, lesson.name


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.stem)
def test_every_lesson_has_a_main_interaction(lesson: Lesson) -> None:
    """Fails for a new lesson until labkit/serve/lessons.py MAIN_INTERACTIONS has its entry."""
    try:
        interaction = main_interaction(lesson)
    except LookupError as err:
        pytest.fail(str(err))
    assert interaction.widget.startswith("lk-") and interaction.chart.startswith("lk-")
    assert interaction.how in ("fill", "slider", "select", "toggle", "click")


def test_main_interaction_missing_entry_says_what_to_add() -> None:
    with pytest.raises(LookupError, match=r"99_new has no entry .*MAIN_INTERACTIONS.*widget="):
        main_interaction("99_new")
    assert main_interaction("03_goodput.ipynb") is MAIN_INTERACTIONS["03_goodput"]
    assert isinstance(MAIN_INTERACTIONS["03_goodput"], MainInteraction)


def test_registry_has_no_entry_for_a_missing_notebook() -> None:
    present = {lesson.stem for lesson in LESSONS}
    assert set(MAIN_INTERACTIONS) <= present, set(MAIN_INTERACTIONS) - present
