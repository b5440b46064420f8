"""Dynamic topic configs through `/config/changes` on the real ensemble: the listener's
bookkeeping (`ConfigChangeListener.process` called directly, then its thread), and the
effects on brokers: `min.insync.replicas` applies to a hosted partition at once, and
enabling unclean leader election makes the controller elect a leader for an offline
partition (Kafka's TopicUncleanLeaderElectionEnable).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from broker_node.config_changes import ConfigChangeListener
from domain import TopicPartition
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from harness.brokers import BrokerProcess
from harness.waiting import wait_until
from rpc import messages as m
from rpc.errors import Errors
from rpc.wire import ClientApiClient
from zkdata import paths
from zkdata.client import KafkaZkClient
from zkdata.config_changes import CHANGE_EXPIRATION_MS, ConfigChangesZk
from zkdata.model import ReplicaAssignment, TopicAssignment, TopicConfig

pytestmark = pytest.mark.integration

Start = Callable[..., BrokerProcess]
SESSION_MS = 3000


class Recorder:
    """The listener's collaborators: topic configs read from ZooKeeper, changes recorded."""

    def __init__(self, zk: KafkaZkClient) -> None:
        self.zk = zk
        self.seen: list[tuple[str, dict[str, str]]] = []
        self.events = RecordingEventLog("broker1")

    def read(self, topic: str) -> dict[str, str]:
        found = self.zk.get_topic_configs([topic]).found.get(topic)
        return dict(found.config) if found else {}

    def on_change(self, topic: str, overrides: dict[str, str]) -> None:
        self.seen.append((topic, overrides))

    def listener(
        self, changes: ConfigChangesZk, expiration_ms: int = CHANGE_EXPIRATION_MS
    ) -> ConfigChangeListener:
        return ConfigChangeListener(
            changes, self.read, self.on_change, self.events, expiration_ms=expiration_ms
        )


def test_notifications_are_handled_once_in_order_and_old_ones_purged(
    zk_client: KazooClient,
) -> None:
    zk = KafkaZkClient(zk_client)
    changes = ConfigChangesZk(zk)
    recorder = Recorder(zk)
    changes.change_topic_config("a", TopicConfig({"min.insync.replicas": "2"}))
    changes.change_topic_config("b", TopicConfig({"retention.ms": "1000"}))
    zk_client.create(paths.config_change_prefix(), b"{oops", sequence=True)
    zk_client.create(
        paths.config_change_prefix(),
        b'{"version":2,"entity_path":"brokers/1"}',
        sequence=True,
    )
    listener = recorder.listener(changes, expiration_ms=3_600_000)
    listener.process()
    assert recorder.seen == [("a", {"min.insync.replicas": "2"}), ("b", {"retention.ms": "1000"})]
    [malformed] = recorder.events.of_kind(EventKind.MALFORMED_ZNODE)
    assert malformed["path"].startswith(paths.config_change_prefix())
    assert len(recorder.events.of_kind(EventKind.TOPIC_CONFIG_CHANGED)) == 2

    listener.process()  # nothing new: nothing handled again
    assert len(recorder.seen) == 2
    changes.change_topic_config("a", TopicConfig({}))
    listener.process()
    assert recorder.seen[-1] == ("a", {})
    assert len(changes.list_changes()) == 5  # none is old enough to purge

    purging = recorder.listener(changes, expiration_ms=0)
    purging.last_handled = listener.last_handled
    purging.process()
    assert changes.list_changes() == []


def test_the_listener_thread_follows_new_notifications(zk_client: KazooClient) -> None:
    zk = KafkaZkClient(zk_client)
    changes = ConfigChangesZk(zk)
    recorder = Recorder(zk)
    changes.change_topic_config("early", TopicConfig({"retention.ms": "1"}))
    listener = recorder.listener(changes)
    listener.start()
    try:
        wait_until(lambda: [t for t, _ in recorder.seen] == ["early"], 10, "start-up pass")
        changes.change_topic_config("late", TopicConfig({"retention.ms": "2"}))
        wait_until(
            lambda: [t for t, _ in recorder.seen] == ["early", "late"],
            10,
            lambda: f"the watch did not fire: {recorder.seen}",
        )
    finally:
        listener.stop()


def _leader(zk: KafkaZkClient, tp: TopicPartition) -> int:
    state = zk.get_partition_states([tp]).found.get(tp)
    return state.leader_and_isr.leader if state else -1


def create_t0_on_1_and_2(zk: KafkaZkClient) -> TopicPartition:
    """Create topic t with partition 0 on brokers [1,2]; wait for its full ISR."""
    tp = TopicPartition("t", 0)
    zk.create_topic("t", TopicAssignment({0: ReplicaAssignment((1, 2))}))
    wait_until(
        lambda: (
            (s := zk.get_partition_states([tp]).found.get(tp)) is not None
            and sorted(s.leader_and_isr.isr) == [1, 2]
        ),
        20,
        "t-0 did not come online",
    )
    return tp


def test_min_insync_replicas_applies_to_a_hosted_partition_at_once(
    brokers: Start, zk_client: KazooClient
) -> None:
    """Raise `min.insync.replicas` above the ISR: acks=all is refused; lower it back: it
    is accepted again. No broker restarts."""
    zk = KafkaZkClient(zk_client)
    procs = {b: brokers(b, SESSION_MS) for b in (1, 2)}
    wait_until(lambda: set(zk.get_all_brokers().brokers) == {1, 2}, 30, "brokers missing")
    tp = create_t0_on_1_and_2(zk)
    changes = ConfigChangesZk(zk)

    def produce() -> Errors:
        leader = procs[_leader(zk, tp)]
        with ClientApiClient(f"127.0.0.1:{leader.port()}", timeout_s=10) as client:
            record = m.ProducedRecord(None, b"v")
            return client.produce(m.ProduceRequest.single("t", 0, (record,), -1, 5000)).only.error

    wait_until(lambda: produce() is Errors.NONE, 20, "acks=all never succeeded")
    changes.change_topic_config("t", TopicConfig({"min.insync.replicas": "3"}))
    wait_until(
        lambda: produce() is Errors.NOT_ENOUGH_REPLICAS,
        20,
        "min.insync.replicas=3 was not applied",
    )
    changes.change_topic_config("t", TopicConfig({"min.insync.replicas": "2"}))
    wait_until(lambda: produce() is Errors.NONE, 20, "min.insync.replicas=2 was not applied")


def test_enabling_unclean_election_elects_a_leader_for_an_offline_partition(
    brokers: Start, zk_client: KazooClient, run_dir: Path
) -> None:
    """Setup: broker 3 is the controller; t-0 lives on [1,2]. Broker 2 is killed (the ISR
    shrinks to [1]), then broker 1 (t-0 goes offline with ISR [1]); broker 2 comes back,
    out of sync, and clean election leaves t-0 offline.
    Steps: set `unclean.leader.election.enable=true` on t.
    Validate: the controller elects broker 2, uncleanly."""
    zk = KafkaZkClient(zk_client)
    procs = {3: brokers(3, SESSION_MS)}
    wait_until(lambda: zk.get_controller_id() == 3, 30, lambda: procs[3].log_tail())
    procs.update({b: brokers(b, SESSION_MS) for b in (1, 2)})
    wait_until(lambda: set(zk.get_all_brokers().brokers) == {1, 2, 3}, 30, "brokers missing")
    tp = create_t0_on_1_and_2(zk)
    procs[2].kill()
    wait_until(
        lambda: (
            (s := zk.get_partition_states([tp]).found.get(tp)) is not None
            and s.leader_and_isr.isr == (1,)
        ),
        20,
        "the ISR did not shrink to [1]",
    )
    procs[1].kill()
    wait_until(lambda: _leader(zk, tp) == -1, 20, "t-0 did not go offline")

    def broker_2_starts() -> int:
        return sum(1 for e in procs[3].events() if e["kind"] == "broker_change" and 2 in e["new"])

    seen = broker_2_starts()
    procs[2].start()
    wait_until(lambda: broker_2_starts() > seen, 30, "the controller did not see broker 2 return")
    assert _leader(zk, tp) == -1  # clean election cannot use broker 2

    ConfigChangesZk(zk).change_topic_config(
        "t", TopicConfig({"unclean.leader.election.enable": "true"})
    )
    wait_until(lambda: _leader(zk, tp) == 2, 20, lambda: procs[3].log_tail())
    elected = [
        e
        for e in procs[3].events()
        if e["kind"] == "leader_elected" and e["topic"] == "t" and e["leader"] == 2
    ]
    assert elected[-1]["unclean"] is True
