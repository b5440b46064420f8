"""ISR and high-watermark decisions of a partition leader, as Kafka 2.8 makes them, and
the state of an ISR change proposed to the controller (AlterIsr, IBP 2.7) with the verdict
on its answer.

Pure functions of explicit values; `broker_node.partition` applies them under its lock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import NamedTuple

from rpc.errors import Errors


class FollowerState(NamedTuple):
    """What the leader knows of one follower from its fetches (a named tuple: a leader
    makes one per follower fetch of every partition, and a frozen dataclass costs three
    times as much to build)."""

    log_end_offset: int = 0
    last_caught_up_ms: int = 0
    last_fetch_leader_leo: int = 0
    last_fetch_ms: int = 0


def after_fetch(
    state: FollowerState, fetch_offset: int, leader_leo: int, now_ms: int
) -> FollowerState:
    """A follower fetched from `fetch_offset` while the leader's LEO was `leader_leo`:
    everything below `fetch_offset` is on the follower. It counts as caught up now if it
    asked for the leader's end, or as of its previous fetch if it reached the LEO the
    leader had then (Kafka's `updateFollowerFetchState`)."""
    caught_up = state.last_caught_up_ms
    if fetch_offset >= leader_leo:
        caught_up = max(caught_up, now_ms)
    elif fetch_offset >= state.last_fetch_leader_leo:
        caught_up = max(caught_up, state.last_fetch_ms)
    return FollowerState(fetch_offset, caught_up, leader_leo, now_ms)


def high_watermark(
    current_hw: int,
    leader_leo: int,
    isr: Iterable[int],
    leader: int,
    followers: Mapping[int, FollowerState],
) -> int:
    """The smallest LEO over the ISR; a high watermark never moves back."""
    leos = [leader_leo]
    for replica in isr:
        if replica != leader:
            leos.append(followers.get(replica, FollowerState()).log_end_offset)
    return max(current_hw, min(leos))


def out_of_sync_replicas(
    isr: Iterable[int],
    leader: int,
    leader_leo: int,
    followers: Mapping[int, FollowerState],
    now_ms: int,
    lag_time_max_ms: int,
) -> set[int]:
    """ISR followers that are not caught up: not at the leader's LEO and not caught up for
    longer than `replica.lag.time.max.ms` (Kafka's `getOutOfSyncReplicas`)."""
    lagging = set()
    for replica in isr:
        if replica == leader:
            continue
        state = followers.get(replica, FollowerState())
        if (
            state.log_end_offset != leader_leo
            and now_ms - state.last_caught_up_ms > lag_time_max_ms
        ):
            lagging.add(replica)
    return lagging


def isr_log_ends(
    isr: Iterable[int], leader: int, leader_leo: int, followers: Mapping[int, FollowerState]
) -> list[int]:
    """Each ISR member's log end as the leader knows it, in `isr`'s order: its own, a
    follower's from its last fetch, -1 for a follower it has no fetch from yet."""
    ends = []
    for replica in isr:
        state = followers.get(replica)
        fetched = state is not None and state.last_fetch_ms > 0
        if replica == leader:
            ends.append(leader_leo)
        else:
            ends.append(state.log_end_offset if state is not None and fetched else -1)
    return ends


def may_join_isr(follower_leo: int, high_watermark_: int, leader_epoch_start_offset: int) -> bool:
    """A follower outside the ISR rejoins once it has everything up to the high watermark
    and has reached the start of the leader's current epoch (Kafka's `isFollowerInSync`)."""
    return follower_leo >= high_watermark_ and follower_leo >= leader_epoch_start_offset


@dataclass(frozen=True, slots=True, eq=False)
class PendingIsr:
    """An ISR change sent to the controller in an AlterIsr and not settled yet (Kafka's
    PendingExpandIsr / PendingShrinkIsr): `committed` is the ISR in ZooKeeper, `proposed`
    the one asked for. Compared by identity: an answer settles only the proposal it was
    for."""

    committed: tuple[int, ...]
    proposed: tuple[int, ...]
    reason: str
    #: the joining follower's log end (an expansion) and the leader's high watermark when
    #: the change was decided: what the `isr_changed` it becomes reports
    follower_log_end_offset: int | None = None
    high_watermark: int = 0

    @property
    def maximal_isr(self) -> tuple[int, ...]:
        """The ISR the high watermark and acks=all wait for meanwhile: the larger of the
        two (an expansion counts the joining follower at once; a shrink keeps counting the
        followers it drops until the controller has written it)."""
        return self.committed + tuple(r for r in self.proposed if r not in self.committed)


class AlterIsrVerdict(Enum):
    """What a leader does with the answer to its AlterIsr for one partition."""

    #: the answer is for an older proposal, or an older leader epoch or zkVersion: ignored
    IGNORE = "ignore"
    #: the controller wrote (or already held) the ISR: it is the committed ISR now
    COMMIT = "commit"
    #: refused for good: the proposal stays pending until the next LeaderAndIsr
    GIVE_UP = "give up"
    #: any other error: the same proposal is sent again
    RETRY = "retry"


#: The partition errors a leader does not retry (Kafka 2.8's `handleAlterIsrResponse`).
FINAL_ALTER_ISR_ERRORS = frozenset(
    {Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.FENCED_LEADER_EPOCH, Errors.INVALID_UPDATE_VERSION}
)


def judge_alter_isr_result(
    still_pending: bool,
    error: Errors,
    result_leader_epoch: int,
    result_zk_version: int,
    leader_epoch: int,
    zk_version: int,
) -> AlterIsrVerdict:
    """The verdict on one partition's AlterIsr answer: `still_pending` is False when a
    LeaderAndIsr (or another proposal) replaced the one answered, or the broker no longer
    leads; `leader_epoch` and `zk_version` are the leader's own."""
    if not still_pending:
        return AlterIsrVerdict.IGNORE
    if error is not Errors.NONE:
        return AlterIsrVerdict.GIVE_UP if error in FINAL_ALTER_ISR_ERRORS else AlterIsrVerdict.RETRY
    if result_leader_epoch != leader_epoch or result_zk_version < zk_version:
        return AlterIsrVerdict.IGNORE
    return AlterIsrVerdict.COMMIT
