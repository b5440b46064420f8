"""The cluster's CA and certificates (`security.tls.ensure_tls`): what is signed by whom,
the SANs, idempotence, renewal and the key files' mode. Files only in pytest's directory."""

from __future__ import annotations

import datetime
import stat
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from security.tls import RENEW_BEFORE, VALIDITY, ensure_tls, sans
from security.tls_files import (
    BROKER,
    CA,
    CLIENT,
    TlsFiles,
    TlsMaterialError,
    broker_identity,
    broker_role,
    load_identity,
)

SERVERS = ("zk1", "zk2", "zk3")
OWN = ("broker-1", "broker-2", "broker-3")
EVERY = (CA, BROKER, CLIENT, *OWN, *SERVERS)


def _cert(files: TlsFiles, name: str) -> x509.Certificate:
    return x509.load_pem_x509_certificate(files.cert(name).read_bytes())


def _common_name(cert: x509.Certificate) -> str:
    return str(cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value)


def test_the_ca_signs_the_broker_and_client_certificates(tmp_path: Path) -> None:
    files = ensure_tls(tmp_path).files
    ca = _cert(files, CA)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    for role in (BROKER, CLIENT):
        leaf = _cert(files, role)
        leaf.verify_directly_issued_by(ca)
        assert _common_name(leaf) == role
        assert not leaf.extensions.get_extension_for_class(x509.BasicConstraints).value.ca


def test_the_broker_certificate_names_the_services_and_loopback(tmp_path: Path) -> None:
    files = ensure_tls(tmp_path, brokers=3).files
    assert sans(_cert(files, BROKER)) == (
        ("broker1", "broker2", "broker3", "localhost"),
        ("127.0.0.1",),
    )
    usages = _cert(files, BROKER).extensions.get_extension_for_class(x509.ExtendedKeyUsage)
    assert set(usages.value) == {ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH}
    assert sans(_cert(files, CLIENT)) == ((), ())


def test_keys_are_readable_by_their_owner_only(tmp_path: Path) -> None:
    files = ensure_tls(tmp_path).files
    for name in EVERY:
        assert stat.S_IMODE(files.key(name).stat().st_mode) == 0o600
    for name in SERVERS:
        assert stat.S_IMODE(files.key_store(name).stat().st_mode) == 0o600
    assert stat.S_IMODE(files.directory.stat().st_mode) == 0o700


def test_a_second_run_changes_nothing(tmp_path: Path) -> None:
    first = ensure_tls(tmp_path)
    before = {p.name: p.read_bytes() for p in first.files.directory.iterdir()}
    second = ensure_tls(tmp_path)
    assert first.written == EVERY
    assert second.written == ()
    assert {p.name: p.read_bytes() for p in second.files.directory.iterdir()} == before


def test_a_missing_leaf_is_made_again_under_the_same_ca(tmp_path: Path) -> None:
    files = ensure_tls(tmp_path).files
    ca_before = files.cert(CA).read_bytes()
    files.key(CLIENT).unlink()
    assert ensure_tls(tmp_path).written == (CLIENT,)
    assert files.cert(CA).read_bytes() == ca_before
    _cert(files, CLIENT).verify_directly_issued_by(_cert(files, CA))


def test_a_new_ca_reissues_every_certificate(tmp_path: Path) -> None:
    files = ensure_tls(tmp_path).files
    files.cert(CA).write_text("not a certificate")
    assert ensure_tls(tmp_path).written == EVERY
    for role in (BROKER, CLIENT, *SERVERS):
        _cert(files, role).verify_directly_issued_by(_cert(files, CA))


def test_certificates_near_their_expiry_are_renewed(tmp_path: Path) -> None:
    ensure_tls(tmp_path)
    later = datetime.datetime.now(datetime.UTC) + VALIDITY - RENEW_BEFORE / 2
    assert ensure_tls(tmp_path, now=later).written == EVERY


def test_more_brokers_reissue_the_broker_certificate_only(tmp_path: Path) -> None:
    ensure_tls(tmp_path, brokers=3)
    outcome = ensure_tls(tmp_path, brokers=5)
    assert outcome.written == (BROKER, "broker-4", "broker-5")
    assert "broker5" in sans(_cert(outcome.files, BROKER))[0]


def test_each_broker_has_its_own_certificate_naming_its_id(tmp_path: Path) -> None:
    files = ensure_tls(tmp_path, brokers=3).files
    ca = _cert(files, CA)
    for broker_id in (1, 2, 3):
        own = _cert(files, broker_role(broker_id))
        own.verify_directly_issued_by(ca)
        assert _common_name(own) == f"broker-{broker_id}"
        assert sans(own) == ((f"broker{broker_id}", "localhost"), ("127.0.0.1",))
        assert load_identity(files.directory, broker_role(broker_id)).role == f"broker-{broker_id}"


def test_an_identity_loads_for_each_role_and_names_what_is_missing(tmp_path: Path) -> None:
    directory = ensure_tls(tmp_path).files.directory
    identity = load_identity(directory, CLIENT)
    assert identity.ca_pem == (directory / "ca.crt").read_bytes()
    assert identity.cert_pem.startswith(b"-----BEGIN CERTIFICATE-----")
    with pytest.raises(TlsMaterialError, match="security init"):
        load_identity(tmp_path / "nowhere", BROKER)
    with pytest.raises(TlsMaterialError, match="unknown role"):
        load_identity(directory, CA)


def test_an_identity_never_shows_its_key(tmp_path: Path) -> None:
    """Identities end up in test reports (a fixture's repr) and logs: the key stays out."""
    identity = load_identity(ensure_tls(tmp_path).files.directory, BROKER)
    key_body = identity.key_pem.decode().splitlines()[1]
    assert key_body not in repr(identity)
    assert key_body not in str(identity)


def test_each_zookeeper_server_has_its_own_certificate_and_key_store(tmp_path: Path) -> None:
    files = ensure_tls(tmp_path).files
    ca = _cert(files, CA)
    for n, role in enumerate(SERVERS, start=1):
        leaf = _cert(files, role)
        leaf.verify_directly_issued_by(ca)
        assert _common_name(leaf) == role
        assert sans(leaf) == ((f"zk{n}", "localhost"), ("127.0.0.1",))
        usages = leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
        assert set(usages) == {ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH}
        # ZooKeeper's PEM key store: the key and the certificate in one file
        store = files.key_store(role).read_bytes()
        assert store == files.key(role).read_bytes() + files.cert(role).read_bytes()


def test_a_damaged_key_store_is_written_again_without_a_new_certificate(tmp_path: Path) -> None:
    files = ensure_tls(tmp_path).files
    cert_before = files.cert("zk2").read_bytes()
    files.key_store("zk2").write_bytes(b"damaged")
    assert ensure_tls(tmp_path).written == ()
    assert files.cert("zk2").read_bytes() == cert_before
    assert files.key_store("zk2").read_bytes().endswith(cert_before)


def test_a_reissued_server_certificate_renews_its_key_store(tmp_path: Path) -> None:
    files = ensure_tls(tmp_path).files
    before = files.key_store("zk1").read_bytes()
    files.key("zk1").unlink()
    assert ensure_tls(tmp_path).written == ("zk1",)
    after = files.key_store("zk1").read_bytes()
    assert after != before
    assert after == files.key("zk1").read_bytes() + files.cert("zk1").read_bytes()


def test_a_broker_presents_its_own_certificate_when_the_directory_has_it(tmp_path: Path) -> None:
    directory = ensure_tls(tmp_path, brokers=2).files.directory
    assert broker_identity(directory, 2).role == "broker-2"
    assert broker_identity(directory, 5).role == BROKER
