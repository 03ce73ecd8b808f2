"""TLS for the embedded broker (``mqtt.tls_port``): a certificate authority of the
household's own, made once in ``<state>/mosquitto/tls``, and a server certificate it signs
for the names devices use to reach the box. A device trusts ``ca.crt`` (copied into its
config), so nothing on the LAN can read its traffic or pose as the broker."""

from __future__ import annotations

import datetime
import ipaddress
import logging
import os
import socket
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from fayd.transport.broker_files import TlsFiles

log = logging.getLogger(__name__)

CA_DAYS = 3650
SERVER_DAYS = 825
#: A server certificate this close to its end is made again at start.
RENEW_DAYS = 30


def default_names(host: str) -> list[str]:
    """The box's host names and addresses a device might use."""
    names = {"localhost", "127.0.0.1", socket.gethostname(), f"{socket.gethostname()}.local"}
    if host not in ("0.0.0.0", "::", ""):
        names.add(host)
    return sorted(names)


def _write(path: Path, data: bytes, private: bool) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _san(names: list[str]) -> x509.SubjectAlternativeName:
    entries: list[x509.GeneralName] = []
    for name in names:
        try:
            entries.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            entries.append(x509.DNSName(name))
    return x509.SubjectAlternativeName(entries)


def _make_ca(folder: Path) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    name = _name(f"fayd household CA ({socket.gethostname()})")
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=CA_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(key, hashes.SHA256())
    )
    _write(folder / "ca.key", _key_pem(key), private=True)
    _write(folder / "ca.crt", cert.public_bytes(serialization.Encoding.PEM), private=False)
    log.info("made a certificate authority for the broker's TLS: %s", folder / "ca.crt")
    return cert, key


def _load_ca(folder: Path) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    try:
        cert = x509.load_pem_x509_certificate((folder / "ca.crt").read_bytes())
        key = serialization.load_pem_private_key((folder / "ca.key").read_bytes(), None)
    except (OSError, ValueError):
        return _make_ca(folder)
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    return cert, key


def _server_is_current(folder: Path, ca: x509.Certificate, names: list[str]) -> bool:
    try:
        cert = x509.load_pem_x509_certificate((folder / "server.crt").read_bytes())
        (folder / "server.key").stat()
    except (OSError, ValueError):
        return False
    left = cert.not_valid_after_utc - datetime.datetime.now(datetime.UTC)
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return False
    return cert.issuer == ca.subject and left.days > RENEW_DAYS and san == _san(names)


def ensure_tls(folder: Path, port: int, names: list[str]) -> TlsFiles:
    """The CA (kept for good: devices trust it) and a server certificate for ``names``
    (made again when the names change or it nears its end)."""
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    ca, ca_key = _load_ca(folder)
    if not _server_is_current(folder, ca, names):
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name(names[0]))
            .issuer_name(ca.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=SERVER_DAYS))
            .add_extension(_san(names), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(ca_key, hashes.SHA256())
        )
        _write(folder / "server.key", _key_pem(key), private=True)
        _write(folder / "server.crt", cert.public_bytes(serialization.Encoding.PEM), private=False)
        log.info("broker TLS certificate for %s", ", ".join(names))
    return TlsFiles(port, folder / "ca.crt", folder / "server.crt", folder / "server.key")
