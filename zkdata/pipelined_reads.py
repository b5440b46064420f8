"""Pipelined reads of many znodes: issue kazoo's `get_async` for every one, then collect
(the read-side counterpart of `fenced_writes`).

The caller names the znodes by key and brings the codec; a znode that is missing by the
time it is read is left out, and one that does not decode is reported with its path,
never raised. At most `MAX_IN_FLIGHT` requests are outstanding at a time (`pipelined`):
100,000 requests issued at once on a busy box starve kazoo's connection thread until the
session's read times out and every outstanding request fails with ConnectionLoss, while
a window of thousands keeps the connection as busy as it can be. Blocks the calling
thread (the controller event thread, a broker thread that re-reads a partition's state,
or the CLI's main thread) until every answer is in; kazoo's connection thread answers
the requests meanwhile.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError
from kazoo.protocol.states import WatchedEvent, ZnodeStat

from zkdata.errors import ZnodeFormatError

__all__ = ["MAX_IN_FLIGHT", "Reads", "pipelined", "read_many"]

K = TypeVar("K")
V = TypeVar("V")

#: Requests outstanding at once on one session: enough to keep the connection busy, few
#: enough that the connection thread keeps up with the answers.
MAX_IN_FLIGHT = 5_000


def pipelined(
    keys: Iterable[K], issue: Callable[[K], Any], window: int = MAX_IN_FLIGHT
) -> Iterator[tuple[K, Any]]:
    """`(key, async result)` for every key, in order, with at most `window` requests
    issued and not yet handed out: the caller collects each result (`.get()`) as it comes,
    and the next request is issued as an earlier one is handed out."""
    if window < 1:
        raise ValueError(f"window must be at least 1, not {window}")
    pending: deque[tuple[K, Any]] = deque()
    for key in keys:
        if len(pending) >= window:
            yield pending.popleft()
        pending.append((key, issue(key)))
    while pending:
        yield pending.popleft()


@dataclass(frozen=True, slots=True)
class Reads(Generic[K, V]):
    """Values read for many znodes: the decoded ones, the ones that failed to decode, and
    (implicitly) the missing ones, which appear in neither."""

    found: dict[K, V]
    malformed: dict[K, ZnodeFormatError]


def read_many(
    zk: KazooClient,
    keys: Iterable[K],
    path_of: Callable[[K], str],
    decode: Callable[[bytes, ZnodeStat], V],
    watch_of: Callable[[K], Callable[[WatchedEvent], None]] | None = None,
) -> Reads[K, V]:
    """Read the znode `path_of(key)` of every key, pipelined (`pipelined`), and decode each
    with its Stat.
    A `ZnodeFormatError` from `decode` is kept under its key with the znode's path.
    `watch_of(key)`, when given, arms a one-shot data watch on each znode that exists."""
    found: dict[K, V] = {}
    malformed: dict[K, ZnodeFormatError] = {}
    for key, result in pipelined(
        keys, lambda key: zk.get_async(path_of(key), watch=watch_of(key) if watch_of else None)
    ):
        try:
            data, stat = result.get()
        except NoNodeError:
            continue
        try:
            found[key] = decode(data, stat)
        except ZnodeFormatError as exc:
            malformed[key] = ZnodeFormatError(exc.reason, path_of(key))
    return Reads(found, malformed)
