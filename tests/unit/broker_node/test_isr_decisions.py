"""The pure ISR and high-watermark decisions of `broker_node.isr`, as tables and hypothesis
properties, against Kafka 2.8's `Replica.updateFetchState`, `Partition.maybeIncrementLeaderHW`,
`getOutOfSyncReplicas` and `isFollowerInSync`, and for AlterIsr its `IsrState.maximalIsr`
and `Partition.handleAlterIsrResponse`.

Setup: broker 1 leads; brokers 2 and 3 follow. Times are milliseconds of a made-up clock.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broker_node.isr import (
    AlterIsrVerdict,
    FollowerState,
    PendingIsr,
    after_fetch,
    high_watermark,
    judge_alter_isr_result,
    may_join_isr,
    out_of_sync_replicas,
)
from rpc.errors import Errors

LEADER = 1
LAG_MS = 10_000


# -- after_fetch ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "fetch_offset", "leader_leo", "now_ms", "caught_up_ms"),
    [
        pytest.param(FollowerState(), 5, 5, 100, 100, id="at-the-leader-leo-caught-up-now"),
        pytest.param(FollowerState(), 0, 0, 100, 100, id="empty-log-caught-up-now"),
        pytest.param(
            FollowerState(3, 10, 5, 50), 7, 5, 100, 100, id="past-the-leader-leo-caught-up-now"
        ),
        pytest.param(
            FollowerState(3, 10, 5, 50),
            5,
            8,
            100,
            50,
            id="reached-the-previous-leader-leo-caught-up-at-previous-fetch",
        ),
        pytest.param(
            FollowerState(3, 10, 5, 50),
            6,
            8,
            100,
            50,
            id="past-the-previous-leader-leo-caught-up-at-previous-fetch",
        ),
        pytest.param(FollowerState(3, 10, 5, 50), 4, 8, 100, 10, id="short-of-both-unchanged"),
        pytest.param(FollowerState(3, 200, 5, 50), 5, 5, 100, 200, id="at-leo-never-moves-back"),
        pytest.param(
            FollowerState(3, 200, 5, 50),
            5,
            8,
            300,
            200,
            id="previous-fetch-never-moves-back",
        ),
        pytest.param(
            FollowerState(), 0, 4, 100, 0, id="first-fetch-behind-counts-the-zero-previous-fetch"
        ),
    ],
)
def test_after_fetch_caught_up_time(
    before: FollowerState, fetch_offset: int, leader_leo: int, now_ms: int, caught_up_ms: int
) -> None:
    after = after_fetch(before, fetch_offset, leader_leo, now_ms)
    assert after.last_caught_up_ms == caught_up_ms


def test_after_fetch_records_the_fetch() -> None:
    after = after_fetch(FollowerState(3, 10, 5, 50), 4, 8, 100)
    assert after == FollowerState(
        log_end_offset=4, last_caught_up_ms=10, last_fetch_leader_leo=8, last_fetch_ms=100
    )


# -- high_watermark ---------------------------------------------------------------------------


def _at(leo: int) -> FollowerState:
    return FollowerState(log_end_offset=leo)


@pytest.mark.parametrize(
    ("current_hw", "leader_leo", "isr", "followers", "expected"),
    [
        pytest.param(0, 9, (1,), {2: _at(3), 3: _at(1)}, 9, id="leader-alone-commits-its-leo"),
        pytest.param(0, 9, (1, 2, 3), {2: _at(7), 3: _at(4)}, 4, id="smallest-isr-leo"),
        pytest.param(0, 3, (1, 2, 3), {2: _at(7), 3: _at(5)}, 3, id="leader-leo-bounds-it"),
        pytest.param(0, 9, (1, 2), {2: _at(7), 3: _at(0)}, 7, id="non-isr-follower-ignored"),
        pytest.param(2, 9, (1, 2, 3), {2: _at(7)}, 2, id="isr-follower-without-state-is-leo-0"),
        pytest.param(6, 9, (1, 2, 3), {2: _at(7), 3: _at(4)}, 6, id="never-decreases"),
        pytest.param(0, 9, (1, 2), {1: _at(0), 2: _at(5)}, 5, id="leader-entry-in-map-ignored"),
        pytest.param(0, 9, (2, 3), {2: _at(7), 3: _at(8)}, 7, id="leader-counted-if-not-listed"),
        pytest.param(0, 9, (2, 3), {2: _at(12), 3: _at(11)}, 9, id="leader-leo-if-not-listed"),
    ],
)
def test_high_watermark(
    current_hw: int,
    leader_leo: int,
    isr: tuple[int, ...],
    followers: dict[int, FollowerState],
    expected: int,
) -> None:
    assert high_watermark(current_hw, leader_leo, isr, LEADER, followers) == expected


# -- out_of_sync_replicas ---------------------------------------------------------------------


def _follower(leo: int, caught_up_ms: int) -> FollowerState:
    return FollowerState(log_end_offset=leo, last_caught_up_ms=caught_up_ms)


@pytest.mark.parametrize(
    ("isr", "followers", "now_ms", "expected"),
    [
        pytest.param(
            (1, 2, 3), {2: _follower(9, 0), 3: _follower(9, 0)}, 10**9, set(), id="at-leo-old"
        ),
        pytest.param(
            (1, 2), {2: _follower(5, 1_000)}, 1_000 + LAG_MS, set(), id="lag-exactly-max-in-sync"
        ),
        pytest.param((1, 2), {2: _follower(5, 1_000)}, 1_001 + LAG_MS, {2}, id="lag-past-max-out"),
        pytest.param((1, 2), {}, LAG_MS, set(), id="no-state-young-clock-in-sync"),
        pytest.param((1, 2), {}, LAG_MS + 1, {2}, id="no-state-out"),
        pytest.param(
            (1, 2), {2: _follower(5, 0), 3: _follower(0, 0)}, 10**9, {2}, id="non-isr-ignored"
        ),
        pytest.param(
            (1, 2, 3),
            {1: _follower(0, 0), 2: _follower(0, 0), 3: _follower(9, 0)},
            10**9,
            {2},
            id="leader-never-out",
        ),
        pytest.param(
            (1, 2), {2: _follower(11, 0)}, 10**9, {2}, id="past-the-leader-leo-is-not-at-it"
        ),
    ],
)
def test_out_of_sync_replicas(
    isr: tuple[int, ...], followers: dict[int, FollowerState], now_ms: int, expected: set[int]
) -> None:
    assert out_of_sync_replicas(isr, LEADER, 9, followers, now_ms, LAG_MS) == expected


# -- may_join_isr -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("follower_leo", "hw", "epoch_start", "joins"),
    [
        pytest.param(5, 5, 5, True, id="at-hw-and-epoch-start"),
        pytest.param(8, 5, 6, True, id="past-both"),
        pytest.param(4, 5, 0, False, id="below-hw"),
        pytest.param(5, 5, 6, False, id="below-epoch-start"),
        pytest.param(6, 7, 6, False, id="at-epoch-start-below-hw"),
        pytest.param(0, 0, 0, True, id="empty-logs"),
    ],
)
def test_may_join_isr(follower_leo: int, hw: int, epoch_start: int, joins: bool) -> None:
    assert may_join_isr(follower_leo, hw, epoch_start) is joins


# -- properties -------------------------------------------------------------------------------

offsets = st.integers(min_value=0, max_value=1_000)
follower_states = st.builds(FollowerState, offsets, offsets, offsets, offsets)


@given(before=follower_states, fetch_offset=offsets, leader_leo=offsets, now_ms=offsets)
def test_after_fetch_never_moves_caught_up_back(
    before: FollowerState, fetch_offset: int, leader_leo: int, now_ms: int
) -> None:
    after = after_fetch(before, fetch_offset, leader_leo, now_ms)
    assert after.last_caught_up_ms >= before.last_caught_up_ms
    assert after.last_caught_up_ms in {before.last_caught_up_ms, now_ms, before.last_fetch_ms}
    if fetch_offset >= leader_leo:
        assert after.last_caught_up_ms >= now_ms


@given(
    current_hw=offsets,
    leader_leo=offsets,
    followers=st.dictionaries(st.sampled_from([2, 3, 4]), follower_states),
    isr_followers=st.sets(st.sampled_from([2, 3, 4])),
)
def test_high_watermark_bounds(
    current_hw: int,
    leader_leo: int,
    followers: dict[int, FollowerState],
    isr_followers: set[int],
) -> None:
    isr = (LEADER, *sorted(isr_followers))
    hw = high_watermark(current_hw, leader_leo, isr, LEADER, followers)
    isr_leos = [leader_leo] + [followers.get(r, FollowerState()).log_end_offset for r in isr[1:]]
    assert hw >= current_hw
    assert hw == max(current_hw, min(isr_leos))
    if current_hw <= min(isr_leos):
        assert all(hw <= leo for leo in isr_leos)


@given(
    leader_leo=offsets,
    followers=st.dictionaries(st.sampled_from([1, 2, 3, 4]), follower_states),
    isr_followers=st.sets(st.sampled_from([2, 3, 4])),
    now_ms=st.integers(min_value=0, max_value=50_000),
)
def test_out_of_sync_replicas_are_isr_followers(
    leader_leo: int,
    followers: dict[int, FollowerState],
    isr_followers: set[int],
    now_ms: int,
) -> None:
    isr = (LEADER, *sorted(isr_followers))
    lagging = out_of_sync_replicas(isr, LEADER, leader_leo, followers, now_ms, LAG_MS)
    assert lagging <= isr_followers
    for replica in lagging:
        state = followers.get(replica, FollowerState())
        assert state.log_end_offset != leader_leo
        assert now_ms - state.last_caught_up_ms > LAG_MS


@dataclass(frozen=True)
class Append:
    """The leader appends `count` records."""

    count: int


@dataclass(frozen=True)
class Fetch:
    """Follower `replica` fetches after `gap_ms`, from `fraction` of the way between its
    LEO and the leader's."""

    replica: int
    fraction: float
    gap_ms: int


steps = st.lists(
    st.one_of(
        st.builds(Append, st.integers(min_value=1, max_value=5)),
        st.builds(
            Fetch,
            st.sampled_from([2, 3]),
            st.floats(min_value=0.0, max_value=1.0),
            st.integers(min_value=0, max_value=3_000),
        ),
    ),
    max_size=60,
)


@settings(max_examples=200)
@given(steps=steps, isr_followers=st.sets(st.sampled_from([2, 3])))
def test_high_watermark_under_fetches(steps: list[Append | Fetch], isr_followers: set[int]) -> None:
    """Followers only move forward (no truncation within an epoch); the ISR is fixed.
    After every step the HW never decreased and is at most every ISR member's LEO."""
    isr = (LEADER, *sorted(isr_followers))
    followers = {2: FollowerState(), 3: FollowerState()}
    leader_leo = hw = now = 0
    for step in steps:
        if isinstance(step, Append):
            leader_leo += step.count
        else:
            now += step.gap_ms
            state = followers[step.replica]
            offset = state.log_end_offset + int((leader_leo - state.log_end_offset) * step.fraction)
            followers[step.replica] = after_fetch(state, offset, leader_leo, now)
        new_hw = high_watermark(hw, leader_leo, isr, LEADER, followers)
        assert new_hw >= hw
        assert new_hw <= leader_leo
        assert all(new_hw <= followers[r].log_end_offset for r in isr_followers)
        hw = new_hw
    for replica in isr_followers:
        followers[replica] = after_fetch(followers[replica], leader_leo, leader_leo, now)
    assert high_watermark(hw, leader_leo, isr, LEADER, followers) == leader_leo


@settings(max_examples=200)
@given(
    rounds=st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=LAG_MS), st.integers(min_value=0, max_value=5)
        ),
        max_size=40,
    )
)
def test_follower_one_fetch_behind_stays_in_sync(rounds: list[tuple[int, int]]) -> None:
    """A follower that always fetches the LEO the leader had at its previous fetch, at most
    `replica.lag.time.max.ms` apart, is never out of sync right after a fetch, however much
    the leader appends in between (the reason for the previous-fetch rule)."""
    state = FollowerState()
    leader_leo = now = 0
    state = after_fetch(state, 0, 0, now)
    for gap_ms, appended in rounds:
        previous_leader_leo = leader_leo
        leader_leo += appended
        now += gap_ms
        state = after_fetch(state, previous_leader_leo, leader_leo, now)
        assert (
            out_of_sync_replicas((LEADER, 2), LEADER, leader_leo, {2: state}, now, LAG_MS) == set()
        )


# -- AlterIsr: the pending proposal and the verdict on its answer ----------------------------


@pytest.mark.parametrize(
    ("committed", "proposed", "maximal"),
    [
        ((1, 2), (1, 2, 3), (1, 2, 3)),  # PendingExpandIsr: isr + the joining follower
        ((1, 2, 3), (1, 2), (1, 2, 3)),  # PendingShrinkIsr: the committed isr
        ((1, 3), (1, 2), (1, 3, 2)),  # neither: the union, committed first
    ],
)
def test_the_maximal_isr_is_the_larger_of_committed_and_proposed(
    committed: tuple[int, ...], proposed: tuple[int, ...], maximal: tuple[int, ...]
) -> None:
    assert PendingIsr(committed, proposed, "expand").maximal_isr == maximal


@pytest.mark.parametrize(
    ("still_pending", "error", "epoch", "version", "verdict"),
    [
        (True, Errors.NONE, 5, 8, AlterIsrVerdict.COMMIT),
        (True, Errors.NONE, 5, 7, AlterIsrVerdict.COMMIT),  # no write: the same state
        (True, Errors.NONE, 5, 6, AlterIsrVerdict.IGNORE),  # an older zkVersion
        (True, Errors.NONE, 4, 8, AlterIsrVerdict.IGNORE),  # another leader epoch
        (True, Errors.NONE, 6, 8, AlterIsrVerdict.IGNORE),
        (False, Errors.NONE, 5, 8, AlterIsrVerdict.IGNORE),  # replaced meanwhile
        (False, Errors.UNKNOWN_SERVER_ERROR, -1, -1, AlterIsrVerdict.IGNORE),
        (True, Errors.UNKNOWN_TOPIC_OR_PARTITION, -1, -1, AlterIsrVerdict.GIVE_UP),
        (True, Errors.FENCED_LEADER_EPOCH, -1, -1, AlterIsrVerdict.GIVE_UP),
        (True, Errors.INVALID_UPDATE_VERSION, -1, -1, AlterIsrVerdict.GIVE_UP),
        (True, Errors.UNKNOWN_SERVER_ERROR, -1, -1, AlterIsrVerdict.RETRY),
        (True, Errors.NOT_LEADER_OR_FOLLOWER, -1, -1, AlterIsrVerdict.RETRY),
    ],
)
def test_the_verdict_on_an_alter_isr_answer(
    still_pending: bool, error: Errors, epoch: int, version: int, verdict: AlterIsrVerdict
) -> None:
    """Kafka 2.8's `Partition.handleAlterIsrResponse`, the leader at epoch 5, zkVersion 7."""
    assert judge_alter_isr_result(still_pending, error, epoch, version, 5, 7) is verdict
