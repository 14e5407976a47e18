"""The idle culler against a real JupyterHub: voila use keeps a student's server, idleness does not.

A hub on loopback (configurable-http-proxy, the local spawner, no root needed) runs
jupyterhub-idle-culler with a short timeout (:data:`CULL_TIMEOUT_S`) and the reporting
intervals labkit derives from it (:func:`labkit.hub.activity.report_interval_s`, the same
lines as :func:`labkit.hub.config.configure`). Two students open a voila app with labkit's
single-user extension loaded: one keeps moving its slider over the kernel websocket as a browser
does, the other leaves it. The idle one is culled, the active one keeps its server, and the
culled one's next start finds their file.
"""

from __future__ import annotations

import secrets
import textwrap
import time
from collections.abc import Iterator
from typing import Any

import pytest

requests = pytest.importorskip("requests")
pytest.importorskip("jupyterhub")
pytest.importorskip("jupyterhub_idle_culler")

from labkit.hub.activity import report_interval_s  # noqa: E402
from labkit.hub.state import cull_every_s  # noqa: E402
from tests.hub.hubclient import BIN, LOOPBACK_HUB_CONFIG, running_jupyterhub  # noqa: E402
from tests.test_hub_classpage_live import Hub, _free_port, chp  # noqa: E402, F401

pytestmark = pytest.mark.serial  # timing-bound: make test runs it alone (second tier)

CULL_TIMEOUT_S = 40
NOTEBOOK = """{"cells": [{"cell_type": "code", "execution_count": null, "metadata": {},
 "outputs": [], "source": ["import ipywidgets as w\\n", "s = w.IntSlider(description='x')\\n",
 "s.add_class('lk-probe')\\n", "s"]}],
 "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
 "nbformat": 4, "nbformat_minor": 5}"""

CONFIG = LOOPBACK_HUB_CONFIG + """
c.Authenticator.allowed_users = {{"kim01", "lee02"}}
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = "{home}/{{username}}"
c.Spawner.cmd = [{singleuser!r}]
c.Spawner.args = ["--allow-root", "--ServerApp.jpserver_extensions=labkit.hub.singleuser=True"]
c.Spawner.http_timeout = 90
c.Spawner.start_timeout = 120
# the one-server hub's culler lines (labkit.hub.config), with a short timeout
c.JupyterHub.last_activity_interval = {interval}
c.Spawner.environment = {{"JUPYTERHUB_ACTIVITY_INTERVAL": "{interval}"}}
c.JupyterHub.services = [
    {{"name": "idle-culler", "command": [sys.executable, "-m", "jupyterhub_idle_culler",
                                        "--timeout={timeout}", "--cull-every={every}"]}},
    {{"name": "tester", "api_token": {token!r}}}]
c.JupyterHub.load_roles = [
    {{"name": "idle-culler", "services": ["idle-culler"],
      "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"]}},
    {{"name": "tester", "services": ["tester"],
      "scopes": ["admin:users", "admin:servers", "access:servers"]}}]
"""


@pytest.fixture(scope="module")
def culled_hub(chp: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:  # noqa: F811
    root = tmp_path_factory.mktemp("culler")
    state, home = root / "state", root / "home"
    state.mkdir(mode=0o700)
    for user in ("kim01", "lee02"):
        (home / user).mkdir(parents=True)
        (home / user / "probe.ipynb").write_text(NOTEBOOK, encoding="utf-8")
    port, token = _free_port(), secrets.token_hex(16)
    config = root / "jupyterhub_config.py"
    config.write_text(textwrap.dedent(CONFIG).format(
        port=port, hub_port=_free_port(), proxy_api_port=_free_port(), chp=chp, state=state,
        home=home, singleuser=str(BIN / "jupyterhub-singleuser"), token=token,
        interval=report_interval_s(CULL_TIMEOUT_S), timeout=CULL_TIMEOUT_S,
        every=cull_every_s(CULL_TIMEOUT_S)), encoding="utf-8")
    log = root / "hub.log"
    base = f"http://127.0.0.1:{port}"
    with running_jupyterhub(config, state, log, base):
        yield Hub(base, token, home, log)


def _student(hub: Hub, name: str) -> Any:
    from tests.hub import hubclient

    return hubclient.Student(hub.base + "/", name, token=hub.token)


def test_voila_use_keeps_the_server_and_an_idle_one_is_culled(culled_hub: Hub) -> None:
    from tests.browser.voila_client import request_states
    from tests.hub import hubclient

    hub = culled_hub
    for name in ("kim01", "lee02"):
        hub.api("POST", f"/users/{name}/server")
    for name in ("kim01", "lee02"):
        hub.wait_server(name, ready=True)
    lee = _student(hub, "lee02")
    saved = lee.session.put(f"{lee.server_url}api/contents/mywork.txt", timeout=60,
                            headers=hubclient.auth_headers(lee),
                            json={"type": "file", "format": "text", "content": "내 답 42"})
    assert saved.status_code in (200, 201), saved.text[:300]
    hubclient.fetch_voila(lee, "probe.ipynb")  # opens the app, then leaves it
    kim = _student(hub, "kim01")
    page = hubclient.fetch_voila(kim, "probe.ipynb")
    client = hubclient.HubKernelClient(kim, page.kernel_id)
    try:
        slider = next(k for k, s in request_states(client).items()
                      if "lk-probe" in s.get("_dom_classes", ()))
        started = time.monotonic()
        deadline = started + 4 * CULL_TIMEOUT_S + 60
        moves = 0
        while time.monotonic() < deadline:
            client.set_state(slider, {"value": moves % 100})  # the student moves the control
            moves += 1
            if not (hub.api("GET", "/users/lee02").get("servers") or {}):
                break
            time.sleep(3)
        else:
            pytest.fail("the idle student was not culled:\n"
                        + hub.log.read_text(errors="replace")[-3000:])
        # the active one worked for longer than the timeout and still has their server
        kim_server = hub.api("GET", "/users/kim01")["servers"][""]
        assert kim_server["ready"], hub.log.read_text(errors="replace")[-3000:]
        assert moves > 1 and time.monotonic() - started > CULL_TIMEOUT_S
        assert client.set_state(slider, {"value": 7})  # and the app still answers
    finally:
        client.close()
    assert "Culling server lee02" in hub.log.read_text(errors="replace")
    assert "Culling server kim01" not in hub.log.read_text(errors="replace")
    # the culled student comes back to their files
    hub.api("POST", "/users/lee02/server")
    hub.wait_server("lee02", ready=True)
    back = lee.session.get(f"{lee.server_url}api/contents/mywork.txt", timeout=60,
                           headers=hubclient.auth_headers(lee))
    assert back.status_code == 200 and back.json()["content"] == "내 답 42"


def test_report_interval_is_a_quarter_of_the_timeout_within_jupyterhubs_default() -> None:
    assert report_interval_s(600) == 150
    assert report_interval_s(40) == 10
    assert report_interval_s(3600) == 300  # never slower than JupyterHub's default
    assert report_interval_s(10) == 5


def test_voila_pages_count_as_activity_of_the_server() -> None:
    from types import SimpleNamespace

    from labkit.hub.activity import VOILA_ACTIVITY, record_voila_activity

    logged: list[str] = []
    app = SimpleNamespace(settings={"base_url": "/user/kim01/",
                                    "log_function": lambda h: logged.append(h.request.path)})
    record_voila_activity(app)
    record_voila_activity(app)  # once only

    def request(path: str, status: int) -> Any:
        return SimpleNamespace(request=SimpleNamespace(path=path), get_status=lambda: status)

    app.settings["log_function"](request("/user/kim01/api/contents", 200))
    assert VOILA_ACTIVITY not in app.settings  # other requests: jupyter_server's own counting
    app.settings["log_function"](request("/user/kim01/voila/render/03_goodput.ipynb", 404))
    assert VOILA_ACTIVITY not in app.settings
    app.settings["log_function"](request("/user/kim01/voila/render/03_goodput.ipynb", 200))
    assert app.settings[VOILA_ACTIVITY].tzinfo is not None
    assert logged == ["/user/kim01/api/contents", "/user/kim01/voila/render/03_goodput.ipynb",
                      "/user/kim01/voila/render/03_goodput.ipynb"]
