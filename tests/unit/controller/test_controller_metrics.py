"""The controller's metrics as Kafka 2.8 computes them: LeaderElectionRateAndTimeMs is the
timer of the BrokerChange controller state (every BrokerChange event, active or not;
nothing else), and the deletion gauges of KIP-503 count the queued topics, their replicas
not yet deleted, the halted topics and their ReplicaDeletionIneligible replicas, all zero
while inactive."""

from __future__ import annotations

from typing import cast

from controller import KafkaController
from controller import events as ev
from controller.context import ControllerContext, PartitionReplica
from controller.metrics import ControllerMetrics, DeletionFigures, deletion_figures
from controller.states import ControllerState, ReplicaState
from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog.testing import RecordingEventLog
from zkdata.client import KafkaZkClient
from zkdata.model import ReplicaAssignment


def test_only_broker_change_events_are_timed_as_leader_elections() -> None:
    metrics = ControllerMetrics()
    metrics.record_event(ControllerState.BROKER_CHANGE, 0.25)
    metrics.record_event(ControllerState.TOPIC_CHANGE, 9.0)
    metrics.record_event(ControllerState.AUTO_LEADER_BALANCE, 9.0)
    election = metrics.snapshot().leader_election
    assert (election.count, election.total_ms) == (1, 250.0)


def test_the_event_thread_times_a_broker_change_even_when_not_active() -> None:
    """Kafka times the event whatever the handler does (an inactive one returns at once)."""
    controller = KafkaController(1, cast(KafkaZkClient, None), RecordingEventLog(), lambda: 7)
    controller.process(ev.BrokerChange())
    controller.process(ev.TopicChange())
    controller.process(ev.BrokerChange())
    assert controller.metrics.snapshot().leader_election.count == 2


def deleting_context() -> ControllerContext:
    """Topic `gone` (2 partitions on brokers 1, 2) queued for deletion: one replica
    deleted, one ineligible, two started; topic `kept` not queued."""
    ctx = ControllerContext()
    ctx.add_topic("gone", {0: ReplicaAssignment((1, 2)), 1: ReplicaAssignment((2, 1))})
    ctx.add_topic("kept", {0: ReplicaAssignment((1, 2))})
    ctx.queue_topic_deletion(["gone"])
    states = {
        PartitionReplica(TopicPartition("gone", 0), 1): ReplicaState.DELETION_SUCCESSFUL,
        PartitionReplica(TopicPartition("gone", 0), 2): ReplicaState.DELETION_INELIGIBLE,
        PartitionReplica(TopicPartition("gone", 1), 2): ReplicaState.DELETION_STARTED,
        PartitionReplica(TopicPartition("gone", 1), 1): ReplicaState.DELETION_STARTED,
        PartitionReplica(TopicPartition("kept", 0), 1): ReplicaState.DELETION_INELIGIBLE,
    }
    for replica, state in states.items():
        ctx.set_replica_state(replica, state)
    return ctx


def test_deletion_figures_count_as_kafkas_update_metrics() -> None:
    assert deletion_figures(deleting_context(), ["gone"]) == DeletionFigures(
        topics=1, replicas=3, ineligible_topics=1, ineligible_replicas=1
    )


def test_an_empty_deletion_queue_counts_nothing() -> None:
    assert deletion_figures(ControllerContext(), []) == DeletionFigures()


def test_deletion_gauges_are_published_while_active_and_zero_otherwise() -> None:
    metrics = ControllerMetrics()
    ctx = deleting_context()
    metrics.publish(True, ctx, ["gone"])
    snap = metrics.snapshot()
    assert (
        snap.topics_to_delete_count,
        snap.replicas_to_delete_count,
        snap.topics_ineligible_to_delete_count,
        snap.replicas_ineligible_to_delete_count,
    ) == (1, 3, 1, 1)
    metrics.publish(False, ctx, ["gone"])
    snap = metrics.snapshot()
    assert snap.topics_to_delete_count == snap.replicas_to_delete_count == 0
    assert snap.topics_ineligible_to_delete_count == 0


def test_global_partition_count_counts_the_partitions_with_a_leadership() -> None:
    """As Kafka's `partitionWithLeadersCount`: a partition whose state znode was never
    written (no replica was live when its topic was created) is not counted."""
    ctx = ControllerContext()
    ctx.add_topic("t", {0: ReplicaAssignment((1, 2)), 1: ReplicaAssignment((2, 1))})
    ctx.set_leadership(
        TopicPartition("t", 0), LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1, 2)), 1)
    )
    metrics = ControllerMetrics()
    metrics.publish(True, ctx)
    assert metrics.snapshot().global_partition_count == 1
    metrics.publish(False, ctx)
    assert metrics.snapshot().global_partition_count == 0
