"""`Errors`: Kafka's error names and numbers, and the mapping of unknown codes."""

from __future__ import annotations

import pytest

from rpc.errors import Errors

#: Kafka's `org.apache.kafka.common.protocol.Errors`, name -> code (2.x numbering).
KAFKA_CODES: dict[str, int] = {
    "UNKNOWN_SERVER_ERROR": -1,
    "NONE": 0,
    "OFFSET_OUT_OF_RANGE": 1,
    "CORRUPT_MESSAGE": 2,
    "UNKNOWN_TOPIC_OR_PARTITION": 3,
    "LEADER_NOT_AVAILABLE": 5,
    "NOT_LEADER_OR_FOLLOWER": 6,
    "REQUEST_TIMED_OUT": 7,
    "BROKER_NOT_AVAILABLE": 8,
    "REPLICA_NOT_AVAILABLE": 9,
    "MESSAGE_TOO_LARGE": 10,
    "STALE_CONTROLLER_EPOCH": 11,
    "NETWORK_EXCEPTION": 13,
    "INVALID_TOPIC_EXCEPTION": 17,
    "RECORD_LIST_TOO_LARGE": 18,
    "NOT_ENOUGH_REPLICAS": 19,
    "NOT_ENOUGH_REPLICAS_AFTER_APPEND": 20,
    "INVALID_REQUIRED_ACKS": 21,
    "CLUSTER_AUTHORIZATION_FAILED": 31,
    "INVALID_TIMESTAMP": 32,
    "UNSUPPORTED_VERSION": 35,
    "TOPIC_ALREADY_EXISTS": 36,
    "INVALID_PARTITIONS": 37,
    "INVALID_REPLICATION_FACTOR": 38,
    "INVALID_REPLICA_ASSIGNMENT": 39,
    "INVALID_CONFIG": 40,
    "NOT_CONTROLLER": 41,
    "INVALID_REQUEST": 42,
    "KAFKA_STORAGE_ERROR": 56,
    "REASSIGNMENT_IN_PROGRESS": 60,
    "FETCH_SESSION_ID_NOT_FOUND": 70,
    "INVALID_FETCH_SESSION_EPOCH": 71,
    "FENCED_LEADER_EPOCH": 74,
    "UNKNOWN_LEADER_EPOCH": 75,
    "STALE_BROKER_EPOCH": 77,
    "PREFERRED_LEADER_NOT_AVAILABLE": 80,
    "ELIGIBLE_LEADERS_NOT_AVAILABLE": 83,
    "ELECTION_NOT_NEEDED": 84,
    "NO_REASSIGNMENT_IN_PROGRESS": 85,
    "INVALID_UPDATE_VERSION": 95,
}


@pytest.mark.parametrize(("name", "code"), list(KAFKA_CODES.items()))
def test_member_has_kafkas_number(name: str, code: int) -> None:
    assert Errors[name].value == code


def test_every_member_is_checked_against_kafka() -> None:
    """A new member must be added to KAFKA_CODES with its number verified against Kafka."""
    assert {e.name for e in Errors} == set(KAFKA_CODES)


def test_codes_are_unique() -> None:
    assert len({e.value for e in Errors}) == len(Errors)


@pytest.mark.parametrize("member", list(Errors), ids=lambda e: e.name)
def test_from_code_maps_each_known_code_to_its_member(member: Errors) -> None:
    assert Errors.from_code(int(member)) is member


@pytest.mark.parametrize(
    "code",
    [
        pytest.param(4, id="invalid-fetch-size-not-listed"),
        pytest.param(12, id="gap-12"),
        pytest.param(86, id="past-the-end"),
        pytest.param(9999, id="far-past-the-end"),
        pytest.param(-2, id="negative"),
        pytest.param(-32768, id="int16-min"),
    ],
)
def test_from_code_maps_unknown_codes_to_unknown_server_error(code: int) -> None:
    assert Errors.from_code(code) is Errors.UNKNOWN_SERVER_ERROR


def test_errors_are_plain_ints_on_the_wire() -> None:
    assert isinstance(Errors.NOT_CONTROLLER, int)
    assert int(Errors.STALE_BROKER_EPOCH) == 77
