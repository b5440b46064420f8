"""The data plane's leader-epoch rule, owned by `broker_node.partition`: the pure
`leader_epoch_error` (a table of older, equal and newer epochs and the sentinels -1 and -2,
plus properties) and `Partition.check_leader_epoch`, which applies it only while the replica
leads. Fetch and OffsetsForLeaderEpoch ask the partition; these tests pin the answers they
get, exactly as the broker gave them before the rule had one owner.

Setup: broker 1 hosts "orders" partition 0 on a log in pytest's temporary directory; the
controller makes it leader (or a follower of broker 2) at leader epoch 5.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker_node.partition import Partition, leader_epoch_error
from broker_node.partition_isr import PartitionConfig
from broker_node.storage import PartitionLog
from broker_node.testing import FakeIsrStore
from domain import EPOCH_DURING_DELETE, NO_EPOCH, TopicPartition
from eventlog.testing import RecordingEventLog
from rpc import messages as m
from rpc.errors import Errors

TP = TopicPartition("orders", 0)
EPOCH = 5

epochs = st.integers(min_value=0, max_value=2**31 - 1)


@pytest.mark.parametrize(
    ("request_epoch", "leader_epoch", "error"),
    [
        pytest.param(EPOCH - 1, EPOCH, Errors.FENCED_LEADER_EPOCH, id="older-fenced"),
        pytest.param(0, EPOCH, Errors.FENCED_LEADER_EPOCH, id="much-older-fenced"),
        pytest.param(EPOCH, EPOCH, Errors.NONE, id="equal-passes"),
        pytest.param(EPOCH + 1, EPOCH, Errors.UNKNOWN_LEADER_EPOCH, id="newer-unknown"),
        pytest.param(NO_EPOCH, EPOCH, Errors.NONE, id="minus-one-skips-the-check"),
        pytest.param(NO_EPOCH, 0, Errors.NONE, id="minus-one-skips-at-epoch-zero"),
        pytest.param(EPOCH_DURING_DELETE, EPOCH, Errors.FENCED_LEADER_EPOCH, id="minus-two-older"),
        pytest.param(EPOCH_DURING_DELETE, 0, Errors.FENCED_LEADER_EPOCH, id="minus-two-below-0"),
        pytest.param(0, 0, Errors.NONE, id="epoch-zero-equal"),
        pytest.param(0, NO_EPOCH, Errors.UNKNOWN_LEADER_EPOCH, id="any-epoch-newer-than-none"),
    ],
)
def test_leader_epoch_rule_table(request_epoch: int, leader_epoch: int, error: Errors) -> None:
    assert leader_epoch_error(request_epoch, leader_epoch) is error


@given(request_epoch=epochs, leader_epoch=epochs)
def test_leader_epoch_rule_orders_real_epochs(request_epoch: int, leader_epoch: int) -> None:
    error = leader_epoch_error(request_epoch, leader_epoch)
    if request_epoch < leader_epoch:
        assert error is Errors.FENCED_LEADER_EPOCH
    elif request_epoch > leader_epoch:
        assert error is Errors.UNKNOWN_LEADER_EPOCH
    else:
        assert error is Errors.NONE


@given(leader_epoch=epochs)
def test_minus_one_passes_and_minus_two_is_fenced_at_every_epoch(leader_epoch: int) -> None:
    assert leader_epoch_error(NO_EPOCH, leader_epoch) is Errors.NONE
    assert leader_epoch_error(EPOCH_DURING_DELETE, leader_epoch) is Errors.FENCED_LEADER_EPOCH


@pytest.fixture
def partition(tmp_path: Path) -> Iterator[Partition]:
    """Broker 1's replica of `TP`, neither leading nor following yet."""
    log = PartitionLog(tmp_path / "orders-0")
    yield Partition(
        TP,
        1,
        log,
        FakeIsrStore(),
        RecordingEventLog("broker-1"),
        PartitionConfig(),
        lambda _tp: None,
    )
    log.close()


def _state(leader: int) -> m.LeaderAndIsrPartitionState:
    return m.LeaderAndIsrPartitionState(TP.topic, TP.partition, 3, leader, EPOCH, (1, 2), 0, (1, 2))


ALL_EPOCHS = [EPOCH_DURING_DELETE, NO_EPOCH, 0, EPOCH - 1, EPOCH, EPOCH + 1]


def test_a_leader_answers_the_rule_for_its_epoch(partition: Partition) -> None:
    partition.make_leader(_state(leader=1))
    answers = {epoch: partition.check_leader_epoch(epoch) for epoch in ALL_EPOCHS}
    assert answers == {epoch: leader_epoch_error(epoch, EPOCH) for epoch in ALL_EPOCHS}
    assert answers[EPOCH - 1] is Errors.FENCED_LEADER_EPOCH
    assert answers[EPOCH + 1] is Errors.UNKNOWN_LEADER_EPOCH


def test_a_leader_moves_its_rule_with_a_new_epoch(partition: Partition) -> None:
    partition.make_leader(_state(leader=1))
    partition.make_leader(
        m.LeaderAndIsrPartitionState(TP.topic, TP.partition, 3, 1, EPOCH + 1, (1, 2), 1, (1, 2))
    )
    assert partition.check_leader_epoch(EPOCH) is Errors.FENCED_LEADER_EPOCH
    assert partition.check_leader_epoch(EPOCH + 1) is Errors.NONE


def test_a_follower_or_stopped_replica_refuses_every_epoch(partition: Partition) -> None:
    assert {partition.check_leader_epoch(e) for e in ALL_EPOCHS} == {Errors.NOT_LEADER_OR_FOLLOWER}
    partition.make_follower(_state(leader=2))
    assert {partition.check_leader_epoch(e) for e in ALL_EPOCHS} == {Errors.NOT_LEADER_OR_FOLLOWER}
    partition.make_leader(_state(leader=1))
    partition.stop()
    assert {partition.check_leader_epoch(e) for e in ALL_EPOCHS} == {Errors.NOT_LEADER_OR_FOLLOWER}


@pytest.mark.parametrize("epoch", ALL_EPOCHS)
def test_fetch_and_epoch_queries_answer_what_the_rule_says(
    partition: Partition, epoch: int
) -> None:
    partition.make_leader(_state(leader=1))
    expected = partition.check_leader_epoch(epoch)
    fetched = partition.read(m.FetchPartition(TP.topic, TP.partition, 0, epoch), -1)
    assert fetched.error is expected
    assert partition.end_offset_for_epoch(epoch, EPOCH).error is expected
