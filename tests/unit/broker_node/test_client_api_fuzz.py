"""Fuzz: hostile Produce, Fetch, OffsetsForLeaderEpoch and Metadata requests, mixed with
LeaderAndIsr and StopReplica requests, reach a real `ClientApi` and `ControlRequestHandler`
over a real `ReplicaManager` with partition logs on disk, behind the guard, through the real
servicers and clients (`rpc.wire.testing`).

Setup: broker 1 (broker epoch 100) leads orders-0 (ISR {1}) with two records; the data
directory is `<tmp>/data`.
Validate, after every request:
  - nothing escapes a handler (no `request_failed` event); every answer carries a Kafka
    error code, and an answered Fetch or OffsetsForLeaderEpoch lists every partition asked;
  - a Produce answered NONE got offsets; nothing was written for a refused one;
  - nothing is created or removed outside the data directory, and every directory in it is
    `<legal topic>-<partition>` (a topic name is a path component).
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from broker_node.client_api import ClientApi
from broker_node.control_requests import ControlRequestHandler
from broker_node.replica_manager import ReplicaManager
from broker_node.replication_config import ReplicationConfig
from broker_node.request_guard import GuardedBrokerControl, GuardedClientApi, RequestGuard
from broker_node.testing import FakeIsrStore
from broker_node.validation_rules import legal_topic
from domain import TopicPartition
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from rpc import messages as m
from rpc import strategies as rt
from rpc.errors import Errors
from rpc.wire import BrokerControlClient, ClientApiClient
from rpc.wire.testing import loopback_client_api, loopback_control_client

pytestmark = pytest.mark.fuzz

BROKER_EPOCH = 100
LOG_DIR = re.compile(r"(.+)-(0|[1-9][0-9]*)")
SEED = m.LeaderAndIsrRequest(
    m.ControlHeader(2, 5, BROKER_EPOCH),
    (m.LeaderAndIsrPartitionState("orders", 0, 5, 1, 3, (1,), 1, (1,)),),
)

DataRequest = (
    m.ProduceRequest
    | m.FetchRequest
    | m.OffsetsForLeaderEpochRequest
    | m.MetadataRequest
    | m.LeaderAndIsrRequest
    | m.StopReplicaRequest
)
data_requests = st.one_of(
    rt.produce_requests,
    rt.fetch_requests,
    rt.offsets_for_leader_epoch_requests,
    rt.metadata_requests,
    rt.plausible_leader_and_isr_requests(BROKER_EPOCH),
    rt.plausible_stop_replica_requests(BROKER_EPOCH),
    rt.leader_and_isr_requests(st.just(())),
    rt.stop_replica_requests,
)


@dataclass
class Broker:
    """One broker's request handling, wired as `BrokerNode` wires it."""

    root: Path
    data: Path
    events: RecordingEventLog
    replicas: ReplicaManager
    control: BrokerControlClient
    client: ClientApiClient


@contextmanager
def broker() -> Iterator[Broker]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        data = root / "data"
        data.mkdir()
        events = RecordingEventLog("b1")
        replicas = ReplicaManager(
            1, ReplicationConfig(data_dir=data), FakeIsrStore(), events, lambda _topic: {}
        )

        def not_controller(_: m.ControlledShutdownRequest) -> m.ControlledShutdownResponse:
            return m.ControlledShutdownResponse(Errors.NOT_CONTROLLER)

        handler = ControlRequestHandler(1, lambda: BROKER_EPOCH, events, not_controller, replicas)
        handler.on_registered()
        guard = RequestGuard(events)
        api = ClientApi(handler.metadata_cache, replicas, events)
        with (
            loopback_control_client(GuardedBrokerControl(handler, guard)) as control,
            loopback_client_api(GuardedClientApi(api, guard)) as client,
        ):
            try:
                yield Broker(root, data, events, replicas, control, client)
            finally:
                replicas.shutdown()


def send(b: Broker, request: DataRequest) -> object:
    match request:
        case m.ProduceRequest():
            return b.client.produce(request)
        case m.FetchRequest():
            return b.client.fetch(request)
        case m.OffsetsForLeaderEpochRequest():
            return b.client.offsets_for_leader_epoch(request)
        case m.MetadataRequest():
            return b.client.metadata(request.topics)
        case m.LeaderAndIsrRequest():
            return b.control.leader_and_isr(request)
        case m.StopReplicaRequest():
            return b.control.stop_replica(request)


def check_answer(request: DataRequest, response: object) -> None:
    match request, response:
        case m.ProduceRequest(), m.ProduceResponse():
            asked = [(p.topic, p.partition) for p in request.partitions]
            assert [(p.topic, p.partition) for p in response.partitions] == asked
            for p in response.partitions:
                assert p.error is not Errors.UNKNOWN_SERVER_ERROR
                if request.acks == 0:  # sent without waiting: no answer, no offsets
                    assert (p.error, p.base_offset) == (Errors.NONE, -1)
                elif p.error is Errors.NONE:
                    assert 0 <= p.base_offset <= p.last_offset
        case m.FetchRequest(), m.FetchResponse():
            assert response.error is not Errors.UNKNOWN_SERVER_ERROR
            if response.error is Errors.NONE and request.is_full:
                asked = [(f.topic, f.partition) for f in request.partitions]
                assert [(p.topic, p.partition) for p in response.partitions] == asked
        case m.OffsetsForLeaderEpochRequest(), m.OffsetsForLeaderEpochResponse():
            asked = [(e.topic, e.partition) for e in request.partitions]
            assert [(p.topic, p.partition) for p in response.partitions] == asked
            assert all(p.error is not Errors.UNKNOWN_SERVER_ERROR for p in response.partitions)
        case m.MetadataRequest(), m.MetadataResponse():
            assert all(t.error is not Errors.UNKNOWN_SERVER_ERROR for t in response.topics)
        case (
            (m.LeaderAndIsrRequest() | m.StopReplicaRequest()),
            (m.LeaderAndIsrResponse() | m.StopReplicaResponse()),
        ):
            assert response.error is not Errors.UNKNOWN_SERVER_ERROR
        case _:
            raise AssertionError(f"{type(response).__name__} answers {type(request).__name__}")


def check_appends(
    b: Broker,
    request: m.ProduceRequest,
    response: m.ProduceResponse,
    ends_before: dict[TopicPartition, int],
) -> None:
    """Each partition grew by exactly the records of its entries that got offsets: a
    refused partition got nothing, an appended one lost nothing."""
    grown = dict.fromkeys(ends_before, 0)
    for entry, answer in zip(request.partitions, response.partitions, strict=True):
        if answer.base_offset >= 0:
            assert answer.last_offset - answer.base_offset + 1 == len(entry.records)
            grown[entry.topic_partition] += len(entry.records)
    ends = {p.tp: p.log.log_end_offset for p in b.replicas.partitions()}
    assert ends == {tp: end + grown[tp] for tp, end in ends_before.items()}


def check_disk(b: Broker) -> None:
    assert [p.name for p in b.root.iterdir()] == ["data"], "a path escaped the data directory"
    for entry in b.data.iterdir():
        match = LOG_DIR.fullmatch(entry.name)
        assert match is not None, entry.name
        assert legal_topic(match.group(1)), entry.name


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(requests=st.lists(data_requests, min_size=1, max_size=6))
def test_hostile_data_requests_never_escape_a_handler_nor_the_data_directory(
    requests: list[DataRequest],
) -> None:
    with broker() as b:
        assert b.control.leader_and_isr(SEED).error is Errors.NONE
        seeded = b.client.produce(
            m.ProduceRequest.single("orders", 0, (m.ProducedRecord(None, b"a"),) * 2, acks=1)
        )
        assert seeded.only.error is Errors.NONE
        for request in requests:
            ends_before = {p.tp: p.log.log_end_offset for p in b.replicas.partitions()}
            response = send(b, request)
            failed = b.events.of_kind(EventKind.REQUEST_FAILED)
            assert not failed, failed
            check_answer(request, response)
            check_disk(b)
            # an acks=0 answer comes before the broker has even looked at the request: it
            # says nothing about an append, which may land at any moment after it
            if (
                isinstance(request, m.ProduceRequest)
                and request.acks != 0
                and isinstance(response, m.ProduceResponse)
            ):
                check_appends(b, request, response, ends_before)


def test_stop_replica_never_deletes_outside_the_data_directory() -> None:
    """The case that made topic names a security matter: StopReplica with delete for a topic
    named like a relative path would have removed `<data>/../../x-0`."""
    with broker() as b:
        victim = b.root / "x-0"
        victim.mkdir()
        request = m.StopReplicaRequest(
            m.ControlHeader(2, 5, BROKER_EPOCH),
            (m.StopReplicaPartitionState("../x", 0, -2, True),),
        )
        response = b.control.stop_replica(request)
        assert victim.is_dir()
        assert [e.error for e in response.partition_errors] == [Errors.INVALID_TOPIC_EXCEPTION]
        (invalid,) = b.events.of_kind(EventKind.REQUEST_INVALID)
        assert invalid["api"] == "StopReplica"
        assert invalid["error"] == "INVALID_TOPIC_EXCEPTION"
        victim.rmdir()
