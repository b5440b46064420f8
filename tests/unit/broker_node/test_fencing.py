"""Broker-side fencing decisions (docs/fencing.md) as tables, with Kafka 2.8's semantics."""

from __future__ import annotations

import pytest

from broker_node.fencing import (
    check_control_request,
    check_leader_and_isr_partition,
    check_stop_replica_partition,
    is_broker_epoch_stale,
)
from rpc.errors import Errors

OUR_BROKER_EPOCH = 500
HIGHEST_CONTROLLER_EPOCH = 7


@pytest.mark.parametrize(
    ("request_broker_epoch", "stale"),
    [
        pytest.param(499, True, id="older-is-stale"),
        pytest.param(0, True, id="much-older-is-stale"),
        pytest.param(500, False, id="equal-passes"),
        pytest.param(501, False, id="newer-passes"),
        pytest.param(-1, False, id="unknown-passes"),
    ],
)
def test_broker_epoch_staleness(request_broker_epoch: int, stale: bool) -> None:
    assert is_broker_epoch_stale(request_broker_epoch, OUR_BROKER_EPOCH) is stale


@pytest.mark.parametrize(
    ("controller_epoch", "broker_epoch", "expected"),
    [
        pytest.param(7, 500, Errors.NONE, id="current-epochs-pass"),
        pytest.param(7, 499, Errors.STALE_BROKER_EPOCH, id="stale-broker-epoch"),
        pytest.param(7, 1, Errors.STALE_BROKER_EPOCH, id="much-older-broker-epoch"),
        pytest.param(7, -1, Errors.NONE, id="unknown-broker-epoch-passes"),
        pytest.param(7, 501, Errors.NONE, id="newer-broker-epoch-passes"),
        pytest.param(6, 500, Errors.STALE_CONTROLLER_EPOCH, id="older-controller-epoch"),
        pytest.param(0, -1, Errors.STALE_CONTROLLER_EPOCH, id="older-controller-unknown-broker"),
        pytest.param(8, 500, Errors.NONE, id="newer-controller-epoch-passes"),
        pytest.param(6, 499, Errors.STALE_BROKER_EPOCH, id="both-stale-broker-epoch-checked-first"),
        pytest.param(
            6, 501, Errors.STALE_CONTROLLER_EPOCH, id="newer-broker-epoch-older-controller"
        ),
    ],
)
def test_control_request_verdict(
    controller_epoch: int, broker_epoch: int, expected: Errors
) -> None:
    verdict = check_control_request(
        request_controller_epoch=controller_epoch,
        request_broker_epoch=broker_epoch,
        highest_controller_epoch=HIGHEST_CONTROLLER_EPOCH,
        current_broker_epoch=OUR_BROKER_EPOCH,
    )
    assert verdict is expected


def test_stale_broker_epoch_is_kafkas_code_77() -> None:
    assert check_control_request(7, 1, 7, 500) == 77


def test_stale_controller_epoch_is_kafkas_code_11() -> None:
    assert check_control_request(6, 500, 7, 500) == 11


LOCAL = 2


@pytest.mark.parametrize(
    ("request_leader_epoch", "current_leader_epoch", "replicas", "expected"),
    [
        pytest.param(6, 5, (1, 2, 3), Errors.NONE, id="newer-epoch-hosted-passes"),
        pytest.param(5, 5, (1, 2, 3), Errors.STALE_CONTROLLER_EPOCH, id="equal-epoch-stale"),
        pytest.param(4, 5, (1, 2, 3), Errors.STALE_CONTROLLER_EPOCH, id="older-epoch-stale"),
        pytest.param(0, None, (1, 2, 3), Errors.NONE, id="not-hosted-epoch-0-passes"),
        pytest.param(9, None, (2,), Errors.NONE, id="not-hosted-newer-passes"),
        pytest.param(6, 5, (1, 3), Errors.UNKNOWN_TOPIC_OR_PARTITION, id="newer-but-not-a-replica"),
        pytest.param(
            0, None, (1, 3), Errors.UNKNOWN_TOPIC_OR_PARTITION, id="not-hosted-not-a-replica"
        ),
        pytest.param(
            6, 5, (), Errors.UNKNOWN_TOPIC_OR_PARTITION, id="empty-replicas-not-a-replica"
        ),
        pytest.param(
            5, 5, (1, 3), Errors.STALE_CONTROLLER_EPOCH, id="epoch-checked-before-replicas"
        ),
    ],
)
def test_leader_and_isr_partition_verdict(
    request_leader_epoch: int,
    current_leader_epoch: int | None,
    replicas: tuple[int, ...],
    expected: Errors,
) -> None:
    verdict = check_leader_and_isr_partition(
        request_leader_epoch, current_leader_epoch, replicas, LOCAL
    )
    assert verdict is expected


def test_unknown_topic_or_partition_is_kafkas_code_3() -> None:
    assert check_leader_and_isr_partition(6, 5, (1, 3), LOCAL) == 3


@pytest.mark.parametrize(
    ("request_leader_epoch", "current_leader_epoch", "expected"),
    [
        pytest.param(-1, 5, Errors.NONE, id="no-epoch-passes"),
        pytest.param(-2, 5, Errors.NONE, id="epoch-during-delete-passes"),
        pytest.param(6, 5, Errors.NONE, id="newer-passes"),
        pytest.param(5, 5, Errors.FENCED_LEADER_EPOCH, id="equal-fenced"),
        pytest.param(0, 0, Errors.FENCED_LEADER_EPOCH, id="equal-zero-fenced"),
        pytest.param(4, 5, Errors.FENCED_LEADER_EPOCH, id="older-fenced"),
        pytest.param(0, 5, Errors.FENCED_LEADER_EPOCH, id="epoch-zero-older-fenced"),
        pytest.param(3, None, Errors.NONE, id="not-hosted-passes"),
        pytest.param(-2, None, Errors.NONE, id="not-hosted-during-delete-passes"),
        pytest.param(-1, None, Errors.NONE, id="not-hosted-no-epoch-passes"),
    ],
)
def test_stop_replica_partition_verdict(
    request_leader_epoch: int, current_leader_epoch: int | None, expected: Errors
) -> None:
    assert check_stop_replica_partition(request_leader_epoch, current_leader_epoch) is expected


def test_fenced_leader_epoch_is_kafkas_code_74() -> None:
    assert check_stop_replica_partition(4, 5) == 74
