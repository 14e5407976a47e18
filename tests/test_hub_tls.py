"""HTTPS for the class hub (labkit.hub.tls): the self-signed class CA, the pair check, the proxy."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import socket
import ssl
import threading
from pathlib import Path

import pytest
from cryptography import x509

from labkit.hub import tls


def test_self_signed_certificate_is_trusted_through_the_class_ca(tmp_path: Path) -> None:
    made = tls.self_signed(tmp_path / "tls", "127.0.0.1")
    assert made.made and "127.0.0.1" in made.ips and "localhost" in made.dns
    assert (made.key.stat().st_mode & 0o777) == 0o600
    leaf = x509.load_pem_x509_certificates(made.cert.read_bytes())[0]
    life = leaf.not_valid_after_utc - leaf.not_valid_before_utc
    assert life <= dt.timedelta(days=398)  # what browsers accept for a server certificate
    # oracle: a real TLS handshake, the client trusting the CA file alone, host name checked
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(made.cert, made.key)
    client = ssl.create_default_context(cafile=str(made.ca))
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]

        def accept() -> None:
            conn, _ = listener.accept()
            with server.wrap_socket(conn, server_side=True) as tls_conn:
                tls_conn.recv(1)

        thread = threading.Thread(target=accept)
        thread.start()
        with socket.create_connection(("127.0.0.1", port)) as raw, \
                client.wrap_socket(raw, server_hostname="127.0.0.1") as conn:
            assert conn.version() in ("TLSv1.2", "TLSv1.3")
            conn.send(b"x")
        thread.join(10)


def test_self_signed_is_kept_while_it_covers_the_names(tmp_path: Path) -> None:
    first = tls.self_signed(tmp_path / "tls", "127.0.0.1")
    again = tls.self_signed(tmp_path / "tls", "127.0.0.1")
    assert not again.made and again.fingerprint_sha256 == first.fingerprint_sha256
    names = json.loads((tmp_path / "tls" / "names.json").read_text())
    (tmp_path / "tls" / "names.json").write_text(json.dumps({**names, "dns": ["old-name"]}))
    assert tls.self_signed(tmp_path / "tls", "127.0.0.1").made  # the server was renamed


def test_trust_lines_give_the_address_the_fingerprint_and_the_school_ca(tmp_path: Path) -> None:
    made = tls.self_signed(tmp_path / "tls", "127.0.0.1")
    der = ssl.PEM_cert_to_DER_cert(made.ca.read_text())
    fingerprint = ":".join(f"{b:02X}" for b in hashlib.sha256(der).digest())
    text = "\n".join(tls.trust_lines(made, 8443))
    assert fingerprint in text and "/labkit-ca.crt" in text and ":8443/" in text
    assert "신뢰할 수 있는 루트 인증 기관" in text and "CERT=" in text


def test_check_pair_refuses_a_missing_file_and_a_key_of_another_certificate(
        tmp_path: Path) -> None:
    one = tls.self_signed(tmp_path / "one", "127.0.0.1")
    other = tls.self_signed(tmp_path / "other", "127.0.0.1")
    assert tls.check_pair(one.cert, one.key) == (one.cert.resolve(), one.key.resolve())
    with pytest.raises(ValueError, match="없습니다"):
        tls.check_pair(tmp_path / "nope.pem", one.key)
    with pytest.raises(ValueError, match="짝이 맞는지"):
        tls.check_pair(one.cert, other.key)


def test_proxy_command_loads_the_front_only_on_a_checked_proxy(tmp_path: Path) -> None:
    chp = tmp_path / "node_modules" / "configurable-http-proxy" / "bin" / "configurable-http-proxy"
    chp.parent.mkdir(parents=True)
    chp.write_text("")
    (chp.parents[1] / "package.json").write_text(json.dumps({"version": "5.3.0"}))
    command = tls.proxy_command(str(chp), "/x/ca.pem")
    assert command[1] == "--import" and command[2].endswith("tls_front.mjs?ca=/x/ca.pem")
    assert command[3] == str(chp.resolve())
    (chp.parents[1] / "package.json").write_text(json.dumps({"version": "6.0.0"}))
    with pytest.raises(RuntimeError, match="checked against 5.x"):
        tls.proxy_command(str(chp))
