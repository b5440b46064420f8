"""`FetchSessionCache`: the leader's incremental fetch sessions (KIP-227).

A follower of thousands of partitions would otherwise name every one of them in every
Fetch, and be answered about every one. With a session the leader remembers, per
session, each partition's fetch state (offset, leader epoch, max records) and what it last
answered about it (high watermark, log start offset). The follower then names only the
partitions whose fetch state changed (and, in `forgotten`, those it stopped fetching), and
the answer names only the partitions with records, an error, or a changed high watermark
or log start offset. The leader reads only the partitions of the session that changed on
either side since its last read, and records the skipped ones' follower as caught up when
their log end next moves (`FetchServing._to_read`, `PartitionIsr._settle_idle`), so ISR,
high watermark and acks=all are unchanged; the entries and the session carry the reader's
bookkeeping for that.

How a Fetch is taken (`context`), by its session epoch:

- `FINAL_EPOCH` (-1): full and sessionless (every consumer's); a named session is closed.
- `INITIAL_EPOCH` (0): full; a named session is closed and a new one opened, if the cache
  has room (else the answer carries no session and the follower asks again next time).
- above 0: the next fetch of `session_id`: FETCH_SESSION_ID_NOT_FOUND if the cache does
  not hold it (evicted, or the leader restarted), INVALID_FETCH_SESSION_EPOCH if the epoch
  is not the one expected (a lost answer); either way the follower fetches in full again.

Eviction: at most `max_sessions` sessions. A new session takes the slot of the least
recently used one that has been idle for `eviction_s`, else (when the new one is a
follower's, which is privileged as in Kafka) of the least recently used consumer session;
else it is not created.

Pure state behind one lock: gRPC worker threads serving Fetch call it; the clock is passed
in. No I/O, logging or metrics.
"""

from __future__ import annotations

import random
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from domain import TopicPartition
from rpc import messages as m
from rpc.errors import Errors

#: Kafka's `max.incremental.fetch.session.cache.slots` default.
DEFAULT_MAX_SESSIONS = 1_000
#: Kafka's minimum idle time before a session of the same privilege may be evicted.
DEFAULT_EVICTION_S = 120.0
_MAX_SESSION_ID = 2**31 - 1


@dataclass(slots=True)
class CachedPartition:
    """One partition of a session: how the follower fetches it and what the leader last
    answered about it (-1: nothing yet, so the next answer names it)."""

    tp: TopicPartition
    fetch: m.FetchPartition
    high_watermark: int = -1
    log_start_offset: int = -1
    #: The reader's memo of the replica it reads this partition from, and the version of
    #: the reader's hosted set it was looked up in (the cache never reads them).
    hosted: Any = None
    hosted_version: int = -1
    #: The last read found an ISR follower at the leader's log end with nothing to answer:
    #: until the partition or the follower's fetch offset changes, the reader may skip it
    #: (`Partition.read_if_changed`, `ReplicaManager.fetch`).
    idle: bool = False


@dataclass(slots=True)
class FetchSession:
    """One fetcher's session: its partitions and the epoch its next fetch must carry."""

    id: int
    privileged: bool
    partitions: dict[TopicPartition, CachedPartition]
    next_epoch: int = 1
    last_used: float = 0.0
    #: The reader's bookkeeping (the cache never reads them): the leader's change version
    #: up to which every changed partition was read, and when the latest fetch came (ms,
    #: monotonic), when every partition it skipped was idle.
    seen_version: int = -1
    fetched_ms: int = 0


@dataclass(frozen=True, slots=True)
class FetchContext:
    """How to serve one Fetch: the partitions to read, and the session whose answer is
    filtered (None: answer every partition read). For an incremental fetch `entries` are
    the session's partitions with what was last answered about each, so that a reader may
    skip building answers that would be left out (`Partition.read_if_changed`); `reads`
    are their fetch states. `error` set: answer it alone, read nothing."""

    reads: tuple[m.FetchPartition, ...]
    session: FetchSession | None = None
    error: Errors = Errors.NONE
    full: bool = True
    entries: tuple[CachedPartition, ...] = ()
    #: The partitions an incremental fetch named: added, or fetched from a new offset.
    named: frozenset[TopicPartition] = frozenset()

    @property
    def session_id(self) -> int:
        """The session the answer names (`NO_SESSION_ID`: none)."""
        return m.NO_SESSION_ID if self.session is None else self.session.id


@dataclass(frozen=True, slots=True)
class SessionFigures:
    """What the broker's metrics show of its fetch sessions (Kafka's FetchSessionCache)."""

    sessions: int
    partitions: int
    evictions: int


class FetchSessionCache:
    """Every open fetch session of one leader. Any thread (one lock)."""

    def __init__(
        self,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        eviction_s: float = DEFAULT_EVICTION_S,
        rng: random.Random | None = None,
    ) -> None:
        if max_sessions < 0 or eviction_s < 0:
            raise ValueError(
                f"max_sessions ({max_sessions}) and eviction_s ({eviction_s}) must not be negative"
            )
        self.max_sessions = max_sessions
        self.eviction_s = eviction_s
        self._rng = rng if rng is not None else random.Random()
        self._sessions: OrderedDict[int, FetchSession] = OrderedDict()
        self._lock = threading.Lock()
        #: Sessions closed to make room for new ones, since the cache was made.
        self.evictions = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

    def ids(self) -> list[int]:
        """The open sessions, least recently used first."""
        with self._lock:
            return list(self._sessions)

    def session(self, session_id: int) -> FetchSession | None:
        """An open session (for tests and figures)."""
        with self._lock:
            return self._sessions.get(session_id)

    def figures(self) -> SessionFigures:
        """Sessions, partitions they hold, and evictions so far (for the metrics)."""
        with self._lock:
            return SessionFigures(
                len(self._sessions),
                sum(len(s.partitions) for s in self._sessions.values()),
                self.evictions,
            )

    def remove(self, session_id: int) -> bool:
        """Close a session; whether it was open."""
        with self._lock:
            return self._sessions.pop(session_id, None) is not None

    def context(self, request: m.FetchRequest, now: float) -> FetchContext:
        """Take `request` into the cache (open, close, update or refuse its session) and
        say what to read and how to answer."""
        epoch = request.session_epoch
        with self._lock:
            if epoch in (m.INITIAL_EPOCH, m.FINAL_EPOCH):
                if request.session_id != m.NO_SESSION_ID:
                    self._sessions.pop(request.session_id, None)
                session = self._open(request, now) if epoch == m.INITIAL_EPOCH else None
                return FetchContext(request.partitions, session)
            session = self._sessions.get(request.session_id)
            if session is None:
                return FetchContext((), error=Errors.FETCH_SESSION_ID_NOT_FOUND)
            if epoch != session.next_epoch:
                return FetchContext((), error=Errors.INVALID_FETCH_SESSION_EPOCH)
            session.next_epoch = _next_epoch(epoch)
            session.last_used = now
            self._sessions.move_to_end(session.id)
            cached = session.partitions
            for tp in request.forgotten:
                cached.pop(tp, None)
            for fetch in request.partitions:
                entry = cached.get(fetch.topic_partition)
                if entry is None:
                    cached[fetch.topic_partition] = CachedPartition(fetch.topic_partition, fetch)
                else:
                    entry.fetch = fetch
            entries = tuple(cached.values())
            reads = tuple(entry.fetch for entry in entries)
            named = frozenset(fetch.topic_partition for fetch in request.partitions)
            return FetchContext(reads, session, full=False, entries=entries, named=named)

    def answer(
        self, context: FetchContext, read: Sequence[m.FetchedPartition]
    ) -> tuple[m.FetchedPartition, ...]:
        """What to send of the partitions `read` for `context`: all of them for a full
        fetch, only the changed ones for an incremental one. Records what was sent in the
        session either way."""
        session = context.session
        if session is None:
            return tuple(read)
        with self._lock:
            if context.full:
                for p in read:
                    entry = session.partitions.get(p.topic_partition)
                    if entry is not None:
                        entry.high_watermark = p.high_watermark
                        entry.log_start_offset = p.log_start_offset
                return tuple(read)
            return tuple(_changed(session.partitions, read))

    def _open(self, request: m.FetchRequest, now: float) -> FetchSession | None:
        privileged = request.replica_id >= 0
        if len(self._sessions) >= self.max_sessions and not self._evict_one(privileged, now):
            return None
        session_id = self._new_id()
        session = FetchSession(
            session_id,
            privileged,
            {f.topic_partition: CachedPartition(f.topic_partition, f) for f in request.partitions},
            last_used=now,
        )
        self._sessions[session_id] = session
        return session

    def _evict_one(self, privileged: bool, now: float) -> bool:
        """Free one slot for a new session (`privileged`: a follower's); whether one was."""
        victim = None
        for session in self._sessions.values():  # least recently used first
            if now - session.last_used >= self.eviction_s:
                victim = session
                break
            if victim is None and privileged and not session.privileged:
                victim = session
        if victim is None:
            return False
        del self._sessions[victim.id]
        self.evictions += 1
        return True

    def _new_id(self) -> int:
        while True:
            session_id = self._rng.randint(1, _MAX_SESSION_ID)
            if session_id not in self._sessions:
                return session_id


def _changed(
    cached: dict[TopicPartition, CachedPartition], read: Iterable[m.FetchedPartition]
) -> Iterable[m.FetchedPartition]:
    """The partitions of an incremental answer, updating what the session last sent."""
    for p in read:
        entry = cached.get(p.topic_partition)
        if entry is None:  # forgotten meanwhile
            continue
        if (
            p.has_records
            or p.error is not Errors.NONE
            or p.high_watermark != entry.high_watermark
            or p.log_start_offset != entry.log_start_offset
        ):
            entry.high_watermark = p.high_watermark
            entry.log_start_offset = p.log_start_offset
            yield p


def _next_epoch(epoch: int) -> int:
    """The epoch after `epoch`, wrapping to 1 (0 and -1 mean full fetches)."""
    return 1 if epoch >= _MAX_SESSION_ID else epoch + 1
