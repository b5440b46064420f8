"""`controller.collector.paused`: Python's cyclic collector is off while any paused block
runs, in any thread, and back on when the last one ends; a collector someone else turned
off stays off; with pausing switched off the block changes nothing. The controller's
event thread processes every event paused."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from controller import collector


@pytest.fixture(autouse=True)
def _collector_restored() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    collector.set_pausing(True)
    if enabled:
        gc.enable()
    else:
        gc.disable()


def test_the_collector_is_off_inside_and_on_after() -> None:
    gc.enable()
    with collector.paused():
        assert not gc.isenabled()
        with collector.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer block still holds it
    assert gc.isenabled()


def test_it_stays_off_until_the_last_thread_leaves() -> None:
    gc.enable()
    inside, leave = threading.Event(), threading.Event()

    def hold() -> None:
        with collector.paused():
            inside.set()
            assert leave.wait(10)

    with ThreadPoolExecutor(1) as pool:
        other = pool.submit(hold)
        assert inside.wait(10)
        with collector.paused():
            pass
        assert not gc.isenabled()  # the other thread's block is still running
        leave.set()
        other.result(10)
    assert gc.isenabled()


def test_an_exception_leaves_the_collector_on() -> None:
    gc.enable()
    with pytest.raises(RuntimeError), collector.paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_a_collector_turned_off_before_stays_off() -> None:
    gc.disable()
    with collector.paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_with_pausing_off_the_block_changes_nothing() -> None:
    collector.set_pausing(False)
    gc.enable()
    with collector.paused():
        assert gc.isenabled()
    assert gc.isenabled()
