"""Fuzz: sequences of well-typed but hostile control requests (`rpc.strategies`), mixed with
plausible ones that a controller might send (valid but for their epochs), reach a real
`ControlRequestHandler` behind the real guard through the real servicer and client, every
call serialized to bytes (`rpc.wire.testing`).

Setup: broker 1 at broker epoch 100 has obeyed controller epoch 5 and hosts orders-0 (leader,
leader epoch 3) and t-1 (follower, leader epoch 4).
Validate, after every request:
  - nothing escapes a handler (no `request_failed` event) and the answer carries a Kafka
    error code; an accepted LeaderAndIsr or StopReplica answers every partition, in order;
  - fencing: a request with a stale controller epoch or broker epoch changes nothing; the
    highest controller epoch never decreases; a hosted partition changes only for a newer
    leader epoch (LeaderAndIsr) or a newer, "none" (-1) or "deleting" (-2) one (StopReplica);
    a stopped replica keeps its leader epoch and only a deleted one is forgotten, so a
    LeaderAndIsr is accepted only above the last leader epoch accepted for that partition
    since it was last deleted (a model kept by the test, not read from the handler: epoch 5
    accepted, StopReplica(delete=false) at 6, then epoch 3 is fenced);
  - nothing invalid is stored: hosted partitions and cached states have legal topics,
    partitions and epochs;
  - the controller's own calls get only valid requests, and ElectLeaders never turns a list
    of invalid partitions into "every partition".
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from broker_node.control_requests import ControlRequestHandler, HostedPartition
from broker_node.metadata_cache import MetadataSnapshot
from broker_node.request_guard import GuardedBrokerControl, RequestGuard
from broker_node.validation_rules import legal_topic
from domain import EPOCH_DURING_DELETE, NO_EPOCH, TopicPartition
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from rpc import messages as m
from rpc import strategies as rt
from rpc.errors import Errors
from rpc.wire import BrokerControlClient
from rpc.wire.testing import loopback_control_client

pytestmark = pytest.mark.fuzz

BROKER = 1
BROKER_EPOCH = 100
CONTROLLER_EPOCH = 5
SEED = m.LeaderAndIsrRequest(
    m.ControlHeader(2, CONTROLLER_EPOCH, BROKER_EPOCH),
    (
        m.LeaderAndIsrPartitionState("orders", 0, 5, 1, 3, (1, 2), 1, (1, 2)),
        m.LeaderAndIsrPartitionState("t", 1, 5, 2, 4, (2, 1), 1, (2, 1)),
    ),
)

ControlRequest = (
    m.LeaderAndIsrRequest
    | m.UpdateMetadataRequest
    | m.StopReplicaRequest
    | m.ControlledShutdownRequest
    | m.ElectLeadersRequest
)
ControlResponse = (
    m.LeaderAndIsrResponse
    | m.UpdateMetadataResponse
    | m.StopReplicaResponse
    | m.ControlledShutdownResponse
    | m.ElectLeadersResponse
)
control_requests = st.one_of(
    rt.plausible_leader_and_isr_requests(BROKER_EPOCH),
    rt.plausible_update_metadata_requests(BROKER_EPOCH),
    rt.plausible_stop_replica_requests(BROKER_EPOCH),
    rt.leader_and_isr_requests(),
    rt.update_metadata_requests,
    rt.stop_replica_requests,
    rt.controlled_shutdown_requests,
    rt.elect_leaders_requests,
)


@dataclass
class Controller:
    """Stands in for the local controller: records what reaches it."""

    shutdowns: list[m.ControlledShutdownRequest] = field(default_factory=list)
    elections: list[m.ElectLeadersRequest] = field(default_factory=list)

    def controlled_shutdown(
        self, request: m.ControlledShutdownRequest
    ) -> m.ControlledShutdownResponse:
        self.shutdowns.append(request)
        return m.ControlledShutdownResponse(Errors.NONE)

    def elect_leaders(self, request: m.ElectLeadersRequest) -> m.ElectLeadersResponse:
        self.elections.append(request)
        return m.ElectLeadersResponse(
            Errors.NONE,
            tuple(
                m.PartitionElectionResult(tp, Errors.ELECTION_NOT_NEEDED)
                for tp in request.partitions
            ),
        )


@dataclass(frozen=True)
class State:
    """What a control request may change."""

    controller_epoch: int
    hosted: dict[TopicPartition, HostedPartition]
    cache: MetadataSnapshot


def state_of(handler: ControlRequestHandler) -> State:
    return State(
        handler.controller_epoch, handler.hosted_partitions(), handler.metadata_cache.snapshot()
    )


def send(client: BrokerControlClient, request: ControlRequest) -> ControlResponse:
    match request:
        case m.LeaderAndIsrRequest():
            return client.leader_and_isr(request)
        case m.UpdateMetadataRequest():
            return client.update_metadata(request)
        case m.StopReplicaRequest():
            return client.stop_replica(request)
        case m.ControlledShutdownRequest():
            return client.controlled_shutdown(request)
        case m.ElectLeadersRequest():
            return client.elect_leaders(request)


def stale(header: m.ControlHeader, highest: int) -> bool:
    """The fencing rules: an older controller epoch, or an older registration of ours."""
    return header.controller_epoch < highest or -1 != header.broker_epoch < BROKER_EPOCH


def check_answer(request: ControlRequest, response: ControlResponse) -> None:
    assert isinstance(response.error, Errors)
    assert response.error is not Errors.UNKNOWN_SERVER_ERROR
    if isinstance(request, m.LeaderAndIsrRequest | m.StopReplicaRequest):
        assert isinstance(response, m.LeaderAndIsrResponse | m.StopReplicaResponse)
        answered = [e.topic_partition for e in response.partition_errors]
        assert answered == [s.topic_partition for s in request.partition_states]


def check_fencing(request: ControlRequest, before: State, after: State) -> None:
    assert after.controller_epoch >= before.controller_epoch
    header = getattr(request, "header", None)
    if header is not None and stale(header, before.controller_epoch):
        assert after == before, "a stale request was obeyed"
    if not isinstance(request, m.UpdateMetadataRequest):
        assert after.cache == before.cache
    if not isinstance(request, m.LeaderAndIsrRequest | m.StopReplicaRequest):
        assert after.hosted == before.hosted
        return
    for tp, was in before.hosted.items():
        now = after.hosted.get(tp)
        if now == was:
            continue
        listed = [s for s in request.partition_states if s.topic_partition == tp]
        assert len(listed) == 1, "a partition changed that the request did not list once"
        epoch = listed[0].leader_epoch
        if isinstance(request, m.LeaderAndIsrRequest):
            assert epoch > was.state.leader_epoch, "a stale leader epoch was obeyed"
        else:
            assert epoch in (NO_EPOCH, EPOCH_DURING_DELETE) or epoch > was.state.leader_epoch
            assert isinstance(listed[0], m.StopReplicaPartitionState)
            if listed[0].delete_partition:
                assert now is None, "a deleted replica is still hosted"
            else:
                assert now == HostedPartition(was.state, is_leader=False), "stop lost the epoch"


def check_remembered_epochs(
    request: ControlRequest, response: ControlResponse, remembered: dict[TopicPartition, int]
) -> None:
    """Every partition a LeaderAndIsr was accepted for is above the leader epoch last
    accepted for it (StopReplica without delete keeps that epoch, with delete forgets it);
    then the model learns what the answer accepted."""
    if isinstance(request, m.LeaderAndIsrRequest) and isinstance(response, m.LeaderAndIsrResponse):
        errors = {e.topic_partition: e.error for e in response.partition_errors}
        for state in request.partition_states:
            tp = state.topic_partition
            if errors.get(tp) is Errors.NONE:
                known = remembered.get(tp)
                assert known is None or state.leader_epoch > known, "an old leader epoch obeyed"
                remembered[tp] = state.leader_epoch
    elif isinstance(request, m.StopReplicaRequest) and isinstance(response, m.StopReplicaResponse):
        errors = {e.topic_partition: e.error for e in response.partition_errors}
        for stop in request.partition_states:
            if stop.delete_partition and errors.get(stop.topic_partition) is Errors.NONE:
                remembered.pop(stop.topic_partition, None)


def check_stored(after: State) -> None:
    for tp, hosted in after.hosted.items():
        assert legal_topic(tp.topic)
        assert tp.partition >= 0
        assert hosted.state.leader_epoch >= 0
        assert BROKER in hosted.state.replicas
    for tp, cached in after.cache.partitions.items():
        assert legal_topic(tp.topic)
        assert tp.partition >= 0
        assert cached.leader >= -1
    assert all(b >= 0 for b in after.cache.live_brokers)


def check_controller_calls(controller: Controller, request: ControlRequest) -> None:
    for shutdown in controller.shutdowns:
        assert shutdown.broker_id >= 0
    for election in controller.elections:
        assert election.election_type in (0, 1)
        assert all(legal_topic(tp.topic) and tp.partition >= 0 for tp in election.partitions)
        if isinstance(request, m.ElectLeadersRequest) and election is controller.elections[-1]:
            assert election.partitions or not request.partitions, "invalid list became 'all'"


def broker() -> tuple[RecordingEventLog, Controller, ControlRequestHandler]:
    """Broker 1's control request handling, registered, with a recording controller."""
    events = RecordingEventLog("b1")
    controller = Controller()
    handler = ControlRequestHandler(
        BROKER,
        lambda: BROKER_EPOCH,
        events,
        controller.controlled_shutdown,
        elect_leaders=controller.elect_leaders,
    )
    handler.on_registered()
    return events, controller, handler


HEADER = m.ControlHeader(2, CONTROLLER_EPOCH, BROKER_EPOCH)


def _lead_orders_0(leader_epoch: int) -> m.LeaderAndIsrRequest:
    return m.LeaderAndIsrRequest(
        HEADER, (m.LeaderAndIsrPartitionState("orders", 0, 5, 1, leader_epoch, (1, 2), 1, (1, 2)),)
    )


#: Epoch 5 accepted, 5 again fenced, StopReplica(delete=false) at 6, then epoch 3: fenced.
STOPPED_THEN_OLDER_EPOCH = [
    _lead_orders_0(5),
    _lead_orders_0(5),
    m.StopReplicaRequest(HEADER, (m.StopReplicaPartitionState("orders", 0, 6, False),)),
    _lead_orders_0(3),
]


@given(requests=st.lists(control_requests, min_size=1, max_size=8))
@example(requests=STOPPED_THEN_OLDER_EPOCH)
def test_hostile_control_requests_never_escape_a_handler_nor_break_fencing(
    requests: list[ControlRequest],
) -> None:
    events, controller, handler = broker()
    with loopback_control_client(GuardedBrokerControl(handler, RequestGuard(events))) as client:
        assert client.leader_and_isr(SEED).error is Errors.NONE
        remembered = {s.topic_partition: s.leader_epoch for s in SEED.partition_states}
        for request in requests:
            before = state_of(handler)
            calls = len(controller.elections)
            response = send(client, request)
            after = state_of(handler)
            assert not events.of_kind(EventKind.REQUEST_FAILED), events.of_kind(
                EventKind.REQUEST_FAILED
            )
            check_answer(request, response)
            check_fencing(request, before, after)
            check_remembered_epochs(request, response, remembered)
            check_stored(after)
            if len(controller.elections) > calls:
                check_controller_calls(controller, request)


def test_elect_leaders_with_only_invalid_partitions_never_asks_for_every_partition() -> None:
    """An empty list means "every partition": a request whose every partition is invalid
    is answered by the broker, and the controller is not asked."""
    events, controller, handler = broker()
    bad = (TopicPartition("..", 0), TopicPartition("t", -1))
    response = handler.elect_leaders(m.ElectLeadersRequest(0, bad))
    assert controller.elections == []
    assert response.error is Errors.NONE
    assert {(r.topic_partition, r.error) for r in response.results} == {
        (bad[0], Errors.INVALID_TOPIC_EXCEPTION),
        (bad[1], Errors.INVALID_REQUEST),
    }
    (invalid,) = events.of_kind(EventKind.REQUEST_INVALID)
    assert invalid["api"] == "ElectLeaders"
