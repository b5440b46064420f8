"""Tests of the ZooKeeper ensemble harness itself, against real JVM processes."""

from __future__ import annotations

from pathlib import Path

import pytest
from kazoo.client import KazooClient
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.states import KazooState

from harness.waiting import wait_until
from harness.zk_ensemble import ZkEnsemble, expire_session, open_client
from security.tls import ensure_tls
from security.zk_tls import ZkTls

pytestmark = pytest.mark.integration


def _members_in_mode(ensemble: ZkEnsemble, mode: str) -> list[int]:
    return [i for i in range(ensemble.size) if ensemble.server_mode(i) == mode]


def test_ensemble_has_one_leader_and_two_followers(zk_ensemble: ZkEnsemble) -> None:
    modes = sorted(str(zk_ensemble.server_mode(i)) for i in range(zk_ensemble.size))

    assert modes == ["follower", "follower", "leader"]
    assert all(zk_ensemble.is_running(i) for i in range(zk_ensemble.size))
    assert len(set(zk_ensemble.client_ports)) == 3


def test_connect_string_lists_every_member_and_the_chroot(zk_ensemble: ZkEnsemble) -> None:
    ports = zk_ensemble.client_ports

    assert zk_ensemble.connect_string() == ",".join(f"127.0.0.1:{p}" for p in ports)
    assert zk_ensemble.connect_string("/a/b").endswith(f"127.0.0.1:{ports[-1]}/a/b")
    assert zk_ensemble.connect_string(members=[1]) == f"127.0.0.1:{ports[1]}"


def test_write_through_one_server_is_read_through_the_others(
    zk_ensemble: ZkEnsemble, zk_chroot: str
) -> None:
    followers = _members_in_mode(zk_ensemble, "follower")
    (leader,) = _members_in_mode(zk_ensemble, "leader")
    writer_member, other_follower = followers

    with open_client(zk_ensemble.connect_string(zk_chroot, members=[writer_member])) as writer:
        writer.create("/shared", b"written-via-follower")
        for reader_member in (leader, other_follower):
            hosts = zk_ensemble.connect_string(zk_chroot, members=[reader_member])
            with open_client(hosts) as reader:
                reader.sync("/shared")
                data, _stat = reader.get("/shared")
                assert data == b"written-via-follower", f"read through member {reader_member}"


def test_expire_session_drops_ephemerals_and_client_gets_new_session(
    zk_ensemble: ZkEnsemble, zk_client: KazooClient, zk_connect: str
) -> None:
    states: list[KazooState] = []
    zk_client.add_listener(states.append)
    zk_client.create("/ephemeral", b"", ephemeral=True)
    old_session = zk_client._session_id
    assert old_session is not None

    expire_session(zk_client)

    assert KazooState.LOST in states
    with open_client(zk_connect) as observer:
        observer.sync("/ephemeral")
        assert observer.exists("/ephemeral") is None
    wait_until(
        lambda: (
            zk_client.state == KazooState.CONNECTED
            and zk_client._session_id not in (None, old_session)
        ),
        timeout=15,
        message=lambda: (
            f"client did not reconnect with a new session: state={zk_client.state} "
            f"session={zk_client._session_id} old={old_session:#x}"
        ),
    )
    assert zk_client.exists("/ephemeral") is None
    zk_client.create("/ephemeral", b"", ephemeral=True)


def test_killing_a_follower_keeps_the_ensemble_writable(
    zk_ensemble: ZkEnsemble, zk_chroot: str
) -> None:
    victim = _members_in_mode(zk_ensemble, "follower")[0]
    survivors = [i for i in range(zk_ensemble.size) if i != victim]
    try:
        zk_ensemble.kill_server(victim)

        assert not zk_ensemble.is_running(victim)
        assert zk_ensemble.server_mode(victim) is None
        with open_client(zk_ensemble.connect_string(zk_chroot, members=survivors)) as client:
            client.create("/while-degraded", b"quorum of two")

        zk_ensemble.start_server(victim)

        assert zk_ensemble.server_mode(victim) == "follower"
        assert sorted(str(zk_ensemble.server_mode(i)) for i in survivors) == [
            "follower",
            "leader",
        ]
        with open_client(zk_ensemble.connect_string(zk_chroot, members=[victim])) as client:
            client.sync("/while-degraded")
            data, _stat = client.get("/while-degraded")
            assert data == b"quorum of two"
    finally:
        # Leave the session-wide ensemble whole for whatever test runs next.
        if not zk_ensemble.is_running(victim):
            zk_ensemble.start_server(victim)


def test_a_tls_ensemble_serves_tls_clients_only(tmp_path: Path) -> None:
    """Given a `ZkTls`, the ensemble is secured as the compose cluster's servers are: a
    client of the CA connects (and its session can be expired), a plaintext one cannot."""
    tls = ZkTls(ensure_tls(tmp_path / "secrets").files.directory)
    ensemble = ZkEnsemble(tmp_path / "zk", tls=tls)
    ensemble.start()
    try:
        assert sorted(str(ensemble.server_mode(i)) for i in range(3)) == [
            "follower",
            "follower",
            "leader",
        ]
        with open_client(ensemble.connect_string(), tls=tls) as client:
            client.ensure_path("/secured")
            session = client.client_id
            expire_session(client)
            wait_until(lambda: client.connected, timeout=15, message="no new session")
            assert client.client_id != session
            assert client.exists("/secured") is not None
        plain = KazooClient(hosts=ensemble.connect_string(), timeout=2)
        try:
            with pytest.raises(KazooTimeoutError):
                plain.start(timeout=3)
        finally:
            plain.stop()
            plain.close()
    finally:
        ensemble.stop()
