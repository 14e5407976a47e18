"""labkit.data.roster: the class roster CSV (username, display name)."""

from __future__ import annotations

from pathlib import Path

import pytest

from labkit.data import DataError
from labkit.data.roster import RosterEntry, parse_roster, read_roster

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


def test_read_roster_names_a_missing_or_undecodable_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="cannot read the roster"):
        read_roster(tmp_path / "nope.csv")
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"username,display_name\nkim01,\xff\xff\xff\n")
    with pytest.raises(DataError, match="not UTF-8 or CP949"):
        read_roster(bad)
