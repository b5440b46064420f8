"""`decide_isr_shrinks`: the ISR shrinks of one round of partitions, decided in one pass
over their columns (the partitions and their states) instead of one call per partition.

Pure: no I/O, logging or metrics, nothing read from the controller context, so any thread
may call it; in the controller it is the replica state machine's, on the event thread.
Each partition's outcome is `controller.leader_election.remove_replica_from_isr`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from domain import NO_LEADER, LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition


@dataclass(frozen=True, slots=True)
class ShrinkRound:
    """What one pass decided for a round of partitions.

    `writes`: the shrunk states to write, each conditional on the zkVersion it carries
    (that of the state it was decided from). `unchanged`: partitions whose ISR already
    lacks the replica, with their state (nothing to write). `undecided`: partitions
    without a state, or whose state a newer controller wrote, in the order given; the
    caller reports them.
    """

    writes: dict[TopicPartition, LeaderIsrAndControllerEpoch]
    unchanged: dict[TopicPartition, LeaderIsrAndControllerEpoch]
    undecided: list[TopicPartition]


def decide_isr_shrinks(
    replica: int,
    partitions: Iterable[TopicPartition],
    states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch],
    controller_epoch: int,
    keep_last_member: bool = True,
) -> ShrinkRound:
    """Take `replica` out of the ISR (and the leadership) of each of `partitions`, from
    its state in `states`: the leader epoch bumped, the state stamped with
    `controller_epoch`, the ISR's last member kept unless `keep_last_member` is off (bug
    switch `kafka-5083`)."""
    writes: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
    unchanged: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
    undecided: list[TopicPartition] = []
    state_of = states.get
    for tp in partitions:
        state = state_of(tp)
        if state is None or state.controller_epoch > controller_epoch:
            undecided.append(tp)
            continue
        lai = state.leader_and_isr
        isr = lai.isr
        if replica not in isr:
            unchanged[tp] = state
            continue
        if len(isr) > 1 or not keep_last_member:
            isr = tuple([member for member in isr if member != replica])
        leader = NO_LEADER if lai.leader == replica else lai.leader
        writes[tp] = LeaderIsrAndControllerEpoch(
            LeaderAndIsr(leader, lai.leader_epoch + 1, isr, lai.zk_version), controller_epoch
        )
    return ShrinkRound(writes, unchanged, undecided)
