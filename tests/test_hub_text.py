"""The class hub's text a teacher or student meets outside the hub's pages: Korean (issue 13).

What ``make hub`` / ``python -m labkit.hub serve`` prints to the teacher's terminal: the serve
command runs up to the ``exec`` of jupyterhub with the account and environment steps stubbed
(they need root and minutes); every line it prints must be Korean, English only as a term in
parentheses or as code in backticks. And a student's own single-user server's error pages,
from a real ``jupyter server`` with the hub's single-user config.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from labkit.hub import __main__ as hub_main
from labkit.hub import accounts, userenv
from labkit.hub.roster import Student
from labkit.hub.state import HubState

#: A term in (possibly nested) parentheses, or code in backticks: where English may stand.
ALLOWED = re.compile(r"\([^()]*(?:\([^()]*\)[^()]*)*\)|`[^`]*`")


def english_outside_brackets(line: str) -> list[str]:
    """Return the English words of ``line`` outside parentheses, backticks and paths (values)."""
    bare = ALLOWED.sub("", line.removeprefix(f"{hub_main.PROG}: "))
    bare = re.sub(r"\S*/\S*", "", bare)
    return [w for w in re.findall(r"[A-Za-z]{3,}", bare) if w not in ("MiB", "ext4", "jupyter")]


def test_the_checker_finds_the_old_english_lines() -> None:
    # the oracle: the lines this issue reported fail the same check
    assert english_outside_brackets(
        "labkit hub: building the students' environment in /opt/labkit-hub/env (once; 1-3 min)")
    assert english_outside_brackets("학생 디스크(disk): homes on the shared disk, no per-student "
                                    "disk limit (no /dev/loop-control)")
    assert not english_outside_brackets("학생 디스크(disk): 홈(home)이 있습니다 (`/tmp`).")


def test_serve_speaks_korean_to_the_teacher(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    roster = tmp_path / "class.csv"
    roster.write_text("username,display_name\nminji,김민지\njun,이준\n", encoding="utf-8")
    monkeypatch.setattr(accounts, "require_root", lambda: None)
    monkeypatch.setattr(accounts, "ensure_system_user", lambda *a, **k: None)
    monkeypatch.setenv("LABKIT_HUB_DISK", "off")
    monkeypatch.setenv("LABKIT_HUB_NAMESPACE", "off")

    def built(*_: Any, **__: Any) -> Path:
        print(f"{hub_main.PROG}: {hub_main.t('hub.cli.serve.building', path='/opt/env')}")
        return tmp_path

    class Execd(Exception):
        pass

    def execve(*_: Any) -> None:
        raise Execd

    monkeypatch.setattr(userenv, "ensure_user_env", built)
    monkeypatch.setattr(hub_main, "_run_hub", execve)  # where jupyterhub would start
    monkeypatch.setattr(hub_main.os, "chdir", lambda _path: None)
    monkeypatch.setattr(hub_main.os, "umask", lambda mask: 0o022)
    from labkit.hub import disk, isolation

    disk.probe.cache_clear()
    isolation.probe.cache_clear()
    HubState(tmp_path / "state").accounts.set_password("kim", "teacher-pass-1")  # never 1st use
    try:
        with pytest.raises(Execd):
            hub_main.main(["--state-dir", str(tmp_path / "state"), "serve", "--roster",
                           str(roster), "--teacher", "kim"])
    finally:
        disk.probe.cache_clear()
        isolation.probe.cache_clear()
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) >= 8, lines  # roster, environment, accounts, 4 isolation lines, URL
    assert any("학생용 환경" in line for line in lines), lines
    assert any("컨트롤 그룹(cgroup" in line for line in lines), lines
    for line in lines:
        assert re.search(r"[가-힣]", line) and not english_outside_brackets(line), line
    assert HubState(tmp_path / "state").roster() == [Student("minji", "김민지"),
                                                      Student("jun", "이준")]


def test_the_environment_line_is_the_catalogs() -> None:
    source = Path(userenv.__file__).read_text(encoding="utf-8")
    assert "hub.cli.serve.building" in source and "building the students" not in source


def _page_text(html: str) -> str:
    html = re.sub(r"(?s)<(script|style|noscript)\b.*?</\1>", " ", html)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_a_students_own_server_answers_missing_pages_in_korean(tmp_path: Path) -> None:
    """Issue 13: a real `jupyter server` with the hub's single-user config
    (labkit/hub/jupyter): a missing page, a missing file and a missing voila app are Korean
    pages, jupyter_server's English page and its message never shown."""
    import os
    import socket
    import subprocess
    import sys
    import urllib.error
    import urllib.request

    from labkit.i18n import t
    from labkit.serve.processes import stop_process, wait_until_answers

    repo = Path(__file__).resolve().parents[1]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    (tmp_path / "root" / "labkit").mkdir(parents=True)
    env = {**os.environ, "JUPYTER_CONFIG_PATH": str(repo / "labkit" / "hub" / "jupyter"),
           "JUPYTER_PATH": str(repo / "labkit" / "serve" / "jupyter"),
           "JUPYTER_CONFIG_DIR": str(tmp_path / "cfg"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt")}
    argv = [sys.executable, "-m", "jupyter_server", f"--ServerApp.root_dir={tmp_path / 'root'}",
            "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
            "--IdentityProvider.token=tok", "--ServerApp.open_browser=False"]
    if os.geteuid() == 0:
        argv.append("--allow-root")
    base = f"http://127.0.0.1:{port}"
    with (tmp_path / "server.log").open("wb") as log:
        server = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_until_answers(f"{base}/api/status", server, timeout_s=90, what="jupyter server",
                               log_path=tmp_path / "server.log")
            pages = {}
            for path in ("nonexistent", "files/labkit/missing.txt",
                         "voila/render/labkit/missing.ipynb"):
                request = urllib.request.Request(f"{base}/{path}",
                                                 headers={"Authorization": "token tok"})
                with pytest.raises(urllib.error.HTTPError) as err:
                    urllib.request.urlopen(request, timeout=30)
                assert err.value.code == 404, path
                pages[path] = _page_text(err.value.read().decode())
        finally:
            stop_process(server, timeout_s=15)
    for path in ("nonexistent", "files/labkit/missing.txt"):
        assert t("hub.server.error.404") in pages[path], pages[path]
        assert t("hub.server.error.lab") in pages[path], pages[path]
    assert t("serve.notfound.title") in pages["voila/render/labkit/missing.ipynb"]
    for path, text in pages.items():
        words = re.findall(r"[A-Za-z]{3,}", ALLOWED.sub("", text))
        assert not [w for w in words if w not in ("JupyterLab",)], (path, words, text)
        assert "does not exist" not in text and "missing" not in text, (path, text)
