"""`FetchServing`: the leader's side of Fetch, a long poll on the whole broker as Kafka's
fetch purgatory is. One Fetch is a generator of passes (`_fetch_passes`) that yields when
it must wait for a change (`FetchWait`) or leave an event loop (`OFFLOAD`); `fetch` drives
it on the calling thread, `fetch_async` on the gRPC server's event loop, parking on the
broker's change counter (`broker_node.long_poll`) and running long or ZooKeeper-writing
passes on a worker thread. Reads are `broker_node.fetch_reads`'; incremental sessions
(KIP-227) come from the session cache (`broker_node.fetch_session`).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Collection, Generator, Iterable
from typing import NamedTuple

from broker_node.fetch_reads import read_partitions, read_session
from broker_node.fetch_session import (
    CachedPartition,
    FetchContext,
    FetchSession,
    FetchSessionCache,
)
from broker_node.long_poll import ChangeCounter
from broker_node.partition import Partition
from domain import TopicPartition
from rpc import messages as m
from rpc.errors import Errors

#: A Fetch pass over more partitions than this runs on a worker thread when the Fetch is
#: served on an event loop (`FetchServing.fetch_async`); smaller ones read on the loop.
LOOP_READ_PARTITIONS = 64
OFFLOAD = "offload"
"""What `FetchServing._fetch_passes` yields before a pass that must not run on an event
loop (too long, or it may write ZooKeeper)."""


class FetchWait(NamedTuple):
    """A Fetch's wait: until the broker changes past version `seen`, or `deadline`."""

    seen: int
    deadline: float


FetchStep = FetchWait | str | m.FetchResponse
"""A step of a Fetch: a wait, `OFFLOAD`, or the answer."""
FetchPasses = Generator[FetchWait | str, bool | None, m.FetchResponse]


class FetchServing:
    """The Fetches one broker answers as a leader: the reads of each, its wait for data and
    the thread each pass runs on."""

    def __init__(
        self,
        sessions: FetchSessionCache,
        changes: ChangeCounter,
        answer_now: threading.Event,
        partition: Callable[[TopicPartition], Partition | None],
        memoise: Callable[[Iterable[CachedPartition]], None],
    ) -> None:
        self._sessions = sessions
        self._changes = changes
        #: set when Fetches may no longer wait for data (the broker is stopping)
        self._answer_now = answer_now
        self._partition = partition
        #: points session entries at their hosted partitions (`ReplicaManager._memoise`)
        self._memoise = memoise

    def fetch(self, request: m.FetchRequest) -> m.FetchResponse:
        """Read each partition; waits up to `max_wait_ms` in total for data, holding the
        calling thread (`fetch_async` holds none). The passes are `_fetch_passes`'s."""
        passes = self._fetch_passes(request)
        step = _advance(passes, None)
        while not isinstance(step, m.FetchResponse):
            if isinstance(step, FetchWait):
                woke = self._changes.wait_past(step.seen, step.deadline, self._answer_now)
                step = _advance(passes, woke)
            else:  # OFFLOAD: already on a thread of its own
                step = _advance(passes, None)
        return step

    async def fetch_async(self, request: m.FetchRequest) -> m.FetchResponse:
        """`fetch` for a coroutine of the gRPC server's event loop: a Fetch waiting for data
        parks on the loop (Kafka's fetch purgatory) and holds no thread; a small pass reads
        on the loop, a pass over more than `LOOP_READ_PARTITIONS` partitions, or one that
        may add the follower to an ISR (a ZooKeeper write), on a worker thread, so that
        nothing long or blocking stalls the loop's other calls."""
        loop = asyncio.get_running_loop()
        passes = self._fetch_passes(request)
        step = _advance(passes, None)
        while not isinstance(step, m.FetchResponse):
            if isinstance(step, FetchWait):
                woke = await self._changes.wait_past_async(
                    step.seen, step.deadline, self._answer_now
                )
                step = _advance(passes, woke)
            else:  # OFFLOAD
                step = await loop.run_in_executor(None, _advance, passes, None)
        return step

    def _fetch_passes(self, request: m.FetchRequest) -> FetchPasses:
        """The reads of one Fetch, as a generator its driver (`fetch`, `fetch_async`)
        steps: it yields a `FetchWait` to wait until the broker changes past version `seen`
        or `deadline` passes (sent back: whether it changed), `OFFLOAD` before a
        pass that must not run on an event loop (`_leaves_loop`: a long one, or one that
        may write ZooKeeper; a driver on a loop runs it on a worker thread), and returns
        the answer.

        A Fetch is a long poll on the whole broker: it sleeps until records are appended,
        a high watermark moves or leadership changes anywhere, then reads again, so that
        an idle follower of thousands of partitions asks about twice a second rather than
        ten times. A follower's progress moves high watermarks as it is read, which
        answers parked produce requests at once (`_high_watermark_moved`). A Fetch of an
        incremental session (`broker_node.fetch_session`) reads the partitions of the
        session that changed on either side since its last fetch (`_to_read`) and answers
        only those whose answer changed; woken by a change, it reads again only the
        partitions that changed (`ChangeCounter.changed_since`). A session error is
        answered alone."""
        offloaded = False
        if len(request.partitions) > LOOP_READ_PARTITIONS:  # the session cache builds its
            yield OFFLOAD  # entries in `context`
            offloaded = True
        now = time.monotonic()
        context = self._sessions.context(request, now)
        if context.error is not Errors.NONE:
            return m.FetchResponse(context.error)
        deadline = now + request.max_wait_ms / 1000
        reads = context.reads
        session = context.session
        entries = context.entries
        # every change up to `seen` is read by the end of a pass: each set of partitions to
        # read is taken after the version it covers up to
        seen = self._changes.version
        if not context.full and session is not None:
            session.fetched_ms = int(now * 1000)  # the skipped partitions' time (`_to_read`)
            entries = self._to_read(context, session)
        while True:
            if not offloaded and self._leaves_loop(request, context, reads, entries):
                yield OFFLOAD
            if context.full:
                out = read_partitions(reads, request, self._partition)
            else:
                self._memoise(entries)
                out = read_session(entries, request, session)
                if session is not None:
                    session.seen_version = seen
            if any(p.has_records or p.error is not Errors.NONE for p in out) or not (
                yield FetchWait(seen, deadline)
            ):
                return m.FetchResponse(
                    Errors.NONE, self._sessions.answer(context, out), context.session_id
                )
            offloaded = False
            now_seen = self._changes.version
            changed = self._changes.changed_since(seen)
            seen = now_seen
            entries = (
                context.entries
                if changed is None
                else tuple(e for e in context.entries if e.tp in changed)
            )

    def _leaves_loop(
        self,
        request: m.FetchRequest,
        context: FetchContext,
        reads: Collection[m.FetchPartition],
        entries: Collection[CachedPartition],
    ) -> bool:
        """Whether a Fetch's next pass must not run on an event loop: it reads more than
        `LOOP_READ_PARTITIONS` partitions, or a follower outside a partition's ISR may
        join it, which writes the ISR to ZooKeeper (a blocking round trip, seconds while
        ZooKeeper is unreachable)."""
        if len(reads if context.full else entries) > LOOP_READ_PARTITIONS:
            return True
        follower = request.replica_id
        if follower < 0:
            return False
        if context.full:
            hosted = [self._partition(f.topic_partition) for f in reads]
        else:
            self._memoise(entries)
            hosted = [e.hosted for e in entries]
        return any(p is not None and follower not in p.isr for p in hosted)

    def _to_read(self, context: FetchContext, session: FetchSession) -> tuple[CachedPartition, ...]:
        """The entries of an incremental fetch to read: every entry unless its last read
        found the follower idle at the log end (`CachedPartition.idle`), and neither
        this broker changed the partition since the session's last read
        (`ChangeCounter.changed_since`) nor this fetch named it. A skipped partition's
        follower is caught up as of this fetch (`session.fetched_ms`): its partition
        records that when its log end next moves (`Partition.append_as_leader`), so that
        an idle session of thousands of partitions costs a set lookup each, not a read."""
        entries = context.entries
        changed = (
            self._changes.changed_since(session.seen_version) if session.seen_version >= 0 else None
        )
        if changed is None:
            return entries
        named = context.named
        return tuple(e for e in entries if not e.idle or e.tp in changed or e.tp in named)


def _advance(passes: FetchPasses, sent: bool | None) -> FetchStep:
    """The next step of a Fetch's passes: what it waits for, or its answer."""
    try:
        return passes.send(sent)
    except StopIteration as stop:
        response: m.FetchResponse = stop.value
        return response
