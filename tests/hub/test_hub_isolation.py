"""Issue 23's attacks 2, 3 and 4 against the real class hub, as a mischievous student tries them.

- 3: the class page's token must never reach a process a student controls: after the teacher
  opened the class page, no process of A or B holds it (environment or memory, read as root),
  and the token itself opens nothing of B's;
- 2: the teacher is no admin: opening a student's server is refused by the hub (403, Korean),
  the teacher cannot mint tokens for others nor for access to a student's server;
- 4: from A's kernel nothing of B's kernels can be connected to or subscribed to: no TCP port
  of B's kernels listens (``/proc/net/tcp``), their IPC sockets sit in B's 0700 home;
- found alongside: a student who turned ``~/labkit`` into a link starts their server again.

Needs root (see conftest); skipped otherwise with that reason.
"""

from __future__ import annotations

import json
import os
import pwd
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
import requests

from labkit.hub.roster import system_username
from labkit.i18n import t
from tests.hub import hubclient
from tests.hub.conftest import PASSWORDS, ROOT_REASON, STUDENT_A, STUDENT_B, TEACHER, Hub
from tests.hub.hubclient import HubKernelClient, Student

pytestmark = [pytest.mark.hub,
              pytest.mark.skipif(os.geteuid() != 0, reason=ROOT_REASON)]


@pytest.fixture(scope="module")
def online(hub: Hub, students: dict[str, Student]) -> dict[str, Student]:
    """A and B with API tokens and running servers."""
    for s in (students[STUDENT_A], students[STUDENT_B]):
        hubclient.start_server(s)
    return {"a": students[STUDENT_A], "b": students[STUDENT_B]}


@pytest.fixture(scope="module")
def teacher(hub: Hub) -> Student:
    """The teacher, logged in (first use sets the password)."""
    who, reply = hubclient.login(hub.base, TEACHER, PASSWORDS[TEACHER])
    assert hubclient.logged_in(reply), (reply.status_code, reply.text[-300:])
    return who


def _uid(name: str) -> int:
    return pwd.getpwnam(system_username(name)).pw_uid


def _holds(pid: int, needle: bytes) -> str | None:
    """Where process ``pid`` holds ``needle``: "environ", "memory" or None (read as root)."""
    try:
        if needle in Path(f"/proc/{pid}/environ").read_bytes():
            return "environ"
        maps = Path(f"/proc/{pid}/maps").read_text().splitlines()
        with open(f"/proc/{pid}/mem", "rb", 0) as mem:
            for line in maps:
                fields = line.split()
                if "r" not in fields[1] or (len(fields) > 5 and fields[5] in ("[vvar]",
                                                                               "[vsyscall]")):
                    continue
                start, end = (int(x, 16) for x in fields[0].split("-"))
                step = 64 * 2**20
                for at in range(start, end, step):
                    try:
                        mem.seek(at)
                        chunk = mem.read(min(step + len(needle), end - at))
                    except (OSError, OverflowError, ValueError):
                        break
                    if needle in chunk:
                        return "memory"
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None


def _class_page_token(hub: Hub) -> str:
    # serve supervises jupyterhub, which starts the service (labkit.hub.lifetime's wrapper)
    below = psutil.Process(hub.proc.pid).children(recursive=True)
    page = [p for p in below if "labkit.hub.classpage" in " ".join(p.cmdline())
            and "labkit.hub.lifetime" not in " ".join(p.cmdline())]
    assert len(page) == 1, [p.cmdline() for p in page]
    token = page[0].environ().get("JUPYTERHUB_API_TOKEN", "")
    assert len(token) >= 32
    return token


def test_class_page_token_never_reaches_a_students_process(hub: Hub, online: dict[str, Any],
                                                           teacher: Student) -> None:
    """Attack 3: the class page used to send its token (every student's server) to each
    student's server on every refresh, where the student read it from their server's memory."""
    for _ in range(2):  # two refreshes, with both students online
        page = teacher.session.get(f"{hub.base}services/classpage/", timeout=120)
        assert page.status_code == 200, page.text[-500:]
        assert f'data-username="{STUDENT_A}"' in page.text
    token = _class_page_token(hub)
    for name in (STUDENT_A, STUDENT_B):
        uid = _uid(name)
        procs = [p for p in psutil.process_iter(["uids"]) if p.info["uids"]
                 and p.info["uids"].real == uid]
        assert procs, f"{name} runs nothing"
        found = {p.pid: _holds(p.pid, token.encode()) for p in procs}
        assert not any(found.values()), (name, found)
    # and whatever a student found, the class page's token opens nothing of B's
    auth = {"Authorization": f"token {token}"}
    for path in ("api/contents/labkit", "api/kernels", "api/status"):
        reply = requests.get(f"{hub.base}user/{STUDENT_B}/{path}", headers=auth, timeout=30,
                             allow_redirects=False)
        assert reply.status_code in (302, 403), (path, reply.status_code)
    minted = requests.post(f"{hub.base}hub/api/users/{STUDENT_B}/tokens", headers=auth,
                           json={"note": "x"}, timeout=30)
    assert minted.status_code == 403, minted.text


def test_teacher_opening_a_students_server_is_refused_in_korean(hub: Hub, online: dict[str, Any],
                                                                teacher: Student) -> None:
    """Attack 2: the teacher's browser opened a student's voila page with admin rights."""
    for path in ("lab", "voila/render/03_goodput.ipynb"):  # pages: to the hub's OAuth, refused
        reply = teacher.session.get(f"{hub.base}user/{STUDENT_A}/{path}", timeout=120)
        reply.encoding = "utf-8"
        assert reply.status_code == 403, (path, reply.status_code, reply.url)
        assert "/hub/" in reply.url  # the hub refused it, not the student's own server
        assert t("hub.error.403") in reply.text and "JupyterLab" not in reply.text
    api = teacher.session.get(f"{hub.base}user/{STUDENT_A}/api/contents/labkit", timeout=60,
                              headers={"X-XSRFToken": teacher.xsrf()})
    assert api.status_code in (302, 403) and "03_goodput" not in api.text, api.status_code
    me = teacher.api("GET", "user").json()
    assert me["admin"] is False and "teacher" in me.get("roles", ["teacher"]), me
    others = [s for s in me.get("scopes", []) if s.startswith("access:servers")
              and s not in (f"access:servers!user={TEACHER}", f"access:servers!server={TEACHER}/")]
    assert others == [], me.get("scopes")  # the teacher's own server only
    # no tokens for others, nor a token of one's own that opens a student's server
    for who, body in ((STUDENT_A, {"note": "x"}),
                      (TEACHER, {"note": "x", "scopes": [f"access:servers!user={STUDENT_A}"]}),
                      (TEACHER, {"note": "x", "scopes": ["admin:users"]})):
        reply = teacher.api("POST", f"users/{who}/tokens", json=body)
        # 403: not the teacher's to ask; 400: "Not assigning requested scopes ... not held"
        assert reply.status_code in (400, 403), (who, body, reply.status_code, reply.text[:300])
    # what the teacher needs still works: the class list and stopping/starting a server
    users = teacher.api("GET", "users")
    assert users.status_code == 200 and {STUDENT_A, STUDENT_B} <= {
        u["name"] for u in users.json()}


def test_teacher_sees_a_students_work_as_static_sanitized_html(hub: Hub,
                                                                online: dict[str, Any],
                                                                teacher: Student) -> None:
    """Where the teacher needs a student's work: the class page shows it from the hub's side,
    outputs rendered, no script of the student's (sanitized and under a sandbox CSP)."""
    import nbformat

    a = online["a"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "print('my answer')", outputs=[
            nbformat.v4.new_output("stream", name="stdout", text="my answer 42\n"),
            nbformat.v4.new_output("display_data", data={
                "text/html": "<b>bold</b><script>document.title='PWNED'</script>"
                             "<img src=x onerror=\"fetch('/hub/api/users')\">"})])])
    client = HubKernelClient(a, hubclient.start_kernel(a))
    try:
        out = hubclient.execute(client, (
            "import os\nfrom pathlib import Path\n"
            f"Path('~/labkit/mine.ipynb').expanduser().write_text({nbformat.writes(nb)!r})\n"
            "os.symlink('/etc/shadow', os.path.expanduser('~/labkit/shadow.ipynb'))\n"
            "print('PLANTED')"))
    finally:
        client.close()
    assert "PLANTED" in out["stdout"], out
    base = f"{hub.base}services/classpage/work/{STUDENT_A}/"
    listing = teacher.session.get(base, timeout=60)
    assert listing.status_code == 200 and "mine.ipynb" in listing.text
    assert "03_goodput.ipynb" in listing.text
    view = teacher.session.get(base + "mine.ipynb", timeout=120)
    assert view.status_code == 200, view.text[-500:]
    assert view.headers["Content-Security-Policy"].startswith("sandbox;")
    assert "my answer 42" in view.text and "<b>bold</b>" in view.text
    import re

    tags = [tag.lower() for tag in re.findall(r"<[^>]+>", view.text)]  # what chromium parses
    assert not [tag for tag in tags if tag.startswith(("<script", "<img", "<iframe"))
                or "onerror" in tag or "/hub/" in tag], tags
    shadow = teacher.session.get(base + "shadow.ipynb", timeout=60)
    assert shadow.status_code == 400 and t("hub.class.work.unsafe") in shadow.text
    assert "root:" not in shadow.text
    page = teacher.session.get(f"{hub.base}services/classpage/", timeout=120)
    assert f'href="work/{STUDENT_A}/"' in page.text
    # a student cannot open the view
    refused = a.session.get(base + "mine.ipynb", timeout=60)
    assert refused.status_code == 403 or "my answer 42" not in refused.text


def test_teacher_meets_no_authorize_page_on_the_normal_path(hub: Hub, teacher: Student) -> None:
    fresh, reply = hubclient.login(hub.base, TEACHER, PASSWORDS[TEACHER])
    assert hubclient.logged_in(reply)
    # no admin flag, and still the teacher's landing (labkit.hub.auth.landing_url, by role)
    assert reply.headers["Location"].endswith("/services/classpage/"), reply.headers
    page = fresh.session.get(f"{hub.base}services/classpage/", timeout=120)
    assert page.status_code == 200 and "oauth2/authorize" not in page.url
    assert t("hub.oauth.heading") not in page.text


#: Run in A's kernel: B's listening TCP sockets, a SUB on each, an AF_UNIX connect on B's IPC.
PROBE = r"""
import json, socket, time
ARGS = json.loads(ARGS_JSON)
listening = []
for table in ("/proc/net/tcp", "/proc/net/tcp6"):
    try:
        lines = open(table).read().splitlines()[1:]
    except OSError:
        continue
    for line in lines:
        f = line.split()
        if f[3] == "0A" and int(f[7]) == ARGS["uid_b"]:
            listening.append(int(f[1].rsplit(":", 1)[1], 16))
received = {}
import zmq
ctx = zmq.Context.instance()
for port in sorted(set(listening) - {ARGS["server_port"]}):
    sub = ctx.socket(zmq.SUB)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    sub.connect(f"tcp://127.0.0.1:{port}")
    sub.RCVTIMEO = 3000
    try:
        received[port] = len(sub.recv_multipart())
    except zmq.Again:
        received[port] = 0
    sub.close(0)
ipc = {}
for path in ARGS["ipc"]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        ipc[path] = "CONNECTED"
    except OSError as err:
        ipc[path] = type(err).__name__
    finally:
        s.close()
print("PROBE" + json.dumps({"listening": sorted(set(listening)), "received": received,
                            "ipc": ipc}))
"""


def test_kernel_of_a_cannot_reach_bs_kernels(hub: Hub, online: dict[str, Any]) -> None:
    """Attack 4: a ZeroMQ SUB on a classmate's IOPub port (found in /proc/net/tcp) got their
    code and output; the kernels now listen on IPC sockets in the student's 0700 home."""
    from labkit.hub.spawner import RUNTIME_DIR

    a, b = online["a"], online["b"]
    b_client = HubKernelClient(b, hubclient.start_kernel(b))
    a_client = HubKernelClient(a, hubclient.start_kernel(a))
    try:
        hubclient.execute(b_client, "print('B works')")
        voila = hubclient.fetch_voila(b, "03_goodput.ipynb")  # voila's kernels: the same manager
        uid_b = _uid(STUDENT_B)
        runtime = Path(pwd.getpwnam(system_username(STUDENT_B)).pw_dir) / RUNTIME_DIR
        files = sorted(runtime.iterdir())
        connections = {p.name: json.loads(p.read_text()) for p in files
                       if p.name.startswith("kernel-") and p.suffix == ".json"}
        assert f"kernel-{voila.kernel_id}.json" in connections, sorted(connections)
        assert all(c["transport"] == "ipc" for c in connections.values()), connections
        sockets = [str(p) for p in files if "-ipc-" in p.name]
        assert sockets, [p.name for p in files]
        # as root: B's kernels have no TCP socket at all
        kernels = [p for p in psutil.process_iter(["uids", "cmdline"]) if p.info["uids"]
                   and p.info["uids"].real == uid_b
                   and "kernel-" in " ".join(p.info["cmdline"] or [])]  # -f kernel-<id>.json
        assert kernels
        assert [c for k in kernels for c in k.net_connections(kind="inet")] == []
        routes = hub.proxy_routes()
        target = next(v["target"] for k, v in routes.items()
                      if k.rstrip("/") == f"/user/{STUDENT_B}")
        args = {"uid_b": uid_b, "server_port": int(target.rsplit(":", 1)[1]), "ipc": sockets}
        out = hubclient.execute(a_client, f"ARGS_JSON = {json.dumps(args)!r}\n" + PROBE,
                                timeout=120)
    finally:
        a_client.close()
        b_client.close()
    line = next(x for x in out["stdout"].splitlines() if x.startswith("PROBE"))
    result = json.loads(line[5:])
    assert set(result["listening"]) <= {args["server_port"]}, result  # B's server only
    assert result["received"] == {}, result
    assert result["ipc"] and set(result["ipc"].values()) == {"PermissionError"}, result


def test_a_linked_labkit_folder_does_not_stop_the_students_server(hub: Hub,
                                                                  online: dict[str, Any],
                                                                  teacher: Student) -> None:
    """Found alongside: ``~/labkit`` turned into a link made every later start fail (an
    English traceback); the merge moves it aside, with a Korean note, and the server starts."""
    from labkit.hub.curriculum import NOTICE

    a = online["a"]
    home = Path(pwd.getpwnam(system_username(STUDENT_A)).pw_dir)
    client = HubKernelClient(a, hubclient.start_kernel(a))
    try:
        out = hubclient.execute(client, (
            "import os\n"
            "os.rename(os.path.expanduser('~/labkit'), os.path.expanduser('~/mywork'))\n"
            "os.symlink('/etc', os.path.expanduser('~/labkit'))\n"
            "print('LINKED')"))
    finally:
        client.close()
    assert "LINKED" in out["stdout"], out
    stop = teacher.api("DELETE", f"users/{STUDENT_A}/server")
    assert stop.status_code in (202, 204), stop.text
    deadline = time.monotonic() + 90
    while a.api("GET", f"users/{STUDENT_A}").json().get("servers"):
        assert time.monotonic() < deadline, "A's server did not stop"
        time.sleep(0.5)
    hubclient.start_server(a)  # raises if the spawn fails
    labkit = home / "labkit"
    assert labkit.is_dir() and not labkit.is_symlink()
    assert (labkit / "03_goodput.ipynb").is_file()
    assert (home / "mywork" / "03_goodput.ipynb").is_file()  # the student's work is untouched
    note = (labkit / NOTICE).read_text(encoding="utf-8")
    moved = [p.name for p in home.iterdir() if p.name.startswith("labkit-moved-")]
    assert len(moved) == 1 and moved[0] in note and (home / moved[0]).is_symlink()
    reply = a.session.get(f"{a.server_url}api/contents/{NOTICE}",
                          headers=hubclient.auth_headers(a), timeout=60)
    assert reply.status_code == 200  # JupyterLab lists it in the student's folder


#: A student's page that, run in the teacher's browser on the hub's origin, would mint a token
#: for the teacher through the hub's API (the XSRF token from the hub's own /hub/token page).
TRAP = """<!doctype html><html><body><p>과제</p><script>
(async () => {
  const frame = document.createElement("iframe");
  frame.src = "/hub/token";
  document.body.appendChild(frame);
  await new Promise(done => { frame.onload = done; });
  let xsrf = "";
  try { xsrf = frame.contentDocument.cookie.match(/_xsrf=([^;]+)/)[1]; } catch (e) {}
  const reply = await fetch("/hub/api/users/TEACHER/tokens", {method: "POST",
    headers: {"X-XSRFToken": xsrf, "Content-Type": "application/json"},
    body: JSON.stringify({note: "stolen-by-student"})});
  document.title = "PWNED " + reply.status;
})();
</script></body></html>"""


@pytest.mark.browser
def test_a_students_page_cannot_act_as_the_teacher_in_chromium(hub: Hub, online: dict[str, Any],
                                                                teacher: Student,
                                                                browser: Any) -> None:
    """Attack 2 in a real browser: the teacher opens a page the student wrote (a link the
    student sent); the hub refuses it, so no script of the student's runs with the teacher's
    rights, and no token is minted for the teacher."""
    a = online["a"]
    client = HubKernelClient(a, hubclient.start_kernel(a))
    try:
        out = hubclient.execute(client, (
            f"from pathlib import Path\nPath('~/labkit/trap.html').expanduser().write_text("
            f"{TRAP.replace('TEACHER', TEACHER)!r})\nprint('PLANTED')"))
    finally:
        client.close()
    assert "PLANTED" in out["stdout"], out
    ctx = browser.new_context(locale="ko-KR")
    try:
        page = ctx.new_page()
        page.goto(f"{hub.base}hub/login", timeout=60_000)
        page.fill("#username_input", TEACHER)
        page.fill("#password_input", PASSWORDS[TEACHER])
        page.click("#login_submit")
        page.wait_for_url("**/services/classpage/**", timeout=60_000)
        for path in ("files/trap.html", "voila/render/03_goodput.ipynb"):
            reply = page.goto(f"{hub.base}user/{STUDENT_A}/{path}", timeout=60_000)
            assert reply is not None and reply.status == 403, (path, reply and reply.status)
            page.wait_for_timeout(2000)  # time for a script that ran to finish
            assert not page.title().startswith("PWNED"), page.title()
            assert t("hub.error.403") in page.evaluate("document.body.innerText")
    finally:
        ctx.close()
    tokens = teacher.api("GET", f"users/{TEACHER}/tokens").json()
    notes = [tok.get("note") for tok in tokens.get("api_tokens", [])]
    assert "stolen-by-student" not in notes, notes
