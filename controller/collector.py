"""Pausing Python's cyclic garbage collector while a large change is processed.

A controller or broker of 100,000 partitions holds millions of long-lived objects, and a
failover allocates millions more, most of them freed again at once by reference counting.
With the collector running, the new controller of a failover at that size spent 2.5 s of
its 19 s collecting: each young-generation collection walks the objects allocated since
the last one, the middle generation walks the survivors again, and a full collection
walks every object the process holds.

`paused()` turns the collector off while its block runs, in whichever thread; it comes
back on when the last paused block in the process ends, and the next allocation then
collects what built up, once, after the temporaries are gone. Reference counting frees
everything without cycles meanwhile, so only cyclic garbage waits, for as long as the
blocks last. The controller pauses it for each event it processes, a broker for each
LeaderAndIsr and UpdateMetadata it serves, from decoding the request to encoding the
answer (a block that waits on ZooKeeper keeps it paused for as long).
`set_pausing(False)` (the broker's `--gc-pause-during-changes false`) makes `paused()` do
nothing. A collector turned off by someone else stays off. Any thread.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused", "set_pausing"]


class _Pauses:
    """How many blocks hold the collector paused, and whether to turn it back on."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.enabled = True
        self.holders = 0
        self.resume = False


_pauses = _Pauses()


def set_pausing(enabled: bool) -> None:
    """Whether `paused()` pauses the collector (the default) or does nothing."""
    _pauses.enabled = enabled


@contextmanager
def paused() -> Iterator[None]:
    """The collector is off while this block, or any other thread's, runs."""
    if not _pauses.enabled:
        yield
        return
    with _pauses.lock:
        _pauses.holders += 1
        if _pauses.holders == 1:
            _pauses.resume = gc.isenabled()
            gc.disable()
    try:
        yield
    finally:
        with _pauses.lock:
            _pauses.holders -= 1
            if _pauses.holders == 0 and _pauses.resume:
                gc.enable()
