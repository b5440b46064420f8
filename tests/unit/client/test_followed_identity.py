"""A client that follows its TLS files (`Connections` with a `tls_source`,
`security.tls_files.FollowedIdentity`): new connections once a CA rotation replaced the
files, the same ones while they stay. Channels are made, never connected."""

from __future__ import annotations

from pathlib import Path

from client.connections import Connections
from security.rotation import Phase
from security.rotation_files import write_phase
from security.tls import ensure_tls
from security.tls_files import CLIENT, FollowedIdentity, load_identity

ADDRESS = "127.0.0.1:1"


def test_the_identity_is_read_again_only_when_a_file_changed(tmp_path: Path) -> None:
    files = ensure_tls(tmp_path).files
    followed = FollowedIdentity(files.directory, CLIENT)
    first = followed.current()
    assert first == load_identity(files.directory, CLIENT)
    assert followed.current() is first
    write_phase(files, Phase.TRUST_BOTH)
    bundle = followed.current()
    assert bundle.ca_pem != first.ca_pem
    assert bundle.cert_pem == first.cert_pem
    write_phase(files, Phase.NEW_LEAVES)
    assert followed.current().cert_pem != first.cert_pem


def test_connections_follow_a_rotation(tmp_path: Path) -> None:
    files = ensure_tls(tmp_path).files
    connections = Connections(tls_source=FollowedIdentity(files.directory, CLIENT).current)
    before = connections.api(ADDRESS)
    control_before = connections.control(ADDRESS)
    assert connections.api(ADDRESS) is before
    write_phase(files, Phase.TRUST_BOTH)
    after = connections.api(ADDRESS)
    assert after is not before
    assert connections.control(ADDRESS) is not control_before
    assert connections.api(ADDRESS) is after
    connections.close()
    assert connections.api(ADDRESS) is not after
    connections.close()
