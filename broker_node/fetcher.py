"""Replica fetchers: one thread per source broker, `replica-fetcher-<leader id>`, that
keeps this broker's follower replicas in step with their leader.

A thread fetches in an incremental fetch session with its leader (KIP-227,
`broker_node.fetch_session_handler`): after a first full Fetch, each Fetch names only the
partitions whose offset or leader epoch changed (and those it stopped fetching), and the
answer only the partitions with records, errors or a new high watermark. A partition
waiting for truncation, parked or delayed is not fetched that round, so it leaves the
session and joins it again later; a session error or a failed call makes the next Fetch
full. A round looks only at the partitions that may have moved since the last one
(added, removed, appended to, truncated, parked, delayed, or due again after a delay),
so an idle follower of thousands of partitions does not walk them all on every round.

For each partition a thread first truncates (KIP-101: it asks the leader where its own
latest epoch ended and cuts the local log there; KIP-279: the leader names the epoch it
answers for, and a follower that does not have that epoch cuts its log where its own
largest earlier epoch ends and asks again), then fetches from its log end,
appends, and follows the leader's high watermark. A fenced leader epoch parks the partition
until the next LeaderAndIsr moves it; a leader that does not host the partition or does not
lead it (yet: a new topic's LeaderAndIsr may reach the follower first) is asked again after
`RETRY_BACKOFF_S`, as Kafka's fetcher delays such a partition (`replica.fetch.backoff.ms`).
Partitions are added and removed from gRPC threads; the maps are guarded by a lock.

Bug switch `kip-101` (docs/bugs.md) truncates as Kafka did before KIP-101: to the
follower's own high watermark, never below the leader's log end (which the leader names
as the end offset of its current epoch), whatever epochs the records carry. Bug switch
`kafka-6361` truncates as Kafka did between KIP-101 and KIP-279: to the end offset the
leader names for the follower's latest epoch, in one round, without asking where that
epoch ends in the follower's own log.

A fetcher sees a replica only through `FetcherTarget` (which `Partition` satisfies) and its
leader only through `LeaderClient` (`ClientApiClient`), both in `broker_node.fetcher_target`,
so it depends on neither the replica manager nor the partition class; whether an epoch is
fenced is the leader's `Partition`'s to say, and the fetcher only reacts to the error it
answers. The threads of one broker are `broker_node.fetcher_manager`'s.
"""

from __future__ import annotations

import heapq
import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass

from broker_node.fetch_session_handler import FetchSessionHandler
from broker_node.fetcher_target import FetcherTarget, LeaderClient
from broker_node.storage import UNDEFINED_EPOCH, UNDEFINED_OFFSET
from domain import TopicPartition
from eventlog import EventLog, FetcherParked
from rpc import messages as m
from rpc.errors import Errors, RpcClosed, RpcError
from rpc.wire import ChannelIdentity, ClientApiClient

log = logging.getLogger(__name__)

#: Errors after which a partition waits for the controller instead of retrying.
PARKING = {Errors.FENCED_LEADER_EPOCH}
#: Errors after which a partition is asked again after `RETRY_BACKOFF_S`: the leader may not
#: have applied its LeaderAndIsr yet, or a new one is on its way to this broker.
DELAYING = {Errors.NOT_LEADER_OR_FOLLOWER, Errors.UNKNOWN_TOPIC_OR_PARTITION}
#: Kafka's `replica.fetch.backoff.ms` default.
RETRY_BACKOFF_S = 1.0


@dataclass(slots=True)
class _Fetching:
    partition: FetcherTarget
    leader_epoch: int
    truncated: bool = False
    parked: bool = False
    retry_at: float = 0.0
    #: The last fetch state asked for, kept while the log end stays (one object, not one
    #: per round, so that the session compares it by identity).
    asked: m.FetchPartition | None = None

    def fetch_state(self, tp: TopicPartition) -> m.FetchPartition:
        """Where to fetch this partition from now."""
        offset = self.partition.log.log_end_offset
        asked = self.asked
        if asked is None or asked.fetch_offset != offset:
            asked = self.asked = m.FetchPartition(tp.topic, tp.partition, offset, self.leader_epoch)
        return asked


class ReplicaFetcherThread:
    """Fetches every partition this broker follows from one leader."""

    def __init__(
        self,
        broker_id: int,
        leader_id: int,
        host: str,
        port: int,
        event_log: EventLog,
        max_wait_ms: int,
        client: LeaderClient | None = None,
        truncate_by_epoch: bool = True,
        tls: ChannelIdentity | None = None,
        check_own_epoch_end: bool = True,
    ) -> None:
        """`client` defaults to a `ClientApiClient` for host:port (mutual TLS with `tls`);
        without `truncate_by_epoch` (bug switch `kip-101`) truncation goes to the high
        watermark; without `check_own_epoch_end` (bug switch `kafka-6361`) to the end
        offset the leader names, in one round."""
        self.broker_id = broker_id
        self.leader_id = leader_id
        self.target = f"{host}:{port}"
        self._events = event_log
        self._max_wait_ms = max_wait_ms
        self._by_epoch = truncate_by_epoch
        self._own_epoch_end = check_own_epoch_end
        self._client: LeaderClient = (
            client if client is not None else ClientApiClient(self.target, timeout_s=10, tls=tls)
        )
        self._lock = threading.Lock()
        self._partitions: dict[TopicPartition, _Fetching] = {}
        #: Partitions added or removed by other threads since the last round (under the lock).
        self._touched: set[TopicPartition] = set()
        #: The fetcher thread's own: what it fetches now (truncated, neither parked nor
        #: delayed) with where from, what waits for truncation, the partitions whose state
        #: it changed itself since the last round, those whose change no Fetch has named
        #: yet, and (retry time, partition) of delayed ones.
        self._wanted: dict[TopicPartition, m.FetchPartition] = {}
        self._to_truncate: dict[TopicPartition, _Fetching] = {}
        self._moved: set[TopicPartition] = set()
        self._unsent: set[TopicPartition] = set()
        self._retries: list[tuple[float, TopicPartition]] = []
        self._session = FetchSessionHandler(broker_id, max_wait_ms)
        #: Partitions delayed while handling the current answer, by error (logged once).
        self._delayed: dict[Errors, list[TopicPartition]] = {}
        self._stopped = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name=f"replica-fetcher-{leader_id}", daemon=True
        )

    def start(self) -> None:
        """Start fetching."""
        self._thread.start()

    def add(self, partitions: Mapping[TopicPartition, FetcherTarget]) -> None:
        """Follow `partitions` (each at its current leader epoch), truncating first."""
        with self._lock:
            for tp, partition in partitions.items():
                self._partitions[tp] = _Fetching(partition, partition.leader_epoch)
            self._touched.update(partitions)

    def remove(self, partitions: list[TopicPartition]) -> None:
        """Stop following `partitions`."""
        with self._lock:
            for tp in partitions:
                self._partitions.pop(tp, None)
            self._touched.update(partitions)

    def is_empty(self) -> bool:
        """No partition left to fetch."""
        with self._lock:
            return not self._partitions

    def stop(self) -> None:
        """Stop the thread and close the connection."""
        self._stopped.set()
        self._client.close()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(5)

    def _refresh(self) -> None:
        """Bring `_wanted` and `_to_truncate` up to date for the partitions that may have
        moved since the last round (touched by other threads, moved by this one, or due
        again after a delay); the next Fetch names them (`_unsent`)."""
        now = time.monotonic()
        changed = self._moved
        self._moved = set()
        while self._retries and self._retries[0][0] <= now:
            changed.add(heapq.heappop(self._retries)[1])
        with self._lock:
            changed |= self._touched
            self._touched = set()
            current = {tp: self._partitions.get(tp) for tp in sorted(changed)}
        for tp, f in current.items():
            self._wanted.pop(tp, None)
            self._to_truncate.pop(tp, None)
            if f is None or f.parked or f.retry_at > now:
                continue
            if f.truncated:
                self._wanted[tp] = f.fetch_state(tp)
            else:
                self._to_truncate[tp] = f
        self._unsent |= changed

    def _idle_wait_s(self) -> float:
        """How long to wait with nothing to fetch: until the next delayed partition is due,
        at most 0.1 s (another thread may add partitions meanwhile)."""
        if not self._retries:
            return 0.1
        return min(0.1, max(0.0, self._retries[0][0] - time.monotonic()))

    def _run(self) -> None:
        backoff = 0.1
        while not self._stopped.is_set():
            self._refresh()
            if not self._wanted and not self._to_truncate:
                self._stopped.wait(self._idle_wait_s())
                continue
            try:
                if self._to_truncate:
                    self._truncate(list(self._to_truncate.items()))
                    self._refresh()
                self._fetch()
                backoff = 0.1
            except RpcClosed:
                return  # the channel was closed by stop()
            except RpcError as exc:
                if self._stopped.is_set():
                    return
                log.info("fetching from broker %d failed: %s", self.leader_id, exc)
                self._stopped.wait(backoff)
                backoff = min(backoff * 2, 1.0)
            except Exception:
                log.exception("replica fetcher for leader %d failed", self.leader_id)
                self._stopped.wait(backoff)

    def _park(self, tp: TopicPartition, fetching: _Fetching, error: Errors) -> None:
        fetching.parked = True
        self._moved.add(tp)
        self._events.emit(
            FetcherParked(
                topic=tp.topic,
                partition=tp.partition,
                leader=self.leader_id,
                leader_epoch=fetching.leader_epoch,
                error=error.name,
            ),
        )

    def _delay(self, tp: TopicPartition, fetching: _Fetching, error: Errors) -> None:
        fetching.retry_at = time.monotonic() + RETRY_BACKOFF_S
        heapq.heappush(self._retries, (fetching.retry_at, tp))
        self._moved.add(tp)
        self._delayed.setdefault(error, []).append(tp)

    def _log_delayed(self) -> None:
        """One line per answer for the partitions it delayed (new topics: thousands of
        partitions whose leader has not applied its LeaderAndIsr yet)."""
        for error, tps in sorted(self._delayed.items()):
            first = ", ".join(str(tp) for tp in tps[:3])
            more = f" and {len(tps) - 3:,} more" if len(tps) > 3 else ""
            log.info(
                "%s%s from leader %d: %s; asking again in %g s",
                first,
                more,
                self.leader_id,
                error.name,
                RETRY_BACKOFF_S,
            )
        self._delayed.clear()

    def _truncate(self, pending: list[tuple[TopicPartition, _Fetching]]) -> None:
        if not pending:
            return
        asks = []
        no_epoch = []
        for tp, f in pending:
            epoch = f.partition.log.latest_epoch() if self._by_epoch else f.leader_epoch
            if epoch == UNDEFINED_EPOCH:
                no_epoch.append((tp, f))
            else:
                asks.append(m.EpochPartition(tp.topic, tp.partition, f.leader_epoch, epoch))
        for tp, f in no_epoch:
            f.partition.truncate_to(f.partition.log.high_watermark)
            f.truncated = True
            self._moved.add(tp)
        if not asks:
            return
        reply = self._client.offsets_for_leader_epoch(
            m.OffsetsForLeaderEpochRequest(tuple(asks), self.broker_id)
        )
        by_tp = dict(pending)
        for answer in reply.partitions:
            tp = TopicPartition(answer.topic, answer.partition)
            f = by_tp[tp]
            if answer.error in PARKING:
                self._park(tp, f, answer.error)
                continue
            if answer.error in DELAYING:
                self._delay(tp, f, answer.error)
                continue
            if answer.error is not Errors.NONE:
                continue  # e.g. UNKNOWN_LEADER_EPOCH: the leader is not there yet; ask again
            log_ = f.partition.log
            if answer.leader_epoch == UNDEFINED_EPOCH or answer.end_offset == UNDEFINED_OFFSET:
                target = log_.high_watermark
            elif not self._by_epoch:  # kip-101: the leader named its log end
                target = min(log_.high_watermark, answer.end_offset)
            elif not self._own_epoch_end:  # kafka-6361: the leader's answer as it is
                target = answer.end_offset
            else:
                target = answer.end_offset
                local_epoch, local_end = log_.end_offset_for_epoch(answer.leader_epoch)
                if local_end == UNDEFINED_OFFSET:
                    pass  # no epoch cached here: the leader's end offset (Kafka)
                elif local_epoch == answer.leader_epoch:
                    target = min(target, local_end)
                else:
                    # the leader's epoch is not in this log: cut where the largest earlier
                    # epoch ends here and ask again with that one (KIP-279)
                    f.partition.truncate_to(min(local_end, log_.log_end_offset))
                    self._moved.add(tp)
                    continue
            f.partition.truncate_to(min(target, log_.log_end_offset))
            f.truncated = True
            self._moved.add(tp)
        self._log_delayed()

    def _fetch(self) -> None:
        """One Fetch of `_wanted` (in a session: of the partitions whose state moved since
        the last Fetch) and what its answer says about each partition."""
        if not self._wanted:
            return  # what left meanwhile is forgotten by the next Fetch
        request = self._session.build(self._wanted, self._unsent)
        # named now; if this Fetch fails, the next one is full and names everything
        self._unsent = set()
        try:
            reply = self._client.fetch(request)
        except Exception:  # the answer is lost: the next fetch is full
            self._session.handle_error()
            raise
        if not self._session.handle_response(reply):
            log.info(
                "fetch session %d with broker %d: %s; fetching in full",
                request.session_id,
                self.leader_id,
                reply.error.name,
            )
            return
        for fetched in reply.partitions:
            tp = fetched.topic_partition
            asked = self._wanted.get(tp)
            if asked is None:
                continue  # not asked this round (a session's answer names only those)
            with self._lock:
                f = self._partitions.get(tp)
            if f is None or f.asked is not asked:
                continue  # removed or re-added meanwhile
            if fetched.error is Errors.NONE:
                if fetched.records:
                    f.partition.append_as_follower(fetched.records, fetched.high_watermark)
                else:
                    f.partition.append_encoded_as_follower(
                        fetched.record_data, fetched.high_watermark
                    )
                if fetched.records or fetched.record_data:  # else only the high watermark
                    self._moved.add(tp)
            elif fetched.error is Errors.OFFSET_OUT_OF_RANGE:
                f.truncated = False  # diverged: truncate again
                self._moved.add(tp)
            elif fetched.error in PARKING:
                self._park(tp, f, fetched.error)
            elif fetched.error in DELAYING:
                self._delay(tp, f, fetched.error)
        self._log_delayed()
