"""The synthetic cluster a benchmark loads into ZooKeeper, as Kafka 2.x stores it.

`ClusterLayout` spreads partitions evenly over topics, assigns replicas round-robin over
broker ids 1..brokers (replication factor min(3, brokers)), and starts every partition
with its first replica as leader and all replicas in sync, at leader epoch 0 and
controller epoch 0. `znodes` lists every znode to create, parents first, encoded with the
project's codecs. Pure values and functions, no I/O; any thread.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch
from zkdata import paths
from zkdata.model import ReplicaAssignment, TopicAssignment
from zkdata.znodes import ControllerEpochZNode, TopicPartitionStateZNode, TopicZNode

#: The epoch every partition state and `/controller_epoch` start with (no controller yet).
INITIAL_CONTROLLER_EPOCH = 0
#: Kafka's usual replication factor; smaller clusters use every broker.
MAX_REPLICATION_FACTOR = 3
TOPIC_PREFIX = "bench-"


@dataclass(frozen=True, slots=True)
class ClusterLayout:
    """`partitions` partitions in `topics` topics over brokers 1..`brokers`."""

    partitions: int
    topics: int
    brokers: int

    def __post_init__(self) -> None:
        if self.topics < 1:
            raise ValueError(f"need at least one topic, got {self.topics}")
        if self.partitions < self.topics:
            raise ValueError(
                f"every topic needs a partition: {self.partitions} partitions "
                f"for {self.topics} topics"
            )
        if self.brokers < 1:
            raise ValueError(f"need at least one broker, got {self.brokers}")

    @property
    def replication_factor(self) -> int:
        """Replicas per partition: min(3, brokers)."""
        return min(MAX_REPLICATION_FACTOR, self.brokers)

    @property
    def broker_ids(self) -> list[int]:
        """1..brokers."""
        return list(range(1, self.brokers + 1))

    def topic_names(self) -> list[str]:
        """`bench-000`, `bench-001`, ... (zero-padded so that they sort by number)."""
        width = len(str(self.topics - 1))
        return [f"{TOPIC_PREFIX}{i:0{width}d}" for i in range(self.topics)]

    def partition_counts(self) -> list[int]:
        """Partitions per topic, in topic order; they differ by at most one."""
        base, extra = divmod(self.partitions, self.topics)
        return [base + (1 if i < extra else 0) for i in range(self.topics)]

    def assignments(self) -> dict[str, TopicAssignment]:
        """Every topic's replica assignment; replicas rotate over the brokers with a
        running partition counter, so leaders are spread evenly."""
        rf = self.replication_factor
        out: dict[str, TopicAssignment] = {}
        counter = 0
        for topic, count in zip(self.topic_names(), self.partition_counts(), strict=True):
            partitions: dict[int, ReplicaAssignment] = {}
            for partition in range(count):
                replicas = tuple((counter + k) % self.brokers + 1 for k in range(rf))
                partitions[partition] = ReplicaAssignment(replicas)
                counter += 1
            out[topic] = TopicAssignment(partitions)
        return out

    def znode_count(self) -> int:
        """How many znodes `znodes` yields."""
        return len(_ROOT_PATHS) + 1 + 2 * self.topics + 2 * self.partitions


#: Parents created before any topic (brokers also create them, idempotently, at start).
_ROOT_PATHS = (paths.BROKERS, paths.BROKER_TOPICS)


def initial_state(assignment: ReplicaAssignment) -> LeaderIsrAndControllerEpoch:
    """A partition's first state: the first replica leads, every replica is in sync."""
    replicas = assignment.replicas
    return LeaderIsrAndControllerEpoch(
        LeaderAndIsr(leader=replicas[0], leader_epoch=0, isr=replicas),
        INITIAL_CONTROLLER_EPOCH,
    )


def znodes(layout: ClusterLayout) -> Iterator[tuple[str, bytes]]:
    """Every (path, data) to create for `layout`, each parent before its children:
    `/brokers`, `/brokers/topics`, `/controller_epoch`, then per topic its assignment
    znode, `partitions`, and per partition `P` and `P/state`."""
    for path in _ROOT_PATHS:
        yield path, b""
    yield paths.CONTROLLER_EPOCH, ControllerEpochZNode.encode(INITIAL_CONTROLLER_EPOCH)
    for topic, assignment in layout.assignments().items():
        yield paths.topic(topic), TopicZNode.encode(assignment)
        yield paths.topic_partitions(topic), b""
        for partition, replicas in assignment.partitions.items():
            yield paths.topic_partition(topic, partition), b""
            yield (
                paths.partition_state(topic, partition),
                TopicPartitionStateZNode.encode(initial_state(replicas)),
            )
