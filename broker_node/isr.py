"""ISR and high-watermark decisions of a partition leader, as Kafka 2.8 makes them.

Pure functions of explicit values; `broker_node.partition` applies them under its lock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple


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


def may_join_isr(follower_leo: int, high_watermark_: int, leader_epoch_start_offset: int) -> bool:
    """A follower outside the ISR rejoins once it has everything up to the high watermark
    and has reached the start of the leader's current epoch (Kafka's `isFollowerInSync`)."""
    return follower_leo >= high_watermark_ and follower_leo >= leader_epoch_start_offset
