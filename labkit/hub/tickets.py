"""The class summary of the exit tickets (나가기 전 확인) on the teacher's class page.

Each student's row of the class page lists their own verdicts (``labkit.hub.results``); this
module adds one table under it: per exit-ticket question, how many of the class got it right,
how many answered, and who has answered but not yet got it. :func:`ticket_summary` is pure (the
students' checked verdicts in, the lines out); :func:`summary_html` writes the table.

Used in: labkit.hub.classpage
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from labkit.i18n import t

__all__ = ["PREFIX", "TicketLine", "class_tickets_html", "summary_html", "ticket_order",
           "ticket_summary"]

#: The progress keys of the exit tickets (``labkit.ui.exit_ticket``).
PREFIX = "exit."


@dataclass(frozen=True)
class TicketLine:
    """One exit-ticket question across the class.

    Attributes
    ----------
    key : str
        The question's progress key (``"exit.03.ledger"``).
    correct : int
        Students whose latest verdict is correct.
    answered : int
        Students who checked an answer (right, wrong or not a number).
    students : int
        Students in the class.
    not_yet : tuple of str
        Display names of those who answered but whose latest verdict is not correct, in the
        class's order.
    """

    key: str
    correct: int
    answered: int
    students: int
    not_yet: tuple[str, ...]


Verdicts = Sequence[tuple[str, bool | None]]


def ticket_summary(results: Sequence[tuple[str, Verdicts]],
                   order: Sequence[str] = ()) -> list[TicketLine]:
    """Return the class summary of the exit tickets: n of m correct per question.

    Parameters
    ----------
    results : sequence of (str, sequence of (str, bool or None))
        Each student of the class, in the class's order, as (display name, their checked
        verdicts: the latest per question, ``StudentRow.results``); students with no results
        count in the class too.
    order : sequence of str, optional
        The questions' order (the catalog's); questions not in it follow by key.

    Returns
    -------
    list of TicketLine
        One line per exit-ticket question anyone answered, in ``order``.
    """
    students = len(results)
    seen: dict[str, list[tuple[str, bool | None]]] = {}
    for name, verdicts in results:
        for key, ok in verdicts:
            if key.startswith(PREFIX):
                seen.setdefault(key, []).append((name, ok))
    rank = {k: i for i, k in enumerate(order)}
    keys = sorted(seen, key=lambda k: (rank.get(k, len(rank)), k))
    return [TicketLine(key, sum(1 for _n, ok in seen[key] if ok is True), len(seen[key]),
                       students, tuple(n for n, ok in seen[key] if ok is not True))
            for key in keys]


def ticket_order() -> list[str]:
    """The exit-ticket questions in the catalog's order (lesson by lesson, as asked)."""
    from labkit.i18n.ko import KO

    return [k[:-2] for k in KO if k.startswith(PREFIX) and k.endswith(".q")]


def class_tickets_html(rows: Sequence[Any]) -> str:
    """Return the class summary table for the class page's rows (``StudentRow``: the
    teacher's own row is not a student)."""
    students = [(r.display_name, r.results) for r in rows if r.state != "teacher"]
    return summary_html(ticket_summary(students, ticket_order()))


def summary_html(lines: Sequence[TicketLine]) -> str:
    """Return the class summary table (Korean HTML, every value escaped)."""
    from labkit.hub.results import exercise_title

    e = html.escape
    title = f'<h2 class="lk-tickets-title">{e(t("hub.class.tickets.title"))}</h2>'
    if not lines:
        return f'{title}<p class="lk-tickets-none">{e(t("hub.class.tickets.none"))}</p>'
    heads = "".join(f"<th>{e(t(f'hub.class.tickets.{c}'))}</th>"
                    for c in ("question", "correct", "answered", "wrong"))
    rows = "".join(
        f'<tr class="lk-ticket" data-exercise="{e(line.key)}"><td>{e(exercise_title(line.key))}'
        f"</td><td>{e(t('hub.class.tickets.correct_value', n=line.correct, m=line.students))}"
        f"</td><td>{line.answered}</td><td>{e(', '.join(line.not_yet))}</td></tr>"
        for line in lines)
    return f'{title}<table class="lk-tickets"><tr>{heads}</tr>{rows}</table>'
