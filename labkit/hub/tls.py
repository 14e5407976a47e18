"""HTTPS for the class hub: the teacher's certificate, or one made here, and HTTP redirected.

``serve --ssl-cert C --ssl-key K`` (``make hub ... CERT=C KEY=K``) serves the class over TLS with
the school's certificate; ``serve --self-signed`` makes a small private CA and a server
certificate for this machine's names and addresses (:func:`self_signed`, in the state
directory's ``tls/``), and prints how students' browsers trust it (:func:`trust_lines`).

Under TLS:

- configurable-http-proxy terminates TLS on the public port (JupyterHub passes it ``--ssl-cert``
  / ``--ssl-key``); JupyterHub's cookies get ``Secure`` (``labkit.hub.config``);
- plain HTTP on the same port is answered with a 301 to ``https://`` (and the class CA
  certificate at ``/labkit-ca.crt``): the proxy runs with ``tls_front.mjs`` loaded
  (:func:`proxy_command`), which looks at each connection's first byte (0x16 starts a TLS
  handshake) and hands the same socket to the HTTPS or the redirecting HTTP server, so the
  proxy still sees each student's own address;
- the hub's own processes that reach the proxy on loopback (the class page, ``status``) trust
  exactly the configured certificate file (:func:`loopback_context`).

References
----------
.. [1] RFC 8446 §5.1: a TLS record starts with its ContentType; 22 (0x16) is handshake.
.. [2] CA/Browser Forum Baseline Requirements §6.3.2: server certificates at most 398 days
   (Apple platforms refuse longer ones, "About upcoming limits on trusted certificates", 2020).
.. [3] JupyterHub docs, "Security settings": ``ssl_cert`` / ``ssl_key``.
"""

from __future__ import annotations

import datetime as _dt
import ipaddress
import json
import os
import socket
import ssl
from dataclasses import dataclass
from pathlib import Path

from labkit.i18n import t

__all__ = ["CA_PATH", "LEAF_DAYS", "SelfSigned", "check_pair", "hub_answers", "loopback_context",
           "proxy_command", "self_signed", "server_names", "trust_lines"]

#: The server certificate's lifetime: the most browsers accept (Baseline Requirements, [2]). [d]
LEAF_DAYS = 397
#: The private CA's lifetime: a school's server outlives a few terms. [d]
CA_DAYS = 3650
#: Where plain HTTP serves the class CA certificate (tls_front.mjs).
CA_PATH = "/labkit-ca.crt"
#: configurable-http-proxy's major versions that tls_front.mjs was checked against (5.x: one
#: ``https.createServer`` for the proxy, ``proxyServer.listen(port, ip)`` in bin/).
CHP_MAJORS = ("5",)
FRONT = Path(__file__).resolve().parent / "tls_front.mjs"


def check_pair(cert: str | os.PathLike[str], key: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Return the certificate and key as absolute paths if they load together.

    Raises
    ------
    ValueError
        If a file is missing, unreadable, or the key does not match the certificate (Korean).
    """
    paths = (Path(cert).resolve(), Path(key).resolve())
    for path in paths:
        if not path.is_file():
            raise ValueError(t("hub.tls.missing", path=path))
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(*map(str, paths))
    except (ssl.SSLError, OSError) as err:
        raise ValueError(t("hub.tls.bad_pair", cert=paths[0], key=paths[1],
                           reason=str(err)[:200])) from err
    return paths


def server_names(host: str = "") -> tuple[list[str], list[str]]:
    """Return (DNS names, IP addresses) this server answers to, for a certificate's SAN.

    ``host`` (the hub's ``--host``) first when it is a name or an address; then the host name,
    its FQDN, ``localhost``, and every interface's address (psutil), loopback included.
    """
    import psutil

    dns = [socket.gethostname(), socket.getfqdn(), "localhost"]
    ips = ["127.0.0.1", "::1"]
    for addrs in psutil.net_if_addrs().values():
        for addr in addrs:
            if addr.family in (socket.AF_INET, socket.AF_INET6) and not ipaddress.ip_address(
                    addr.address.split("%", 1)[0]).is_link_local:  # fe80::/10 needs a zone
                ips.append(addr.address.split("%", 1)[0])
    if host and host not in ("0.0.0.0", "::"):
        try:
            ipaddress.ip_address(host)
            ips.insert(0, host)
        except ValueError:
            dns.insert(0, host)
    return list(dict.fromkeys(d for d in dns if d)), list(dict.fromkeys(ips))


def class_url(host: str, port: int, tls: bool) -> str:
    """Return the address students type: ``https://`` under TLS, and for a hub listening on
    every interface (``0.0.0.0``, ``::``, empty) the server's first address that is not
    loopback (as :func:`trust_lines` prints), else ``host``."""
    where = host
    if host in ("", "0.0.0.0", "::"):
        _dns, ips = server_names()
        where = next((i for i in ips if not ipaddress.ip_address(i).is_loopback), "127.0.0.1")
    if ":" in where:
        where = f"[{where}]"
    return f"{'https' if tls else 'http'}://{where}:{port}/"


@dataclass(frozen=True)
class SelfSigned:
    """The files :func:`self_signed` made (or found still good)."""

    ca: Path
    cert: Path
    key: Path
    fingerprint_sha256: str
    dns: tuple[str, ...]
    ips: tuple[str, ...]
    made: bool


def _write(path: Path, data: bytes, mode: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.chmod(path, mode)


def _fingerprint(pem: bytes) -> str:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes

    digest = x509.load_pem_x509_certificate(pem).fingerprint(hashes.SHA256())
    return ":".join(f"{b:02X}" for b in digest)


def _still_good(folder: Path, dns: list[str], ips: list[str]) -> bool:
    """Whether the server certificate there covers these names and has 30+ days left."""
    from cryptography import x509

    try:
        leaf = x509.load_pem_x509_certificate((folder / "server.pem").read_bytes())
        names = json.loads((folder / "names.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    left = leaf.not_valid_after_utc - _dt.datetime.now(_dt.UTC)
    return names == {"dns": dns, "ips": ips} and left > _dt.timedelta(days=30)


def self_signed(folder: Path, host: str = "", *, now: _dt.datetime | None = None) -> SelfSigned:
    """Make a private CA and a server certificate for this machine in ``folder`` (0700).

    Files: ``ca.pem`` (the class CA certificate students' browsers import; public),
    ``ca.key`` (0600), ``server.pem`` (the server certificate, then the CA's) and
    ``server.key`` (0600). Kept as they are while they cover :func:`server_names` and have
    more than 30 days left; else made anew (a new CA too).

    Keys are ECDSA P-256; the server certificate is valid :data:`LEAF_DAYS` days, carries the
    names as subjectAltName and ``serverAuth`` (what browsers check), the CA
    ``CA:TRUE, pathlen:0``.
    """
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    dns, ips = server_names(host)
    if _still_good(folder, dns, ips):
        pem = (folder / "ca.pem").read_bytes()
        return SelfSigned(folder / "ca.pem", folder / "server.pem", folder / "server.key",
                          _fingerprint(pem), tuple(dns), tuple(ips), made=False)
    now = now or _dt.datetime.now(_dt.UTC)
    start = now - _dt.timedelta(hours=1)  # a classroom PC's clock a little behind
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "labkit class hub"),
                         x509.NameAttribute(NameOID.COMMON_NAME,
                                            f"labkit class CA ({dns[0]})"[:64])])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(start).not_valid_after(start + _dt.timedelta(days=CA_DAYS))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                       content_commitment=False, key_encipherment=False,
                                       data_encipherment=False, key_agreement=False,
                                       encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()),
                         critical=False)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    sans: list[x509.GeneralName] = [x509.DNSName(d) for d in dns]
    sans += [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
    leaf = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, dns[0][:64])]))
            .issuer_name(ca_name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start).not_valid_after(start + _dt.timedelta(days=LEAF_DAYS))
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
                           critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    private = serialization.PrivateFormat.PKCS8
    plain = serialization.NoEncryption()
    ca_pem = ca.public_bytes(serialization.Encoding.PEM)
    _write(folder / "ca.key", ca_key.private_bytes(serialization.Encoding.PEM, private, plain),
           0o600)
    _write(folder / "server.key", key.private_bytes(serialization.Encoding.PEM, private, plain),
           0o600)
    _write(folder / "server.pem", leaf.public_bytes(serialization.Encoding.PEM) + ca_pem, 0o644)
    _write(folder / "ca.pem", ca_pem, 0o644)
    _write(folder / "names.json", json.dumps({"dns": dns, "ips": ips}).encode(), 0o644)
    return SelfSigned(folder / "ca.pem", folder / "server.pem", folder / "server.key",
                      _fingerprint(ca_pem), tuple(dns), tuple(ips), made=True)


def trust_lines(made: SelfSigned, port: int) -> list[str]:
    """Return the Korean lines ``serve --self-signed`` prints: the address, and how students'
    browsers trust the class CA (or where a school CA's certificate goes instead)."""
    where = next((i for i in made.ips if not ipaddress.ip_address(i).is_loopback), made.dns[0])
    url = f"https://{where}:{port}/"
    return [t("hub.tls.self_signed" if made.made else "hub.tls.self_signed_kept",
              path=made.cert.parent),
            t("hub.tls.names", names=", ".join([*made.dns, *made.ips])),
            t("hub.tls.url", url=url),
            t("hub.tls.ca_download", url=f"http://{where}:{port}{CA_PATH}", path=made.ca),
            t("hub.tls.fingerprint", fp=made.fingerprint_sha256),
            t("hub.tls.windows"), t("hub.tls.chromebook"), t("hub.tls.mac"),
            t("hub.tls.or_accept"),
            t("hub.tls.school_ca")]


def _chp_version(chp: str) -> str:
    package = Path(chp).resolve().parents[1] / "package.json"
    try:
        return str(json.loads(package.read_text(encoding="utf-8"))["version"])
    except (OSError, ValueError, KeyError):
        return ""


def proxy_command(chp: str, ca: str | None = None) -> list[str]:
    """Return configurable-http-proxy's command with :data:`FRONT` loaded (one port for HTTPS
    and the HTTP redirect).

    Parameters
    ----------
    chp : str
        configurable-http-proxy's script (``labkit.hub.config.proxy_command``).
    ca : str, optional
        A CA certificate that plain HTTP serves at :data:`CA_PATH` (the self-signed class CA).

    Raises
    ------
    RuntimeError
        If the proxy is not a version ``tls_front.mjs`` was checked against (:data:`CHP_MAJORS`).
    FileNotFoundError
        If ``node`` is not installed.
    """
    import shutil
    from urllib.parse import quote

    version = _chp_version(chp)
    if version.split(".", 1)[0] not in CHP_MAJORS:
        raise RuntimeError(f"configurable-http-proxy {version or '(unknown version)'} at {chp}: "
                           f"labkit's HTTP->HTTPS front (tls_front.mjs) is checked against "
                           f"{', '.join(m + '.x' for m in CHP_MAJORS)} only")
    node = shutil.which("node")
    if node is None:
        raise FileNotFoundError("node not found: configurable-http-proxy needs Node.js")
    url = FRONT.as_uri() + (f"?ca={quote(ca)}" if ca else "")
    return [node, "--import", url, str(Path(chp).resolve())]


def loopback_context(cert: str | os.PathLike[str]) -> ssl.SSLContext:
    """Return a client context that trusts exactly the hub's certificate file (loopback only).

    The hub's own processes reach the proxy at 127.0.0.1, a name a school's certificate never
    lists: the context checks the chain against ``cert`` alone (a leaf in it is a trust anchor,
    ``VERIFY_X509_PARTIAL_CHAIN``) and not the host name; the system's CAs are not trusted.
    """
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_REQUIRED
    context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN
    context.load_verify_locations(cafile=str(cert))
    return context


def hub_answers(port: int, cert: str | None = None, timeout_s: float = 3.0) -> bool:
    """Whether the hub on this machine answers ``/hub/health`` on its public ``port`` (over
    https:// trusting :func:`loopback_context` when it serves ``cert``)."""
    import urllib.request

    scheme = "https" if cert else "http"
    context = loopback_context(cert) if cert else None
    try:
        with urllib.request.urlopen(f"{scheme}://127.0.0.1:{int(port)}/hub/health",
                                    timeout=timeout_s, context=context) as reply:
            return bool(reply.status == 200)
    except (OSError, ssl.SSLError):
        return False
