"""`ReplicaManager`: the partitions this broker hosts and the data-plane requests on them.

LeaderAndIsr (accepted by the control request handler) makes partitions leaders or
followers and starts or stops their replica fetchers; StopReplica stops (and may delete)
them. Produce and Fetch run on the gRPC server's event loop (`fetch_async`; `fetch` is
the same on any thread; both are `broker_node.fetch_serving`'s), OffsetsForLeaderEpoch on
its worker threads, against the `Partition` objects. Neither waits holding a thread: an
acks=all Produce parks in the produce purgatory (`broker_node.purgatory`), completed by
whatever moves its partition on (a follower's Fetch, LeaderAndIsr, StopReplica, an ISR
or config change) or by the purgatory's timer; a Fetch with nothing to return parks on
the change counter (`broker_node.long_poll`), as Kafka's DelayedFetch waits in its
purgatory. Two daemon threads keep the ISR (`broker_node.isr_maintenance`):
`isr-expiration` shrinks it, `isr-change-propagation` batches ISR changes into
`/isr_change_notification` (5 s after the last, or every 60 s; at IBP 2.7 leaders send
AlterIsr instead, `ReplicationConfig.alter_isr`). An I/O error of any log takes the data
directory offline (`log_dir_failures`, `take_log_dir_offline`; `broker_node.log_dir_failure`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from concurrent.futures import Future
from pathlib import Path

from broker_node.fetch_serving import FetchServing
from broker_node.fetch_session import CachedPartition, FetchSessionCache
from broker_node.fetcher_manager import ReplicaFetcherManager
from broker_node.isr_maintenance import IsrChangeSink, IsrMaintenance
from broker_node.log_dir_failure import LogDirFailureChannel
from broker_node.long_poll import ChangeCounter
from broker_node.partition import Partition
from broker_node.partition_isr import PartitionConfig, PartitionIsr
from broker_node.purgatory import PartitionAnswer, ProducePurgatory, answered, gathered
from broker_node.replication_config import ReplicationConfig
from broker_node.storage import PartitionLog
from broker_node.storage.errors import LogError
from bugs.catalog import EARLY_ISR_JOIN, STALE_ISR_CACHE
from domain import TopicPartition
from eventlog import EventLog, HighWatermarkMoved, LeadershipsStarted, LogUnavailable, gather
from rpc import messages as m
from rpc.errors import Errors
from zkdata.topic_configs import flush_messages, min_insync_replicas


class ReplicaManager:
    """Hosted partitions of one broker."""

    def __init__(
        self,
        broker_id: int,
        config: ReplicationConfig,
        store: IsrChangeSink,
        event_log: EventLog,
        topic_configs: Callable[[Collection[str]], Mapping[str, dict[str, str]]],
    ) -> None:
        self.broker_id = broker_id
        self.config = config
        self._store = store
        self._events = event_log
        self._topic_configs = topic_configs
        self._lock = threading.Lock()
        self._partitions: dict[TopicPartition, Partition] = {}
        #: Moves whenever `_partitions` gains or loses one (fetch sessions memoise lookups).
        self._hosting_version = 0
        #: Names in the data directory that may hold a log: what it held at start, and
        #: every partition hosted since (its log makes its directory at its first write).
        #: A partition not named here is new to the disk, and its log looks for nothing.
        self._maybe_on_disk = _listed(config.data_dir)
        #: hears every I/O error of the data directory (any thread)
        self.log_dir_failures = LogDirFailureChannel(config.data_dir)
        #: PartitionConfig by min.insync.replicas and flush.messages: one shared instance
        self._configs: dict[tuple[int, int | None], PartitionConfig] = {}
        #: set when Fetches may no longer wait for data: stopping (`release_fetches`)
        self._answer_now = threading.Event()
        self.purgatory = ProducePurgatory()
        self.fetch_sessions = FetchSessionCache(
            config.fetch_session_slots, config.fetch_session_eviction_s
        )
        self._changes = ChangeCounter()
        self._fetch_serving = FetchServing(
            self.fetch_sessions, self._changes, self._answer_now, self.partition, self._memoise
        )
        self.fetchers = ReplicaFetcherManager(
            broker_id, event_log, config.fetch_max_wait_ms, config.bug_switches, config.tls
        )
        self._isr = IsrMaintenance(
            broker_id, config, store, event_log, self.partitions, self.purgatory
        )

    def startup(self) -> None:
        """Start the ISR threads and the produce purgatory's expiration thread."""
        self.purgatory.start()
        self._isr.start()

    def release_fetches(self) -> None:
        """Answer every waiting Fetch now with what it has, and let no later one wait: a
        stopping broker's server then finishes its calls at once instead of waiting out
        the followers' long polls."""
        self._answer_now.set()
        self._changes.bump()

    def shutdown(self) -> None:
        """Answer parked produce requests and waiting Fetches, stop fetchers and ISR
        threads; flush and close every log."""
        self._isr.stop()
        self.release_fetches()
        self.purgatory.shutdown()
        self.fetchers.shutdown()
        self._isr.join()
        with self._lock:
            partitions = list(self._partitions.values())
        for partition in partitions:
            partition.log.close()

    # -- hosting --------------------------------------------------------------------------

    def partition(self, tp: TopicPartition) -> Partition | None:
        """A hosted partition."""
        with self._lock:
            return self._partitions.get(tp)

    def partitions(self) -> list[Partition]:
        """Every hosted partition whose log is online."""
        with self._lock:
            return [p for p in self._partitions.values() if not p.offline]

    def update_topic_config(self, topic: str, overrides: dict[str, str]) -> list[TopicPartition]:
        """A topic's overrides changed (the config-change listener's thread): hosted
        partitions of `topic` take the new `min.insync.replicas` and `flush.messages` at
        once. Returns them."""
        config = self._topic_config(overrides)
        with self._lock:
            hosted = [p for tp, p in self._partitions.items() if tp.topic == topic]
        for partition in hosted:
            partition.update_config(config)
        self._check_purgatory(hosted)
        return sorted(p.tp for p in hosted)

    def _topic_config(self, overrides: Mapping[str, str] | None) -> PartitionConfig:
        """The (immutable, shared) replication settings of a topic with `overrides`."""
        broker = self.config
        if not overrides:
            key = (broker.min_insync_replicas, broker.flush_interval_messages)
        else:
            key = (
                min_insync_replicas(overrides, broker.min_insync_replicas),
                flush_messages(overrides, broker.flush_interval_messages),
            )
        config = self._configs.get(key)
        if config is None:
            switches = broker.bug_switches
            config = self._configs[key] = PartitionConfig(
                broker.lag_time_max_ms,
                key[0],
                not switches.on(STALE_ISR_CACHE),
                broker.alter_isr,
                key[1],
                isr_join_needs_epoch_start=not switches.on(EARLY_ISR_JOIN),
            )
        return config

    def _log_dir(self, tp: TopicPartition) -> Path:
        return self.config.data_dir / f"{tp.topic}-{tp.partition}"

    def _get_or_create(
        self, tp: TopicPartition, overrides: Mapping[str, dict[str, str]]
    ) -> Partition:
        """The hosted partition, created with its topic's `overrides` if new."""
        with self._lock:
            partition = self._partitions.get(tp)
            if partition is None:
                if self.log_dir_failures.offline:  # no live directory to create it in
                    raise LogError(f"{self.config.data_dir}: the log directory is offline")
                directory = self._log_dir(tp)
                config = self._topic_config(overrides.get(tp.topic))
                log = PartitionLog(
                    directory,
                    fsync=config.flush_interval_messages is not None,
                    absent=directory.name not in self._maybe_on_disk,
                    on_io_error=self.log_dir_failures.report,
                    hw_checkpoint_interval_ms=self.config.hw_checkpoint_interval_ms,
                )
                self._maybe_on_disk.add(directory.name)
                partition = Partition(
                    tp,
                    self.broker_id,
                    log,
                    self._store,
                    self._events,
                    config,
                    self._isr.record_change,
                    on_high_watermark=self._high_watermark_moved,
                )
                self._partitions[tp] = partition
                self._hosting_version += 1
            return partition

    def become_leader_or_follower(
        self, states: Iterable[m.LeaderAndIsrPartitionState], live_leaders: Iterable[m.LiveLeader]
    ) -> dict[TopicPartition, Errors]:
        """Apply accepted LeaderAndIsr partition states (gRPC thread). Returns the
        partitions whose log could not be opened (KAFKA_STORAGE_ERROR): they are not
        hosted, and the others are applied all the same. Once the data directory is
        offline, every partition answers KAFKA_STORAGE_ERROR."""
        if self.log_dir_failures.offline:
            return {s.topic_partition: Errors.KAFKA_STORAGE_ERROR for s in states}
        endpoints = {leader.broker_id: (leader.host, leader.port) for leader in live_leaders}
        to_follow: dict[int, dict[TopicPartition, Partition]] = {}
        failed: dict[TopicPartition, Errors] = {}
        states = list(states)
        tps = [s.topic_partition for s in states]
        with self._lock:
            known = self._partitions
            new_topics = {tp.topic for tp in tps if tp not in known}
        # one pipelined read of the new topics' overrides, not one round trip per partition
        overrides = self._topic_configs(sorted(new_topics)) if new_topics else {}
        hosted: list[tuple[m.LeaderAndIsrPartitionState, Partition]] = []
        for state, tp in zip(states, tps, strict=True):
            try:
                hosted.append((state, self._get_or_create(tp, overrides)))
            except (LogError, OSError) as exc:
                if isinstance(exc, OSError):  # the directory itself failed
                    self.log_dir_failures.report(exc)
                failed[tp] = Errors.KAFKA_STORAGE_ERROR
                self._events.emit(
                    LogUnavailable(
                        topic=state.topic,
                        partition=state.partition,
                        reason=f"{type(exc).__name__}: {exc}",
                    ),
                )
        # every fetcher of these partitions stops before any of them changes role
        self.fetchers.remove_partitions([partition.tp for _, partition in hosted])
        leaderships: list[HighWatermarkMoved] = []
        for state, partition in hosted:
            if state.leader == self.broker_id:
                partition.make_leader(state, leaderships)
            else:
                partition.make_follower(state)
                if state.leader >= 0 and state.leader in endpoints:
                    to_follow.setdefault(state.leader, {})[partition.tp] = partition
        if leaderships:
            self._events.emit(gather(LeadershipsStarted, leaderships, reason="leader"))
        for leader, partitions in to_follow.items():
            host, port = endpoints[leader]
            self.fetchers.add_partitions(leader, host, port, partitions)
        parked = self.purgatory.parked_partitions()
        if parked:
            self._check_purgatory(p for tp in tps if tp in parked and (p := self.partition(tp)))
        self._changes.bump(tps)
        return failed

    def stop_replicas(
        self, partitions: Iterable[TopicPartition], delete: Iterable[TopicPartition]
    ) -> None:
        """StopReplica: stop fetching; delete the logs of the partitions in `delete`. The
        files of one not opened since the broker started are deleted too, unless the
        directory is offline (Kafka's `LogManager` no longer knows a failed one's logs)."""
        tps = list(partitions)
        doomed = set(delete)
        self.fetchers.remove_partitions(tps)
        for tp in tps:
            with self._lock:
                partition = (
                    self._partitions.pop(tp, None) if tp in doomed else self._partitions.get(tp)
                )
                self._hosting_version += 1
            if partition is None:
                if tp in doomed and not self.log_dir_failures.offline:
                    with contextlib.suppress(FileNotFoundError):
                        shutil.rmtree(self._log_dir(tp))
                continue
            partition.stop()
            self._check_purgatory([partition])
            if tp in doomed:
                partition.log.delete()
        self._changes.bump(tps)

    def take_log_dir_offline(self) -> list[TopicPartition]:
        """The data directory failed (`log-dir-failure-handler`): every hosted partition
        stops fetching, goes offline (answering KAFKA_STORAGE_ERROR), closes its log and
        answers its parked produce requests. Returns them, sorted (none if done before)."""
        with self._lock:
            partitions = [p for p in self._partitions.values() if not p.offline]
        self.fetchers.remove_partitions([p.tp for p in partitions])
        for partition in partitions:
            partition.take_offline()
            with contextlib.suppress(LogError, OSError):
                partition.log.close()
        self._check_purgatory(partitions)
        self._changes.bump([p.tp for p in partitions])
        return sorted(p.tp for p in partitions)

    # -- data plane (gRPC threads) ------------------------------------------------------------

    def produce(self, request: m.ProduceRequest) -> Future[m.ProduceResponse]:
        """Append to partitions this broker leads, each on its own (an error answers only
        its partition). The answer is a future: complete at once for acks 0 and 1 and for
        errors; with acks=all each appended partition parks in the purgatory with the
        request's one deadline, and the answer completes when the last is decided, holding
        no thread meanwhile."""
        if request.acks not in (0, 1, -1):
            return answered(m.ProduceResponse.refused(request, Errors.INVALID_REQUIRED_ACKS))
        deadline = time.monotonic() + request.timeout_ms / 1000
        return gathered(
            [self._produce_partition(p, request.acks, deadline) for p in request.partitions]
        )

    def _produce_partition(
        self, entry: m.PartitionRecords, acks: int, deadline: float
    ) -> PartitionAnswer:
        """Append one partition's records: its result, or its parked future (acks=all)."""
        topic, index = entry.topic, entry.partition
        partition = self.partition(entry.topic_partition)
        if partition is None:
            return m.PartitionProduceResult(topic, index, Errors.UNKNOWN_TOPIC_OR_PARTITION)
        term = partition.leadership_term
        try:
            error, first, last = partition.append_as_leader(entry.records, acks)
        except (LogError, OSError) as exc:  # the log refused the append: a storage error
            return m.PartitionProduceResult(
                topic, index, Errors.KAFKA_STORAGE_ERROR, error_message=str(exc)
            )
        if error is not Errors.NONE:
            return m.PartitionProduceResult(topic, index, error)
        self._changes.bump((partition.tp,))  # followers' long polls read it again
        if acks != -1:
            return m.PartitionProduceResult(topic, index, Errors.NONE, first, last)
        return self.purgatory.park(partition.tp, partition, first, last, term, deadline)

    def _high_watermark_moved(self, partition: PartitionIsr) -> None:
        """A leader's high watermark moved (under its lock, on the thread that moved it:
        a follower's Fetch, an append, an ISR change): answer the produce requests it
        decides and wake long polls."""
        self.purgatory.check(partition.tp, partition)
        self._changes.bump((partition.tp,))

    def _check_purgatory(self, partitions: Iterable[Partition]) -> None:
        """Something that can decide parked produce requests happened to `partitions`."""
        for partition in partitions:
            self.purgatory.check(partition.tp, partition)

    def fetch(self, request: m.FetchRequest) -> m.FetchResponse:
        """Answer a Fetch, waiting up to `max_wait_ms` for data and holding the calling
        thread (`FetchServing.fetch`)."""
        return self._fetch_serving.fetch(request)

    async def fetch_async(self, request: m.FetchRequest) -> m.FetchResponse:
        """Answer a Fetch on the gRPC server's event loop, holding no thread while it waits
        (`FetchServing.fetch_async`)."""
        return await self._fetch_serving.fetch_async(request)

    def _memoise(self, entries: Iterable[CachedPartition]) -> None:
        """Point each session entry at its hosted partition; looked up again only after
        the hosted set changed."""
        with self._lock:
            version = self._hosting_version
            for entry in entries:
                if entry.hosted_version != version:
                    entry.hosted = self._partitions.get(entry.tp)
                    entry.hosted_version = version

    def offsets_for_leader_epoch(
        self, request: m.OffsetsForLeaderEpochRequest
    ) -> m.OffsetsForLeaderEpochResponse:
        """KIP-101 answers from the leaders' epoch caches."""
        out = []
        for ask in request.partitions:
            partition = self.partition(TopicPartition(ask.topic, ask.partition))
            if partition is None:
                out.append(
                    m.EpochEndOffset(ask.topic, ask.partition, Errors.UNKNOWN_TOPIC_OR_PARTITION)
                )
            else:
                out.append(
                    partition.end_offset_for_epoch(ask.current_leader_epoch, ask.leader_epoch)
                )
        return m.OffsetsForLeaderEpochResponse(tuple(out))

    def expire_isr_round(self) -> None:
        """One round of the `isr-expiration` thread (`IsrMaintenance.expire_isr_round`)."""
        self._isr.expire_isr_round()

    def maybe_propagate_isr_changes(self) -> None:
        """One check of the `isr-change-propagation` thread."""
        self._isr.maybe_propagate_isr_changes()


def _listed(directory: Path) -> set[str]:
    """The names in `directory` (none if it does not exist yet)."""
    return set(os.listdir(directory)) if directory.is_dir() else set()
