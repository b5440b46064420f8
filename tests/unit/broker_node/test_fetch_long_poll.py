"""The broker-wide change counter behind long polls of many partitions: a waiting fetch
wakes when something changes, gives up at its deadline, and stops waiting when the broker
stops; once woken it learns which partitions changed. A coroutine waits the same way
without holding a thread (`wait_past_async`), woken from its loop or from another thread,
and leaves nothing parked behind when it gives up or is cancelled."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time

from broker_node.long_poll import ChangeCounter
from domain import TopicPartition

A = TopicPartition("a", 0)
B = TopicPartition("b", 1)
C = TopicPartition("c", 2)


def test_a_change_wakes_the_wait() -> None:
    changes = ChangeCounter()
    seen = changes.version
    timer = threading.Timer(0.05, changes.bump)
    timer.start()
    assert changes.wait_past(seen, time.monotonic() + 10, threading.Event())
    assert changes.version == seen + 1


def test_a_change_before_the_wait_returns_at_once() -> None:
    changes = ChangeCounter()
    seen = changes.version
    changes.bump()
    started = time.monotonic()
    assert changes.wait_past(seen, started + 10, threading.Event())
    assert time.monotonic() - started < 5


def test_no_change_until_the_deadline_is_false() -> None:
    changes = ChangeCounter()
    assert not changes.wait_past(changes.version, time.monotonic() + 0.05, threading.Event())


def test_a_stopped_broker_does_not_wait() -> None:
    stopped = threading.Event()
    stopped.set()
    changes = ChangeCounter()
    started = time.monotonic()
    assert not changes.wait_past(changes.version, started + 10, stopped)
    assert time.monotonic() - started < 5


def test_the_partitions_changed_since_a_version_are_those_bumped_after_it() -> None:
    changes = ChangeCounter()
    changes.bump([A])
    seen = changes.version
    changes.bump([B])
    changes.bump([C, B])
    assert changes.changed_since(seen) == frozenset({B, C})
    assert changes.changed_since(changes.version) == frozenset()


def test_a_change_naming_no_partition_means_read_everything() -> None:
    changes = ChangeCounter()
    seen = changes.version
    changes.bump([A])
    changes.bump()
    assert changes.changed_since(seen) is None
    later = changes.version
    changes.bump([B])
    assert changes.changed_since(later) == frozenset({B})


def test_changes_older_than_the_history_mean_read_everything() -> None:
    changes = ChangeCounter(history=2)
    seen = changes.version
    for tp in (A, B, C):
        changes.bump([tp])
    assert changes.changed_since(seen) is None  # the change to A is forgotten
    assert changes.changed_since(seen + 1) == frozenset({B, C})


def test_a_parked_coroutine_is_woken_by_a_change_on_another_thread() -> None:
    async def scenario() -> bool:
        changes = ChangeCounter()
        seen = changes.version
        timer = threading.Timer(0.05, changes.bump, args=([A],))
        timer.start()
        woke = await changes.wait_past_async(seen, time.monotonic() + 10, threading.Event())
        assert changes.version == seen + 1
        assert not changes._parked  # the bump took it
        return woke

    assert asyncio.run(scenario())


def test_a_parked_coroutine_is_woken_by_a_change_on_its_own_loop() -> None:
    async def scenario() -> tuple[bool, float]:
        changes = ChangeCounter()
        loop = asyncio.get_running_loop()
        loop.call_later(0.05, changes.bump)
        started = time.monotonic()
        woke = await changes.wait_past_async(changes.version, started + 10, threading.Event())
        return woke, time.monotonic() - started

    woke, took = asyncio.run(scenario())
    assert woke
    assert took < 5


def test_a_parked_coroutine_without_a_change_gives_up_at_its_deadline_and_unparks() -> None:
    async def scenario() -> bool:
        changes = ChangeCounter()
        woke = await changes.wait_past_async(
            changes.version, time.monotonic() + 0.05, threading.Event()
        )
        assert not any(changes._parked.values())  # nothing left behind for a later bump
        return woke

    assert not asyncio.run(scenario())


def test_a_coroutine_parks_not_when_the_version_moved_or_the_broker_stopped() -> None:
    async def scenario() -> tuple[bool, bool]:
        changes = ChangeCounter()
        seen = changes.version
        changes.bump()
        moved = await changes.wait_past_async(seen, time.monotonic() + 10, threading.Event())
        stopped = threading.Event()
        stopped.set()
        halted = await changes.wait_past_async(changes.version, time.monotonic() + 10, stopped)
        assert not changes._parked
        return moved, halted

    assert asyncio.run(scenario()) == (True, False)


def test_a_cancelled_coroutine_unparks() -> None:
    async def scenario() -> None:
        changes = ChangeCounter()
        waiting = asyncio.ensure_future(
            changes.wait_past_async(changes.version, time.monotonic() + 10, threading.Event())
        )
        await asyncio.sleep(0)  # let it park
        assert changes._parked
        waiting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await waiting
        assert not any(changes._parked.values())

    asyncio.run(scenario())
