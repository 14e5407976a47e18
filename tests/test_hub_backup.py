"""Backups of the hub's state (labkit.hub.backup) without a running hub: the database through
sqlite's backup API while a writer holds it, the passwords and codes, a home's tar file."""

from __future__ import annotations

import json
import os
import sqlite3
import tarfile
from pathlib import Path

import pytest

from labkit.data.roster import RosterEntry
from labkit.hub import backup
from labkit.hub.passwords import Accounts
from labkit.hub.state import HubSettings, HubState


def test_backup_copies_the_database_mid_transaction_and_the_state(tmp_path: Path) -> None:
    state = HubState(tmp_path / "state")
    state.save_roster([RosterEntry("kim01", "김민지")])
    state.save_settings(HubSettings(teacher="teach"))
    db = sqlite3.connect(state.root / "jupyterhub.sqlite")
    db.execute("create table users (name text)")
    db.execute("insert into users values ('kim01')")
    db.commit()
    db.execute("insert into users values ('half-written')")  # open transaction, not committed
    state.accounts.hand_out(["kim01", "lee02"])
    state.accounts.set_password("kim01", "kim01-password")
    (state.root / "tls").mkdir(mode=0o700)  # serve --self-signed's class CA (the trial: lost)
    (state.root / "tls" / "ca.pem").write_text("-----BEGIN CERTIFICATE-----\n")
    lines: list[str] = []
    manifest = backup.backup(state, tmp_path / "bk", out=lines.append)
    assert (tmp_path / "bk" / "state" / "tls" / "ca.pem").read_text().startswith("-----BEGIN")
    db.rollback()
    db.close()
    copy = sqlite3.connect(tmp_path / "bk" / "jupyterhub.sqlite")
    assert copy.execute("select name from users").fetchall() == [("kim01",)]
    copied = Accounts(tmp_path / "bk")
    assert copied.check_password("kim01", "kim01-password")
    assert copied.codes() == state.accounts.codes() and set(copied.codes()) == {"lee02"}
    assert (tmp_path / "bk" / "passwords.json").stat().st_mode & 0o777 == 0o600
    assert json.loads((tmp_path / "bk" / "state" / "roster.json").read_text())[0][
        "username"] == "kim01"
    # the teacher is named as the teacher, not among the students (the trial's manifest was)
    assert manifest["students"] == ["kim01"] and manifest["teacher"] == "teach"
    assert manifest["passwords"] == 1
    assert (tmp_path / "bk").stat().st_mode & 0o777 == 0o700
    assert any("백업(backup)을 마쳤습니다" in line for line in lines)
    with pytest.raises(FileExistsError):  # never into a backup already there
        backup.backup(state, tmp_path / "bk", out=lines.append)


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another account needs root")
def test_a_home_archive_keeps_only_what_the_student_owns(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "labkit").mkdir(parents=True)
    (home / "labkit" / "mine.ipynb").write_text("{}")
    (home / "not-mine").write_text("root's secret")
    os.mkfifo(home / "pipe")
    for path in (home, home / "labkit", home / "labkit" / "mine.ipynb", home / "pipe"):
        os.chown(path, 54321, 54321)
    found = backup._archive(home, tmp_path / "home.tar")
    with tarfile.open(tmp_path / "home.tar") as tar:
        names = sorted(m.name for m in tar.getmembers())
    assert names == [".", "./labkit", "./labkit/mine.ipynb"]
    assert found == {"files": 1, "bytes": 2}


def test_a_restore_gives_back_the_named_students_password_or_code(tmp_path: Path) -> None:
    saved = Accounts(tmp_path / "bk")
    saved.root.mkdir()
    saved.hand_out(["kim01", "lee02"])
    saved.set_password("kim01", "kim01-password")
    hub = HubState(tmp_path / "state").accounts
    hub.hand_out(["kim01", "park03"])
    hub.set_password("lee02", "lee02-new-password")
    assert saved.copy_to(hub, ["kim01"]) == 1  # kim01's password back, their newer code gone
    assert hub.check_password("kim01", "kim01-password") and "kim01" not in hub.codes()
    assert saved.copy_to(hub, ["lee02"]) == 0  # lee02 back to the code they had, no password
    assert not hub.has_password("lee02") and hub.codes()["lee02"] == saved.codes()["lee02"]
    assert "park03" in hub.codes()  # nobody else is touched
