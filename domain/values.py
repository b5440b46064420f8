"""The values every layer speaks of: a topic-partition, a broker's endpoint, a partition's
leadership (leader, leader epoch, ISR) and the sentinel numbers Kafka gives them. Frozen,
hashable, free of I/O and of any other package of the project. Any thread."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

#: Leader id meaning "no leader" (Kafka's `LeaderAndIsr.NoLeader`).
NO_LEADER = -1
#: Leader epoch used in StopReplica while a topic is deleted (`LeaderAndIsr.EpochDuringDelete`).
EPOCH_DURING_DELETE = -2
#: Leader epoch meaning "not given" (`LeaderAndIsr.NoEpoch`).
NO_EPOCH = -1
#: Broker epoch meaning "unknown" (`AbstractControlRequest.UNKNOWN_BROKER_EPOCH`).
UNKNOWN_BROKER_EPOCH = -1


class TopicPartition(NamedTuple):
    """A topic name and a partition number, ordered by topic, then partition.

    A named tuple rather than a dataclass: hashing, comparing and sorting run as C tuple
    operations, and the controller and the checker hash hundreds of thousands of them per
    failover or run. It also equals the plain `(topic, partition)` tuple."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True, slots=True)
class EndPoint:
    """One listener of a broker: `PLAINTEXT://host:port`."""

    host: str
    port: int
    listener: str = "PLAINTEXT"
    security_protocol: str = "PLAINTEXT"

    def connection_string(self) -> str:
        """Kafka's endpoint string, e.g. `PLAINTEXT://broker1:9092`."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.listener}://{host}:{self.port}"


@dataclass(frozen=True, slots=True)
class LeaderAndIsr:
    """Leader, leader epoch and ISR of one partition, plus the state znode's zkVersion."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int = 0

    def new_leader_and_isr(self, leader: int, isr: tuple[int, ...]) -> LeaderAndIsr:
        """The next leadership: a new leader and ISR always bump the leader epoch."""
        return LeaderAndIsr(leader, self.leader_epoch + 1, isr, self.zk_version)


@dataclass(frozen=True, slots=True)
class LeaderIsrAndControllerEpoch:
    """The content of a partition's state znode: leadership and the epoch of the controller
    that decided it."""

    leader_and_isr: LeaderAndIsr
    controller_epoch: int
