"""The cluster's certificate authority and the certificates of the control plane's mutual TLS.

`ensure_tls(directory)` (`ensure_tls_files` for `python -m security init`) makes, under
`<directory>/tls/`, a CA (ECDSA P-256, its key and
self-signed certificate), one certificate per broker (common name `broker-N`, the
broker's identity; SANs its compose service name `brokerN`, `localhost`, `127.0.0.1`), the
shared broker certificate (common name `broker`; SANs: the compose service names
`broker1..brokerN`, `localhost`, `127.0.0.1`) for brokers run on the host and the chaos
request proxy, one client certificate
(common name `client`) for the CLI, the workload, chaos runs and the benchmarks, and one
certificate per ZooKeeper server (common name and first SAN its compose service name
`zkN`, then `localhost`, `127.0.0.1`), all signed by the CA. A ZooKeeper server also gets
`zkN.pem`, its key and certificate in one file: ZooKeeper's PEM key store reads both from
one path. It is idempotent: a file is written only when it is missing, does not
parse, expires within `RENEW_BEFORE`, or (for a leaf) is not signed by the current CA or
does not carry the asked SANs. Keys are written with mode 0600.

File names and common names come from `security.tls_files`, which loads them again
without this module's dependency on `cryptography`. Main thread.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from security.tls_files import (
    BROKER,
    CA,
    CLIENT,
    ZOOKEEPER_PREFIX,
    TlsFiles,
    broker_role,
    rotation_under_way,
    zookeeper_role,
)

#: How long a new certificate is valid.
VALIDITY = datetime.timedelta(days=825)
#: A certificate expiring sooner than this is made again.
RENEW_BEFORE = datetime.timedelta(days=30)
#: Brokers named in the broker certificate's SANs by default (`broker1..broker3`, as compose runs).
DEFAULT_BROKERS = 3
#: ZooKeeper servers given a certificate by default (`zk1..zk3`, as compose runs).
DEFAULT_ZOOKEEPERS = 3
#: The common name of the CA `make setup` makes (a rotation's CA adds when it was made:
#: ZooKeeper's PEM trust store keeps one certificate per subject, so two CAs of one
#: bundle must not share a name).
CA_NAME = "testbed cluster CA"
#: Names every server certificate carries besides the service names.
LOCAL_NAMES = ("localhost",)
LOCAL_ADDRESSES = ("127.0.0.1",)

_Key = ec.EllipticCurvePrivateKey


@dataclass(frozen=True, slots=True)
class TlsOutcome:
    """What `ensure_tls` did: the files, and the names of those it (re)wrote."""

    files: TlsFiles
    written: tuple[str, ...]


def broker_names(brokers: int) -> tuple[str, ...]:
    """The DNS SANs of the broker certificate: the compose service names, then localhost."""
    return (*(f"broker{n}" for n in range(1, brokers + 1)), *LOCAL_NAMES)


def own_broker_names(broker_id: int) -> tuple[str, ...]:
    """The DNS SANs of broker `broker_id`'s own certificate: its service name, localhost."""
    return (f"broker{broker_id}", *LOCAL_NAMES)


def zookeeper_names(server: int) -> tuple[str, ...]:
    """The DNS SANs of ZooKeeper server `server`'s certificate: its service name, then
    localhost (the published ports are reached on the loopback interface)."""
    return (zookeeper_role(server), *LOCAL_NAMES)


def ensure_tls_files(directory: Path) -> Path:
    """`ensure_tls` for `python -m security init`: the TLS directory, ready."""
    return ensure_tls(directory).files.directory


def ensure_tls(
    directory: Path,
    brokers: int = DEFAULT_BROKERS,
    now: datetime.datetime | None = None,
    zookeepers: int = DEFAULT_ZOOKEEPERS,
) -> TlsOutcome:
    """Make whatever of the CA, broker, client and ZooKeeper server certificates under
    `<directory>/tls/` is missing, unreadable, near its expiry or no longer matching;
    leave the rest alone. While a CA rotation is under way (`security.rotation_files`)
    nothing is touched: its files are the rotation's to change."""
    files = TlsFiles(directory / "tls")
    files.directory.mkdir(parents=True, exist_ok=True)
    os.chmod(files.directory, 0o700)
    if rotation_under_way(files):
        return TlsOutcome(files, ())
    now = now or datetime.datetime.now(datetime.UTC)
    written: list[str] = []
    ca = load_pair(files.cert(CA), files.key(CA))
    if ca is None or not _fresh(ca[0], now):
        ca = issue_ca(now)
        write_pair(files, CA, ca)
        written.append(CA)
    for role, dns in leaf_roles(brokers, zookeepers).items():
        leaf = load_pair(files.cert(role), files.key(role))
        if CA in written or leaf is None or not _matches(leaf[0], ca[0], dns, now):
            write_pair(files, role, issue_leaf(role, dns, ca, now))
            written.append(role)
        if role.startswith(ZOOKEEPER_PREFIX):
            ensure_key_store(files, role)
    return TlsOutcome(files, tuple(written))


def leaf_roles(brokers: int, zookeepers: int) -> dict[str, tuple[str, ...]]:
    """Every certificate the CA signs, by role, with its DNS SANs: the shared broker one,
    the client one, each broker's own, each ZooKeeper server's."""
    wanted = {BROKER: broker_names(brokers), CLIENT: ()}
    own = {broker_role(n): own_broker_names(n) for n in range(1, brokers + 1)}
    servers = {zookeeper_role(n): zookeeper_names(n) for n in range(1, zookeepers + 1)}
    return wanted | own | servers


def ensure_key_store(files: TlsFiles, role: str) -> None:
    """`<role>.pem`: the key, then the certificate, unless it holds exactly them already."""
    wanted = files.key(role).read_bytes() + files.cert(role).read_bytes()
    path = files.key_store(role)
    try:
        if path.read_bytes() == wanted:
            return
    except OSError:
        pass
    write_file(path, wanted, 0o600)


def load_pair(cert_path: Path, key_path: Path) -> tuple[x509.Certificate, _Key] | None:
    """A certificate (the first of its file) and its EC key; None when either does not
    load."""
    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
        key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    except (OSError, ValueError):
        return None
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        return None
    return cert, key


def _fresh(cert: x509.Certificate, now: datetime.datetime) -> bool:
    return cert.not_valid_after_utc - now > RENEW_BEFORE and cert.not_valid_before_utc <= now


def _matches(
    cert: x509.Certificate,
    ca: x509.Certificate,
    dns: Sequence[str],
    now: datetime.datetime,
) -> bool:
    if not _fresh(cert, now) or cert.issuer != ca.subject:
        return False
    try:
        cert.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return sans(cert) == (tuple(dns), LOCAL_ADDRESSES if dns else ())


def sans(cert: x509.Certificate) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A certificate's DNS names and IP addresses (empty when it has no SAN extension)."""
    try:
        ext = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return (), ()
    addresses = tuple(str(a) for a in ext.get_values_for_type(x509.IPAddress))
    return tuple(ext.get_values_for_type(x509.DNSName)), addresses


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "zk-controller-testbed"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def _builder(
    subject: x509.Name, issuer: x509.Name, key: _Key, now: datetime.datetime
) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False)
    )


def issue_ca(now: datetime.datetime, name_: str = CA_NAME) -> tuple[x509.Certificate, _Key]:
    """A new CA: a fresh key and its self-signed certificate, common name `name_`."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = _name(name_)
    cert = (
        _builder(name, name, key, now)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_usage(cert_sign=True), critical=True)
        .sign(key, hashes.SHA256())
    )
    return cert, key


def issue_leaf(
    role: str, dns: Sequence[str], ca: tuple[x509.Certificate, _Key], now: datetime.datetime
) -> tuple[x509.Certificate, _Key]:
    """A new key and its certificate for `role` (its common name), signed by `ca`; server
    and client authentication with `dns` (and the loopback address) as SANs, client
    authentication only without."""
    ca_cert, ca_key = ca
    key = ec.generate_private_key(ec.SECP256R1())
    purposes = [ExtendedKeyUsageOID.CLIENT_AUTH]
    builder = (
        _builder(_name(role), ca_cert.subject, key, now)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_usage(cert_sign=False), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
    )
    if dns:
        purposes.append(ExtendedKeyUsageOID.SERVER_AUTH)
        names: list[x509.GeneralName] = [x509.DNSName(n) for n in dns]
        names += [x509.IPAddress(ipaddress.ip_address(a)) for a in LOCAL_ADDRESSES]
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    builder = builder.add_extension(x509.ExtendedKeyUsage(purposes), critical=False)
    return builder.sign(ca_key, hashes.SHA256()), key


def _usage(*, cert_sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=not cert_sign,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=cert_sign,
        crl_sign=cert_sign,
        encipher_only=False,
        decipher_only=False,
    )


def write_pair(files: TlsFiles, name: str, issued: tuple[x509.Certificate, _Key]) -> None:
    """Write `name`'s key (0600) and certificate (0644)."""
    cert, key = issued
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    write_file(files.key(name), key_pem, 0o600)
    write_file(files.cert(name), cert.public_bytes(serialization.Encoding.PEM), 0o644)


def write_file(path: Path, data: bytes, mode: int) -> None:
    """Write `data` to `path` with `mode` from the start (a temporary file, then a rename)."""
    partial = path.with_name(path.name + ".partial")
    partial.unlink(missing_ok=True)
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.chmod(partial, mode)
    partial.replace(path)
