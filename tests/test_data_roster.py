"""labkit.data.roster: the class roster CSV (username, display name)."""

from __future__ import annotations

from pathlib import Path

import pytest

from labkit.data import DataError
from labkit.data.roster import (
    RosterEntry,
    parse_roster,
    read_roster,
    system_username,
    validate_username,
)

CLASS = "# 2학년 3반\nusername,display_name\nkim01,김민준\nlee02,이서연\npark03,\n"


def test_read_roster_reads_utf8_with_korean_names(tmp_path: Path) -> None:
    path = tmp_path / "class.csv"
    path.write_text(CLASS, encoding="utf-8")
    assert read_roster(path) == [RosterEntry("kim01", "김민준"), RosterEntry("lee02", "이서연"),
                                 RosterEntry("park03", "park03")]


@pytest.mark.parametrize("encoding", ["utf-8-sig", "cp949"])
def test_read_roster_reads_what_excel_saves(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "class.csv"
    path.write_bytes("username,display_name\r\nkim01,김민준\r\n".encode(encoding))
    assert read_roster(path) == [RosterEntry("kim01", "김민준")]


def test_parse_roster_reads_a_quoted_comma_and_names_the_system_user() -> None:
    entries = parse_roster('\ufeffusername,display_name\nminji,김민지\njisoo,"이, 지수"\n')
    assert entries == [RosterEntry("minji", "김민지"), RosterEntry("jisoo", "이, 지수")]
    assert [e.system_user for e in entries] == ["jupyter-minji", "jupyter-jisoo"]
    # useradd(8): 32 characters at most; the longest username makes exactly 32
    assert len(system_username("a" * 24)) == 32


@pytest.mark.parametrize(("text", "match"), [
    ("", "empty roster"),
    ("name,display\nkim01,김\n", "line 1: the header must be"),
    ("username,display_name\n", "lists no one"),
    ("username,display_name\nkim01\n", "line 2: expected 2 fields"),
    ("username,display_name\nkim01,a,b\n", "line 2: expected 2 fields"),
    ("username,display_name\nKim01,김\n", "line 2: username 'Kim01' must be lower case"),
    ("username,display_name\n민준,김\n", "must be lower case ASCII"),
    ("username,display_name\n01kim,김\n", "start with a letter"),
    ("username,display_name\n" + "a" * 25 + ",김\n", "at most 24"),
    ("username,display_name\n,김\n", "line 2: username is empty"),
    ("username,display_name\nkim 01,김\n", "must be lower case"),
    ("username,display_name\nkim.01,김\n", "must be lower case"),
    ("username,display_name\n-kim,김\n", "start with a letter"),
    ("username,display_name\n../etc,김\n", "must be lower case"),
    ("username,display_name\nkim01,김\n\nkim01,이\n", "line 4: username 'kim01' repeats line 2"),
    ("username,display_name\nkim01," + "가" * 65 + "\n", "at most 64 printable"),
    ("username,display_name\nkim01,a\u0000b\n", "printable"),
    ("username,display_name\n" + "".join(f"u{i},x\n" for i in range(501)), "more than 500"),
])
def test_parse_roster_rejects_bad_input(text: str, match: str) -> None:
    with pytest.raises(DataError, match=match) as err:
        parse_roster(text, "class.csv")
    assert str(err.value).startswith("class.csv")


@pytest.mark.parametrize("name", ["", "Kim", "1kim", "kim.lee", "kim lee", "김민준", "a" * 25,
                                  "kim\n", "_kim", "-kim"])
def test_validate_username_is_the_one_rule_the_hub_uses(name: str) -> None:
    from labkit.hub import roster as hub_roster

    with pytest.raises(DataError):
        validate_username(name)
    with pytest.raises(ValueError):  # the hub's accounts are named through the same rule
        hub_roster.system_username(name)


def test_read_roster_names_a_missing_or_undecodable_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="cannot read the roster"):
        read_roster(tmp_path / "nope.csv")
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"username,display_name\nkim01,\xff\xff\xff\n")
    with pytest.raises(DataError, match="not UTF-8 or CP949"):
        read_roster(bad)
