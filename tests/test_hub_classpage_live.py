"""The class page against a real JupyterHub on loopback (configurable-http-proxy, local spawner).

A hub with a test-only admin service token starts a student's server (with the GPU share from
``labkit.hub.gpushare`` in a pre-spawn hook; the class page reads results from the homes),
an exercise answer is checked in the student's own kernel, the teacher logs in and opens the
class page through OAuth, the page lists the student with their GPU share and exercise result,
a classmate is refused the page and the student's progress, and the teacher's button stops the
student's server; a spawn with no GPU share left fails with the Korean message.

configurable-http-proxy: ``$LABKIT_CHP``, else on PATH, else the project's local prefix
(``.hub/node``, where ``make hub`` installs it), else ``npm install`` into a temporary prefix;
skipped with the reason when none can be had.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

requests = pytest.importorskip("requests")
pytest.importorskip("jupyterhub")

from labkit.data import progress  # noqa: E402
from tests.hub.hubclient import BIN, LOOPBACK_HUB_CONFIG, running_jupyterhub  # noqa: E402

pytestmark = pytest.mark.serial  # timing-bound: make test runs it alone (second tier)

CHP_VERSION = "5.3.0"  # the configurable-http-proxy release in the reference notes
ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def chp(tmp_path_factory: pytest.TempPathFactory) -> str:
    local = ROOT / ".hub" / "node" / "node_modules" / ".bin" / "configurable-http-proxy"
    found = (os.environ.get("LABKIT_CHP") or shutil.which("configurable-http-proxy")
             or (str(local) if local.exists() else None))
    if found:
        return found
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("configurable-http-proxy unavailable: no LABKIT_CHP, not on PATH, no npm")
    prefix = tmp_path_factory.mktemp("chp")
    result = subprocess.run(
        [npm, "install", "--prefix", str(prefix), "--no-fund", "--no-audit",
         f"configurable-http-proxy@{CHP_VERSION}"],
        capture_output=True, text=True, check=False, timeout=300)
    path = prefix / "node_modules" / ".bin" / "configurable-http-proxy"
    if result.returncode != 0 or not path.exists():
        pytest.skip(f"configurable-http-proxy unavailable: npm install failed: "
                    f"{result.stderr[-300:]}")
    return str(path)


class Hub:
    def __init__(self, base: str, token: str, home: Path, log: Path) -> None:
        self.base = base
        self.token = token
        self.home = home
        self.log = log

    def api(self, method: str, path: str, **kw: Any) -> Any:
        r = requests.request(method, f"{self.base}/hub/api{path}", timeout=30,
                             headers={"Authorization": f"token {self.token}"}, **kw)
        r.raise_for_status()
        return r.json() if r.content else None

    def wait_server(self, name: str, ready: bool, timeout_s: float = 90) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            server = (self.api("GET", f"/users/{name}").get("servers") or {}).get("")
            if (bool(server and server.get("ready"))) == ready:
                return
            time.sleep(0.5)
        raise AssertionError(f"{name}: server ready={ready} not reached; hub log:\n"
                             + self.log.read_text(errors="replace")[-3000:])


CONFIG = LOOPBACK_HUB_CONFIG + """
from labkit.data.roster import RosterEntry
from labkit.hub.classpage import service_spec
c.DummyAuthenticator.password = {password!r}
c.Authenticator.allowed_users = {{"kim01", "lee02"}}
c.Authenticator.admin_users = {{"teacher"}}
from jupyterhub.spawner import SimpleLocalProcessSpawner
from labkit.hub.gpushare import ShareState

class ClassSpawner(ShareState, SimpleLocalProcessSpawner):
    pass

c.JupyterHub.spawner_class = ClassSpawner
from labkit.hub.auth import landing_url
c.JupyterHub.default_url = landing_url  # as labkit.hub.config sets it
c.ClassSpawner.home_dir_template = "{home}/{{username}}"
c.Spawner.cmd = [{singleuser!r}]
c.Spawner.args = ["--allow-root"]
c.Spawner.environment = {{"LABKIT_GPU": "sim:H100-80GB"}}
c.Spawner.http_timeout = 90
c.Spawner.start_timeout = 120

ROSTER = [RosterEntry("kim01", "김민준"), RosterEntry("lee02", "이서연"),
          RosterEntry("teacher", "선생님")]

from labkit.hub.gpushare import pre_spawn_hook
by_policy = {{p: pre_spawn_hook(["kim01", "lee02"], p) for p in ("auto", "mig")}}

def pre_spawn(spawner):
    # lee02 asks for a MIG device on a lab without MIG: the spawn must fail in Korean
    by_policy["mig" if spawner.user.name == "lee02" else "auto"](spawner)

c.Spawner.pre_spawn_hook = pre_spawn
service, role = service_spec(port={service_port}, roster=ROSTER, admins=["teacher"],
                             python=sys.executable, homes="{home}/{{username}}")
c.JupyterHub.services = [service, {{"name": "tester", "api_token": {token!r}}}]
# the page's scopes name the students' group (as labkit.hub.config fills it)
c.JupyterHub.load_groups = {{"students": {{"users": ["kim01", "lee02"]}}}}
c.JupyterHub.load_roles = [role, {{"name": "tester", "services": ["tester"],
                                   "scopes": ["admin:users", "admin:servers",
                                              "access:servers"]}}]
"""


@pytest.fixture(scope="module")
def hub(chp: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    root = tmp_path_factory.mktemp("hub")
    state, home = root / "state", root / "home"
    state.mkdir(mode=0o700)
    home.mkdir()
    port, token, password = _free_port(), secrets.token_hex(16), secrets.token_hex(8)
    config = root / "jupyterhub_config.py"
    config.write_text(textwrap.dedent(CONFIG).format(
        port=port, hub_port=_free_port(), proxy_api_port=_free_port(),
        service_port=_free_port(), chp=chp, state=state, home=home, password=password,
        singleuser=str(BIN / "jupyterhub-singleuser"), token=token), encoding="utf-8")
    log = root / "hub.log"
    base = f"http://127.0.0.1:{port}"
    with running_jupyterhub(config, state, log, base, env={"LABKIT_GPU": "sim:H100-80GB"}):
        h = Hub(base, token, home, log)
        h.password = password  # type: ignore[attr-defined]
        yield h


# What a student's click on "확인" runs in their kernel (labkit.ui.exercises).
CHECK_ANSWER = """
from labkit.ui import exercises as e
box = e.exercise_set([e.Exercise("orch.ex5", 0.5, 0.05, "h")])
row = box.children[0].children[1]
row.children[0].value = "0.5"
row.children[2].click()
print(box.children[0].children[2].value)
"""


#: Lines a student could append to their own progress file: an exercise no lesson asks, a
#: graded prediction (predictions never are), a time in the future. The page must not show them.
FORGED = [
    {"v": 1, "time": "2026-01-01T00:00:00+00:00", "exercise": ex, "correct": True, "answer": "1"}
    for ex in ("goodput.ex99", "predict.08.best_policy")
] + [{"v": 1, "time": "2999-01-01T00:00:00+00:00", "exercise": "mig.ex1", "correct": True,
      "answer": "1"}]


def _run_in_kernel(hub: Hub, user: str, code: str) -> str:
    """Run ``code`` in a new kernel of ``user``'s server through the proxy; return stdout."""
    import uuid

    import websocket

    auth = {"Authorization": f"token {hub.token}"}
    r = requests.post(f"{hub.base}/user/{user}/api/kernels", headers=auth, json={}, timeout=60)
    r.raise_for_status()
    kernel = r.json()["id"]
    ws = websocket.create_connection(
        f"{hub.base.replace('http', 'ws')}/user/{user}/api/kernels/{kernel}/channels",
        header=[f"Authorization: token {hub.token}"], timeout=60)
    try:
        msg_id = uuid.uuid4().hex
        ws.send(json.dumps({
            "header": {"msg_id": msg_id, "username": user, "session": uuid.uuid4().hex,
                       "msg_type": "execute_request", "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": {"code": code, "silent": False, "store_history": False,
                        "user_expressions": {}, "allow_stdin": False, "stop_on_error": True}}))
        out: list[str] = []
        replied = idle = False  # shell reply and iopub idle may come in either order
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (replied and idle):
            msg = json.loads(ws.recv())
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind = msg["msg_type"]
            if kind == "stream":
                out.append(msg["content"]["text"])
            elif kind == "error":
                raise AssertionError("\n".join(msg["content"]["traceback"]))
            replied = replied or kind == "execute_reply"
            idle = idle or (kind == "status" and msg["content"]["execution_state"] == "idle")
        assert replied and idle, "no execute_reply"
        return "".join(out)
    finally:
        ws.close()
        requests.delete(f"{hub.base}/user/{user}/api/kernels/{kernel}", headers=auth,
                        timeout=60)


def _login(hub: Hub, name: str) -> Any:
    s = requests.Session()
    page = s.get(f"{hub.base}/hub/login", timeout=30)
    xsrf = re.search(r'name="_xsrf" value="([^"]+)"', page.text)
    data = {"username": name, "password": hub.password}  # type: ignore[attr-defined]
    if xsrf:
        data["_xsrf"] = xsrf.group(1)
    r = s.post(f"{hub.base}/hub/login?next=/hub/home", data=data, timeout=60,
               allow_redirects=False)
    assert r.status_code in (302, 303), (r.status_code, r.text[-500:])
    return s


def test_class_page_lists_the_student_and_stops_their_server(hub: Hub) -> None:
    hub.api("POST", "/users/kim01/server")
    hub.wait_server("kim01", ready=True)
    # the student checks an exercise answer in their own kernel: recorded in their own home
    assert "✔" in _run_in_kernel(hub, "kim01", CHECK_ANSWER)
    path = progress.progress_path(hub.home / "kim01")
    records, _ = progress.read_progress(path)
    assert [(r.exercise, r.correct) for r in records] == [("orch.ex5", True)]
    with path.open("a", encoding="utf-8") as forge:  # what a student can write in their home
        for line in FORGED:
            forge.write(json.dumps(line) + "\n")

    teacher = _login(hub, "teacher")
    page = teacher.get(f"{hub.base}/services/classpage/", timeout=60)
    assert page.status_code == 200, page.text[-1000:]
    row = re.search(r'<tr class="lk-student lk-online" data-username="kim01">(.*?)</tr>',
                    page.text)
    assert row, page.text[-2000:]
    assert "김민준" in row.group(1) and "접속 중" in row.group(1)
    assert "1/1 정답" in row.group(1) and "8강 문제 5 ✔" in row.group(1)
    # the forged lines are not shown, only counted
    assert "goodput.ex99" not in page.text and "mig.ex1" not in page.text
    assert "확인되지 않은 기록 3개는 뺐습니다" in row.group(1)
    assert "학생 서버가 보고한 결과" in page.text
    # two students, one simulated H100 without MIG: auto gives "shared" (2 on GPU 0); the
    # report carries no share: this is what the hub stored at the spawn (ShareState)
    assert "GPU 0, 학생 2명이 번갈아 씁니다" in row.group(1) and "내 GPU 몫" not in page.text
    assert re.search(r"\d[\d,]* MiB", row.group(1))
    lee = re.search(r'<tr class="lk-student lk-never" data-username="lee02">(.*?)</tr>',
                    page.text)
    assert lee and "아직 로그인 안 함" in lee.group(1)

    student = _login(hub, "lee02")
    refused = student.get(f"{hub.base}/services/classpage/", timeout=60)
    assert refused.status_code == 403 or "우리 반 실습 현황" not in refused.text

    # a classmate (or nobody) cannot read kim01's progress file through kim01's server
    for who in (student, requests.Session()):
        other = who.get(f"{hub.base}/user/kim01/api/contents/.labkit/progress.jsonl",
                        timeout=60, allow_redirects=False)
        assert other.status_code in (302, 403), (other.status_code, other.text[:300])
        assert "orch.ex5" not in other.text

    xsrf = re.search(r'name="_xsrf" value="([^"]+)"', page.text)
    assert xsrf
    forged = teacher.post(f"{hub.base}/services/classpage/stop", timeout=60,
                          data={"username": "kim01"})  # no XSRF token: a cross-site form
    assert forged.status_code == 403
    assert (hub.api("GET", "/users/kim01")["servers"][""])["ready"]
    not_a_student = teacher.post(f"{hub.base}/services/classpage/stop", timeout=60,
                                 data={"username": "teacher", "_xsrf": xsrf.group(1)})
    assert not_a_student.status_code == 400
    asked = teacher.post(f"{hub.base}/services/classpage/stop", timeout=60,
                         data={"username": "kim01", "_xsrf": xsrf.group(1)})
    assert asked.status_code == 200 and "김민준 (kim01) 학생의 서버를 중지합니까?" in asked.text
    assert (hub.api("GET", "/users/kim01")["servers"][""])["ready"]  # not before the yes
    stopped = teacher.post(f"{hub.base}/services/classpage/stop", timeout=60,
                           data={"username": "kim01", "_xsrf": xsrf.group(1),
                                 "confirm": "yes"})
    assert stopped.status_code == 200 and "kim01 학생의 서버를 중지했습니다" in stopped.text
    hub.wait_server("kim01", ready=False)
    assert hub.api("GET", "/users/kim01")["servers"] == {}
    after = teacher.get(f"{hub.base}/services/classpage/", timeout=60)
    kim = re.search(r'<tr class="lk-student lk-offline" data-username="kim01">(.*?)</tr>',
                    after.text)
    assert kim and "서버 꺼짐" in kim.group(1) and "1/1 정답" in kim.group(1)


def test_the_teacher_lands_on_the_class_page_and_a_student_on_their_lab(hub: Hub) -> None:
    landed = {}
    for name in ("teacher", "lee02"):
        s = requests.Session()
        page = s.get(f"{hub.base}/hub/login", timeout=30)
        xsrf = re.search(r'name="_xsrf" value="([^"]+)"', page.text)
        data = {"username": name, "password": hub.password,  # type: ignore[attr-defined]
                "_xsrf": xsrf.group(1) if xsrf else ""}
        r = s.post(f"{hub.base}/hub/login", data=data, timeout=60, allow_redirects=False)
        assert r.status_code in (302, 303), (r.status_code, r.text[-300:])
        again = s.get(f"{hub.base}/hub/", timeout=60, allow_redirects=False)  # later visits
        landed[name] = (r.headers["Location"], again.headers.get("Location", ""))
    assert landed["teacher"] == ("/services/classpage/", "/services/classpage/")
    assert all("classpage" not in url for url in landed["lee02"]), landed
    assert landed["lee02"][0] in ("/hub/spawn", "/user/lee02/"), landed


def test_spawn_without_a_share_fails_with_the_korean_message(hub: Hub) -> None:
    r = requests.post(f"{hub.base}/hub/api/users/lee02/server", timeout=60,
                      headers={"Authorization": f"token {hub.token}"})
    assert r.status_code >= 400
    assert "나눠 줄 MIG 장치(MIG device)가 없습니다" in r.json().get("message", ""), r.text
    assert not (hub.api("GET", "/users/lee02").get("servers") or {})


@pytest.mark.browser
def test_teacher_stops_a_student_from_the_class_page_in_chromium(hub: Hub, browser: Any) -> None:
    # the session's one chromium (tests/conftest.py)
    hub.api("POST", "/users/kim01/server")
    hub.wait_server("kim01", ready=True)
    assert "✔" in _run_in_kernel(hub, "kim01", CHECK_ANSWER)  # the same exercise: 1/1 again
    ctx = browser.new_context(locale="ko-KR")
    try:
        page = ctx.new_page()
        page.goto(f"{hub.base}/hub/login", timeout=60_000)
        page.fill("input[name=username]", "teacher")
        page.fill("input[name=password]", hub.password)  # type: ignore[attr-defined]
        page.click("[type=submit]")
        # the teacher lands on the class page itself (labkit.hub.auth.landing_url)
        page.wait_for_url("**/services/classpage/**", timeout=60_000)
        row = page.locator('tr[data-username="kim01"]')
        row.wait_for(timeout=60_000)
        text = row.inner_text()
        assert "김민준" in text and "접속 중" in text and "1/1 정답" in text
        # the share the earlier tests of this module left (shared GPU 0 or one of its MIG devices:
        # chromium tests run last, tests/conftest.py)
        assert ("GPU 0, 학생 2명이" in text or "GPU 0의 MIG 장치" in text) and "8강 문제 5" in text
        row.locator("button.lk-stop").click()
        page.locator("button.lk-stop-confirm").click(timeout=60_000)  # the second step
        page.locator(".lk-message").wait_for(timeout=60_000)
        assert "kim01 학생의 서버를 중지했습니다" in page.locator(".lk-message").inner_text()
    finally:
        ctx.close()
    hub.wait_server("kim01", ready=False)
