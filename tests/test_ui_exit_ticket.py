"""Every lesson ends with an exit ticket: 2-3 questions graded and recorded like its exercises.

Expected answers are worked out here from the numbers each question states (not read back
from labkit.ui.exit_ticket); a check writes the same progress record an exercise writes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import ipywidgets as widgets
import pytest

from labkit.data.progress import progress_path, read_progress
from labkit.i18n.ko import KO
from labkit.ui import exit_ticket
from labkit.ui.exercises import grade

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))

#: The answers, worked by hand from each question's text (exit.NN.*.q).
EXPECTED = {
    "exit.01.util_share": "50%", "exit.01.power_rule": "30%",
    "exit.02.class_gpus": "4장", "exit.02.beside_4g": "1개",
    "exit.03.ledger": f"{(720 - 72) / 720 * 100:.1f}%", "exit.03.factor": "1.5배",
    "exit.04.cluster_mtbf": "10 h", "exit.04.young": f"{(2 * 2 * 100) ** 0.5:g}분",
    "exit.05.full": "2,295원", "exit.05.half": "4,414원",
    "exit.06.per_chip": f"{10_000 / (40_000 / 8):g}배", "exit.06.precision": "1.5배",
    "exit.07.energy": "14,400 kWh", "exit.07.idle_ratio": "4배",
    "exit.08.fifo": f"{(1 + 2 + 3 + 4) / 4:g} h", "exit.08.fair_share": f"{2 ** -2:g}",
    "exit.09.buy_vs_rent": "25%", "exit.09.idle_ratio": "5배",
}


@pytest.mark.parametrize("lesson", sorted(exit_ticket.TICKETS))
def test_exit_ticket_asks_two_or_three_questions_of_its_lesson(lesson: str) -> None:
    questions = exit_ticket.questions(lesson)
    assert 2 <= len(questions) <= 3
    for ex in questions:
        assert ex.key.startswith(f"exit.{lesson}.")
        assert all(f"{ex.key}.{part}" in KO for part in ("q", "hint", "explain"))
        assert grade(ex, EXPECTED[ex.key]).ok is True, (ex.key, ex.answer)


def test_exit_ticket_refuses_an_unknown_lesson() -> None:
    with pytest.raises(KeyError):
        exit_ticket.lesson("99")


def test_exit_ticket_check_is_recorded_like_an_exercise(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTERHUB_USER", "minji")
    monkeypatch.setenv("HOME", str(tmp_path))
    box = exit_ticket.lesson("03")
    assert "lk-exit-ticket" in box._dom_classes and len(box.exercises) == 2
    first = box.children[0]
    row = first.children[1]
    answer = next(w for w in row.children if isinstance(w, widgets.Text))
    check = next(w for w in row.children if isinstance(w, widgets.Button))
    answer.value = "90 %"
    check.click()
    assert "✔" in first.children[2].value
    records, skipped = read_progress(progress_path(tmp_path))
    assert [(r.exercise, r.correct, r.answer) for r in records] == [("exit.03.ledger", True,
                                                                      "90 %")]
    assert skipped == 0


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda nb: nb.stem)
def test_every_notebook_ends_with_its_own_exit_ticket(notebook: Path) -> None:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    calls = [src for src in code if "ui.exit_ticket.lesson" in src]
    assert calls == [f'ui.exit_ticket.lesson("{notebook.name[:2]}")']
    assert code[-1] == calls[0], f"{notebook.name}: the exit ticket is not the last cell"
    headings = [line for c in cells if c["cell_type"] == "markdown"
                for line in "".join(c["source"]).splitlines() if re.match(r"^## ", line)]
    assert headings[-1] == "## 정리"
