"""Kafka's secure mode against a real ensemble: a broker and the `testbed` command line
given the cluster's digest credentials create every znode with Kafka's secure ACLs; a
client without them reads the tree but every write it tries is refused with NoAuth.

Setup: a credential file made by `security.zk_credentials.ensure_digest_file`; broker 1
started with `--zk-digest-file`. Steps: wait until it registers and is controller; create
a topic through the CLI with the credentials; then act as an unauthenticated client.
Validate: the ACLs stored on each znode, the reads that work and the writes refused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError
from kazoo.security import ACL, OPEN_ACL_UNSAFE, Id, Permissions

from harness.waiting import wait_until
from harness.zk_ensemble import open_client
from security.testing import refused_writes
from security.zk_credentials import (
    ZkDigestCredentials,
    ensure_digest_file,
    kazoo_options,
    load,
)
from zkdata import paths
from zkdata.client import KafkaZkClient

pytestmark = pytest.mark.integration

TOPIC = "secured"


@pytest.fixture
def digest_file(tmp_path: Path) -> Path:
    """The cluster's credentials, as `make setup` writes them."""
    return ensure_digest_file(tmp_path / "secrets")


@pytest.fixture
def credentials(digest_file: Path) -> ZkDigestCredentials:
    """What the credential file holds."""
    return load(digest_file)


def _secured_topics(
    capsys: pytest.CaptureFixture[str], zk_connect: str, digest_file: Path, *argv: str
) -> tuple[int, str, str]:
    """`testbed topics <argv[0]> --topic TOPIC <argv[1:]>` with the cluster's credentials."""
    action, *rest = argv
    return run(
        capsys,
        "topics",
        action,
        "--zk",
        zk_connect,
        "--zk-digest-file",
        str(digest_file),
        "--topic",
        TOPIC,
        *rest,
    )


@pytest.fixture
def secured(
    brokers: Callable[..., Any],
    zk_client: KazooClient,
    digest_file: Path,
    zk_connect: str,
    capsys: pytest.CaptureFixture[str],
) -> KafkaZkClient:
    """Broker 1 secured and controller, and a topic created by the CLI with credentials."""
    brokers(1, extra_args=("--zk-digest-file", str(digest_file)))
    zk = KafkaZkClient(zk_client)
    wait_until(lambda: zk.get_controller_id() == 1, 30, "secured broker 1 is not controller")
    code, out, err = _secured_topics(
        capsys, zk_connect, digest_file, "create", "--partitions", "2", "--replication-factor", "1"
    )
    assert (code, out.strip()) == (0, f"Created topic {TOPIC}."), err
    wait_until(
        lambda: zk_client.exists(paths.partition_state(TOPIC, 1)) is not None,
        30,
        "the controller did not create the partition states",
    )
    return zk


@pytest.fixture
def secure_client(zk_connect: str, credentials: ZkDigestCredentials) -> Iterator[KazooClient]:
    """A session with the cluster's credentials."""
    client = KazooClient(hosts=zk_connect, timeout=10, **kazoo_options(credentials))
    client.start(timeout=10)
    try:
        yield client
    finally:
        client.stop()
        client.close()


def _acl(client: KazooClient, path: str) -> list[ACL]:
    return list(client.get_acls(path)[0])


def test_secured_writers_create_znodes_with_kafkas_secure_acls(
    secured: KafkaZkClient, secure_client: KazooClient, credentials: ZkDigestCredentials
) -> None:
    """Creator-all for the cluster's digest identity plus world-read on everything the
    broker, the controller and the CLI created; the sensitive /config/brokers readable by
    the creator only; the old consumers' /consumers open. (ZooKeeper shows the digest only
    to a session with ADMIN rights, hence the authenticated reader.)"""
    zk_client = secure_client
    creator = ACL(Permissions.ALL, Id("digest", credentials.acl_id))
    world_read = ACL(Permissions.READ, Id("world", "anyone"))
    for path in (
        paths.broker_id(1),
        paths.BROKER_IDS,
        paths.BROKERS,
        paths.CONTROLLER,
        paths.CONTROLLER_EPOCH,
        paths.DELETE_TOPICS,
        paths.ISR_CHANGE_NOTIFICATION,
        paths.LOG_DIR_EVENT_NOTIFICATION,
        paths.CONFIG_CHANGES,
        paths.topic(TOPIC),
        paths.topic_partitions(TOPIC),
        paths.partition_state(TOPIC, 0),
    ):
        assert _acl(zk_client, path) == [creator, world_read], path
    assert _acl(zk_client, paths.CONFIG_BROKERS) == [creator]
    assert _acl(zk_client, paths.CONSUMERS) == list(OPEN_ACL_UNSAFE)


def test_an_unauthenticated_client_reads_but_cannot_write(
    secured: KafkaZkClient, zk_client: KazooClient
) -> None:
    """Reads of the cluster's znodes work; create, set and delete are refused (NoAuth),
    and nothing changed."""
    assert secured.get_broker(1) is not None
    assert secured.get_topic_assignments([TOPIC]).found[TOPIC].partitions.keys() == {0, 1}
    epoch = secured.get_controller_epoch()
    assert epoch is not None
    writes: dict[str, Callable[[], object]] = {
        "register a broker": lambda: zk_client.create(paths.broker_id(99), b"{}", ephemeral=True),
        "create a topic": lambda: zk_client.create(paths.topic("intruder"), b"{}"),
        "request a deletion": lambda: zk_client.create(paths.delete_topic(TOPIC)),
        "bump the controller epoch": lambda: zk_client.set(paths.CONTROLLER_EPOCH, b"99"),
        "rewrite a partition state": lambda: zk_client.set(paths.partition_state(TOPIC, 0), b"{}"),
        "remove the controller": lambda: zk_client.delete(paths.CONTROLLER),
        "remove a topic": lambda: zk_client.delete(paths.topic(TOPIC), recursive=True),
        "reassign": lambda: zk_client.create(paths.REASSIGN_PARTITIONS, b"{}"),
    }
    assert refused_writes(writes) == list(writes)
    assert secured.get_controller_id() == 1
    assert secured.get_controller_epoch() == epoch
    assert zk_client.exists(paths.broker_id(99)) is None
    assert zk_client.exists(paths.topic("intruder")) is None
    assert zk_client.exists(paths.partition_state(TOPIC, 0)) is not None


def test_the_cli_without_credentials_is_refused_and_says_why(
    secured: KafkaZkClient, zk_connect: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`topics delete` on a secured cluster without credentials exits 1 naming NoAuth and
    the option to give; with them it succeeds."""
    code, _, err = run(capsys, "topics", "delete", "--zk", zk_connect, "--topic", TOPIC)
    assert code == 1
    assert "NoAuth" in err
    assert "--zk-digest-file" in err


def test_the_cli_with_credentials_writes_what_the_secured_cluster_accepts(
    secured: KafkaZkClient,
    zk_connect: str,
    digest_file: Path,
    secure_client: KazooClient,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """With `--zk-digest-file`, alter and delete go through, and the controller (also
    authenticated) acts on them."""
    code, out, err = _secured_topics(capsys, zk_connect, digest_file, "alter", "--partitions", "3")
    assert code == 0, err
    wait_until(
        lambda: secure_client.exists(paths.partition_state(TOPIC, 2)) is not None,
        30,
        "the controller did not create the added partition's state",
    )
    code, out, err = _secured_topics(capsys, zk_connect, digest_file, "delete")
    assert (code, out.splitlines()[0]) == (0, f"Topic {TOPIC} is marked for deletion."), err
    wait_until(
        lambda: secure_client.exists(paths.topic(TOPIC)) is None,
        30,
        "the secured controller did not complete the deletion",
    )


def test_a_chroot_made_by_a_secured_broker_is_secured(
    zk_connect: str, brokers: Callable[..., Any], digest_file: Path
) -> None:
    """A chroot the broker creates itself gets the secure ACL too."""
    nested = f"{zk_connect}/nested"
    brokers(1, connect=nested, extra_args=("--zk-digest-file", str(digest_file)))
    with open_client(zk_connect) as client:
        wait_until(
            lambda: client.exists("/nested" + paths.broker_id(1)) is not None,
            30,
            "broker 1 did not register under the nested chroot",
        )
        assert [a.id.scheme for a in _acl(client, "/nested")] == ["digest", "world"]
        with pytest.raises(NoAuthError):
            client.create("/nested/intruder")


def test_the_password_is_in_no_event_log_or_process_log(
    secured: KafkaZkClient, run_dir: Path, credentials: ZkDigestCredentials
) -> None:
    """Everything the secured broker wrote to its run directory (event log, process log,
    health file) leaves the password out."""
    written = [path for path in run_dir.rglob("*") if path.is_file()]
    assert any(path.suffix == ".jsonl" for path in written)
    for path in written:
        assert credentials.password not in path.read_text(errors="replace"), path
