"""The compose cluster runs secured (docs/security.md): Kafka's secure ZooKeeper ACLs,
non-root containers without capabilities, and the password nowhere in what they write.

Setup: the docker tier's compose project (conftest), whose brokers get
`.secrets/zk-digest` as a compose secret. Steps: look at the tree with and without the
credentials, at the containers through the docker SDK, and at the run's event logs.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from kazoo.client import KazooClient
from kazoo.security import ACL, Id, Permissions

from harness.compose import ComposeCluster
from security.testing import refused_writes
from zkdata import paths

pytestmark = pytest.mark.docker

SERVICES = ("zk1", "zk2", "zk3", "broker1", "broker2", "broker3")


def broker_dn(broker_id: int) -> str:
    """The subject of broker `broker_id`'s own certificate (`security.tls`), its x509
    identity in ZooKeeper."""
    return f"CN=broker-{broker_id},O=zk-controller-testbed"


def test_an_unauthenticated_client_reads_the_tree_but_every_write_is_refused(
    compose_cluster: ComposeCluster,
) -> None:
    """Reads work; creating, changing and deleting the cluster's znodes, and creating
    top-level znodes, are refused with NoAuth (over TLS, ZooKeeper's only way in, but
    without the digest login)."""
    assert compose_cluster.zk_tls is not None
    tls = compose_cluster.zk_tls.kazoo_options()
    client = KazooClient(hosts=compose_cluster.zk_connect, timeout=10, **tls)
    client.start(timeout=30)
    try:
        assert sorted(client.get_children(paths.BROKER_IDS)) == ["1", "2", "3"]
        assert client.get(paths.CONTROLLER)[0]
        writes: dict[str, Callable[[], object]] = {
            "register a broker": lambda: client.create(paths.broker_id(9), ephemeral=True),
            "create a topic": lambda: client.create(paths.topic("intruder"), b"{}"),
            "bump the controller epoch": lambda: client.set(paths.CONTROLLER_EPOCH, b"99"),
            "remove the controller": lambda: client.delete(paths.CONTROLLER),
            "create a top-level znode": lambda: client.create("/intruder"),
        }
        assert refused_writes(writes) == list(writes)
    finally:
        client.stop()
        client.close()


def test_brokers_register_with_the_clusters_digest_identity(
    compose_cluster: ComposeCluster,
) -> None:
    """Each registration carries creator-all for the credentials in `.secrets/zk-digest`
    (the compose secret) plus world-read. The creator is also the broker's own certificate's
    x509 identity: ZooKeeper authenticates every TLS client by its certificate, and
    creator-all names every identity of the creating session; each broker presents its
    own."""
    client = compose_cluster.zk()
    try:
        for broker in (1, 2, 3):
            expected = {
                ACL(Permissions.ALL, Id("digest", compose_cluster.zk_credentials.acl_id)),
                ACL(Permissions.ALL, Id("x509", broker_dn(broker))),
                ACL(Permissions.READ, Id("world", "anyone")),
            }
            acl = client.get_acls(paths.broker_id(broker))[0]
            assert len(acl) == len(expected)
            assert set(acl) == expected
    finally:
        client.stop()
        client.close()


def test_containers_run_as_non_root_without_capabilities(compose_cluster: ComposeCluster) -> None:
    """Every service's main process has a uid other than 0; none adds a capability, all
    drop them, and none may gain privileges."""
    for service in SERVICES:
        container = compose_cluster.container(service)
        result = container.exec_run(["id", "-u"])
        assert result.exit_code == 0, result.output
        assert int(result.output.decode().strip()) != 0, service
        host = container.attrs["HostConfig"]
        assert not host.get("CapAdd"), service
        assert host.get("CapDrop") == ["ALL"], service
        assert not host.get("Privileged"), service
        assert "no-new-privileges:true" in (host.get("SecurityOpt") or []), service


def test_the_password_is_in_no_event_log(compose_cluster: ComposeCluster) -> None:
    """The brokers' event logs under runs/ leave the password out."""
    logs = sorted((compose_cluster.run_dir / "events").glob("broker*.jsonl"))
    assert len(logs) == 3
    for log in logs:
        assert compose_cluster.zk_credentials.password not in log.read_text(), log
