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
