"""Taking a `rundir.invariants.ClusterSnapshot` of a running cluster: the controller and its
epoch, the registered brokers and every partition of the watched topics from ZooKeeper
(through `zkdata`), each live broker's metadata view (through `client`), and which brokers
report an active controller (their Prometheus `ActiveControllerCount`).

`take_snapshot` runs on the caller's thread; every read has a deadline, and a broker that
does not answer is recorded as such (its view None) rather than failing the snapshot.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from client import ApiLike, ClientError
from domain import TopicPartition
from rpc import messages as m
from rpc.errors import Errors
from rundir.invariants import BrokerView, ClusterSnapshot, PartitionState, ViewedPartition
from zkdata.client import KafkaZkClient

#: The Prometheus gauge that is 1 on the active controller.
ACTIVE_CONTROLLER = "kafka_controller_KafkaController_ActiveControllerCount"


def zookeeper_partitions(
    zk: KafkaZkClient, topics: Iterable[str]
) -> dict[TopicPartition, PartitionState]:
    """Leader, leader epoch and ISR (state znodes) and replicas (topic znodes) of every
    partition of `topics`, read pipelined; a partition without a state znode has leader
    -1 and no leader epoch."""
    assignments = zk.get_topic_assignments(list(topics)).found
    tps = {
        TopicPartition(topic, p): a.replicas
        for topic, assignment in assignments.items()
        for p, a in assignment.partitions.items()
    }
    states = zk.get_partition_states(list(tps)).found
    out = {}
    for tp, replicas in tps.items():
        state = states.get(tp)
        if state is None:
            out[tp] = PartitionState(-1, (), tuple(replicas))
            continue
        lai = state.leader_and_isr
        out[tp] = PartitionState(lai.leader, tuple(lai.isr), tuple(replicas), lai.leader_epoch)
    return out


def broker_view(response: m.MetadataResponse) -> BrokerView:
    """What one broker's Metadata answer says about the controller and the partitions."""
    partitions = {
        TopicPartition(t.name, p.partition): ViewedPartition(p.leader, tuple(p.isr), p.leader_epoch)
        for t in response.topics
        if t.error is Errors.NONE
        for p in t.partitions
    }
    return BrokerView(response.controller_id, partitions)


def take_snapshot(
    zk: KafkaZkClient,
    topics: tuple[str, ...],
    apis: Mapping[int, ApiLike],
    after_heal_ms: int,
    active_controller_count: Callable[[int], float | None] | None = None,
) -> ClusterSnapshot:
    """The cluster now. `apis` maps each broker id to its connection; the metadata of the
    live ones is asked for `topics`. `active_controller_count(broker)` reads a broker's
    gauge (None when unreadable; then active controllers are not measured)."""
    controller = zk.get_controller_id()
    epoch = zk.get_controller_epoch()
    live = frozenset(zk.get_all_brokers().brokers)
    partitions = zookeeper_partitions(zk, topics)
    metadata: dict[int, BrokerView | None] = {}
    for broker in sorted(live):
        api = apis.get(broker)
        try:
            metadata[broker] = broker_view(api.metadata(topics)) if api is not None else None
        except ClientError:
            metadata[broker] = None
    active: frozenset[int] | None = None
    if active_controller_count is not None:
        counts = {b: active_controller_count(b) for b in sorted(live)}
        if all(c is not None for c in counts.values()):
            active = frozenset(b for b, c in counts.items() if c)
    return ClusterSnapshot(
        after_heal_ms=after_heal_ms,
        controller_id=controller,
        controller_epoch=epoch.epoch if epoch is not None else 0,
        live_brokers=live,
        partitions=partitions,
        metadata=metadata,
        active_controllers=active,
    )
