"""`rpc.wire`: every request and response survives domain -> protobuf -> bytes -> domain.

Messages with a public converter pair are checked directly; the ones converted inside the
servicer and client (ControlledShutdownRequest, UpdateMetadataResponse) are checked through
an in-process loopback stub that serializes every call to bytes. No sockets are opened.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

import pytest
from google.protobuf.message import Message
from hypothesis import given, settings
from hypothesis import strategies as st

from domain import EndPoint, TopicPartition
from harness.waiting import wait_until
from rpc import columns, wire
from rpc import messages as m
from rpc import strategies as rt
from rpc.errors import Errors
from rpc.wire.control import SHARED_STATES_MIN
from rpc.wire.testing import LoopbackStub, loopback_control_client
from testbed_rpc import control_pb2 as pb

PROPERTY = settings(max_examples=100, deadline=None)

D = TypeVar("D")
P = TypeVar("P", bound=Message)


def _update_metadata_through_bytes(request: m.UpdateMetadataRequest) -> m.UpdateMetadataRequest:
    return through_bytes(
        request,
        wire.update_metadata_request_to_pb,
        pb.UpdateMetadataRequest,
        wire.update_metadata_request_from_pb,
    )


def through_bytes(
    value: D, to_pb: Callable[[D], P], pb_type: type[P], from_pb: Callable[[P], D]
) -> D:
    """Convert `value` to protobuf, serialize, parse the bytes back and convert to domain."""
    data = to_pb(value).SerializeToString()
    return from_pb(pb_type.FromString(data))


# -- strategies ----------------------------------------------------------------------------

int32 = rt.int32
topics = st.text(max_size=20)
errors = st.sampled_from(Errors)

partition_errors = st.lists(
    st.builds(
        m.PartitionError,
        topic_partition=st.builds(TopicPartition, topic=topics, partition=int32),
        error=errors,
    ),
    max_size=4,
).map(tuple)

# hostile but well-typed requests, shared with the fuzzers (every value fits its field)
leader_and_isr_requests = rt.leader_and_isr_requests()
update_metadata_requests = rt.update_metadata_requests
stop_replica_requests = rt.stop_replica_requests

# -- examples ------------------------------------------------------------------------------

HEADER = m.ControlHeader(controller_id=1, controller_epoch=7, broker_epoch=4294967396)

LEADER_AND_ISR = m.LeaderAndIsrRequest(
    header=HEADER,
    partition_states=(
        m.LeaderAndIsrPartitionState(
            topic="orders",
            partition=0,
            controller_epoch=7,
            leader=1,
            leader_epoch=5,
            isr=(1, 2, 3),
            zk_version=12,
            replicas=(1, 2, 3, 4),
            adding_replicas=(4,),
            removing_replicas=(1,),
            is_new=True,
        ),
        m.LeaderAndIsrPartitionState(
            topic="orders",
            partition=1,
            controller_epoch=6,
            leader=-1,
            leader_epoch=0,
            isr=(),
            zk_version=0,
            replicas=(2, 3),
        ),
    ),
    live_leaders=(m.LiveLeader(1, "broker1", 9092),),
)
UPDATE_METADATA = m.UpdateMetadataRequest(
    header=m.ControlHeader(1, 7, -1),
    partition_states=(
        m.UpdateMetadataPartitionState(
            topic="orders",
            partition=0,
            controller_epoch=7,
            leader=1,
            leader_epoch=5,
            isr=(1, 2),
            zk_version=3,
            replicas=(1, 2, 3),
            offline_replicas=(3,),
        ),
    ),
    live_brokers=(
        m.LiveBroker(1, (EndPoint("broker1", 9092),), rack="rack-a"),
        m.LiveBroker(
            2,
            (
                EndPoint("broker2", 9092, "INTERNAL", "PLAINTEXT"),
                EndPoint("b2.example.com", 9094, "EXTERNAL", "SSL"),
            ),
        ),
    ),
)
STOP_REPLICA = m.StopReplicaRequest(
    header=HEADER,
    partition_states=(
        m.StopReplicaPartitionState("orders", 0, 5, delete_partition=False),
        m.StopReplicaPartitionState("orders", 1, -2, delete_partition=True),
        m.StopReplicaPartitionState("audit", 3, -1, delete_partition=False),
    ),
)
PARTITION_ERRORS = (
    m.PartitionError(TopicPartition("orders", 0), Errors.NONE),
    m.PartitionError(TopicPartition("orders", 1), Errors.STALE_CONTROLLER_EPOCH),
    m.PartitionError(TopicPartition("audit", 3), Errors.FENCED_LEADER_EPOCH),
)


def test_leader_and_isr_request_survives_the_wire() -> None:
    back = through_bytes(
        LEADER_AND_ISR,
        wire.leader_and_isr_request_to_pb,
        pb.LeaderAndIsrRequest,
        wire.leader_and_isr_request_from_pb,
    )
    assert back == LEADER_AND_ISR


def test_leader_and_isr_response_survives_the_wire() -> None:
    response = m.LeaderAndIsrResponse(Errors.NONE, PARTITION_ERRORS)
    back = through_bytes(
        response,
        wire.leader_and_isr_response_to_pb,
        pb.LeaderAndIsrResponse,
        wire.leader_and_isr_response_from_pb,
    )
    assert back == response


def test_update_metadata_request_survives_the_wire() -> None:
    back = through_bytes(
        UPDATE_METADATA,
        wire.update_metadata_request_to_pb,
        pb.UpdateMetadataRequest,
        wire.update_metadata_request_from_pb,
    )
    assert back == UPDATE_METADATA


def test_stop_replica_request_survives_the_wire() -> None:
    back = through_bytes(
        STOP_REPLICA,
        wire.stop_replica_request_to_pb,
        pb.StopReplicaRequest,
        wire.stop_replica_request_from_pb,
    )
    assert back == STOP_REPLICA


def test_stop_replica_response_survives_the_wire() -> None:
    response = m.StopReplicaResponse(Errors.STALE_BROKER_EPOCH, PARTITION_ERRORS)
    back = through_bytes(
        response,
        wire.stop_replica_response_to_pb,
        pb.StopReplicaResponse,
        wire.stop_replica_response_from_pb,
    )
    assert back == response


def test_controlled_shutdown_response_survives_the_wire() -> None:
    response = m.ControlledShutdownResponse(
        Errors.NONE, (TopicPartition("orders", 0), TopicPartition("audit", 2))
    )
    back = through_bytes(
        response,
        wire.controlled_shutdown_response_to_pb,
        pb.ControlledShutdownResponse,
        wire.controlled_shutdown_response_from_pb,
    )
    assert back == response


def test_error_codes_travel_as_kafkas_numbers() -> None:
    message = wire.leader_and_isr_response_to_pb(
        m.LeaderAndIsrResponse(Errors.STALE_CONTROLLER_EPOCH, PARTITION_ERRORS[2:])
    )
    assert message.error_code == 11
    assert [list(e.error_codes) for e in message.topic_errors] == [[74]]


def test_unknown_error_codes_from_the_wire_become_unknown_server_error() -> None:
    message = pb.StopReplicaResponse(
        error_code=9999,
        topic_errors=[pb.TopicErrors(topic="t", partitions=[0], error_codes=[4242])],
    )
    response = wire.stop_replica_response_from_pb(
        pb.StopReplicaResponse.FromString(message.SerializeToString())
    )
    assert response == m.StopReplicaResponse(
        Errors.UNKNOWN_SERVER_ERROR,
        (m.PartitionError(TopicPartition("t", 0), Errors.UNKNOWN_SERVER_ERROR),),
    )


def test_no_rack_travels_as_none() -> None:
    request = m.UpdateMetadataRequest(m.ControlHeader(1, 1, 1), (), (m.LiveBroker(3, (), None),))
    back = through_bytes(
        request,
        wire.update_metadata_request_to_pb,
        pb.UpdateMetadataRequest,
        wire.update_metadata_request_from_pb,
    )
    assert back.live_brokers[0].rack is None


# -- properties ----------------------------------------------------------------------------

errors = st.sampled_from(list(Errors))
fetched_records = st.builds(
    m.FetchedRecord,
    offset=rt.offsets,
    leader_epoch=rt.epochs,
    timestamp_ms=rt.int64,
    key=st.none() | st.binary(max_size=4),
    value=st.binary(max_size=8),
)
fetch_responses = st.builds(
    m.FetchResponse,
    error=errors,
    partitions=st.lists(
        st.builds(
            m.FetchedPartition,
            topic=rt.topics,
            partition=rt.partitions,
            error=errors,
            high_watermark=rt.offsets,
            log_start_offset=rt.offsets,
            log_end_offset=rt.offsets,
            records=st.lists(fetched_records, max_size=3).map(tuple),
            record_data=st.binary(max_size=8),
        ),
        max_size=3,
    ).map(tuple),
    session_id=st.integers(0, 2**31 - 1),
)
metadata_responses = st.builds(
    m.MetadataResponse,
    controller_id=rt.broker_ids,
    controller_epoch=rt.epochs,
    brokers=rt.live_brokers,
    topics=st.lists(
        st.builds(
            m.TopicMetadata,
            name=rt.topics,
            error=errors,
            partitions=st.lists(
                st.builds(
                    m.PartitionMetadata,
                    partition=rt.partitions,
                    error=errors,
                    leader=rt.broker_ids,
                    leader_epoch=rt.epochs,
                    replicas=rt.id_lists,
                    isr=rt.id_lists,
                    offline_replicas=rt.id_lists,
                ),
                max_size=3,
            ).map(tuple),
        ),
        max_size=3,
    ).map(tuple),
)


@PROPERTY
@given(request=rt.produce_requests)
def test_any_produce_request_survives_the_wire(request: m.ProduceRequest) -> None:
    """A null key and an empty key stay apart, as do every record's value and timestamp."""
    back = through_bytes(
        request, wire.produce_request_to_pb, pb.ProduceRequest, wire.produce_request_from_pb
    )
    assert back == request


produce_results = st.builds(
    m.PartitionProduceResult,
    topic=rt.topics,
    partition=rt.partitions,
    error=st.sampled_from(list(Errors)),
    base_offset=rt.offsets,
    last_offset=rt.offsets,
    error_message=st.text(max_size=8),
)


@PROPERTY
@given(results=st.lists(produce_results, max_size=5))
def test_any_produce_response_survives_the_wire(results: list[m.PartitionProduceResult]) -> None:
    """Every partition's result, in order, even when a topic comes back after another."""
    response = m.ProduceResponse(tuple(results))
    back = through_bytes(
        response, wire.produce_response_to_pb, pb.ProduceResponse, wire.produce_response_from_pb
    )
    assert back == response


def test_a_produce_request_names_each_run_of_a_topic_once() -> None:
    """Kafka's shape: consecutive partitions of one topic share a topic entry."""
    record = (m.ProducedRecord(b"k", b"v", 7),)
    request = m.ProduceRequest(
        tuple(m.PartitionRecords(t, p, record) for t, p in (("a", 0), ("a", 1), ("b", 0), ("a", 2)))
    )
    out = wire.produce_request_to_pb(request)
    assert [(t.topic, [p.partition for p in t.partitions]) for t in out.topics] == [
        ("a", [0, 1]),
        ("b", [0]),
        ("a", [2]),
    ]
    assert wire.produce_request_from_pb(out) == request


@PROPERTY
@given(request=rt.fetch_requests, encoded=st.booleans())
def test_any_fetch_request_survives_the_wire(request: m.FetchRequest, encoded: bool) -> None:
    request = dataclasses.replace(request, encoded_records=encoded)
    back = through_bytes(
        request, wire.fetch_request_to_pb, pb.FetchRequest, wire.fetch_request_from_pb
    )
    assert back == request


@PROPERTY
@given(response=fetch_responses)
def test_any_fetch_response_survives_the_wire(response: m.FetchResponse) -> None:
    """Records keep a null key apart from an empty one; stored bytes travel as they are."""
    back = through_bytes(
        response, wire.fetch_response_to_pb, pb.FetchResponse, wire.fetch_response_from_pb
    )
    assert back == response


@PROPERTY
@given(response=metadata_responses)
def test_any_metadata_response_survives_the_wire(response: m.MetadataResponse) -> None:
    back = through_bytes(
        response, wire.metadata_response_to_pb, pb.MetadataResponse, wire.metadata_response_from_pb
    )
    assert back == response


@PROPERTY
@given(request=leader_and_isr_requests)
def test_any_leader_and_isr_request_survives_the_wire(request: m.LeaderAndIsrRequest) -> None:
    back = through_bytes(
        request,
        wire.leader_and_isr_request_to_pb,
        pb.LeaderAndIsrRequest,
        wire.leader_and_isr_request_from_pb,
    )
    assert back == request


@PROPERTY
@given(request=update_metadata_requests)
def test_any_update_metadata_request_survives_the_wire(request: m.UpdateMetadataRequest) -> None:
    assert _update_metadata_through_bytes(request) == request


@PROPERTY
@given(request=stop_replica_requests)
def test_any_stop_replica_request_survives_the_wire(request: m.StopReplicaRequest) -> None:
    back = through_bytes(
        request,
        wire.stop_replica_request_to_pb,
        pb.StopReplicaRequest,
        wire.stop_replica_request_from_pb,
    )
    assert back == request


@PROPERTY
@given(response=st.builds(m.LeaderAndIsrResponse, error=errors, partition_errors=partition_errors))
def test_any_leader_and_isr_response_survives_the_wire(response: m.LeaderAndIsrResponse) -> None:
    back = through_bytes(
        response,
        wire.leader_and_isr_response_to_pb,
        pb.LeaderAndIsrResponse,
        wire.leader_and_isr_response_from_pb,
    )
    assert back == response


@PROPERTY
@given(response=st.builds(m.StopReplicaResponse, error=errors, partition_errors=partition_errors))
def test_any_stop_replica_response_survives_the_wire(response: m.StopReplicaResponse) -> None:
    back = through_bytes(
        response,
        wire.stop_replica_response_to_pb,
        pb.StopReplicaResponse,
        wire.stop_replica_response_from_pb,
    )
    assert back == response


@PROPERTY
@given(
    response=st.builds(
        m.ControlledShutdownResponse,
        error=errors,
        remaining_partitions=st.lists(
            st.builds(TopicPartition, topic=topics, partition=int32), max_size=4
        ).map(tuple),
    )
)
def test_any_controlled_shutdown_response_survives_the_wire(
    response: m.ControlledShutdownResponse,
) -> None:
    back = through_bytes(
        response,
        wire.controlled_shutdown_response_to_pb,
        pb.ControlledShutdownResponse,
        wire.controlled_shutdown_response_from_pb,
    )
    assert back == response


# -- servicer and client over an in-process loopback ---------------------------------------


class RecordingHandler:
    """A `BrokerControlHandler` that records each request and answers with canned responses."""

    def __init__(self) -> None:
        self.requests: list[object] = []
        self.leader_and_isr_response = m.LeaderAndIsrResponse(Errors.NONE, PARTITION_ERRORS)
        self.update_metadata_response = m.UpdateMetadataResponse(Errors.STALE_CONTROLLER_EPOCH)
        self.stop_replica_response = m.StopReplicaResponse(Errors.NONE, PARTITION_ERRORS[:1])
        self.controlled_shutdown_response = m.ControlledShutdownResponse(
            Errors.NONE, (TopicPartition("orders", 1),)
        )

    def leader_and_isr(self, request: m.LeaderAndIsrRequest) -> m.LeaderAndIsrResponse:
        self.requests.append(request)
        return self.leader_and_isr_response

    def update_metadata(self, request: m.UpdateMetadataRequest) -> m.UpdateMetadataResponse:
        self.requests.append(request)
        return self.update_metadata_response

    def stop_replica(self, request: m.StopReplicaRequest) -> m.StopReplicaResponse:
        self.requests.append(request)
        return self.stop_replica_response

    def controlled_shutdown(
        self, request: m.ControlledShutdownRequest
    ) -> m.ControlledShutdownResponse:
        self.requests.append(request)
        return self.controlled_shutdown_response

    def elect_leaders(self, request: m.ElectLeadersRequest) -> m.ElectLeadersResponse:
        self.requests.append(request)
        return m.ElectLeadersResponse(
            Errors.NONE,
            tuple(
                m.PartitionElectionResult(tp, Errors.ELECTION_NOT_NEEDED)
                for tp in request.partitions
            ),
        )

    def alter_isr(self, request: m.AlterIsrRequest) -> m.AlterIsrResponse:
        self.requests.append(request)
        return ALTER_ISR_RESPONSE


ALTER_ISR = m.AlterIsrRequest(
    1,
    2**40 + 5,
    (
        m.AlterIsrPartition(TopicPartition("orders", 0), 5, (1, 2, 3), 7),
        m.AlterIsrPartition(TopicPartition("audit", 3), 0, (1,), 0),
    ),
)
ALTER_ISR_RESPONSE = m.AlterIsrResponse(
    Errors.NONE,
    (
        m.AlterIsrPartitionResult(TopicPartition("orders", 0), Errors.NONE, 1, 5, (1, 2, 3), 8),
        m.AlterIsrPartitionResult(TopicPartition("audit", 3), Errors.INVALID_UPDATE_VERSION),
    ),
)


@dataclass
class Loopback:
    """A client wired to the real servicer through the loopback stub."""

    client: wire.BrokerControlClient
    handler: RecordingHandler
    stub: LoopbackStub


@pytest.fixture
def loopback() -> Iterator[Loopback]:
    """A `BrokerControlClient` whose stub is the loopback (its channel is never used)."""
    handler = RecordingHandler()
    client = loopback_control_client(handler)
    assert isinstance(client._stub, LoopbackStub)
    yield Loopback(client, handler, client._stub)
    client.close()


def test_client_and_servicer_carry_leader_and_isr(loopback: Loopback) -> None:
    client, handler, stub = loopback.client, loopback.handler, loopback.stub
    assert client.leader_and_isr(LEADER_AND_ISR) == handler.leader_and_isr_response
    assert handler.requests == [LEADER_AND_ISR]
    assert stub.timeouts == [3.5]


def test_client_and_servicer_carry_alter_isr_and_its_answers(loopback: Loopback) -> None:
    client, handler = loopback.client, loopback.handler
    assert client.alter_isr(ALTER_ISR) == ALTER_ISR_RESPONSE
    assert handler.requests == [ALTER_ISR]


def test_alter_isr_converts_both_ways() -> None:
    assert wire.alter_isr_request_from_pb(wire.alter_isr_request_to_pb(ALTER_ISR)) == ALTER_ISR
    response = wire.alter_isr_response_to_pb(ALTER_ISR_RESPONSE)
    assert wire.alter_isr_response_from_pb(response) == ALTER_ISR_RESPONSE


def test_client_and_servicer_carry_update_metadata_and_its_response(loopback: Loopback) -> None:
    client, handler = loopback.client, loopback.handler
    response = client.update_metadata(UPDATE_METADATA)
    assert response == m.UpdateMetadataResponse(Errors.STALE_CONTROLLER_EPOCH)
    assert handler.requests == [UPDATE_METADATA]


def test_client_and_servicer_carry_stop_replica(loopback: Loopback) -> None:
    client, handler = loopback.client, loopback.handler
    assert client.stop_replica(STOP_REPLICA) == handler.stop_replica_response
    assert handler.requests == [STOP_REPLICA]


@pytest.mark.parametrize(
    "request_",
    [
        pytest.param(m.ControlledShutdownRequest(3, 4294967396), id="large-broker-epoch"),
        pytest.param(m.ControlledShutdownRequest(0, -1), id="unknown-broker-epoch"),
    ],
)
def test_client_and_servicer_carry_controlled_shutdown(
    loopback: Loopback, request_: m.ControlledShutdownRequest
) -> None:
    client, handler = loopback.client, loopback.handler
    response = client.controlled_shutdown(request_)
    assert response == handler.controlled_shutdown_response
    assert handler.requests == [request_]


@pytest.mark.parametrize("error", list(Errors), ids=lambda e: e.name)
def test_update_metadata_response_error_survives_the_loopback(
    loopback: Loopback, error: Errors
) -> None:
    client, handler = loopback.client, loopback.handler
    handler.update_metadata_response = m.UpdateMetadataResponse(error)
    assert client.update_metadata(UPDATE_METADATA) == m.UpdateMetadataResponse(error)


def test_elect_leaders_survives_the_wire(loopback: Loopback) -> None:
    """ElectLeaders request and per-partition results round-trip through protobuf."""
    client, handler = loopback.client, loopback.handler
    partitions = (TopicPartition("t", 0), TopicPartition("u", 3))
    reply = client.elect_leaders(m.ElectLeadersRequest(1, partitions, 2000))
    assert handler.requests[-1] == m.ElectLeadersRequest(1, partitions, 2000)
    assert reply == m.ElectLeadersResponse(
        Errors.NONE,
        tuple(m.PartitionElectionResult(tp, Errors.ELECTION_NOT_NEEDED) for tp in partitions),
    )


def _large_update_metadata(broker_epoch: int, leader_epoch: int) -> m.UpdateMetadataRequest:
    states = tuple(
        m.UpdateMetadataPartitionState(
            f"t{i % 7}", i, 1, 1 + i % 3, leader_epoch, (1, 2), 4, (1, 2, 3)
        )
        for i in range(SHARED_STATES_MIN * 2)
    )
    broker = m.LiveBroker(1, (EndPoint("h1", 9092),), None)
    return m.UpdateMetadataRequest(m.ControlHeader(2, 5, broker_epoch), states, (broker,))


def test_brokers_sent_the_same_states_get_them_with_their_own_headers() -> None:
    """Large requests to several brokers share one encoding of their states; each keeps
    its own header, and a request with other states is never given the kept ones."""
    first = _large_update_metadata(100, 7)
    second = m.UpdateMetadataRequest(
        m.ControlHeader(2, 5, 200), first.partition_states, first.live_brokers
    )
    other = _large_update_metadata(300, 8)
    for request in (first, second, other, second):
        assert _update_metadata_through_bytes(request) == request


def _large_leader_and_isr(broker_epoch: int, leader_epoch: int) -> m.LeaderAndIsrRequest:
    states = tuple(
        m.LeaderAndIsrPartitionState(
            f"t{i % 7}", i, 1, 1 + i % 3, leader_epoch, (1, 2), 4, (1, 2, 3), is_new=i % 5 == 0
        )
        for i in range(SHARED_STATES_MIN * 2)
    )
    leaders = tuple(m.LiveLeader(b, f"h{b}", 9092) for b in (1, 2, 3))
    return m.LeaderAndIsrRequest(m.ControlHeader(2, 5, broker_epoch), states, leaders)


def _leader_and_isr_through_bytes(request: m.LeaderAndIsrRequest) -> m.LeaderAndIsrRequest:
    return through_bytes(
        request,
        wire.leader_and_isr_request_to_pb,
        pb.LeaderAndIsrRequest,
        wire.leader_and_isr_request_from_pb,
    )


def test_brokers_sent_the_same_leader_and_isr_states_get_them_with_their_own_headers() -> None:
    """The same for LeaderAndIsr: each broker keeps its own header, a request with other
    states is never given the kept ones, and one with the same states but other live
    leaders gets its own."""
    first = _large_leader_and_isr(100, 7)
    second = m.LeaderAndIsrRequest(
        m.ControlHeader(2, 5, 200), first.partition_states, first.live_leaders
    )
    fewer = m.LeaderAndIsrRequest(
        m.ControlHeader(2, 5, 300), first.partition_states, first.live_leaders[:1]
    )
    other = _large_leader_and_isr(300, 8)
    for request in (first, second, fewer, other, second, fewer):
        assert _leader_and_isr_through_bytes(request) == request


def test_senders_asking_at_once_for_the_same_states_build_them_once() -> None:
    """The senders to several brokers convert their requests at the same moment: the first
    builds the shared body while the others wait for it, and all get the same one."""
    from rpc.wire import control  # the shared encodings' own type, not exported

    built: list[m.LeaderAndIsrRequest] = []
    looked_up: list[int] = []
    gate = threading.Event()

    def fill(body: pb.LeaderAndIsrRequest, request: m.LeaderAndIsrRequest) -> None:
        built.append(request)
        assert gate.wait(10)
        control._add_leader_and_isr_body(body, request)

    class Counting(control._SharedEncodings):
        def _lookup(self, states: tuple[object, ...], rest: object) -> Message | None:
            looked_up.append(1)
            return super()._lookup(states, rest)

    shared = Counting(pb.LeaderAndIsrRequest, fill, lambda r: r.live_leaders, keep=2)
    first = _large_leader_and_isr(100, 7)
    second = m.LeaderAndIsrRequest(
        m.ControlHeader(2, 5, 200), first.partition_states, first.live_leaders
    )
    with ThreadPoolExecutor(2) as pool:
        one = pool.submit(shared.encoded, first)
        wait_until(lambda: built, 10, "the first sender never started building")
        two = pool.submit(shared.encoded, second)
        # the second has missed once and now waits for the first's build
        wait_until(lambda: len(looked_up) >= 3, 10, "the second sender never asked")
        gate.set()
        assert one.result(10) is two.result(10)
    assert built == [first]


def test_an_answer_travels_as_one_entry_per_run_of_a_topic() -> None:
    """100,000 partitions of 100 topics answer in 100 entries, in order, and come back as
    they went."""
    errors = tuple(
        m.PartitionError(TopicPartition(f"t{i // 1000}", i % 1000), Errors.NONE)
        for i in range(100_000)
    )
    response = m.LeaderAndIsrResponse(Errors.NONE, errors)
    message = wire.leader_and_isr_response_to_pb(response)
    assert len(message.topic_errors) == 100
    assert [e.topic for e in message.topic_errors[:2]] == ["t0", "t1"]
    back = wire.leader_and_isr_response_from_pb(
        pb.LeaderAndIsrResponse.FromString(message.SerializeToString())
    )
    assert back == response


def test_a_run_with_too_few_codes_answers_the_rest_unknown() -> None:
    message = pb.LeaderAndIsrResponse(
        topic_errors=[pb.TopicErrors(topic="t", partitions=[0, 1, 2], error_codes=[0])]
    )
    response = wire.leader_and_isr_response_from_pb(message)
    assert [e.error for e in response.partition_errors] == [
        Errors.NONE,
        Errors.UNKNOWN_SERVER_ERROR,
        Errors.UNKNOWN_SERVER_ERROR,
    ]


# -- partition states in columns ---------------------------------------------------------


def _columns_of(request: m.LeaderAndIsrRequest) -> pb.LeaderAndIsrRequest:
    return pb.LeaderAndIsrRequest.FromString(
        wire.leader_and_isr_request_to_pb(request).SerializeToString()
    )


def test_states_travel_as_columns_with_each_topic_and_list_once() -> None:
    """300 partitions of three topics with two distinct replica lists: three topic names,
    two lists and one packed column per field, nothing per partition."""
    states = tuple(
        m.LeaderAndIsrPartitionState(
            f"t{i % 3}", i, 4, 1, 2, (1, 2) if i % 2 else (1,), 9, (1, 2), is_new=i == 7
        )
        for i in range(300)
    )
    message = _columns_of(m.LeaderAndIsrRequest(HEADER, states))
    assert list(message.topic_names) == ["t0", "t1", "t2"]
    assert [tuple(x.ids) for x in message.replica_lists] == [(1,), (1, 2)]
    assert list(message.states.partitions) == list(range(300))
    assert not message.states.adding_replicas  # every one empty: left out
    assert [i for i, flag in enumerate(message.states.is_new) if flag] == [7]
    decoded = wire.leader_and_isr_request_from_pb(message)
    assert decoded.partition_states == states
    replicas = {id(s.replicas) for s in decoded.partition_states}
    assert len(replicas) == 1  # partitions naming the same list share one tuple


@pytest.mark.parametrize(
    "spoil",
    [
        lambda msg: msg.states.leaders.pop(),  # a column shorter than the topics column
        lambda msg: msg.states.isrs.__setitem__(0, 5),  # a list the request does not hold
        lambda msg: msg.states.topics.__setitem__(1, -1),  # a negative topic index
        lambda msg: msg.states.is_new.extend([True]),  # an optional column too long
    ],
    ids=["short-column", "list-index-out-of-range", "negative-topic-index", "long-flags"],
)
def test_columns_that_do_not_line_up_are_refused_as_a_whole(
    spoil: Callable[[pb.LeaderAndIsrRequest], object],
) -> None:
    """A malformed request is decoded into nothing: the servicer answers INVALID_REQUEST
    and the handler never sees it."""
    states = tuple(
        m.LeaderAndIsrPartitionState("t", p, 4, 1, 2, (1, 2), 9, (1, 2)) for p in range(3)
    )
    message = _columns_of(m.LeaderAndIsrRequest(HEADER, states))
    spoil(message)
    with pytest.raises(wire.control.MalformedStates):
        wire.leader_and_isr_request_from_pb(message)
    handler = RecordingHandler()
    answer = wire.control_server._BrokerControlServicer(handler).LeaderAndIsr(message, None)
    assert answer.error_code == Errors.INVALID_REQUEST.value
    assert handler.requests == []


def test_a_malformed_update_metadata_is_refused_too() -> None:
    update = m.UpdateMetadataRequest(
        HEADER,
        tuple(m.UpdateMetadataPartitionState("t", p, 4, 1, 2, (1,), 9, (1,)) for p in range(3)),
        (),
    )
    message = pb.UpdateMetadataRequest.FromString(
        wire.update_metadata_request_to_pb(update).SerializeToString()
    )
    message.states.offline_replicas.extend([0])  # one value for three partitions
    handler = RecordingHandler()
    answer = wire.control_server._BrokerControlServicer(handler).UpdateMetadata(message, None)
    assert answer.error_code == Errors.INVALID_REQUEST.value
    assert handler.requests == []


def test_a_layout_is_made_once_per_tuple_of_states() -> None:
    """The controller sizes a request and then encodes it: the second asks for the layout
    of the same tuple and gets the one the first made; an equal tuple gets its own."""
    states = tuple(
        m.LeaderAndIsrPartitionState("t", p, 4, 1, 2, (1, 2), 9, (1, 2))
        for p in range(columns.KEEP_MIN)
    )
    first = columns.lay_out(states, columns.LEADER_AND_ISR)
    assert columns.lay_out(states, columns.LEADER_AND_ISR) is first
    copy = tuple(list(states))
    assert copy is not states
    again = columns.lay_out(copy, columns.LEADER_AND_ISR)
    assert again is not first
    assert again == first
