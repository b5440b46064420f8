"""`ControlRequestHandler`: the broker's LeaderAndIsr, UpdateMetadata, StopReplica and
ControlledShutdown. Checks every field first (`broker_node.request_validation`: a refused
request changes nothing, a refused entry is answered and skipped), then applies the fencing
rules of `broker_node.fencing`, records what it accepted (the highest controller epoch
obeyed, each hosted partition's leadership, the metadata cache) and writes every accepted,
rejected or invalid request to the event log (`broker_node.control_request_events`). Runs
on gRPC worker threads; one lock serializes state changes (Kafka's
`replicaStateChangeLock`).

A replica of a failed log directory is offline (Kafka's `HostedPartition.Offline`,
`take_offline`): LeaderAndIsr and StopReplica answer KAFKA_STORAGE_ERROR for it whatever
their leader epoch, and change nothing, until the broker restarts.

Bug switches (docs/bugs.md): `kafka-1188` obeys requests of an older controller epoch,
`kip-380` requests addressed to an earlier registration of this broker; `kafka-9839`
rejects requests addressed to a registration newer than the one this broker has cached;
with `kafka-4443` a follower looks its leader up among the metadata cache's live brokers,
not among the LeaderAndIsr's live leaders, and does not fetch from one the cache does not
know.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import NamedTuple

from broker_node import control_request_events as report
from broker_node import fencing
from broker_node import request_validation as validation
from broker_node.metadata_cache import MetadataCache
from broker_node.replica_manager import ReplicaManager
from broker_node.request_guard import report_invalid
from broker_node.validation_rules import Verdict
from bugs import NO_BUGS, BugSwitches
from bugs.catalog import (
    LEADER_AND_ISR_FIRST,
    NEWER_BROKER_EPOCH_REJECTED,
    NO_BROKER_EPOCH,
    STALE_CONTROLLER_EPOCH,
)
from controller import collector
from domain import UNKNOWN_BROKER_EPOCH, TopicPartition
from eventlog import EventLog
from rpc import messages as m
from rpc.errors import Errors

#: How long a control request that arrived before this process registered waits for the
#: registration before it is answered BROKER_NOT_AVAILABLE.
REGISTRATION_WAIT_S = 30.0


class HostedPartition(NamedTuple):
    """A partition replica this broker holds, as the last accepted LeaderAndIsr set it (a
    named tuple: a LeaderAndIsr of 100,000 partitions makes 100,000 of them)."""

    state: m.LeaderAndIsrPartitionState
    is_leader: bool


class ControlRequestHandler:
    """Fences and applies control requests for broker `broker_id`."""

    def __init__(
        self,
        broker_id: int,
        broker_epoch: Callable[[], int],
        event_log: EventLog,
        controlled_shutdown: Callable[[m.ControlledShutdownRequest], m.ControlledShutdownResponse],
        replicas: ReplicaManager | None = None,
        elect_leaders: Callable[[m.ElectLeadersRequest], m.ElectLeadersResponse] | None = None,
        bug_switches: BugSwitches = NO_BUGS,
    ) -> None:
        self.broker_id = broker_id
        self._broker_epoch = broker_epoch
        self._events = event_log
        self._controlled_shutdown = controlled_shutdown
        self._replicas = replicas
        self._elect_leaders = elect_leaders
        self._fence_broker_epoch = not bug_switches.on(NO_BROKER_EPOCH)
        self._fence_controller_epoch = not bug_switches.on(STALE_CONTROLLER_EPOCH)
        self._leaders_from_cache = bug_switches.on(LEADER_AND_ISR_FIRST)
        self._accept_newer_broker_epoch = not bug_switches.on(NEWER_BROKER_EPOCH_REJECTED)
        self._lock = threading.Lock()
        self._registered = threading.Event()
        self.metadata_cache = MetadataCache()
        self._controller_epoch = 0
        self._hosted: dict[TopicPartition, HostedPartition] = {}
        #: replicas of the failed log directory; never in `_hosted`
        self._offline: set[TopicPartition] = set()

    @property
    def controller_epoch(self) -> int:
        """The highest controller epoch this broker has obeyed."""
        with self._lock:
            return self._controller_epoch

    def hosted_partitions(self) -> dict[TopicPartition, HostedPartition]:
        """A copy of the hosted partitions."""
        with self._lock:
            return dict(self._hosted)

    def offline_partitions(self) -> frozenset[TopicPartition]:
        """The replicas taken offline with the failed log directory."""
        with self._lock:
            return frozenset(self._offline)

    def take_offline(self, partitions: Iterable[TopicPartition]) -> None:
        """The log directory holding `partitions` failed (`log-dir-failure-handler`):
        they keep no leader epoch and answer KAFKA_STORAGE_ERROR from now on (Kafka's
        `HostedPartition.Offline`)."""
        with self._lock:
            for tp in partitions:
                self._hosted.pop(tp, None)
                self._offline.add(tp)

    def on_registered(self) -> None:
        """The broker has registered (it has a broker epoch): requests stop waiting."""
        self._registered.set()

    def _check(self, api: str, header: m.ControlHeader) -> tuple[Errors, int]:
        """The request-level verdict and the broker epoch it was judged against (events
        name the one the check used). Before this process has registered, a request
        addressed to a broker epoch waits for the registration (`REGISTRATION_WAIT_S`),
        as Kafka's broker: it may be meant for this broker's previous process, which only
        the new epoch can tell (with `kip-380` on, the epoch is ignored: nothing waits)."""
        current = self._broker_epoch()
        addressed = header.broker_epoch != UNKNOWN_BROKER_EPOCH and self._fence_broker_epoch
        if current == UNKNOWN_BROKER_EPOCH and addressed:
            self._registered.wait(REGISTRATION_WAIT_S)
            current = self._broker_epoch()
            if current == UNKNOWN_BROKER_EPOCH:
                return self._reject(api, header, Errors.BROKER_NOT_AVAILABLE, current), current
        error = fencing.check_control_request(
            header.controller_epoch,
            header.broker_epoch,
            self._controller_epoch,
            current,
            self._fence_broker_epoch,
            self._fence_controller_epoch,
            self._accept_newer_broker_epoch,
        )
        if error is not Errors.NONE:
            self._reject(api, header, error, current)
        return error, current

    def _obeyed(self, header: m.ControlHeader) -> None:
        """Record the controller epoch of an obeyed request as the highest one (with
        `kafka-1188` on, an older epoch is obeyed but does not lower it)."""
        self._controller_epoch = max(self._controller_epoch, header.controller_epoch)

    def _invalid(self, api: str, header: m.ControlHeader, verdict: Verdict, entries: int) -> None:
        report_invalid(
            self._events,
            api,
            verdict,
            entries,
            controller_id=header.controller_id,
            controller_epoch=header.controller_epoch,
        )

    def _reject(self, api: str, header: m.ControlHeader, error: Errors, current: int) -> Errors:
        return report.rejected(self._events, api, header, error, current, self._controller_epoch)

    def leader_and_isr(self, request: m.LeaderAndIsrRequest) -> m.LeaderAndIsrResponse:
        """Become leader or follower of each partition whose leader epoch is newer."""
        with collector.paused():
            return self._leader_and_isr(request)

    def _leader_and_isr(self, request: m.LeaderAndIsrRequest) -> m.LeaderAndIsrResponse:
        verdict = validation.leader_and_isr(request)
        if not verdict.ok:
            self._invalid("LeaderAndIsr", request.header, verdict, len(request.partition_states))
        if verdict.error is not Errors.NONE:
            return m.LeaderAndIsrResponse(
                verdict.error, _every(request.partition_states, verdict.error)
            )
        if verdict.left_out:  # leaders without a usable endpoint: nobody follows them yet
            request = m.LeaderAndIsrRequest(
                request.header,
                request.partition_states,
                tuple(x for x in request.live_leaders if x.broker_id not in verdict.left_out),
            )
        with self._lock:
            error, broker_epoch = self._check("LeaderAndIsr", request.header)
            if error is not Errors.NONE:
                return m.LeaderAndIsrResponse(error, _every(request.partition_states, error))
            self._obeyed(request.header)
            results = []
            fenced: list[report.Fenced] = []
            accepted: list[m.LeaderAndIsrPartitionState] = []
            invalid_by_tp, offline = verdict.invalid, self._offline
            hosted_by_tp = self._hosted
            check = fencing.check_leader_and_isr_partition
            none, new, error_type, tp_type = (
                Errors.NONE,
                tuple.__new__,
                m.PartitionError,
                TopicPartition,
            )
            hosted_type, broker_id = HostedPartition, self.broker_id
            before: dict[TopicPartition, HostedPartition | None] = {}
            for state in request.partition_states:
                tp = new(tp_type, (state.topic, state.partition))
                invalid = invalid_by_tp.get(tp) if invalid_by_tp else None
                if invalid is None and offline and tp in offline:
                    invalid = Errors.KAFKA_STORAGE_ERROR  # checked before the epoch, as Kafka
                if invalid is not None:
                    results.append(new(error_type, (tp, invalid)))
                    continue
                hosted = hosted_by_tp.get(tp)
                current = hosted.state.leader_epoch if hosted else None
                fenced_by = check(state.leader_epoch, current, state.replicas, broker_id)
                if fenced_by is none:
                    before.setdefault(tp, hosted)
                    hosted_by_tp[tp] = new(hosted_type, (state, state.leader == broker_id))
                    accepted.append(state)
                else:
                    fenced.append((tp, fenced_by, state.leader_epoch, current))
                results.append(new(error_type, (tp, fenced_by)))
            report.fenced(self._events, "LeaderAndIsr", request.header, fenced)
            if self._replicas is not None and accepted:
                leaders = (
                    self.metadata_cache.snapshot().live_leaders()
                    if self._leaders_from_cache
                    else request.live_leaders
                )
                try:
                    failed = self._replicas.become_leader_or_follower(accepted, leaders)
                except BaseException:
                    # nothing of the request counts as applied: a resend at the same
                    # leader epochs must not be refused as already seen
                    for tp, previous in before.items():
                        if previous is None:
                            del hosted_by_tp[tp]
                        else:
                            hosted_by_tp[tp] = previous
                    raise
                for tp in failed:  # not hosted: a later LeaderAndIsr may try again
                    hosted_by_tp.pop(tp, None)
                if failed:
                    results = [m.PartitionError(tp, failed.get(tp, error)) for tp, error in results]
            report.accepted(
                self._events, "LeaderAndIsr", request.header, broker_epoch, tuple(results)
            )
            return m.LeaderAndIsrResponse(Errors.NONE, tuple(results))

    def update_metadata(self, request: m.UpdateMetadataRequest) -> m.UpdateMetadataResponse:
        """Refresh the metadata cache. Partition states that fail validation, and live
        brokers without usable endpoints, are left out of the cache and the answer is
        INVALID_REQUEST; the rest is applied."""
        with collector.paused():
            return self._update_metadata(request)

    def _update_metadata(self, request: m.UpdateMetadataRequest) -> m.UpdateMetadataResponse:
        verdict = validation.update_metadata(request)
        if not verdict.ok:
            self._invalid("UpdateMetadata", request.header, verdict, len(request.partition_states))
        if verdict.error is not Errors.NONE:
            return m.UpdateMetadataResponse(verdict.error)
        if verdict.invalid or verdict.left_out:
            request = m.UpdateMetadataRequest(
                request.header,
                tuple(
                    s for s in request.partition_states if s.topic_partition not in verdict.invalid
                ),
                tuple(b for b in request.live_brokers if b.id not in verdict.left_out),
            )
        with self._lock:
            error, broker_epoch = self._check("UpdateMetadata", request.header)
            if error is not Errors.NONE:
                return m.UpdateMetadataResponse(error)
            self._obeyed(request.header)
            before = self.metadata_cache.snapshot().live_brokers
            self.metadata_cache.update(request)
            report.live_brokers(
                self._events, request.header, before, [b.id for b in request.live_brokers]
            )
            report.accepted(
                self._events,
                "UpdateMetadata",
                request.header,
                broker_epoch,
                (),
                len(request.partition_states),
            )
            return m.UpdateMetadataResponse(Errors.NONE if verdict.ok else Errors.INVALID_REQUEST)

    def stop_replica(self, request: m.StopReplicaRequest) -> m.StopReplicaResponse:
        """Stop each replica unless its leader epoch is fenced; a deleted one is forgotten,
        a stopped one keeps its leader epoch. An offline replica (a failed log directory)
        is answered KAFKA_STORAGE_ERROR and left as it is, deleted or not (Kafka 2.8's
        `stopReplicas`)."""
        verdict = validation.stop_replica(request)
        if not verdict.ok:
            self._invalid("StopReplica", request.header, verdict, len(request.partition_states))
        if verdict.error is not Errors.NONE:
            return m.StopReplicaResponse(
                verdict.error, _every(request.partition_states, verdict.error)
            )
        with self._lock:
            error, broker_epoch = self._check("StopReplica", request.header)
            if error is not Errors.NONE:
                return m.StopReplicaResponse(error, _every(request.partition_states, error))
            self._obeyed(request.header)
            results = []
            fenced: list[report.Fenced] = []
            deleted: list[TopicPartition] = []
            for state in request.partition_states:
                tp = state.topic_partition
                invalid = verdict.invalid.get(tp)
                if invalid is None and tp in self._offline:
                    invalid = Errors.KAFKA_STORAGE_ERROR
                if invalid is not None:
                    results.append(m.PartitionError(tp, invalid))
                    continue
                hosted = self._hosted.get(tp)
                current = hosted.state.leader_epoch if hosted else None
                fenced_by = fencing.check_stop_replica_partition(state.leader_epoch, current)
                if fenced_by is Errors.NONE:
                    _stop_hosted(self._hosted, tp, state.delete_partition)
                    if state.delete_partition:
                        deleted.append(tp)
                else:
                    fenced.append((tp, fenced_by, state.leader_epoch, current))
                results.append(m.PartitionError(tp, fenced_by))
            report.fenced(self._events, "StopReplica", request.header, fenced)
            if self._replicas is not None:
                stopped = [r.topic_partition for r in results if r.error is Errors.NONE]
                self._replicas.stop_replicas(
                    stopped,
                    [
                        s.topic_partition
                        for s in request.partition_states
                        if s.delete_partition and s.topic_partition not in verdict.invalid
                    ],
                )
            report.deleted(self._events, deleted)
            report.accepted(
                self._events, "StopReplica", request.header, broker_epoch, tuple(results)
            )
            return m.StopReplicaResponse(Errors.NONE, tuple(results))

    def controlled_shutdown(
        self, request: m.ControlledShutdownRequest
    ) -> m.ControlledShutdownResponse:
        """Answered by the local controller (NOT_CONTROLLER unless it is active)."""
        verdict = validation.controlled_shutdown(request)
        if verdict.error is not Errors.NONE:
            report_invalid(
                self._events, "ControlledShutdown", verdict, 0, broker_id=request.broker_id
            )
            return m.ControlledShutdownResponse(verdict.error)
        return self._controlled_shutdown(request)

    def elect_leaders(self, request: m.ElectLeadersRequest) -> m.ElectLeadersResponse:
        """Answered by the local controller (NOT_CONTROLLER unless it is active). Listed
        partitions that fail validation are answered here, the others by the controller;
        when none is left, the controller is not asked (an empty list means every
        partition)."""
        verdict = validation.elect_leaders(request)
        if not verdict.ok:
            report_invalid(self._events, "ElectLeaders", verdict, len(request.partitions))
        if verdict.error is not Errors.NONE:
            return m.ElectLeadersResponse(verdict.error)
        refused = tuple(
            m.PartitionElectionResult(tp, error, "invalid partition")
            for tp, error in verdict.invalid.items()
        )
        if self._elect_leaders is None:
            return m.ElectLeadersResponse(Errors.NOT_CONTROLLER)
        if not refused:
            return self._elect_leaders(request)
        rest = tuple(tp for tp in request.partitions if tp not in verdict.invalid)
        if not rest:
            return m.ElectLeadersResponse(Errors.NONE, refused)
        answer = self._elect_leaders(
            m.ElectLeadersRequest(request.election_type, rest, request.timeout_ms)
        )
        return m.ElectLeadersResponse(answer.error, answer.results + refused)


def _stop_hosted(
    hosted: dict[TopicPartition, HostedPartition], tp: TopicPartition, delete: bool
) -> None:
    """Forget a deleted replica; keep a stopped one, not leading, at the leader epoch it had
    (Kafka 2.8's `stopPartitions`), so an older LeaderAndIsr is still fenced."""
    was = hosted.pop(tp, None)
    if was is not None and not delete:
        hosted[tp] = HostedPartition(was.state, is_leader=False)


def _every(
    states: tuple[m.LeaderAndIsrPartitionState, ...] | tuple[m.StopReplicaPartitionState, ...],
    error: Errors,
) -> tuple[m.PartitionError, ...]:
    """The same error for every partition of a rejected request."""
    return tuple(m.PartitionError(s.topic_partition, error) for s in states)
