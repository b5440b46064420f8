"""The files of each phase of a CA rotation (`security.rotation_files`): who trusts and
who signs what after each, and that `make setup` leaves a rotation alone. Files only in
pytest's directory."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography import x509
from cryptography.exceptions import InvalidSignature

from security.rotation import PHASES, Phase, pem_certificates
from security.rotation_files import counts, finish, phase_in_place, write_phase
from security.secret_files import SecretFileError
from security.tls import ensure_tls
from security.tls_files import CA, NEXT_CA, TlsFiles

LEAVES = ("broker", "client", "broker-1", "broker-2", "broker-3", "zk1", "zk2", "zk3")


def _trusted(files: TlsFiles) -> list[x509.Certificate]:
    return [
        x509.load_pem_x509_certificate(pem) for pem in pem_certificates(files.cert(CA).read_bytes())
    ]


def _signer(files: TlsFiles, role: str, cas: list[x509.Certificate]) -> int:
    """The index in `cas` of the CA that signed `role`'s certificate."""
    leaf = x509.load_pem_x509_certificate(files.cert(role).read_bytes())
    for i, ca in enumerate(cas):
        try:
            leaf.verify_directly_issued_by(ca)
        except (ValueError, TypeError, InvalidSignature):
            continue
        return i
    return -1


@pytest.fixture
def files(tmp_path: Path) -> TlsFiles:
    return ensure_tls(tmp_path).files


def test_the_first_pass_trusts_both_cas_and_keeps_the_certificates(files: TlsFiles) -> None:
    old = _trusted(files)
    before = {role: files.cert(role).read_bytes() for role in LEAVES}
    write_phase(files, Phase.TRUST_BOTH)
    trusted = _trusted(files)
    assert len(trusted) == 2
    assert trusted[0] == old[0]
    # ZooKeeper's PEM trust store keeps one certificate per subject
    assert trusted[0].subject != trusted[1].subject
    assert {role: files.cert(role).read_bytes() for role in LEAVES} == before
    assert phase_in_place(files) is Phase.TRUST_BOTH


def test_the_second_pass_issues_every_certificate_from_the_new_ca(files: TlsFiles) -> None:
    write_phase(files, Phase.TRUST_BOTH)
    old_key = files.key("zk1").read_bytes()
    write_phase(files, Phase.NEW_LEAVES)
    trusted = _trusted(files)
    assert {role: _signer(files, role, trusted) for role in LEAVES} == dict.fromkeys(LEAVES, 1)
    assert files.key("zk1").read_bytes() != old_key
    assert files.key_store("zk1").read_bytes() == (
        files.key("zk1").read_bytes() + files.cert("zk1").read_bytes()
    )


def test_the_last_pass_retires_the_old_ca(files: TlsFiles) -> None:
    for phase in PHASES:
        write_phase(files, phase)
    new_ca = files.cert(NEXT_CA).read_bytes()
    finish(files)
    trusted = _trusted(files)
    assert len(trusted) == 1
    assert pem_certificates(files.cert(CA).read_bytes()) == pem_certificates(new_ca)
    assert _signer(files, "client", trusted) == 0
    assert phase_in_place(files) is None
    assert not files.cert(NEXT_CA).exists()
    assert not files.key(NEXT_CA).exists()


def test_setup_leaves_a_rotation_alone_and_accepts_its_result(tmp_path: Path) -> None:
    files = ensure_tls(tmp_path).files
    write_phase(files, Phase.TRUST_BOTH)
    write_phase(files, Phase.NEW_LEAVES)
    before = {p.name: p.read_bytes() for p in files.directory.iterdir()}
    assert ensure_tls(tmp_path).written == ()
    assert {p.name: p.read_bytes() for p in files.directory.iterdir()} == before
    write_phase(files, Phase.RETIRE_OLD)
    finish(files)
    assert ensure_tls(tmp_path).written == ()


def test_writing_the_first_pass_again_keeps_its_new_ca(files: TlsFiles) -> None:
    write_phase(files, Phase.TRUST_BOTH)
    bundle = files.cert(CA).read_bytes()
    write_phase(files, Phase.TRUST_BOTH)
    assert files.cert(CA).read_bytes() == bundle


def test_issuing_without_the_new_ca_is_refused(files: TlsFiles) -> None:
    with pytest.raises(SecretFileError, match="new CA"):
        write_phase(files, Phase.NEW_LEAVES)


def test_finishing_before_the_old_ca_is_retired_is_refused(files: TlsFiles) -> None:
    write_phase(files, Phase.TRUST_BOTH)
    with pytest.raises(SecretFileError, match="not retired"):
        finish(files)


def test_a_state_file_naming_no_phase_is_refused(files: TlsFiles) -> None:
    files.rotation_state.write_text("halfway\n")
    with pytest.raises(SecretFileError, match="names no rotation phase"):
        phase_in_place(files)


def test_the_servers_are_counted_from_their_certificates(files: TlsFiles) -> None:
    assert counts(files) == (3, 3)
