"""The broker-wide change counter behind long polls of many partitions: a waiting fetch
wakes when something changes, gives up at its deadline, and stops waiting when the broker
stops; once woken it learns which partitions changed."""

from __future__ import annotations

import threading
import time

from broker_node.long_poll import ChangeCounter
from zkdata.model import TopicPartition

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
