"""Sequential notification children, read and removed by the active controller as Kafka
2.x handles `/isr_change_notification` and `/log_dir_event_notification`: every child read
pipelined (optionally after arming a one-shot child watch on the parent, created if
missing), and the handled ones deleted epoch-fenced.

Both functions block the calling thread, the controller event thread; the child watch
fires on kazoo's event thread, where it may only enqueue.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from zkdata.client import KafkaZkClient, WatchCallback
from zkdata.fenced_writes import Delete, FencedWriter
from zkdata.pipelined_reads import Reads, read_many

V = TypeVar("V")


def read_notifications(
    zk: KafkaZkClient,
    parent: str,
    child_path: Callable[[str], str],
    decode: Callable[[bytes | None], V],
    watch: WatchCallback | None = None,
) -> Reads[str, V]:
    """Every child of `parent` (child name -> decoded value), read pipelined; `watch` arms
    a one-shot child watch on `parent`."""
    children = (
        zk.watch_children(parent, watch)
        if watch
        else list(zk.kazoo.retry(zk.kazoo.get_children, parent))
    )
    return read_many(zk.kazoo, sorted(children), child_path, lambda data, _: decode(data))


def delete_notifications(
    zk: KafkaZkClient,
    child_path: Callable[[str], str],
    children: Iterable[str],
    epoch_zk_version: int,
) -> None:
    """Remove handled notifications (epoch-fenced; already gone is fine)."""
    FencedWriter(zk.kazoo).write([Delete(child_path(c)) for c in children], epoch_zk_version)
