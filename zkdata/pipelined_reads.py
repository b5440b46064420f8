"""Pipelined reads of many znodes: issue kazoo's `get_async` for every one, then collect
(the read-side counterpart of `fenced_writes`).

The caller names the znodes by key and brings the codec; a znode that is missing by the
time it is read is left out, and one that does not decode is reported with its path,
never raised. Blocks the calling thread (the controller event thread, a broker thread that
re-reads a partition's state, or the CLI's main thread) until every answer is in; kazoo's
connection thread answers the requests meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError
from kazoo.protocol.states import WatchedEvent, ZnodeStat

from zkdata.errors import ZnodeFormatError

__all__ = ["Reads", "read_many"]

K = TypeVar("K")
V = TypeVar("V")


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
    """Read the znode `path_of(key)` of every key, pipelined, and decode each with its Stat.
    A `ZnodeFormatError` from `decode` is kept under its key with the znode's path.
    `watch_of(key)`, when given, arms a one-shot data watch on each znode that exists."""
    pending = [
        (key, zk.get_async(path_of(key), watch=watch_of(key) if watch_of else None)) for key in keys
    ]
    found: dict[K, V] = {}
    malformed: dict[K, ZnodeFormatError] = {}
    for key, result in pending:
        try:
            data, stat = result.get()
        except NoNodeError:
            continue
        try:
            found[key] = decode(data, stat)
        except ZnodeFormatError as exc:
            malformed[key] = ZnodeFormatError(exc.reason, path_of(key))
    return Reads(found, malformed)
