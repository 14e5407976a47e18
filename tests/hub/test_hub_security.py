"""The class hub against a real JupyterHub, configurable-http-proxy and system users (issue 13).

Two students, A and B, on their own servers; everything A tries against B must fail, and A's
runaway code must slow only A. Needs root (see conftest); skipped otherwise with that reason.
"""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import sys
import time
from typing import Any

import pytest
import requests

from labkit.hub.roster import system_username
from tests.hub import attacks, hubclient
from tests.hub.conftest import (
    PASSWORDS,
    ROOT_REASON,
    STUDENT_A,
    STUDENT_B,
    TEACHER,
    Hub,
)
from tests.hub.hubclient import HubKernelClient, Student

pytestmark = [pytest.mark.hub,
              pytest.mark.skipif(os.geteuid() != 0, reason=ROOT_REASON)]
LESSON = "03_goodput.ipynb"
#: Latency under attack may be 2x idle; an idle figure below this floor counts as the floor
#: (a 2-core machine's scheduling noise). [s]
FLOOR_S = 0.25


@pytest.fixture(scope="module")
def servers(hub: Hub, students: dict[str, Student]) -> dict[str, Any]:
    """Start A's server, ask for B's at once (concurrent spawn limit 1), then start B's."""
    a, b = students[STUDENT_A], students[STUDENT_B]
    for s in (a, b):
        reply = s.api("POST", f"users/{s.name}/tokens", json={"note": "test", "expires_in": 3600})
        reply.raise_for_status()
        s.token = reply.json()["token"]
    for s in (a, b):  # an earlier module may have started them: the probe needs both stopped
        s.api("DELETE", f"users/{s.name}/server")
        deadline = time.monotonic() + 120
        while s.api("GET", f"users/{s.name}").json().get("servers") and \
                time.monotonic() < deadline:
            time.sleep(0.5)
    # the trial: options of A's own making, refused, were kept and refused A's later starts
    bad = a.api("POST", f"users/{a.name}/server", json={"gpu": "all", "environment": {"X": "1"}})
    from concurrent.futures import ThreadPoolExecutor

    # both at once: the Hub answers a spawn within 10 s (slow_spawn_timeout) or says 202
    with ThreadPoolExecutor(2) as pool:
        first, second = pool.map(lambda s: s.api("POST", f"users/{s.name}/server"), (a, b))
    hubclient.start_server(a)
    hubclient.start_server(b)
    return {"a": a, "b": b, "codes": sorted([first.status_code, second.status_code]),
            "replies": [first.text[:300], second.text[:300]], "bad_options": bad}


def test_login_page_is_korean(hub: Hub) -> None:
    html = requests.get(hub.base + "hub/login", timeout=10).content.decode("utf-8")
    assert "수업 허브(class hub) 로그인" in html and "비밀번호" in html


def test_student_not_on_roster_cannot_log_in(hub: Hub) -> None:
    _, reply = hubclient.login(hub.base, "lktest-x", "whatever-123")
    assert not hubclient.logged_in(reply)
    assert "수업 명단(roster)에 없는" in reply.text
    assert "jupyterhub-hub-login" not in reply.cookies


def test_wrong_password_after_first_use_is_refused(hub: Hub, students: dict[str, Any]) -> None:
    _, reply = hubclient.login(hub.base, STUDENT_A, "not-" + PASSWORDS[STUDENT_A])
    assert not hubclient.logged_in(reply)
    assert "맞지 않습니다" in reply.text


def test_cookies_are_httponly_and_samesite(hub: Hub) -> None:
    student = Student(hub.base, TEACHER)
    student.session.get(hub.base + "hub/login", timeout=10)
    reply = student.session.post(hub.base + "hub/login?next=", data={
        "username": TEACHER, "password": PASSWORDS[TEACHER], "_xsrf": student.xsrf()},
        allow_redirects=False, timeout=30)
    cookies = reply.raw.headers.getlist("Set-Cookie")
    login = [c for c in cookies if c.startswith("jupyterhub-hub-login=")]
    assert login, cookies
    for cookie in login:
        flags = {p.strip().split("=")[0].lower(): p for p in cookie.split(";")}
        assert "httponly" in flags and "samesite" in flags, cookie
        assert "Lax" in flags["samesite"] and "secure" not in flags  # plain HTTP here


def test_concurrent_spawn_limit(servers: dict[str, Any]) -> None:
    """Two spawns at once with concurrent_spawn_limit = 1: one starts, one is told to wait."""
    assert servers["codes"][1] == 429 and servers["codes"][0] in (201, 202), (
        servers["codes"], servers["replies"])


def test_refused_user_options_do_not_block_the_next_start(servers: dict[str, Any]) -> None:
    bad = servers["bad_options"]
    assert bad.status_code == 400, bad.text[:300]
    assert "gpu" in bad.json()["message"]  # says which option it refused
    a: Student = servers["a"]  # started after it with no options (the fixture)
    server = a.api("GET", f"users/{a.name}").json()["servers"][""]
    assert server["ready"] and not server.get("user_options")


def test_other_students_server_refused_through_the_proxy(hub: Hub,
                                                         servers: dict[str, Any]) -> None:
    a: Student = servers["a"]
    own = a.session.get(f"{a.server_url}api/status", headers=hubclient.auth_headers(a),
                        timeout=30)
    assert own.status_code == 200
    other = a.session.get(f"{hub.base}user/{STUDENT_B}/api/status",
                          headers=hubclient.auth_headers(a), timeout=30)
    assert other.status_code == 403
    # with A's login cookie instead of a token: the OAuth dance ends refused too
    page = a.session.get(f"{hub.base}user/{STUDENT_B}/lab", timeout=60)
    assert page.status_code == 403 or "/user/" + STUDENT_B + "/lab" not in page.url
    assert "JupyterLab" not in page.text


def test_other_students_port_refused_without_their_token(hub: Hub,
                                                         servers: dict[str, Any]) -> None:
    a: Student = servers["a"]
    routes = hub.proxy_routes()
    target = next(v["target"] for k, v in routes.items() if k.rstrip("/") == f"/user/{STUDENT_B}")
    assert target.startswith("http://127.0.0.1:"), target
    url = f"{target}/user/{STUDENT_B}/api/status"
    assert requests.get(url, timeout=30, allow_redirects=False).status_code in (302, 403)
    assert requests.get(url, headers=hubclient.auth_headers(a), timeout=30,
                        allow_redirects=False).status_code == 403
    kernels = requests.get(f"{target}/user/{STUDENT_B}/api/kernels",
                           headers=hubclient.auth_headers(a), timeout=30)
    assert kernels.status_code == 403


PROBE = r"""
import json, os
from pathlib import Path
ARGS = json.loads(ARGS_JSON)
result = {"uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid(), "groups": os.getgroups()}
def attempt(name, fn):
    try:
        fn()
        result[name] = "READ"
    except PermissionError:
        result[name] = "PermissionError"
    except FileNotFoundError:
        result[name] = "FileNotFoundError"
other = Path(ARGS["home_b"])
attempt("list_home_b", lambda: os.listdir(other))
attempt("read_notebook_b", lambda: (other / "labkit" / "03_goodput.ipynb").read_bytes())
attempt("list_runtime_b", lambda: os.listdir(other / ".labkit/run"))
for key, path in ARGS["paths"].items():
    attempt(key, lambda p=path: Path(p).read_bytes())
attempt("list_state_dir", lambda: os.listdir(ARGS["state"]))
print("PROBE" + json.dumps(result))
"""


def test_kernel_of_a_cannot_read_b_or_the_hub(hub: Hub, servers: dict[str, Any]) -> None:
    a: Student = servers["a"]
    from labkit.hub.spawner import RUNTIME_DIR

    b_home = pwd.getpwnam(system_username(STUDENT_B)).pw_dir
    runtime = sorted((os.path.join(b_home, RUNTIME_DIR, f) for f in os.listdir(
        os.path.join(b_home, RUNTIME_DIR)) if f.startswith("kernel-")), key=len)
    paths = {"hub_db": str(hub.state_dir / "jupyterhub.sqlite"),
             "cookie_secret": str(hub.state_dir / "jupyterhub_cookie_secret"),
             "proxy_token": str(hub.state_dir / "proxy_token"),
             "roster": str(hub.state_dir / "roster.json"),
             # labkit.hub.passwords: the bcrypt hashes and the first-login codes
             **{f"passwords{i}": str(p) for i, p in enumerate(
                 sorted(hub.state_dir.glob("passwords.json"))
                 + sorted(hub.state_dir.glob("first_login_codes.json")))}}
    assert any(k.startswith("passwords") for k in paths), "no password store found"
    if runtime:
        paths["kernel_connection_b"] = runtime[0]
    client = HubKernelClient(a, hubclient.start_kernel(a))
    try:
        args = {"home_b": b_home, "paths": paths, "state": str(hub.state_dir)}
        out = hubclient.execute(client, f"ARGS_JSON = {json.dumps(args)!r}\n" + PROBE)
    finally:
        client.close()
    line = next(x for x in out["stdout"].splitlines() if x.startswith("PROBE"))
    result = json.loads(line[5:])
    entry = pwd.getpwnam(system_username(STUDENT_A))
    assert result["uid"] == result["euid"] == entry.pw_uid != 0
    assert 0 not in result["groups"]
    for key in ("list_home_b", "read_notebook_b", "list_runtime_b", "list_state_dir", *paths):
        assert result[key] == "PermissionError", (key, result)


def test_every_process_of_a_runs_as_a(servers: dict[str, Any]) -> None:
    import psutil

    uid = pwd.getpwnam(system_username(STUDENT_A)).pw_uid
    server_pid = None
    for proc in psutil.process_iter(["cmdline", "uids", "environ"]):
        cmd = " ".join(proc.info["cmdline"] or [])
        if "jupyterhub-singleuser" in cmd and proc.info["uids"].real == uid:
            server_pid = proc.pid
    assert server_pid is not None
    tree = [psutil.Process(server_pid), *psutil.Process(server_pid).children(recursive=True)]
    assert tree and all(p.uids().real == p.uids().effective == uid for p in tree)


# --- A's runaway code degrades only A --------------------------------------------------------


@pytest.fixture(scope="module")
def chart_b(servers: dict[str, Any]) -> Any:
    """B's lesson 03 app (voila on B's server): B's control -> chart path while A misbehaves."""
    control = attacks.ChartControl.open(servers["b"])
    control.move()  # the first move imports and draws once; the figures measure the next ones
    yield control
    control.close()


@pytest.mark.parametrize("attack", attacks.ATTACKS)
def test_runaway_a_degrades_only_a(servers: dict[str, Any], chart_b: Any, attack: str) -> None:
    """B's control -> chart and the Hub API stay within 2x of idle while A's kernel runs away
    (idle values under FLOOR_S count as FLOOR_S: a 2-core machine's scheduling noise)."""
    result = attacks.during_attack(servers["a"], chart_b, attack)
    idle, during = result["idle"], result["during"]
    for key in ("chart", "api"):
        assert during[key] <= 2 * max(idle[key], FLOOR_S), (attack, key, idle, during)
    # A's own server survives and answers again once its runaway code is gone
    assert result["a_server_status"] == 200, result


# --- culling and the curriculum --------------------------------------------------------------


def test_culled_server_comes_back_with_the_students_files(hub: Hub,
                                                          servers: dict[str, Any]) -> None:
    a: Student = servers["a"]
    home = pwd.getpwnam(system_username(STUDENT_A)).pw_dir
    mine = os.path.join(home, "labkit", "03_goodput.ipynb")
    client = HubKernelClient(a, hubclient.start_kernel(a))
    try:
        out = hubclient.execute(client, (
            "from pathlib import Path\n"
            "Path('~/labkit/mine.txt').expanduser().write_text('my work')\n"
            f"p = Path({mine!r}); p.write_text(p.read_text() + ' ')\n"
            "print('WROTE')"))
    finally:
        client.close()
    assert "WROTE" in out["stdout"], out
    edited = open(mine, encoding="utf-8").read()
    # the culler stops idle servers through the API exactly like this (DELETE .../server)
    teacher, _ = hubclient.login(hub.base, TEACHER, PASSWORDS[TEACHER])
    stop = teacher.api("DELETE", f"users/{STUDENT_A}/server")
    assert stop.status_code in (202, 204), stop.text
    deadline = time.monotonic() + 60
    while a.api("GET", f"users/{STUDENT_A}").json().get("servers"):
        assert time.monotonic() < deadline, "A's server did not stop"
        time.sleep(0.5)
    hubclient.start_server(a)
    assert open(os.path.join(home, "labkit", "mine.txt")).read() == "my work"
    assert open(mine, encoding="utf-8").read() == edited, "the student's edit was overwritten"
    checkout = os.path.join(os.path.dirname(__file__), "..", "..", "notebooks", LESSON)
    assert open(checkout, encoding="utf-8").read() != edited, "the teacher's copy changed"


def test_idle_culler_runs_with_the_teachers_timeout(hub: Hub) -> None:
    import psutil

    # serve supervises jupyterhub, which starts the culler (labkit.hub.lifetime's wrapper)
    culler = [p.cmdline() for p in psutil.Process(hub.proc.pid).children(recursive=True)
              if "jupyterhub_idle_culler" in " ".join(p.cmdline())]
    assert culler and "--timeout=3600" in culler[-1]


def test_status_says_which_limits_apply(hub: Hub, servers: dict[str, Any]) -> None:
    from labkit.hub.limits import detect_mechanism

    out = subprocess.run([sys.executable, "-m", "labkit.hub", "--state-dir", str(hub.state_dir),
                          "status", "--json"], capture_output=True, text=True, check=True)
    status = json.loads(out.stdout)
    assert status["limits"]["mechanism"] == detect_mechanism()
    assert status["running"] is True and status["teacher"] == TEACHER
    accounts = {s["username"]: s for s in status["students"]}
    assert accounts[STUDENT_A]["account"]["home_mode"] == "0o700"
    assert accounts[STUDENT_A]["password_set"]
    assert accounts[STUDENT_A]["account"]["description"] == "labkit student"
    # the teacher's system account says teacher, not student
    assert pwd.getpwnam(system_username(TEACHER)).pw_gecos == "labkit teacher"
    text = subprocess.run([sys.executable, "-m", "labkit.hub", "--state-dir",
                           str(hub.state_dir), "status"], capture_output=True, text=True,
                          check=True).stdout
    assert "실행 중(running)" in text and f"교사(teacher): {TEACHER} — 교사 역할(role)" in text
    assert "관리자 admin" not in text
    listed = subprocess.run([sys.executable, "-m", "labkit.hub", "--state-dir",
                             str(hub.state_dir), "roster", "list"], capture_output=True,
                            text=True, check=True).stdout
    rows = {line.split("\t")[0]: line.split("\t") for line in listed.splitlines()[1:]}
    assert rows[TEACHER][3] == "교사(teacher)" and rows[STUDENT_A][3] == "학생(student)"
