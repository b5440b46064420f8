"""`broker_node.request_validation` and `broker_node.client_request_validation` as
tables: one valid request per API, then one field made hostile per row, with the error
Kafka would answer and whether it refuses the whole request, the entry, or leaves a live
broker out."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings

from broker_node import client_request_validation as cv
from broker_node import request_validation as v
from broker_node.validation_rules import Verdict, legal_topic
from domain import EndPoint, TopicPartition
from rpc import limits
from rpc import messages as m
from rpc import strategies as rt
from rpc.errors import Errors

E = Errors
HEADER = m.ControlHeader(controller_id=1, controller_epoch=5, broker_epoch=100)
TP = TopicPartition("orders", 0)
LAI = m.LeaderAndIsrPartitionState("orders", 0, 5, 1, 3, (1, 2), 7, (1, 2, 3))
UMD = m.UpdateMetadataPartitionState("orders", 0, 5, 1, 3, (1, 2), 7, (1, 2, 3), (3,))
STOP = m.StopReplicaPartitionState("orders", 0, 3, False)
BROKER = m.LiveBroker(1, (EndPoint("b1", 9092),), "r1")
FETCH = m.FetchPartition("orders", 0, 0, 3, 500)
EPOCH = m.EpochPartition("orders", 0, 3, 2)
RECORD = m.ProducedRecord(b"k", b"v", 0)


def entry_error(verdict: Verdict) -> Errors | None:
    (error,) = verdict.invalid.values() if verdict.invalid else (None,)
    return error


# -- topic names ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "legal"),
    [
        ("orders", True),
        ("a.b_c-1", True),
        ("x" * 249, True),
        ("", False),
        (".", False),
        ("..", False),
        ("../etc", False),
        ("a/b", False),
        ("x" * 250, False),
        ("é", False),
        ("a b", False),
        ("t\x00", False),
    ],
)
def test_topic_names_follow_kafkas_rule(name: str, legal: bool) -> None:
    assert legal_topic(name) is legal


# -- control plane -------------------------------------------------------------------------

HEADER_CASES = [
    ({"controller_id": -1}, E.INVALID_REQUEST),
    ({"controller_epoch": -1}, E.INVALID_REQUEST),
    ({"broker_epoch": -2}, E.INVALID_REQUEST),
    ({"broker_epoch": -1}, E.NONE),
    ({"controller_id": 0, "controller_epoch": 0}, E.NONE),
]


@pytest.mark.parametrize(("fields", "error"), HEADER_CASES)
def test_every_control_request_checks_its_header(fields: dict[str, Any], error: Errors) -> None:
    header = replace(HEADER, **fields)
    assert v.leader_and_isr(m.LeaderAndIsrRequest(header, (LAI,))).error is error
    assert v.update_metadata(m.UpdateMetadataRequest(header, (UMD,), (BROKER,))).error is error
    assert v.stop_replica(m.StopReplicaRequest(header, (STOP,))).error is error


LAI_ENTRY_CASES = [
    ({}, None),
    ({"topic": ""}, E.INVALID_TOPIC_EXCEPTION),
    ({"topic": "../../etc"}, E.INVALID_TOPIC_EXCEPTION),
    ({"partition": -1}, E.INVALID_REQUEST),
    ({"controller_epoch": -1}, E.INVALID_REQUEST),
    ({"leader_epoch": -1}, E.INVALID_REQUEST),
    ({"zk_version": -2}, E.INVALID_REQUEST),
    ({"zk_version": -1}, None),
    ({"leader": -1}, None),
    ({"leader": -2}, E.INVALID_REQUEST),
    ({"leader": 4}, E.INVALID_REPLICA_ASSIGNMENT),
    ({"replicas": ()}, E.INVALID_REPLICA_ASSIGNMENT),
    ({"replicas": (1, 1, 2)}, E.INVALID_REPLICA_ASSIGNMENT),
    ({"replicas": (1, -3)}, E.INVALID_REPLICA_ASSIGNMENT),
    (
        {"replicas": tuple(range(limits.MAX_REPLICAS_PER_PARTITION + 1))},
        E.INVALID_REPLICA_ASSIGNMENT,
    ),
    ({"isr": (1, 1)}, E.INVALID_REQUEST),
    ({"isr": (-1,)}, E.INVALID_REQUEST),
    ({"adding_replicas": (3, 3)}, E.INVALID_REQUEST),
    ({"removing_replicas": (-5,)}, E.INVALID_REQUEST),
]


@pytest.mark.parametrize(("fields", "error"), LAI_ENTRY_CASES)
def test_leader_and_isr_judges_each_partition(fields: dict[str, Any], error: Errors | None) -> None:
    other = LAI._replace(partition=1)
    verdict = v.leader_and_isr(m.LeaderAndIsrRequest(HEADER, (LAI._replace(**fields), other)))
    assert verdict.error is E.NONE
    assert entry_error(verdict) is error
    assert TopicPartition("orders", 1) not in verdict.invalid


LAI_REQUEST_CASES = [
    ((LAI, LAI), (), "listed twice"),
    ((LAI,), (m.LiveLeader(-1, "b", 1),), "negative broker id"),
    ((LAI,), (m.LiveLeader(1, "b", 1), m.LiveLeader(1, "c", 2)), "listed twice"),
]


@pytest.mark.parametrize(("states", "leaders", "words"), LAI_REQUEST_CASES)
def test_leader_and_isr_refuses_the_whole_request(
    states: tuple[m.LeaderAndIsrPartitionState, ...],
    leaders: tuple[m.LiveLeader, ...],
    words: str,
) -> None:
    verdict = v.leader_and_isr(m.LeaderAndIsrRequest(HEADER, states, leaders))
    assert verdict.error is E.INVALID_REQUEST
    assert words in verdict.reason


@pytest.mark.parametrize(
    ("leader", "words"),
    [(m.LiveLeader(1, "b", 70000), "port"), (m.LiveLeader(1, "x" * 300, 1), "host")],
)
def test_a_live_leader_without_a_usable_endpoint_is_left_out(
    leader: m.LiveLeader, words: str
) -> None:
    """Its partitions are still applied; nobody follows it until a request names it well
    (one bad registration in ZooKeeper must not stop every LeaderAndIsr)."""
    good = m.LiveLeader(2, "b2", 9092)
    verdict = v.leader_and_isr(m.LeaderAndIsrRequest(HEADER, (LAI,), (leader, good)))
    assert verdict.error is E.NONE
    assert verdict.invalid == {}
    assert verdict.left_out == {1}
    assert words in verdict.reason


def test_a_request_over_the_partition_bound_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_PARTITIONS_PER_REQUEST", 2)
    states = tuple(STOP._replace(partition=p) for p in range(3))
    verdict = v.stop_replica(m.StopReplicaRequest(HEADER, states))
    assert verdict.error is E.INVALID_REQUEST
    assert "over 2" in verdict.reason


UMD_ENTRY_CASES = [
    ({}, None),
    ({"leader": -2, "leader_epoch": 0}, None),
    ({"leader": -3}, E.INVALID_REQUEST),
    ({"leader_epoch": -1}, None),
    ({"leader_epoch": -2}, E.INVALID_REQUEST),
    ({"topic": "a b"}, E.INVALID_TOPIC_EXCEPTION),
    ({"replicas": (1, 1)}, E.INVALID_REPLICA_ASSIGNMENT),
    ({"leader": 7}, E.INVALID_REPLICA_ASSIGNMENT),
    ({"offline_replicas": (-1,)}, E.INVALID_REQUEST),
]


@pytest.mark.parametrize(("fields", "error"), UMD_ENTRY_CASES)
def test_update_metadata_judges_each_partition(
    fields: dict[str, Any], error: Errors | None
) -> None:
    request = m.UpdateMetadataRequest(HEADER, (UMD._replace(**fields),), (BROKER,))
    assert entry_error(v.update_metadata(request)) is error


@pytest.mark.parametrize("brokers", [(BROKER, BROKER), (replace(BROKER, id=-1),)])
def test_update_metadata_refuses_bad_live_broker_ids(brokers: tuple[m.LiveBroker, ...]) -> None:
    request = m.UpdateMetadataRequest(HEADER, (UMD,), brokers)
    assert v.update_metadata(request).error is E.INVALID_REQUEST


@pytest.mark.parametrize(
    "bad",
    [
        replace(BROKER, endpoints=(EndPoint("b1", -1),)),
        replace(BROKER, endpoints=(EndPoint("b1", 1),) * (limits.MAX_ENDPOINTS_PER_BROKER + 1)),
        replace(BROKER, rack="r" * 300),
        replace(BROKER, endpoints=(EndPoint("x" * 300, 1),)),
    ],
)
def test_update_metadata_leaves_out_a_live_broker_without_usable_endpoints(
    bad: m.LiveBroker,
) -> None:
    other = replace(BROKER, id=2, endpoints=(EndPoint("b2", 9092),))
    verdict = v.update_metadata(m.UpdateMetadataRequest(HEADER, (UMD,), (bad, other)))
    assert verdict.error is E.NONE
    assert verdict.left_out == {1}


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({}, None),
        ({"leader_epoch": -1}, None),
        ({"leader_epoch": -2}, None),
        ({"leader_epoch": -3}, E.INVALID_REQUEST),
        ({"partition": -1}, E.INVALID_REQUEST),
        ({"topic": "../../x", "delete_partition": True}, E.INVALID_TOPIC_EXCEPTION),
    ],
)
def test_stop_replica_judges_each_partition(fields: dict[str, Any], error: Errors | None) -> None:
    request = m.StopReplicaRequest(HEADER, (STOP._replace(**fields),))
    assert entry_error(v.stop_replica(request)) is error


@pytest.mark.parametrize(
    ("broker_id", "broker_epoch", "error"),
    [(1, 100, E.NONE), (1, -1, E.NONE), (-1, 100, E.INVALID_REQUEST), (1, -2, E.INVALID_REQUEST)],
)
def test_controlled_shutdown_checks_its_ids(
    broker_id: int, broker_epoch: int, error: Errors
) -> None:
    assert (
        v.controlled_shutdown(m.ControlledShutdownRequest(broker_id, broker_epoch)).error is error
    )


@pytest.mark.parametrize(
    ("request_", "error", "entry"),
    [
        (m.ElectLeadersRequest(0, (TP,)), E.NONE, None),
        (m.ElectLeadersRequest(1, ()), E.NONE, None),
        (m.ElectLeadersRequest(2, (TP,)), E.INVALID_REQUEST, None),
        (m.ElectLeadersRequest(0, (TP,), timeout_ms=-1), E.INVALID_REQUEST, None),
        (m.ElectLeadersRequest(0, (TP,), timeout_ms=10**9), E.INVALID_REQUEST, None),
        (m.ElectLeadersRequest(0, (TP, TP)), E.INVALID_REQUEST, None),
        (m.ElectLeadersRequest(0, (TopicPartition("..", 0),)), E.NONE, E.INVALID_TOPIC_EXCEPTION),
        (m.ElectLeadersRequest(0, (TopicPartition("t", -1),)), E.NONE, E.INVALID_REQUEST),
    ],
)
def test_elect_leaders(
    request_: m.ElectLeadersRequest, error: Errors, entry: Errors | None
) -> None:
    verdict = v.elect_leaders(request_)
    assert verdict.error is error
    assert entry_error(verdict) is entry


# -- data plane ----------------------------------------------------------------------------

PRODUCE = m.ProduceRequest.single("orders", 0, (RECORD,), acks=-1, timeout_ms=1000)
ENTRY = PRODUCE.partitions[0]


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({}, E.NONE),
        ({"acks": 0}, E.NONE),
        ({"acks": 2}, E.INVALID_REQUIRED_ACKS),
        ({"acks": -2}, E.INVALID_REQUIRED_ACKS),
        ({"timeout_ms": -1}, E.INVALID_REQUEST),
        ({"timeout_ms": limits.MAX_TIMEOUT_MS + 1}, E.INVALID_REQUEST),
        ({"partitions": ()}, E.INVALID_REQUEST),
    ],
)
def test_produce(fields: dict[str, Any], error: Errors) -> None:
    assert cv.produce(replace(PRODUCE, **fields)).error is error


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({}, None),
        ({"topic": ""}, E.INVALID_TOPIC_EXCEPTION),
        ({"partition": -1}, E.UNKNOWN_TOPIC_OR_PARTITION),
        ({"records": ()}, E.INVALID_REQUEST),
        ({"records": (replace(RECORD, timestamp_ms=-1),)}, None),
        ({"records": (replace(RECORD, timestamp_ms=-2),)}, E.INVALID_TIMESTAMP),
    ],
)
def test_a_produce_partition_is_refused_alone(fields: dict[str, Any], error: Errors | None) -> None:
    good = m.PartitionRecords("orders", 1, (RECORD,))
    verdict = cv.produce(replace(PRODUCE, partitions=(replace(ENTRY, **fields), good)))
    assert verdict.error is E.NONE
    assert entry_error(verdict) is error


def test_a_partition_named_twice_is_refused_in_every_entry() -> None:
    verdict = cv.produce(replace(PRODUCE, partitions=(ENTRY, ENTRY)))
    assert verdict.error is E.NONE
    assert verdict.invalid == {TopicPartition("orders", 0): E.INVALID_REQUEST}
    assert cv.named_twice(replace(PRODUCE, partitions=(ENTRY, ENTRY))) == {ENTRY.topic_partition}


def test_produce_over_the_partition_bound_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_PARTITIONS_PER_REQUEST", 2)
    many = tuple(replace(ENTRY, partition=p) for p in range(3))
    assert cv.produce(replace(PRODUCE, partitions=many)).error is E.INVALID_REQUEST


def test_produce_over_the_record_bound_is_too_large(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_RECORDS_PER_PRODUCE", 2)
    verdict = cv.produce(replace(PRODUCE, partitions=(replace(ENTRY, records=(RECORD,) * 3),)))
    assert entry_error(verdict) is E.RECORD_LIST_TOO_LARGE


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({}, None),
        ({"current_leader_epoch": -1}, None),
        ({"current_leader_epoch": -2}, E.INVALID_REQUEST),
        ({"fetch_offset": -1}, E.OFFSET_OUT_OF_RANGE),
        ({"partition": -1}, E.UNKNOWN_TOPIC_OR_PARTITION),
        ({"topic": "."}, E.INVALID_TOPIC_EXCEPTION),
        ({"max_records": 0}, E.INVALID_REQUEST),
        ({"max_records": limits.MAX_RECORDS_PER_FETCH_PARTITION + 1}, E.INVALID_REQUEST),
    ],
)
def test_fetch_judges_each_partition(fields: dict[str, Any], error: Errors | None) -> None:
    verdict = cv.fetch(m.FetchRequest((replace(FETCH, **fields),), replica_id=-1, max_wait_ms=0))
    assert verdict.error is E.NONE
    assert entry_error(verdict) is error


@pytest.mark.parametrize(
    "request_",
    [
        m.FetchRequest((FETCH,), replica_id=-2),
        m.FetchRequest((FETCH,), max_wait_ms=-1),
        m.FetchRequest((FETCH,), max_wait_ms=limits.MAX_TIMEOUT_MS + 1),
        m.FetchRequest((FETCH, FETCH)),
        m.FetchRequest((FETCH,), session_id=-1, session_epoch=1),
        m.FetchRequest((FETCH,), session_id=7, session_epoch=-2),
        m.FetchRequest((), session_epoch=m.INITIAL_EPOCH, forgotten=(FETCH.topic_partition,)),
        m.FetchRequest((), session_id=7, session_epoch=3, forgotten=(FETCH.topic_partition,) * 2),
    ],
)
def test_fetch_refuses_the_whole_request(request_: m.FetchRequest) -> None:
    assert cv.fetch(request_).error is E.INVALID_REQUEST


def test_an_incremental_fetch_may_name_nothing_and_forget_partitions() -> None:
    request = m.FetchRequest((), session_id=7, session_epoch=3, forgotten=(FETCH.topic_partition,))
    assert cv.fetch(request).ok


@pytest.mark.parametrize(
    ("request_", "error", "entry"),
    [
        (m.OffsetsForLeaderEpochRequest((EPOCH,), 2), E.NONE, None),
        (m.OffsetsForLeaderEpochRequest((EPOCH, EPOCH), 2), E.NONE, None),
        (m.OffsetsForLeaderEpochRequest((EPOCH,), -2), E.INVALID_REQUEST, None),
        (
            m.OffsetsForLeaderEpochRequest((replace(EPOCH, leader_epoch=-2),), 2),
            E.NONE,
            E.INVALID_REQUEST,
        ),
        (
            m.OffsetsForLeaderEpochRequest((replace(EPOCH, topic=""),), 2),
            E.NONE,
            E.INVALID_TOPIC_EXCEPTION,
        ),
    ],
)
def test_offsets_for_leader_epoch(
    request_: m.OffsetsForLeaderEpochRequest, error: Errors, entry: Errors | None
) -> None:
    verdict = cv.offsets_for_leader_epoch(request_)
    assert verdict.error is error
    assert entry_error(verdict) is entry


def test_metadata_answers_an_illegal_topic_for_itself() -> None:
    verdict = cv.metadata(m.MetadataRequest(("orders", "../x")))
    assert verdict.error is E.NONE
    assert verdict.invalid == {TopicPartition("../x", -1): E.INVALID_TOPIC_EXCEPTION}
    assert cv.metadata(m.MetadataRequest(())).ok


# -- whole requests at once ------------------------------------------------------------------


def _one_by_one(states: tuple[Any, ...], entry: Any) -> dict[TopicPartition, Errors]:
    judged = {s.topic_partition: entry(s)[0] for s in states}
    return {tp: error for tp, error in judged.items() if error is not Errors.NONE}


def _judged_as_one_by_one(request: Any, validate: Any, all_fine: Any, entry: Any) -> None:
    states = request.partition_states
    if all_fine(states):
        assert _one_by_one(states, entry) == {}
    verdict = validate(request)
    if verdict.error is Errors.NONE:
        assert dict(verdict.invalid) == _one_by_one(states, entry)


@settings(max_examples=300, deadline=None)
@given(request=rt.leader_and_isr_requests())
def test_a_leader_and_isr_checked_at_once_is_judged_as_one_by_one(
    request: m.LeaderAndIsrRequest,
) -> None:
    """The column checks vouch for a request only when every entry passes on its own,
    and a request's verdict is what judging each entry finds."""
    _judged_as_one_by_one(
        request, v.leader_and_isr, v._leader_and_isr_all_fine, v._leader_and_isr_entry
    )


@settings(max_examples=300, deadline=None)
@given(request=rt.update_metadata_requests)
def test_an_update_metadata_checked_at_once_is_judged_as_one_by_one(
    request: m.UpdateMetadataRequest,
) -> None:
    _judged_as_one_by_one(
        request, v.update_metadata, v._update_metadata_all_fine, v._update_metadata_entry
    )


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"leader": 9}, E.INVALID_REPLICA_ASSIGNMENT),
        ({"isr": (1, 1)}, E.INVALID_REQUEST),
        ({"topic": "a/b"}, E.INVALID_TOPIC_EXCEPTION),
        ({"zk_version": -2}, E.INVALID_REQUEST),
    ],
)
def test_one_bad_state_among_thousands_is_found(fields: dict[str, Any], error: Errors) -> None:
    """The column checks see the one bad entry and hand the request to the entry checks,
    which name it."""
    good = [LAI._replace(partition=p) for p in range(5_000)]
    bad = LAI._replace(partition=2_500, **fields)
    good[2_500] = bad
    verdict = v.leader_and_isr(m.LeaderAndIsrRequest(HEADER, tuple(good), ()))
    assert dict(verdict.invalid) == {bad.topic_partition: error}
