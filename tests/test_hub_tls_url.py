"""The address the hub prints for students (the trial: under TLS the last start-up line said
``http://0.0.0.0:8001/`` after "학생들은 이 주소로 접속합니다: https://192.0.2.2:8001/")."""

from __future__ import annotations

import ipaddress

import pytest

from labkit.hub import tls


@pytest.mark.parametrize(("host", "port", "on", "url"), [
    ("192.0.2.7", 8000, False, "http://192.0.2.7:8000/"),
    ("192.0.2.7", 8443, True, "https://192.0.2.7:8443/"),
    ("hub.school.kr", 8000, True, "https://hub.school.kr:8000/"),
    ("2001:db8::7", 8000, True, "https://[2001:db8::7]:8000/"),
])
def test_class_url_names_the_scheme_and_the_host(host: str, port: int, on: bool,
                                                 url: str) -> None:
    assert tls.class_url(host, port, on) == url


def test_every_interface_is_named_by_the_servers_own_address(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tls, "server_names",
                        lambda host="": (["vm"], ["127.0.0.1", "::1", "192.0.2.2"]))
    assert tls.class_url("0.0.0.0", 8001, True) == "https://192.0.2.2:8001/"
    # the machine's real interfaces: never 0.0.0.0, never a loopback one when another exists
    monkeypatch.undo()
    where = tls.class_url("0.0.0.0", 8001, False).removeprefix("http://").rsplit(":", 1)[0]
    assert where != "0.0.0.0"
    address = ipaddress.ip_address(where.strip("[]"))
    others = [i for i in tls.server_names()[1] if not ipaddress.ip_address(i).is_loopback]
    assert not address.is_loopback or not others


def test_a_start_off_loopback_names_the_firewall_and_plain_http_warns() -> None:
    """The trial: a student's kernel on another port of the server got the teacher's cookies
    from a link (cookies do not isolate by port); the teacher is told at every start."""
    from labkit.hub.__main__ import exposure_lines
    from labkit.i18n import t

    assert exposure_lines("127.0.0.1", tls=False) == []
    assert exposure_lines("0.0.0.0", tls=True) == ["hub.cli.serve.firewall"]
    assert exposure_lines("192.0.2.2", tls=False) == [
        "hub.cli.serve.plain_http", "hub.cli.serve.firewall"]
    said = t("hub.cli.serve.firewall", port=8443)
    assert "ufw allow 8443/tcp" in said and "{" not in said
    assert "HTTPS" in t("hub.cli.serve.plain_http")
