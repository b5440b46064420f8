"""The files of a CA rotation in one TLS directory (`.secrets/tls`), one phase at a time
(`security.rotation.Phase`); the servers pick them up when restarted (`security.rolling`).

    trust-both   a new CA, `ca-next.crt`/`ca-next.key`, named after the time it was made
                 (a trust bundle must not hold two CAs of one name: ZooKeeper keeps one
                 per name); `ca.crt` becomes the bundle of the old CA and the new one
                 (the old key, `ca.key`, stays until the end)
    new-leaves   every certificate of `security.tls.leaf_roles` (the brokers', the
                 client's, the ZooKeeper servers' and their key stores) issued again by
                 the new CA, with new keys
    retire-old   `ca.crt` and `ca.key` become the new CA's; `ca-next.*` are removed

`rotation` names the phase whose files are in place, from the first phase until
`finish`: while it exists `security.tls.ensure_tls` (`make setup`) leaves the directory
alone, and a rotation that stopped halfway resumes from it. Every file is replaced
atomically (a new file renamed over the old, so a container whose bind mount holds the
old file keeps reading it until it restarts) and, when run as root, given to the
directory's owner: the containers' user must read what is mounted into them. Caller's
thread.
"""

from __future__ import annotations

import datetime
import os
import re

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec

from security.rotation import Phase, pem_certificates, trust_bundle
from security.secret_files import SecretFileError, hand_over
from security.tls import (
    CA_NAME,
    ensure_key_store,
    issue_ca,
    issue_leaf,
    leaf_roles,
    load_pair,
    write_file,
    write_pair,
)
from security.tls_files import (
    BROKER_PREFIX,
    CA,
    NEXT_CA,
    ZOOKEEPER_PREFIX,
    TlsFiles,
)

__all__ = ["counts", "finish", "phase_in_place", "write_phase"]


def phase_in_place(files: TlsFiles) -> Phase | None:
    """The phase whose files are in place, or None when no rotation is under way;
    `SecretFileError` when the state file names no phase."""
    try:
        text = files.rotation_state.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SecretFileError(f"cannot read {files.rotation_state}: {exc.strerror}") from None
    try:
        return Phase(text)
    except ValueError:
        raise SecretFileError(f"{files.rotation_state} names no rotation phase") from None


def counts(files: TlsFiles) -> tuple[int, int]:
    """How many brokers and ZooKeeper servers have their own certificate in the
    directory (`broker-N.crt`, `zkN.crt`): the highest N of each."""
    highest = {BROKER_PREFIX: 0, ZOOKEEPER_PREFIX: 0}
    for path in files.directory.glob("*.crt"):
        for prefix in highest:
            found = re.fullmatch(re.escape(prefix) + r"([1-9]\d*)", path.stem)
            if found:
                highest[prefix] = max(highest[prefix], int(found.group(1)))
    return highest[BROKER_PREFIX], highest[ZOOKEEPER_PREFIX]


def write_phase(
    files: TlsFiles, phase: Phase, now: datetime.datetime | None = None
) -> tuple[str, ...]:
    """Put the files of `phase` in place (see the module docstring) and record it; the
    names of the certificates written. Writing a phase again is harmless: the new CA is
    made once, and leaves issued again are as good as the first ones."""
    now = now or datetime.datetime.now(datetime.UTC)
    written: list[str] = []
    if phase is Phase.TRUST_BOTH:
        if load_pair(files.cert(NEXT_CA), files.key(NEXT_CA)) is None:
            write_pair(files, NEXT_CA, issue_ca(now, f"{CA_NAME} {now:%Y-%m-%dT%H:%M:%SZ}"))
            written.append(NEXT_CA)
        if load_pair(files.cert(CA), files.key(CA)) is None:
            raise SecretFileError(f"no CA to rotate in {files.directory}; run `make setup`")
        bundle = trust_bundle(_first_certificate(files), files.cert(NEXT_CA).read_bytes())
        write_file(files.cert(CA), bundle, 0o644)
        written.append(CA)
    elif phase is Phase.NEW_LEAVES:
        ca = _next_ca(files)
        brokers, zookeepers = counts(files)
        for role, dns in leaf_roles(brokers, zookeepers).items():
            write_pair(files, role, issue_leaf(role, dns, ca, now))
            if role.startswith(ZOOKEEPER_PREFIX):
                ensure_key_store(files, role)
            written.append(role)
    else:
        _next_ca(files)
        write_file(files.key(CA), files.key(NEXT_CA).read_bytes(), 0o600)
        write_file(files.cert(CA), files.cert(NEXT_CA).read_bytes(), 0o644)
        written.append(CA)
    write_file(files.rotation_state, f"{phase.value}\n".encode(), 0o644)
    _hand_to_owner(files)
    return tuple(written)


def finish(files: TlsFiles) -> None:
    """End the rotation once the servers run on the files of `retire-old`: remove the new
    CA's spare copy and the state file."""
    if phase_in_place(files) is not Phase.RETIRE_OLD:
        raise SecretFileError(f"the rotation in {files.directory} has not retired the old CA")
    files.cert(NEXT_CA).unlink(missing_ok=True)
    files.key(NEXT_CA).unlink(missing_ok=True)
    files.rotation_state.unlink()


def _first_certificate(files: TlsFiles) -> bytes:
    """The CA certificate `ca.key` belongs to: the first of `ca.crt`."""
    return pem_certificates(files.cert(CA).read_bytes())[0]


def _next_ca(files: TlsFiles) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    found = load_pair(files.cert(NEXT_CA), files.key(NEXT_CA))
    if found is None:
        raise SecretFileError(
            f"the new CA ({files.cert(NEXT_CA)}) is missing: the rotation in "
            f"{files.directory} must start again from its first phase"
        )
    return found


def _hand_to_owner(files: TlsFiles) -> None:
    """Give every file to the owner of the TLS directory (a no-op unless root)."""
    owner = os.stat(files.directory)
    hand_over(files.directory, owner.st_uid, owner.st_gid)
