"""A replica stopped without delete keeps its leader epoch (Kafka 2.8's
`ReplicaManager.stopPartitions` leaves it in `allPartitions`): a later LeaderAndIsr at an
older leader epoch is still fenced. StopReplica's own leader epoch is not remembered, and
StopReplica with delete forgets the partition."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from broker_node.control_requests import ControlRequestHandler, HostedPartition
from domain import EPOCH_DURING_DELETE, TopicPartition
from eventlog import ReplicasDeleted
from eventlog.testing import RecordingEventLog
from rpc import messages as m
from rpc.errors import Errors

BROKER = 1
BROKER_EPOCH = 100
HEADER = m.ControlHeader(2, 5, BROKER_EPOCH)
TP = TopicPartition("orders", 0)


def _no_shutdown(_: m.ControlledShutdownRequest) -> m.ControlledShutdownResponse:
    return m.ControlledShutdownResponse(Errors.NOT_CONTROLLER)


def handler() -> ControlRequestHandler:
    """Broker 1, registered, without a replica manager."""
    control = ControlRequestHandler(
        BROKER, lambda: BROKER_EPOCH, RecordingEventLog("b1"), _no_shutdown
    )
    control.on_registered()
    return control


def leader_and_isr(control: ControlRequestHandler, leader_epoch: int) -> Errors:
    """`TP`'s answer to a LeaderAndIsr making broker 1 its leader at `leader_epoch`."""
    state = m.LeaderAndIsrPartitionState(
        TP.topic, TP.partition, 5, 1, leader_epoch, (1, 2), 0, (1, 2)
    )
    (answer,) = control.leader_and_isr(m.LeaderAndIsrRequest(HEADER, (state,))).partition_errors
    return answer.error


def stop(control: ControlRequestHandler, leader_epoch: int, delete: bool) -> Errors:
    """`TP`'s answer to a StopReplica at `leader_epoch`."""
    state = m.StopReplicaPartitionState(TP.topic, TP.partition, leader_epoch, delete)
    (answer,) = control.stop_replica(m.StopReplicaRequest(HEADER, (state,))).partition_errors
    return answer.error


def test_an_older_leader_epoch_is_fenced_after_a_stop_without_delete() -> None:
    control = handler()
    assert leader_and_isr(control, 5) is Errors.NONE
    assert leader_and_isr(control, 5) is Errors.STALE_CONTROLLER_EPOCH
    assert stop(control, 6, delete=False) is Errors.NONE
    assert leader_and_isr(control, 3) is Errors.STALE_CONTROLLER_EPOCH


def test_a_stopped_replica_keeps_its_own_epoch_not_the_stop_replicas() -> None:
    """The partition stays at epoch 5, not leading: epoch 6 (the StopReplica's) is newer
    and accepted, epoch 5 is not."""
    control = handler()
    leader_and_isr(control, 5)
    stop(control, 6, delete=False)
    hosted = control.hosted_partitions()[TP]
    assert hosted.state.leader_epoch == 5
    assert hosted == HostedPartition(hosted.state, is_leader=False)
    assert leader_and_isr(control, 5) is Errors.STALE_CONTROLLER_EPOCH
    assert leader_and_isr(control, 6) is Errors.NONE


def test_a_second_stop_at_the_kept_epoch_is_fenced_and_a_newer_one_passes() -> None:
    control = handler()
    leader_and_isr(control, 5)
    assert stop(control, 6, delete=False) is Errors.NONE
    assert stop(control, 5, delete=False) is Errors.FENCED_LEADER_EPOCH
    assert stop(control, 6, delete=False) is Errors.NONE


def test_a_deleted_replica_is_forgotten_and_any_epoch_is_accepted_again() -> None:
    """A deleted topic may be created again from leader epoch 0."""
    control = handler()
    leader_and_isr(control, 5)
    assert stop(control, EPOCH_DURING_DELETE, delete=True) is Errors.NONE
    assert TP not in control.hosted_partitions()
    assert leader_and_isr(control, 0) is Errors.NONE


@given(
    accepted=st.integers(0, 50),
    stopped_above=st.integers(1, 5),
    older=st.integers(0, 50),
)
def test_no_leader_epoch_up_to_the_accepted_one_is_obeyed_after_a_stop(
    accepted: int, stopped_above: int, older: int
) -> None:
    control = handler()
    assert leader_and_isr(control, accepted) is Errors.NONE
    assert stop(control, accepted + stopped_above, delete=False) is Errors.NONE
    expected = Errors.NONE if older > accepted else Errors.STALE_CONTROLLER_EPOCH
    assert leader_and_isr(control, older) is expected


def test_a_deletion_is_written_and_a_stop_or_a_fenced_one_is_not() -> None:
    """`replicas_deleted` marks where a replica's history ends: the LeaderAndIsr that
    comes after creates it again, empty, even at the epoch it had."""
    events = RecordingEventLog("b1")
    control = ControlRequestHandler(BROKER, lambda: BROKER_EPOCH, events, _no_shutdown)
    control.on_registered()
    assert leader_and_isr(control, 5) is Errors.NONE
    assert stop(control, 4, delete=True) is Errors.FENCED_LEADER_EPOCH
    assert stop(control, 6, delete=False) is Errors.NONE
    assert events.of_type(ReplicasDeleted) == []
    assert stop(control, 7, delete=True) is Errors.NONE
    (deleted,) = events.of_type(ReplicasDeleted)
    assert (deleted.topics, deleted.partitions) == ([TP.topic], [TP.partition])
    assert leader_and_isr(control, 5) is Errors.NONE
