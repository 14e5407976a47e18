"""Classroom serving is safe by default: each known voila hazard, handled and proven.

A scripted client (no browser) does what a hostile student could do through a voila page. Test
notebooks live in a temporary folder served the way ``make present`` serves ``notebooks/``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from labkit.serve.server import CONTENT_SECURITY_POLICY
from tests.browser.servers import (
    VoilaServer,
    labkit_serve,
    voila_server,
    write_notebook,
)
from tests.browser.voila_client import KernelClient, displayed_plots, fetch_page, find_widget

pytestmark = pytest.mark.browser

HEADER = "# {n}. 점검용 노트북\n\n**학습 목표**\n1. 교실 서버의 안전장치를 확인한다.\n"
SETUP = "import labkit.ui as ui\nui.setup()"
PROBE_GUARDS = """\
import os, subprocess
import labkit.serve as serve
print("UNDER_VOILA", serve.running_under_voila(), "ALLOW", os.environ.get("LABKIT_ALLOW_MIG_APPLY"))
try:
    serve.forbid_under_voila("MIG apply")
    print("MIG_APPLY_ALLOWED")
except PermissionError as err:
    print("MIG_APPLY_REFUSED", type(err).__name__)
try:
    open(os.environ["LABKIT_TEST_OUTSIDE"], "w").write("x")
    print("WRITE_OUTSIDE_ALLOWED")
except PermissionError:
    print("WRITE_OUTSIDE_REFUSED")
try:
    open("relative-file.txt", "w").write("x")
    print("WRITE_RELATIVE_ALLOWED")
except PermissionError:
    print("WRITE_RELATIVE_REFUSED")
(serve.session_dir() / "scratch.txt").write_text("ok")
print("WRITE_SESSION_OK", (serve.session_dir() / "scratch.txt").read_text())
try:
    subprocess.run(["true"])
    print("SUBPROCESS_ALLOWED")
except PermissionError:
    print("SUBPROCESS_REFUSED")
"""
PROBE_WIDGETS = """\
import ipywidgets as w
out = w.Output()
out.add_class("lk-probe-out")
def boom(_):
    with out:
        raise RuntimeError("probe-secret-traceback")
button = w.Button(description="boom")
button.add_class("lk-probe-boom")
button.on_click(boom)
image = w.Image(value=b"\\x89PNG\\r\\n\\x1a\\n" + bytes(4096), format="png")
image.add_class("lk-probe-image")
w.VBox([button, out, image])
"""
DROPPED_CONFIG = 'open({marker!r}, "w").write("voila.py from {where} was loaded")\n'


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("classroom")


@pytest.fixture(scope="module")
def probe_root(workdir: Path) -> Path:
    """Test notebooks, plus a voila.py/voila.json a student dropped into the folder."""
    root = workdir / "notebooks"
    root.mkdir()
    write_notebook(root / "90_probe.ipynb", SETUP, PROBE_GUARDS, PROBE_WIDGETS,
                   title=HEADER.format(n=90))
    write_notebook(root / "91_broken.ipynb", SETUP, 'raise RuntimeError("render-secret-marker")',
                   'print("AFTER_THE_ERROR")', title=HEADER.format(n=91))
    write_notebook(root / "92_light.ipynb", SETUP, 'print("LIGHT_OK")', title=HEADER.format(n=92))
    (root / "voila.py").write_text(DROPPED_CONFIG.format(marker=str(workdir / "marker-notebooks"),
                                                         where="notebooks"))
    (root / "voila.json").write_text(json.dumps(
        {"VoilaConfiguration": {"strip_sources": False, "show_tracebacks": True}}))
    return root


@pytest.fixture(scope="module")
def probe(probe_root: Path, workdir: Path) -> Iterator[VoilaServer]:
    env = {"LABKIT_ALLOW_MIG_APPLY": "1", "LABKIT_TEST_OUTSIDE": str(workdir / "outside.txt")}
    with voila_server(probe_root, workdir, env=env) as server:
        yield server


def _kernel_running(server: VoilaServer, kernel_id: str) -> bool:
    return any(kernel_id in " ".join(k.cmdline()) for k in server.kernels())


# --- (3) configuration only from labkit's folder ----------------------------------------------


def test_config_dropped_in_notebooks_folder_is_not_loaded(probe: VoilaServer,
                                                          workdir: Path) -> None:
    page = fetch_page(probe.url, "92_light.ipynb")
    assert "LIGHT_OK" in page.html
    assert not (workdir / "marker-notebooks").exists(), "voila.py in notebooks/ was executed"
    sources = ('print(&quot;LIGHT_OK&quot;)', 'print("LIGHT_OK")')
    assert not any(s in page.html for s in sources), (
        "sources shown: voila.json in notebooks/ was loaded")


def test_teacher_folder_config_ignored_and_only_localhost_served(
        probe_root: Path, workdir: Path) -> None:
    """A voila.py/voila.json in the teacher's folder is not loaded; voila binds 127.0.0.1 only
    (the shared classroom mode is gone: a class uses ``make hub``)."""
    teacher = workdir / "teacher"
    teacher.mkdir()
    (teacher / "voila.py").write_text(DROPPED_CONFIG.format(
        marker=str(workdir / "marker-teacher"), where="the teacher's folder"))
    (teacher / "voila.json").write_text(json.dumps({"VoilaConfiguration": {
        "strip_sources": False}, "Voila": {"ip": "0.0.0.0"}}))
    with labkit_serve(probe_root, workdir, teacher, []) as server:
        page = fetch_page(server.url, "92_light.ipynb")
        assert "LIGHT_OK" in page.html
        assert 'print("LIGHT_OK")' not in page.html
        import psutil

        listening = {c.laddr.ip for c in psutil.Process(server.proc.pid).net_connections("tcp")
                     if c.status == psutil.CONN_LISTEN}
        assert listening == {"127.0.0.1"}, listening
    assert not (workdir / "marker-teacher").exists(), "voila.py in the teacher's folder ran"


# --- safety inside the kernel -------------------------------------------------------------------


def test_voila_kernel_refuses_mig_apply_even_when_allowed(probe: VoilaServer) -> None:
    page = fetch_page(probe.url, "90_probe.ipynb")
    assert "UNDER_VOILA True ALLOW 1" in page.html
    assert "MIG_APPLY_REFUSED VoilaForbiddenError" in page.html
    assert "MIG_APPLY_ALLOWED" not in page.html


def test_voila_kernel_writes_only_in_its_session_dir(probe: VoilaServer, workdir: Path,
                                                     probe_root: Path) -> None:
    page = fetch_page(probe.url, "90_probe.ipynb")
    for expected in ("WRITE_OUTSIDE_REFUSED", "WRITE_RELATIVE_REFUSED", "WRITE_SESSION_OK ok",
                     "SUBPROCESS_REFUSED"):
        assert expected in page.html, expected
    assert not (workdir / "outside.txt").exists()
    assert not (probe_root / "relative-file.txt").exists()


def test_callback_traceback_goes_to_server_log_not_to_the_page(probe: VoilaServer) -> None:
    page = fetch_page(probe.url, "90_probe.ipynb")
    client = KernelClient(probe.url, page.kernel_id)
    button = find_widget(client.widget_states(), "lk-probe-boom")
    answers = client.iopub_only(client.comm_msg(button, {"method": "custom",
                                                         "content": {"event": "click"}}))
    shown = json.dumps([m.content for m in answers], ensure_ascii=False)
    assert "probe-secret-traceback" not in shown and "Traceback" not in shown
    assert not [m for m in answers if m.msg_type == "error"]
    assert "선생님께 알려 주세요" in shown, "the student gets a short Korean note"
    deadline = time.monotonic() + 10
    while "probe-secret-traceback" not in probe.log() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert "RuntimeError: probe-secret-traceback" in probe.log()
    # a malformed widget message (wrong control protocol): logged by the kernel, not sent
    answers = client.iopub_only(client.send("comm_open", {
        "comm_id": "0" * 32, "target_name": "jupyter.widget.control", "data": {}}))
    shown = json.dumps([m.content for m in answers], ensure_ascii=False)
    assert "Traceback" not in shown and "Incompatible" not in shown, shown
    deadline = time.monotonic() + 10
    while "Incompatible widget control protocol" not in probe.log() and (
            time.monotonic() < deadline):
        time.sleep(0.2)
    assert "Incompatible widget control protocol" in probe.log()
    assert client.kernel_info()["status"] == "ok"
    client.close()


def test_render_error_is_hidden_from_students_and_logged(probe: VoilaServer) -> None:
    page = fetch_page(probe.url, "91_broken.ipynb")
    assert "render-secret-marker" not in page.html and "Traceback" not in page.html
    assert "선생님께 알려 주세요" in page.html
    assert "render-secret-marker" in probe.log()


# --- (1) the denial of service in voila 0.5.13 --------------------------------------------------


def test_dos_client_without_v1_protocol_leaves_server_responsive(probe: VoilaServer) -> None:
    page = fetch_page(probe.url, "90_probe.ipynb")
    rss_before = probe.server_rss_mib()
    # exactly the trigger: no v1 subprotocol, then a widget message that makes the kernel answer
    # with binary buffers (an Image's state carries its bytes as a buffer)
    client = KernelClient(probe.url, page.kernel_id, protocol="legacy")
    image = find_widget(client.widget_states(), "lk-probe-image")
    binary = []
    for _ in range(5):
        answers = client.iopub_only(client.comm_msg(image, {"method": "request_state"}))
        binary += [m for m in answers if m.binary and m.buffers]
    assert binary, "the kernel sent no binary message: the test would prove nothing"
    raw = binary[0].raw
    assert isinstance(raw, bytes)
    assert int.from_bytes(raw[:8], "little") > 10**15, "legacy framing read as v1 offset count"
    # the server still answers everyone, and its memory stayed flat
    started = time.monotonic()
    status, _, _ = probe.get("voila/api/contents", timeout=10)
    assert status == 200 and time.monotonic() - started < 10
    assert probe.server_rss_mib() - rss_before < 100
    assert client.kernel_info()["status"] == "ok"
    client.close()


# --- what a page's websocket may do --------------------------------------------------------------


def test_execute_request_from_a_page_does_not_run(probe: VoilaServer) -> None:
    page = fetch_page(probe.url, "92_light.ipynb")
    client = KernelClient(probe.url, page.kernel_id)
    executed = client.send("execute_request", {
        "code": "print('PWNED-' + 'BY-EXECUTE')", "silent": False, "store_history": False,
        "user_expressions": {}, "allow_stdin": False, "stop_on_error": True})
    assert client.kernel_info()["status"] == "ok"  # answered after the execute_request
    time.sleep(0.5)
    seen = [m for m in client.backlog if m.parent_id == executed]
    assert seen == [], [m.msg_type for m in seen]
    assert 'Received message of type "execute_request", which is not allowed' in probe.log()
    client.close()


def test_tab_close_shutdown_beacon_stops_the_kernel(probe: VoilaServer) -> None:
    page = fetch_page(probe.url, "92_light.ipynb")
    assert _kernel_running(probe, page.kernel_id)
    # what the page's beforeunload beacon sends: a POST without any _xsrf (voila#1458)
    import urllib.request

    request = urllib.request.Request(f"{probe.url}voila/api/shutdown/{page.kernel_id}",
                                     data=b"", method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status in (200, 204)
    deadline = time.monotonic() + 30
    while _kernel_running(probe, page.kernel_id) and time.monotonic() < deadline:
        time.sleep(0.3)
    assert not _kernel_running(probe, page.kernel_id)


def test_pages_keep_every_request_on_this_server(probe: VoilaServer) -> None:
    for path in ("", "voila/render/92_light.ipynb"):
        status, _, headers = probe.get(path, timeout=120)
        assert status == 200
        assert headers.get("Content-Security-Policy") == CONTENT_SECURITY_POLICY
        assert "default-src 'self'" in CONTENT_SECURITY_POLICY


# --- (4) out-of-range values on a real lesson -----------------------------------------------------


def _texts(answers: list) -> str:  # type: ignore[type-arg]
    return json.dumps([m.content for m in answers], ensure_ascii=False)


def test_out_of_range_comm_values_are_rejected_on_lesson_03(voila_url: str) -> None:
    page = fetch_page(voila_url, "03_goodput.ipynb")
    client = KernelClient(voila_url, page.kernel_id)
    states = client.widget_states()
    slider = find_widget(states, "lk-compare-goodput")
    # far past the slider's range (a browser can widen max first): rejected beside the control
    answers = client.set_state(slider, {"max": 1e9, "value": 1e9})
    assert "이하여야 합니다" in _texts(answers)  # the server's max, echoed beside the slider
    assert displayed_plots(answers) == [], "the last good chart must stay"
    # not a finite number, not a number at all, absurd sizes elsewhere: no crash
    assert "유한한 숫자" in _texts(client.set_state(slider, {"value": float("nan")}))
    client.set_state(slider, {"value": "abc"})  # a trait error, logged in the kernel
    box = find_widget(states, "lk-worksheet-failure_stops")
    # a free number box refuses a size no lesson needs (1경 or more) before the model sees it
    assert "값이 너무 큽니다" in _texts(client.set_state(box, {"value": -1e300}))
    assert "0 이상" in _texts(client.set_state(box, {"value": -5.0}))  # the model's own rule
    straggler = find_widget(states, "lk-straggler-slowdown")
    client.set_state(straggler, {"max": 1e308, "value": 1e308})
    assert client.kernel_info()["status"] == "ok"
    # and the app still works for this student (S = 1e308 moved ~all hours into the straggler
    # line, which the ledger then rejects; put it back first)
    client.set_state(find_widget(states, "lk-worksheet-straggler"), {"value": 30.0})
    answers = client.set_state(box, {"value": 100.0})
    assert any("-100" in json.dumps(p) for p in displayed_plots(answers))
    client.close()


# --- (2) culling and (5) the kernel cap ---------------------------------------------------------


@pytest.mark.serial  # idle-culling waits in wall-clock time: alone, in make test's second tier
def test_class_over_the_kernel_cap_gets_a_korean_page_and_culling_frees_seats(
        probe_root: Path, workdir: Path) -> None:
    env = {"LABKIT_MAX_KERNELS": "2"}
    # idle 30 s before culling: under load (CI beside a trial) three page renders took longer
    # than a 3-s timeout, the first two kernels were culled and the third page got a seat
    extra = ["--MappingKernelManager.cull_idle_timeout=30",
             "--MappingKernelManager.cull_interval=1"]
    with voila_server(probe_root, workdir, env=env, extra=extra) as server:
        fetch_page(server.url, "92_light.ipynb")
        fetch_page(server.url, "92_light.ipynb")
        status, body, _ = server.get("voila/render/92_light.ipynb", timeout=120)
        assert status == 503
        assert "가득 찼습니다" in body and "2개" in body and 'http-equiv="refresh"' in body
        assert "Traceback" not in body
        assert len(server.kernels()) <= 2
        # the two pages were never connected: culled after 30 s idle, seats free again
        deadline = time.monotonic() + 120
        while server.kernels() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert server.kernels() == []
        assert "Culling 'idle' kernel" in server.log()
        assert "LIGHT_OK" in fetch_page(server.url, "92_light.ipynb").html
