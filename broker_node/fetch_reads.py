"""Reading the partitions of one Fetch on a leader: every partition a full fetch names
(`read_partitions`), or every partition of an incremental session, keeping only the
answers the session would send (`read_session`). `FetchServing._fetch_passes` calls
them between long-poll waits, on the gRPC server's event loop or a worker thread; each
`Partition` guards itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from broker_node.fetch_session import CachedPartition, FetchSession
from broker_node.partition import Partition
from domain import TopicPartition
from rpc import messages as m
from rpc.errors import Errors


def _unknown(fetch: m.FetchPartition) -> m.FetchedPartition:
    return m.FetchedPartition(fetch.topic, fetch.partition, Errors.UNKNOWN_TOPIC_OR_PARTITION)


def read_partitions(
    reads: Iterable[m.FetchPartition],
    request: m.FetchRequest,
    hosted: Callable[[TopicPartition], Partition | None],
) -> list[m.FetchedPartition]:
    """Read every partition of `reads` (looked up with `hosted`) without waiting."""
    out = []
    for fetch in reads:
        partition = hosted(fetch.topic_partition)
        if partition is None:
            out.append(_unknown(fetch))
            continue
        out.append(partition.read(fetch, request.replica_id, request.encoded_records))
    return out


def read_session(
    entries: Iterable[CachedPartition], request: m.FetchRequest, session: FetchSession | None
) -> list[m.FetchedPartition]:
    """Read the `entries` of an incremental `session` (each entry's `hosted` already set
    by the replica manager) without waiting; only those whose answer would be sent
    (records, an error, new offsets) are returned. Each entry's `idle` says whether its
    follower was found idle at the log end."""
    out = []
    for entry in entries:
        partition: Partition | None = entry.hosted
        if partition is None:
            entry.idle = False
            out.append(_unknown(entry.fetch))
            continue
        fetched = partition.read_if_changed(
            entry.fetch,
            request.replica_id,
            entry.high_watermark,
            entry.log_start_offset,
            request.encoded_records,
            (session, entry) if session is not None else None,
        )
        if fetched is not None:
            out.append(fetched)
    return out
