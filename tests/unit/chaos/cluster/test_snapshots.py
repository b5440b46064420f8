"""Snapshots of a cluster: the metadata view of one broker, and a snapshot assembled from
ZooKeeper reads and brokers' answers (one broker not answering)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from chaos.cluster.snapshots import broker_view, take_snapshot
from client import ApiLike, TransportError
from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from rpc import messages as m
from rpc.errors import Errors, RpcUnavailable
from rundir.invariants import PartitionState, ViewedPartition, problems
from zkdata.client import KafkaZkClient
from zkdata.model import ReplicaAssignment, TopicAssignment

T0 = TopicPartition("t", 0)


def metadata(controller: int, leader: int, isr: tuple[int, ...]) -> m.MetadataResponse:
    part = m.PartitionMetadata(0, Errors.NONE, leader, 3, (1, 2, 3), isr)
    return m.MetadataResponse(controller, 4, (), (m.TopicMetadata("t", Errors.NONE, (part,)),))


def test_a_broker_view_holds_its_controller_and_partitions() -> None:
    view = broker_view(metadata(2, 1, (1, 2, 3)))
    assert view.controller_id == 2
    assert view.partitions == {T0: ViewedPartition(1, (1, 2, 3), leader_epoch=3)}


@dataclass
class _Reads:
    found: dict[Any, Any]


class _Zk:
    def get_controller_id(self) -> int:
        return 2

    def get_controller_epoch(self) -> Any:
        return type("E", (), {"epoch": 4})()

    def get_all_brokers(self) -> Any:
        return type("B", (), {"brokers": {1: None, 2: None, 3: None}})()

    def get_topic_assignments(self, topics: list[str]) -> _Reads:
        return _Reads({"t": TopicAssignment({0: ReplicaAssignment((1, 2, 3))})})

    def get_partition_states(self, tps: list[TopicPartition]) -> _Reads:
        return _Reads({T0: LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 3, (1, 2, 3)), 4)})


class _Api:
    def __init__(self, answer: m.MetadataResponse | None) -> None:
        self.answer = answer

    def metadata(self, topics: tuple[str, ...] = ()) -> m.MetadataResponse:
        if self.answer is None:
            raise TransportError(RpcUnavailable("127.0.0.1:1", "UNAVAILABLE", "refused"))
        return self.answer


def test_a_snapshot_combines_zookeeper_and_every_broker() -> None:
    apis = {1: _Api(metadata(2, 1, (1, 2, 3))), 2: _Api(metadata(2, 1, (1, 2, 3))), 3: _Api(None)}
    snap = take_snapshot(
        cast(KafkaZkClient, _Zk()),
        ("t",),
        cast(dict[int, ApiLike], apis),
        after_heal_ms=1500,
        active_controller_count=lambda b: 1.0 if b == 2 else 0.0,
    )
    assert (snap.controller_id, snap.controller_epoch) == (2, 4)
    assert snap.live_brokers == frozenset({1, 2, 3})
    assert snap.partitions == {T0: PartitionState(1, (1, 2, 3), (1, 2, 3), leader_epoch=3)}
    assert snap.metadata[3] is None
    assert snap.active_controllers == frozenset({2})
    assert any("3" in p for p in problems(snap))  # broker 3 did not answer: not converged
