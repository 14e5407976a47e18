"""Backups of the real class hub: back up while it runs, remove a student, restore them.

The student (C of the test roster) changes a notebook and checks an exercise in a kernel; the
operator runs ``python -m labkit.hub backup``; the student is removed for good (``roster remove
--yes``: account, home image, password); ``restore DEST C`` brings them back: the same password
logs in, the notebook holds the change, the server reports the result and the teacher's CSV
export lists it. Needs root (see conftest); skipped otherwise with that reason.
"""

from __future__ import annotations

import csv
import io
import json
import os
import pwd
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.hub import hubclient
from tests.hub.conftest import (
    BROWSER_STUDENT,
    PASSWORDS,
    ROOT_REASON,
    TEACHER,
    Hub,
    roster_command,
)

pytestmark = [pytest.mark.hub,
              pytest.mark.skipif(os.geteuid() != 0, reason=ROOT_REASON)]
NAME = BROWSER_STUDENT
MARK = "백업 전에 고친 셀"


def _cli(hub: Hub, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "labkit.hub", "--state-dir", str(hub.state_dir),
                           *args], capture_output=True, text=True, timeout=600, check=False)


def _logged_in_with_server(hub: Hub) -> hubclient.Student:
    student, reply = hubclient.login(hub.base, NAME, PASSWORDS[NAME])
    assert hubclient.logged_in(reply), (reply.status_code, reply.text[-300:])
    hubclient.start_server(student)
    return student


def _stop(student: hubclient.Student) -> None:
    student.api("DELETE", f"users/{NAME}/server")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if not (student.api("GET", f"users/{NAME}").json().get("servers") or {}):
            return
        time.sleep(0.5)
    raise TimeoutError(f"{NAME}'s server did not stop")


def _progress(student: hubclient.Student) -> list[dict[str, object]]:
    """The student's recorded results, read from their home as the class page reads them
    (a privileged reader, as root: students' servers serve no progress endpoint, issue 23)."""
    from labkit.data.progress import read_student_progress
    from labkit.hub.classpage import student_home

    home, uid = student_home(NAME)
    records, _size = read_student_progress(home, uid)
    return [{"exercise": r.exercise, "correct": r.correct, "answer": r.answer} for r in records]


def test_backup_remove_restore_brings_a_students_work_and_results_back(
        hub: Hub, tmp_path: Path) -> None:
    # the browser test's student may not have logged in yet: the teacher sets the password
    roster_command(hub.state_dir, "set-password", NAME, stdin=PASSWORDS[NAME] + "\n")
    student = _logged_in_with_server(hub)
    notebook: dict[str, Any] = {
                "cells": [{"cell_type": "markdown", "metadata": {}, "source": MARK}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    put = student.session.put(f"{student.server_url}api/contents/my_work.ipynb",
                              headers=hubclient.auth_headers(student), timeout=60,
                              json={"type": "notebook", "format": "json", "content": notebook})
    assert put.status_code in (200, 201), put.text[-300:]
    kernel = hubclient.start_kernel(student)
    client = hubclient.HubKernelClient(student, kernel)
    # and a link out of the home, as the trial's student made one (it stopped the restore)
    ran = hubclient.execute(client, "import os, pathlib\n"
                                    "from labkit.data.progress import record_result\n"
                                    "print(record_result('goodput.ex1', '86.1', True))\n"
                                    "os.symlink('/etc/hostname', pathlib.Path.home() / "
                                    "'.labkit' / 'x.lnk')")
    client.close()
    assert ran["stdout"].strip() == "True", ran
    assert [r["exercise"] for r in _progress(student)] == ["goodput.ex1"]

    dest = tmp_path / "backup"
    done = _cli(hub, "backup", str(dest))  # while the hub and the student's server run
    assert done.returncode == 0, done.stdout + done.stderr
    assert "백업(backup)을 마쳤습니다" in done.stdout
    assert (dest.stat().st_mode & 0o777) == 0o700
    manifest = json.loads((dest / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["homes"][NAME]["files"] >= 2 and manifest["hub_db"]

    _stop(student)
    removed = _cli(hub, "roster", "remove", NAME, "--stop", "--yes")
    assert removed.returncode == 0, removed.stdout + removed.stderr
    with pytest.raises(KeyError):
        pwd.getpwnam(f"jupyter-{NAME}")
    _, refused = hubclient.login(hub.base, NAME, PASSWORDS[NAME])
    assert not hubclient.logged_in(refused)

    restored = _cli(hub, "restore", str(dest), NAME)
    assert restored.returncode == 0, restored.stdout + restored.stderr
    assert "복원(restore)을 마쳤습니다" in restored.stdout
    assert "복원하지 않았습니다: .labkit/x.lnk" in restored.stdout
    home = Path(pwd.getpwnam(f"jupyter-{NAME}").pw_dir)
    assert (home / ".labkit").stat().st_uid == pwd.getpwnam(f"jupyter-{NAME}").pw_uid
    restored_file = home / "labkit" / "my_work.ipynb"  # the server's root: ~/labkit
    assert restored_file.stat().st_uid == pwd.getpwnam(f"jupyter-{NAME}").pw_uid

    back = _logged_in_with_server(hub)  # the same password: it was restored too
    got = back.session.get(f"{back.server_url}api/contents/my_work.ipynb",
                           headers=hubclient.auth_headers(back), timeout=60)
    assert got.status_code == 200 and got.json()["content"]["cells"][0]["source"] == MARK
    results = _progress(back)
    assert [(r["exercise"], r["correct"], r["answer"]) for r in results] == [
        ("goodput.ex1", True, "86.1")]

    teacher, reply = hubclient.login(hub.base, TEACHER, PASSWORDS[TEACHER])
    assert hubclient.logged_in(reply)
    export = teacher.session.get(f"{hub.base}services/classpage/results.csv", timeout=60)
    assert export.status_code == 200, export.text[-300:]
    assert export.content.startswith(b"\xef\xbb\xbf")
    assert "attachment" in export.headers["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(export.content.decode("utf-8-sig"))))
    assert rows[0][:3] == ["사용자 이름", "학생", "강"]
    assert [NAME, "최유나", "3강", "3강 문제 1", "문제", "86.1", "정답", "1"] in [
        r[:8] for r in rows]
    page = teacher.session.get(f"{hub.base}services/classpage/", timeout=60)
    assert "결과를 CSV(엑셀)로 내려받기" in page.text
    _stop(back)  # as the other tests expect C: logged out, server stopped
