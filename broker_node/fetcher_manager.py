"""`ReplicaFetcherManager`: the replica fetcher threads of one broker, one per leader it
follows (`broker_node.fetcher`), started when a LeaderAndIsr makes this broker follow a new
leader, or the same leader at a new address, and stopped when they have no partition left.
Called from gRPC worker threads applying LeaderAndIsr and StopReplica; a lock guards the
threads and which one fetches each partition.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from broker_node.fetcher import ReplicaFetcherThread
from broker_node.fetcher_target import FetcherTarget
from bugs import NO_BUGS, BugSwitches
from bugs.catalog import NO_TRUNCATION, ONE_ROUND_TRUNCATION
from domain import TopicPartition
from eventlog import EventLog
from rpc.wire import ChannelIdentity


class ReplicaFetcherManager:
    """The fetcher threads of one broker, one per leader it follows."""

    def __init__(
        self,
        broker_id: int,
        event_log: EventLog,
        max_wait_ms: int,
        bug_switches: BugSwitches = NO_BUGS,
        tls: ChannelIdentity | None = None,
    ) -> None:
        self.broker_id = broker_id
        self._events = event_log
        self._max_wait_ms = max_wait_ms
        self._truncate_by_epoch = not bug_switches.on(NO_TRUNCATION)
        self._check_own_epoch_end = not bug_switches.on(ONE_ROUND_TRUNCATION)
        self._tls = tls
        self._lock = threading.Lock()
        self._threads: dict[int, ReplicaFetcherThread] = {}
        self._owner: dict[TopicPartition, int] = {}

    def add_partitions(
        self,
        leader_id: int,
        host: str,
        port: int,
        partitions: Mapping[TopicPartition, FetcherTarget],
    ) -> None:
        """Follow `partitions` from `leader_id` at host:port."""
        with self._lock:
            thread = self._threads.get(leader_id)
            if thread is None or thread.target != f"{host}:{port}":
                if thread is not None:
                    thread.stop()
                thread = ReplicaFetcherThread(
                    self.broker_id,
                    leader_id,
                    host,
                    port,
                    self._events,
                    self._max_wait_ms,
                    truncate_by_epoch=self._truncate_by_epoch,
                    tls=self._tls,
                    check_own_epoch_end=self._check_own_epoch_end,
                )
                self._threads[leader_id] = thread
                thread.start()
            thread.add(partitions)
            for tp in partitions:
                self._owner[tp] = leader_id

    def leader_of(self, tp: TopicPartition) -> int | None:
        """The leader `tp` is followed from; None when it is not followed."""
        with self._lock:
            return self._owner.get(tp)

    def remove_partitions(self, partitions: list[TopicPartition]) -> None:
        """Stop following `partitions`; idle threads are stopped."""
        idle = []
        with self._lock:
            for tp in partitions:
                leader_id = self._owner.pop(tp, None)
                if leader_id is not None and leader_id in self._threads:
                    self._threads[leader_id].remove([tp])
            for leader_id, thread in list(self._threads.items()):
                if thread.is_empty():
                    idle.append(self._threads.pop(leader_id))
        for thread in idle:
            thread.stop()

    def shutdown(self) -> None:
        """Stop every fetcher thread."""
        with self._lock:
            threads = list(self._threads.values())
            self._threads.clear()
            self._owner.clear()
        for thread in threads:
            thread.stop()
