"""The class hub over HTTPS: ``serve --self-signed``, tested with a real TLS client.

A hub of its own (one student, one teacher, accounts ``jupyter-lktls-*``) starts as the
operator starts it, with ``--self-signed``. With the CA it made (and nothing else trusted):
the health check and the login work over TLS with the host name checked, the login cookies are
``Secure``, plain ``http://`` on the same port is redirected to ``https://`` (and serves the
class CA certificate), the teacher's class page reads a running student's report through the
TLS proxy, and ``status`` finds the hub running. Needs root (see conftest); skipped otherwise.
"""

from __future__ import annotations

import hashlib
import json
import os
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.hub.conftest import ROOT_REASON
from tests.hub.ownhub import OwnHub, own_hub

pytestmark = [pytest.mark.hub,
              pytest.mark.skipif(os.geteuid() != 0, reason=ROOT_REASON)]
STUDENT, TEACHER = "lktls-s", "lktls-t"
PASSWORD = {STUDENT: "tls-student-1", TEACHER: "tls-teacher-2"}


def _answers(hub: OwnHub) -> bool:
    ca = hub.state / "tls" / "ca.pem"
    try:
        return ca.exists() and requests.get(f"https://127.0.0.1:{hub.port}/hub/health",
                                            verify=str(ca), timeout=2).status_code == 200
    except requests.RequestException:
        return False


@pytest.fixture(scope="module")
def tls_hub() -> Iterator[tuple[str, Path, Path, str]]:
    """(https base URL, state dir, CA file, serve's output) of a running --self-signed hub."""
    with own_hub({STUDENT: "정하늘"}, TEACHER, ["--self-signed"], _answers,
                 passwords=PASSWORD, cull_timeout_s=3600) as hub:
        yield (f"https://127.0.0.1:{hub.port}/", hub.state, hub.state / "tls" / "ca.pem",
               hub.log())


def _login(base: str, ca: Path, name: str) -> tuple[requests.Session, requests.Response]:
    session = requests.Session()
    session.verify = str(ca)  # the generated CA only: not the system's, never verify=False
    session.trust_env = False  # else $REQUESTS_CA_BUNDLE would win over session.verify
    session.get(base + "hub/login", timeout=60).raise_for_status()
    reply = session.post(base + "hub/login?next=", allow_redirects=False, timeout=60,
                         data={"username": name, "password": PASSWORD[name],
                               "_xsrf": session.cookies.get("_xsrf") or ""})
    return session, reply


def test_serve_self_signed_prints_how_browsers_trust_the_class_ca(
        tls_hub: tuple[str, Path, Path, str]) -> None:
    _base, _state, ca, printed = tls_hub
    der = ssl.PEM_cert_to_DER_cert(ca.read_text())
    fingerprint = ":".join(f"{b:02X}" for b in hashlib.sha256(der).digest())
    assert fingerprint in printed
    assert "신뢰할 수 있는 루트 인증 기관" in printed and "/labkit-ca.crt" in printed
    assert "CERT=" in printed  # where a school CA's certificate goes instead


def test_login_over_tls_sets_secure_cookies(tls_hub: tuple[str, Path, Path, str]) -> None:
    base, _state, ca, _ = tls_hub
    session, reply = _login(base, ca, STUDENT)
    assert reply.status_code in (302, 303), reply.text[-300:]
    assert "/hub/login" not in reply.headers["Location"]
    cookies = [c for c in reply.raw.headers.getlist("Set-Cookie")
               if c.startswith(("jupyterhub-hub-login", "jupyterhub-session-id"))]
    assert cookies and all("Secure" in c and "HttpOnly" in c for c in cookies), cookies
    me = session.get(base + "hub/api/user", timeout=60,
                     headers={"X-XSRFToken": session.cookies.get("_xsrf") or ""})
    assert me.status_code == 200 and me.json()["name"] == STUDENT


def test_plain_http_on_the_same_port_redirects_to_https(
        tls_hub: tuple[str, Path, Path, str]) -> None:
    base, _state, ca, _ = tls_hub
    plain = base.replace("https://", "http://", 1)
    reply = requests.get(plain + "hub/login?next=%2Fhub%2F", allow_redirects=False, timeout=30)
    assert reply.status_code == 301
    assert reply.headers["Location"] == base + "hub/login?next=%2Fhub%2F"
    followed = requests.get(plain + "hub/health", verify=str(ca), timeout=30)
    assert followed.status_code == 200 and followed.url.startswith("https://")
    cert = requests.get(plain + "labkit-ca.crt", timeout=30)
    assert cert.status_code == 200 and cert.content == ca.read_bytes()
    with pytest.raises(requests.exceptions.SSLError):  # not trusted without the class CA
        requests.get(base + "hub/health", timeout=30, verify=True)


def test_class_page_and_status_reach_the_hub_through_tls(
        tls_hub: tuple[str, Path, Path, str]) -> None:
    base, state, ca, _ = tls_hub
    student, _ = _login(base, ca, STUDENT)
    xsrf = {"X-XSRFToken": student.cookies.get("_xsrf") or ""}
    started = student.post(base + f"hub/api/users/{STUDENT}/server", headers=xsrf, timeout=300)
    assert started.status_code in (201, 202), started.text[-300:]
    deadline = time.monotonic() + 300
    while not (student.get(base + f"hub/api/users/{STUDENT}", headers=xsrf, timeout=60).json()
               .get("servers", {}).get("", {}).get("ready")):
        assert time.monotonic() < deadline, "the student's server did not start"
        time.sleep(1)
    teacher, reply = _login(base, ca, TEACHER)
    assert reply.headers["Location"] == "/services/classpage/"
    page = teacher.get(base + "services/classpage/", timeout=120)
    assert page.status_code == 200, page.text[-500:]
    assert "정하늘" in page.text and "접속 중" in page.text
    # the student's report came through the TLS proxy (else "결과를 읽지 못했습니다: ...")
    assert "결과를 읽지 못했습니다" not in page.text and "0/0 정답" in page.text
    done = subprocess.run([sys.executable, "-m", "labkit.hub", "--state-dir", str(state),
                           "status", "--json"], capture_output=True, text=True, timeout=120,
                          check=True)
    doc = json.loads(done.stdout)
    assert doc["running"] is True and doc["url"].startswith("https://")
