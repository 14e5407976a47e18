"""The mutation runner's arithmetic (labkit/_dev/mutation.py): equivalents are counted apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from labkit._dev import mutation

ROOT = Path(__file__).resolve().parents[1]


def test_score_counts_equivalents_apart() -> None:
    # 6 mutants: 3 killed (exit 1, a timeout 36, SIGXCPU -24), 2 survivors, 1 not reached;
    # one survivor is listed as equivalent: 3 killed of 6 - 1 = 5 scored, 60 %.
    codes: dict[str, int | None] = {"a": 1, "b": 36, "c": -24, "d": 0, "e": 0, "f": 33}
    s = mutation.score("m", codes, {"e": "x * 1.0 == x for floats"})
    assert (s.killed, s.total, s.equivalent, s.survived, s.not_covered) == (
        3, 6, ("e",), ("d",), ("f",))
    assert s.fraction == pytest.approx(3 / 5)


def test_an_equivalent_that_is_killed_is_reported_and_scored_as_killed() -> None:
    s = mutation.score("m", {"a": 1, "b": 0}, {"a": "claimed equivalent"})
    assert (s.killed, s.equivalent, s.killed_equivalent) == (1, (), ("a",))
    assert s.fraction == pytest.approx(1 / 2)


def test_every_module_names_files_and_tests_that_exist() -> None:
    for name, (files, tests) in mutation.MODULES.items():
        for pattern in files:
            assert list(ROOT.glob(pattern)), f"{name}: {pattern} matches nothing"
        for test in tests:
            assert (ROOT / test).is_file(), f"{name}: {test} is missing"
    assert set(mutation.EQUIVALENT) <= set(mutation.MODULES)
    for name, mutants in mutation.EQUIVALENT.items():
        for mutant, reason in mutants.items():
            assert reason.strip(), f"{name}: {mutant} needs its reason"


def test_record_replaces_a_modules_row_and_keeps_the_others(tmp_path: Path) -> None:
    doc, results = tmp_path / "mutation.md", tmp_path / "mutation.json"
    doc.write_text("# Scores\n\nintro\n\n| old table |\n\nafter\n", encoding="utf-8")
    first = mutation.Score("tariff", 9, 10, ("a",), ())
    mutation.record([first], "make mutation MODULES=tariff", doc=doc, results=results,
                    date="2026-12-01", commit="abc1234")
    second = mutation.Score("goodput", 4, 4, (), ())
    mutation.record([second], "make mutation MODULES=goodput", doc=doc, results=results,
                    date="2026-12-02", commit="def5678")
    text = doc.read_text(encoding="utf-8")
    assert text.startswith("# Scores\n\nintro\n\n| module |") and text.endswith("\nafter\n")
    # MODULES order: goodput before tariff; 9 killed of 10 = 90.0 %
    rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows[1:] == [
        "| goodput | 4 | 4 | 0 | 0 | 0 | 100.0% | 2026-12-02 | def5678 | "
        "`make mutation MODULES=goodput` |",
        "| tariff | 10 | 9 | 0 | 1 | 0 | 90.0% | 2026-12-01 | abc1234 | "
        "`make mutation MODULES=tariff` |"]
    saved = json.loads(results.read_text(encoding="utf-8"))
    assert set(saved) == {"goodput", "tariff"} and saved["tariff"]["score"] == 0.9
