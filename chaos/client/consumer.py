"""The workload's consumer: reads partitions from their leaders up to the high watermark and
records every poll in the history; `final_read` makes the read the checker judges.

Fetches go out as a consumer's (`replica_id` -1, `current_leader_epoch` -1). A poll retries
NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION, KAFKA_STORAGE_ERROR
(the leader's log directory failed), the leader-epoch errors and transport errors (after
refreshing Metadata) until its deadline; otherwise it writes `fail` and raises `PollFailed`.
Reads have no side effect, so there is no `info`.

A `Consumer` runs on its caller's thread (the workload's consumer thread, or the main
thread for the final read); it shares only the thread-safe `client.Client`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from chaos.errors import ChaosError
from client import FETCH_RETRIABLE, Client, ClientError, NoRoute, TransportError
from domain import TopicPartition
from rpc import messages as m
from rpc.errors import Errors
from rundir.checker import FinalRead
from rundir.history_writer import HistoryWriter

#: Fetch errors after which the consumer refreshes Metadata and tries again.
RETRIABLE = FETCH_RETRIABLE


class PollFailed(ClientError, ChaosError):
    """A poll could not read its partition before its deadline."""


Records = list[tuple[int, str]]


@dataclass(frozen=True, slots=True)
class Polled:
    """The records one poll read (offset order) and the high watermark reported."""

    records: tuple[tuple[int, str], ...]
    high_watermark: int


def decode_value(value: bytes) -> str:
    """A record value as the history holds it (UTF-8; undecodable bytes escaped)."""
    return value.decode("utf-8", errors="backslashreplace")


class Consumer:
    """Reads one topic's partitions and records every poll in `history`. Runs on the
    caller's thread; each poll's deadline is `timeout_ms`."""

    def __init__(
        self,
        cluster: Client,
        topic: str,
        process: str,
        history: HistoryWriter,
        *,
        timeout_ms: int = 5000,
        retry_backoff_ms: int = 100,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if history.process != process:
            raise ValueError(f"history belongs to {history.process!r}, not {process!r}")
        self.cluster = cluster
        self.topic = topic
        self.process = process
        self.timeout_ms = timeout_ms
        self._history = history
        self._backoff_s = retry_backoff_ms / 1000
        self._clock = clock
        self._sleep = sleep

    def poll(self, partition: int, from_offset: int, max_records: int = 500) -> Records:
        """Read up to `max_records` records from `from_offset` (below the high watermark)."""
        return list(self.poll_with_watermark(partition, from_offset, max_records).records)

    def poll_with_watermark(self, partition: int, from_offset: int, max_records: int) -> Polled:
        """`poll`, also returning the high watermark. Raises `PollFailed`."""
        invoked = self._history.invoke("poll", self.topic, partition, offset=from_offset)
        tp = TopicPartition(self.topic, partition)
        deadline = self._clock() + self.timeout_ms / 1000
        attempts = 0
        while True:
            sent, result = self._attempt(tp, from_offset, max_records)
            attempts += sent
            if isinstance(result, Polled):
                self._history.complete(
                    invoked,
                    "ok",
                    offset=result.high_watermark,
                    attempts=attempts,
                    records=result.records,
                )
                return result
            error, retriable = result
            if not retriable or self._clock() + self._backoff_s >= deadline:
                self._history.complete(invoked, "fail", error=error, attempts=attempts)
                raise PollFailed(f"{tp} from {from_offset}: {error}")
            if self._backoff_s > 0:
                self._sleep(self._backoff_s)
            with contextlib.suppress(ClientError):  # the next attempt reports it
                self.cluster.refresh()

    def _attempt(
        self, tp: TopicPartition, offset: int, max_records: int
    ) -> tuple[bool, Polled | tuple[str, bool]]:
        try:
            address = self.cluster.leader_address(tp)
        except NoRoute as exc:
            return False, (exc.reason, True)
        except ClientError as exc:
            return False, (f"no metadata: {exc}", True)
        request = m.FetchRequest(
            (m.FetchPartition(tp.topic, tp.partition, offset, -1, max_records),), replica_id=-1
        )
        try:
            response = self.cluster.api(address).fetch(request)
        except TransportError as exc:
            return True, (f"transport: {exc}", True)
        if response.error is not Errors.NONE:
            return True, (response.error.name, response.error in RETRIABLE)
        fetched = next((p for p in response.partitions if p.topic_partition == tp), None)
        if fetched is None:
            return True, ("the answer did not include the partition", True)
        if fetched.error is not Errors.NONE:
            return True, (fetched.error.name, fetched.error in RETRIABLE)
        records = tuple(
            (r.offset, decode_value(r.value)) for r in fetched.records if r.offset >= offset
        )
        return True, Polled(records, fetched.high_watermark)

    def read_all(self, partitions: Iterable[int], timeout_s: float = 60.0) -> dict[int, Records]:
        """Every record of each partition from offset 0 to the high watermark its first
        successful poll reported. A partition not read to there within `timeout_s` (all
        partitions together) is left out of the answer."""
        deadline = self._clock() + timeout_s
        out: dict[int, Records] = {}
        for partition in partitions:
            records = self._read_partition(partition, deadline)
            if records is not None:
                out[partition] = records
        return out

    def _read_partition(self, partition: int, deadline: float) -> Records | None:
        target: int | None = None
        next_offset = 0
        records: Records = []
        while target is None or next_offset < target:
            if self._clock() >= deadline:
                return None
            try:
                polled = self.poll_with_watermark(partition, next_offset, 500)
            except PollFailed:
                if self._backoff_s > 0:
                    self._sleep(self._backoff_s)
                continue
            if target is None:
                target = max(polled.high_watermark, 0)
            fresh = [(o, v) for o, v in polled.records if o < target]
            records.extend(fresh)
            if fresh:
                next_offset = fresh[-1][0] + 1
            elif next_offset < target and self._backoff_s > 0:
                self._sleep(self._backoff_s)  # the new leader's watermark has not caught up
        return records

    def final_read(self, partitions: Iterable[int], timeout_s: float = 60.0) -> FinalRead:
        """`read_all` as the checker's `FinalRead`, begun now (by the history's clock)."""
        started = self._history.now_ns()
        read = self.read_all(partitions, timeout_s)
        return FinalRead(
            started,
            {TopicPartition(self.topic, p): tuple(records) for p, records in read.items()},
        )
