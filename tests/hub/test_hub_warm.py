"""수업 준비 on a real class hub: two students' servers started and preheated before the bell.

A hub of its own (students ``lkwarm-a``/``lkwarm-b``, a 20 s culler timeout) and the teacher's
command ``python -m labkit.hub warm --lesson 03 --until HH:MM``: both servers come up (paced by
the class page), each holds lesson 03's app rendered for the student's first request and no
other kernel, and the idle culler, which would stop an idle server after 20 s, leaves them
alone while the period lasts; with ``--page lab`` a server holds instead one JupyterLab session
of the lesson whose imports ran. The servers preheat themselves (labkit.hub.preheat, the lesson
and page as the start's user options): the
class page's token, which may act for every student, never reaches a student's server (issue
23; each server checks a token it receives with the hub, ``GET /hub/api/user``, which the hub
logs with the token's owner). Needs root (see conftest); skipped otherwise with that reason.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
import requests

from tests.browser.voila_client import find_widget, request_states
from tests.hub import hubclient
from tests.hub.conftest import ROOT_REASON
from tests.hub.ownhub import OwnHub, own_hub

pytestmark = [pytest.mark.hub,
              pytest.mark.skipif(os.geteuid() != 0, reason=ROOT_REASON)]
STUDENTS = {"lkwarm-a": "한가람", "lkwarm-b": "윤슬기"}
TEACHER = "lkwarm-t"
CULL_TIMEOUT_S = 20  # the culler looks every 10 s (labkit.hub.state.cull_every_s)


def _answers(hub: OwnHub) -> bool:
    try:
        return requests.get(f"http://127.0.0.1:{hub.port}/hub/health",
                            timeout=2).status_code == 200
    except requests.RequestException:
        return False


@pytest.fixture(scope="module")
def warm_hub() -> Iterator[OwnHub]:
    passwords = {TEACHER: "warm-teacher-1", **{n: f"{n}-pass-1" for n in STUDENTS}}
    with own_hub(STUDENTS, TEACHER, [], _answers, passwords=passwords,
                 cull_timeout_s=CULL_TIMEOUT_S, concurrent_spawn_limit=2) as hub:
        yield hub


def _servers(teacher: hubclient.Student) -> dict[str, dict[str, object]]:
    return {n: (teacher.api("GET", f"users/{n}").json().get("servers") or {}).get("", {})
            for n in STUDENTS}


def test_warm_starts_and_preheats_every_student_and_the_culler_waits(warm_hub: OwnHub) -> None:
    base = f"http://127.0.0.1:{warm_hub.port}/"
    until = (dt.datetime.now().astimezone() + dt.timedelta(minutes=4)).strftime("%H:%M")
    started = time.monotonic()
    log_before = len(warm_hub.log())
    done = subprocess.run([sys.executable, "-m", "labkit.hub", "--state-dir",
                           str(warm_hub.state), "warm", "--lesson", "03", "--until", until],
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout + done.stderr + warm_hub.log()[-3000:]
    assert "학생 2명 가운데 2명의 서버가 켜졌습니다" in done.stdout
    assert "3강: 2명의 앱(voila) 화면을 미리 만들어 두었습니다" in done.stdout
    assert f"{until}까지 이 서버들을 멈추지 않습니다" in done.stdout
    warmed_s = time.monotonic() - started
    deadline = time.monotonic() + 300  # each server preheats itself after it is ready
    rendering = "labkit: rendering 03_goodput.ipynb's app before the bell (kernel "
    while (warm_hub.log()[log_before:].count(rendering) < 2 and time.monotonic() < deadline):
        time.sleep(2)
    since = warm_hub.log()[log_before:]
    # lesson 03's app, rendered once in a kernel of its own (labkit.hub.voila_pool), and no
    # JupyterLab session beside it: one page per warmed server
    assert since.count(rendering) == 2, since[-3000:]
    assert "labkit: preheated 03_goodput.ipynb" not in since
    assert "before the bell failed" not in since

    teacher, reply = hubclient.login(base, TEACHER, "warm-teacher-1")
    assert hubclient.logged_in(reply)
    teacher.token = teacher.api("POST", f"users/{TEACHER}/tokens",
                                json={"note": "test", "expires_in": 3600}).json()["token"]
    assert all(s.get("ready") for s in _servers(teacher).values())
    page = teacher.session.get(base + "services/classpage/", timeout=60)
    assert ">수업 준비</button>" in page.text and "수업 준비를 마쳤습니다" in page.text

    time.sleep(2 * CULL_TIMEOUT_S)  # idle twice the timeout: only the warm-up keeps them
    servers = _servers(teacher)
    assert all(s.get("ready") for s in servers.values()), (servers, warm_hub.log()[-3000:])
    assert "Culling server" not in warm_hub.log()

    for name in STUDENTS:  # each student finds lesson 03's app rendered, one kernel only
        student = _student(base, name)
        kernels = student.session.get(f"{student.server_url}api/kernels", timeout=60,
                                      headers=hubclient.auth_headers(student)).json()
        assert len(kernels) == 1, kernels
        # the app: the page rendered before the bell, its widgets in the kernel that ran it
        app_page = hubclient.fetch_voila(student, "03_goodput.ipynb", timeout=300)
        served = (f"labkit: serving 03_goodput.ipynb from the page rendered before the bell "
                  f"(kernel {app_page.kernel_id})")
        assert served in warm_hub.log(), warm_hub.log()[-3000:]
        assert f"{rendering}{app_page.kernel_id})" in warm_hub.log()  # the kernel warmed for it
        app = hubclient.HubKernelClient(student, app_page.kernel_id, timeout=120)
        states = request_states(app)
        app.close()
        assert find_widget(states, "lk-waterfall") and len(states) > 20
        # one page per warm-up: the next request renders in a kernel of its own, as before
        again = hubclient.fetch_voila(student, "03_goodput.ipynb", timeout=300)
        assert again.kernel_id != app_page.kernel_id
        assert warm_hub.log().count("from the page rendered before the bell") == \
            list(STUDENTS).index(name) + 1
    # no student's server was ever handed the class page's token: a server checks each token it
    # gets with the hub (the hub logs "200 GET /hub/api/user (classpage@...)" for that one), and
    # nothing of the warm-up went through the proxy to /user/...
    since = warm_hub.log()[log_before:]
    assert not re.search(r"GET /hub/api/user[ ?][^\n]*\(classpage@", since), since[-3000:]
    assert not re.search(r"/user/lkwarm-[ab]/[^\n]*\(classpage@", since), since[-3000:]
    print(f"warm-up of 2 students with lesson 03: {warmed_s:.0f} s")


def test_warm_page_lab_preheats_the_lessons_notebook_session(warm_hub: OwnHub) -> None:
    """``--page lab``: the student's JupyterLab session of the lesson, its imports run; no app."""
    base = f"http://127.0.0.1:{warm_hub.port}/"
    name = "lkwarm-b"
    teacher, reply = hubclient.login(base, TEACHER, "warm-teacher-1")
    assert hubclient.logged_in(reply)
    teacher.token = teacher.api("POST", f"users/{TEACHER}/tokens",
                                json={"note": "test", "expires_in": 600}).json()["token"]
    teacher.api("DELETE", f"users/{name}/server")
    deadline = time.monotonic() + 120
    while _servers(teacher)[name] and time.monotonic() < deadline:
        time.sleep(1)
    assert not _servers(teacher)[name]
    log_before = len(warm_hub.log())
    done = subprocess.run([sys.executable, "-m", "labkit.hub", "--state-dir",
                           str(warm_hub.state), "warm", "--lesson", "03", "--page", "lab"],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr + warm_hub.log()[-3000:]
    # lkwarm-a's server ran already and is left as it was: only lkwarm-b is preheated
    assert "3강: 1명의 노트북 커널(kernel)을 미리 띄워 두었습니다" in done.stdout, done.stdout
    deadline = time.monotonic() + 300
    while ("labkit: preheated 03_goodput.ipynb" not in warm_hub.log()[log_before:]
           and time.monotonic() < deadline):
        time.sleep(2)
    since = warm_hub.log()[log_before:]
    assert since.count("labkit: preheated 03_goodput.ipynb") == 1, since[-3000:]
    assert "rendering 03_goodput.ipynb's app" not in since
    student = _student(base, name)
    sessions = student.session.get(f"{student.server_url}api/sessions", timeout=60,
                                   headers=hubclient.auth_headers(student)).json()
    assert [s["path"] for s in sessions] == ["03_goodput.ipynb"], sessions
    client = hubclient.HubKernelClient(student, sessions[0]["kernel"]["id"])
    ran = hubclient.execute(client, "import sys; print('labkit.ui' in sys.modules)")
    client.close()
    assert ran["stdout"].strip() == "True", ran
    refused = subprocess.run([sys.executable, "-m", "labkit.hub", "--state-dir",
                              str(warm_hub.state), "warm", "--lesson", "03", "--page", "pdf"],
                             capture_output=True, text=True, timeout=60, check=False)
    assert refused.returncode == 2 and "미리 만들 수 있는 화면이 아닙니다" in refused.stdout


def _student(base: str, name: str) -> hubclient.Student:
    student, reply = hubclient.login(base, name, f"{name}-pass-1")
    assert hubclient.logged_in(reply)
    student.token = student.api("POST", f"users/{name}/tokens",
                                json={"note": "test", "expires_in": 600}).json()["token"]
    return student
