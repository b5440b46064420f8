"""What a broker's answer to a control request means, as typed results.

One function per API turns the request sent and the response received into a frozen
result whose per-partition errors are `rpc.errors.Errors`:

- `LeaderAndIsrResult`: the request-level error and every partition the broker answered
  with an error other than NONE (the only ones the controller acts on; the NONE entries
  of an answer naming 100,000 partitions are never built). A partition the request did
  not name still counts, as in Kafka, since a broker reports the storage errors of the
  logs it hosts.
- `StopReplicaResult`: exactly the partitions the request deleted, in order. Each gets
  the request-level error when there is one, else its own error; a deleted partition the
  broker did not answer for counts as UNKNOWN_SERVER_ERROR (so that it is retried rather
  than waited for). Partitions only stopped, and partitions not requested, are left out.
  It keeps the broker epoch the request was addressed to, so that topic deletion can
  tell an answer meant for a broker's previous life.
- `UpdateMetadataResult`: the request-level error (UpdateMetadata has no per-partition
  errors).

Pure values and functions; any thread (a sender thread maps each answer when it arrives,
and `controller.request_batch` turns the result into the event the controller acts on).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from controller.channel_manager import ControlRequest, ControlResponse
from domain import NO_EPOCH, TopicPartition
from rpc import messages as m
from rpc.errors import Errors


def _frozen(errors: Mapping[TopicPartition, Errors]) -> Mapping[TopicPartition, Errors]:
    return MappingProxyType(dict(errors))


@dataclass(frozen=True, slots=True)
class LeaderAndIsrResult:
    """A broker's answer to LeaderAndIsr: the request-level error and the error of each
    partition answered with one other than NONE."""

    error: Errors
    partition_errors: Mapping[TopicPartition, Errors] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "partition_errors", _frozen(self.partition_errors))

    def partitions_with(self, error: Errors) -> frozenset[TopicPartition]:
        """The partitions answered with `error`."""
        return frozenset(tp for tp, e in self.partition_errors.items() if e is error)

    @property
    def storage_errors(self) -> frozenset[TopicPartition]:
        """The partitions whose logs the broker could not open (KAFKA_STORAGE_ERROR)."""
        return self.partitions_with(Errors.KAFKA_STORAGE_ERROR)


@dataclass(frozen=True, slots=True)
class StopReplicaResult:
    """A broker's answer to StopReplica for the partitions the request deleted: one error
    per deleted partition, in the request's sorted order, and the broker epoch the request
    was addressed to (`NO_EPOCH` when not known)."""

    error: Errors
    partition_errors: Mapping[TopicPartition, Errors] = field(default_factory=dict, hash=False)
    broker_epoch: int = NO_EPOCH

    def __post_init__(self) -> None:
        object.__setattr__(self, "partition_errors", _frozen(self.partition_errors))

    def restricted_to(self, partitions: frozenset[TopicPartition]) -> StopReplicaResult:
        """The same answer for `partitions` only (the others are dropped)."""
        return StopReplicaResult(
            self.error,
            {tp: e for tp, e in self.partition_errors.items() if tp in partitions},
            self.broker_epoch,
        )


@dataclass(frozen=True, slots=True)
class UpdateMetadataResult:
    """A broker's answer to UpdateMetadata."""

    error: Errors


ControlResult = LeaderAndIsrResult | StopReplicaResult | UpdateMetadataResult


def _answered(response: ControlResponse) -> Sequence[m.PartitionError]:
    errors: Sequence[m.PartitionError] = getattr(response, "partition_errors", ())
    return errors


def deleted_partitions(request: m.StopReplicaRequest) -> tuple[TopicPartition, ...]:
    """The partitions a StopReplica deletes, sorted (empty when it only stops replicas)."""
    return tuple(sorted(s.topic_partition for s in request.partition_states if s.delete_partition))


def leader_and_isr_result(response: ControlResponse) -> LeaderAndIsrResult:
    """The result of a LeaderAndIsr answer: every partition the broker answered with an
    error."""
    return LeaderAndIsrResult(response.error, dict(m.failed_entries(_answered(response))))


def stop_replica_result(
    request: m.StopReplicaRequest, response: ControlResponse
) -> StopReplicaResult:
    """The result of a StopReplica answer for the partitions `request` deleted."""
    deleted = deleted_partitions(request)
    epoch = request.header.broker_epoch
    if not deleted:  # the answer's errors are read for deleted partitions only
        return StopReplicaResult(response.error, {}, epoch)
    answered = dict(_answered(response))

    def error_of(tp: TopicPartition) -> Errors:
        if response.error is not Errors.NONE:
            return response.error
        return answered.get(tp, Errors.UNKNOWN_SERVER_ERROR)

    return StopReplicaResult(response.error, {tp: error_of(tp) for tp in deleted}, epoch)


def update_metadata_result(response: ControlResponse) -> UpdateMetadataResult:
    """The result of an UpdateMetadata answer."""
    return UpdateMetadataResult(response.error)


def control_result(request: ControlRequest, response: ControlResponse) -> ControlResult:
    """The result of the answer `response` to `request`, by the request's API."""
    match request:
        case m.LeaderAndIsrRequest():
            return leader_and_isr_result(response)
        case m.StopReplicaRequest():
            return stop_replica_result(request, response)
        case m.UpdateMetadataRequest():
            return update_metadata_result(response)
