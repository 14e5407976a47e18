"""The exit tickets on the teacher's class page: per student (their results) and per question
(the class summary "n of m correct").

The summary is checked against counts written out by hand for a small class; the class page is
rendered with it; the records a lesson writes for an exit ticket pass the class page's checks.
"""

from __future__ import annotations

import datetime as dt

from labkit.hub import classpage
from labkit.hub.results import exercise_title, known_exercises, reported_results
from labkit.hub.tickets import TicketLine, summary_html, ticket_order, ticket_summary
from labkit.ui.exit_ticket import TICKETS

NOW = dt.datetime(2026, 12, 2, 9, 0, tzinfo=dt.UTC)


def test_ticket_summary_counts_n_of_m_correct_per_question() -> None:
    results = [
        ("김민지", [("exit.03.ledger", True), ("goodput.ex1", False), ("exit.03.factor", False)]),
        ("이지수", [("exit.03.factor", True), ("exit.03.ledger", False)]),
        ("박서준", [("exit.03.ledger", True)]),
        ("김민지", []),  # a second student of the same name, nothing answered yet
    ]
    lines = ticket_summary(results, ["exit.03.ledger", "exit.03.factor"])
    assert lines == [
        TicketLine("exit.03.ledger", correct=2, answered=3, students=4, not_yet=("이지수",)),
        TicketLine("exit.03.factor", correct=1, answered=2, students=4, not_yet=("김민지",)),
    ]


def test_ticket_summary_counts_an_unreadable_answer_as_not_yet_correct() -> None:
    lines = ticket_summary([("a", [("exit.01.util_share", None)]), ("b", [])])
    assert lines == [TicketLine("exit.01.util_share", 0, 1, 2, ("a",))]


def test_ticket_summary_of_a_class_without_answers_is_empty() -> None:
    assert ticket_summary([("a", [("goodput.ex1", True)]), ("b", [])]) == []
    assert "lk-tickets-none" in summary_html([])


def test_summary_html_names_the_question_and_escapes_names() -> None:
    page = summary_html([TicketLine("exit.03.ledger", 1, 2, 30, ("<b>민지</b>",))])
    assert "3강 나가기 전 확인" in page and "1명 / 30명" in page
    assert "<b>민지</b>" not in page and "&lt;b&gt;민지&lt;/b&gt;" in page


def test_every_exit_ticket_is_a_known_exercise_of_its_lesson() -> None:
    known = known_exercises()
    keys = [ex.key for build in TICKETS.values() for ex in build()]
    assert keys == ticket_order()
    for key in keys:
        assert key in known
        assert exercise_title(key).startswith(f"{int(key.split('.')[1])}강 나가기 전 확인: ")


def test_an_exit_ticket_record_counts_like_an_exercise() -> None:
    report = {"results": [
        {"v": 1, "time": "2026-12-02T08:50:00+00:00", "exercise": "exit.03.ledger",
         "correct": False, "answer": "88"},
        {"v": 1, "time": "2026-12-02T08:51:00+00:00", "exercise": "exit.03.ledger",
         "correct": True, "answer": "90"},
        {"v": 1, "time": "2026-12-02T08:52:00+00:00", "exercise": "exit.03.nope",
         "correct": True, "answer": "1"},
    ]}
    tried, solved, verdicts, rejected = reported_results(report, NOW)
    assert (tried, solved, verdicts, rejected) == (1, 1, (("exit.03.ledger", True),), 1)


def test_class_page_shows_the_ticket_summary_under_the_students() -> None:
    rows = [classpage.StudentRow("kim", "김교사", "teacher"),
            classpage.StudentRow("minji", "김민지", "online", tried=1, solved=1,
                                 results=(("exit.03.ledger", True),)),
            classpage.StudentRow("jisoo", "이지수", "online", tried=1, solved=0,
                                 results=(("exit.03.ledger", False),))]
    page = classpage.render_page(rows, now=NOW, stop_url="/stop")
    table = page[page.index('<table class="lk-tickets">'):]
    assert 'data-exercise="exit.03.ledger"' in table
    assert "1명 / 2명" in table and "이지수" in table and "김교사" not in table
