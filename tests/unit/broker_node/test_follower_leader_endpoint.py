"""Where a follower learns its leader's address. Kafka 2.8's `makeFollowers` looks the
leader up among the brokers its metadata cache holds as alive; one it does not find is
logged and that partition is left as it was (its log created, no new leader or epoch, no
fetcher). The testbed takes the address from the request's live leaders, and without one
records the new leadership all the same, with no fetcher (kafka-differences.md, Leader
address for followers).

Setup: broker 1 follows orders-0, led by broker 2 at leader epoch 1; the request names
no live leader, and the broker's metadata cache is not consulted.
"""

from __future__ import annotations

from pathlib import Path

from broker_node.replica_manager import ReplicaManager
from broker_node.replication_config import ReplicationConfig
from broker_node.testing import FakeIsrStore
from domain import TopicPartition
from eventlog.testing import RecordingEventLog
from rpc import messages as m

FOLLOWED = TopicPartition("orders", 0)


def test_a_leader_not_named_live_still_becomes_the_followers_leader(tmp_path: Path) -> None:
    manager = ReplicaManager(
        1,
        ReplicationConfig(data_dir=tmp_path),
        FakeIsrStore(),
        RecordingEventLog("b1"),
        lambda _t: {},
    )
    try:
        state = m.LeaderAndIsrPartitionState("orders", 0, 1, 2, 1, (1, 2), 0, (1, 2))
        assert manager.become_leader_or_follower([state], []) == {}
        partition = manager.partition(FOLLOWED)
        assert partition is not None
        assert (partition.leader, partition.leader_epoch) == (2, 1)
        assert not partition.is_leader
    finally:
        manager.shutdown()
