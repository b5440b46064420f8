"""`rpc.messages.PartitionErrors`: an answer's per-partition errors kept as the wire's runs,
read as entries only when asked, and `failed_entries` reading only the errors."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from domain import TopicPartition
from rpc import messages as m
from rpc import wire
from rpc.errors import Errors
from testbed_rpc import control_pb2 as pb

T0, T1, U0 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0)


def runs_of(*runs: tuple[str, tuple[int, ...], tuple[int, ...]]) -> m.PartitionErrors:
    return m.PartitionErrors(m.ErrorRun(*run) for run in runs)


def test_the_runs_read_as_the_entries_a_tuple_holds() -> None:
    errors = runs_of(("t", (0, 1), (0, 56)), ("u", (0,), (0,)))
    expected = (
        m.PartitionError(T0, Errors.NONE),
        m.PartitionError(T1, Errors.KAFKA_STORAGE_ERROR),
        m.PartitionError(U0, Errors.NONE),
    )
    assert errors == expected
    assert expected == errors
    assert len(errors) == 3
    assert errors[1] == expected[1]
    assert list(errors) == list(expected)
    assert hash(errors) == hash(expected)
    assert errors != expected[:2]


def test_failed_reads_only_the_errors_other_than_none() -> None:
    errors = runs_of(("t", (0, 1), (0, 56)), ("u", (0,), (0,)))
    assert list(errors.failed()) == [m.PartitionError(T1, Errors.KAFKA_STORAGE_ERROR)]
    assert list(m.failed_entries(errors)) == [m.PartitionError(T1, Errors.KAFKA_STORAGE_ERROR)]
    assert list(runs_of(("t", (0, 1), (0, 0))).failed()) == []


def test_an_unknown_code_reads_unknown_server_error() -> None:
    errors = runs_of(("t", (0,), (9999,)))
    assert list(errors.failed()) == [m.PartitionError(T0, Errors.UNKNOWN_SERVER_ERROR)]


def test_failed_entries_of_a_plain_tuple_filters_it() -> None:
    entries = (m.PartitionError(T0, Errors.NONE), m.PartitionError(T1, Errors.NOT_CONTROLLER))
    assert list(m.failed_entries(entries)) == [entries[1]]


def test_a_decoded_answer_keeps_runs_and_its_errors_read_without_building_the_rest() -> None:
    message = pb.LeaderAndIsrResponse(
        topic_errors=[
            pb.TopicErrors(topic="t", partitions=list(range(50_000)), error_codes=[0] * 50_000),
            pb.TopicErrors(topic="u", partitions=[0, 1], error_codes=[0, 56]),
        ]
    )
    response = wire.leader_and_isr_response_from_pb(message)
    assert isinstance(response.partition_errors, m.PartitionErrors)
    assert list(m.failed_entries(response.partition_errors)) == [
        m.PartitionError(TopicPartition("u", 1), Errors.KAFKA_STORAGE_ERROR)
    ]
    assert len(response.partition_errors) == 50_002


@given(
    codes=st.lists(st.sampled_from([0, 0, 0, 6, 56, -1, 4242]), max_size=30),
    topic=st.sampled_from(["t", "u"]),
)
def test_failed_is_the_entries_filtered(codes: list[int], topic: str) -> None:
    errors = runs_of((topic, tuple(range(len(codes))), tuple(codes)))
    assert list(errors.failed()) == [e for e in errors if e.error is not Errors.NONE]
