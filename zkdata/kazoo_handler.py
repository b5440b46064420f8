"""`PollingHandler`: kazoo's threading handler with a cheaper `select`.

kazoo's connection thread calls its handler's `select` before every socket read and write
and once per loop: a pipelined read of 10,000 znodes makes about 41,000 calls. kazoo's
own (`kazoo.handlers.utils.selector_select`) builds an epoll selector for each call and
closes it again: four system calls and the `selectors` module's bookkeeping, about 11 µs
a call on a 2-vCPU host. `PollingHandler.select` makes one `poll(2)` call on a fresh
`select.poll` object (about 3 µs), with no limit on descriptor numbers (a broker holds a
file per partition log, well above `select(2)`'s 1,024). Everything else is kazoo's
`SequentialThreadingHandler`. Any thread.
"""

from __future__ import annotations

import math
import select
from collections.abc import Sequence
from typing import Any

from kazoo.handlers.threading import SequentialThreadingHandler

_READABLE = select.POLLIN | select.POLLPRI | select.POLLERR | select.POLLHUP | select.POLLNVAL
_WRITABLE = select.POLLOUT | select.POLLERR | select.POLLHUP | select.POLLNVAL


def _fd(fileobj: Any) -> int:
    """The descriptor of a socket or an int, as `selectors` finds it; ValueError for a
    closed one (kazoo's connection loop treats that as a dropped connection)."""
    fd = fileobj if isinstance(fileobj, int) else int(fileobj.fileno())
    if fd < 0:
        raise ValueError(f"Invalid file descriptor: {fd}")
    return fd


def poll_select(
    rlist: Sequence[Any], wlist: Sequence[Any], xlist: Sequence[Any], timeout: float | None = None
) -> tuple[list[Any], list[Any], list[Any]]:
    """`select.select`'s contract on `poll(2)`: the objects of `rlist` ready to read (or
    closed, or in error) and of `wlist` ready to write, waiting at most `timeout` seconds
    (None: without limit). `xlist` is never reported, as in kazoo's own."""
    if timeout is not None:
        if not isinstance(timeout, int | float):
            raise TypeError("timeout must be a number")
        if timeout < 0:
            raise ValueError("timeout must be non-negative")
    reads = [(f, _fd(f)) for f in rlist]
    writes = [(f, _fd(f)) for f in wlist]
    masks: dict[int, int] = {}
    for _, fd in reads:
        masks[fd] = masks.get(fd, 0) | select.POLLIN | select.POLLPRI
    for _, fd in writes:
        masks[fd] = masks.get(fd, 0) | select.POLLOUT
    poller = select.poll()
    for fd, mask in masks.items():
        poller.register(fd, mask)
    ready = dict(poller.poll(None if timeout is None else math.ceil(timeout * 1000)))
    if not ready:
        return [], [], []
    readable = [f for f, fd in reads if ready.get(fd, 0) & _READABLE]
    writable = [f for f, fd in writes if ready.get(fd, 0) & _WRITABLE]
    return readable, writable, []


class PollingHandler(SequentialThreadingHandler):  # type: ignore[misc]
    """kazoo's `SequentialThreadingHandler` whose `select` is `poll_select`."""

    def select(self, *args: Any, **kwargs: Any) -> tuple[list[Any], list[Any], list[Any]]:
        """`poll_select`."""
        return poll_select(*args, **kwargs)
