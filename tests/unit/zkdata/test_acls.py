"""`zkdata.acls`: Kafka 2.x's `ZkData.defaultAcls` path by path, and what counts as a
secure session or a world-writable ACL."""

from __future__ import annotations

import pytest
from kazoo.client import KazooClient
from kazoo.security import (
    CREATOR_ALL_ACL,
    OPEN_ACL_UNSAFE,
    READ_ACL_UNSAFE,
    make_acl,
)

from zkdata import acls, paths

SECURE = [*CREATOR_ALL_ACL, *READ_ACL_UNSAFE]


@pytest.mark.parametrize(
    "path",
    [
        paths.ROOT,
        paths.BROKER_IDS,
        paths.broker_id(1),
        paths.CONTROLLER,
        paths.CONTROLLER_EPOCH,
        paths.partition_state("t", 0),
        paths.REASSIGN_PARTITIONS,
        paths.CONFIG_TOPICS,
        paths.topic_config("t"),
        paths.CONFIG_CHANGES,
        paths.ISR_CHANGE_NOTIFICATION,
        paths.CONSUMERS + "/group",  # only /consumers itself stays open, as in Kafka
    ],
)
def test_secure_paths_get_creator_all_and_world_read(path: str) -> None:
    """Kafka's secure ACL for every path that is neither sensitive nor `/consumers`."""
    assert acls.kafka_acls(path, secure=True) == SECURE


@pytest.mark.parametrize(
    "path",
    [
        paths.CONFIG_BROKERS,
        paths.CONFIG_BROKERS + "/1",
        paths.CONFIG_USERS,
        "/delegation_token/tokens",
    ],
)
def test_sensitive_paths_are_readable_by_their_creator_only(path: str) -> None:
    """`ZkData.SensitiveRootPaths` and everything under them: creator-all, no world read."""
    assert acls.sensitive(path)
    assert acls.kafka_acls(path, secure=True) == list(CREATOR_ALL_ACL)


def test_the_old_consumers_path_stays_open() -> None:
    """`/consumers` is open to everyone even in secure mode."""
    assert acls.kafka_acls(paths.CONSUMERS, secure=True) == list(OPEN_ACL_UNSAFE)


@pytest.mark.parametrize("path", [paths.CONTROLLER, paths.CONFIG_BROKERS, paths.CONSUMERS])
def test_without_secure_mode_everything_is_open(path: str) -> None:
    """Kafka's `zookeeper.set.acl=false`."""
    assert acls.kafka_acls(path, secure=False) == list(OPEN_ACL_UNSAFE)


def test_world_writable_means_world_may_do_more_than_read() -> None:
    """Open and world-write ACLs are writable by anyone; secure and creator-only are not."""
    assert acls.writable_by_anyone(list(OPEN_ACL_UNSAFE))
    assert acls.writable_by_anyone([make_acl("world", "anyone", write=True)])
    assert not acls.writable_by_anyone(SECURE)
    assert not acls.writable_by_anyone(list(CREATOR_ALL_ACL))


def test_a_session_is_secure_when_its_default_acl_is_not_open() -> None:
    """No default ACL, or the open one: not secure; Kafka's secure ACL: secure."""
    assert not acls.secure_session(KazooClient())
    assert not acls.secure_session(KazooClient(default_acl=list(OPEN_ACL_UNSAFE)))
    assert acls.secure_session(KazooClient(default_acl=SECURE))
