"""`decide_isr_shrinks`: a round's ISR shrinks decided in one pass give each partition
`remove_replica_from_isr`'s outcome, stamped with the controller epoch, and set apart the
partitions that have nothing to shrink or cannot be decided."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from controller.isr_shrinks import decide_isr_shrinks
from controller.leader_election import remove_replica_from_isr
from domain import NO_LEADER, LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition

EPOCH = 4
TP = [TopicPartition("orders", p) for p in range(4)]


def state(
    leader: int, isr: tuple[int, ...], controller_epoch: int = 3
) -> LeaderIsrAndControllerEpoch:
    return LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, 6, isr, 11), controller_epoch)


def test_the_replica_leaves_the_isr_and_the_leadership_with_the_epoch_bumped() -> None:
    decided = decide_isr_shrinks(
        1, TP[:2], {TP[0]: state(1, (1, 2, 3)), TP[1]: state(2, (2, 1))}, EPOCH
    )
    assert decided.writes == {
        TP[0]: LeaderIsrAndControllerEpoch(LeaderAndIsr(NO_LEADER, 7, (2, 3), 11), EPOCH),
        TP[1]: LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 7, (2,), 11), EPOCH),
    }
    assert decided.unchanged == {}
    assert decided.undecided == []


def test_the_last_isr_member_stays_unless_the_bug_switch_removes_it() -> None:
    states = {TP[0]: state(1, (1,))}
    kept = decide_isr_shrinks(1, TP[:1], states, EPOCH).writes[TP[0]].leader_and_isr
    emptied = decide_isr_shrinks(1, TP[:1], states, EPOCH, keep_last_member=False)
    assert (kept.leader, kept.isr) == (NO_LEADER, (1,))
    assert emptied.writes[TP[0]].leader_and_isr.isr == ()


def test_partitions_without_the_replica_in_their_isr_are_left_as_they_are() -> None:
    current = state(2, (2, 3))
    decided = decide_isr_shrinks(1, TP[:1], {TP[0]: current}, EPOCH)
    assert decided.writes == {}
    assert decided.unchanged == {TP[0]: current}


def test_missing_states_and_states_of_a_newer_controller_are_undecided_in_order() -> None:
    states = {TP[1]: state(1, (1, 2), controller_epoch=EPOCH + 1), TP[2]: state(1, (1, 2))}
    decided = decide_isr_shrinks(1, [TP[3], TP[2], TP[1], TP[0]], states, EPOCH)
    assert decided.undecided == [TP[3], TP[1], TP[0]]
    assert list(decided.writes) == [TP[2]]


BROKERS = st.integers(min_value=0, max_value=5)
STATES = st.builds(
    LeaderIsrAndControllerEpoch,
    st.builds(
        LeaderAndIsr,
        st.sampled_from((NO_LEADER, 0, 1, 2, 3)),
        st.integers(min_value=0, max_value=100),
        st.lists(BROKERS, max_size=4, unique=True).map(tuple),
        st.integers(min_value=0, max_value=100),
    ),
    st.integers(min_value=0, max_value=EPOCH + 1),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.none() | STATES, max_size=8), BROKERS, st.booleans())
def test_each_partition_gets_remove_replica_from_isr_outcome(
    column: list[LeaderIsrAndControllerEpoch | None], replica: int, keep_last: bool
) -> None:
    partitions = [TopicPartition("t", p) for p in range(len(column))]
    states = {tp: s for tp, s in zip(partitions, column, strict=True) if s is not None}
    decided = decide_isr_shrinks(replica, partitions, states, EPOCH, keep_last)
    for tp in partitions:
        current = states.get(tp)
        if current is None or current.controller_epoch > EPOCH:
            assert tp in decided.undecided
            continue
        expected = remove_replica_from_isr(current.leader_and_isr, replica, keep_last)
        if expected == current.leader_and_isr:
            assert decided.unchanged[tp] is current
        else:
            assert decided.writes[tp] == LeaderIsrAndControllerEpoch(expected, EPOCH)
    assert len(decided.writes) + len(decided.unchanged) + len(decided.undecided) == len(partitions)
